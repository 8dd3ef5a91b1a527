// SPDX-License-Identifier: MIT
// What a net::Server is made of: its listeners, connections (through the hub), I/O threads and
// own pool, and the phases of its shutdown. net::Server forwards to it (impl/net.ipp).
#pragma once

#include <algorithm>
#include <condition_variable>
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

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>

#include "../../config.hpp"
#include "../../executor.hpp"
#include "../../net_options.hpp"
#include "../../router.hpp"
#include "../checks.hpp"
#include "../chrono.hpp"
#include "../handler_scope.hpp"
#include "hub.hpp"
#include "io_pool.hpp"
#include "listener.hpp"

namespace rpc::inline BATCHRPC_ABI::net::detail {

// See net::Server for what each member does and its rules.
class ServerCore {
 public:
  explicit ServerCore(const Router& router, ServerOptions options = {})
      : options_(std::move(options)),
        own_pool_(options_.executor == nullptr ? std::make_unique<ThreadPool>(threads_or_hardware(options_.handler_threads))
                                               : nullptr),
        hub_(router, options_, options_.executor != nullptr ? options_.executor : own_pool_.get()),
        io_(threads_or_hardware(options_.io_threads)) {}
  ServerCore(const ServerCore&) = delete;
  ServerCore& operator=(const ServerCore&) = delete;
  ~ServerCore() { shutdown(); }

  int listen(const std::string& host, int port, Protocol protocol = Protocol::http,
             boost::asio::ssl::context* tls = nullptr) {
    const std::string where = host + ":" + std::to_string(port);
    boost::system::error_code error;
    const auto address = boost::asio::ip::make_address(host, error);
    if (error) {
      throw std::runtime_error("batchrpc: cannot listen on " + where +
                               ": the host must be an IP address (\"0.0.0.0\", \"::1\"), not a name");
    }
    if (port < 0 || port > 65535) throw std::runtime_error("batchrpc: cannot listen on " + where + ": no such port");
    const boost::asio::ip::tcp::endpoint endpoint(address, static_cast<unsigned short>(port));
    auto listener = add<boost::asio::ip::tcp>(protocol, endpoint, where, tls);
    return listener->local_endpoint().port();
  }

  void listen_unix(const std::string& path, Protocol protocol = Protocol::http,
                   boost::asio::ssl::context* tls = nullptr) {
    std::error_code ignored;
    if (std::filesystem::is_socket(path, ignored)) {
      // Left by an earlier run only if nobody answers on it: a live server's is not taken.
      boost::asio::local::stream_protocol::socket probe(io_.first());
      boost::system::error_code refused;
      probe.connect(boost::asio::local::stream_protocol::endpoint(path), refused);
      if (!refused) throw std::runtime_error("batchrpc: cannot listen on " + path + ": a server is listening there");
      std::filesystem::remove(path, ignored);
    }
    add<boost::asio::local::stream_protocol>(protocol, boost::asio::local::stream_protocol::endpoint(path), path, tls);
    std::lock_guard<std::mutex> lock(mutex_);
    unix_paths_.push_back(path);
  }

  void start() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (started_ || shut_down_) throw std::logic_error("batchrpc: net::Server::start called twice or after shutdown");
    started_ = true;
    for (const auto& listener : listeners_) listener->start();
    io_.start();
  }

  void shutdown() {
    BATCHRPC_CHECK(!on_a_server_thread(),
                   "net::Server::shutdown (or ~Server) was called from one of the server's "
                   "handlers, hooks or I/O threads: it waits for those to finish, that is for "
                   "itself (call it from a thread of your own)");
    std::vector<std::shared_ptr<Listening>> listeners;
    std::vector<std::string> unix_paths;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      if (shut_down_) {  // another call is shutting down: return when it has
        finished_.wait(lock, [this] { return finished_shutdown_; });
        return;
      }
      shut_down_ = true;
      listeners.swap(listeners_);
      unix_paths.swap(unix_paths_);
    }
    hub_.close();
    for (const auto& listener : listeners) listener->post_close();
    hub_.for_each([](Connection& c) { c.post_drain(); });
    if (!hub_.wait_closed(options_.shutdown_grace)) {
      hub_.for_each([](Connection& c) { c.post_cancel(); });
      // HTTP sessions are cancelled through their registry, which waits until no request is
      // being handled: on a thread of its own, so that the connections still open after the
      // second grace are closed on time even if a handler ignores its stop token.
      std::thread cancel_http([this] { hub_.close_sessions(); });
      if (!hub_.wait_closed(options_.shutdown_grace)) {
        hub_.for_each([](Connection& c) { c.post_close(); });
        hub_.wait_closed();
      }
      cancel_http.join();
    }
    hub_.close_sessions();
    hub_.wait_posts();  // answers posted from handler threads hold executor copies until then
    io_.stop();
    for (const auto& path : unix_paths) {
      std::error_code ignored;
      std::filesystem::remove(path, ignored);
    }
    std::lock_guard<std::mutex> lock(mutex_);
    finished_shutdown_ = true;
    finished_.notify_all();
  }

  [[nodiscard]] std::size_t connections() const { return hub_.served(); }

 private:
  // Whether this thread is one of the server's I/O threads, or runs a handler on the server's
  // own pool (known in debug builds only). A user's executor is not asked: it may run the
  // handlers of other servers and sessions, from which a shutdown is fine.
  bool on_a_server_thread() const {
    const Executor* handler_executor = rpc::detail::running_handler_executor();
    return io_.runs_in_this_thread() || (own_pool_ != nullptr && handler_executor == own_pool_.get());
  }

  static std::size_t threads_or_hardware(std::size_t threads) {
    return threads != 0 ? threads : std::max(1u, std::thread::hardware_concurrency());
  }

  template <class Transport>
  std::shared_ptr<Listener<Transport>> add(Protocol protocol, const typename Transport::endpoint& endpoint,
                                                   const std::string& where, boost::asio::ssl::context* tls) {
#if !defined(BATCHRPC_NET_TLS)
    if (tls != nullptr) throw std::logic_error("batchrpc: TLS needs BATCHRPC_NET_TLS (link batchrpc::net_tls)");
#endif
    std::lock_guard<std::mutex> lock(mutex_);
    if (shut_down_) throw std::logic_error("batchrpc: net::Server::listen after shutdown");
    std::shared_ptr<Listener<Transport>> listener;
    try {
      listener = std::make_shared<Listener<Transport>>(io_, hub_, protocol, endpoint, tls);
    } catch (const boost::system::system_error& e) {
      throw std::runtime_error("batchrpc: cannot listen on " + where + ": " + e.code().message());
    }
    if (started_) listener->start();
    listeners_.push_back(listener);
    return listener;
  }

  ServerOptions options_;
  std::unique_ptr<ThreadPool> own_pool_;  // outlives the hub's sessions
  Hub hub_;     // outlives the I/O contexts' pending handlers
  IoPool io_;
  std::mutex mutex_;  // guards what follows
  std::vector<std::shared_ptr<Listening>> listeners_;
  std::vector<std::string> unix_paths_;
  bool started_ = false;
  bool shut_down_ = false;
  bool finished_shutdown_ = false;
  std::condition_variable finished_;  // notified when finished_shutdown_ goes true
};

}  // namespace rpc::net::detail
