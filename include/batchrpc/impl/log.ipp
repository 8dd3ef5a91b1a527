// SPDX-License-Identifier: MIT
// Non-template bodies of log.hpp.
#pragma once

#include <string_view>

#include "../json_traits.hpp"
#include "../log.hpp"
#include "../result_writer.hpp"

namespace rpc::inline BATCHRPC_ABI {

BATCHRPC_DECL std::string_view mcp::name(LogLevel level) noexcept {
  switch (level) {
    case LogLevel::debug: return "debug";
    case LogLevel::info: return "info";
    case LogLevel::notice: return "notice";
    case LogLevel::warning: return "warning";
    case LogLevel::error: return "error";
    case LogLevel::critical: return "critical";
    case LogLevel::alert: return "alert";
    case LogLevel::emergency: return "emergency";
  }
  return "info";
}

BATCHRPC_DECL bool mcp::log(const Peer& peer, LogLevel level, const Json& data, std::string_view logger) {
  return peer.notify("notifications/message", write_json([&](ResultWriter& w) {
                       w.start_object();
                       w.key("level");
                       w.string(name(level));
                       if (!logger.empty()) {
                         w.key("logger");
                         w.string(logger);
                       }
                       w.key("data");
                       w.raw(data);
                       w.end_object();
                     }));
}

BATCHRPC_DECL bool mcp::log(const Peer& peer, LogLevel level, std::string_view text, std::string_view logger) {
  return log(peer, level, to_json(text), logger);
}

namespace detail {

inline bool window_message(const Peer& peer, std::string_view method, lsp::MessageType type, std::string_view message) {
  return peer.notify(method, write_json([&](ResultWriter& w) {
                       w.start_object();
                       w.key("type");
                       w.integer(static_cast<int>(type));
                       w.key("message");
                       w.string(message);
                       w.end_object();
                     }));
}

}  // namespace detail

BATCHRPC_DECL bool lsp::log_message(const Peer& peer, MessageType type, std::string_view message) {
  return detail::window_message(peer, "window/logMessage", type, message);
}

BATCHRPC_DECL bool lsp::show_message(const Peer& peer, MessageType type, std::string_view message) {
  return detail::window_message(peer, "window/showMessage", type, message);
}

}  // namespace rpc
