// SPDX-License-Identifier: MIT
/// @file executor.hpp
/// `rpc::Executor`, where sessions run handlers, and `rpc::ThreadPool`, the one batchrpc ships.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <stop_token>
#include <thread>
#include <vector>

#include "config.hpp"
#include "detail/checks.hpp"

namespace rpc::inline BATCHRPC_ABI {

namespace detail {
struct ExecutorAccess;
}

/**
 * Runs tasks on other threads. Give one to a `Session` and the members of a batch (and
 * concurrent messages) run in parallel; without one, everything runs inline on the thread
 * that handles the message. Implement it to use your server's own pool.
 *
 * What `execute` may do with a task, and what a session makes of it:
 * - run it once, on any thread, soon (or inline, inside `execute`): the normal case;
 * - throw (a bounded queue that is full): the task is not run, and the requests it carried are
 *   answered `-32093 Server overloaded` (`data.reason` "the executor refused the task"); the
 *   exception goes to `RouterOptions::on_exception`;
 * - destroy it without running it (a pool shut down with tasks queued): those requests are
 *   answered `-32093` ("the executor dropped the task") when the last copy goes.
 * A batch's members are handed over as a few tasks that share them out; the members a
 * refused or dropped task would have taken are left to the batch's other tasks, and answered
 * so only when none of those runs. A caller of the waiting `Session::handle` takes one of
 * those turns itself (see there).
 * A copy of a task that runs after another copy ran does nothing.
 *
 * Lifetime: an executor must outlive the sessions that use it. Where that is broken in the
 * simplest way (the executor destroyed, then a message handed to its session), the session
 * notices and answers `-32093` ("the executor is gone") instead of using it; destroying an
 * executor while a session hands it a task is still undefined behaviour.
 */
class Executor {
 public:
  Executor() = default;
  // A copy is another executor, with a lifetime of its own.
  Executor(const Executor&) : alive_(std::make_shared<std::atomic<bool>>(true)) {}
  Executor& operator=(const Executor&) { return *this; }
  virtual ~Executor() { alive_->store(false, std::memory_order_release); }

  /// Runs `task` once, soon, on some thread. Must accept tasks from any thread. Called by
  /// sessions with no library lock held.
  virtual void execute(std::function<void()> task) = 0;

 private:
  friend struct detail::ExecutorAccess;
  // Cleared when the executor is destroyed; sessions keep a reference to it.
  std::shared_ptr<std::atomic<bool>> alive_ = std::make_shared<std::atomic<bool>>(true);
};

namespace detail {
struct ExecutorAccess {
  static std::shared_ptr<const std::atomic<bool>> alive(const Executor& e) { return e.alive_; }
};
}  // namespace detail

/**
 * A fixed set of worker threads taking tasks in order from one queue.
 *
 * Thread-safety: `execute` may be called from any thread, tasks included. Lifetime: the
 * destructor runs every task already queued (tasks may still queue more while it drains), then
 * joins the workers; tasks that come after the last worker has stopped are destroyed unrun. It
 * must not be called from one of the pool's own tasks. No task runs under the pool's lock.
 */
class ThreadPool final : public Executor {
 public:
  /// Starts `threads` workers (at least one). A worker that runs out of tasks keeps looking
  /// for more for `linger` (yielding, so it takes no time from threads that have work) before
  /// it sleeps: a session's next tasks usually come within microseconds, and a sleep and a
  /// wake-up cost more. A task that a lingering worker will find wakes no sleeping one (only
  /// tasks beyond the number of lingering workers do). An idle pool then spends up to `linger`
  /// of CPU per worker after its last task; zero (or less) turns it off, and more than a second
  /// counts as a second.
  explicit ThreadPool(std::size_t threads, std::chrono::microseconds linger = std::chrono::microseconds(50))
      : linger_(std::clamp(linger, std::chrono::microseconds(0), std::chrono::microseconds(std::chrono::seconds(1)))) {
    if (threads == 0) threads = 1;
    workers_.reserve(threads);
    for (std::size_t i = 0; i < threads; ++i) {
      workers_.emplace_back([this](std::stop_token stop) { work(stop); });
    }
  }
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  ~ThreadPool() override {
    BATCHRPC_CHECK(current_pool() != this,
                   "a ThreadPool was destroyed from one of its own tasks: it would join itself");
    for (auto& worker : workers_) worker.request_stop();
    workers_.clear();  // joins, after the queue has drained
    std::deque<std::function<void()>> late;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      late.swap(queue_);
    }
    late.clear();  // unrun: their destructors run here, outside the lock
  }

  void execute(std::function<void()> task) override {
    bool wake = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      queue_.push_back(std::move(task));
      queued_.store(queue_.size(), std::memory_order_relaxed);
      wake = queue_.size() > lingering_.load(std::memory_order_relaxed);
    }
    // Waking a sleeper is a system call, and the sleeper then competes for a core with the
    // lingerer that takes the task anyway. Not waking one loses no task: see linger().
    if (wake) ready_.notify_one();
  }

  /// Number of worker threads.
  [[nodiscard]] std::size_t size() const noexcept { return workers_.size(); }

 private:
  // The pool whose task is running on this thread (for the check in the destructor).
  static const ThreadPool*& current_pool() noexcept {
    thread_local const ThreadPool* pool = nullptr;
    return pool;
  }

  // Looks for a task for up to linger_ before the worker sleeps (see the constructor).
  //
  // While it looks, it counts in lingering_, and execute() wakes no sleeper for a task it will
  // find. No task is left behind: the worker leaves the count before it takes the lock to check
  // the queue. If it takes the lock after the execute() that counted it, it finds the task
  // there; if before, its leaving happened before that execute() read the count (through the
  // lock), so execute() saw it gone and woke a sleeper, or the task went to a worker that
  // looked after it. Relaxed is enough: the mutex orders what matters.
  void linger(const std::stop_token& stop) {
    if (linger_.count() <= 0) return;
    const auto until = std::chrono::steady_clock::now() + linger_;
    lingering_.fetch_add(1, std::memory_order_relaxed);
    while (queued_.load(std::memory_order_relaxed) == 0 && !stop.stop_requested() &&
           std::chrono::steady_clock::now() < until) {
      std::this_thread::yield();
    }
    lingering_.fetch_sub(1, std::memory_order_relaxed);
  }

  void work(std::stop_token stop) {
    current_pool() = this;
    for (;;) {
      std::function<void()> task;
      linger(stop);
      {
        std::unique_lock<std::mutex> lock(mutex_);
        ready_.wait(lock, stop, [this] { return !queue_.empty(); });
        if (queue_.empty()) return;  // stopping, and nothing left to run
        task = std::move(queue_.front());
        queue_.pop_front();
        queued_.store(queue_.size(), std::memory_order_relaxed);
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
  std::atomic<std::size_t> queued_{0};  // queue_.size(), for linger() to read without the lock
  std::atomic<std::size_t> lingering_{0};  // workers in linger(), looking for a task
  std::chrono::microseconds linger_;
  std::vector<std::jthread> workers_;  // last: stopped and joined before the queue goes
};

}  // namespace rpc
