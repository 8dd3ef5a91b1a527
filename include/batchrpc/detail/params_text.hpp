// SPDX-License-Identifier: MIT
// The params of a message a client or a server sends: JSON-RPC 2.0 allows an array or an object.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include "../config.hpp"
#include "../json.hpp"
#include "utf8.hpp"

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

// The checks every outgoing call or notification passes, a client's or a server's: its method
// name is UTF-8, and its params are structured or absent. Returns `params` without the
// whitespace around it (empty when absent).
// @throws std::invalid_argument, naming what is wrong.
inline std::string_view checked_params(std::string_view method, const Json& params) {
  if (!is_valid_utf8(method)) throw std::invalid_argument("batchrpc: the method name is not valid UTF-8");
  if (params.empty()) return {};
  const std::string_view structured = structured_text(params);
  if (structured.empty()) {
    throw std::invalid_argument("batchrpc: params must be an array or an object (JSON-RPC 2.0 section 4.2), not " +
                                std::string(params.text()));
  }
  return structured;
}

}  // namespace rpc::detail
