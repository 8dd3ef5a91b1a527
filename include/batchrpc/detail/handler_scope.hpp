// SPDX-License-Identifier: MIT
// Which session's handler or completion runs on this thread, recorded in debug builds for the
// checks that stop a call which would wait for itself: a session destroyed from its own handler,
// a server shut down from one of its handlers.
#pragma once

#include "../config.hpp"
#include "../executor.hpp"
#include "checks.hpp"

namespace rpc::inline BATCHRPC_ABI::detail {

class SessionCore;

// The session whose handler or completion is running on this thread, if any (debug builds).
inline thread_local const SessionCore* running_handler_of = nullptr;

// Records `core` as running_handler_of for the scope's lifetime (nothing when checks are off).
class HandlerScope {
 public:
#if BATCHRPC_CHECKS_ENABLED
  explicit HandlerScope(const SessionCore& core) noexcept : saved_(running_handler_of) { running_handler_of = &core; }
  ~HandlerScope() { running_handler_of = saved_; }
  HandlerScope(const HandlerScope&) = delete;
  HandlerScope& operator=(const HandlerScope&) = delete;

 private:
  const SessionCore* saved_;
#else
  explicit HandlerScope(const SessionCore&) noexcept {}
#endif
};

// The executor of the session whose handler or completion is running on this thread: nullptr
// when none is (or checks are off) or that session has no executor. Defined in impl/session.ipp.
BATCHRPC_DECL const Executor* running_handler_executor() noexcept;

}  // namespace rpc::detail
