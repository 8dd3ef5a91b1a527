// SPDX-License-Identifier: MIT
// The README's code snippets, compiled and run. Each region between `snippet:begin NAME` and
// `snippet:end` must match the README block marked `<!-- snippet: NAME -->` (the
// readme_snippets test checks it), so the README cannot drift from code that works.
#include <batchrpc/batchrpc.hpp>
#include <batchrpc/stream.hpp>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <iostream>
#include <optional>
#include <span>
#include <stop_token>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "support/printing.hpp"

// snippet:begin fields
namespace shop {
struct Item {
  std::string sku;
  int quantity = 0;
  std::optional<std::string> note;  // may be absent (or null), and is left out when empty
};
BATCHRPC_FIELDS(Item, sku, quantity, note);  // the others required, unknown members ignored

enum class Priority { low, normal, urgent };
BATCHRPC_ENUM(Priority, low, normal, urgent);  // "low", "normal", "urgent"

struct Order {
  std::vector<Item> items;
  Priority priority = Priority::normal;
};
BATCHRPC_FIELDS_DEFAULTED(Order, items, priority);  // an absent field keeps its default
}  // namespace shop
// snippet:end

// The object behind the README's member-function handler.
class Inventory {
 public:
  [[nodiscard]] int stock(const std::string& sku) const { return sku == "A1" ? 7 : 0; }
};

TEST_SUITE("readme") {
  TEST_CASE("snippet: your own types") {
    rpc::Router router;
    Inventory inventory;
    // snippet:begin fields_use
    router.add("place", [](const shop::Order& order) { return order.items; }, rpc::names("order"));
    router.add("stock", &Inventory::stock, inventory);  // the object must outlive the router
    // snippet:end
    CHECK(router.handle(R"({"jsonrpc":"2.0","method":"place","params":{"order":{"items":[{"sku":"A1","quantity":1},{"sku":"B2","quantity":3,"note":"gift"}],"priority":"urgent"}},"id":1})") ==
          std::optional<std::string>(R"({"jsonrpc":"2.0","id":1,"result":[{"sku":"A1","quantity":1},{"sku":"B2","quantity":3,"note":"gift"}]})"));
    // snippet:begin fields_error
    // {"order":{"items":[{"sku":"A1","quantity":1},{"sku":"B2","quantity":"3"}],"priority":"low"}} is answered
    // -32602 Invalid params, data {"param":"order","reason":"items: element 1: quantity: expected an integer"}
    // snippet:end
    CHECK(router.handle(R"({"jsonrpc":"2.0","method":"place","params":{"order":{"items":[{"sku":"A1","quantity":1},{"sku":"B2","quantity":"3"}],"priority":"low"}},"id":1})") ==
          std::optional<std::string>(R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":"order","reason":"items: element 1: quantity: expected an integer"}}})"));
    CHECK(router.handle(R"({"jsonrpc":"2.0","method":"place","params":{"order":{"items":[],"priority":"high"}},"id":1})") ==
          std::optional<std::string>(R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":"order","reason":"priority: expected one of \"low\", \"normal\", \"urgent\""}}})"));
    CHECK(router.handle(R"({"jsonrpc":"2.0","method":"place","params":{"order":{"items":[{"sku":"A1"}]}},"id":1})") ==
          std::optional<std::string>(R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":"order","reason":"items: element 0: missing field \"quantity\""}}})"));
    CHECK(router.handle(R"({"jsonrpc":"2.0","method":"place","params":{"order":{}},"id":1})") ==
          std::optional<std::string>(R"({"jsonrpc":"2.0","id":1,"result":[]})"));
    CHECK(router.handle(R"({"jsonrpc":"2.0","method":"stock","params":["A1"],"id":1})") ==
          std::optional<std::string>(R"({"jsonrpc":"2.0","id":1,"result":7})"));
  }

  TEST_CASE("snippet: a struct as the whole params") {
    rpc::Router router;
    // snippet:begin fields_whole
    router.add("reorder", [](const shop::Order& order) { return order.items.size(); });
    // params {"items":[{"sku":"A1","quantity":2}],"priority":"urgent"}, or [{"items":[...]}] by position
    // snippet:end
    CHECK(router.handle(R"({"jsonrpc":"2.0","method":"reorder","params":{"items":[{"sku":"A1","quantity":2}],"priority":"urgent"},"id":1})") ==
          std::optional<std::string>(R"({"jsonrpc":"2.0","id":1,"result":1})"));
    CHECK(router.handle(R"({"jsonrpc":"2.0","method":"reorder","params":[{"items":[]}],"id":1})") ==
          std::optional<std::string>(R"({"jsonrpc":"2.0","id":1,"result":0})"));
    CHECK(router.handle(R"({"jsonrpc":"2.0","method":"reorder","params":{"items":[{"sku":"A1"}]},"id":1})") ==
          std::optional<std::string>(R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"reason":"items: element 0: missing field \"quantity\""}}})"));
  }

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

  TEST_CASE("snippet: two-way sessions") {
    rpc::Router router;
    // snippet:begin peer
    router.add("client_roots", [](rpc::Context& ctx, rpc::Responder done) {
      ctx.peer().notify("notifications/message", rpc::named("level", "info", "data", "asking"));
      ctx.peer().request("roots/list", rpc::json("{}"), [done](rpc::Reply reply) {
        if (reply.ok()) {
          done.resolve(reply.result());  // the client's answer, as it sent it
        } else {
          done.reject(*reply.error());
        }
      });
    });
    // snippet:end
    std::vector<std::string> to_client;
    rpc::Session session{router};
    session.attach([&](std::string message) {
      to_client.push_back(std::move(message));
      return true;
    });
    std::optional<std::string> reply;
    session.handle(R"({"jsonrpc":"2.0","method":"client_roots","id":1})",
                   [&](std::optional<std::string_view> r) { reply.emplace(r.value_or("none")); });
    CHECK(to_client == std::vector<std::string>{
                           R"({"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"asking"}})",
                           R"({"jsonrpc":"2.0","id":"srv-1","method":"roots/list","params":{}})"});
    CHECK_FALSE(reply);
    CHECK(session.handle(R"({"jsonrpc":"2.0","id":"srv-1","result":{"roots":[]}})") == std::nullopt);
    CHECK(reply == R"({"jsonrpc":"2.0","id":1,"result":{"roots":[]}})");
  }

  TEST_CASE("snippet: progress and log messages") {
    rpc::Router router;
    const auto index = [](std::string_view) {};
    // snippet:begin progress
    router.add("index", [&](std::vector<std::string> files, rpc::Context& ctx) {
      const rpc::Progress progress(ctx);  // MCP's progressToken or LSP's workDoneToken, if sent
      for (std::size_t i = 0; i < files.size() && !ctx.stop_requested(); ++i) {
        index(files[i]);
        progress.report(static_cast<double>(i + 1), static_cast<double>(files.size()), files[i]);
      }
      progress.end("indexed");  // LSP's "end"; MCP has none
      rpc::mcp::log(ctx.peer(), rpc::mcp::LogLevel::info, "index done");
      return files.size();
    }, rpc::names("files"));
    // snippet:end
    std::vector<std::string> to_client;
    rpc::Session session{router};
    session.attach([&](std::string message) {
      to_client.push_back(std::move(message));
      return true;
    });
    CHECK(session.handle(R"({"jsonrpc":"2.0","method":"index","id":1,"params":{"files":["a","b"],"_meta":{"progressToken":"p"}}})") ==
          R"({"jsonrpc":"2.0","id":1,"result":2})");
    CHECK(to_client == std::vector<std::string>{
                           R"({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1,"total":2,"message":"a"}})",
                           R"({"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":2,"total":2,"message":"b"}})",
                           R"({"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"index done"}})"});
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

  TEST_CASE("snippet: a stop callback that answers at once") {
    rpc::Router router;
    rpc::add_builtins(router);
    std::mutex m;
    // snippet:begin stop_callback
    using OnCancel = std::stop_callback<std::function<void()>>;
    std::vector<std::unique_ptr<OnCancel>> waiting;  // guarded by `m`; an event source answers later
    router.add("wait_for_event", [&](rpc::Responder done) {
      auto on_cancel = std::make_unique<OnCancel>(done.stop_token(), [done] { done.reject(rpc::cancelled()); });
      std::lock_guard lock(m);
      waiting.push_back(std::move(on_cancel));
    });
    // snippet:end
    rpc::Session session(router);
    std::optional<std::string> reply;
    session.handle(R"({"jsonrpc":"2.0","method":"wait_for_event","id":7})",
                   [&](std::optional<std::string_view> r) { reply.emplace(*r); });
    CHECK_FALSE(reply.has_value());
    CHECK(session.handle(R"({"jsonrpc":"2.0","method":"notifications/cancel","params":{"id":7}})") == std::nullopt);
    CHECK(reply == R"({"jsonrpc":"2.0","id":7,"error":{"code":-32800,"message":"Request cancelled"}})");
  }

  TEST_CASE("snippet: serving a stream") {
    rpc::Router router;
    router.add("add", [](int a, int b) { return a + b; });
    int to_server[2];
    int from_server[2];
    REQUIRE(::pipe(to_server) == 0);
    REQUIRE(::pipe(from_server) == 0);
    const std::string input = R"({"jsonrpc":"2.0","method":"add","params":[1,2],"id":1})" "\n";
    REQUIRE(::write(to_server[1], input.data(), input.size()) == static_cast<ssize_t>(input.size()));
    ::close(to_server[1]);
    const int in_fd = to_server[0];
    const int out_fd = from_server[1];
    {
      // snippet:begin stdio
      rpc::ThreadPool pool{4};
      rpc::Session session{router, {.executor = &pool}};  // reading goes on while handlers run
      rpc::serve_stream(session, in_fd, out_fd, {.framing = rpc::Framing::lines});
      // snippet:end
    }
    ::close(in_fd);
    ::close(out_fd);
    char buffer[128];
    const ssize_t n = ::read(from_server[0], buffer, sizeof buffer);
    ::close(from_server[0]);
    REQUIRE(n > 0);
    CHECK(std::string(buffer, static_cast<std::size_t>(n)) == R"({"jsonrpc":"2.0","id":1,"result":3})" "\n");
  }

  TEST_CASE("snippet: tools and the batch tool") {
    rpc::Router router;
    router.add("resolve_symbol", [](std::string query) { return "T:" + query; }, rpc::names("query"));
    // snippet:begin tools
    rpc::Tools tools{router};                       // registers tools/list and tools/call
    tools.expose("resolve_symbol", {.description = "Finds a symbol.",
                                    .input_schema = rpc::json(R"({"type":"object"})")});
    tools.add_batch_tool();                         // the `batch` tool
    // snippet:end
    CHECK(router.handle(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"batch","arguments":)"
                        R"({"operations":[{"tool":"resolve_symbol","arguments":{"query":"X"}}]}}})") ==
          R"({"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{\"success\":true,\"operationCount\":1,)"
          R"(\"completedCount\":1,\"failedCount\":0,\"stoppedEarly\":false,\"results\":[{\"tool\":\"resolve_symbol\",)"
          R"(\"result\":\"T:X\"}],\"meta\":{\"truncated\":false,\"totalOutputChars\":5}}"}],"structuredContent":)"
          R"({"success":true,"operationCount":1,"completedCount":1,"failedCount":0,"stoppedEarly":false,)"
          R"("results":[{"tool":"resolve_symbol","result":"T:X"}],"meta":{"truncated":false,"totalOutputChars":5}},"isError":false}})");
  }

  TEST_CASE("snippet: client side") {
    rpc::Router router;
    router.add("subtract", [](int minuend, int subtrahend) { return minuend - subtrahend; },
               rpc::names("minuend", "subtrahend"));
    router.add("update", [](const rpc::Params&) {});
    std::ostringstream captured;
    std::streambuf* const previous = std::cout.rdbuf(captured.rdbuf());
    // snippet:begin client
    rpc::BatchBuilder batch;
    const auto diff = batch.call("subtract", rpc::positional(42, 23));
    const auto sum = batch.call("subtract", rpc::named("minuend", 1, "subtrahend", 2));
    batch.notify("update", rpc::positional(1, 2, 3));
    const rpc::Replies replies = rpc::correlate(batch, router.handle(batch.text()));  // any transport
    if (replies.complete()) std::cout << replies.result<int>(diff) + replies.result<int>(sum) << "\n";
    // snippet:end
    std::cout.rdbuf(previous);
    CHECK(batch.text() ==
          R"([{"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1},)"
          R"({"jsonrpc":"2.0","method":"subtract","params":{"minuend":1,"subtrahend":2},"id":2},)"
          R"({"jsonrpc":"2.0","method":"update","params":[1,2,3]}])");
    CHECK(captured.str() == "18\n");
  }

  TEST_CASE("snippet: batch-aware methods") {
    rpc::Router router;
    // snippet:begin batched
    router.add_batched("square", [](std::span<rpc::BatchCall> calls) {
      for (rpc::BatchCall& call : calls) {  // every call of "square" in this batch, in order
        const rpc::Value* x = call.params().at(0);
        if (x == nullptr || !x->IsNumber()) {
          call.reject(rpc::Error{rpc::ErrorCode::invalid_params, "expected a number"});
          continue;
        }
        call.result().number(x->GetDouble() * x->GetDouble());
      }
    });
    // snippet:end
    CHECK(router.handle(R"([{"jsonrpc":"2.0","method":"square","params":[3],"id":1},)"
                        R"({"jsonrpc":"2.0","method":"square","params":["x"],"id":2},)"
                        R"({"jsonrpc":"2.0","method":"square","params":[1.5],"id":3}])") ==
          R"([{"jsonrpc":"2.0","id":1,"result":9},)"
          R"({"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"expected a number"}},)"
          R"({"jsonrpc":"2.0","id":3,"result":2.25}])");
  }

  TEST_CASE("snippet: batching across messages") {
    rpc::Router router;
    std::atomic<int> groups{0};
    router.add_batched("square", [&groups](std::span<rpc::BatchCall> calls) {
      ++groups;
      for (rpc::BatchCall& call : calls) {
        const double x = call.params().at(0)->GetDouble();
        call.result().number(x * x);
      }
    });
    // snippet:begin coalesce
    router.coalesce("square", {.max_wait = std::chrono::microseconds(500), .max_group = 128});
    // snippet:end
    rpc::Session a(router);
    rpc::Session b(router);
    CHECK(a.handle(R"({"jsonrpc":"2.0","method":"square","params":[3],"id":1})") ==
          R"({"jsonrpc":"2.0","id":1,"result":9})");
    CHECK(b.handle(R"({"jsonrpc":"2.0","method":"square","params":[4],"id":1})") ==
          R"({"jsonrpc":"2.0","id":1,"result":16})");
    CHECK(groups == 2);  // one lone call after the other: each ran at once, alone
  }
}
