// SPDX-License-Identifier: MIT
// A Deferred that its caller waits on: for the paths that answer in one call (the router's own
// handle, a tool run inside tools/call) when the handler answers through a Responder.
#pragma once

#include <condition_variable>
#include <mutex>

#include "../config.hpp"
#include "deferred.hpp"

namespace rpc::inline BATCHRPC_ABI::detail {

class BlockingDeferred : public Deferred {
 public:
  BlockingDeferred() noexcept : Deferred(&woken) {}
  BlockingDeferred(const BlockingDeferred&) = delete;
  BlockingDeferred& operator=(const BlockingDeferred&) = delete;

  // Returns once the slot is answered.
  void wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    answered_.wait(lock, [this] { return done_; });
  }

 protected:
  // For a derived class that is told of completion itself (and then calls wake()).
  BlockingDeferred(CompleteFn on_complete, AttachFn on_attach) noexcept
      : Deferred(on_complete, on_attach) {}

  // The last thing a completion does: the waiter may destroy this object as soon as the lock is
  // released, so notify_all runs under it.
  void wake() {
    const std::lock_guard<std::mutex> lock(mutex_);
    done_ = true;
    answered_.notify_all();
  }

 private:
  static void woken(Deferred& slot) { static_cast<BlockingDeferred&>(slot).wake(); }

  std::mutex mutex_;
  std::condition_variable answered_;
  bool done_ = false;
};

}  // namespace rpc::detail
