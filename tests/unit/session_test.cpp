// SPDX-License-Identifier: MIT
// Sessions: capability gating, cancellation, parallel batches, and use from many threads.
#include <batchrpc/session.hpp>

#include <batchrpc/builtins.hpp>
#include <batchrpc/detail/session_await.hpp>  // handle_unstarted_in
#include <batchrpc/executor.hpp>
#include <batchrpc/router.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <latch>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "support/printing.hpp"
#include "common/cancellable_sleep.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// A router with gated, slow, counting and blocking methods.
struct Fixture {
  std::atomic<int> runs{0};
  std::atomic<int> sleeps_started{0};
  std::latch gate{1};  // "wait_gate" blocks until it is opened
  rpc::Router router;

  Fixture() {
    rpc::add_builtins(router, {.server_name = "test", .server_version = "1"});
    router.add("embed", [](std::string text) { return text.size(); }, rpc::names("text"),
               {.capability = "embed"});
    router.add("rerank", [] { return true; }, {.capability = "rerank"});
    router.add("count", [this] { return ++runs; });
    router.add("whoami", [] { return std::hash<std::thread::id>{}(std::this_thread::get_id()); },
               {.inline_only = true});
    router.add("where", [] { return std::hash<std::thread::id>{}(std::this_thread::get_id()); });
    router.add("sleep", [this](int ms, rpc::Context& ctx) {
      ++sleeps_started;
      if (!spec::sleep_unless_cancelled(ctx.stop_token(), std::chrono::milliseconds(ms))) throw rpc::cancelled();
      return ms;
    }, rpc::names("ms"));
    router.add("wait_gate", [this] {
      gate.wait();
      return true;
    });
  }
};

std::string request(std::string_view method, std::string_view params, std::string_view id) {
  std::string s = R"({"jsonrpc":"2.0","method":")" + std::string(method) + "\"";
  if (!params.empty()) s += R"(,"params":)" + std::string(params);
  if (!id.empty()) s += R"(,"id":)" + std::string(id);
  return s + "}";
}

std::string cancel(std::string_view id) { return request("notifications/cancel", R"({"id":)" + std::string(id) + "}", ""); }

const std::string cancelled_1 =
    R"({"jsonrpc":"2.0","id":1,"error":{"code":-32800,"message":"Request cancelled"}})";

// Collects the replies a Session::handle(message, completion) produces.
struct Replies {
  std::mutex mutex;
  std::condition_variable arrived;
  std::vector<std::optional<std::string>> got;

  rpc::Completion sink() {
    return [this](std::optional<std::string_view> reply) {
      std::lock_guard lock(mutex);
      got.emplace_back(reply ? std::optional<std::string>(*reply) : std::nullopt);
      arrived.notify_all();
    };
  }
  bool wait_for(std::size_t n, milliseconds limit = milliseconds(5000)) {
    std::unique_lock lock(mutex);
    return arrived.wait_for(lock, limit, [&] { return got.size() >= n; });
  }
};

}  // namespace

TEST_SUITE("session") {
  TEST_CASE("a method whose capability the session lacks is -32601 with data.capability") {
    Fixture f;
    rpc::Session session(f.router, {.capabilities = {"rerank"}});
    const std::string denied =
        R"({"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found","data":{"capability":"embed"}}})";
    CHECK(session.handle(request("embed", R"(["abc"])", "1")) == denied);
    SUBCASE("as a batch member, while the other members succeed") {
      CHECK(session.handle("[" + request("count", "", "0") + "," + request("embed", R"(["abc"])", "1") + "," +
                           request("rerank", "", "2") + "]") ==
            R"([{"jsonrpc":"2.0","id":0,"result":1},)" + denied + R"(,{"jsonrpc":"2.0","id":2,"result":true}])");
    }
    SUBCASE("as a notification: not run, not answered") {
      CHECK_FALSE(session.handle(request("embed", R"(["abc"])", "")));
    }
    SUBCASE("granted, it runs") {
      rpc::Session granted(f.router, {.capabilities = {"embed"}});
      CHECK(granted.handle(request("embed", R"(["abc"])", "1")) == R"({"jsonrpc":"2.0","id":1,"result":3})");
      CHECK(granted.granted("embed"));
      CHECK_FALSE(granted.granted("rerank"));
    }
  }

  TEST_CASE("the router's own handle is the trusted path: no gating") {
    Fixture f;
    CHECK(f.router.handle(request("embed", R"(["abcd"])", "1")) == R"({"jsonrpc":"2.0","id":1,"result":4})");
  }

  TEST_CASE("info lists exactly the session's granted capabilities") {
    Fixture f;
    f.router.describe_capability("embed", rpc::json(R"({"dimensions":384})"));
    rpc::Session none(f.router);
    rpc::Session some(f.router, {.capabilities = {"rerank", "embed"}});
    CHECK(none.handle(request("info", "", "1")) ==
          R"({"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"server":{"name":"test","version":"1"},)"
          R"("capabilities":{"batching":{"maxBatch":1000}}}})");
    CHECK(some.handle(request("info", "", "1")) ==
          R"({"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"server":{"name":"test","version":"1"},)"
          R"("capabilities":{"batching":{"maxBatch":1000},"embed":{"dimensions":384},"rerank":{}}}})");
  }

  TEST_CASE("the spec's batch works the same through a session") {
    Fixture f;
    rpc::Session session(f.router);
    CHECK(session.handle(R"([{"jsonrpc":"2.0","id":1,"method":"ping","params":{"nonce":1}},)"
                         R"({"jsonrpc":"2.0","method":"notifications/cancel","params":{"id":9}},)"
                         R"({"jsonrpc":"2.0","id":2,"method":"count","params":{}}])") ==
          R"([{"jsonrpc":"2.0","id":1,"result":{"nonce":1}},{"jsonrpc":"2.0","id":2,"result":1}])");
    CHECK(session.handle("[]") ==
          R"({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":{"reason":"empty batch"}}})");
    CHECK_FALSE(session.handle("[" + request("count", "", "") + "]"));
    CHECK(session.handle("[1") ==
          R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":{"offset":2,"reason":"Missing a comma or ']' after an array element."}}})");
  }

  TEST_CASE("a running handler cancelled from another message answers -32800 promptly") {
    Fixture f;
    rpc::ThreadPool pool(2);
    rpc::Session session(f.router, {.executor = &pool});
    Replies replies;
    const auto start = Clock::now();
    session.handle(request("sleep", "[10000]", "1"), replies.sink());
    while (f.sleeps_started == 0) std::this_thread::sleep_for(milliseconds(1));
    CHECK(session.in_flight() == 1);
    CHECK_FALSE(session.handle(cancel("1")));
    REQUIRE(replies.wait_for(1));
    CHECK(seconds_since(start) < 2.0);  // the sleep would take 10 s
    CHECK(replies.got[0] == cancelled_1);
    CHECK(session.in_flight() == 0);
  }

  TEST_CASE("without an executor, a cancel from another thread still reaches a running handler") {
    Fixture f;
    rpc::Session session(f.router);
    std::optional<std::string> reply;
    std::thread caller([&] { reply = session.handle(request("sleep", "[10000]", "1")); });
    while (f.sleeps_started == 0) std::this_thread::sleep_for(milliseconds(1));
    const auto start = Clock::now();
    CHECK(session.handle(request("notifications/cancel", R"({"id":1})", "\"c\"")) ==
          R"({"jsonrpc":"2.0","id":"c","result":{"cancelled":true}})");
    caller.join();
    CHECK(seconds_since(start) < 2.0);
    CHECK(reply == cancelled_1);
  }

  TEST_CASE("a queued request cancelled before it starts is answered -32800 and never runs") {
    Fixture f;
    rpc::ThreadPool pool(1);
    rpc::Session session(f.router, {.executor = &pool});
    Replies replies;
    session.handle(request("wait_gate", "", "0"), replies.sink());  // occupies the only worker
    session.handle(request("count", "", "1"), replies.sink());      // queued behind it
    CHECK(session.in_flight() == 2);
    CHECK(session.handle(request("notifications/cancel", R"({"id":1})", "2")) ==
          R"({"jsonrpc":"2.0","id":2,"result":{"cancelled":true}})");
    REQUIRE(replies.wait_for(1));  // answered at once, while the only worker is still busy
    CHECK(replies.got[0] == cancelled_1);
    f.gate.count_down();
    REQUIRE(replies.wait_for(2));
    CHECK(f.runs == 0);
    CHECK(replies.got[1] == R"({"jsonrpc":"2.0","id":0,"result":true})");
  }

  TEST_CASE("a running handler that takes no Context is cancelled once, and still answers") {
    rpc::Router router;
    rpc::add_builtins(router);
    std::latch started{1};
    std::latch gate{1};
    router.add("block", [&] {
      started.count_down();
      gate.wait();
      return true;
    });
    rpc::ThreadPool pool(1);
    rpc::Session session(router, {.executor = &pool});
    Replies replies;
    session.handle(request("block", "", "1"), replies.sink());
    started.wait();
    // It has no stop state (nothing could see one); the cancel reaches it all the same, once.
    CHECK(session.handle(request("notifications/cancel", R"({"id":1})", "2")) ==
          R"({"jsonrpc":"2.0","id":2,"result":{"cancelled":true}})");
    CHECK(session.handle(request("notifications/cancel", R"({"id":1})", "3")) ==
          R"({"jsonrpc":"2.0","id":3,"result":{"cancelled":false}})");
    gate.count_down();
    REQUIRE(replies.wait_for(1));
    CHECK(replies.got[0] == R"({"jsonrpc":"2.0","id":1,"result":true})");
    CHECK(session.in_flight() == 0);
  }

  TEST_CASE("a call run here that cannot see a cancel is left out of the table, after cheap ones only") {
    rpc::Router router;
    rpc::add_builtins(router);
    const rpc::Session* current = nullptr;
    router.add("quick", [&] { return current->in_flight(); }, {.inline_only = true});
    router.add("plain", [&] { return current->in_flight(); });
    router.add("watching", [&](rpc::Context&) { return current->in_flight(); }, {.inline_only = true});
    const auto result = [](int id, std::size_t value) {
      return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"result":)" + std::to_string(value) + "}";
    };
    rpc::ThreadPool pool(1);
    for (rpc::Executor* executor : {static_cast<rpc::Executor*>(nullptr), static_cast<rpc::Executor*>(&pool)}) {
      CAPTURE(executor != nullptr);
      rpc::Session session(router, {.executor = executor});
      current = &session;
      CHECK(session.handle(request("quick", "", "1")) == result(1, 0));
      CHECK(session.handle(request("watching", "", "2")) == result(2, 1));  // it can see a cancel
      // Without an executor it runs here at once, nothing before it: left out. On the pool it
      // may wait for the pool: enrolled.
      CHECK(session.handle(request("plain", "", "3")) == result(3, executor != nullptr ? 1 : 0));
      CHECK(session.handle("[" + request("quick", "", "4") + "," + request("quick", "", "5") + "]") ==
            "[" + result(4, 0) + "," + result(5, 0) + "]");
      // After a call that can see the session, every later one is enrolled.
      CHECK(session.handle("[" + request("watching", "", "6") + "," + request("quick", "", "7") + "]") ==
            "[" + result(6, 2) + "," + result(7, 1) + "]");
      // A cancel in its own message still reaches it before it starts.
      CHECK(session.handle("[" + request("quick", "", "8") + "," + cancel("8") + "]") ==
            R"([{"jsonrpc":"2.0","id":8,"error":{"code":-32800,"message":"Request cancelled"}}])");
    }
    // Without an executor a plain call runs here, and may be slow: those after it are enrolled.
    rpc::Session session(router);
    current = &session;
    CHECK(session.handle("[" + request("plain", "", "9") + "," + request("quick", "", "10") + "]") ==
          "[" + result(9, 1) + "," + result(10, 1) + "]");
    // Only cheap calls before it: left out, as every member before it.
    CHECK(session.handle("[" + request("quick", "", "11") + "," + request("plain", "", "12") + "]") ==
          "[" + result(11, 0) + "," + result(12, 0) + "]");
  }

  TEST_CASE("cancelling an unknown or finished id is harmless") {
    Fixture f;
    rpc::Session session(f.router);
    CHECK(session.handle(request("count", "", "1")) == R"({"jsonrpc":"2.0","id":1,"result":1})");
    CHECK_FALSE(session.handle(cancel("1")));
    CHECK(session.handle(request("notifications/cancel", R"({"id":"nope"})", "7")) ==
          R"({"jsonrpc":"2.0","id":7,"result":{"cancelled":false}})");
    CHECK(session.handle(request("count", "", "1")) == R"({"jsonrpc":"2.0","id":1,"result":2})");
  }

  TEST_CASE("cancel members of a batch are applied before the others start") {
    Fixture f;
    rpc::ThreadPool pool(2);
    for (rpc::Executor* executor : {static_cast<rpc::Executor*>(nullptr), static_cast<rpc::Executor*>(&pool)}) {
      CAPTURE(executor != nullptr);
      rpc::Session session(f.router, {.executor = executor});
      const auto start = Clock::now();
      CHECK(session.handle("[" + request("sleep", "[10000]", "1") + "," + request("count", "", "2") + "," +
                           cancel("1") + "," + request("notifications/cancel", R"({"id":2})", "3") + "]") ==
            "[" + cancelled_1 +
                R"(,{"jsonrpc":"2.0","id":2,"error":{"code":-32800,"message":"Request cancelled"}},)"
                R"({"jsonrpc":"2.0","id":3,"result":{"cancelled":true}}])");
      CHECK(seconds_since(start) < 2.0);
      CHECK(f.sleeps_started == 0);
      CHECK(f.runs == 0);
    }
  }

  TEST_CASE("numeric ids are cancelled by value") {
    Fixture f;
    rpc::Session session(f.router);
    CHECK(session.handle("[" + request("count", "", "1.0") + "," + cancel("1") + "]") ==
          R"([{"jsonrpc":"2.0","id":1.0,"error":{"code":-32800,"message":"Request cancelled"}}])");
    CHECK(session.handle("[" + request("count", "", "\"1\"") + "," + cancel("1") + "]") ==
          R"([{"jsonrpc":"2.0","id":"1","result":1}])");
  }

  TEST_CASE("a cancel racing with completion gives exactly one reply per request") {
    Fixture f;
    rpc::ThreadPool pool(2);
    rpc::Session session(f.router, {.executor = &pool});
    constexpr int rounds = 300;
    Replies replies;
    std::vector<std::thread> cancellers;
    for (int i = 0; i < rounds; ++i) {
      const std::string id = std::to_string(i);
      session.handle(request("sleep", "[" + std::to_string(i % 3) + "]", id), replies.sink());
      cancellers.emplace_back([&session, id] { (void)session.handle(cancel(id)); });
      if (cancellers.size() == 8) {
        for (auto& t : cancellers) t.join();
        cancellers.clear();
      }
    }
    for (auto& t : cancellers) t.join();
    REQUIRE(replies.wait_for(rounds));
    std::this_thread::sleep_for(milliseconds(20));  // nothing more may arrive
    std::lock_guard lock(replies.mutex);
    CHECK(replies.got.size() == rounds);
    std::vector<int> seen(rounds, 0);
    for (const auto& reply : replies.got) {
      REQUIRE(reply);
      const auto at = reply->find(R"("id":)") + 5;
      const int id = std::stoi(reply->substr(at));
      ++seen[static_cast<std::size_t>(id)];
      const bool cancelled = reply->find("-32800") != std::string::npos;
      const bool result = reply->find(R"("result":)") != std::string::npos;
      CHECK(cancelled != result);
    }
    for (int n : seen) CHECK(n == 1);
  }

  TEST_CASE("batch members run in parallel on the executor, replies in request order") {
    Fixture f;
    rpc::ThreadPool pool(4);
    rpc::Session session(f.router, {.executor = &pool});
    std::string batch = "[";
    std::string expected = "[";
    for (int i = 0; i < 8; ++i) {
      batch += (i ? "," : "") + request("sleep", "[50]", std::to_string(i));
      expected += (i ? "," : "") + std::string(R"({"jsonrpc":"2.0","id":)") + std::to_string(i) + R"(,"result":50})";
    }
    const auto start = Clock::now();
    CHECK(session.handle(batch + "]") == expected + "]");
    CHECK(seconds_since(start) < 0.3);  // 8 x 50 ms one after another would be 0.4 s
  }

  TEST_CASE("concurrent messages of one session run in parallel") {
    Fixture f;
    rpc::ThreadPool pool(4);
    rpc::Session session(f.router, {.executor = &pool});
    Replies replies;
    const auto start = Clock::now();
    for (int i = 0; i < 4; ++i) session.handle(request("sleep", "[100]", std::to_string(i)), replies.sink());
    REQUIRE(replies.wait_for(4));
    CHECK(seconds_since(start) < 0.3);  // one after another would be 0.4 s
  }

  TEST_CASE("cheap methods run inline even with an executor, others on it") {
    Fixture f;
    rpc::ThreadPool pool(2);
    rpc::Session session(f.router, {.executor = &pool});
    const std::string here = std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id()));
    const std::string on_this_thread = R"({"jsonrpc":"2.0","id":1,"result":)" + here + "}";
    Replies replies;
    session.handle(request("whoami", "", "1"), replies.sink());
    session.handle(request("where", "", "1"), replies.sink());
    REQUIRE(replies.wait_for(2));
    std::lock_guard lock(replies.mutex);
    CHECK(std::count(replies.got.begin(), replies.got.end(), on_this_thread) == 1);  // whoami's; where ran on the pool
    // The waiting handle() lends its thread: a single call runs on it, handed to nobody.
    CHECK(session.handle(request("where", "", "1")) == on_this_thread);
  }

  TEST_CASE("without an executor, everything runs on the calling thread before handle returns") {
    Fixture f;
    rpc::Session session(f.router);
    const std::string here = std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id()));
    std::optional<std::string> reply;
    session.handle("[" + request("where", "", "1") + "]", [&](std::optional<std::string_view> r) { reply = std::string(*r); });
    CHECK(reply == R"([{"jsonrpc":"2.0","id":1,"result":)" + here + "}]");
  }

  TEST_CASE("destroying a session cancels what is in flight and waits for its replies") {
    Fixture f;
    rpc::ThreadPool pool(2);
    Replies replies;
    const auto start = Clock::now();
    {
      rpc::Session session(f.router, {.executor = &pool});
      session.handle(request("sleep", "[10000]", "1"), replies.sink());
      while (f.sleeps_started == 0) std::this_thread::sleep_for(milliseconds(1));
    }
    CHECK(seconds_since(start) < 2.0);
    REQUIRE(replies.got.size() == 1);
    CHECK(replies.got[0] == cancelled_1);
  }

  TEST_CASE("drain waits until every message is answered, without cancelling") {
    Fixture f;
    rpc::ThreadPool pool(1);
    rpc::Session session(f.router, {.executor = &pool});
    Replies replies;
    for (int i = 0; i < 5; ++i) session.handle(request("sleep", "[10]", std::to_string(i)), replies.sink());
    session.drain();
    std::lock_guard lock(replies.mutex);
    REQUIRE(replies.got.size() == 5);
    for (int i = 0; i < 5; ++i) {
      CHECK(replies.got[static_cast<std::size_t>(i)] ==
            R"({"jsonrpc":"2.0","id":)" + std::to_string(i) + R"(,"result":10})");
    }
  }

  TEST_CASE("one session used from several threads at once answers every message correctly") {
    Fixture f;
    rpc::ThreadPool pool(2);
    rpc::Session session(f.router, {.capabilities = {"embed"}, .executor = &pool});
    std::atomic<int> wrong{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < 100; ++i) {
          const std::string id = "\"" + std::to_string(t) + "-" + std::to_string(i) + "\"";
          const auto reply = session.handle("[" + request("embed", R"(["abc"])", id) + "," +
                                            request("rerank", "", "2") + "," + request("ping", "", "") + "]");
          const std::string expected =
              R"([{"jsonrpc":"2.0","id":)" + id + R"(,"result":3},)"
              R"({"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"Method not found","data":{"capability":"rerank"}}}])";
          if (reply != expected) ++wrong;
        }
      });
    }
    for (auto& t : threads) t.join();
    CHECK(wrong == 0);
  }

  TEST_CASE("a token a finished request kept never sees a later request's cancel") {
    rpc::Router router;
    rpc::add_builtins(router);
    std::stop_token kept;
    router.add("keep", [&kept](rpc::Context& ctx) {
      kept = ctx.stop_token();
      return true;
    });
    router.add("sleep", [](int ms, rpc::Context& ctx) {
      if (!spec::sleep_unless_cancelled(ctx.stop_token(), milliseconds(ms))) throw rpc::cancelled();
      return ms;
    }, rpc::names("ms"));
    rpc::ThreadPool pool(1);
    rpc::Session session(router, {.executor = &pool});
    REQUIRE(session.handle(request("keep", "", "1")) == std::optional<std::string>(R"({"jsonrpc":"2.0","id":1,"result":true})"));
    REQUIRE(kept.stop_possible());
    Replies replies;
    session.handle(request("sleep", "[10000]", "2"), replies.sink());  // the same member slot, reused
    CHECK_FALSE(session.handle(cancel("2")));
    REQUIRE(replies.wait_for(1));
    CHECK(replies.got[0] == std::optional<std::string>(R"({"jsonrpc":"2.0","id":2,"error":{"code":-32800,"message":"Request cancelled"}})"));
    CHECK_FALSE(kept.stop_requested());
  }

  TEST_CASE("a plain call where a Responder answered before, in the same place of a batch, gets its own result") {
    rpc::Router router;
    router.add("later", [](int v, rpc::Responder done) { done.resolve(v); });
    router.add("plus", [](int v) { return v + 1; });
    const std::string later = "[" + request("later", "[7]", "1") + "," + request("later", "[8]", "2") + "]";
    const std::string plus = "[" + request("plus", "[1]", "3") + "," + request("plus", "[2]", "4") + "]";
    for (const std::size_t threads : {std::size_t{0}, std::size_t{2}}) {
      CAPTURE(threads);
      std::unique_ptr<rpc::ThreadPool> pool = threads ? std::make_unique<rpc::ThreadPool>(threads) : nullptr;
      rpc::Session session(router, {.executor = pool.get()});
      for (int round = 0; round < 2; ++round) {
        CHECK(session.handle(later) == R"([{"jsonrpc":"2.0","id":1,"result":7},{"jsonrpc":"2.0","id":2,"result":8}])");
        CHECK(session.handle(plus) == R"([{"jsonrpc":"2.0","id":3,"result":2},{"jsonrpc":"2.0","id":4,"result":3}])");
      }
    }
  }
}

TEST_SUITE("session: a message that runs nothing") {
  // What a network transport past its shutdown's grace hands in for the messages it read and
  // held: each call is answered as cancelled before it started, and no handler runs, not even
  // an inline_only one or a cancel; what its own checks refuse is answered as usual.
  TEST_CASE("each call in it is answered -32800, the rest as usual, and no handler runs") {
    Fixture f;
    rpc::ThreadPool pool(2);
    for (rpc::Executor* executor : {static_cast<rpc::Executor*>(nullptr), static_cast<rpc::Executor*>(&pool)}) {
      CAPTURE(executor != nullptr);
      rpc::Session session(f.router, {.capabilities = {"rerank"}, .executor = executor});
      const std::string message = "[" + request("count", "", "1") + "," + request("whoami", "", "") + "," +
                                  cancel("1") + "," + request("nosuch", "", "2") + "," +
                                  request("embed", R"(["abc"])", "3") + "," + request("rerank", "", "4") + "," +
                                  R"({"jsonrpc":"2.0","method":1,"id":5}])";
      std::promise<std::optional<std::string>> answered;
      rpc::detail::handle_unstarted_in(session, std::string(message), [&](std::optional<std::string_view> reply) {
        answered.set_value(reply ? std::optional<std::string>(*reply) : std::nullopt);
      });
      auto reply = answered.get_future();
      REQUIRE(reply.wait_for(std::chrono::seconds(5)) == std::future_status::ready);
      CHECK(reply.get() ==
            "[" + cancelled_1 + R"(,{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"Method not found"}})" +
                R"(,{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"Method not found","data":{"capability":"embed"}}})" +
                R"(,{"jsonrpc":"2.0","id":4,"error":{"code":-32800,"message":"Request cancelled"}})" +
                R"(,{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":{"reason":"\"method\" must be a string"}}}])");
      CHECK(f.runs.load() == 0);
      // The session serves the next message as usual.
      CHECK(session.handle(request("count", "", "6")) == R"({"jsonrpc":"2.0","id":6,"result":1})");
      f.runs = 0;
    }
  }

  TEST_CASE("a message of notifications only, or unreadable, is answered as usual") {
    Fixture f;
    rpc::Session session(f.router);
    std::vector<std::optional<std::string>> replies;
    const auto keep = [&](std::optional<std::string_view> reply) {
      replies.push_back(reply ? std::optional<std::string>(*reply) : std::nullopt);
    };
    rpc::detail::handle_unstarted_in(session, request("count", "", ""), keep);
    rpc::detail::handle_unstarted_in(session, "[]", keep);
    rpc::detail::handle_unstarted_in(session, "{", keep);
    REQUIRE(replies.size() == 3);
    CHECK_FALSE(replies[0]);
    CHECK(replies[1] == R"({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":{"reason":"empty batch"}}})");
    CHECK(replies[2] == R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":{"offset":1,"reason":"Missing a name for object member."}}})");
    CHECK(f.runs.load() == 0);
  }
}
