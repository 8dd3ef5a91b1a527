// SPDX-License-Identifier: MIT
// Non-template bodies of executor.hpp: the executor's liveness flag, and rpc::ThreadPool's
// workers (one queue under one mutex, and threads that linger before they sleep).
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <stop_token>
#include <thread>
#include <utility>
#include <vector>

#include "../config.hpp"
#include "../detail/checks.hpp"
#include "../detail/chrono.hpp"
#include "../executor.hpp"

namespace rpc::inline BATCHRPC_ABI {

BATCHRPC_DECL Executor::Executor() : alive_(std::make_shared<std::atomic<bool>>(true)) {}
BATCHRPC_DECL Executor::Executor(const Executor&) : alive_(std::make_shared<std::atomic<bool>>(true)) {}
BATCHRPC_DECL Executor::~Executor() { alive_->store(false, std::memory_order_release); }

struct ThreadPool::Workers {
  explicit Workers(std::chrono::microseconds linger_for) : linger(linger_for) {}

  // The workers whose task is running on this thread (for the check in ~ThreadPool).
  static const Workers*& current() noexcept {
    thread_local const Workers* workers = nullptr;
    return workers;
  }

  void start(std::size_t count) {
    threads.reserve(count);
    for (std::size_t i = 0; i < count; ++i) {
      threads.emplace_back([this](std::stop_token stop) { work(stop); });
    }
  }

  // Lets the workers run every task already queued, joins them, then destroys the tasks that
  // came too late, outside the lock.
  void stop() {
    for (auto& thread : threads) thread.request_stop();
    threads.clear();  // joins, after the queue has drained
    std::deque<std::function<void()>> late;
    {
      std::lock_guard<std::mutex> lock(mutex);
      late.swap(queue);
    }
    late.clear();
  }

  void execute(std::function<void()> task) {
    bool wake = false;
    {
      std::lock_guard<std::mutex> lock(mutex);
      queue.push_back(std::move(task));
      queued.store(queue.size(), std::memory_order_relaxed);
      wake = queue.size() > lingering.load(std::memory_order_relaxed);
    }
    // Waking a sleeper is a system call, and the sleeper then competes for a core with the
    // lingerer that takes the task anyway. Not waking one loses no task: see look_for_task().
    if (wake) ready.notify_one();
  }

  // Looks for a task for up to `linger` before the worker sleeps (see the constructor).
  //
  // While it looks, it counts in `lingering`, and execute() wakes no sleeper for a task it
  // will find. No task is left behind: the worker leaves the count before it takes the lock to
  // check the queue. If it takes the lock after the execute() that counted it, it finds the
  // task there; if before, its leaving happened before that execute() read the count (through
  // the lock), so execute() saw it gone and woke a sleeper, or the task went to a worker that
  // looked after it. Relaxed is enough: the mutex orders what matters.
  void look_for_task(const std::stop_token& stop) {
    if (linger.count() <= 0) return;
    const auto until = std::chrono::steady_clock::now() + linger;
    lingering.fetch_add(1, std::memory_order_relaxed);
    while (queued.load(std::memory_order_relaxed) == 0 && !stop.stop_requested() &&
           std::chrono::steady_clock::now() < until) {
      std::this_thread::yield();
    }
    lingering.fetch_sub(1, std::memory_order_relaxed);
  }

  void work(std::stop_token stop) {
    current() = this;
    for (;;) {
      std::function<void()> task;
      look_for_task(stop);
      {
        std::unique_lock<std::mutex> lock(mutex);
        ready.wait(lock, stop, [this] { return !queue.empty(); });
        if (queue.empty()) return;  // stopping, and nothing left to run
        task = std::move(queue.front());
        queue.pop_front();
        queued.store(queue.size(), std::memory_order_relaxed);
      }
      try {
        task();
      } catch (...) {  // a task's failure must not take a worker (and its queue) down
      }
    }
  }

  std::mutex mutex;
  std::condition_variable_any ready;
  std::deque<std::function<void()>> queue;
  std::atomic<std::size_t> queued{0};  // queue.size(), for look_for_task() to read without the lock
  std::atomic<std::size_t> lingering{0};  // workers in look_for_task()
  const std::chrono::microseconds linger;
  std::vector<std::jthread> threads;  // last: stopped and joined before the queue goes
};

BATCHRPC_DECL ThreadPool::ThreadPool(std::size_t threads, std::chrono::microseconds linger)
    : workers_(std::make_unique<Workers>(std::clamp(
          linger, std::chrono::microseconds(0), std::chrono::microseconds(std::chrono::seconds(1))))) {
  workers_->start(std::max<std::size_t>(threads, 1));
}

BATCHRPC_DECL ThreadPool::~ThreadPool() {
  BATCHRPC_CHECK(Workers::current() != workers_.get(),
                 "a ThreadPool was destroyed from one of its own tasks: it would join itself");
  workers_->stop();
}

BATCHRPC_DECL void ThreadPool::execute(std::function<void()> task) { workers_->execute(std::move(task)); }

BATCHRPC_DECL std::size_t ThreadPool::size() const noexcept { return workers_->threads.size(); }

}  // namespace rpc
