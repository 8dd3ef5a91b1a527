// SPDX-License-Identifier: MIT
/// @file responder.hpp
/// `rpc::Responder`: answer a request after the handler has returned, from any thread.
#pragma once

#include <exception>
#include <memory>
#include <stdexcept>
#include <stop_token>

#include "config.hpp"
#include "detail/deferred.hpp"
#include "error.hpp"
#include "json_traits.hpp"
#include "result_writer.hpp"

namespace rpc::inline BATCHRPC_ABI {

namespace detail {
struct ResponderAccess;
}

/**
 * Lets a handler answer later: take `rpc::Responder` as a parameter, return at once, and call
 * `resolve`, `resolve_with` or `reject` once, from any thread. The reply to the message (a
 * whole batch included) waits for it. Copies share one answer, so a Responder can ride in a
 * `std::function`; when the last copy goes without an answer, the request is answered
 * `-32603`, so every request still gets exactly one reply. A handler that throws after taking
 * its Responder is answered by its exception (as any handler is) only when no copy outlives
 * the call; once a copy is kept, that copy answers and the exception is not sent.
 *
 * @code
 * router.add("slow_add", [&pool](int a, int b, rpc::Responder done) {
 *   pool.execute([a, b, done] { done.resolve(a + b); });
 * }, rpc::names("a", "b"));
 * @endcode
 *
 * Thread-safety: any copy may answer from any thread; the first answer wins and a second one
 * throws `std::logic_error` (a registry that may race a stop callback answering should catch
 * it, or answer only from one place: `pending()` false does not say who answered).
 *
 * Lifetime: a Responder owns everything it reads, so a copy may be kept (in a registry of
 * pending work, say) for as long as you like, even after its request was answered and its
 * session destroyed. A session that ends while a request still waits for its Responder answers
 * that request `-32800` itself; the Responder then refuses its answer quietly (`resolve` and
 * `reject` return false, `pending` is false). Answering never runs under a library lock, so it
 * may be called from a stop callback (`std::stop_callback` on `stop_token()`).
 */
class Responder {
 public:
  /// Answers with `value` as the result (any `JsonWritable` type).
  /// @returns true when this is the answer sent; false when the request was answered already
  ///          by its session ending. @throws std::logic_error when a copy answered already.
  template <class T>
  bool resolve(const T& value) const {
    return resolve_with([&value](ResultWriter& out) { out.write(value); });
  }

  /// Answers with the value `write(out)` writes (exactly one value). A result larger than the
  /// reply budget answers `-32092`. @returns as `resolve`.
  template <class F>
  bool resolve_with(F&& write) const {
    detail::Deferred* slot = claim();
    if (slot == nullptr) return false;
    ResultWriter out(slot->value);
    detail::WriterAccess::reset(out, slot->value, slot->value_limit());
    try {
      write(out);
      if (out.empty()) out.null();
      if (!out.complete()) throw std::logic_error("batchrpc: the result was left incomplete");
    } catch (const detail::ResponseTooLarge&) {  // flagged below, whoever caught it first
    } catch (const Error& e) {
      slot->error.emplace(e);
    } catch (...) {
      slot->failure = std::current_exception();
    }
    slot->too_large = detail::WriterAccess::too_large(out);
    slot->complete();
    return true;
  }

  /// Answers with an error object. @returns as `resolve`.
  bool reject(Error error) const {
    detail::Deferred* slot = claim();
    if (slot == nullptr) return false;
    slot->error.emplace(std::move(error));
    slot->complete();
    return true;
  }

  /// Signalled when the request is cancelled (also when its session ends).
  [[nodiscard]] std::stop_token stop_token() const {
    return state_ != nullptr ? state_->stop_token() : std::stop_token{};
  }
  /// True once the request has been cancelled.
  [[nodiscard]] bool stop_requested() const { return stop_token().stop_requested(); }
  /// False once answered (by a copy, or by the session ending) or moved from.
  [[nodiscard]] bool pending() const noexcept { return state_ != nullptr && state_->pending(); }

 private:
  friend struct detail::ResponderAccess;
  explicit Responder(detail::Deferred& slot) : state_(std::make_shared<detail::ResponderState>(slot)) {
    slot.attach(state_);
  }

  detail::Deferred* claim() const {
    if (state_ == nullptr) throw std::logic_error("batchrpc: this Responder was moved from");
    return state_->claim();
  }

  std::shared_ptr<detail::ResponderState> state_;
};

namespace detail {
// How batchrpc makes the Responder a handler receives.
struct ResponderAccess {
  static Responder make(Deferred& slot) { return Responder(slot); }
};
}  // namespace detail

}  // namespace rpc
