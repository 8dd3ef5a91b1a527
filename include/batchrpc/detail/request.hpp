// SPDX-License-Identifier: MIT
// Validates one Request object (JSON-RPC 2.0 §4) and extracts its parts.
#pragma once

#include <algorithm>
#include <cstring>
#include <string_view>
#include <vector>

#include "../context.hpp"
#include "../json.hpp"

namespace rpc::detail {

struct Request {
  RequestId id;
  std::string_view method;
  const Value* params = nullptr;    // nullptr: absent
  const Value* id_value = nullptr;  // nullptr: a notification
};

inline std::string_view name_of(const Value& name) {
  return {name.GetString(), name.GetStringLength()};
}

// True when two members of `object` share a name. Requests have a handful of members, so the
// quadratic scan wins; a hostile object with thousands of members is sorted instead.
inline bool has_duplicate_names(const Value& object, std::vector<std::string_view>& scratch) {
  const auto members = object.GetObject();
  const auto count = object.MemberCount();
  if (count <= 16) {
    for (auto a = members.begin(); a != members.end(); ++a) {
      for (auto b = a + 1; b != members.end(); ++b) {
        if (name_of(a->name) == name_of(b->name)) return true;
      }
    }
    return false;
  }
  scratch.clear();
  for (const auto& m : members) scratch.push_back(name_of(m.name));
  std::sort(scratch.begin(), scratch.end());
  return std::adjacent_find(scratch.begin(), scratch.end()) != scratch.end();
}

// Fills `out` from `v`; returns nullptr when `v` is a valid Request, else why not.
// `raw_number_id` is the id's text as sent, used when the id is a number.
inline const char* read_request(const Value& v, std::string_view raw_number_id, Request& out,
                                std::vector<std::string_view>& scratch) {
  if (!v.IsObject()) return "a request must be an object";
  bool has_version = false;
  bool has_method = false;
  bool known_twice = false;
  bool has_params = false;
  bool has_id = false;
  for (const auto& m : v.GetObject()) {
    const std::string_view name = name_of(m.name);
    if (name == "jsonrpc") {
      known_twice |= has_version;
      has_version = true;
      if (!m.value.IsString() || name_of(m.value) != "2.0") return "\"jsonrpc\" must be exactly \"2.0\"";
    } else if (name == "method") {
      known_twice |= has_method;
      has_method = true;
      if (!m.value.IsString()) return "\"method\" must be a string";
      out.method = name_of(m.value);
    } else if (name == "params") {
      known_twice |= has_params;
      has_params = true;
      if (!m.value.IsArray() && !m.value.IsObject()) return "\"params\" must be an array or an object";
      out.params = &m.value;
    } else if (name == "id") {
      known_twice |= has_id;
      has_id = true;
      out.id_value = &m.value;
      if (m.value.IsString()) {
        out.id = {RequestId::Kind::string, name_of(m.value)};
      } else if (m.value.IsNumber()) {
        out.id = {RequestId::Kind::number, raw_number_id};
      } else if (m.value.IsNull()) {
        out.id = {RequestId::Kind::null, {}};
      } else {
        return "\"id\" must be a string, a number or null";
      }
    }
  }
  const unsigned known = unsigned{has_version} + has_method + has_params + has_id;
  // Other members are allowed (and ignored), but no name may appear twice.
  if (known_twice || (v.MemberCount() > known && has_duplicate_names(v, scratch))) {
    return "member names must be unique";
  }
  if (!has_version) return "missing \"jsonrpc\"";
  if (!has_method) return "missing \"method\"";
  return nullptr;
}

}  // namespace rpc::detail
