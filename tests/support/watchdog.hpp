// SPDX-License-Identifier: MIT
// A hang must fail a test, not stall the suite: runs a body on a thread of its own and ends the
// process with a message when it has not returned in time.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <utility>

namespace watchdog {

/// Runs `body` and waits for it for at most `limit`; a body still running then is a deadlock
/// or a lost completion, and the process exits with status 3 after saying which (`what`).
template <class F>
void must_finish(const char* what, F&& body, std::chrono::milliseconds limit = std::chrono::seconds(20)) {
  struct Flag {
    std::mutex mutex;
    std::condition_variable cv;
    bool done = false;
  } flag;
  std::thread runner([&flag, &body] {
    std::forward<F>(body)();
    std::lock_guard lock(flag.mutex);
    flag.done = true;
    flag.cv.notify_all();
  });
  std::unique_lock lock(flag.mutex);
  if (!flag.cv.wait_for(lock, limit, [&flag] { return flag.done; })) {
    std::fprintf(stderr, "watchdog: '%s' did not finish within %lld ms (deadlock?)\n", what,
                 static_cast<long long>(limit.count()));
    std::fflush(stderr);
    std::_Exit(3);
  }
  lock.unlock();
  runner.join();
}

}  // namespace watchdog
