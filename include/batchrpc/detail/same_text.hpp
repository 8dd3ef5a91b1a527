// SPDX-License-Identifier: MIT
// Equality of short texts (method and parameter names) without a call into libc.
#pragma once

#include <cstddef>
#include <string_view>

#include "../config.hpp"

namespace rpc::inline BATCHRPC_ABI::detail {

// Sizes first, then byte by byte: names are a few bytes long, where memcmp's call and
// dispatch cost more than the compare itself (it was 3% of a batch of pings).
inline bool same_text(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

// Members of named params that belong to the protocol, not to the method: MCP's `_meta`, and
// LSP's `workDoneToken` and `partialResultToken` (read through rpc::Progress or
// Context::params()). Typed binding skips them unless the method names them itself.
inline bool is_protocol_metadata(std::string_view name) noexcept {
  return same_text(name, "_meta") || same_text(name, "workDoneToken") || same_text(name, "partialResultToken");
}

}  // namespace rpc::detail
