// SPDX-License-Identifier: MIT
// The compiled variant's library where there are no POSIX file descriptors (see
// without_fd_streams.cpp) builds.
#define BATCHRPC_SEPARATE_COMPILATION
#define BATCHRPC_HAS_FD_STREAMS 0
#include "../../src/batchrpc.cpp"

