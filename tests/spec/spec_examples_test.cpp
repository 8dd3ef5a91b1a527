// SPDX-License-Identifier: MIT
// Every example of the JSON-RPC 2.0 specification (§7), answered exactly as the design asks.
#include <batchrpc/router.hpp>

#include <optional>
#include <string>

#include <doctest/doctest.h>

#include "support/printing.hpp"

#include "common/spec_examples.hpp"
#include "common/spec_methods.hpp"

namespace {

rpc::Router make_spec_router() {
  rpc::Router router;
  spec::add_spec_methods(router);
  return router;
}

// The specification's examples, in order, each with the exact reply (nullopt: nothing sent).
const std::optional<std::string> expected_replies[] = {
    R"({"jsonrpc":"2.0","id":1,"result":19})",
    R"({"jsonrpc":"2.0","id":2,"result":-19})",
    R"({"jsonrpc":"2.0","id":3,"result":19})",
    R"({"jsonrpc":"2.0","id":4,"result":19})",
    std::nullopt,
    std::nullopt,
    R"({"jsonrpc":"2.0","id":"1","error":{"code":-32601,"message":"Method not found"}})",
    R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":{"offset":39,"reason":"Missing a comma or '}' after an object member."}}})",
    R"({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":{"reason":"\"method\" must be a string"}}})",
    R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":{"offset":101,"reason":"Missing a colon after a name of object member."}}})",
    // An empty array is a single Invalid Request, not an empty array (JSON-RPC 2.0 §6).
    R"({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":{"reason":"empty batch"}}})",
    R"([{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":{"reason":"a request must be an object"}}}])",
    R"([{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":{"reason":"a request must be an object"}}},)"
    R"({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":{"reason":"a request must be an object"}}},)"
    R"({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":{"reason":"a request must be an object"}}}])",
    R"([{"jsonrpc":"2.0","id":"1","result":7},)"
    R"({"jsonrpc":"2.0","id":"2","result":19},)"
    R"({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":{"reason":"missing \"jsonrpc\""}}},)"
    R"({"jsonrpc":"2.0","id":"5","error":{"code":-32601,"message":"Method not found"}},)"
    R"({"jsonrpc":"2.0","id":"9","result":["hello",5]}])",
};
static_assert(std::size(expected_replies) == spec::examples.size());

}  // namespace

TEST_SUITE("spec") {
  TEST_CASE("each JSON-RPC 2.0 specification example gets the specified reply") {
    const rpc::Router router = make_spec_router();
    for (std::size_t i = 0; i < spec::examples.size(); ++i) {
      CAPTURE(spec::examples[i].title);
      CHECK(router.handle(spec::examples[i].message) == expected_replies[i]);
    }
  }

  TEST_CASE("a batch of notifications only gets no reply at all") {
    const rpc::Router router = make_spec_router();
    CHECK_FALSE(router.handle(spec::notification_batch.message).has_value());
  }

  TEST_CASE("notifications in the examples still run their handlers") {
    rpc::Router router;
    int updates = 0;
    router.add("update", [&updates](const rpc::Params& p) { updates += static_cast<int>(p.size()); });
    CHECK_FALSE(router.handle(spec::examples[4].message).has_value());
    CHECK(updates == 5);
  }
}
