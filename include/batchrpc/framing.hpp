// SPDX-License-Identifier: MIT
/// @file framing.hpp
/// `rpc::Framing`: how messages are delimited on a byte stream.
#pragma once

#include "config.hpp"

namespace rpc::inline BATCHRPC_ABI {

/// How messages are delimited on a stream.
enum class Framing {
  /// One message per line (ended by a line feed; a carriage return before it is dropped);
  /// blank lines (spaces, tabs and carriage returns only) are skipped, unless longer than the
  /// message limit.
  lines,
  /// `Content-Length: N` header, a blank line, then N bytes, as language servers use.
  content_length,
};

}  // namespace rpc
