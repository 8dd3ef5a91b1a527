// SPDX-License-Identifier: MIT
/// @file coalescing.hpp
/// `rpc::Coalescing`: batching one batch-aware method's calls across messages and sessions
/// (dynamic batching), turned on with `Router::coalesce`.
#pragma once

#include <cstddef>

#include "config.hpp"
#include "detail/chrono.hpp"

namespace rpc::inline BATCHRPC_ABI {

/**
 * Settings for dynamic batching: calls of one batch-aware method (`Router::add_batched`) that
 * arrive in different messages, from any session of the router, are answered by one call of
 * its batch handler.
 *
 * A call on a session without an executor that finds no group of its method running starts
 * a group at once, on the thread that handles its message, with the calls queued before it: a
 * lone client waits for nothing. Otherwise it is queued; the method's batcher threads run the
 * queued calls as one group as soon as no group runs, or, while fewer than
 * `max_concurrent_groups` run, once `max_group` of them are queued, the oldest has waited
 * `max_wait`, or none has joined for `max_quiet`. Waiting while a group runs is what lets the
 * next one grow. A group that starts while more could start beside it takes only its share of
 * the queue (half of it, with room for two), and the rest start at once as another group, so
 * that the calls keep every group the settings allow busy.
 */
struct Coalescing {
  /// How long queued calls may wait for a running group to end before their own group starts
  /// beside it (only when `max_concurrent_groups` allows one more).
  std::chrono::microseconds max_wait{1000};
  /// How long the queue may go without a new call before its group starts beside the running
  /// ones (again only when `max_concurrent_groups` allows one more): when the callers stop
  /// coming, waiting longer grows no group. At or above `max_wait`, only `max_wait` counts.
  std::chrono::microseconds max_quiet{100};
  /// The most calls in one group (at least 1).
  std::size_t max_group = 64;
  /// How many groups of the method may run at once, and so how many batcher threads it has (at
  /// least 1). 1 suits a handler that uses every core itself; the number of cores suits one
  /// that computes on one thread.
  std::size_t max_concurrent_groups = 1;
};

}  // namespace rpc
