// SPDX-License-Identifier: MIT
/// @file names.hpp
/// `rpc::names(...)`: the JSON names of a typed handler's parameters.
#pragma once

#include <array>
#include <concepts>
#include <cstddef>
#include <string_view>

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

}  // namespace rpc
