// SPDX-License-Identifier: MIT
// Batch-aware dispatch (Router::add_batched): a batch's calls of one method answered by one
// handler call, each reply exactly as a per-call handler would give it.
#include <batchrpc/batch_call.hpp>

#include <batchrpc/builtins.hpp>
#include <batchrpc/executor.hpp>
#include <batchrpc/router.hpp>
#include <batchrpc/session.hpp>

#include <atomic>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "support/printing.hpp"

namespace {

// "twice" doubles its one integer param; calls with a negative one are rejected; "fail" and
// "boom" throw for the whole group; "quiet" writes nothing; "half" leaves its result open.
// The same methods as plain handlers make the reference.
struct Fixture {
  std::atomic<int> groups{0};
  std::atomic<int> calls{0};
  std::atomic<int> exceptions{0};
  rpc::Router batched{rpc::RouterOptions{.on_exception = [this](std::string_view, std::exception_ptr) { ++exceptions; }}};
  rpc::Router plain;

  Fixture() {
    batched.add_batched("twice", [this](std::span<rpc::BatchCall> group) {
      ++groups;
      for (rpc::BatchCall& call : group) {
        ++calls;
        const rpc::Value* v = call.params().at(0);
        if (v == nullptr || !v->IsInt64()) {
          call.reject(rpc::Error(rpc::ErrorCode::invalid_params, "need an integer"));
        } else if (v->GetInt64() < 0) {
          call.reject(rpc::Error(-32001, "negative"));
        } else {
          call.result().integer(2 * v->GetInt64());
        }
      }
    }, {.capability = "math"});
    plain.add("twice", [](const rpc::Params& params) -> std::int64_t {
      const rpc::Value* v = params.at(0);
      if (v == nullptr || !v->IsInt64()) throw rpc::Error(rpc::ErrorCode::invalid_params, "need an integer");
      if (v->GetInt64() < 0) throw rpc::Error(-32001, "negative");
      return 2 * v->GetInt64();
    }, {.capability = "math"});
    batched.add_batched("fail", [](std::span<rpc::BatchCall> group) {
      group[0].reject(rpc::Error(-32002, "first"));
      throw rpc::Error(-32003, "all");
    });
    batched.add_batched("boom", [](std::span<rpc::BatchCall>) { throw std::runtime_error("secret"); });
    batched.add_batched("quiet", [](std::span<rpc::BatchCall>) {});
    batched.add_batched("half", [](std::span<rpc::BatchCall> group) {
      for (rpc::BatchCall& call : group) call.result().start_array();
    });
    batched.add_batched("ids", [](std::span<rpc::BatchCall> group) {
      for (rpc::BatchCall& call : group) call.result().string(call.context().id().text);
    });
    rpc::add_builtins(batched, {.server_name = "t", .server_version = "1"});
  }
};

std::string call(std::string_view method, std::string_view params, int id) {
  return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":")" + std::string(method) +
         R"(","params":)" + std::string(params) + "}";
}

}  // namespace

TEST_SUITE("batch_call") {
  TEST_CASE("a batch's calls of a batched method reach one handler call, replies as per call") {
    Fixture f;
    const std::string batch = "[" + call("twice", "[1]", 1) + "," + call("twice", "[-1]", 2) + "," +
                              call("nope", "[]", 3) + "," + call("twice", "[\"x\"]", 4) + "," +
                              call("twice", "[21]", 5) + R"(,{"jsonrpc":"2.0","method":"twice","params":[7]},1])";
    const auto reply = f.batched.handle(batch);
    CHECK(reply == f.plain.handle(batch));
    CHECK(reply == std::string(R"([{"jsonrpc":"2.0","id":1,"result":2},)"
                               R"({"jsonrpc":"2.0","id":2,"error":{"code":-32001,"message":"negative"}},)"
                               R"({"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"Method not found"}},)"
                               R"({"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"need an integer"}},)"
                               R"({"jsonrpc":"2.0","id":5,"result":42},)"
                               R"({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":{"reason":"a request must be an object"}}}])"));
    CHECK(f.groups == 1);
    CHECK(f.calls == 5);  // the notification ran too
  }

  TEST_CASE("a singleton, or a batch's only call of the method, is a group of one") {
    Fixture f;
    CHECK(f.batched.handle(call("twice", "[4]", 1)) == R"({"jsonrpc":"2.0","id":1,"result":8})");
    CHECK(f.batched.handle(call("twice", "[-4]", 1)) == f.plain.handle(call("twice", "[-4]", 1)));
    CHECK(f.batched.handle("[" + call("twice", "[4]", 1) + "," + call("ids", "[]", 2) + "]") ==
          R"([{"jsonrpc":"2.0","id":1,"result":8},{"jsonrpc":"2.0","id":2,"result":"2"}])");
    CHECK(f.groups == 3);
  }

  TEST_CASE("each call has its own context") {
    Fixture f;
    CHECK(f.batched.handle("[" + call("ids", "[]", 7) + "," + call("ids", "[]", 8) + "]") ==
          R"([{"jsonrpc":"2.0","id":7,"result":"7"},{"jsonrpc":"2.0","id":8,"result":"8"}])");
  }

  TEST_CASE("a throw answers every call not rejected, other exceptions are -32603, reported once") {
    Fixture f;
    CHECK(f.batched.handle("[" + call("fail", "[]", 1) + "," + call("fail", "[]", 2) + "]") ==
          R"([{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"first"}},)"
          R"({"jsonrpc":"2.0","id":2,"error":{"code":-32003,"message":"all"}}])");
    CHECK(f.batched.handle("[" + call("boom", "[]", 1) + "," + call("boom", "[]", 2) + "]") ==
          R"([{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error"}},)"
          R"({"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"Internal error"}}])");
    CHECK(f.exceptions == 1);
  }

  TEST_CASE("nothing written is null, an incomplete result is -32603") {
    Fixture f;
    CHECK(f.batched.handle("[" + call("quiet", "[]", 1) + "," + call("quiet", "[]", 2) + "]") ==
          R"([{"jsonrpc":"2.0","id":1,"result":null},{"jsonrpc":"2.0","id":2,"result":null}])");
    CHECK(f.batched.handle("[" + call("half", "[]", 1) + "," + call("half", "[]", 2) + "]") ==
          R"([{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error"}},)"
          R"({"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"Internal error"}}])");
    CHECK(f.batched.handle(call("half", "[]", 1)) ==
          R"({"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error"}})");
  }

  TEST_CASE("sessions: gating and cancel-before-start apply first, same replies with an executor") {
    Fixture f;
    rpc::add_builtins(f.plain, {.server_name = "t", .server_version = "1"});
    const std::string batch = "[" + call("twice", "[1]", 1) + "," + call("twice", "[2]", 2) + "," +
                              call("notifications/cancel", R"({"id":2})", 3) + "," +
                              call("twice", "[3]", 4) + "]";
    rpc::ThreadPool pool(2);
    for (rpc::Executor* executor : {static_cast<rpc::Executor*>(nullptr), static_cast<rpc::Executor*>(&pool)}) {
      rpc::Session batched(f.batched, {.capabilities = {"math"}, .executor = executor});
      rpc::Session plain(f.plain, {.capabilities = {"math"}, .executor = executor});
      const auto reply = batched.handle(batch);
      CHECK(reply == plain.handle(batch));
      CHECK(reply->find(R"({"jsonrpc":"2.0","id":2,"error":{"code":-32800,"message":"Request cancelled"}})") !=
            std::string::npos);
      rpc::Session ungranted(f.batched, {.executor = executor});
      CHECK(ungranted.handle(batch) == rpc::Session(f.plain, {.executor = executor}).handle(batch));
    }
    CHECK(f.calls == 4);  // twice per session with "math": ids 1 and 4 (2 was cancelled)
  }
}
