// SPDX-License-Identifier: MIT
/// @file responder.hpp
/// `rpc::Responder`: answer a request after the handler has returned, from any thread.
#pragma once

#include <atomic>
#include <exception>
#include <memory>
#include <stdexcept>
#include <stop_token>

#include "detail/deferred.hpp"
#include "error.hpp"
#include "json_traits.hpp"
#include "result_writer.hpp"

namespace rpc {

/**
 * Lets a handler answer later: take `rpc::Responder` as a parameter, return at once, and call
 * `resolve`, `resolve_with` or `reject` once, from any thread. The reply to the message (a
 * whole batch included) waits for it. Copies share one answer, so a Responder can ride in a
 * `std::function`; when the last copy goes without an answer, the request is answered
 * `-32603`, so every request still gets exactly one reply.
 *
 * @code
 * router.add("slow_add", [&pool](int a, int b, rpc::Responder done) {
 *   pool.execute([a, b, done] { done.resolve(a + b); });
 * }, rpc::names("a", "b"));
 * @endcode
 *
 * Thread-safety: any copy may answer from any thread; the first answer wins and later ones
 * throw `std::logic_error`.
 */
class Responder {
 public:
  /// Used by batchrpc; handlers receive a Responder as a parameter.
  explicit Responder(detail::Deferred& slot) : state_(std::make_shared<State>(slot)) {}

  /// Answers with `value` as the result (any `JsonWritable` type).
  template <class T>
  void resolve(const T& value) const {
    resolve_with([&value](ResultWriter& out) { out.write(value); });
  }

  /// Answers with the value `write(out)` writes (exactly one value).
  template <class F>
  void resolve_with(F&& write) const {
    detail::Deferred& slot = claim();
    try {
      ResultWriter out(slot.value);
      write(out);
      if (out.empty()) out.null();
      if (!out.complete()) throw std::logic_error("batchrpc: the result was left incomplete");
    } catch (const Error& e) {
      slot.error.emplace(e);
    } catch (...) {
      slot.failure = std::current_exception();
    }
    slot.complete();
  }

  /// Answers with an error object.
  void reject(Error error) const {
    detail::Deferred& slot = claim();
    slot.error.emplace(std::move(error));
    slot.complete();
  }

  /// Signalled when the request is cancelled.
  [[nodiscard]] std::stop_token stop_token() const {
    return state_ != nullptr ? state_->slot.stop_token() : std::stop_token{};
  }
  /// True once the request has been cancelled.
  [[nodiscard]] bool stop_requested() const { return stop_token().stop_requested(); }
  /// False once answered (or moved from).
  [[nodiscard]] bool pending() const noexcept {
    return state_ != nullptr && !state_->answered.load();
  }

 private:
  struct State {
    explicit State(detail::Deferred& s) : slot(s) {}
    State(const State&) = delete;
    State& operator=(const State&) = delete;
    // The last copy gone without an answer: answer for it.
    ~State() {
      if (answered.exchange(true)) return;
      slot.abandon(std::make_exception_ptr(
          std::logic_error("batchrpc: a Responder was destroyed without answering")));
      slot.complete();
    }
    detail::Deferred& slot;
    std::atomic<bool> answered{false};
  };

  detail::Deferred& claim() const {
    if (state_ == nullptr || state_->answered.exchange(true)) {
      throw std::logic_error("batchrpc: this Responder has already answered");
    }
    return state_->slot;
  }

  std::shared_ptr<State> state_;
};

}  // namespace rpc
