// SPDX-License-Identifier: MIT
// How much an HTTP connection reads at first over TLS, where it cannot wait on the socket for
// the next request (it may be inside the TLS layer already). Its own header, so that the test
// of that case builds its request to this size.
#pragma once

#include <cstddef>

#include "../../config.hpp"

namespace rpc::inline BATCHRPC_ABI::net::detail {

inline constexpr std::size_t kTlsFirstRead = 512;

}  // namespace rpc::net::detail
