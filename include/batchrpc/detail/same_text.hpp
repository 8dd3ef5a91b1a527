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

}  // namespace rpc::detail
