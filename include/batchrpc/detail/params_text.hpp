// SPDX-License-Identifier: MIT
// The params of a message a client or a server sends: JSON-RPC 2.0 allows an array or an object.
#pragma once

#include <string_view>

#include "../config.hpp"
#include "../json.hpp"

namespace rpc::inline BATCHRPC_ABI::detail {

inline bool is_json_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// `params` without the whitespace around it, or an empty view when it is not an array or an
// object (the only params JSON-RPC 2.0 allows).
inline std::string_view structured_text(const Json& params) {
  std::string_view text = params.text();
  while (!text.empty() && is_json_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_json_space(text.back())) text.remove_suffix(1);
  return !text.empty() && (text.front() == '[' || text.front() == '{') ? text : std::string_view{};
}

}  // namespace rpc::detail
