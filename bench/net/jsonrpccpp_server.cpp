// SPDX-License-Identifier: MIT
// A peer for bench/net/run.sh: libjson-rpc-cpp's HTTP server (libmicrohttpd) answering `ping`
// ({} or {"nonce": X}) on a port of all interfaces, until SIGINT or SIGTERM.
// usage: jsonrpccpp_server PORT [THREADS]   (THREADS: libmicrohttpd's pool; the library's default
// is 50)
#include <jsonrpccpp/server.h>
#include <jsonrpccpp/server/connectors/httpserver.h>

#include <csignal>
#include <cstdlib>
#include <iostream>
#include <string>

namespace {

class PingServer final : public jsonrpc::AbstractServer<PingServer> {
 public:
  explicit PingServer(jsonrpc::AbstractServerConnector& connector)
      : jsonrpc::AbstractServer<PingServer>(connector, jsonrpc::JSONRPC_SERVER_V2) {
    // No parameter declarations: params are not type-checked by the library.
    bindAndAddMethod(
        jsonrpc::Procedure("ping", jsonrpc::PARAMS_BY_NAME, jsonrpc::JSON_OBJECT, nullptr),
        &PingServer::ping);
  }

  void ping(const Json::Value& params, Json::Value& result) {
    result = Json::Value(Json::objectValue);
    if (params.isObject() && params.isMember("nonce")) result["nonce"] = params["nonce"];
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: " << argv[0] << " PORT [THREADS]\n";
    return 2;
  }
  const int port = std::atoi(argv[1]);
  const int threads = argc > 2 ? std::atoi(argv[2]) : 50;
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);  // inherited by libmicrohttpd's threads
  std::signal(SIGPIPE, SIG_IGN);

  jsonrpc::HttpServer http(port, "", "", threads);
  PingServer server(http);
  if (!server.StartListening()) {
    std::cerr << "jsonrpccpp_server: cannot listen on port " << port << "\n";
    return 1;
  }
  std::cerr << "jsonrpccpp_server: listening on port " << port << " with " << threads
            << " threads\n";
  int signal = 0;
  sigwait(&stop, &signal);
  server.StopListening();
  return 0;
}
