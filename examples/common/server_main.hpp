// SPDX-License-Identifier: MIT
// The command line shared by the example servers: one binary serves stdio or HTTP.
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
#if defined(BATCHRPC_EXAMPLES_HTTP)
#include <batchrpc/http.hpp>
#endif

namespace examples {

struct ServerConfig {
  bool stdio = false;
  bool http = false;
  rpc::Framing framing = rpc::Framing::lines;
  std::string host = "127.0.0.1";
  int port = 8080;
  bool capabilities_given = false;
  std::vector<std::string> capabilities;
  std::size_t max_batch = rpc::Limits{}.max_batch;
  std::size_t threads = 4;
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
            << " (--stdio [--framing lines|content-length] | --http [--host H] [--port N])\n"
               "       [--capabilities a,b,...] [--max-batch N] [--threads N]\n"
               "  --capabilities  grant only these capabilities to every session (default: all)\n";
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
    if (arg == "--stdio") {
      config.stdio = true;
    } else if (arg == "--http") {
      config.http = true;
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
    } else if (arg == "--help" || arg == "-h") {
      usage(program, "");
      return 0;
    } else {
      return usage(program, "unknown option " + std::string(arg));
    }
  }
  if (config.stdio == config.http) return usage(program, "give exactly one of --stdio and --http");
  return std::nullopt;
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
  // The built-ins first, so a server's own setup can expose them as tools.
  rpc::add_builtins(router, {.server_name = std::string(name), .server_version = rpc::version_string});
  add_methods(router);
  const std::vector<std::string> granted = config.capabilities_given ? config.capabilities : router.capabilities();
  rpc::ThreadPool pool(config.threads);

  if (config.stdio) {
    rpc::Session session(router, {.capabilities = granted, .executor = &pool});
    rpc::serve_stream(session, STDIN_FILENO, STDOUT_FILENO, {.framing = config.framing});
    return 0;
  }
#if defined(BATCHRPC_EXAMPLES_HTTP)
  rpc::http::Server server(router, {.host = config.host, .port = config.port, .capabilities = granted,
                                    .executor = &pool});
  try {
    const int port = server.bind();
    std::cerr << name << ": listening on http://" << config.host << ":" << port << "/\n";
  } catch (const std::exception& e) {
    std::cerr << name << ": " << e.what() << "\n";
    return 1;
  }
  server.run();
  return 0;
#else
  std::cerr << name << ": built without HTTP support (install libcpp-httplib-dev and rebuild)\n";
  return 1;
#endif
}

}  // namespace examples
