// SPDX-License-Identifier: MIT
/// @file limits.hpp
/// `rpc::Limits`: the bounds a router enforces on every message.
#pragma once

#include <cstddef>

#include "config.hpp"

namespace rpc::inline BATCHRPC_ABI {

/**
 * Bounds enforced on every message, each answered with a clear error instead of unbounded work.
 *
 * | limit                | default  | when exceeded                                            |
 * |----------------------|----------|----------------------------------------------------------|
 * | `max_batch`          | 1000     | whole batch rejected: one `-32602`, `data: {"max": N}`   |
 * | `max_message_bytes`  | 16 MiB   | one `-32090 Message too large`, nothing parsed           |
 * | `max_depth`          | 128      | one `-32091 Nesting too deep`, parsing stops there       |
 * | `max_response_bytes` | 64 MiB   | each response that would not fit: `-32092` in its place  |
 * | `max_parse_ratio`    | 8        | one `-32090 Message too large`, `data.reason`, `budget`  |
 * | `max_inflight_bytes` | 512 MiB  | sessions: `-32093 Server overloaded`, not parsed         |
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
  /// Most bytes one reply may have; responses that would go past it are replaced by `-32092`.
  /// A result stops being written (and takes no more memory) as soon as it passes this. The
  /// `-32092` errors themselves, and a reply that answers the message as a whole (`-32700`,
  /// `-32600`, ...), are written whole: a limit smaller than they are is passed by them.
  std::size_t max_response_bytes = std::size_t{64} << 20;
  /// Most memory the parsed form of a message may take, as a multiple of the message's size
  /// (never less than `min_parse_budget`): RapidJSON's values are 16 bytes each, so a message
  /// of one-digit numbers (`[0,0,0,...]`) would take 16 times its size, and empty arrays or
  /// short object members 10 times. Parsing stops as soon as the budget is passed.
  std::size_t max_parse_ratio = 8;
  /// Most bytes the messages that a router's sessions are handling at once may hold together;
  /// each counts `max_parse_ratio + 2` times its size (itself, a copy, its parsed form) from
  /// the moment it is handed in until its reply is sent. A message that does not fit is
  /// answered `-32093 Server overloaded` without being parsed. `Router::handle` (the trusted
  /// in-process path) is not counted, nor is a message a session answers whole on the calling
  /// thread (its fast path: no executor, handlers that take neither a Context nor a Responder;
  /// see `Session::handle`): it is checked against the limit, but like `Router::handle` it
  /// holds memory only while `handle` runs, so the calling threads bound it.
  std::size_t max_inflight_bytes = std::size_t{512} << 20;

  /// The parse budget of a small message (see `max_parse_ratio`).
  static constexpr std::size_t min_parse_budget = std::size_t{64} << 10;

  /// The parse budget of a message of `size` bytes.
  [[nodiscard]] constexpr std::size_t parse_budget(std::size_t size) const noexcept {
    if (max_parse_ratio == unlimited || (size != 0 && max_parse_ratio > unlimited / size)) return unlimited;
    const std::size_t budget = max_parse_ratio * size;
    return budget < min_parse_budget ? min_parse_budget : budget;
  }
};

}  // namespace rpc
