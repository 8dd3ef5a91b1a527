// SPDX-License-Identifier: MIT
// A project that uses batchrpc, built by tests/package against an installed, fetched, vendored
// or pkg-config batchrpc: it routes one batch and checks the reply byte for byte.
#include <batchrpc/batchrpc.hpp>

#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

int main() {
  rpc::Router router;
  router.add("subtract", [](int minuend, int subtrahend) { return minuend - subtrahend; },
             rpc::names("minuend", "subtrahend"));
  router.add("log", [](const std::string&) {}, rpc::names("text"));

  const std::optional<std::string> reply = router.handle(R"([
    {"jsonrpc": "2.0", "method": "subtract", "params": {"subtrahend": 23, "minuend": 42}, "id": 1},
    {"jsonrpc": "2.0", "method": "subtract", "params": [23, 42], "id": "two"},
    {"jsonrpc": "2.0", "method": "log", "params": ["a notification: no reply"]},
    {"jsonrpc": "2.0", "method": "divide", "params": [1, 0], "id": 3.0}
  ])");
  constexpr std::string_view expected =
      R"([{"jsonrpc":"2.0","id":1,"result":19},{"jsonrpc":"2.0","id":"two","result":-19},)"
      R"({"jsonrpc":"2.0","id":3.0,"error":{"code":-32601,"message":"Method not found"}}])";

#if defined(BATCHRPC_SEPARATE_COMPILATION)
  constexpr const char* variant = "compiled";
#else
  constexpr const char* variant = "header-only";
#endif
  std::printf("batchrpc %s (%s)\n%s\n", rpc::version_string, variant,
              reply ? reply->c_str() : "(nothing to send)");

  bool ok = reply && *reply == expected;
  if (!ok) std::printf("FAIL: expected\n%.*s\n", static_cast<int>(expected.size()), expected.data());
#if defined(BATCHRPC_CONSUMER_EXPECT_VERSION)
  // The headers found must be those of the package version that find_package() reported.
  if (std::string_view(rpc::version_string) != BATCHRPC_CONSUMER_EXPECT_VERSION) {
    std::printf("FAIL: headers are version %s, the package says %s\n", rpc::version_string,
                BATCHRPC_CONSUMER_EXPECT_VERSION);
    ok = false;
  }
#endif
#if defined(BATCHRPC_CONSUMER_EXPECT_COMPILED) && !defined(BATCHRPC_SEPARATE_COMPILATION)
  std::printf("FAIL: linked batchrpc::compiled but BATCHRPC_SEPARATE_COMPILATION is not defined\n");
  ok = false;
#endif
  return ok ? 0 : 1;
}
