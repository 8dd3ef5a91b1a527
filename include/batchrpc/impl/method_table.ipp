// SPDX-License-Identifier: MIT
// Non-template bodies of detail/method_table.hpp: registration (compiled once in the compiled
// variant; lookups stay inline).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../config.hpp"
#include "../detail/method_table.hpp"

namespace rpc::inline BATCHRPC_ABI::detail {

BATCHRPC_DECL bool MethodTable::add(std::string_view name, Method method) {
  if (methods_.find(name) != methods_.end()) return false;
  std::vector<Slot> grown;
  if ((methods_.size() + 2) * 2 > index_.size()) grown.resize(index_.empty() ? 16 : index_.size() * 2);
  const auto it = methods_.emplace(std::string(name), std::move(method)).first;
  if (grown.empty()) {
    insert(*it);
  } else {  // at most half full after the insert
    index_.swap(grown);
    for (const auto& entry : methods_) insert(entry);
  }
  return true;
}

BATCHRPC_DECL void MethodTable::insert(const Map::value_type& entry) {
  const std::uint64_t h = hash(entry.first);
  const std::size_t mask = index_.size() - 1;
  std::size_t i = h & mask;
  while (index_[i].entry != nullptr) i = (i + 1) & mask;
  index_[i] = {h, entry.first, &entry};
}

}  // namespace rpc::detail
