// SPDX-License-Identifier: MIT
// Whether a stream type is a TLS stream (asio::ssl::stream), for the code that must treat the
// bytes such a stream holds inside itself differently from a plain socket's.
#pragma once

#include <type_traits>

#if defined(BATCHRPC_NET_TLS)
#include <boost/asio/ssl/stream.hpp>
#endif

#include "../../config.hpp"

namespace rpc::inline BATCHRPC_ABI::net::detail {

template <class Stream>
struct is_tls : std::false_type {};
#if defined(BATCHRPC_NET_TLS)
template <class Next>
struct is_tls<boost::asio::ssl::stream<Next>> : std::true_type {};
#endif

}  // namespace rpc::net::detail
