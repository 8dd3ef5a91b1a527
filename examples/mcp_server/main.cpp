// SPDX-License-Identifier: MIT
// mcp_server: a Model Context Protocol server over stdio (one JSON message per line) whose tools
// are the embed plugin's methods, the `batch` tool, `embed_chunked` (progress notifications,
// cancellable) and `list_roots` (a request from the server to its client).
//
//   mcp_server [--threads N]
//
// Point an MCP client at the binary (for example the TypeScript SDK's StdioClientTransport, see
// tests/interop/mcp_sdk_client.js). It exits with 0 when its input ends.
#include <unistd.h>

#include <batchrpc/batchrpc.hpp>
#include <csignal>
#include <cstddef>
#include <iostream>
#include <string>
#include <string_view>

#include "embed/hashing_model.hpp"
#include "embed_tools.hpp"
#include "lifecycle.hpp"
#include "roots_tool.hpp"

namespace {

// Parses the command line into the number of worker threads; 0 on a bad command line.
std::size_t parse_threads(int argc, char** argv) {
  std::size_t threads = 4;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--threads" && i + 1 < argc) {
      try {
        threads = std::stoul(argv[++i]);
      } catch (const std::exception&) {
        return 0;
      }
    } else {
      return 0;
    }
  }
  return threads;
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t threads = parse_threads(argc, argv);
  if (threads == 0) {
    std::cerr << "usage: mcp_server [--threads N]   (MCP over stdin and stdout)\n";
    return 2;
  }
  std::signal(SIGPIPE, SIG_IGN);  // a client that goes away is a failed write instead

  // The model outlives the router, the router the session.
  const embed::HashingModel model{{.dimensions = 384, .seed = 42}};
  mcp_example::ClientState client;
  rpc::Router router;
  // ping, and MCP's notifications/cancelled {requestId} for cancellation.
  rpc::add_builtins(router, {.server_name = "batchrpc-mcp", .mcp_cancel = true});
  mcp_example::add_lifecycle(router, client);
  rpc::Tools tools{router};
  mcp_example::add_embed_tools(router, tools, model, client);
  mcp_example::add_roots_tool(router, tools, client);
  tools.add_batch_tool();

  // Tools run on the pool, so the reading thread keeps reading: a notifications/cancelled, or
  // the client's answer to roots/list, reaches a tool that is still running.
  rpc::ThreadPool pool{threads};
  rpc::Session session{router, {.capabilities = router.capabilities(), .executor = &pool}};
  rpc::serve_stream(session, STDIN_FILENO, STDOUT_FILENO, {.framing = rpc::Framing::lines});
  return 0;
}
