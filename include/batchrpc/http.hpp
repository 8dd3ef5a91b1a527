// SPDX-License-Identifier: MIT
/// @file http.hpp
/// Serving a router over HTTP with cpp-httplib (optional: link `batchrpc::http`).
///
/// `POST` with a JSON body is answered `200` with the reply, or `204 No Content` when there is
/// nothing to send; other methods `405`, a non-JSON content type `415`, a body past the
/// router's `max_message_bytes` `413`. Each TCP connection that sends a request gets its own
/// `rpc::Session`; a request carrying a session's id (the `Rpc-Session-Id` response header) is
/// served by that session instead, so a cancel sent on a second connection reaches a request
/// on the first.
#pragma once

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cctype>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include <httplib.h>

#include "config.hpp"
#include "detail/session_registry.hpp"
#include "router.hpp"
#include "session.hpp"

namespace rpc::inline BATCHRPC_ABI::http {

/// Settings of an HTTP server.
struct ServerOptions {
  /// Address to listen on; loopback by default, so nothing is exposed unless asked.
  std::string host = "127.0.0.1";
  /// Port; 0 picks a free one (see `Server::port`).
  int port = 8080;
  /// Capabilities granted to every connection's session.
  std::vector<std::string> capabilities{};
  /// Where batch members run; nullptr: on the connection's own thread. It must outlive the
  /// server.
  Executor* executor = nullptr;
  /// Connections served at once (each holds a thread while it is open; at least one).
  std::size_t connection_threads = 16;
  /// Seconds an idle keep-alive connection stays open. Stopping waits for idle connections
  /// up to this long.
  int keep_alive_seconds = 5;
  /// Response header naming the session that handled a request; a request that sends it back
  /// is handled by that session whatever connection it comes on, so a cancel can reach a
  /// request still running on another connection. Empty: one session per connection, no ids.
  std::string session_header = "Rpc-Session-Id";
  /// Sessions kept for reuse by id; past this, the least recently used idle one goes.
  std::size_t max_sessions = 1024;
  /// Seconds an idle session is kept for reuse after its last request.
  int session_idle_seconds = 300;
};

namespace detail {

using rpc::detail::SessionEntry;
using rpc::detail::SessionRegistry;
using rpc::detail::SessionUse;

// What a connection keeps between its requests: its own session, once it has sent one.
struct Connection {
  std::shared_ptr<SessionEntry> session;
};

// The connection the current thread serves; httplib tells a handler nothing about it.
inline thread_local Connection* current_connection = nullptr;

// Runs each accepted connection on a thread of its own. httplib makes one per listen and
// calls shutdown() when accepting has ended: `accepting_ended` runs then, before the
// connections still open are waited for.
class ConnectionQueue final : public httplib::TaskQueue {
 public:
  ConnectionQueue(std::size_t threads, std::function<void()> accepting_ended)
      : accepting_ended_(std::move(accepting_ended)), pool_(std::max<std::size_t>(threads, 1)) {}
  ConnectionQueue(const ConnectionQueue&) = delete;
  ConnectionQueue& operator=(const ConnectionQueue&) = delete;
  // httplib's ThreadPool does not join in its destructor: were shutdown() skipped (an
  // exception inside httplib), its threads would end the process.
  ~ConnectionQueue() override {
    if (!shut_down_) pool_.shutdown();
  }

  void enqueue(std::function<void()> serve_connection) override {
    pool_.enqueue([serve = std::move(serve_connection)] {
      Connection connection;
      current_connection = &connection;
      // httplib answers a handler's exception itself (500); anything else that escapes ends
      // this connection only, not the process.
      try {
        serve();
      } catch (...) {
      }
      current_connection = nullptr;
    });  // the connection's session is released here, outside any lock
  }
  void shutdown() override {
    accepting_ended_();
    shut_down_ = true;
    pool_.shutdown();  // the connections still open end after their current request
  }

 private:
  std::function<void()> accepting_ended_;
  httplib::ThreadPool pool_;
  bool shut_down_ = false;
};

// httplib::Server whose listening socket can be closed at any moment: httplib's own stop()
// does nothing until listen_after_bind() has started (a stop() racing run() was lost), and
// nothing closed a socket that was bound but never listened on.
class Listener final : public httplib::Server {
 public:
  ~Listener() override { close_socket(); }

  // Closes the listening socket: an accept() waiting on it returns and listening ends, or
  // ends at once if it has not started yet.
  void close_socket() noexcept {
    const socket_t socket = svr_sock_.exchange(INVALID_SOCKET);
    if (socket == INVALID_SOCKET) return;
    ::shutdown(socket, SHUT_RDWR);
    ::close(socket);
  }
  // Listening has ended: a socket still set was closed by httplib itself after a failed
  // accept(), and its number (maybe another file's by now) must not be closed again.
  void forget_socket() noexcept { svr_sock_ = INVALID_SOCKET; }
};

// Answers `status` with `text`, then closes the connection: for a request whose body was not
// read to its end, whose rest would otherwise be read as the connection's next request (a body
// that holds a request must never be served as one). httplib keeps a connection open whatever
// the response's headers say; a content provider that reports failure after writing the whole
// body is how it is told to close it. (While the server stops, httplib writes no provider's
// body: the client then sees the connection close early, as it would a moment later anyway.)
inline void reply_and_close(httplib::Response& res, int status, std::string text) {
  res.status = status;
  res.set_header("Connection", "close");
  const std::size_t size = text.size();
  res.set_content_provider(size, "text/plain",
                           [text = std::move(text)](std::size_t offset, std::size_t length, httplib::DataSink& sink) {
                             sink.write(text.data() + offset, length);
                             return false;
                           });
}

inline bool is_json(std::string_view content_type) {
  const auto semicolon = content_type.find(';');
  std::string_view type = content_type.substr(0, semicolon);
  while (!type.empty() && type.back() == ' ') type.remove_suffix(1);
  constexpr std::string_view json = "application/json";
  if (type.size() != json.size()) return false;
  for (std::size_t i = 0; i < json.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(type[i])) != json[i]) return false;
  }
  return true;
}

}  // namespace detail

/**
 * A JSON-RPC 2.0 server over HTTP/1.1 on cpp-httplib. Keep-alive connections are kept, each
 * with its own session (capabilities and cancellation are per connection).
 *
 * @code
 * rpc::http::Server server{router, {.port = 8080}};
 * server.start();  // serves on threads of its own; ~Server stops and joins them
 * @endcode
 *
 * Lifetimes. The router and the executor (`ServerOptions::executor`) must outlive the server.
 * The server owns every thread it serves on: the connection threads (at most
 * `connection_threads`) and the one `start()` makes. Its destructor stops serving, cancels
 * the requests still being handled (their clients get `-32800`, later requests `503`), and
 * returns once all of those threads have ended and a `run()` on another thread has returned.
 * A server serves once: after `stop()` it cannot be started again (make a new one).
 *
 * Threads. Method handlers (and what they call) run on a connection thread, or on the
 * executor; none runs under a lock of this library. A handler may call `stop()`, which
 * returns at once; it must not destroy the server, which waits for it.
 * - `stop()`: from any thread, any number of times, before, during or after `bind()`,
 *   `start()` or `run()`, for as long as the server exists. Not from a signal handler itself
 *   (it takes a mutex): from a thread that waits for the signal, with `sigwait` for instance.
 * - `bind()`, `start()`, `run()`, `port()`: from any thread. One `start()` or `run()` serves;
 *   another while it does throws `std::logic_error`.
 * - `run()` serves on the calling thread until `stop()`. Called on a thread of your own, call
 *   `stop()` and join that thread before the server is destroyed. (The destructor also waits
 *   for a `run()` that has begun, so a thread declared before the server and joined after it
 *   is safe once `run()` has started; one that has not called it yet when destruction begins
 *   is not.) `start()` has no such rule.
 * Stopping closes the listening socket at once; each open connection ends after its current
 * request, an idle keep-alive one within `keep_alive_seconds`.
 */
class Server {
 public:
  /// A server for `router` (which must outlive it). Nothing is bound yet.
  Server(const Router& router, ServerOptions options = {})
      : router_(router),
        options_(std::move(options)),
        sessions_(router_, {.session = {.capabilities = options_.capabilities, .executor = options_.executor},
                            .by_id = !options_.session_header.empty(),
                            .max_sessions = options_.max_sessions,
                            .idle = std::chrono::seconds(options_.session_idle_seconds)}) {
    listener_.new_task_queue = [this] {
      return new detail::ConnectionQueue(options_.connection_threads, [this] { accepting_ended(); });
    };
    listener_.set_payload_max_length(router.limits().max_message_bytes);
    listener_.set_keep_alive_max_count(1000);
    listener_.set_keep_alive_timeout(options_.keep_alive_seconds);
    // httplib writes headers and body separately; without this every keep-alive request after
    // the first waits for the peer's delayed ACK.
    listener_.set_tcp_nodelay(true);
    // The body is read here, counted as it comes: httplib holds only Content-Length bodies to
    // the payload limit, and a chunked one must not grow without bound either.
    listener_.Post(".*", [this](const httplib::Request& req, httplib::Response& res,
                                const httplib::ContentReader& read) { post(req, res, read); });
    const auto not_allowed = [](const httplib::Request&, httplib::Response& res) {
      res.status = 405;
      res.set_header("Allow", "POST");
      res.set_content("Only POST is allowed\n", "text/plain");
    };
    listener_.Get(".*", not_allowed);
    listener_.Put(".*", not_allowed);
    listener_.Patch(".*", not_allowed);
    listener_.Delete(".*", not_allowed);
    listener_.Options(".*", not_allowed);
    listener_.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
      res.status = 500;
      res.set_content("Internal Server Error\n", "text/plain");
    });
  }
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;
  /// Stops, cancels the requests still being handled (later ones are `503`), and waits for
  /// every serving thread (see the class comment).
  ~Server() {
    stop();
    sessions_.close();
    if (thread_.joinable()) thread_.join();
    std::unique_lock lock(mutex_);
    served_.wait(lock, [this] { return !serving_; });
  }

  /// Binds the listening socket if it is not bound yet; returns the port, or -1 when `stop()`
  /// came first. @throws std::runtime_error if the address cannot be bound.
  int bind() {
    std::lock_guard lock(mutex_);
    if (stopped_) return -1;
    return port_ >= 0 ? port_.load() : bind_locked();
  }

  /// Binds (unless `bind` was called) and serves on a thread of the server's own until
  /// `stop()` or destruction; returns the port, or -1 when `stop()` came first.
  /// @throws std::runtime_error if the address cannot be bound, std::logic_error if the
  /// server is already serving.
  int start() {
    std::lock_guard lock(mutex_);
    if (serving_) throw std::logic_error("batchrpc: the HTTP server is already serving");
    if (stopped_) return -1;
    const int port = port_ >= 0 ? port_.load() : bind_locked();
    serving_ = true;
    try {
      thread_ = std::thread([this] {
        try {
          serve();
        } catch (...) {  // accepting failed: this server no longer listens (nobody to tell)
        }
      });
    } catch (...) {
      serving_ = false;
      throw;
    }
    return port;
  }

  /// Binds (unless `bind` was called) and serves on the calling thread until `stop()`;
  /// returns at once if `stop()` came first. See the class comment for the rules.
  /// @throws std::runtime_error if the address cannot be bound or accepting fails,
  /// std::logic_error if the server is already serving.
  void run() {
    {
      std::lock_guard lock(mutex_);
      if (serving_) throw std::logic_error("batchrpc: the HTTP server is already serving");
      if (stopped_) return;
      if (port_ < 0) bind_locked();
      serving_ = true;
    }
    serve();
  }

  /// Stops serving: the listening socket is closed now; `run()` returns (and the `start()`
  /// thread ends) once the open connections have finished their current request. Does not
  /// wait. Safe from any thread, repeatedly, at any time while the server exists.
  void stop() noexcept {
    std::lock_guard lock(mutex_);
    stopped_ = true;
    listener_.close_socket();
  }

  /// The bound port, or -1 before `bind`.
  [[nodiscard]] int port() const noexcept { return port_; }

 private:
  int bind_locked() {
    const auto cannot = [this] {
      return std::runtime_error("batchrpc: cannot listen on " + options_.host + ":" + std::to_string(options_.port));
    };
    if (options_.port < 0 || options_.port > 65535) throw cannot();
    const int port = options_.port == 0
                         ? listener_.bind_to_any_port(options_.host)
                         : (listener_.bind_to_port(options_.host, options_.port) ? options_.port : -1);
    if (port < 0) {
      listener_.close_socket();  // a socket made before a later step failed
      throw cannot();
    }
    port_ = port;
    return port;
  }

  // Listens on the calling thread until the socket is closed, then tells ~Server.
  void serve() {
    bool listened = false;
    std::exception_ptr failure;
    try {
      listened = listener_.listen_after_bind();
    } catch (...) {
      failure = std::current_exception();
    }
    {
      std::lock_guard lock(mutex_);
      if (failure != nullptr) listener_.close_socket();
      stopped_ = true;
      serving_ = false;
      served_.notify_all();
    }
    // From here on the server may be destroyed (~Server waits only for serving_): nothing of
    // `this` may be touched.
    if (failure != nullptr) std::rethrow_exception(failure);
    if (!listened) throw std::runtime_error("batchrpc: accepting HTTP connections failed; the server stopped");
  }

  // Called by httplib on the serving thread when its accept loop has ended, before it waits
  // for the open connections.
  void accepting_ended() {
    std::lock_guard lock(mutex_);
    listener_.forget_socket();
  }

  void post(const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& read) {
    if (!detail::is_json(req.get_header_value("Content-Type"))) {
      detail::reply_and_close(res, 415, "Content-Type must be application/json\n");  // body unread
      return;
    }
    const std::size_t limit = router_.limits().max_message_bytes;
    std::string body;
    bool too_large = false;
    const bool complete = read([&](const char* data, std::size_t size) {
      if (size > limit - std::min(limit, body.size())) {
        too_large = true;
        return false;  // stop reading: the connection is closed after the reply
      }
      body.append(data, size);
      return true;
    });
    // httplib itself refuses a Content-Length past the limit before reading anything.
    if (!complete && !too_large && req.get_header_value<std::uint64_t>("Content-Length") > limit) too_large = true;
    if (!complete && !too_large) {
      detail::reply_and_close(res, 400, "The request body could not be read\n");
      return;
    }
    if (too_large) {
      detail::reply_and_close(res, 413, "Request body larger than " + std::to_string(limit) + " bytes\n");
      return;
    }
    detail::SessionUse use;  // the session is held until the reply is made
    if (!options_.session_header.empty() && req.has_header(options_.session_header.c_str())) {
      use = sessions_.use(req.get_header_value(options_.session_header.c_str()));
      if (!use && !use.refused_for_closing()) {
        res.status = 404;
        res.set_content("Unknown session\n", "text/plain");
        return;
      }
    } else {
      detail::Connection* const connection = detail::current_connection;
      if (connection == nullptr) {  // not on a connection thread of ours: never serve ungated
        res.status = 500;
        res.set_content("No session for this connection\n", "text/plain");
        return;
      }
      use = sessions_.use_own(connection->session);
    }
    if (use.refused_for_closing()) {
      res.status = 503;
      res.set_content("The server is shutting down\n", "text/plain");
      return;
    }
    if (!use.id().empty()) res.set_header(options_.session_header.c_str(), use.id());
    const std::optional<std::string> reply = use.session().handle(std::move(body));  // taken over, not copied
    if (reply) {
      res.status = 200;
      res.set_content(*reply, "application/json");
    } else {
      res.status = 204;
    }
  }

  const Router& router_;
  ServerOptions options_;
  detail::SessionRegistry sessions_;  // outlives the listener, whose connections use it
  detail::Listener listener_;
  std::mutex mutex_;                  // guards the serving state below and the socket's closing
  std::condition_variable served_;    // notified when serving_ goes false
  bool serving_ = false;              // a run() or the start() thread is serving
  bool stopped_ = false;              // stop() was called, or serving has ended
  std::atomic<int> port_{-1};
  std::thread thread_;                // start()'s; joined by ~Server
};

/// Binds and serves `router` on the calling thread for as long as the process runs (nothing
/// can stop it; use a `Server` to stop). @throws std::runtime_error as `Server::run` does.
inline void serve(const Router& router, ServerOptions options = {}) {
  Server server(router, std::move(options));
  server.run();
}

}  // namespace rpc::http
