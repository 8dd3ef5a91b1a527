// SPDX-License-Identifier: MIT
// The messages a WebSocket or stream connection read while at max_in_flight and holds back, in
// order, until replies go out. It reads on at the cap so that what carries no new work (the
// client's answers to the server's requests, cancellations) gets to the session at once: a
// handler in flight may be waiting for it.
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

  void push(std::string message) {
    bytes_ += cost(message);
    held_.push_back(std::move(message));
  }
  // The oldest. Not empty.
  std::string pop() {
    std::string message = std::move(held_.front());
    held_.pop_front();
    bytes_ -= cost(message);
    return message;
  }
  void clear() noexcept {
    held_.clear();
    bytes_ = 0;
  }

 private:
  // What a message costs held: its buffer (which may be larger than its text) and its entry.
  static std::size_t cost(const std::string& message) noexcept { return message.capacity() + sizeof(std::string); }

  std::deque<std::string> held_;
  std::size_t bytes_ = 0;
};

}  // namespace rpc::net::detail
