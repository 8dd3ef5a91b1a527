// SPDX-License-Identifier: MIT
/// @file builtins.hpp
/// The built-in methods: `ping`, `info` and `notifications/cancel`, opt-in with one call.
#pragma once

#include <string>

#include "config.hpp"
#include "router.hpp"
#include "version.hpp"

namespace rpc::inline BATCHRPC_ABI {

/// What `add_builtins` registers and how `info` describes the server.
struct BuiltinOptions {
  /// `info.server.name`.
  std::string server_name = "batchrpc";
  /// `info.server.version`.
  std::string server_version = version_string;
  /// Also accept language servers' `$/cancelRequest {"id": X}`.
  bool lsp_cancel = false;
  /// Also accept the Model Context Protocol's `notifications/cancelled {"requestId": X}`.
  /// As MCP asks, the request it cancels then gets no response at all.
  bool mcp_cancel = false;
};

/**
 * Registers the built-in methods on `router`:
 * - `ping {"nonce"?: X}` -> `{"nonce": X}` (or `{}`);
 * - `info` -> `{"protocolVersion": 1, "server": {"name", "version"}, "capabilities": {...}}`,
 *   where `capabilities` holds `batching: {"maxBatch": N}` and one member per capability the
 *   calling session is granted, with the settings `Router::describe_capability` gave it;
 * - `notifications/cancel {"id": X}`: cancels the session's queued or running request X (it
 *   is then answered `-32800`); applied before the other members of its batch start; an
 *   unknown or finished id is ignored. Sent as a request, it is answered
 *   `{"cancelled": true|false}`. The same under the LSP and MCP names when asked for,
 *   except that MCP's leaves the cancelled request with no response (`CancelledReply::none`).
 * @throws std::invalid_argument if one of these names is already registered.
 */
BATCHRPC_DECL void add_builtins(Router& router, BuiltinOptions options = {});

}  // namespace rpc

#if defined(BATCHRPC_HEADER_ONLY)
#include "impl/builtins.ipp"
#endif
