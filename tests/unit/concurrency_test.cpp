// SPDX-License-Identifier: MIT
// One router, many threads: handle() is const and safe to call concurrently.
#include <batchrpc/router.hpp>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "support/printing.hpp"

TEST_SUITE("concurrency") {
  TEST_CASE("eight threads hammering one router with mixed batches all get correct replies") {
    rpc::Router router;
    std::atomic<long> notified{0};
    router.add("add", [](long a, long b) { return a + b; }, rpc::names("a", "b"));
    router.add("note", [&notified](long n) { notified += n; });

    constexpr int threads = 8;
    constexpr int rounds = 300;
    std::atomic<int> wrong{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        for (int r = 0; r < rounds; ++r) {
          const long a = t * 1000 + r;
          const std::string id = std::to_string(t) + "-" + std::to_string(r);
          const std::string message =
              R"([{"jsonrpc":"2.0","method":"add","params":[)" + std::to_string(a) + R"(,1],"id":")" + id + R"("},)"
              R"({"jsonrpc":"2.0","method":"note","params":[1]},)"
              R"({"jsonrpc":"2.0","method":"add","params":{"a":)" + std::to_string(a) + R"(,"b":2},"id":2},)"
              R"({"bad":true},)"
              R"({"jsonrpc":"2.0","method":"missing","id":3}])";
          const std::string expected =
              R"([{"jsonrpc":"2.0","id":")" + id + R"(","result":)" + std::to_string(a + 1) + "},"
              R"({"jsonrpc":"2.0","id":2,"result":)" + std::to_string(a + 2) + "},"
              R"({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":{"reason":"missing \"jsonrpc\""}}},)"
              R"({"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"Method not found"}}])";
          if (router.handle(message) != expected) ++wrong;
        }
      });
    }
    for (auto& th : pool) th.join();
    CHECK(wrong == 0);
    CHECK(notified == threads * rounds);
  }
}
