// SPDX-License-Identifier: MIT
// The README's code snippets, compiled and run. Each region between `snippet:begin NAME` and
// `snippet:end` must match the README block marked `<!-- snippet: NAME -->` (the
// readme_snippets test checks it), so the README cannot drift from code that works.
#include <batchrpc/batchrpc.hpp>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "support/printing.hpp"

TEST_SUITE("readme") {
  TEST_CASE("snippet: sessions and executors") {
    rpc::Router router;
    router.add("embed", [](std::vector<std::string> inputs) { return inputs.size(); },
               rpc::names("inputs"), {.capability = "embed"});
    const std::string message = R"([{"jsonrpc":"2.0","method":"embed","params":[["a","b"]],"id":1}])";
    std::mutex sent_mutex;
    std::condition_variable sent_cv;
    std::vector<std::string> sent;
    auto send = [&](std::string_view text) {
      std::lock_guard lock(sent_mutex);
      sent.emplace_back(text);
      sent_cv.notify_all();
    };
    {
      // snippet:begin sessions
      rpc::ThreadPool pool{4};
      rpc::Session session{router, {.capabilities = {"embed"}, .executor = &pool}};
      session.handle(message, [&](std::optional<std::string_view> reply) {
        if (reply) send(*reply);  // once, when the last member is done, in request order
      });
      // snippet:end
      session.drain();  // (a destroyed session cancels what is still queued)
    }
    REQUIRE(sent.size() == 1);
    CHECK(sent[0] == R"([{"jsonrpc":"2.0","id":1,"result":2}])");
  }

  TEST_CASE("snippet: capability gating") {
    rpc::Router router;
    // snippet:begin gating
    router.add("embed", [](std::vector<std::string> inputs) { return inputs.size(); },
               rpc::names("inputs"), {.capability = "embed"});
    rpc::Session guest{router, {.capabilities = {"rerank"}}};
    auto reply = guest.handle(R"({"jsonrpc":"2.0","method":"embed","params":{"inputs":["a"]},"id":1})");
    // {"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found","data":{"capability":"embed"}}}
    // snippet:end
    CHECK(reply ==
          R"({"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found","data":{"capability":"embed"}}})");
  }

  TEST_CASE("snippet: cancellation") {
    rpc::Router router;
    // snippet:begin cancellation
    rpc::add_builtins(router, {.server_name = "demo", .server_version = "1.0"});
    router.add("sleep", [](int ms, rpc::Context& ctx) {
      std::mutex m;
      std::condition_variable_any cv;
      std::unique_lock lock(m);
      cv.wait_for(lock, ctx.stop_token(), std::chrono::milliseconds(ms), [] { return false; });
      if (ctx.stop_requested()) throw rpc::cancelled();  // answered -32800
      return ms;
    }, rpc::names("ms"));
    // then, from another message of the same session while "sleep" (id 7) runs:
    // {"jsonrpc":"2.0","method":"notifications/cancel","params":{"id":7}}
    // snippet:end
    rpc::Session session(router);
    std::optional<std::string> reply;
    std::thread caller([&] { reply = session.handle(R"({"jsonrpc":"2.0","method":"sleep","params":[60000],"id":7})"); });
    while (session.in_flight() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    CHECK_FALSE(session.handle(R"({"jsonrpc":"2.0","method":"notifications/cancel","params":{"id":7}})"));
    caller.join();
    CHECK(reply == R"({"jsonrpc":"2.0","id":7,"error":{"code":-32800,"message":"Request cancelled"}})");
  }

  TEST_CASE("snippet: answering later with a Responder") {
    rpc::Router router;
    rpc::ThreadPool pool{2};
    // snippet:begin responder
    router.add("slow_add", [&pool](int a, int b, rpc::Responder done) {
      pool.execute([a, b, done] { done.resolve(a + b); });  // answers later, on a pool thread
    }, rpc::names("a", "b"));
    // snippet:end
    CHECK(router.handle(R"({"jsonrpc":"2.0","method":"slow_add","params":{"a":2,"b":3},"id":1})") ==
          R"({"jsonrpc":"2.0","id":1,"result":5})");
  }
}
