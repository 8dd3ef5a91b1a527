// SPDX-License-Identifier: MIT
// Cheap checks, in debug builds, of the rules a user can break that the types cannot enforce
// (which thread may call what, what must outlive what): a broken rule stops the program with a
// message that names it, instead of a hang or corrupted memory later. Define BATCHRPC_CHECKS to
// keep them in a release build, BATCHRPC_NO_CHECKS to drop them from a debug one.
#pragma once

#include <cstdio>
#include <cstdlib>

#include "../config.hpp"

#if (defined(NDEBUG) && !defined(BATCHRPC_CHECKS)) || defined(BATCHRPC_NO_CHECKS)
#define BATCHRPC_CHECKS_ENABLED 0
#define BATCHRPC_CHECK(condition, message) static_cast<void>(0)
#else
#define BATCHRPC_CHECKS_ENABLED 1
#define BATCHRPC_CHECK(condition, message) \
  ((condition) ? static_cast<void>(0) : ::rpc::detail::check_failed(message, __FILE__, __LINE__))
#endif

namespace rpc::inline BATCHRPC_ABI::detail {

[[noreturn]] inline void check_failed(const char* message, const char* file, int line) noexcept {
  std::fprintf(stderr, "batchrpc: usage error: %s (%s:%d)\n", message, file, line);
  std::fflush(stderr);
  std::abort();
}

}  // namespace rpc::detail
