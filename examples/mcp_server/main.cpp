// SPDX-License-Identifier: MIT
// mcp_server: a Model Context Protocol server whose tools are the embed plugin's methods, the
// `batch` tool, `embed_chunked` (progress notifications, cancellable) and `list_roots` (a
// request from the server to its client), over stdio (one JSON message per line) or over MCP
// Streamable HTTP.
//
//   mcp_server [--threads N]                      MCP over stdin and stdout
//   mcp_server --http HOST:PORT [--threads N]     MCP Streamable HTTP on http://HOST:PORT/mcp
//
// Point an MCP client at the binary (the TypeScript SDK's StdioClientTransport, see
// tests/interop/mcp_sdk_client.js) or at the URL (StreamableHTTPClientTransport). Over stdio it
// exits with 0 when its input ends; over HTTP on SIGINT or SIGTERM, after a graceful shutdown.
#include <unistd.h>

#include <batchrpc/batchrpc.hpp>
#include <csignal>
#include <cstddef>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>

#include "embed/hashing_model.hpp"
#include "embed_tools.hpp"
#include "lifecycle.hpp"
#include "roots_tool.hpp"

#if defined(BATCHRPC_EXAMPLES_NET)
#include <batchrpc/net.hpp>

#include "../common/stop_signals.hpp"
#endif

namespace {

// The command line.
struct Config {
  std::size_t threads = 4;
  std::string host;  // empty: stdio
  int port = 0;
};

// Parses the command line; nullopt on a bad one.
std::optional<Config> parse(int argc, char** argv) {
  Config config;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string_view arg = argv[i];
      if (arg == "--threads" && i + 1 < argc) {
        config.threads = std::stoul(argv[++i]);
        if (config.threads == 0) return std::nullopt;
      } else if (arg == "--http" && i + 1 < argc) {
        const std::string where = argv[++i];
        const auto colon = where.rfind(':');
        if (colon == std::string::npos || colon == 0) return std::nullopt;
        config.host = where.substr(0, colon);
        if (config.host.front() == '[' && config.host.back() == ']') config.host = config.host.substr(1, config.host.size() - 2);
        config.port = std::stoi(where.substr(colon + 1));
      } else {
        return std::nullopt;
      }
    }
  } catch (const std::exception&) {
    return std::nullopt;
  }
  return config;
}

// MCP Streamable HTTP until SIGINT or SIGTERM. Each MCP session (one per `initialize`) is a
// client of its own, with its own Session; handlers run on `pool`.
int serve_http(const Config& config, const rpc::Router& router, rpc::ThreadPool& pool) {
#if defined(BATCHRPC_EXAMPLES_NET)
  const examples::StopSignals stop_signals;  // before the server's threads start
  rpc::net::Server server(router, {.capabilities = router.capabilities(), .executor = &pool});
  try {
    const int port = server.listen(config.host, config.port, rpc::net::Protocol::mcp);
    const bool v6 = config.host.find(':') != std::string::npos;
    std::cerr << "mcp_server: MCP Streamable HTTP on http://" << (v6 ? "[" : "") << config.host
              << (v6 ? "]" : "") << ":" << port << "/mcp" << std::endl;
    server.start();
  } catch (const std::exception& e) {
    std::cerr << "mcp_server: " << e.what() << "\n";
    return 1;
  }
  stop_signals.wait();
  server.shutdown();
  return 0;
#else
  (void)config, (void)router, (void)pool;
  std::cerr << "mcp_server: built without the network transports (install libboost1.81-dev and rebuild)\n";
  return 1;
#endif
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<Config> config = parse(argc, argv);
  if (!config) {
    std::cerr << "usage: mcp_server [--threads N]                    (MCP over stdin and stdout)\n"
                 "       mcp_server --http HOST:PORT [--threads N]   (MCP Streamable HTTP on /mcp)\n";
    return 2;
  }
  std::signal(SIGPIPE, SIG_IGN);  // a client that goes away is a failed write instead

  // The model outlives the router, the router the sessions.
  const embed::HashingModel model{{.dimensions = 384, .seed = 42}};
  mcp_example::Clients clients;
  rpc::Router router;
  // ping, and MCP's notifications/cancelled {requestId} for cancellation.
  rpc::add_builtins(router, {.server_name = "batchrpc-mcp", .mcp_cancel = true});
  mcp_example::add_lifecycle(router, clients);
  rpc::Tools tools{router};
  mcp_example::add_embed_tools(router, tools, model, clients);
  mcp_example::add_roots_tool(router, tools, clients);
  tools.add_batch_tool();

  // Tools run on the pool, so the reading thread keeps reading: a notifications/cancelled, or
  // the client's answer to roots/list, reaches a tool that is still running.
  rpc::ThreadPool pool{config->threads};
  if (!config->host.empty()) return serve_http(*config, router, pool);
  rpc::Session session{router, {.capabilities = router.capabilities(), .executor = &pool}};
  rpc::serve_stream(session, STDIN_FILENO, STDOUT_FILENO, {.framing = rpc::Framing::lines});
  return 0;
}
