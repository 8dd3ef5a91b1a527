// SPDX-License-Identifier: MIT
// Bodies of detail/param_errors.hpp.
#pragma once

#include "../detail/param_errors.hpp"

namespace rpc::inline BATCHRPC_ABI::detail {

BATCHRPC_DECL std::string_view reason_or_default(std::string_view why) noexcept {
  return why.empty() ? std::string_view("invalid value") : why;
}

BATCHRPC_DECL bool too_many_params(std::size_t expected, std::size_t got, ParamError& error) {
  error.reason = "too many params: expected at most " + std::to_string(expected) + ", got " +
                 std::to_string(got);
  return false;
}

BATCHRPC_DECL bool params_by_position_only(ParamError& error) {
  error.reason = "this method takes its params by position (an array)";
  return false;
}

BATCHRPC_DECL bool unknown_param(std::string_view name, ParamError& error) {
  error.name = std::string(name);
  error.reason = "unknown parameter";
  return false;
}

BATCHRPC_DECL bool duplicate_param(std::string_view name, std::size_t position, ParamError& error) {
  error.name = std::string(name);
  error.index = static_cast<std::ptrdiff_t>(position);
  error.reason = "duplicate parameter";
  return false;
}

BATCHRPC_DECL bool param_failed(std::span<const std::string> names, std::size_t position,
                                std::string_view reason, ParamError& error) {
  if (position < names.size()) error.name = names[position];
  error.index = static_cast<std::ptrdiff_t>(position);
  error.reason = reason_or_default(reason);
  return false;
}

BATCHRPC_DECL bool params_failed(std::string_view reason, ParamError& error) {
  error.reason = reason_or_default(reason);
  return false;
}

BATCHRPC_DECL bool param_missing(std::span<const std::string> names, std::size_t position,
                                 ParamError& error) {
  return param_failed(names, position, "missing required parameter", error);
}

}  // namespace rpc::detail
