// SPDX-License-Identifier: MIT
/// @file executor.hpp
/// `rpc::Executor`, where sessions run handlers, and `rpc::ThreadPool`, the one batchrpc ships.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <stop_token>
#include <thread>
#include <vector>

namespace rpc {

/**
 * Runs tasks on other threads. Give one to a `Session` and the members of a batch (and
 * concurrent messages) run in parallel; without one, everything runs inline on the thread
 * that handles the message. Implement it to use your server's own pool.
 */
class Executor {
 public:
  virtual ~Executor() = default;
  /// Runs `task` once, soon, on some thread. Must accept tasks from any thread.
  virtual void execute(std::function<void()> task) = 0;
};

/**
 * A fixed set of worker threads taking tasks in order from one queue.
 *
 * Destruction runs every task already queued, then joins the workers. Thread-safe.
 */
class ThreadPool final : public Executor {
 public:
  /// Starts `threads` workers (at least one).
  explicit ThreadPool(std::size_t threads) {
    if (threads == 0) threads = 1;
    workers_.reserve(threads);
    for (std::size_t i = 0; i < threads; ++i) {
      workers_.emplace_back([this](std::stop_token stop) { work(stop); });
    }
  }
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  ~ThreadPool() override {
    for (auto& worker : workers_) worker.request_stop();
    workers_.clear();  // joins, after the queue has drained
  }

  void execute(std::function<void()> task) override {
    {
      std::lock_guard lock(mutex_);
      queue_.push_back(std::move(task));
    }
    ready_.notify_one();
  }

  /// Number of worker threads.
  [[nodiscard]] std::size_t size() const noexcept { return workers_.size(); }

 private:
  void work(std::stop_token stop) {
    for (;;) {
      std::function<void()> task;
      {
        std::unique_lock lock(mutex_);
        ready_.wait(lock, stop, [this] { return !queue_.empty(); });
        if (queue_.empty()) return;  // stopping, and nothing left to run
        task = std::move(queue_.front());
        queue_.pop_front();
      }
      try {
        task();
      } catch (...) {  // a task's failure must not take a worker (and its queue) down
      }
    }
  }

  std::mutex mutex_;
  std::condition_variable_any ready_;
  std::deque<std::function<void()>> queue_;
  std::vector<std::jthread> workers_;  // last: stopped and joined before the queue goes
};

}  // namespace rpc
