// SPDX-License-Identifier: MIT
/// @file error.hpp
/// Error codes (JSON-RPC 2.0 §5.1 and batchrpc's own) and `rpc::Error`, the exception handlers throw.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include "config.hpp"
#include "json.hpp"

namespace rpc::inline BATCHRPC_ABI {

/// Error codes a reply can carry. The JSON-RPC 2.0 ones (§5.1), batchrpc's own server errors
/// (-32090..-32095, each listed in the README; clear of the codes LSP, MCP and Ethereum nodes
/// give a meaning), and `request_cancelled` (as language servers use).
enum class ErrorCode : int {
  parse_error = -32700,         ///< Invalid JSON, trailing garbage, invalid UTF-8.
  invalid_request = -32600,     ///< JSON, but not a valid Request object (or an empty batch).
  method_not_found = -32601,    ///< No such method (or the session lacks its capability).
  invalid_params = -32602,      ///< Params of the wrong shape or type; also an oversized batch.
  internal_error = -32603,      ///< A handler failed unexpectedly.
  message_too_large = -32090,   ///< The message exceeds `Limits::max_message_bytes`.
  nesting_too_deep = -32091,    ///< The message nests deeper than `Limits::max_depth`.
  response_too_large = -32092,  ///< The reply would exceed `Limits::max_response_bytes`.
  overloaded = -32093,          ///< No room to run the request now (executor, memory); retry later.
  /// The session has no channel to its client, or the connection ended before the client answered.
  /// Made here for a server's own requests to its client (a handler may pass it on).
  client_unavailable = -32094,
  /// The client did not answer the server's request in time. Made here for a server's own
  /// requests to its client (a handler may pass it on).
  client_timeout = -32095,
  request_cancelled = -32800,   ///< The request was cancelled before or while it ran.
};

/// The standard message for a code ("Parse error", "Invalid Request", ...).
[[nodiscard]] constexpr std::string_view default_message(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::parse_error: return "Parse error";
    case ErrorCode::invalid_request: return "Invalid Request";
    case ErrorCode::method_not_found: return "Method not found";
    case ErrorCode::invalid_params: return "Invalid params";
    case ErrorCode::internal_error: return "Internal error";
    case ErrorCode::message_too_large: return "Message too large";
    case ErrorCode::nesting_too_deep: return "Nesting too deep";
    case ErrorCode::response_too_large: return "Response too large";
    case ErrorCode::overloaded: return "Server overloaded";
    case ErrorCode::client_unavailable: return "Client unavailable";
    case ErrorCode::client_timeout: return "Client timeout";
    case ErrorCode::request_cancelled: return "Request cancelled";
  }
  return "Server error";
}

/**
 * Thrown by a handler to answer its request with a JSON-RPC error object.
 *
 * The reply carries `code`, `message` and, when present, `data` exactly as given. Any other
 * exception a handler throws is answered `-32603 Internal error` with its text hidden.
 *
 * @code
 * throw rpc::Error{-32010, "Quota exceeded", rpc::json(R"({"retryAfter": 30})")};
 * throw rpc::Error{rpc::ErrorCode::invalid_params, "n must be positive"};
 * @endcode
 */
class Error : public std::runtime_error {
 public:
  /// An error with an application code (use one in -32000..-32099 other than batchrpc's own
  /// -32090..-32095, or your own range outside -32768..-32000).
  Error(int code, std::string message, Json data = {})
      : std::runtime_error(message), code_(code), message_(std::move(message)), data_(std::move(data)) {}
  /// An error with one of the predefined codes.
  Error(ErrorCode code, std::string message, Json data = {})
      : Error(static_cast<int>(code), std::move(message), std::move(data)) {}
  /// An error with a predefined code and its standard message.
  explicit Error(ErrorCode code, Json data = {})
      : Error(code, std::string(default_message(code)), std::move(data)) {}

  /// The error code sent to the client.
  [[nodiscard]] int code() const noexcept { return code_; }
  /// The message sent to the client.
  [[nodiscard]] std::string_view message() const noexcept { return message_; }
  /// The optional `data` member (empty: omitted).
  [[nodiscard]] const Json& data() const noexcept { return data_; }

 private:
  int code_;
  std::string message_;  // what() stops at a NUL byte; a JSON string may hold one
  Json data_;
};

/// The error a handler throws when it stops early because its request was cancelled
/// (`-32800 Request cancelled`): `if (ctx.stop_requested()) throw rpc::cancelled();`
inline Error cancelled() { return Error(ErrorCode::request_cancelled); }

}  // namespace rpc
