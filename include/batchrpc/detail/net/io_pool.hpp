// SPDX-License-Identifier: MIT
// A net::Server's I/O threads, each running an io_context of its own. A connection lives on one
// context, handed out in turn: the threads share no scheduler queue (one io_context run by
// several threads has them take turns at its lock and wake one another for every handler).
#pragma once

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cstddef>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include "../../config.hpp"

namespace rpc::inline BATCHRPC_ABI::net::detail {

class IoPool {
 public:
  // `threads` contexts (the server has resolved 0 to a count); no thread runs them until start().
  explicit IoPool(std::size_t threads) {
    assert(threads > 0);
    for (std::size_t i = 0; i < threads; ++i) contexts_.push_back(std::make_unique<Context>());
  }
  IoPool(const IoPool&) = delete;
  IoPool& operator=(const IoPool&) = delete;
  ~IoPool() { stop(); }

  // Where listeners and other server-wide objects live.
  boost::asio::io_context& first() noexcept { return contexts_.front()->io; }
  // The context for the next connection, in turn. Any thread.
  boost::asio::io_context& next() noexcept {
    const std::size_t i = next_.fetch_add(1, std::memory_order_relaxed) % contexts_.size();
    return contexts_[i]->io;
  }

  // Whether this thread is running one of the contexts (an I/O thread). Any thread.
  bool runs_in_this_thread() const {
    return std::any_of(contexts_.begin(), contexts_.end(),
                       [](const auto& context) { return context->io.get_executor().running_in_this_thread(); });
  }

  // One thread per context.
  void start() {
    for (const auto& context : contexts_) {
      threads_.emplace_back([&io = context->io] { run(io); });
    }
  }

  // Stops every context and joins its thread (the server has closed its connections by then).
  // What became ready as the threads stopped then runs here: a socket accepted just then, or
  // the acceptor's close, would otherwise stay open until the server is destroyed. Handlers
  // still waiting on I/O are destroyed with the contexts.
  void stop() {
    for (const auto& context : contexts_) context->work.reset();
    for (const auto& context : contexts_) context->io.stop();
    for (std::thread& thread : threads_) thread.join();
    threads_.clear();
    for (const auto& context : contexts_) {
      context->io.restart();
      retry([&io = context->io] { io.poll(); });
    }
  }

 private:
  struct Context {
    boost::asio::io_context io{1};  // hint: run by one thread (others may still post to it)
    std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work{io.get_executor()};
  };

  static void run(boost::asio::io_context& io) {
    retry([&io] { io.run(); });
  }
  // Handlers do not throw but for lack of memory; the thread goes on serving.
  template <class Work>
  static void retry(Work work) {
    for (;;) {
      try {
        work();
        return;
      } catch (...) {
      }
    }
  }

  std::vector<std::unique_ptr<Context>> contexts_;
  std::vector<std::thread> threads_;
  std::atomic<std::size_t> next_{0};
};

}  // namespace rpc::net::detail
