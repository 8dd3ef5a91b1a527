// SPDX-License-Identifier: MIT
// Replies a stream connection holds back while its reading thread answers the messages of one
// read, so that they go out in one write (and wake the peer once) instead of one write each.
// Only cheap work may delay them: the handler-calling code releases the hold on this thread
// before it runs a handler that is not `inline_only`.
#pragma once

#include "../config.hpp"

namespace rpc::inline BATCHRPC_ABI::detail {

// A connection that holds replies back.
class ReplyHold {
 public:
  // Writes what is held, and holds nothing more until the reading thread's next read. False
  // once the peer is gone (then or before): nothing more should run for it. Never throws.
  virtual bool release() noexcept = 0;

 protected:
  ~ReplyHold() = default;
};

// The hold of the connection whose reading thread this is, while that thread answers one
// read's messages; null everywhere else.
inline thread_local ReplyHold* reply_hold = nullptr;

// Called before a handler that may take long runs on this thread: a reply held back must not
// wait behind it. False when what was held could not be written: the peer is gone, and the
// handler should not run.
inline bool release_held_replies() noexcept {
  ReplyHold* const hold = reply_hold;
  return hold == nullptr || hold->release();
}

}  // namespace rpc::detail
