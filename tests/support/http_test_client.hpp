// SPDX-License-Identifier: MIT
// cpp-httplib, the HTTP client of the end-to-end and stress tests (a client we did not write).
// Its build in Debian writes with no MSG_NOSIGNAL, so a server closing a keep-alive connection
// under a request being sent (as a server shutting down does) raises SIGPIPE in the client and
// would end the test program. A program using this client must ignore SIGPIPE; the tests that
// include this header do, from before main().
#pragma once

#include <csignal>

#include <httplib.h>

namespace test_support {
inline const bool sigpipe_ignored = [] {
  std::signal(SIGPIPE, SIG_IGN);
  return true;
}();
}  // namespace test_support
