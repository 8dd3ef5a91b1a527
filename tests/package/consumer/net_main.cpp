// SPDX-License-Identifier: MIT
// A project that uses batchrpc's network transports, built by tests/package against an
// installed batchrpc found with find_package(batchrpc COMPONENTS net): it serves one router over
// HTTP on loopback, sends a batch through rpc::net::Client and checks the replies.
#include <batchrpc/batchrpc.hpp>
#include <batchrpc/net.hpp>
#include <batchrpc/net_client.hpp>

#include <cstdio>

int main() {
  rpc::Router router;
  router.add("subtract", [](int minuend, int subtrahend) { return minuend - subtrahend; },
             rpc::names("minuend", "subtrahend"));
  rpc::net::Server server{router, {.handler_threads = 1, .io_threads = 1}};
  const int port = server.listen("127.0.0.1", 0);
  server.start();

  rpc::net::Client client;
  client.connect("127.0.0.1", port);
  rpc::BatchBuilder batch = client.batch();
  const auto difference = batch.call("subtract", rpc::positional(42, 23));
  const auto missing = batch.call("divide", rpc::positional(1, 0));
  const rpc::Replies replies = client.send(std::move(batch)).get();

  const bool ok = replies.problems().empty() && replies.result<int>(difference) == 19 &&
                  replies.error(missing) != nullptr && replies.error(missing)->code() == -32601;
  std::printf("batchrpc %s over HTTP: %s\n", rpc::version_string, ok ? "ok" : "FAIL");
  return ok ? 0 : 1;
}
