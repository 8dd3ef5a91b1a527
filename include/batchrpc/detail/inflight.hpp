// SPDX-License-Identifier: MIT
// The bytes the messages that a router's sessions are handling at once hold together
// (Limits::max_inflight_bytes).
#pragma once

#include <atomic>
#include <cstddef>

#include "../config.hpp"
#include "../limits.hpp"

namespace rpc::inline BATCHRPC_ABI::detail {

class InflightBytes {
 public:
  // What a message of `size` bytes counts while it is handled: itself, the session's copy of
  // it, and its parse budget.
  static std::size_t cost(const Limits& limits, std::size_t size) noexcept {
    const std::size_t ratio = limits.max_parse_ratio == Limits::unlimited ? 0 : limits.max_parse_ratio;
    return size > Limits::unlimited / (ratio + 2) ? Limits::unlimited : size * (ratio + 2);
  }

  // Takes `bytes` if they fit under `max`; a message is always admitted when nothing else is
  // in progress, so that no message is refused for ever.
  bool reserve(std::size_t bytes, std::size_t max) noexcept {
    std::size_t used = used_.load(std::memory_order_relaxed);
    do {
      if (!room(used, bytes, max)) return false;
    } while (!used_.compare_exchange_weak(used, used + bytes, std::memory_order_relaxed));
    return true;
  }
  // Whether `bytes` would be taken now (as reserve(), without taking them).
  [[nodiscard]] bool fits(std::size_t bytes, std::size_t max) const noexcept {
    return room(used_.load(std::memory_order_relaxed), bytes, max);
  }
  void release(std::size_t bytes) noexcept { used_.fetch_sub(bytes, std::memory_order_relaxed); }
  [[nodiscard]] std::size_t used() const noexcept { return used_.load(std::memory_order_relaxed); }

 private:
  static bool room(std::size_t used, std::size_t bytes, std::size_t max) noexcept {
    return used == 0 || (bytes <= max && used <= max - bytes);
  }

  std::atomic<std::size_t> used_{0};
};

// What a router shares with its sessions at run time, kept apart from the router itself so
// that routers stay movable.
struct RouterRuntime {
  InflightBytes inflight;
  // Set once a message has been handled (checked in debug builds: registering a method after
  // that races with the threads handling messages).
  std::atomic<bool> serving{false};

  void mark_serving() noexcept {
    if (!serving.load(std::memory_order_relaxed)) serving.store(true, std::memory_order_relaxed);
  }
};

}  // namespace rpc::detail
