// SPDX-License-Identifier: MIT
/// @file executor.hpp
/// `rpc::Executor`, where sessions run handlers, and `rpc::ThreadPool`, the one batchrpc ships.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>

#include "config.hpp"
#include "detail/chrono.hpp"

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
  BATCHRPC_DECL Executor();
  // A copy is another executor, with a lifetime of its own.
  BATCHRPC_DECL Executor(const Executor&);
  Executor& operator=(const Executor&) { return *this; }
  BATCHRPC_DECL virtual ~Executor();

  /// Runs `task` once, soon, on some thread. Must accept tasks from any thread. Called by
  /// sessions with no library lock held.
  virtual void execute(std::function<void()> task) = 0;

 private:
  friend struct detail::ExecutorAccess;
  // Cleared when the executor is destroyed; sessions keep a reference to it.
  std::shared_ptr<std::atomic<bool>> alive_;
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
  BATCHRPC_DECL explicit ThreadPool(std::size_t threads,
                                    std::chrono::microseconds linger = std::chrono::microseconds(50));
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;
  BATCHRPC_DECL ~ThreadPool() override;

  BATCHRPC_DECL void execute(std::function<void()> task) override;

  /// Number of worker threads.
  [[nodiscard]] BATCHRPC_DECL std::size_t size() const noexcept;

 private:
  // The queue and the threads, in impl/executor.ipp: so that this header needs no <thread>.
  struct Workers;
  std::unique_ptr<Workers> workers_;
};

}  // namespace rpc

#if defined(BATCHRPC_HEADER_ONLY)
#include "impl/executor.ipp"
#endif
