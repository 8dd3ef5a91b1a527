// SPDX-License-Identifier: MIT
// The one translation unit that compiles the network transports' bodies (link.net_src_header).
#include <batchrpc/net_src.hpp>
