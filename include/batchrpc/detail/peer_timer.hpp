// SPDX-License-Identifier: MIT
// Answers the server's requests to its clients that wait past their timeout. One thread for
// the process, started with the first request that has a timeout and stopped at exit. It
// holds channels weakly, and an entry whose request was answered first is removed then, so
// what it holds is bounded by the requests waiting.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <stop_token>
#include <thread>
#include <utility>
#include <vector>

#include "../config.hpp"
#include "chrono.hpp"

namespace rpc::inline BATCHRPC_ABI::detail {

class PeerChannel;

class PeerTimer {
 public:
  using Clock = std::chrono::steady_clock;

  // The process's timer; its thread starts now if it has not yet.
  BATCHRPC_DECL static PeerTimer& instance();

  // Request `n` of `channel` expires at `when` unless removed first.
  void add(Clock::time_point when, const std::shared_ptr<PeerChannel>& channel, std::uint64_t n) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      due_.emplace(when, Entry{channel, channel.get(), n});
    }
    wake_.notify_one();
  }

  // Request `n` of `channel`, due at `when`, was answered first.
  void remove(Clock::time_point when, const PeerChannel* channel, std::uint64_t n) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto [first, last] = due_.equal_range(when);
    for (auto it = first; it != last; ++it) {
      if (it->second.key == channel && it->second.n == n) {
        due_.erase(it);
        return;
      }
    }
  }

 private:
  struct Entry {
    std::weak_ptr<PeerChannel> channel;
    const PeerChannel* key;  // for remove(), without locking the weak pointer
    std::uint64_t n;
  };

  PeerTimer() : thread_([this](std::stop_token stop) { run(stop); }) {}

  // Waits for the earliest entry; expires what is due outside the lock (it runs reply handlers).
  BATCHRPC_DECL void run(std::stop_token stop);

  std::mutex mutex_;
  std::condition_variable_any wake_;
  std::multimap<Clock::time_point, Entry> due_;
  std::jthread thread_;  // last: started once the rest exists, stopped and joined first
};

}  // namespace rpc::detail
