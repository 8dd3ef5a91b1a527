// SPDX-License-Identifier: MIT
// Signature deduction for handlers: lambdas, function objects and function pointers.
#pragma once

#include <tuple>
#include <type_traits>

#include "../config.hpp"

namespace rpc::inline BATCHRPC_ABI::detail {

template <class Sig>
struct signature;

template <class R, class... A>
struct signature<R(A...)> {
  using result = R;
  using args = std::tuple<A...>;
  static constexpr bool is_const = true;
};
template <class R, class... A>
struct signature<R(A...) noexcept> : signature<R(A...)> {};
template <class R, class C, class... A>
struct signature<R (C::*)(A...) const> : signature<R(A...)> {};
template <class R, class C, class... A>
struct signature<R (C::*)(A...) const noexcept> : signature<R(A...)> {};
template <class R, class C, class... A>
struct signature<R (C::*)(A...) const&> : signature<R(A...)> {};
template <class R, class C, class... A>
struct signature<R (C::*)(A...) const & noexcept> : signature<R(A...)> {};
// Non-const call operators (mutable lambdas) are deduced so add() can refuse them by name.
template <class R, class C, class... A>
struct signature<R (C::*)(A...)> : signature<R(A...)> {
  static constexpr bool is_const = false;
};
template <class R, class C, class... A>
struct signature<R (C::*)(A...) noexcept> : signature<R (C::*)(A...)> {};
template <class R, class C, class... A>
struct signature<R (C::*)(A...) &> : signature<R (C::*)(A...)> {};
template <class R, class C, class... A>
struct signature<R (C::*)(A...) & noexcept> : signature<R (C::*)(A...)> {};

// Empty unless F has exactly one, non-template call signature.
template <class F>
struct callable_signature {};
template <class F>
  requires std::is_function_v<std::remove_pointer_t<F>>
struct callable_signature<F> : signature<std::remove_pointer_t<F>> {};
template <class F>
  requires requires { &F::operator(); }
struct callable_signature<F> : signature<decltype(&F::operator())> {};

template <class F>
concept has_signature = requires { typename callable_signature<std::remove_cvref_t<F>>::result; };

}  // namespace rpc::detail
