// SPDX-License-Identifier: MIT
// The slot a Responder fills when a handler answers after it has returned, and the state the
// Responder's copies share.
#pragma once

#include <atomic>
#include <cstddef>
#include <exception>
#include <memory>
#include <optional>
#include <stdexcept>
#include <stop_token>

#include "../buffer.hpp"
#include "../config.hpp"
#include "../error.hpp"
#include "../limits.hpp"

namespace rpc::inline BATCHRPC_ABI::detail {

class ResponderState;

// Filled exactly once, from any thread: a result value (JSON text), an rpc::Error, or an
// unexpected exception. Whoever owns it is told through complete(), which calls the function
// its derived type gave, after which the completing thread does not touch it again. A slot is
// reused from request to request.
//
// Its owner is told through function pointers rather than virtual functions, for the reason
// detail::Handler gives: the router's path completes slots, and a virtual on_complete made
// every file that calls the router compile sessions' and tools' completions too.
class Deferred {
 public:
  using CompleteFn = void (*)(Deferred&);
  using AttachFn = void (*)(Deferred&, const std::shared_ptr<ResponderState>&);

  Deferred(const Deferred&) = delete;
  Deferred& operator=(const Deferred&) = delete;

  // Called when the handler takes a Responder; false if one was already taken.
  bool take() { return !taken_.exchange(true); }
  [[nodiscard]] bool taken() const { return taken_.load(); }

  // `value_limit`: how large the result a Responder writes into `value` may grow.
  // Relaxed: the slot is reset before its call starts, and any other thread reaches it only
  // after that, through a lock or a queue, which orders these stores before it.
  void reset(std::stop_token stop, std::size_t value_limit = Limits::unlimited) {
    taken_.store(false, std::memory_order_relaxed);
    abandoned_.store(false, std::memory_order_relaxed);
    failure_reported = false;
    too_large = false;
    value.clear();
    error.reset();
    failure = nullptr;
    stop_ = std::move(stop);
    value_limit_ = value_limit;
  }

  // Marks the answer as given by a Responder that went unanswered (not by the handler).
  void abandon(std::exception_ptr why) {
    failure = std::move(why);
    abandoned_ = true;
  }
  [[nodiscard]] bool abandoned() const { return abandoned_.load(); }

  [[nodiscard]] const std::stop_token& stop_token() const { return stop_; }
  [[nodiscard]] std::size_t value_limit() const { return value_limit_; }

  // A Responder now answers for this slot. Sessions keep track of it, so that a session that
  // ends can answer for the requests still waiting on one.
  void attach(const std::shared_ptr<ResponderState>& state) {
    if (attach_ != nullptr) attach_(*this, state);
  }

  // Tells the owner the slot is answered; the completing thread does not touch it again.
  void complete() { complete_(*this); }

  // While a session keeps track of the Responder answering for this slot (so that it can answer
  // for it if the session ends first): the slot's place in the session's list of slots waiting
  // on one. Guarded by the session's mutex.
  static constexpr std::size_t not_awaiting = static_cast<std::size_t>(-1);
  std::size_t awaiting = not_awaiting;

  Buffer value;                // the result's JSON text, when it succeeded
  std::optional<Error> error;  // the handler's own error
  std::exception_ptr failure;  // anything else
  bool failure_reported = false;  // the exception hook has seen `failure` already
  bool too_large = false;         // the result outgrew value_limit(): answered -32092

 protected:
  // `on_complete`: called once the slot is answered; `on_attach`: when a Responder takes it
  // (null: nobody keeps track).
  explicit Deferred(CompleteFn on_complete, AttachFn on_attach = nullptr) noexcept
      : complete_(on_complete), attach_(on_attach) {}
  ~Deferred() = default;

 private:
  CompleteFn complete_;
  AttachFn attach_;
  std::atomic<bool> taken_{false};
  std::atomic<bool> abandoned_{false};
  std::stop_token stop_;
  std::size_t value_limit_ = Limits::unlimited;
};

// What every copy of one Responder shares. It owns what a copy reads (its request's stop token,
// whether it was answered) and reaches the slot only to answer: the slot lives until it has
// been answered, and is reused for another request afterwards.
//
// Exactly one party answers, whoever moves `status_` from `waiting` first: a copy of the
// Responder (`answered`), the last copy going away unanswered (`answered`, with -32603), or the
// request's session ending (`withdrawn`, the session answers -32800).
class ResponderState {
 public:
  enum Status : int { waiting, answered, withdrawn };

  explicit ResponderState(Deferred& slot) : slot_(&slot), stop_(slot.stop_token()) {}
  ResponderState(const ResponderState&) = delete;
  ResponderState& operator=(const ResponderState&) = delete;

  // The last copy is gone: answer for it if nobody has.
  ~ResponderState() {
    if (!move_from_waiting(answered)) return;
    slot_->abandon(std::make_exception_ptr(
        std::logic_error("batchrpc: a Responder was destroyed without answering")));
    slot_->complete();
  }

  // The slot, when this caller is the one to answer; nullptr when the session answered already.
  // @throws std::logic_error when a Responder answered already (a second answer is a bug).
  Deferred* claim() {
    if (move_from_waiting(answered)) return slot_;
    if (status_.load(std::memory_order_acquire) == withdrawn) return nullptr;
    throw std::logic_error("batchrpc: this Responder has already answered");
  }
  // The session's claim when it ends: true when the Responder had not answered yet.
  bool withdraw() { return move_from_waiting(withdrawn); }
  [[nodiscard]] Deferred& slot() const { return *slot_; }

  [[nodiscard]] const std::stop_token& stop_token() const noexcept { return stop_; }
  [[nodiscard]] bool pending() const noexcept { return status_.load(std::memory_order_acquire) == waiting; }

 private:
  bool move_from_waiting(Status to) {
    int expected = waiting;
    return status_.compare_exchange_strong(expected, to, std::memory_order_acq_rel);
  }

  Deferred* slot_;  // valid while `status_` is waiting, and for its claimant until it completes
  std::stop_token stop_;
  std::atomic<int> status_{waiting};
};

}  // namespace rpc::detail
