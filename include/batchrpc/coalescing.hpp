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
 * A call on a session without an executor that finds fewer than `max_concurrent_groups` groups
 * of its method running starts a group at once, on the thread that handles its message, with
 * the calls queued before it: a lone client waits for nothing. Otherwise it is queued, and the
 * queued calls run as one group on the method's batcher thread as soon as fewer than
 * `max_concurrent_groups` groups run, once `max_group` of them are queued, or once the oldest
 * has waited `max_wait`, whichever comes first (in the last two cases beside the running ones).
 * The batcher thread runs one group at a time.
 */
struct Coalescing {
  /// The longest a queued call waits behind running groups before its own group starts beside
  /// them (if the batcher thread is itself running a group, calls wait for it to end).
  std::chrono::microseconds max_wait{1000};
  /// The most calls in one group (at least 1).
  std::size_t max_group = 64;
  /// How many groups of the method may run at once before calls queue (at least 1). 1 suits a
  /// handler that uses every core itself; the number of cores suits a single-threaded one.
  std::size_t max_concurrent_groups = 1;
};

}  // namespace rpc
