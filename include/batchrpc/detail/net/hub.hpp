// SPDX-License-Identifier: MIT
// What every connection of a net::Server shares: the router, the options, the HTTP session
// registry, and the table of open connections that admission and shutdown work on.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <boost/asio/post.hpp>
#include <boost/asio/socket_base.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/stream_traits.hpp>

#include "../../config.hpp"
#include "../../net_options.hpp"
#include "../../router.hpp"
#include "../../session.hpp"
#include "../chrono.hpp"
#include "../session_registry.hpp"
#include "tls_traits.hpp"

namespace rpc::inline BATCHRPC_ABI::net::detail {

namespace asio = boost::asio;

// One open connection, as the server sees it. Each phase of a shutdown is posted to the
// connection's own strand, where all of its state lives.
class Connection {
 public:
  virtual ~Connection() = default;
  // Stop reading; close once every reply in flight is written.
  virtual void post_drain() = 0;
  // Cancel what is in flight: requests are answered -32800 (Responders included).
  virtual void post_cancel() = 0;
  // Close the socket now.
  virtual void post_close() = 0;
};

// The connections of one server, for admission and shutdown.
class Hub {
 public:
  Hub(const Router& served, const ServerOptions& settings, Executor* executor)
      : router(served),
        options(settings),
        max_in_flight(std::max<std::size_t>(settings.max_in_flight, 1)),
        session_options{.capabilities = settings.capabilities, .executor = executor},
        sessions(served, {.session = session_options,
                          .by_id = !settings.session_header.empty(),
                          .max_sessions = settings.max_sessions,
                          .idle = settings.session_idle,
                          .id_prefix = settings.session_id_prefix}),
        mcp_sessions(served, {.session = session_options,
                              .by_id = true,
                              .max_sessions = settings.max_sessions,
                              .idle = settings.session_idle,
                              .id_prefix = settings.session_id_prefix}) {}

  const Router& router;
  const ServerOptions& options;
  const std::size_t max_in_flight;  // options.max_in_flight, at least 1
  const SessionOptions session_options;
  rpc::detail::SessionRegistry sessions;      // HTTP sessions (WebSocket and streams own theirs)
  rpc::detail::SessionRegistry mcp_sessions;  // MCP Streamable HTTP sessions, always by id

  // Shutdown: cancels what the HTTP and MCP sessions have in flight, until nothing is.
  void close_sessions() {
    sessions.close();
    mcp_sessions.close();
  }

  // What becomes of a new connection. One that is served counts against max_connections;
  // one that is refused (answered 503, 1013 or -32093, then closed) against a small cap of
  // its own, so that refusing cannot cost more than serving; past both it is dropped.
  enum class Admission { serve, refuse, drop };

  // Decides, and counts the connection (until `remove`) unless it is dropped.
  Admission admit() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (closing_) return Admission::drop;
    if (served_ < options.max_connections) {
      ++served_;
      return Admission::serve;
    }
    if (refusing_ < kMaxRefusing) {
      ++refusing_;
      return Admission::refuse;
    }
    return Admission::drop;
  }

  // Registers a connection `admit` has counted (`served`: it was to be served). False, and
  // uncounted, once the server is closing: a shutdown drains only what is registered when it
  // begins, so one registered later would wait out its grace. The caller drops it unserved.
  [[nodiscard]] bool add(Connection& connection, const std::shared_ptr<Connection>& owner, bool served) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (closing_) {
      (served ? served_ : refusing_) -= 1;
      return false;
    }
    open_.emplace(&connection, Entry{owner, served});
    return true;
  }

  // Counts and registers a connection that takes over another's socket (a WebSocket upgraded
  // from an HTTP connection, which is removed when its last handler returns). False once the
  // server is closing, as for add.
  [[nodiscard]] bool add_counted(Connection& connection, const std::shared_ptr<Connection>& owner, bool served) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (closing_) return false;
    (served ? served_ : refusing_) += 1;
    open_.emplace(&connection, Entry{owner, served});
    return true;
  }

  // From a connection's destructor.
  void remove(Connection& connection) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto found = open_.find(&connection);
    if (found == open_.end()) return;
    (found->second.served ? served_ : refusing_) -= 1;
    open_.erase(found);
    if (open_.empty()) all_closed_.notify_all();
  }

  [[nodiscard]] std::size_t served() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return served_;
  }

  [[nodiscard]] bool closing() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return closing_;
  }

  // Unregisters a connection that hands its socket, and its count, to one `add` registers
  // next (a TLS handshake, once done, to the connection that opens over it).
  void hand_over(Connection& connection) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    open_.erase(&connection);
    if (open_.empty()) all_closed_.notify_all();
  }

  // New connections are refused from now on.
  void close() {
    std::lock_guard<std::mutex> lock(mutex_);
    closing_ = true;
  }

  // Calls `phase` on every open connection, outside the lock.
  void for_each(const std::function<void(Connection&)>& phase) {
    std::vector<std::shared_ptr<Connection>> open;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (const auto& [connection, entry] : open_) {
        if (auto owner = entry.owner.lock()) open.push_back(std::move(owner));
      }
    }
    for (const auto& connection : open) phase(*connection);
  }

  // Runs `post`, which posts a session's answer to a connection's strand, from a handler
  // thread. The connection may be gone, and shutdown past waiting for it, the moment the
  // posted handler runs; but `post` still holds executor copies (the strand's), which must
  // not outlive the I/O context. So shutdown waits, with wait_posts(), until every call
  // has returned; each is counted under the lock, and the hub is not touched after that.
  template <class Post>
  void post_from_handler_thread(Post post) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ++posting_;
    }
    struct Uncount {
      Hub& hub;
      ~Uncount() {
        std::lock_guard<std::mutex> lock(hub.mutex_);
        if (--hub.posting_ == 0) hub.posts_done_.notify_all();
      }
    } uncount{*this};
    post();
  }
  void wait_posts() {
    std::unique_lock<std::mutex> lock(mutex_);
    posts_done_.wait(lock, [this] { return posting_ == 0; });
  }

  // Waits until no connection is open, or `timeout` has passed; true when none is.
  bool wait_closed(std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mutex_);
    return all_closed_.wait_for(lock, timeout, [this] { return open_.empty(); });
  }
  void wait_closed() {
    std::unique_lock<std::mutex> lock(mutex_);
    all_closed_.wait(lock, [this] { return open_.empty(); });
  }

 private:
  static constexpr std::size_t kMaxRefusing = 64;

  struct Entry {
    std::weak_ptr<Connection> owner;
    bool served;
  };

  mutable std::mutex mutex_;
  std::condition_variable all_closed_;
  std::unordered_map<Connection*, Entry> open_;
  std::size_t served_ = 0;
  std::size_t refusing_ = 0;
  bool closing_ = false;
  std::size_t posting_ = 0;  // post_from_handler_thread calls not returned yet
  std::condition_variable posts_done_;
};

// What on_session is told about a connection (add_headers adds an HTTP request's).
template <class Stream>
ConnectionInfo connection_info(Stream& stream, Protocol protocol, bool websocket) {
  ConnectionInfo info;
  info.protocol = protocol;
  info.websocket = websocket;
  info.tls = is_tls<Stream>::value;
  boost::system::error_code error;
  const auto endpoint = boost::beast::get_lowest_layer(stream).remote_endpoint(error);
  if (!error) {
    std::ostringstream text;
    text << endpoint;
    info.peer = text.str();
  }
  return info;
}
template <class Fields>
void add_headers(ConnectionInfo& info, const Fields& fields) {
  for (const auto& field : fields) info.headers.emplace_back(field.name_string(), field.value());
}

// Runs options.on_session for a session that starts; false when it threw (refuse the connection).
inline bool start_session(const ServerOptions& options, const ConnectionInfo& info, Session& session) {
  if (!options.on_session) return true;
  try {
    options.on_session(info, session);
    return true;
  } catch (...) {
    return false;
  }
}

// A client that does not read the server's own messages (progress, logs, requests) is closed
// once this many bytes of them wait to be sent on its WebSocket or stream connection, or on
// one MCP event stream: unlike replies, which max_in_flight bounds, a handler may send them
// without end.
inline constexpr std::size_t kMaxQueuedOwnBytes = std::size_t{16} << 20;

// The writer a connection attaches to its session for the server's own messages (rpc::Peer):
// each message is posted to the connection's strand, where `take` queues it with the replies.
// It holds the connection weakly (the connection owns the session), and refuses once the
// connection is gone.
template <class Conn, class Executor, class Take>
Outbound outbound_to(Hub& hub, const std::shared_ptr<Conn>& connection, Executor executor, Take take) {
  return [&hub, weak = std::weak_ptr<Conn>(connection), executor, take](std::string message) {
    std::shared_ptr<Conn> self = weak.lock();
    if (self == nullptr) return false;
    hub.post_from_handler_thread([&] {
      asio::post(executor, [self = std::move(self), message = std::move(message), take]() mutable {
        take(*self, std::move(message));
      });
    });
    return true;
  };
}

// A timer whose expiry does `on_expiry` unless it was re-armed or disarmed meanwhile (an
// expiry already queued when it is re-armed is recognised by its generation). Used on the
// connection's strand only.
class Deadline {
 public:
  explicit Deadline(const asio::any_io_executor& executor) : timer_(executor) {}

  template <class OnExpiry>
  void arm(std::chrono::milliseconds after, OnExpiry on_expiry) {
    timer_.expires_after(after);
    timer_.async_wait([this, generation = ++generation_, on_expiry = std::move(on_expiry)](
                          const boost::system::error_code& error) mutable {
      if (!error && generation == generation_) on_expiry();
    });
  }
  void disarm() {
    ++generation_;
    timer_.cancel();
  }

 private:
  asio::steady_timer timer_;
  std::uint64_t generation_ = 0;
};

// The socket under a stream (itself, or the one under a TLS layer).
template <class Stream>
auto& raw_socket(Stream& stream) {
  return boost::beast::get_lowest_layer(stream);
}

// Shuts one direction of a stream's socket (asio::socket_base::shutdown_receive, say),
// ignoring errors (the peer may be gone already).
template <class Stream>
void shut_socket(Stream& stream, asio::socket_base::shutdown_type what) {
  boost::system::error_code ignored;
  raw_socket(stream).shutdown(what, ignored);
}

// Closes both directions of a stream's socket, ignoring errors. Under TLS no close_notify is
// sent: every message is framed, so a truncation cannot pass for a whole one.
template <class Stream>
void close_socket(Stream& stream) {
  boost::system::error_code ignored;
  raw_socket(stream).shutdown(asio::socket_base::shutdown_both, ignored);
  raw_socket(stream).close(ignored);
}

// The reply a stream or a refused connection gets when the server is full.
inline std::string overloaded_reply(const char* reason) {
  return std::string(R"({"jsonrpc":"2.0","id":null,"error":{"code":-32093,"message":"Server overloaded","data":{"reason":")") +
         reason + "\"}}}";
}

}  // namespace rpc::net::detail
