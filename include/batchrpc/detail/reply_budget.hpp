// SPDX-License-Identifier: MIT
// How much of a reply the members of one message may still write (Limits::max_response_bytes).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>

#include "../config.hpp"
#include "../limits.hpp"

namespace rpc::inline BATCHRPC_ABI::detail {

// The reply budget (Limits::max_response_bytes) while the members of one message write their
// responses, on any number of threads. A member may grow to what was left when it started plus a
// small allowance, and spends what it wrote when it is done: memory stays within a few budgets
// however many members write at once, and no write pays for an atomic operation. The reply
// itself is fitted to the budget exactly, in request order, when it is assembled.
class ReplyBudget {
 public:
  static constexpr std::size_t allowance = 4096;  // responses this small are not counted

  void reset(std::size_t bytes) noexcept { left_.store(bytes, std::memory_order_relaxed); }
  // How large a response starting now may grow.
  [[nodiscard]] std::size_t limit() const noexcept {
    const std::size_t left = left_.load(std::memory_order_relaxed);
    return left > Limits::unlimited - allowance ? Limits::unlimited : left + allowance;
  }
  void spend(std::size_t bytes) noexcept {
    if (bytes <= allowance) return;
    std::size_t left = left_.load(std::memory_order_relaxed);
    while (!left_.compare_exchange_weak(left, left - std::min(left, bytes), std::memory_order_relaxed)) {
    }
  }

 private:
  std::atomic<std::size_t> left_{0};
};

}  // namespace rpc::detail
