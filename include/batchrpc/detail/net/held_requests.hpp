// SPDX-License-Identifier: MIT
// The messages a WebSocket or stream connection read while at max_in_flight and holds back, in
// order, until replies go out. It reads on at the cap so that what carries no new work (the
// client's answers to the server's requests, cancellations) gets to the session at once: a
// handler in flight may be waiting for it. A cancellation read meanwhile is also kept here as
// a replay, so that it reaches a request held before it (see Admission::hand_in_and_replay).
#pragma once

#include <cstddef>
#include <deque>
#include <string>
#include <utility>

#include "../../config.hpp"

namespace rpc::inline BATCHRPC_ABI::net::detail {

class HeldRequests {
 public:
  // Past this many bytes held, the connection is not read until replies go out (a pipelining
  // client meets backpressure, not a queue), unless a handler waits on the client: then it
  // reads on for the client's answers, holds what a client pipelined before the server's
  // request up to kMaxBytesWhileWaiting, and past that closes a client that sends more work.
  static constexpr std::size_t kMaxBytes = std::size_t{1} << 20;
  static constexpr std::size_t kMaxBytesWhileWaiting = std::size_t{4} << 20;

  [[nodiscard]] bool empty() const noexcept { return held_.empty(); }
  [[nodiscard]] bool has_room(bool waits_on_client) const noexcept {
    return bytes_ < (waits_on_client ? kMaxBytesWhileWaiting : kMaxBytes);
  }

  struct Held {
    std::string text;
    // A cancellation's second hand-in: it goes in right after what was held before it, past
    // the cap (it runs nothing), and its reply is not sent (the first hand-in's was).
    bool replay = false;
  };

  void push(std::string message) { append({std::move(message), false}); }
  void push_replay(std::string message) { append({std::move(message), true}); }
  // Whether the oldest goes in now, with `unwritten` replies not written against the cap: a
  // replay always does (it runs nothing, and what it may name went in just before it).
  [[nodiscard]] bool next_goes_in(std::size_t unwritten, std::size_t cap) const noexcept {
    return !held_.empty() && (held_.front().replay || unwritten < cap);
  }
  // The oldest. Not empty.
  Held pop() {
    Held message = std::move(held_.front());
    held_.pop_front();
    bytes_ -= cost(message.text);
    return message;
  }
  void clear() noexcept {
    held_.clear();
    bytes_ = 0;
  }

 private:
  void append(Held message) {
    bytes_ += cost(message.text);
    held_.push_back(std::move(message));
  }
  // What a message costs held: its buffer (which may be larger than its text) and its entry.
  static std::size_t cost(const std::string& message) noexcept { return message.capacity() + sizeof(Held); }

  std::deque<Held> held_;
  std::size_t bytes_ = 0;
};

}  // namespace rpc::net::detail
