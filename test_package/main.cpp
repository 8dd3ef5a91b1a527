// SPDX-License-Identifier: MIT
// Smoke test of a batchrpc package: routes one batch and checks the reply.
#include <batchrpc/batchrpc.hpp>

#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

int main() {
  rpc::Router router;
  router.add("subtract", [](int minuend, int subtrahend) { return minuend - subtrahend; },
             rpc::names("minuend", "subtrahend"));
  const std::optional<std::string> reply = router.handle(
      R"([{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1},)"
      R"({"jsonrpc":"2.0","method":"subtract","params":{"subtrahend":23,"minuend":42}}])");
  constexpr std::string_view expected = R"([{"jsonrpc":"2.0","id":1,"result":19}])";
  std::printf("batchrpc %s: %s\n", rpc::version_string, reply ? reply->c_str() : "(nothing)");
  return reply && *reply == expected ? 0 : 1;
}
