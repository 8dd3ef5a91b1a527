// SPDX-License-Identifier: MIT
// Replies a stream connection holds back while its reading thread answers the messages of one
// read, so that they go out in one write (and wake the peer once) instead of one write each.
// Only cheap work may delay them: the handler-calling code releases the hold on this thread
// before it runs a handler that is not `inline_only`.
#pragma once

#include <utility>

#include "../config.hpp"

namespace rpc::inline BATCHRPC_ABI::detail {

// A connection that holds replies back.
class ReplyHold {
 public:
  // Writes what is held. Never throws: a failed write is the connection's to report.
  virtual void release() noexcept = 0;

 protected:
  ~ReplyHold() = default;
};

// The hold of the connection whose reading thread this is, while that thread answers one
// read's messages; null everywhere else.
inline thread_local ReplyHold* reply_hold = nullptr;

// Called before a handler that may take long runs on this thread: a reply held back must not
// wait behind it, so what is held is written, and this thread holds nothing more until its
// connection's next read.
inline void release_held_replies() noexcept {
  if (ReplyHold* hold = std::exchange(reply_hold, nullptr)) hold->release();
}

}  // namespace rpc::detail
