// SPDX-License-Identifier: MIT
/// @file names.hpp
/// `rpc::names(...)`: the JSON names of a typed handler's parameters.
#pragma once

#include <array>
#include <concepts>
#include <cstddef>
#include <string_view>
#include <type_traits>

#include "config.hpp"

namespace rpc::inline BATCHRPC_ABI {

/// The names of a handler's bound parameters, in C++ parameter order. Make one with `rpc::names`.
template <std::size_t N>
struct Names {
  /// One name per bound parameter.
  std::array<std::string_view, N> list;
};

/**
 * Names a typed handler's parameters so `params` may also be passed by name (JSON-RPC 2.0 §4.2).
 * One name per bound parameter (`rpc::Context&` and `rpc::ResultWriter&` are not bound).
 *
 * @code
 * router.add("subtract", [](int minuend, int subtrahend) { return minuend - subtrahend; },
 *            rpc::names("minuend", "subtrahend"));
 * @endcode
 */
template <class... S>
  requires(std::convertible_to<const S&, std::string_view> && ...)
constexpr Names<sizeof...(S)> names(const S&... name) {
  return Names<sizeof...(S)>{{std::string_view(name)...}};
}

namespace detail {
template <class T>
inline constexpr bool is_names_v = false;
template <std::size_t N>
inline constexpr bool is_names_v<Names<N>> = true;
template <class T>
  requires(!std::same_as<T, std::remove_cvref_t<T>>)
inline constexpr bool is_names_v<T> = is_names_v<std::remove_cvref_t<T>>;
}  // namespace detail

}  // namespace rpc
