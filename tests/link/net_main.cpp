// SPDX-License-Identifier: MIT
// A server and a client in compiled mode, built from the headers alone: their bodies come from
// net_library_src.cpp (<batchrpc/net_src.hpp>) and library_src.cpp (<batchrpc/src.hpp>).
#include <batchrpc/net.hpp>
#include <batchrpc/net_client.hpp>

#include <iostream>
#include <utility>

int main() {
  rpc::Router router;
  router.add("add", [](int a, int b) { return a + b; });
  rpc::net::Server server(router);
  const int port = server.listen("127.0.0.1", 0);
  server.start();

  rpc::net::Client client;
  client.connect("127.0.0.1", port);
  rpc::BatchBuilder batch = client.batch();
  const auto sum = batch.call("add", rpc::positional(2, 3));
  const rpc::Replies replies = client.send(std::move(batch)).get();
  std::cout << "sum " << replies.result<int>(sum) << "\n";
}
