// SPDX-License-Identifier: MIT
/// @file net_options.hpp
/// Settings of `rpc::net::Server` (net.hpp): what each listener speaks, and the defences.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config.hpp"
#include "detail/chrono.hpp"
#include "executor.hpp"

namespace rpc::inline BATCHRPC_ABI {
class Session;
}

namespace rpc::inline BATCHRPC_ABI::net {

/// What a listener speaks.
enum class Protocol {
  /// HTTP/1.1 `POST`, and WebSocket for a request that asks to upgrade (one message per text
  /// message), on the same port.
  http,
  /// A byte stream with one message per line (`rpc::Framing::lines`).
  lines,
  /// A byte stream with `Content-Length:` framing (`rpc::Framing::content_length`).
  content_length,
  /// The Model Context Protocol's Streamable HTTP transport (revision 2025-06-18 and later) on
  /// `ServerOptions::mcp`'s path: sessions by `Mcp-Session-Id`, replies as JSON or as an event
  /// stream that carries the server's own messages first, and a `GET` stream (see net.hpp).
  mcp,
};

/// What a server knows of a connection when one of its sessions starts (`ServerOptions::on_session`).
struct ConnectionInfo {
  /// What the listener speaks.
  Protocol protocol = Protocol::http;
  /// True for a WebSocket (upgraded from HTTP).
  bool websocket = false;
  /// True when the connection is TLS.
  bool tls = false;
  /// The client's address: `"127.0.0.1:54321"`, `"[::1]:54321"`, or for a Unix socket its path
  /// (usually empty).
  std::string peer;
  /// HTTP and WebSocket: the headers of the request that started the session, as sent.
  std::vector<std::pair<std::string, std::string>> headers;

  /// The first header named `name` (case-insensitive), or an empty view.
  [[nodiscard]] std::string_view header(std::string_view name) const {
    const auto same = [](std::string_view a, std::string_view b) {
      if (a.size() != b.size()) return false;
      for (std::size_t i = 0; i < a.size(); ++i) {
        const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
        if (lower(a[i]) != lower(b[i])) return false;
      }
      return true;
    };
    for (const auto& [key, value] : headers) {
      if (same(key, name)) return value;
    }
    return {};
  }
};

/// Settings of the MCP Streamable HTTP listeners (`Protocol::mcp`).
struct McpHttpOptions {
  /// The one endpoint; requests for any other path are answered `404`.
  std::string path = "/mcp";
  /// Origins a browser's request may come from (`Origin: https://app.example:8443`, compared
  /// exactly); others are answered `403`, against DNS rebinding. Empty: only loopback origins
  /// (host `localhost`, `127.0.0.1` or `[::1]`, any scheme and port). A request without an
  /// `Origin` header (not from a browser) is always let through.
  std::vector<std::string> allowed_origins{};
  /// `MCP-Protocol-Version` values accepted; another is answered `400`. The header is optional
  /// (MCP assumes 2025-03-26 without it). Which revision a session speaks is the `initialize`
  /// handler's choice.
  std::vector<std::string> protocol_versions{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};
  /// `GET` opens a stream for the server's messages sent while no call of the session is in
  /// progress; false: `GET` is answered `405`, and such messages are not sent.
  bool listen_stream = true;
};

/// Settings of a `net::Server`. Every defence has a default; each is a plain field to change.
struct ServerOptions {
  /// Capabilities granted to every connection's session.
  std::vector<std::string> capabilities{};
  /// Called as each session starts, to decide from its connection (peer address, headers)
  /// what it is granted beyond `capabilities`, with `Session::grant` and `Session::revoke`: a
  /// stream's as it connects, a WebSocket's at its upgrade, an HTTP connection's own session
  /// at the request that makes it. Runs on an I/O thread: keep it short. If it throws, the
  /// connection is refused: HTTP `403`, WebSocket close `1008`, a stream closed.
  std::function<void(const ConnectionInfo& connection, Session& session)> on_session{};
  /// Where handlers run. nullptr: a pool of the server's own with `handler_threads` threads.
  /// Never the I/O threads, except for methods registered `inline_only` (cheap ones, such as
  /// `ping`). It must outlive the server.
  Executor* executor = nullptr;
  /// Threads of the server's own pool when `executor` is nullptr; 0: one per hardware thread.
  std::size_t handler_threads = 0;
  /// Threads running network I/O, each with an I/O context of its own (a connection stays on
  /// one, assigned in turn); 0: one per hardware thread.
  std::size_t io_threads = 0;

  /// A request that has begun (its first byte arrived) must be whole within this: HTTP headers
  /// and body, a stream's frame, a WebSocket handshake. A slow client is disconnected then.
  std::chrono::milliseconds request_timeout{10'000};
  /// A connection with nothing in flight that sends nothing for this long is closed (WebSocket:
  /// a ping is sent at half of it, and a peer that does not answer is closed).
  std::chrono::milliseconds idle_timeout{60'000};
  /// A reply must be taken by the client within this (a client that stops reading is closed).
  std::chrono::milliseconds write_timeout{30'000};
  /// Connections served at once. Past it, a new connection is refused: HTTP `503` with
  /// `Retry-After`, WebSocket close `1013`, a stream one `-32093` error, then closed.
  std::size_t max_connections = 10'000;
  /// Messages a connection may have in flight (HTTP: requests, answered or not, in pipelining
  /// order); 0 counts as 1. At the cap an HTTP connection is not read until replies go out.
  /// A WebSocket or stream one reads on: what carries no new work goes in at once (the
  /// client's answers to the server's requests, which handlers in flight may be waiting for,
  /// and cancellations; a batch that mixes answers with requests too, while a handler waits on
  /// the client); other messages are held, in order, until replies go out. Past 1 MiB
  /// held it is not read either (backpressure, not a queue), unless a handler waits on the
  /// client's answer (rpc::Peer::request): then it reads on, and closes a client that sends
  /// more work past 4 MiB held. A cancellation read while messages are held goes in at once
  /// and again right after them, so it also reaches a request held before it (not when it
  /// comes in a batch with answers, nor once the hold is full).
  std::size_t max_in_flight = 64;
  /// The `Retry-After` of a refused HTTP connection.
  std::chrono::seconds retry_after{1};
  /// How long `shutdown()` lets the work in flight finish before it cancels it (the clients
  /// are answered `-32800`), and then again before it closes the connections still open.
  std::chrono::milliseconds shutdown_grace{5'000};

  /// HTTP: the response header naming the session that handled a request; a request that
  /// sends it back is served by that session, whichever connection it comes on (so a cancel
  /// reaches a request running on another connection). Empty: one session per connection.
  std::string session_header = "Rpc-Session-Id";
  /// HTTP: put before every session id (then 32 hex digits). Behind a load balancer, give
  /// each server its own prefix and route on it, so that a request naming a session (a
  /// cancel) reaches the server that has it (see deploy/nginx/).
  std::string session_id_prefix{};
  /// `Protocol::mcp` listeners: the endpoint, origins and protocol versions.
  McpHttpOptions mcp{};
  /// HTTP and MCP: sessions kept for reuse by id; past this, the least recently used idle one goes.
  std::size_t max_sessions = 1024;
  /// HTTP and MCP: how long an idle session is kept for reuse after its last request.
  std::chrono::seconds session_idle{300};
};

}  // namespace rpc::net
