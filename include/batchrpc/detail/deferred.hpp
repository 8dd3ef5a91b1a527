// SPDX-License-Identifier: MIT
// The slot a Responder fills when a handler answers after it has returned.
#pragma once

#include <atomic>
#include <exception>
#include <optional>
#include <stop_token>

#include "../buffer.hpp"
#include "../error.hpp"

namespace rpc::detail {

// Filled exactly once, from any thread: a result value (JSON text), an rpc::Error, or an
// unexpected exception. Whoever owns it is told through on_complete(), after which the
// completing thread does not touch it again.
class Deferred {
 public:
  Deferred() = default;
  Deferred(const Deferred&) = delete;
  Deferred& operator=(const Deferred&) = delete;

  // Called when the handler takes a Responder; false if one was already taken.
  bool take() { return !taken_.exchange(true); }
  [[nodiscard]] bool taken() const { return taken_.load(); }

  void reset(std::stop_token stop) {
    taken_ = false;
    abandoned_ = false;
    failure_reported = false;
    value.clear();
    error.reset();
    failure = nullptr;
    stop_ = std::move(stop);
  }

  // Marks the answer as given by a Responder that went unanswered (not by the handler).
  void abandon(std::exception_ptr why) {
    failure = std::move(why);
    abandoned_ = true;
  }
  [[nodiscard]] bool abandoned() const { return abandoned_.load(); }

  [[nodiscard]] const std::stop_token& stop_token() const { return stop_; }

  void complete() { on_complete(); }

  Buffer value;                // the result's JSON text, when it succeeded
  std::optional<Error> error;  // the handler's own error
  std::exception_ptr failure;  // anything else
  bool failure_reported = false;  // the exception hook has seen `failure` already

 protected:
  ~Deferred() = default;
  virtual void on_complete() = 0;

 private:
  std::atomic<bool> taken_{false};
  std::atomic<bool> abandoned_{false};
  std::stop_token stop_;
};

}  // namespace rpc::detail
