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
  BlockingDeferred() = default;
  BlockingDeferred(const BlockingDeferred&) = delete;
  BlockingDeferred& operator=(const BlockingDeferred&) = delete;
  // Virtual only so that a class with virtual functions has one: nothing deletes through a
  // base pointer (the object lives on its waiter's stack).
  virtual ~BlockingDeferred() = default;

  // Returns once the slot is answered.
  void wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    answered_.wait(lock, [this] { return done_; });
  }

 protected:
  void on_complete() override { wake(); }
  // The last thing a completion does: the waiter may destroy this object as soon as the lock is
  // released, so notify_all runs under it.
  void wake() {
    const std::lock_guard<std::mutex> lock(mutex_);
    done_ = true;
    answered_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable answered_;
  bool done_ = false;
};

}  // namespace rpc::detail
