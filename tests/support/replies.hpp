// SPDX-License-Identifier: MIT
// The exact reply texts the tests expect, built one way for every suite.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace replies {

/// `{"jsonrpc":"2.0","id":<id>,"result":<value>}` (id and value as JSON text).
inline std::string result(std::string_view id, std::string_view value) {
  return R"({"jsonrpc":"2.0","id":)" + std::string(id) + R"(,"result":)" + std::string(value) + "}";
}

/// An error response; `data` (JSON text) is left out when empty.
inline std::string error(std::string_view id, int code, std::string_view message, std::string_view data = {}) {
  std::string s = R"({"jsonrpc":"2.0","id":)" + std::string(id) + R"(,"error":{"code":)" +
                  std::to_string(code) + R"(,"message":")" + std::string(message) + "\"";
  if (!data.empty()) s += R"(,"data":)" + std::string(data);
  return s + "}}";
}

/// `-32600` with id null and `data.reason` (already escaped for JSON).
inline std::string invalid_request(std::string_view reason) {
  return error("null", -32600, "Invalid Request", R"({"reason":")" + std::string(reason) + "\"}");
}

/// `-32700` with id null, `data.offset` and `data.reason`.
inline std::string parse_error(std::size_t offset, std::string_view reason) {
  return error("null", -32700, "Parse error",
               R"({"offset":)" + std::to_string(offset) + R"(,"reason":")" + std::string(reason) + "\"}");
}

/// `-32800 Request cancelled` for `id`.
inline std::string cancelled(std::string_view id) { return error(id, -32800, "Request cancelled"); }

}  // namespace replies
