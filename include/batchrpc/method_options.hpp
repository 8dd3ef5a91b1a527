// SPDX-License-Identifier: MIT
/// @file method_options.hpp
/// `rpc::MethodOptions`: how a registered method is gated and scheduled.
#pragma once

#include <string>

#include "config.hpp"

namespace rpc::inline BATCHRPC_ABI {

/// Per-method settings given to `Router::add`.
struct MethodOptions {
  /// The capability a session must be granted to call this method (empty: none). Without it
  /// the call is `-32601 Method not found` with `data: {"capability": ...}`.
  std::string capability{};
  /// Cheap: always run on the thread that handles the message, even when the session has an
  /// executor (a hand-off would cost more than the call).
  bool inline_only = false;
};

}  // namespace rpc
