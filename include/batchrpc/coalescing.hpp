// SPDX-License-Identifier: MIT
/// @file coalescing.hpp
/// `rpc::Coalescing`: batching one batch-aware method's calls across messages and sessions
/// (dynamic batching), turned on with `Router::coalesce`.
#pragma once

#include <chrono>
#include <cstddef>

#include "config.hpp"

namespace rpc::inline BATCHRPC_ABI {

/**
 * Settings for dynamic batching: calls of one batch-aware method (`Router::add_batched`) that
 * arrive in different messages, from any session of the router, are answered by one call of
 * its batch handler.
 *
 * A call starts at once, on the thread that handles its message, when no group of its method
 * is running and the session has no executor: a lone client waits for nothing. Otherwise it is
 * queued, and the queued calls run as one group on the method's batcher thread as soon as no
 * group of the method is running, once `max_group` of them are queued, or once the oldest has
 * waited `max_wait`, whichever comes first. At most two groups of a method run at once: one
 * started by an arriving call, one on the batcher thread.
 */
struct Coalescing {
  /// The longest a queued call waits behind a running group before its own group starts beside
  /// it (if the batcher thread is itself running a group, calls wait for it to end).
  std::chrono::microseconds max_wait{1000};
  /// The most calls in one group (at least 1).
  std::size_t max_group = 64;
};

}  // namespace rpc
