// SPDX-License-Identifier: MIT
// Limits: batch cap, message size, nesting depth and response budget, each with its own error.
#include <batchrpc/limits.hpp>

#include <batchrpc/executor.hpp>
#include <batchrpc/router.hpp>
#include <batchrpc/session.hpp>

#include <atomic>
#include <latch>
#include <optional>
#include <string>
#include <string_view>

#include <doctest/doctest.h>

#include "support/printing.hpp"

namespace {

std::string ping_batch(std::size_t members) {
  std::string s = "[";
  for (std::size_t i = 0; i < members; ++i) {
    if (i) s += ',';
    s += R"({"jsonrpc":"2.0","method":"ping","id":)" + std::to_string(i) + "}";
  }
  return s + "]";
}

}  // namespace

TEST_SUITE("limits") {
  TEST_CASE("the defaults are the documented ones") {
    const rpc::Limits limits;
    CHECK(limits.max_batch == 1000);
    CHECK(limits.max_message_bytes == 16u * 1024 * 1024);
    CHECK(limits.max_depth == 128);
    CHECK(limits.max_response_bytes == 64u * 1024 * 1024);
    CHECK(limits.max_parse_ratio == 8);
    CHECK(limits.max_inflight_bytes == 512u * 1024 * 1024);
    CHECK(limits.parse_budget(10) == 64u * 1024);           // the floor
    CHECK(limits.parse_budget(1'000'000) == 8'000'000u);
    CHECK(rpc::Limits{.max_parse_ratio = rpc::Limits::unlimited}.parse_budget(10) == rpc::Limits::unlimited);
  }

  TEST_CASE("a message whose parsed form passes max_parse_ratio x its size is -32090, parsed no further") {
    rpc::Router router;  // the default ratio, 8
    router.add("count", [](const rpc::Value& v) { return v.Size(); });
    // 100,000 one-digit numbers: 200 KB of text, 4 MB of parse memory (1.6 MB of values in the
    // pool, 1.6 MB on the stack, which may grow to 2.4 MB).
    std::string numbers = "[0";
    for (int i = 1; i < 100000; ++i) numbers += ",0";
    numbers += "]";
    const std::string message = R"({"jsonrpc":"2.0","method":"count","params":[)" + numbers + R"(],"id":1})";
    CHECK(router.handle(message) ==
          R"({"jsonrpc":"2.0","id":null,"error":{"code":-32090,"message":"Message too large","data":)"
          R"({"reason":"its parsed form exceeds the parse budget","budget":)" + std::to_string(8 * message.size()) + "}}}");
    // As many values written as longer numbers fit: a value costs the same whatever its text.
    std::string wide = "[1000000";
    for (int i = 1; i < 100000; ++i) wide += ",1000000";
    wide += "]";
    CHECK(router.handle(R"({"jsonrpc":"2.0","method":"count","params":[)" + wide + R"(],"id":1})") ==
          R"({"jsonrpc":"2.0","id":1,"result":100000})");
  }

  TEST_CASE("messages past max_inflight_bytes across a router's sessions are -32093 until others finish") {
    rpc::Router router(rpc::Limits{.max_inflight_bytes = 2000});
    std::latch go{1};
    router.add("hold", [&go] {
      go.wait();
      return true;
    });
    router.add("add", [](int a, int b) { return a + b; });
    rpc::ThreadPool pool(1);
    rpc::Session first(router, {.executor = &pool});
    rpc::Session second(router);
    const std::string hold = R"({"jsonrpc":"2.0","method":"hold","id":1})";  // 40 bytes: counts 400
    std::optional<std::string> held;
    std::latch answered{1};
    first.handle(hold, [&](std::optional<std::string_view> reply) {
      held.emplace(*reply);
      answered.count_down();
    });
    // 300 bytes count 3000: more than is left, and refused without being parsed.
    const std::string big = R"({"jsonrpc":"2.0","method":"add","params":[1,2],"id":2,"pad":")" + std::string(230, 'x') + "\"}";
    CHECK(second.handle(big) ==
          R"({"jsonrpc":"2.0","id":null,"error":{"code":-32093,"message":"Server overloaded","data":)"
          R"({"reason":"too many bytes of messages in progress"}}})");
    CHECK(second.handle(R"({"jsonrpc":"2.0","method":"add","params":[1,2],"id":3})") ==
          R"({"jsonrpc":"2.0","id":3,"result":3})");  // a small one still fits
    go.count_down();
    answered.wait();
    CHECK(held == R"({"jsonrpc":"2.0","id":1,"result":true})");
    // Nothing else in progress: admitted, however much it counts.
    CHECK(second.handle(big) == R"({"jsonrpc":"2.0","id":2,"result":3})");
  }

  TEST_CASE("error responses count against max_response_bytes like results") {
    rpc::Router router(rpc::Limits{.max_response_bytes = 300});
    const std::string invalid =
        R"({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":{"reason":"a request must be an object"}}})";
    CHECK(router.handle("[1,2,3]") ==
          "[" + invalid + "," + invalid + R"(,{"jsonrpc":"2.0","id":null,"error":{"code":-32092,"message":"Response too large","data":{"max":300}}}])");
    CHECK(router.handle(R"([1,2,{"jsonrpc":"2.0","method":"none","id":7}])") ==
          "[" + invalid + "," + invalid + R"(,{"jsonrpc":"2.0","id":7,"error":{"code":-32092,"message":"Response too large","data":{"max":300}}}])");
  }

  TEST_CASE("a batch over the cap is rejected whole with a single -32602") {
    std::atomic<int> calls{0};
    rpc::Router router(rpc::Limits{.max_batch = 3});
    router.add("ping", [&calls] { return ++calls; });
    const auto at_cap = router.handle(ping_batch(3));
    REQUIRE(at_cap);
    CHECK(at_cap->front() == '[');
    CHECK(calls == 3);
    CHECK(router.handle(ping_batch(4)) ==
          R"({"jsonrpc":"2.0","id":null,"error":{"code":-32602,"message":"Batch too large","data":{"max":3}}})");
    CHECK(calls == 3);
  }

  TEST_CASE("an oversized batch that is also invalid JSON is a parse error") {
    rpc::Router router(rpc::Limits{.max_batch = 2});
    router.add("ping", [] {});
    CHECK(router.handle(ping_batch(5) + "x") ==
          R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":{"offset":206,"reason":"The document root must not be followed by other values."}}})");
  }

  TEST_CASE("a million-member batch against the default cap is refused") {
    rpc::Router router;
    router.add("ping", [] {});
    std::string huge = "[";
    for (int i = 0; i < 1'000'000; ++i) huge += "{},";
    huge.back() = ']';
    CHECK(router.handle(huge) ==
          R"({"jsonrpc":"2.0","id":null,"error":{"code":-32602,"message":"Batch too large","data":{"max":1000}}})");
  }

  TEST_CASE("a message over max_message_bytes is refused before parsing") {
    rpc::Router router(rpc::Limits{.max_message_bytes = 64});
    router.add("ping", [] { return true; });
    const std::string fits = R"({"jsonrpc":"2.0","method":"ping","id":1})";
    CHECK(router.handle(fits) == R"({"jsonrpc":"2.0","id":1,"result":true})");
    const std::string too_long = R"({"jsonrpc":"2.0","method":"ping","params":[")" + std::string(40, 'x') + R"("],"id":1})";
    const std::string refused =
        R"({"jsonrpc":"2.0","id":null,"error":{"code":-32090,"message":"Message too large","data":{"max":64}}})";
    CHECK(router.handle(too_long) == refused);
    std::string insitu = too_long;
    rpc::Buffer out;
    CHECK(router.handle_insitu(insitu, out));
    CHECK(out.view() == refused);
  }

  TEST_CASE("nesting deeper than max_depth is -32091, without recursion") {
    rpc::Router router;
    router.add("echo", [](const rpc::Value&) {});
    const std::string too_deep =
        R"({"jsonrpc":"2.0","id":null,"error":{"code":-32091,"message":"Nesting too deep","data":{"max":128}}})";
    SUBCASE("a million open brackets") { CHECK(router.handle(std::string(1'000'000, '[')) == too_deep); }
    SUBCASE("a million balanced brackets") {
      CHECK(router.handle(std::string(1'000'000, '[') + std::string(1'000'000, ']')) == too_deep);
    }
    SUBCASE("objects count too") {
      std::string deep;
      for (int i = 0; i < 200; ++i) deep += R"({"a":)";
      deep += "1" + std::string(200, '}');
      CHECK(router.handle(deep) == too_deep);
    }
    SUBCASE("exactly at the limit is fine") {
      // The request object is level 1 and its params array level 2.
      const std::string params = std::string(126, '[') + std::string(126, ']');
      CHECK(router.handle(R"({"jsonrpc":"2.0","method":"echo","params":[)" + params + R"(],"id":1})") ==
            R"({"jsonrpc":"2.0","id":1,"result":null})");
      const std::string deeper = std::string(127, '[') + std::string(127, ']');
      CHECK(router.handle(R"({"jsonrpc":"2.0","method":"echo","params":[)" + deeper + R"(],"id":1})") == too_deep);
    }
  }

  TEST_CASE("responses past max_response_bytes are replaced by -32092, later small ones still fit") {
    rpc::Router router(rpc::Limits{.max_response_bytes = 200});
    router.add("blob", [](int n) { return std::string(static_cast<std::size_t>(n), 'x'); });
    const std::string too_large =
        R"({"jsonrpc":"2.0","id":2,"error":{"code":-32092,"message":"Response too large","data":{"max":200}}})";
    CHECK(router.handle(R"([{"jsonrpc":"2.0","method":"blob","params":[10],"id":1},)"
                        R"({"jsonrpc":"2.0","method":"blob","params":[150],"id":2},)"
                        R"({"jsonrpc":"2.0","method":"blob","params":[5],"id":3}])") ==
          R"([{"jsonrpc":"2.0","id":1,"result":"xxxxxxxxxx"},)" + too_large +
              R"(,{"jsonrpc":"2.0","id":3,"result":"xxxxx"}])");
    CHECK(router.handle(R"({"jsonrpc":"2.0","method":"blob","params":[500],"id":2})") == too_large);
  }
}
