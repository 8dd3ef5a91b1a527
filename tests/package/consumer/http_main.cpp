// SPDX-License-Identifier: MIT
// Links batchrpc::http from the installed package: the HTTP adapter and cpp-httplib must both
// compile and link in a consumer. Nothing is bound or served.
#include <batchrpc/http.hpp>

#include <cstdio>

int main() {
  rpc::Router router;
  router.add("ping", [] { return 1; });
  rpc::http::Server server{router};
  std::printf("batchrpc::http: a server for the router was constructed (port %d)\n", server.port());
  return server.port() == -1 ? 0 : 1;
}
