// SPDX-License-Identifier: MIT
// What decides whether an executor task may still touch its session.
//
// An executor may run or destroy a task long after its work was answered (an event loop that
// turns later, a queue behind other work), possibly after the session has ended. The session
// does not wait for that: once every message is answered, no task has anything left to do, so
// the session shuts the gate and waits only for the tasks inside. A task enters before it
// touches its job and leaves when it is done with it; one that finds the gate shut does
// nothing. The gate is shared by the session and its tasks, so it outlives both.
//
// Entering and shutting are sequentially consistent: either the task sees the gate shut, or
// the session sees the task inside and waits for it (never neither).
#pragma once

#include <atomic>
#include <cstddef>

#include "../config.hpp"

namespace rpc::inline BATCHRPC_ABI::detail {

class TaskGate {
 public:
  // True when the task may go on (then call leave() when done); false once the gate is shut.
  [[nodiscard]] bool enter() noexcept {
    inside_.fetch_add(1);
    if (!shut_.load()) return true;
    leave();
    return false;
  }
  void leave() noexcept {
    if (inside_.fetch_sub(1) == 1) inside_.notify_all();
  }
  // No task enters from now on; returns once those inside have left.
  void shut() noexcept {
    shut_.store(true);
    for (std::size_t n = inside_.load(); n != 0; n = inside_.load()) inside_.wait(n);
  }

 private:
  std::atomic<std::size_t> inside_{0};
  std::atomic<bool> shut_{false};
};

}  // namespace rpc::detail
