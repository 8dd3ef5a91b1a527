// SPDX-License-Identifier: MIT
/// @file limits.hpp
/// `rpc::Limits`: the bounds a router enforces on every message.
#pragma once

#include <cstddef>

namespace rpc {

/**
 * Bounds enforced on every message, each answered with a clear error instead of unbounded work.
 *
 * | limit                | default  | when exceeded                                            |
 * |----------------------|----------|----------------------------------------------------------|
 * | `max_batch`          | 1000     | whole batch rejected: one `-32602`, `data: {"max": N}`   |
 * | `max_message_bytes`  | 16 MiB   | one `-32001 Message too large`, nothing parsed           |
 * | `max_depth`          | 128      | one `-32002 Nesting too deep`, parsing stops there       |
 * | `max_response_bytes` | 64 MiB   | each response that would not fit: `-32003` in its place  |
 *
 * Use `Limits::unlimited` to switch one off.
 */
struct Limits {
  /// Use as a value to switch a limit off.
  static constexpr std::size_t unlimited = static_cast<std::size_t>(-1);

  /// Most members one batch may hold.
  std::size_t max_batch = 1000;
  /// Most bytes one message may have.
  std::size_t max_message_bytes = std::size_t{16} << 20;
  /// Deepest nesting of arrays and objects (the top-level batch array counts as one level).
  std::size_t max_depth = 128;
  /// Most bytes one reply may have; responses that would go past it are replaced by `-32003`.
  std::size_t max_response_bytes = std::size_t{64} << 20;
};

}  // namespace rpc
