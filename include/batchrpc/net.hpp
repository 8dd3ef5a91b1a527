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
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>

#include "config.hpp"
#include "detail/net/hub.hpp"
#include "detail/net/listener.hpp"
#include "executor.hpp"
#include "net_options.hpp"
#include "router.hpp"

namespace rpc::inline BATCHRPC_ABI::net {

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
 * `503` with `Retry-After`, WebSocket close `1013`, a stream one `-32004` error); a connection
 * with `max_in_flight` requests in flight is not read until replies go out.
 *
 * Shutdown (`shutdown()`, or the destructor): listeners close; each connection stops reading
 * and closes once its replies are written (WebSocket: close 1001). After `shutdown_grace`,
 * what is still in flight is cancelled (answered `-32800`, Responders included); after another
 * `shutdown_grace`, the connections still open are closed. It returns when every connection
 * is gone, so it also waits for handlers that ignore their stop token.
 *
 * Threads and lifetimes. The router and the executor must outlive the server; the server owns
 * and joins its I/O threads and its own pool. `listen`, `listen_unix`, `start`, `shutdown` and
 * `connections` may be called from any thread, but `shutdown` (and the destructor) not from a
 * handler or an I/O thread of this server: it waits for them.
 */
class Server {
 public:
  /// A server for `router`; nothing listens yet.
  explicit Server(const Router& router, ServerOptions options = {})
      : options_(std::move(options)),
        own_pool_(options_.executor == nullptr ? std::make_unique<ThreadPool>(threads_or_hardware(options_.handler_threads))
                                               : nullptr),
        hub_(router, options_, options_.executor != nullptr ? options_.executor : own_pool_.get()) {}
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;
  /// Shuts down (see the class comment) and joins every thread of the server's.
  ~Server() { shutdown(); }

  /// Listens on TCP `host`:`port` (port 0 picks a free one); returns the port. With `tls`,
  /// every connection is TLS (HTTPS, WSS, or a stream inside TLS): `tls` holds the server's
  /// certificate and key and must outlive the server; it needs the `batchrpc::net_tls` target
  /// (BATCHRPC_NET_TLS, OpenSSL), defined alike in every translation unit of the program.
  /// @throws std::runtime_error if the address cannot be bound, std::logic_error after
  /// shutdown or for TLS without BATCHRPC_NET_TLS.
  int listen(const std::string& host, int port, Protocol protocol = Protocol::http,
             boost::asio::ssl::context* tls = nullptr) {
    boost::system::error_code error;
    const auto address = boost::asio::ip::make_address(host, error);
    if (error || port < 0 || port > 65535) throw std::runtime_error("batchrpc: cannot listen on " + host + ":" + std::to_string(port));
    const boost::asio::ip::tcp::endpoint endpoint(address, static_cast<unsigned short>(port));
    auto listener = add<boost::asio::ip::tcp>(protocol, endpoint, host + ":" + std::to_string(port), tls);
    return listener->local_endpoint().port();
  }

  /// Listens on the Unix-domain socket `path`, replacing a socket file left there by an
  /// earlier run (any other kind of file there is an error); the file is removed at shutdown.
  /// `tls` as for `listen`. @throws std::runtime_error if it cannot, std::logic_error after
  /// shutdown or for TLS without BATCHRPC_NET_TLS.
  void listen_unix(const std::string& path, Protocol protocol = Protocol::http,
                   boost::asio::ssl::context* tls = nullptr) {
    std::error_code ignored;
    if (std::filesystem::is_socket(path, ignored)) std::filesystem::remove(path, ignored);
    add<boost::asio::local::stream_protocol>(protocol, boost::asio::local::stream_protocol::endpoint(path), path, tls);
    std::lock_guard lock(mutex_);
    unix_paths_.push_back(path);
  }

  /// Starts the I/O threads (listeners added later serve at once). Once only.
  /// @throws std::logic_error if already started or shut down.
  void start() {
    std::lock_guard lock(mutex_);
    if (started_ || shut_down_) throw std::logic_error("batchrpc: net::Server::start called twice or after shutdown");
    started_ = true;
    for (const auto& listener : listeners_) listener->start();
    const std::size_t threads = threads_or_hardware(options_.io_threads);
    for (std::size_t i = 0; i < threads; ++i) threads_.emplace_back([this] { run_io(); });
  }

  /// Shuts down gracefully (see the class comment) and returns when every connection is gone
  /// and the I/O threads have ended. Later calls return at once.
  void shutdown() {
    std::vector<std::shared_ptr<detail::Listening>> listeners;
    std::vector<std::string> unix_paths;
    {
      std::lock_guard lock(mutex_);
      if (shut_down_) return;
      shut_down_ = true;
      listeners.swap(listeners_);
      unix_paths.swap(unix_paths_);
    }
    hub_.close();
    for (const auto& listener : listeners) listener->post_close();
    hub_.for_each([](detail::Connection& c) { c.post_drain(); });
    if (!hub_.wait_closed(options_.shutdown_grace)) {
      hub_.for_each([](detail::Connection& c) { c.post_cancel(); });
      hub_.sessions.close();  // HTTP: cancels, and waits until no request is being handled
      if (!hub_.wait_closed(options_.shutdown_grace)) {
        hub_.for_each([](detail::Connection& c) { c.post_close(); });
        hub_.wait_closed();
      }
    }
    hub_.sessions.close();
    work_.reset();
    io_.stop();
    for (auto& thread : threads_) thread.join();
    threads_.clear();
    for (const auto& path : unix_paths) {
      std::error_code ignored;
      std::filesystem::remove(path, ignored);
    }
  }

  /// Connections being served now (refused ones not counted).
  [[nodiscard]] std::size_t connections() const { return hub_.served(); }

 private:
  static std::size_t threads_or_hardware(std::size_t threads) {
    return threads != 0 ? threads : std::max(1u, std::thread::hardware_concurrency());
  }

  template <class Transport>
  std::shared_ptr<detail::Listener<Transport>> add(Protocol protocol, const typename Transport::endpoint& endpoint,
                                                   const std::string& where, boost::asio::ssl::context* tls) {
#if !defined(BATCHRPC_NET_TLS)
    if (tls != nullptr) throw std::logic_error("batchrpc: TLS needs BATCHRPC_NET_TLS (link batchrpc::net_tls)");
#endif
    std::lock_guard lock(mutex_);
    if (shut_down_) throw std::logic_error("batchrpc: net::Server::listen after shutdown");
    std::shared_ptr<detail::Listener<Transport>> listener;
    try {
      listener = std::make_shared<detail::Listener<Transport>>(io_, hub_, protocol, endpoint, tls);
    } catch (const boost::system::system_error& e) {
      throw std::runtime_error("batchrpc: cannot listen on " + where + ": " + e.code().message());
    }
    if (started_) listener->start();
    listeners_.push_back(listener);
    return listener;
  }

  // An I/O thread. Handlers do not throw but for lack of memory; the thread goes on serving.
  void run_io() {
    for (;;) {
      try {
        io_.run();
        return;
      } catch (...) {
      }
    }
  }

  ServerOptions options_;
  std::unique_ptr<ThreadPool> own_pool_;  // outlives the hub's sessions
  detail::Hub hub_;                       // outlives the I/O context's pending handlers
  boost::asio::io_context io_;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work_{io_.get_executor()};
  std::mutex mutex_;  // guards what follows
  std::vector<std::shared_ptr<detail::Listening>> listeners_;
  std::vector<std::string> unix_paths_;
  std::vector<std::thread> threads_;
  bool started_ = false;
  bool shut_down_ = false;
};

}  // namespace rpc::net
