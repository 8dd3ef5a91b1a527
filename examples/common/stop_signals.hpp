// SPDX-License-Identifier: MIT
// SIGINT and SIGTERM, blocked in every thread and taken by one sigwait: how the example servers
// run until they are asked to stop, then shut down gracefully.
#pragma once

#include <signal.h>

namespace examples {

// Blocks SIGINT and SIGTERM in the calling thread; construct it before starting any thread, so
// that they all inherit the mask and only wait() takes the signals.
class StopSignals {
 public:
  StopSignals() {
    sigemptyset(&signals_);
    sigaddset(&signals_, SIGINT);
    sigaddset(&signals_, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &signals_, nullptr);
  }
  // Returns when one of them arrives.
  void wait() const {
    int signal = 0;
    sigwait(&signals_, &signal);
  }

 private:
  sigset_t signals_{};
};

}  // namespace examples
