// SPDX-License-Identifier: MIT
// What a user's file costs: the umbrella header and one typed handler.
#include <batchrpc/batchrpc.hpp>

#include <cstdio>

int main() {
  rpc::Router router;
  router.add("subtract", [](int minuend, int subtrahend) { return minuend - subtrahend; });
  const auto reply = router.handle(R"({"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1})");
  std::puts(reply ? reply->c_str() : "");
  return 0;
}
