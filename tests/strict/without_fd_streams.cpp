// SPDX-License-Identifier: MIT
// The core as it builds where there are no POSIX file descriptors (BATCHRPC_HAS_FD_STREAMS 0,
// as on Windows): the std::istream overload of serve_stream is there and the file-descriptor
// overload is not. That no POSIX header is included then is posix_headers.cmake's check (here
// libstdc++ includes <unistd.h> itself). Compiled by the dev build only.
#define BATCHRPC_HAS_FD_STREAMS 0
#include <batchrpc/batchrpc.hpp>

#include <sstream>

template <class S>
concept serves_file_descriptors = requires(S& session) { rpc::serve_stream(session, 0, 1); };
static_assert(!serves_file_descriptors<rpc::Session>);


void serve_a_string_stream(rpc::Session& session) {
  std::istringstream in(R"({"jsonrpc":"2.0","method":"ping","id":1})" "\n");
  std::ostringstream out;
  rpc::serve_stream(session, in, out);
}
