// SPDX-License-Identifier: MIT
// A handler's stand-in for long work: sleeps, but wakes as soon as the call is cancelled.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stop_token>

namespace spec {

/// Sleeps for `duration` unless `stop` is signalled first; true when it slept the whole time.
inline bool sleep_unless_cancelled(const std::stop_token& stop, std::chrono::milliseconds duration) {
  std::mutex m;
  std::condition_variable_any cv;
  std::unique_lock lock(m);
  cv.wait_for(lock, stop, duration, [] { return false; });
  return !stop.stop_requested();
}

}  // namespace spec
