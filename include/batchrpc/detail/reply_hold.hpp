// SPDX-License-Identifier: MIT
// Replies a stream connection holds back while its reading thread answers the messages of one
// read, so that they go out in one write (and wake the peer once) instead of one write each.
// Only cheap work may delay them: the handler-calling code releases the hold on this thread
// before it runs a handler that is not `inline_only`.
#pragma once

#include "../config.hpp"

namespace rpc::inline BATCHRPC_ABI::detail {

// A connection that holds replies back. Its release is a function pointer, not a virtual
// function, for the reason detail::Handler gives: every handler call may release a hold, and a
// virtual one would make every file that calls handlers compile the stream connection too.
class ReplyHold {
 public:
  // Writes what is held, and holds nothing more until the reading thread's next read. False
  // once the peer is gone (then or before): nothing more should run for it. Never throws.
  bool release() noexcept { return release_(*this); }

 protected:
  using ReleaseFn = bool (*)(ReplyHold&) noexcept;
  explicit ReplyHold(ReleaseFn release_fn) noexcept : release_(release_fn) {}
  ~ReplyHold() = default;
  ReplyHold(const ReplyHold&) = delete;
  ReplyHold& operator=(const ReplyHold&) = delete;

 private:
  ReleaseFn release_;
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
