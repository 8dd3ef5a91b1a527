// SPDX-License-Identifier: MIT
// Member names of JSON objects: JSON-RPC objects must not repeat one.
#pragma once

#include <algorithm>
#include <string_view>
#include <vector>

#include "../config.hpp"
#include "../json.hpp"

namespace rpc::inline BATCHRPC_ABI::detail {

inline std::string_view name_of(const Value& name) {
  return {name.GetString(), name.GetStringLength()};
}

// True when `names` holds one name twice (may reorder them). Objects have a handful of
// members, so the quadratic scan wins; thousands of names are sorted instead.
inline bool has_repeats(std::vector<std::string_view>& names) {
  if (names.size() < 2) return false;
  if (names.size() <= 16) {
    for (auto a = names.begin(); a != names.end(); ++a) {
      if (std::find(a + 1, names.end(), *a) != names.end()) return true;
    }
    return false;
  }
  std::sort(names.begin(), names.end());
  return std::adjacent_find(names.begin(), names.end()) != names.end();
}

// True when two members of `object` share a name; `scratch` is reused memory.
inline bool has_duplicate_names(const Value& object, std::vector<std::string_view>& scratch) {
  scratch.clear();
  for (const auto& m : object.GetObject()) scratch.push_back(name_of(m.name));
  return has_repeats(scratch);
}

}  // namespace rpc::detail
