// SPDX-License-Identifier: MIT
/// @file net.hpp
/// `rpc::net::Server`: JSON-RPC over HTTP/1.1, WebSocket, TCP and Unix-domain sockets on
/// Boost.Asio and Boost.Beast (optional: link `batchrpc::net`; the core never needs it).
///
/// HTTP: `POST` with a JSON body is answered `200` with the reply, or `204 No Content` when
/// there is nothing to send; other methods `405`, another content type `415`, a body past the
/// router's `max_message_bytes` `413`, a request that cannot be read `400`. Keep-alive and
/// pipelining are supported (responses in request order); `Expect: 100-continue` is
/// answered. Each connection gets its own `rpc::Session` with its first request; a request
/// carrying a session's id (the `Rpc-Session-Id` response header) is served by that session
/// instead, so a cancel sent on a second connection reaches a request on the first.
///
/// WebSocket: a request that asks to upgrade (any path) becomes a WebSocket connection with a
/// session of its own; each text message is one JSON-RPC message and each reply one text
/// message, sent as it completes. A binary message closes the connection with 1003, a text
/// message that is not UTF-8 with 1007 (the WebSocket protocol requires it), one past
/// `max_message_bytes` with 1009; shutdown closes with 1001. Pings keep it alive.
///
/// Streams (TCP or Unix-domain): one session per connection, framed by lines or
/// `Content-Length` as `rpc::serve_stream` does; replies go out as they complete.
///
/// MCP Streamable HTTP (`Protocol::mcp`, on `ServerOptions::mcp.path`): a session starts with
/// each `initialize` POSTed without an `Mcp-Session-Id` and is named by that header afterwards
/// (`400` without it, `404` for an unknown one, `DELETE` ends it). A POST of requests is
/// answered `application/json`, or `text/event-stream` once the server sends a message for one
/// of its calls (those messages, then the reply); a POST of notifications or responses `202`.
/// `GET` opens the session's stream for messages that belong to no running call (`409` for a
/// second one). An `Origin` not allowed is `403`, an unsupported `MCP-Protocol-Version` `400`,
/// an `Accept` that does not allow JSON and event streams `406`. The server's messages are
/// those of each session's `rpc::Peer`; one sent through a handler's `ctx.peer()` goes on the
/// stream of the POST holding that call.
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <string>

#include "config.hpp"
#include "net_options.hpp"
#include "router.hpp"

namespace boost::asio::ssl {
class context;
}

namespace rpc::inline BATCHRPC_ABI::net {

namespace detail {
class ServerCore;
}

/**
 * A JSON-RPC 2.0 server on Boost.Asio: any number of listeners (TCP or Unix-domain, each
 * speaking HTTP with WebSocket, or a framed stream), served by `io_threads` I/O threads.
 * Handlers run on the executor, never on an I/O thread (except `inline_only` methods).
 *
 * @code
 * rpc::net::Server server{router};
 * const int port = server.listen("127.0.0.1", 8080);   // HTTP and WebSocket
 * server.listen_unix("/run/app.sock", rpc::net::Protocol::lines);
 * server.start();  // serves on threads of its own; ~Server shuts down and joins them
 * @endcode
 *
 * Defences (ServerOptions): a request must be whole within `request_timeout` once begun; an
 * idle connection is closed after `idle_timeout`; a client that does not take its replies
 * within `write_timeout` is closed; past `max_connections` new connections are refused (HTTP
 * `503` with `Retry-After`, WebSocket close `1013`, a stream one `-32093` error); a connection
 * with `max_in_flight` messages in flight starts no more until replies go out (a WebSocket or
 * stream one still takes the client's answers to the server's requests and cancellations at
 * once, and holds up to 1 MiB of other messages: see ServerOptions::max_in_flight); a
 * WebSocket or stream client that falls behind the server's own messages (does not read them,
 * or reads them slower than they come) is closed once 16 MiB of them wait to be sent.
 *
 * Shutdown (`shutdown()`, or the destructor): listeners close (a connection accepted as they
 * do, or still in its TLS handshake, is closed unserved); each connection closes once its
 * replies are written (WebSocket: close 1001). Until then an HTTP connection reads no further
 * request, while WebSocket and stream connections read on, so that the client's answers to the
 * server's requests still reach the handlers waiting for them (what else the client sends
 * meanwhile is served too). After `shutdown_grace`, what is still in flight is cancelled:
 * requests not started yet (those held at the in-flight cap run nothing) and those waiting on a
 * `Responder` are answered `-32800`, running handlers see their stop token (what they return
 * is sent), the server's own requests still waiting for a client (`rpc::Peer::request`) are
 * answered `-32094`, and nothing more is read. After another `shutdown_grace`, the connections
 * still open are closed. It returns when every connection is gone, so it also waits for
 * handlers that ignore their stop token.
 * A second call, on any thread, returns when the first has finished.
 *
 * A client that goes away: a WebSocket's requests in flight are cancelled; a stream's end of
 * input finishes and answers what is in flight, as `rpc::serve_stream` does, and a failed
 * write cancels it; an HTTP request runs to its end (its session may serve other connections).
 *
 * Threads and lifetimes. The router and the executor must outlive the server; the server owns
 * and joins its I/O threads and its own pool. `listen`, `listen_unix`, `start`, `shutdown` and
 * `connections` may be called from any thread, but `shutdown` (and the destructor) not from a
 * handler or an I/O thread of this server: it waits for them. Addresses are IP literals
 * (`127.0.0.1`, `::1`, `0.0.0.0`), not host names. Each connection is a file descriptor: raise
 * the process's limit (`RLIMIT_NOFILE`) for many connections; while none is left, accepting
 * pauses and resumes by itself.
 */
class Server {
 public:
  /// A server for `router` (which must outlive it); nothing listens yet.
  BATCHRPC_DECL explicit Server(const Router& router, ServerOptions options = {});
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;
  /// Shuts down (see the class comment) and joins every thread of the server's.
  BATCHRPC_DECL ~Server();

  /// Listens on TCP `host`:`port` (`host` an IP address, not a name; port 0 picks a free
  /// one); returns the port. With `tls`, every connection is TLS (HTTPS, WSS, or a stream
  /// inside TLS): `tls` holds the server's certificate and key and must outlive the server.
  /// TLS needs OpenSSL where the server is compiled (`batchrpc::net` has it when OpenSSL was
  /// found; header-only, define BATCHRPC_NET_TLS and link OpenSSL: the `batchrpc::net_tls`
  /// target does both).
  /// @throws std::runtime_error (saying why) for a host that is not an IP address, a port out
  /// of range, or an address that cannot be bound; std::logic_error after shutdown, or for
  /// TLS in a build without it.
  BATCHRPC_DECL int listen(const std::string& host, int port, Protocol protocol = Protocol::http,
                           boost::asio::ssl::context* tls = nullptr);

  /// Listens on the Unix-domain socket `path`, replacing a socket file left there by an
  /// earlier run that nobody answers on (a live server's is an error, as is any other kind of
  /// file there); the file is removed at shutdown.
  /// `tls` as for `listen`. @throws as `listen`.
  BATCHRPC_DECL void listen_unix(const std::string& path, Protocol protocol = Protocol::http,
                                 boost::asio::ssl::context* tls = nullptr);

  /// Starts the I/O threads (listeners added later serve at once). Once only.
  /// @throws std::logic_error if already started or shut down.
  BATCHRPC_DECL void start();

  /// Shuts down gracefully (see the class comment) and returns when every connection is gone
  /// and the I/O threads have ended. Later calls return at once.
  BATCHRPC_DECL void shutdown();

  /// Connections being served now (refused ones not counted).
  [[nodiscard]] BATCHRPC_DECL std::size_t connections() const;

 private:
  std::unique_ptr<detail::ServerCore> core_;
};

}  // namespace rpc::net

#if defined(BATCHRPC_HEADER_ONLY)
#include "impl/net.ipp"
#endif
