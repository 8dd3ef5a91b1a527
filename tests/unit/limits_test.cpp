// SPDX-License-Identifier: MIT
// Limits: batch cap, message size, nesting depth and response budget, each with its own error.
#include <batchrpc/limits.hpp>

#include <batchrpc/router.hpp>

#include <atomic>
#include <string>

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
        R"({"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Message too large","data":{"max":64}}})";
    CHECK(router.handle(too_long) == refused);
    std::string insitu = too_long;
    rpc::Buffer out;
    CHECK(router.handle_insitu(insitu, out));
    CHECK(out.view() == refused);
  }

  TEST_CASE("nesting deeper than max_depth is -32002, without recursion") {
    rpc::Router router;
    router.add("echo", [](const rpc::Value&) {});
    const std::string too_deep =
        R"({"jsonrpc":"2.0","id":null,"error":{"code":-32002,"message":"Nesting too deep","data":{"max":128}}})";
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

  TEST_CASE("responses past max_response_bytes are replaced by -32003, later small ones still fit") {
    rpc::Router router(rpc::Limits{.max_response_bytes = 200});
    router.add("blob", [](int n) { return std::string(static_cast<std::size_t>(n), 'x'); });
    const std::string too_large =
        R"({"jsonrpc":"2.0","id":2,"error":{"code":-32003,"message":"Response too large","data":{"max":200}}})";
    CHECK(router.handle(R"([{"jsonrpc":"2.0","method":"blob","params":[10],"id":1},)"
                        R"({"jsonrpc":"2.0","method":"blob","params":[150],"id":2},)"
                        R"({"jsonrpc":"2.0","method":"blob","params":[5],"id":3}])") ==
          R"([{"jsonrpc":"2.0","id":1,"result":"xxxxxxxxxx"},)" + too_large +
              R"(,{"jsonrpc":"2.0","id":3,"result":"xxxxx"}])");
    CHECK(router.handle(R"({"jsonrpc":"2.0","method":"blob","params":[500],"id":2})") == too_large);
  }
}
