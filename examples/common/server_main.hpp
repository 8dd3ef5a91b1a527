// SPDX-License-Identifier: MIT
// The command line shared by the example servers: one binary serves stdio, or the network
// (HTTP with WebSocket, TCP or a Unix socket) on rpc::net.
#pragma once

#include <csignal>
#include <cstdlib>
#include <functional>
#include <optional>
#include <iostream>
#include <sstream>
#include <string>
#include <string_view>
#include <unistd.h>
#include <vector>

#include <batchrpc/batchrpc.hpp>
#include <batchrpc/stream.hpp>
#if defined(BATCHRPC_EXAMPLES_NET)
#include <sys/resource.h>

#include <batchrpc/net.hpp>

#include "stop_signals.hpp"
#if defined(BATCHRPC_EXAMPLES_TLS)
#include <boost/asio/ssl/context.hpp>
#endif
#endif

namespace examples {

// Where to serve.
enum class Serve { none, stdio, http, ws, tcp, unix_socket };

struct ServerConfig {
  Serve serve = Serve::none;
  std::string unix_path;
  rpc::Framing framing = rpc::Framing::lines;
  std::string host = "127.0.0.1";
  int port = 8080;
  bool capabilities_given = false;
  std::vector<std::string> capabilities;
  std::size_t max_batch = rpc::Limits{}.max_batch;
  std::size_t threads = 4;
  std::size_t io_threads = 0;  // one per hardware thread
  std::size_t max_connections = 10'000;
  std::string session_prefix;
  std::string tls_cert;  // PEM files: with both, the network listener speaks TLS
  std::string tls_key;
};

inline std::vector<std::string> split_commas(std::string_view list) {
  std::vector<std::string> items;
  std::stringstream in{std::string(list)};
  for (std::string item; std::getline(in, item, ',');) {
    if (!item.empty()) items.push_back(item);
  }
  return items;
}

inline int usage(std::string_view program, std::string_view problem) {
  if (!problem.empty()) std::cerr << program << ": " << problem << "\n";
  std::cerr << "usage: " << program
            << " (--stdio | --http | --ws | --tcp | --unix PATH)\n"
               "       [--framing lines|content-length] [--host H] [--port N] [--capabilities a,b,...]\n"
               "       [--max-batch N] [--threads N] [--io-threads N] [--max-connections N]\n"
               "       [--session-prefix P] [--tls-cert FILE --tls-key FILE]\n"
               "  --stdio         standard input and output, framed by --framing (default lines)\n"
               "  --http, --ws    HTTP POST and WebSocket on one port (rpc::net)\n"
               "  --tcp           a TCP stream framed by --framing (rpc::net)\n"
               "  --unix PATH     a Unix-domain socket framed by --framing (rpc::net)\n"
               "  --capabilities  grant only these capabilities to every session (default: all)\n"
               "  --session-prefix  start HTTP session ids with P (a load balancer routes on it)\n"
               "  --tls-cert, --tls-key  TLS on the network listener (PEM certificate chain and key)\n";
  return 2;
}

// Parses the command line; returns an exit code when the program should stop now.
inline std::optional<int> parse(int argc, char** argv, ServerConfig& config) {
  const std::string_view program = argv[0];
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    auto value = [&]() -> std::optional<std::string_view> {
      if (i + 1 >= argc) return std::nullopt;
      return std::string_view(argv[++i]);
    };
    auto number = [&](std::size_t& out) {
      const auto v = value();
      if (!v) return false;
      try {
        std::size_t used = 0;
        out = std::stoul(std::string(*v), &used);
        return used == v->size();
      } catch (...) {
        return false;
      }
    };
    const auto choose = [&](Serve serve) {
      if (config.serve != Serve::none) return false;
      config.serve = serve;
      return true;
    };
    if (arg == "--stdio" || arg == "--http" || arg == "--ws" || arg == "--tcp") {
      const Serve serve = arg == "--stdio" ? Serve::stdio
                          : arg == "--http" ? Serve::http
                          : arg == "--ws"   ? Serve::ws
                                            : Serve::tcp;
      if (!choose(serve)) return usage(program, "give exactly one of --stdio, --http, --ws, --tcp, --unix");
    } else if (arg == "--unix") {
      const auto v = value();
      if (!v || v->empty()) return usage(program, "--unix needs a path");
      if (!choose(Serve::unix_socket)) return usage(program, "give exactly one of --stdio, --http, --ws, --tcp, --unix");
      config.unix_path = std::string(*v);
    } else if (arg == "--framing") {
      const auto v = value();
      if (v == "lines") {
        config.framing = rpc::Framing::lines;
      } else if (v == "content-length") {
        config.framing = rpc::Framing::content_length;
      } else {
        return usage(program, "--framing takes lines or content-length");
      }
    } else if (arg == "--host") {
      const auto v = value();
      if (!v) return usage(program, "--host needs an address");
      config.host = std::string(*v);
    } else if (arg == "--port") {
      std::size_t port = 0;
      if (!number(port) || port > 65535) return usage(program, "--port takes 0..65535");
      config.port = static_cast<int>(port);
    } else if (arg == "--capabilities") {
      const auto v = value();
      if (!v) return usage(program, "--capabilities needs a list");
      config.capabilities_given = true;
      config.capabilities = split_commas(*v);
    } else if (arg == "--max-batch") {
      if (!number(config.max_batch) || config.max_batch == 0) return usage(program, "--max-batch takes a positive number");
    } else if (arg == "--threads") {
      if (!number(config.threads) || config.threads == 0) return usage(program, "--threads takes a positive number");
    } else if (arg == "--session-prefix") {
      const auto v = value();
      if (!v) return usage(program, "--session-prefix needs a value");
      config.session_prefix = std::string(*v);
    } else if (arg == "--tls-cert" || arg == "--tls-key") {
      const auto v = value();
      if (!v || v->empty()) return usage(program, std::string(arg) + " needs a file");
      (arg == "--tls-cert" ? config.tls_cert : config.tls_key) = std::string(*v);
    } else if (arg == "--io-threads") {
      if (!number(config.io_threads) || config.io_threads == 0) return usage(program, "--io-threads takes a positive number");
    } else if (arg == "--max-connections") {
      if (!number(config.max_connections) || config.max_connections == 0) {
        return usage(program, "--max-connections takes a positive number");
      }
    } else if (arg == "--help" || arg == "-h") {
      usage(program, "");
      return 0;
    } else {
      return usage(program, "unknown option " + std::string(arg));
    }
  }
  if (config.serve == Serve::none) return usage(program, "give one of --stdio, --http, --ws, --tcp, --unix");
  if (config.tls_cert.empty() != config.tls_key.empty()) return usage(program, "give both --tls-cert and --tls-key");
  return std::nullopt;
}

// HTTP with WebSocket, TCP or a Unix socket on rpc::net, until SIGINT or SIGTERM; then a
// graceful shutdown.
inline int serve_net([[maybe_unused]] std::string_view name, [[maybe_unused]] const ServerConfig& config,
                     [[maybe_unused]] const rpc::Router& router,
                     [[maybe_unused]] const std::vector<std::string>& granted,
                     [[maybe_unused]] rpc::ThreadPool& pool) {
#if defined(BATCHRPC_EXAMPLES_NET)
  const examples::StopSignals stop_signals;  // before the server's threads start
  // Each connection is a file descriptor: allow as many as the hard limit does (often 1024 by
  // default, too few for --max-connections 10000).
  if (rlimit files{}; getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    setrlimit(RLIMIT_NOFILE, &files);
  }
  rpc::net::Server server(router, {.capabilities = granted, .executor = &pool, .io_threads = config.io_threads,
                                   .max_connections = config.max_connections,
                                   .session_id_prefix = config.session_prefix});
  boost::asio::ssl::context* tls = nullptr;
#if defined(BATCHRPC_EXAMPLES_TLS)
  std::optional<boost::asio::ssl::context> tls_context;
  if (!config.tls_cert.empty()) {
    try {
      tls_context.emplace(boost::asio::ssl::context::tls_server);
      tls_context->use_certificate_chain_file(config.tls_cert);
      tls_context->use_private_key_file(config.tls_key, boost::asio::ssl::context::pem);
      tls = &*tls_context;
    } catch (const std::exception& e) {
      std::cerr << name << ": cannot load the TLS certificate or key: " << e.what() << "\n";
      return 1;
    }
  }
#else
  if (!config.tls_cert.empty()) {
    std::cerr << name << ": built without TLS (install libssl-dev and rebuild)\n";
    return 1;
  }
#endif
  const rpc::net::Protocol stream =
      config.framing == rpc::Framing::lines ? rpc::net::Protocol::lines : rpc::net::Protocol::content_length;
  try {
    switch (config.serve) {
      case Serve::unix_socket:
        server.listen_unix(config.unix_path, stream, tls);
        std::cerr << name << ": listening on unix:" << config.unix_path << "\n";
        break;
      case Serve::tcp:
        std::cerr << name << ": listening on tcp://" << config.host << ":"
                  << server.listen(config.host, config.port, stream, tls) << "/\n";
        break;
      default: {
        const int port = server.listen(config.host, config.port, rpc::net::Protocol::http, tls);
        const char* scheme = config.serve == Serve::ws ? (tls ? "wss" : "ws") : (tls ? "https" : "http");
        std::cerr << name << ": listening on " << scheme << "://" << config.host << ":" << port << "/\n";
      }
    }
    server.start();
  } catch (const std::exception& e) {
    std::cerr << name << ": " << e.what() << "\n";
    return 1;
  }
  stop_signals.wait();
  server.shutdown();
  return 0;
#else
  std::cerr << name << ": built without the network transports (install libboost1.81-dev and rebuild)\n";
  return 1;
#endif
}

/**
 * Runs an example server: the built-ins (ping, info, cancellation) are registered on a router
 * built from the command line, then `add_methods` adds the server's own methods.
 */
inline int run_server(int argc, char** argv, std::string_view name,
                      const std::function<void(rpc::Router&)>& add_methods) {
  ServerConfig config;
  if (auto exit_code = parse(argc, argv, config)) return *exit_code;
  std::signal(SIGPIPE, SIG_IGN);  // a peer that goes away is seen as a failed write instead

  rpc::Router router(rpc::Limits{.max_batch = config.max_batch});
  // The built-ins first, so a server's own setup can expose them as tools. Cancellation in
  // all three dialects: batchrpc's own, LSP's $/cancelRequest and MCP's notifications/cancelled.
  rpc::add_builtins(router, {.server_name = std::string(name),
                             .server_version = rpc::version_string,
                             .lsp_cancel = true,
                             .mcp_cancel = true});
  add_methods(router);
  const std::vector<std::string> granted = config.capabilities_given ? config.capabilities : router.capabilities();
  rpc::ThreadPool pool(config.threads);

  if (config.serve == Serve::stdio) {
    rpc::Session session(router, {.capabilities = granted, .executor = &pool});
    rpc::serve_stream(session, STDIN_FILENO, STDOUT_FILENO, {.framing = config.framing});
    return 0;
  }
  return serve_net(name, config, router, granted, pool);
}

}  // namespace examples
