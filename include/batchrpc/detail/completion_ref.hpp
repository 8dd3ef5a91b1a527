// SPDX-License-Identifier: MIT
// How the session calls a message's completion.
#pragma once

#include <memory>
#include <optional>
#include <string_view>
#include <type_traits>
#include <utility>

#include "../completion.hpp"
#include "../config.hpp"

namespace rpc::inline BATCHRPC_ABI::detail {

// Moves `done` out and leaves it empty. A moved-from std::function is not always empty: libc++
// copies a target small enough for the function's own buffer, so `done` would still hold (and
// keep alive) what the completion captured, such as the connection that owns the session.
inline Completion take_completion(Completion& done) noexcept {
  Completion out = std::move(done);
  done = nullptr;
  return out;
}

// Calls a message's completion once with its reply (nullopt: nothing to send), then destroys
// it, here: callers hold a HandlerScope, since a completion that owns its session would wait
// for itself. What it throws is swallowed: the transport's callback failing must not stop the
// session.
inline void complete(Completion&& done, std::optional<std::string_view> reply) noexcept {
  Completion call = take_completion(done);
  try {
    call(reply);
  } catch (...) {
  }
}

// A message's completion as Session::handle receives it: a reference to the caller's callable.
// A message answered on the calling thread (the session's fast path) calls it in place, so a
// lambda handed to `handle` is not made into a Completion (a std::function) at all; only a
// message whose reply comes later takes it, as a Completion. The callable lives in the caller's
// frame for the whole call of `handle`, which is as long as this reference is used.
class CompletionRef {
 public:
  // Refers to `done`: `take()` moves it out when it was passed as an rvalue, and copies it
  // otherwise.
  template <class Done>
  static CompletionRef to(Done&& done) noexcept {
    using F = std::remove_reference_t<Done>;
    // The caller's own Completion, handed over as an rvalue: taken, so that it is emptied.
    constexpr bool handed_over = std::is_same_v<F, Completion> && !std::is_lvalue_reference_v<Done>;
    CompletionRef ref;
    ref.target_ = const_cast<void*>(static_cast<const volatile void*>(std::addressof(done)));
    ref.call_ = [](void* target, std::optional<std::string_view> reply) noexcept {
      F& f = *static_cast<F*>(target);
      if constexpr (handed_over) {
        complete(take_completion(f), reply);  // destroyed here, as every Completion
      } else if constexpr (std::is_same_v<std::remove_cv_t<F>, Completion>) {
        complete(Completion(f), reply);  // the caller's own, which it keeps
      } else {
        if constexpr (std::is_pointer_v<std::remove_cv_t<F>>) {
          if (f == nullptr) return;  // as the empty Completion a null function makes
        }
        try {
          f(reply);
        } catch (...) {  // swallowed, as complete() does
        }
      }
    };
    ref.take_ = [](void* target) {
      if constexpr (handed_over) {
        return take_completion(*static_cast<F*>(target));
      } else {
        return Completion(std::forward<Done>(*static_cast<F*>(target)));
      }
    };
    return ref;
  }

  // Calls the completion once, on this thread, with the reply (nullopt: nothing to send).
  void call(std::optional<std::string_view> reply) const noexcept { call_(target_, reply); }
  // The completion, for a reply that comes later. Throws only what making a Completion of it
  // throws (no memory), and then nothing is taken.
  [[nodiscard]] Completion take() const { return take_(target_); }

 private:
  CompletionRef() = default;

  void* target_ = nullptr;
  void (*call_)(void*, std::optional<std::string_view>) noexcept = nullptr;
  Completion (*take_)(void*) = nullptr;
};

}  // namespace rpc::detail
