// SPDX-License-Identifier: MIT
/// @file log.hpp
/// Log and message notifications to a session's client, in MCP's and LSP's forms.
#pragma once

#include <string_view>

#include "config.hpp"
#include "json.hpp"
#include "peer.hpp"

namespace rpc::inline BATCHRPC_ABI {

/// The Model Context Protocol's forms.
namespace mcp {

/// MCP's log levels (those of syslog, RFC 5424), least severe first.
enum class LogLevel : unsigned char { debug, info, notice, warning, error, critical, alert, emergency };

/// The level's name as MCP writes it (`"warning"`).
[[nodiscard]] BATCHRPC_DECL std::string_view name(LogLevel level) noexcept;

/**
 * Sends `notifications/message` with `level`, `data` (any JSON value) and `logger` when
 * given. The client may have asked for a minimum level (`logging/setLevel`); filtering is the
 * caller's. Any thread.
 * @returns false when it was not sent (see `Peer::notify`).
 * @throws std::logic_error when `logger` is not valid UTF-8.
 */
BATCHRPC_DECL bool log(const Peer& peer, LogLevel level, const Json& data, std::string_view logger = {});
/// The same with a text as `data`.
BATCHRPC_DECL bool log(const Peer& peer, LogLevel level, std::string_view text, std::string_view logger = {});

}  // namespace mcp

/// The Language Server Protocol's forms.
namespace lsp {

/// LSP's MessageType.
enum class MessageType : unsigned char { error = 1, warning = 2, info = 3, log = 4, debug = 5 };

/// Sends `window/logMessage` (for the client's log). @returns false when it was not sent.
/// @throws std::logic_error when `message` is not valid UTF-8.
BATCHRPC_DECL bool log_message(const Peer& peer, MessageType type, std::string_view message);
/// Sends `window/showMessage` (for the user to see). @returns false when it was not sent.
/// @throws std::logic_error when `message` is not valid UTF-8.
BATCHRPC_DECL bool show_message(const Peer& peer, MessageType type, std::string_view message);

}  // namespace lsp

}  // namespace rpc

#if defined(BATCHRPC_HEADER_ONLY)
#include "impl/log.ipp"
#endif
