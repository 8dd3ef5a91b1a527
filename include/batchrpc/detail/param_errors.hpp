// SPDX-License-Identifier: MIT
// The errors of binding a handler's params, built out of the handler template: each registered
// handler then compiles only its own types' reads, not one copy of every message.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "../config.hpp"

namespace rpc::inline BATCHRPC_ABI::detail {

/// Why params did not bind: which parameter (by name, else by index) and why.
struct ParamError {
  std::string name;        // empty when the parameter has no name
  std::ptrdiff_t index = -1;  // -1 when no single parameter is at fault
  std::string reason;
};

// `why`, or "invalid value" when a read failed without saying why (a JsonTraits of the user's
// may): a client is always told something.
BATCHRPC_DECL std::string_view reason_or_default(std::string_view why) noexcept;

// Each sets `error` and returns false.
BATCHRPC_DECL bool too_many_params(std::size_t expected, std::size_t got, ParamError& error);
BATCHRPC_DECL bool params_by_position_only(ParamError& error);
BATCHRPC_DECL bool unknown_param(std::string_view name, ParamError& error);
BATCHRPC_DECL bool duplicate_param(std::string_view name, std::size_t position, ParamError& error);
// Bound parameter `position` (named when `names` has names) failed to read, for `reason`.
BATCHRPC_DECL bool param_failed(std::span<const std::string> names, std::size_t position,
                                std::string_view reason, ParamError& error);
// The params as a whole failed to read, for `reason` (no single parameter is at fault).
BATCHRPC_DECL bool params_failed(std::string_view reason, ParamError& error);
// param_failed with "missing required parameter".
BATCHRPC_DECL bool param_missing(std::span<const std::string> names, std::size_t position,
                                 ParamError& error);

}  // namespace rpc::detail

#if defined(BATCHRPC_HEADER_ONLY)
#include "../impl/param_errors.ipp"
#endif
