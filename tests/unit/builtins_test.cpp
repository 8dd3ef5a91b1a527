// SPDX-License-Identifier: MIT
// Built-in methods: ping, info, notifications/cancel and its LSP/MCP aliases, through routers and sessions.
#include <batchrpc/builtins.hpp>

#include <batchrpc/context.hpp>
#include <batchrpc/error.hpp>
#include <batchrpc/executor.hpp>
#include <batchrpc/method_options.hpp>
#include <batchrpc/router.hpp>
#include <batchrpc/session.hpp>
#include <batchrpc/version.hpp>

#include <doctest/doctest.h>

#include "support/handed.hpp"
#include "support/printing.hpp"
#include "support/replies.hpp"

#include <atomic>
#include <chrono>
#include <cstddef>
#include <future>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>
#include "common/cancellable_sleep.hpp"

namespace {

using namespace replies;

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// A request (`id` empty: a notification).
std::string request(std::string_view method, std::string_view id, std::string_view params = {}) {
  std::string s = R"({"jsonrpc":"2.0","method":")" + std::string(method) + "\"";
  if (!params.empty()) s += R"(,"params":)" + std::string(params);
  if (!id.empty()) s += R"(,"id":)" + std::string(id);
  return s + "}";
}

std::string info_result(std::string_view capabilities, std::string_view name = "batchrpc",
                        std::string_view version = rpc::version_string) {
  return R"({"protocolVersion":1,"server":{"name":")" + std::string(name) + R"(","version":")" +
         std::string(version) + R"("},"capabilities":)" + std::string(capabilities) + "}";
}

// A router with the built-ins and two methods of its own: one that counts its calls, one that
// waits (up to 5 s) until its request is cancelled.
struct Fixture {
  std::atomic<int> counted{0};
  std::atomic<int> waiting{0};
  rpc::Router router;

  explicit Fixture(rpc::BuiltinOptions options = {}) {
    router.add("count", [this] { return ++counted; });
    router.add("wait", [this](rpc::Context& ctx) -> std::string {
      ++waiting;
      if (!spec::sleep_unless_cancelled(ctx.stop_token(), std::chrono::seconds(5))) throw rpc::cancelled();
      return "not cancelled";
    });
    rpc::add_builtins(router, std::move(options));
  }
};

// Sends `wait` (id 1) on one thread, then `cancel` on another once it runs; returns both replies.
struct CancelOutcome {
  std::optional<std::string> wait_reply;
  std::optional<std::string> cancel_reply;
  Clock::duration elapsed{};
};

CancelOutcome cancel_running(Fixture& f, rpc::Session& session, const std::string& cancel) {
  CancelOutcome outcome;
  f.waiting = 0;
  const auto start = Clock::now();
  std::thread waiter([&] { outcome.wait_reply = session.handle(request("wait", "1")); });
  while (f.waiting.load() == 0 && Clock::now() - start < 5s) std::this_thread::sleep_for(1ms);
  outcome.cancel_reply = session.handle(cancel);
  waiter.join();
  outcome.elapsed = Clock::now() - start;
  return outcome;
}

}  // namespace

TEST_SUITE("builtins") {
  TEST_CASE("ping echoes a number nonce") {
    Fixture f;
    CHECK(f.router.handle(request("ping", "1", R"({"nonce":7})")) == result("1", R"({"nonce":7})"));
  }

  TEST_CASE("ping echoes a string nonce") {
    Fixture f;
    CHECK(f.router.handle(request("ping", "1", R"({"nonce":"x"})")) == result("1", R"({"nonce":"x"})"));
  }

  TEST_CASE("ping echoes a structured nonce") {
    Fixture f;
    CHECK(f.router.handle(request("ping", "1", R"({"nonce":{"a":[1]}})")) ==
          result("1", R"({"nonce":{"a":[1]}})"));
  }

  TEST_CASE("ping echoes a null nonce") {
    Fixture f;
    CHECK(f.router.handle(request("ping", "1", R"({"nonce":null})")) ==
          result("1", R"({"nonce":null})"));
  }

  TEST_CASE("ping without a nonce answers an empty object") {
    Fixture f;
    CHECK(f.router.handle(request("ping", "1")) == result("1", "{}"));
    CHECK(f.router.handle(request("ping", "2", "{}")) == result("2", "{}"));
    CHECK(f.router.handle(request("ping", "3", "[]")) == result("3", "{}"));
  }

  TEST_CASE("ping binds its nonce by position too") {
    Fixture f;
    CHECK(f.router.handle(request("ping", "1", "[5]")) == result("1", R"({"nonce":5})"));
  }

  TEST_CASE("ping with an unknown param is -32602 naming it") {
    Fixture f;
    CHECK(f.router.handle(request("ping", "1", R"({"nonce":1,"extra":2})")) ==
          error("1", -32602, "Invalid params", R"({"param":"extra","reason":"unknown parameter"})"));
  }

  TEST_CASE("ping as a notification answers nothing") {
    Fixture f;
    CHECK(f.router.handle(request("ping", "", R"({"nonce":7})")) == std::nullopt);
  }

  TEST_CASE("info through Router::handle lists every capability the router knows") {
    rpc::Limits limits;
    limits.max_batch = 50;
    rpc::Router router(limits);
    router.add("embed", [] { return 1; }, rpc::MethodOptions{.capability = "embed"});
    router.add("embed/sparse", [] { return 2; }, rpc::MethodOptions{.capability = "embed"});
    router.add("rerank", [] { return 3; }, rpc::MethodOptions{.capability = "rerank"});
    router.describe_capability("vision", rpc::json(R"({"maxImages":4})"));
    router.describe_capability("embed", rpc::json(R"({"dims":384})"));
    rpc::add_builtins(router);
    CHECK(router.handle(request("info", "1")) ==
          result("1", info_result(R"({"batching":{"maxBatch":50},"embed":{"dims":384},)"
                                  R"("rerank":{},"vision":{"maxImages":4}})")));
  }

  TEST_CASE("info with no capabilities reports batching with the default cap") {
    Fixture f;
    CHECK(f.router.handle(request("info", "1")) ==
          result("1", info_result(R"({"batching":{"maxBatch":1000}})")));
  }

  TEST_CASE("info names the server from BuiltinOptions") {
    Fixture f({.server_name = "embedder", .server_version = "2.3.4"});
    CHECK(f.router.handle(request("info", "1")) ==
          result("1", info_result(R"({"batching":{"maxBatch":1000}})", "embedder", "2.3.4")));
  }

  TEST_CASE("info's default server is batchrpc at the library version") {
    CHECK(std::string_view(rpc::version_string) ==
          std::to_string(BATCHRPC_VERSION_MAJOR) + "." + std::to_string(BATCHRPC_VERSION_MINOR) +
              "." + std::to_string(BATCHRPC_VERSION_PATCH));
    Fixture f;
    CHECK(f.router.handle(request("info", R"("v")")) ==
          result(R"("v")", R"({"protocolVersion":1,"server":{"name":"batchrpc","version":")" +
                               std::string(rpc::version_string) +
                               R"("},"capabilities":{"batching":{"maxBatch":1000}}})"));
  }

  TEST_CASE("info through a session lists exactly the granted capabilities, sorted, with their settings") {
    rpc::Limits limits;
    limits.max_batch = 8;
    rpc::Router router(limits);
    router.add("embed", [] { return 1; }, rpc::MethodOptions{.capability = "embed"});
    router.add("rerank", [] { return 3; }, rpc::MethodOptions{.capability = "rerank"});
    router.describe_capability("vision", rpc::json(R"({"maxImages":4})"));
    router.describe_capability("embed", rpc::json(R"({"dims":384})"));
    rpc::add_builtins(router, {.server_name = "s", .server_version = "1"});
    rpc::ThreadPool pool(2);

    struct Grant {
      std::vector<std::string> capabilities;
      std::string expected;
    };
    const Grant grants[] = {
        {{}, R"({"batching":{"maxBatch":8}})"},
        {{"rerank"}, R"({"batching":{"maxBatch":8},"rerank":{}})"},
        {{"vision", "embed"}, R"({"batching":{"maxBatch":8},"embed":{"dims":384},"vision":{"maxImages":4}})"},
        {{"rerank", "embed", "vision"},
         R"({"batching":{"maxBatch":8},"embed":{"dims":384},"rerank":{},"vision":{"maxImages":4}})"},
        {{"embed", "embed"}, R"({"batching":{"maxBatch":8},"embed":{"dims":384}})"},
        // Granted but unknown to the router: still granted, with no settings.
        {{"audio"}, R"({"batching":{"maxBatch":8},"audio":{}})"},
    };
    for (const Grant& grant : grants) {
      for (const bool pooled : {false, true}) {
        CAPTURE(grant.expected);
        CAPTURE(pooled);
        rpc::Session session(router, {.capabilities = grant.capabilities,
                                      .executor = pooled ? &pool : nullptr});
        CHECK(session.handle(request("info", "1")) == result("1", info_result(grant.expected, "s", "1")));
      }
    }
  }

  TEST_CASE("notifications/cancel as a notification answers nothing") {
    Fixture f;
    CHECK(f.router.handle(request("notifications/cancel", "", R"({"id":1})")) == std::nullopt);
    rpc::Session session(f.router);
    CHECK(session.handle(request("notifications/cancel", "", R"({"id":1})")) == std::nullopt);
    CHECK(session.handle(request("notifications/cancel", "", R"({"id":"x"})")) == std::nullopt);
  }

  TEST_CASE("notifications/cancel as a request for an unknown id answers cancelled false") {
    Fixture f;
    CHECK(f.router.handle(request("notifications/cancel", "2", R"({"id":1})")) ==
          result("2", R"({"cancelled":false})"));
    rpc::Session session(f.router);
    CHECK(session.handle(request("notifications/cancel", "2", R"({"id":1})")) ==
          result("2", R"({"cancelled":false})"));
    CHECK(session.handle(request("notifications/cancel", "3", R"({"id":"nope"})")) ==
          result("3", R"({"cancelled":false})"));
    CHECK(session.handle(request("notifications/cancel", "7", R"({"id":7})")) ==
          result("7", R"({"cancelled":false})"));
  }

  TEST_CASE("notifications/cancel for a finished request answers cancelled false") {
    Fixture f;
    rpc::Session session(f.router);
    CHECK(session.handle(request("count", "5")) == result("5", "1"));
    CHECK(session.handle(request("notifications/cancel", "6", R"({"id":5})")) ==
          result("6", R"({"cancelled":false})"));
  }

  TEST_CASE("notifications/cancel with an id that is not a string or a number is -32602 naming the param") {
    Fixture f;
    const std::string bad_id =
        error("2", -32602, "Invalid params", R"({"param":"id","reason":"expected a string or a number"})");
    CHECK(f.router.handle(request("notifications/cancel", "2", R"({"id":[1]})")) == bad_id);
    CHECK(f.router.handle(request("notifications/cancel", "2", R"({"id":{"a":1}})")) == bad_id);
    CHECK(f.router.handle(request("notifications/cancel", "2", R"({"id":true})")) == bad_id);
    CHECK(f.router.handle(request("notifications/cancel", "2", R"({"id":null})")) == bad_id);
    rpc::Session session(f.router);
    CHECK(session.handle(request("notifications/cancel", "2", R"({"id":[1]})")) == bad_id);
    // As a notification, even a bad one is not answered.
    CHECK(session.handle(request("notifications/cancel", "", R"({"id":[1]})")) == std::nullopt);
  }

  TEST_CASE("notifications/cancel without an id is -32602") {
    Fixture f;
    CHECK(f.router.handle(request("notifications/cancel", "2", "{}")) ==
          error("2", -32602, "Invalid params", R"({"param":"id","reason":"missing required parameter"})"));
  }

  TEST_CASE("a cancel in a batch is applied before the other members start") {
    Fixture f;
    const std::string batch = "[" + request("count", "1") + "," +
                              request("notifications/cancel", "", R"({"id":1})") + "]";
    rpc::ThreadPool pool(2);
    for (const bool pooled : {false, true}) {
      CAPTURE(pooled);
      rpc::Session session(f.router, {.executor = pooled ? &pool : nullptr});
      CHECK(session.handle(batch) == "[" + cancelled("1") + "]");
    }
    CHECK(f.counted.load() == 0);  // cancelled before it started: never ran
  }

  TEST_CASE("a cancel request in a batch answers cancelled true for a member of that batch") {
    Fixture f;
    const std::string batch = "[" + request("count", R"("a")") + "," +
                              request("notifications/cancel", "2", R"({"id":"a"})") + "," +
                              request("count", "3") + "]";
    rpc::Session session(f.router);
    CHECK(session.handle(batch) == "[" + cancelled(R"("a")") + "," +
                                       result("2", R"({"cancelled":true})") + "," + result("3", "1") + "]");
    CHECK(f.counted.load() == 1);
  }

  TEST_CASE("through Router::handle there is no session: cancel finds nothing and the member runs") {
    Fixture f;
    const std::string batch = "[" + request("count", "1") + "," +
                              request("notifications/cancel", "2", R"({"id":1})") + "]";
    CHECK(f.router.handle(batch) == "[" + result("1", "1") + "," + result("2", R"({"cancelled":false})") + "]");
  }

  TEST_CASE("notifications/cancel cancels a running request of the same session") {
    Fixture f;
    rpc::ThreadPool pool(2);
    for (const bool pooled : {false, true}) {
      CAPTURE(pooled);
      rpc::Session session(f.router, {.executor = pooled ? &pool : nullptr});
      const CancelOutcome as_notification =
          cancel_running(f, session, request("notifications/cancel", "", R"({"id":1})"));
      CHECK(as_notification.wait_reply == cancelled("1"));
      CHECK(as_notification.cancel_reply == std::nullopt);
      CHECK(as_notification.elapsed < 3s);  // the handler would wait 5 s without the cancel

      const CancelOutcome as_request =
          cancel_running(f, session, request("notifications/cancel", "9", R"({"id":1})"));
      CHECK(as_request.wait_reply == cancelled("1"));
      CHECK(as_request.cancel_reply == result("9", R"({"cancelled":true})"));
      CHECK(as_request.elapsed < 3s);
    }
  }

  TEST_CASE("a cancel in one session does not touch another session's requests") {
    Fixture f;
    rpc::Session session(f.router);
    rpc::Session other(f.router);
    std::optional<std::string> wait_reply;
    std::thread waiter([&] { wait_reply = session.handle(request("wait", "1")); });
    const auto start = Clock::now();
    while (f.waiting.load() == 0 && Clock::now() - start < 5s) std::this_thread::sleep_for(1ms);
    CHECK(other.handle(request("notifications/cancel", "2", R"({"id":1})")) ==
          result("2", R"({"cancelled":false})"));
    CHECK(session.handle(request("notifications/cancel", "3", R"({"id":1})")) ==
          result("3", R"({"cancelled":true})"));
    waiter.join();
    CHECK(wait_reply == cancelled("1"));
  }

  TEST_CASE("the LSP and MCP cancel aliases do not exist unless asked for") {
    Fixture f;
    CHECK(f.router.handle(request("$/cancelRequest", "1", R"({"id":5})")) ==
          error("1", -32601, "Method not found"));
    CHECK(f.router.handle(request("notifications/cancelled", "2", R"({"requestId":5})")) ==
          error("2", -32601, "Method not found"));
    Fixture lsp_only({.lsp_cancel = true});
    CHECK(lsp_only.router.handle(request("notifications/cancelled", "3", R"({"requestId":5})")) ==
          error("3", -32601, "Method not found"));
    Fixture mcp_only({.mcp_cancel = true});
    CHECK(mcp_only.router.handle(request("$/cancelRequest", "4", R"({"id":5})")) ==
          error("4", -32601, "Method not found"));
  }

  TEST_CASE("$/cancelRequest cancels like notifications/cancel when asked for") {
    Fixture f({.lsp_cancel = true});
    rpc::Session session(f.router);
    CHECK(session.handle("[" + request("count", R"("a")") + "," +
                         request("$/cancelRequest", "", R"({"id":"a"})") + "]") ==
          "[" + cancelled(R"("a")") + "]");
    CHECK(f.counted.load() == 0);
    CHECK(session.handle(request("$/cancelRequest", "2", R"({"id":"a"})")) ==
          result("2", R"({"cancelled":false})"));
    CHECK(session.handle(request("$/cancelRequest", "3", R"({"id":[1]})")) ==
          error("3", -32602, "Invalid params", R"({"param":"id","reason":"expected a string or a number"})"));
    const CancelOutcome outcome = cancel_running(f, session, request("$/cancelRequest", "", R"({"id":1})"));
    CHECK(outcome.wait_reply == cancelled("1"));
    CHECK(outcome.cancel_reply == std::nullopt);
    CHECK(outcome.elapsed < 3s);
  }

  TEST_CASE("notifications/cancelled cancels as MCP asks: the cancelled request gets no response") {
    Fixture f({.mcp_cancel = true});
    rpc::Session session(f.router);
    CHECK(session.handle("[" + request("count", "1") + "," +
                         request("notifications/cancelled", "", R"({"requestId":1,"reason":"user"})") +
                         "]") == std::nullopt);
    // Beside other requests, only the cancelled one's entry is left out.
    CHECK(session.handle("[" + request("count", "2") + "," + request("ping", "7") + "," +
                         request("notifications/cancelled", "", R"({"requestId":2})") + "]") ==
          "[" + result("7", "{}") + "]");
    CHECK(f.counted.load() == 0);
    CHECK(session.handle(request("notifications/cancelled", "3", R"({"requestId":1})")) ==
          result("3", R"({"cancelled":false})"));
    CHECK(session.handle(request("notifications/cancelled", "4", R"({"requestId":[1]})")) ==
          error("4", -32602, "Invalid params",
                R"({"param":"requestId","reason":"expected a string or a number"})"));
    const CancelOutcome outcome = cancel_running(
        f, session, request("notifications/cancelled", "5", R"({"requestId":1,"reason":"timeout"})"));
    CHECK(outcome.wait_reply == std::nullopt);  // the handler stopped; nothing is sent for it
    CHECK(outcome.cancel_reply == result("5", R"({"cancelled":true})"));
    CHECK(outcome.elapsed < 3s);
  }

  TEST_CASE("the default cancel name stays when the aliases are added") {
    Fixture f({.lsp_cancel = true, .mcp_cancel = true});
    rpc::Session session(f.router);
    CHECK(session.handle("[" + request("count", "1") + "," +
                         request("notifications/cancel", "", R"({"id":1})") + "]") ==
          "[" + cancelled("1") + "]");
  }

  TEST_CASE("add_builtins twice on one router throws std::invalid_argument") {
    rpc::Router router;
    rpc::add_builtins(router);
    CHECK_THROWS_AS(rpc::add_builtins(router), std::invalid_argument);
    CHECK_THROWS_AS(rpc::add_builtins(router, {.lsp_cancel = true, .mcp_cancel = true}),
                    std::invalid_argument);
    CHECK(router.handle(request("ping", "1", R"({"nonce":1})")) == result("1", R"({"nonce":1})"));
  }

  TEST_CASE("add_builtins throws std::invalid_argument when a built-in name is taken") {
    for (const char* name : {"ping", "info", "notifications/cancel"}) {
      CAPTURE(name);
      rpc::Router router;
      router.add(name, [] { return 0; });
      CHECK_THROWS_AS(rpc::add_builtins(router), std::invalid_argument);
    }
  }

  TEST_CASE("an inline_only method runs on the calling thread and others on the executor") {
    rpc::Router router;
    std::mutex mutex;
    std::vector<std::thread::id> inline_threads;
    std::vector<std::thread::id> pooled_threads;
    router.add("here", [&] {
      std::lock_guard lock(mutex);
      inline_threads.push_back(std::this_thread::get_id());
    }, rpc::MethodOptions{.inline_only = true});
    router.add("there", [&] {
      std::lock_guard lock(mutex);
      pooled_threads.push_back(std::this_thread::get_id());
    });
    rpc::add_builtins(router);
    rpc::ThreadPool pool(2);
    rpc::Session session(router, {.executor = &pool});
    // With a completion: the waiting handle() would lend this thread to "there" too.
    CHECK(handed(session, request("here", "1")) == result("1", "null"));
    CHECK(handed(session, request("there", "2")) == result("2", "null"));
    CHECK(handed(session, "[" + request("here", "3") + "," + request("there", "4") + "]") ==
          "[" + result("3", "null") + "," + result("4", "null") + "]");
    std::lock_guard lock(mutex);
    CHECK(inline_threads == std::vector<std::thread::id>(2, std::this_thread::get_id()));
    REQUIRE(pooled_threads.size() == 2);
    CHECK(pooled_threads[0] != std::this_thread::get_id());
    CHECK(pooled_threads[1] != std::this_thread::get_id());
  }

  TEST_CASE("ping and info work in a session with an executor") {
    Fixture f;
    rpc::ThreadPool pool(2);
    rpc::Session session(f.router, {.executor = &pool});
    CHECK(session.handle(request("ping", "1", R"({"nonce":7})")) == result("1", R"({"nonce":7})"));
    CHECK(session.handle(request("info", "2")) == result("2", info_result(R"({"batching":{"maxBatch":1000}})")));
    CHECK(session.handle("[" + request("ping", "3") + "," + request("count", "4") + "," +
                         request("info", "5") + "]") ==
          "[" + result("3", "{}") + "," + result("4", "1") + "," +
              result("5", info_result(R"({"batching":{"maxBatch":1000}})")) + "]");
  }

  TEST_CASE("ping, info and cancel answer inline even while the executor is busy") {
    Fixture f;
    rpc::ThreadPool pool(1);
    std::promise<void> release;
    std::shared_future<void> released = release.get_future().share();
    std::promise<void> blocking;
    pool.execute([released, &blocking] {
      blocking.set_value();
      released.wait_for(10s);  // generous: a failing check below must not hang the run
    });
    blocking.get_future().wait();  // the only worker is now busy
    const std::string messages[] = {request("ping", "1", R"({"nonce":7})"), request("info", "2"),
                                    request("notifications/cancel", "3", R"({"id":1})")};
    std::atomic<int> calls[3] = {0, 0, 0};  // outlive the session, which may call late on failure
    {
      rpc::Session session(f.router, {.executor = &pool});
      for (std::size_t i = 0; i < 3; ++i) {
        CAPTURE(messages[i]);
        session.handle(messages[i], [&calls, i](std::optional<std::string_view>) { ++calls[i]; });
        CHECK(calls[i].load() == 1);  // answered before handle returned, without the pool
      }
      release.set_value();
    }  // the session waits for anything that did go to the pool
  }
}
