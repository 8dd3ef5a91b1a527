// SPDX-License-Identifier: MIT
// Tools: tools/list, tools/call of router methods, and the batch tool of seed 004.
#include <batchrpc/tools.hpp>

#include <batchrpc/builtins.hpp>
#include <batchrpc/context.hpp>
#include <batchrpc/error.hpp>
#include <batchrpc/executor.hpp>
#include <batchrpc/json.hpp>
#include <batchrpc/responder.hpp>
#include <batchrpc/router.hpp>
#include <batchrpc/session.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <latch>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>

#include <doctest/doctest.h>

#include "support/printing.hpp"
#include "common/cancellable_sleep.hpp"

namespace {

using namespace std::chrono_literals;

const std::string default_guidance = rpc::BatchToolOptions{}.guidance;

// Tools shaped like the seed's, plus ones that count, fail, wait, answer later or are gated.
struct Fixture {
  std::atomic<int> runs{0};
  std::atomic<int> blocked{0};
  std::atomic<int> waiting{0};
  std::latch gate{1};  // "block" waits until it opens
  rpc::Router router;
  rpc::Tools tools;

  explicit Fixture(rpc::Limits limits = {}, rpc::ToolsOptions options = {})
      : router(limits), tools(add_methods(router, *this), options) {
    tools.expose("resolve_symbol", {.description = "Finds a symbol.",
                                    .input_schema = rpc::json(R"({"type":"object","required":["query"]})")})
        .expose("find_references")
        .expose("text", {.guidance = "Read it directly."})
        .expose("count")
        .expose("fail")
        .expose("embed")
        .expose("subtract")
        .expose("later")
        .expose("abandon")
        .expose("block")
        .expose("wait")
        .expose("utf8")
        .expose("ping")
        .add_batch_tool();
  }

  static rpc::Router& add_methods(rpc::Router& router, Fixture& f) {
    rpc::add_builtins(router, {.server_name = "test", .server_version = "1"});
    router.add("resolve_symbol", [](std::string query, std::string kinds) {
      return rpc::json(R"({"success":true,"symbolKey":"T:)" + query + R"(","kind":")" + kinds + "\"}");
    }, rpc::names("query", "kinds"));
    router.add("find_references", [](std::string key, std::string group) {
      return rpc::json(R"({"success":true,"groupBy":")" + group + R"(","referenceCount":2,"key":")" + key + "\"}");
    }, rpc::names("symbolKey", "groupBy"));
    // A string of n 'x': its output is n + 2 chars.
    router.add("text", [](std::size_t n) { return std::string(n, 'x'); }, rpc::names("n"));
    router.add("count", [&f] { return ++f.runs; });
    router.add("fail", []() -> int {
      throw rpc::Error{-32050, "Quota \"exceeded\"\n", rpc::json(R"({"retryAfter": 1.50})")};
    });
    router.add("embed", [] { return 3; }, {.capability = "embed"});
    router.add("subtract", [](std::int64_t a, std::int64_t b) { return a - b; },
               rpc::names("minuend", "subtrahend"));
    router.add("later", [](int n, rpc::Responder done) { done.resolve(n * 2); }, rpc::names("n"));
    router.add("abandon", [](rpc::Responder) {});
    router.add("block", [&f] {
      ++f.blocked;
      f.gate.wait();
      return "opened";
    });
    router.add("wait", [&f](rpc::Context& ctx) -> bool {
      ++f.waiting;
      if (!spec::sleep_unless_cancelled(ctx.stop_token(), std::chrono::seconds(5))) throw rpc::cancelled();
      return false;
    });
    router.add("utf8", [] { return std::string("\xC3\xA9\xC3\xA9\xC3\xA9"); });  // "ééé": 8 bytes as JSON
    return router;
  }
};

std::string call(std::string_view id, std::string_view name, std::string_view arguments = {}) {
  std::string s = R"({"jsonrpc":"2.0","id":)" + std::string(id) + R"(,"method":"tools/call","params":{"name":")" +
                  std::string(name) + "\"";
  if (!arguments.empty()) s += R"(,"arguments":)" + std::string(arguments);
  return s + "}}";
}

std::string batch(std::string_view arguments) { return call("1", "batch", arguments); }

std::string escaped(std::string_view text) {
  std::string s;
  for (const char c : text) {
    if (c == '"' || c == '\\') s += '\\';
    s += c;
  }
  return s;
}

// The reply to a successful tools/call whose tool produced `r`.
std::string content(std::string_view id, std::string_view r, bool is_error = false, bool structured = true) {
  std::string s = R"({"jsonrpc":"2.0","id":)" + std::string(id) +
                  R"(,"result":{"content":[{"type":"text","text":")" + escaped(r) + "\"}]";
  if (structured && r.front() == '{') s += R"(,"structuredContent":)" + std::string(r);
  return s + R"(,"isError":)" + (is_error ? "true" : "false") + "}}";
}

std::string error(std::string_view id, int code, std::string_view message, std::string_view data = {}) {
  std::string s = R"({"jsonrpc":"2.0","id":)" + std::string(id) + R"(,"error":{"code":)" +
                  std::to_string(code) + R"(,"message":")" + std::string(message) + "\"";
  if (!data.empty()) s += R"(,"data":)" + std::string(data);
  return s + "}}";
}

std::string invalid(std::string_view data) { return error("1", -32602, "Invalid params", data); }

// The batch tool's report.
std::string report(bool success, int count, int completed, int failed, bool stopped,
                   std::string_view results, bool truncated, std::size_t chars,
                   std::string_view diagnostics = {}) {
  const auto b = [](bool v) { return std::string(v ? "true" : "false"); };
  std::string s = R"({"success":)" + b(success) + R"(,"operationCount":)" + std::to_string(count) +
                  R"(,"completedCount":)" + std::to_string(completed) + R"(,"failedCount":)" +
                  std::to_string(failed) + R"(,"stoppedEarly":)" + b(stopped) + R"(,"results":[)" +
                  std::string(results) + R"(],"meta":{"truncated":)" + b(truncated) +
                  R"(,"totalOutputChars":)" + std::to_string(chars) + "}";
  if (!diagnostics.empty()) s += R"(,"responseDiagnostics":)" + std::string(diagnostics);
  return s + "}";
}

std::string ok(std::string_view tool, std::string_view result) {
  return R"({"tool":")" + std::string(tool) + R"(","result":)" + std::string(result) + "}";
}

std::string failed(std::string_view tool, std::string_view error_object) {
  return R"({"tool":")" + std::string(tool) + R"(","error":)" + std::string(error_object) + "}";
}

std::string notice(int index, std::string_view tool, std::string_view guidance = default_guidance) {
  return R"({"operationIndex":)" + std::to_string(index) + R"(,"tool":")" + std::string(tool) +
         R"(","truncated":true,"successOnly":true,"executionStatus":"completed","guidance":")" +
         std::string(guidance) + "\"}";
}

const std::string gated_embed = R"({"code":-32601,"message":"Method not found","data":{"capability":"embed"}})";
const std::string fail_error =
    R"({"code":-32050,"message":"Quota \"exceeded\"\n","data":{"retryAfter": 1.50}})";

// `n` operations of `tool` (without arguments), as a JSON array.
std::string repeat(std::string_view tool, int n) {
  std::string s = "[";
  for (int i = 0; i < n; ++i) s += (i ? "," : "") + (R"({"tool":")" + std::string(tool) + "\"}");
  return s + "]";
}

}  // namespace

TEST_SUITE("tools") {
  // ---- Seed 004, verbatim ------------------------------------------------------------------------

  TEST_CASE("the seed's full MCP request runs both operations and answers the whole report") {
    Fixture f;
    const std::string seed = R"({
  "jsonrpc": "2.0",
  "id": 1,
  "method": "tools/call",
  "params": {
    "name": "batch",
    "arguments": {
      "operations": "[\n  { \"tool\": \"resolve_symbol\", \"arguments\": { \"query\": \"ISolutionManager\", \"kinds\": \"Type\" } },\n  { \"tool\": \"find_references\", \"arguments\": { \"symbolKey\": \"...\", \"groupBy\": \"project\" } }\n]"
    }
  }
})";
    const std::string expected =
        R"({"success":true,"operationCount":2,"completedCount":2,"failedCount":0,"stoppedEarly":false,)"
        R"("results":[{"tool":"resolve_symbol","result":{"success":true,"symbolKey":"T:ISolutionManager","kind":"Type"}},)"
        R"({"tool":"find_references","result":{"success":true,"groupBy":"project","referenceCount":2,"key":"..."}}],)"
        R"("meta":{"truncated":false,"totalOutputChars":130}})";
    CHECK(f.router.handle(seed) ==
          R"({"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":")" + escaped(expected) +
              R"("}],"structuredContent":)" + expected + R"(,"isError":false}})");
    // 130 = the two results' JSON text: 63 + 67 bytes.
    CHECK(std::string_view(R"({"success":true,"symbolKey":"T:ISolutionManager","kind":"Type"})").size() +
              std::string_view(R"({"success":true,"groupBy":"project","referenceCount":2,"key":"..."})").size() ==
          130);
    rpc::Session session(f.router);
    CHECK(session.handle(seed) == f.router.handle(seed));
  }

  TEST_CASE("operations as a string and as an array give the same reply") {
    Fixture f;
    const std::string array = R"([{"tool":"subtract","arguments":{"minuend":42,"subtrahend":23}},{"tool":"ping"}])";
    const std::string expected = content("1", report(true, 2, 2, 0, false, ok("subtract", "19") + "," + ok("ping", "{}"),
                                                     false, 4));
    CHECK(f.router.handle(batch(R"({"operations":)" + array + "}")) == expected);
    CHECK(f.router.handle(batch(R"({"operations":")" + escaped(array) + "\"}")) == expected);
    SUBCASE("empty: nothing runs, success") {
      CHECK(f.router.handle(batch(R"({"operations":[]})")) == content("1", report(true, 0, 0, 0, false, "", false, 0)));
      CHECK(f.router.handle(batch(R"({"operations":"[]"})")) == content("1", report(true, 0, 0, 0, false, "", false, 0)));
    }
  }

  // ---- tools/list ------------------------------------------------------------------------------

  TEST_CASE("tools/list describes every tool in registration order, gated ones only when granted") {
    rpc::Router router;
    router.add("embed", [] { return 3; }, {.capability = "embed"});
    router.add("subtract", [](int a, int b) { return a - b; }, rpc::names("minuend", "subtrahend"));
    rpc::Tools tools{router};
    tools.expose("subtract", {.description = "a - b",
                              .input_schema = rpc::json(R"({"type":"object","required":["minuend","subtrahend"]})")})
        .expose("embed");
    tools.add_batch_tool({.description = "Several at once.", .capability = "batching"});
    CHECK(tools.size() == 3);
    CHECK(tools.contains("batch"));
    CHECK_FALSE(tools.contains("tools/call"));

    const std::string list = R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})";
    const std::string subtract =
        R"({"name":"subtract","description":"a - b","inputSchema":{"type":"object","required":["minuend","subtrahend"]}})";
    const std::string embed = R"({"name":"embed","inputSchema":{"type":"object"}})";
    const std::string reply = *router.handle(list);  // the trusted path lists everything
    CHECK(reply.starts_with(R"({"jsonrpc":"2.0","id":1,"result":{"tools":[)" + subtract + "," + embed +
                            R"(,{"name":"batch","description":"Several at once.","inputSchema":{"type":"object","properties":{"operations":)"));
    CHECK(reply.ends_with(R"("required":["operations"]}}]}})"));

    rpc::Session none(router);
    CHECK(none.handle(list) == R"({"jsonrpc":"2.0","id":1,"result":{"tools":[)" + subtract + "]}}");
    rpc::Session embedding(router, {.capabilities = {"embed"}});
    CHECK(embedding.handle(list) == R"({"jsonrpc":"2.0","id":1,"result":{"tools":[)" + subtract + "," + embed + "]}}");
    rpc::Session batching(router, {.capabilities = {"batching"}});
    CHECK(batching.handle(list).value().starts_with(R"({"jsonrpc":"2.0","id":1,"result":{"tools":[)" + subtract +
                                                    R"(,{"name":"batch")"));

    SUBCASE("MCP's params: {} and a null cursor are fine; any other cursor is -32602") {
      CHECK(router.handle(R"({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":null}})") == reply);
      CHECK(router.handle(R"({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}})") == reply);
      CHECK(router.handle(R"({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"2"}})") ==
            invalid(R"({"param":"cursor","reason":"unknown cursor: every tool is on the first page"})"));
    }
  }

  TEST_CASE("the batch tool's inputSchema carries the seed's parameters and defaults") {
    rpc::Router router;
    rpc::Tools tools{router};
    tools.add_batch_tool();
    CHECK(router.handle(R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})") ==
          R"({"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"batch","description":"Runs multiple tool operations sequentially in one request.",)"
          R"("inputSchema":{"type":"object","properties":{)"
          R"("operations":{"type":["array","string"],"description":"Operations to run, in order. JSON array of objects like { \"tool\": \"get_type_info\", \"arguments\": { ... } }, or a string holding one.",)"
          R"("items":{"type":"object","properties":{"tool":{"type":"string"},"arguments":{"type":"object"}},"required":["tool"]}},)"
          R"("stopOnError":{"type":"boolean","default":false,"description":"When true, stops after the first failure. Default is false."},)"
          R"("maxOperations":{"type":"integer","minimum":0,"default":25,"description":"Maximum number of operations allowed. Use 0 for unlimited. Default is 25."},)"
          R"("maxTotalOutputChars":{"type":"integer","minimum":0,"default":200000,"description":"Budget for complete inner outputs. Default 200000; 0 disables this budget. The server response ceiling still applies. Omitted outputs retain execution status and recovery guidance."},)"
          R"("responseDetail":{"type":"string","enum":["compact","full"],"default":"compact","description":"compact returns results and actionable state. full adds diagnostic metadata under responseDiagnostics."}},)"
          R"("required":["operations"]}}]}})");
  }

  // ---- tools/call of a method ----------------------------------------------------------------

  TEST_CASE("tools/call runs the method with arguments as its params and wraps the result for MCP") {
    Fixture f;
    CHECK(f.router.handle(call("1", "subtract", R"({"minuend":42,"subtrahend":23})")) == content("1", "19"));
    CHECK(f.router.handle(call("1", "ping", R"({"nonce":"n"})")) == content("1", R"({"nonce":"n"})"));
    CHECK(f.router.handle(call("\"a\"", "count")) == content("\"a\"", "1"));
    SUBCASE("by position, with null arguments, and with MCP's _meta beside them") {
      CHECK(f.router.handle(call("1", "subtract", "[42,23]")) == content("1", "19"));
      CHECK(f.router.handle(call("1", "ping", "null")) == content("1", "{}"));
      CHECK(f.router.handle(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":1},"name":"ping"}})") ==
            content("1", "{}"));
    }
    SUBCASE("a Responder's answer, or its abandonment, is what the tool answers") {
      CHECK(f.router.handle(call("1", "later", R"({"n":21})")) == content("1", "42"));
      CHECK(f.router.handle(call("1", "abandon")) == error("1", -32603, "Internal error"));
    }
    SUBCASE("without structuredContent when asked") {
      Fixture plain({}, {.structured_content = false});
      CHECK(plain.router.handle(call("1", "ping", R"({"nonce":"n"})")) == content("1", R"({"nonce":"n"})", false, false));
    }
  }

  TEST_CASE("a tool's error is the method's own error, byte for byte") {
    Fixture f;
    const auto direct = [&](std::string_view method, std::string_view params) {
      return f.router.handle(R"({"jsonrpc":"2.0","id":1,"method":")" + std::string(method) + R"(","params":)" +
                             std::string(params) + "}");
    };
    CHECK(f.router.handle(call("1", "subtract", R"({"minuend":"x"})")) ==
          invalid(R"({"param":"minuend","reason":"expected an integer"})"));
    CHECK(f.router.handle(call("1", "subtract", R"({"minuend":"x"})")) == direct("subtract", R"({"minuend":"x"})"));
    CHECK(f.router.handle(call("1", "subtract", R"({"minuend":1})")) == direct("subtract", R"({"minuend":1})"));
    CHECK(f.router.handle(call("1", "fail", "{}")) == error("1", -32050, R"(Quota \"exceeded\"\n)", R"({"retryAfter": 1.50})"));
    CHECK(f.router.handle(call("1", "fail", "{}")) == direct("fail", "{}"));
  }

  TEST_CASE("tools/call's own params are checked like any method's") {
    Fixture f;
    const auto handle = [&](std::string_view params) {
      return f.router.handle(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":)" + std::string(params) + "}");
    };
    CHECK(handle(R"({"name":"nope"})") == invalid(R"({"param":"name","reason":"unknown tool: nope"})"));
    CHECK(handle(R"({"name":"info"})") == invalid(R"({"param":"name","reason":"unknown tool: info"})"));  // not exposed
    CHECK(handle(R"({"arguments":{}})") == invalid(R"({"param":"name","reason":"missing required parameter"})"));
    CHECK(handle(R"({"name":1})") == invalid(R"({"param":"name","reason":"expected a string"})"));
    CHECK(handle(R"({"name":"ping","name":"count"})") == invalid(R"({"param":"name","reason":"duplicate parameter"})"));
    CHECK(handle(R"({"name":"ping","arguments":"x"})") == invalid(R"x({"param":"arguments","reason":"expected an object (or an array, by position)"})x"));
    CHECK(handle(R"(["ping"])") ==
          invalid(R"({"reason":"tools/call takes named params: {\"name\": ..., \"arguments\": {...}}"})"));
  }

  TEST_CASE("a gated tool is -32601 with data.capability through a session, and runs on the trusted path") {
    Fixture f;
    rpc::Session session(f.router);
    CHECK(session.handle(call("1", "embed")) == error("1", -32601, "Method not found", R"({"capability":"embed"})"));
    rpc::Session granted(f.router, {.capabilities = {"embed"}});
    CHECK(granted.handle(call("1", "embed")) == content("1", "3"));
    CHECK(f.router.handle(call("1", "embed")) == content("1", "3"));
  }

  TEST_CASE("a tool may be named apart from its method: called, listed and gated by that name") {
    rpc::Router router;
    router.add("math/subtract", [](int a, int b) { return a - b; }, rpc::names("minuend", "subtrahend"),
               {.capability = "math"});
    rpc::Tools tools(router);
    tools.expose("math/subtract", {.name = "subtract"}).add_batch_tool();
    CHECK(router.handle(call("1", "subtract", R"({"minuend":42,"subtrahend":23})")) == content("1", "19"));
    CHECK(router.handle(call("2", "math/subtract", "{}")) ==
          error("2", -32602, "Invalid params", R"({"param":"name","reason":"unknown tool: math/subtract"})"));
    rpc::Session session(router);
    CHECK(session.handle(call("3", "subtract", "{}")) == error("3", -32601, "Method not found", R"({"capability":"math"})"));
    rpc::Session granted(router, {.capabilities = {"math"}});
    const auto listed = granted.handle(R"({"jsonrpc":"2.0","id":4,"method":"tools/list"})");
    REQUIRE(listed);
    CHECK(listed->find(R"("name":"subtract")") != std::string::npos);
    CHECK(listed->find("math/subtract") == std::string::npos);
    const auto batch = granted.handle(call("5", "batch", R"({"operations":[{"tool":"subtract","arguments":[5,3]}]})"));
    REQUIRE(batch);
    CHECK(batch->find(R"({\"tool\":\"subtract\",\"result\":2})") != std::string::npos);
    CHECK_THROWS_AS(tools.expose("math/subtract", {.name = "subtract"}), std::invalid_argument);  // taken
    CHECK_THROWS_AS(tools.expose("math/subtract", {.name = "batch"}), std::invalid_argument);
  }

  TEST_CASE("a notification tools/call runs its tool and answers nothing") {
    Fixture f;
    CHECK_FALSE(f.router.handle(R"({"jsonrpc":"2.0","method":"tools/call","params":{"name":"batch","arguments":{"operations":[{"tool":"count"},{"tool":"count"}]}}})"));
    CHECK(f.runs == 2);
  }

  TEST_CASE("a schema written over several lines is listed on one (line-framed transports need it)") {
    rpc::Router router;
    router.add("m", [] { return 1; });
    rpc::Tools tools{router};
    tools.expose("m", {.input_schema = rpc::json(" {\n  \"type\": \"object\",\n  \"minimum\": 0.1\n}\n")});
    CHECK(router.handle(R"({"jsonrpc":"2.0","method":"tools/list","id":1})") ==
          R"({"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"m","inputSchema":{"type":"object","minimum":0.1}}]}})");
  }

  TEST_CASE("registration refuses what cannot work") {
    rpc::Router router;
    router.add("m", [] { return 1; });
    rpc::Tools tools{router};
    CHECK_THROWS_AS(tools.expose("missing"), std::invalid_argument);
    CHECK_THROWS_AS(tools.expose("tools/call"), std::invalid_argument);
    CHECK_THROWS_AS(tools.expose("tools/list"), std::invalid_argument);
    CHECK_THROWS_AS(tools.expose("m", {.input_schema = rpc::json("[1]")}), std::invalid_argument);
    tools.expose("m", {.input_schema = rpc::json(R"( {"type":"object"})")});
    CHECK_THROWS_AS(tools.expose("m"), std::invalid_argument);
    tools.add_batch_tool();
    CHECK_THROWS_AS(tools.add_batch_tool(), std::invalid_argument);
    CHECK_THROWS_AS(tools.add_batch_tool({.name = ""}), std::invalid_argument);
    CHECK_THROWS_AS(rpc::Tools{router}, std::invalid_argument);  // tools/list is taken
    rpc::Router other;
    other.add("batch", [] { return 1; });
    rpc::Tools more{other};
    more.add_batch_tool();
    CHECK_THROWS_AS(more.expose("batch"), std::invalid_argument);
  }

  TEST_CASE("the registry outlives the Tools object that filled it") {
    rpc::Router router;
    router.add("m", [] { return 1; });
    {
      rpc::Tools tools{router};
      tools.expose("m").add_batch_tool();
    }
    CHECK(router.handle(call("1", "m")) == content("1", "1"));
  }

  // ---- The batch tool: parameters, defaults and edges ------------------------------------------

  TEST_CASE("stopOnError: false by default (every operation runs), true stops after the first failure") {
    Fixture f;
    const std::string ops = R"([{"tool":"count"},{"tool":"fail"},{"tool":"count"}])";
    const std::string all = report(false, 3, 2, 1, false, ok("count", "1") + "," + failed("fail", fail_error) + "," + ok("count", "2"), false, 2);
    CHECK(f.router.handle(batch(R"({"operations":)" + ops + "}")) == content("1", all, true));
    CHECK(f.router.handle(batch(R"({"operations":)" + ops + R"(,"stopOnError":false})")) ==
          content("1", report(false, 3, 2, 1, false, ok("count", "3") + "," + failed("fail", fail_error) + "," + ok("count", "4"), false, 2), true));
    CHECK(f.runs == 4);
    CHECK(f.router.handle(batch(R"({"operations":)" + ops + R"(,"stopOnError":true})")) ==
          content("1", report(false, 3, 1, 1, true, ok("count", "5") + "," + failed("fail", fail_error), false, 1), true));
    CHECK(f.runs == 5);
    SUBCASE("a failure in the last operation stops nothing") {
      CHECK(f.router.handle(batch(R"({"operations":[{"tool":"count"},{"tool":"fail"}],"stopOnError":true})")) ==
            content("1", report(false, 2, 1, 1, false, ok("count", "6") + "," + failed("fail", fail_error), false, 1), true));
    }
  }

  TEST_CASE("maxOperations: 25 by default, 0 = unlimited, more is -32602 and nothing runs") {
    Fixture f;
    CHECK(f.router.handle(batch(R"({"operations":)" + repeat("count", 26) + "}")) ==
          invalid(R"j({"param":"operations","reason":"more operations than maxOperations (25)","max":25})j"));
    CHECK(f.router.handle(batch(R"({"operations":")" + escaped(repeat("count", 26)) + "\"}")) ==
          invalid(R"j({"param":"operations","reason":"more operations than maxOperations (25)","max":25})j"));
    CHECK(f.runs == 0);
    CHECK(f.router.handle(batch(R"({"operations":)" + repeat("count", 25) + "}")).value().find(R"("completedCount":25,)") !=
          std::string::npos);
    CHECK(f.runs == 25);
    CHECK(f.router.handle(batch(R"({"operations":)" + repeat("count", 40) + R"(,"maxOperations":0})")).value().find(
              R"("completedCount":40,)") != std::string::npos);
    CHECK(f.runs == 65);
    CHECK(f.router.handle(batch(R"({"operations":)" + repeat("count", 3) + R"(,"maxOperations":2})")) ==
          invalid(R"j({"param":"operations","reason":"more operations than maxOperations (2)","max":2})j"));
    CHECK(f.runs == 65);
  }

  TEST_CASE("the router's max_batch bounds a batch even with maxOperations 0") {
    Fixture f(rpc::Limits{.max_batch = 3});
    const std::string refused =
        invalid(R"({"param":"operations","reason":"more operations than the server's limit of 3 per batch","max":3})");
    CHECK(f.router.handle(batch(R"({"operations":)" + repeat("count", 4) + R"(,"maxOperations":0})")) == refused);
    CHECK(f.router.handle(batch(R"({"operations":")" + escaped(repeat("count", 4)) + R"(","maxOperations":0})")) == refused);
    CHECK(f.router.handle(batch(R"({"operations":)" + repeat("count", 4) + R"(,"maxOperations":10})")) == refused);
    CHECK(f.router.handle(batch(R"({"operations":)" + repeat("count", 4) + "}")) == refused);
    CHECK(f.runs == 0);
    CHECK(f.router.handle(batch(R"({"operations":)" + repeat("count", 3) + R"(,"maxOperations":0})")).value().find(
              R"("completedCount":3,)") != std::string::npos);
  }

  TEST_CASE("maxTotalOutputChars: 200000 by default, 0 = no budget") {
    Fixture f;
    const std::string big = "\"" + std::string(200000, 'x') + "\"";  // 200002 chars
    CHECK(f.router.handle(batch(R"({"operations":[{"tool":"text","arguments":{"n":200000}}]})")) ==
          content("1", report(true, 1, 1, 0, false, notice(1, "text", "Read it directly."), true,
                              notice(1, "text", "Read it directly.").size())));
    CHECK(f.router.handle(batch(R"({"operations":[{"tool":"text","arguments":{"n":200000}}],"maxTotalOutputChars":0})")) ==
          content("1", report(true, 1, 1, 0, false, ok("text", big), false, 200002)));
    SUBCASE("a result that just fits the default budget is kept") {
      const std::size_t n = 200000 - 2;
      CHECK(f.router.handle(batch(R"({"operations":[{"tool":"text","arguments":{"n":)" + std::to_string(n) + "}}]}")) ==
            content("1", report(true, 1, 1, 0, false, ok("text", "\"" + std::string(n, 'x') + "\""), false, 200000)));
    }
  }

  TEST_CASE("budget: an output that does not fit becomes its notice, a later small one still fits") {
    Fixture f;
    const std::string n1 = notice(1, "text", "Read it directly.");
    const std::string n2 = notice(2, "text", "Read it directly.");
    const std::string n3 = notice(3, "text", "Read it directly.");
    const std::size_t budget = n1.size() + n2.size() + n3.size() + 60;
    const std::string ops = R"([{"tool":"text","arguments":{"n":50}},{"tool":"text","arguments":{"n":5000}},)"
                            R"({"tool":"text","arguments":{"n":10}}])";
    CHECK(f.router.handle(batch(R"({"operations":)" + ops + R"(,"maxTotalOutputChars":)" + std::to_string(budget) + "}")) ==
          content("1", report(true, 3, 3, 0, false,
                              ok("text", "\"" + std::string(50, 'x') + "\"") + "," + n2 + "," +
                                  ok("text", "\"" + std::string(10, 'x') + "\""),
                              true, 52 + n2.size() + 12)));

    SUBCASE("the room left is the budget minus what is used and the later operations' notices") {
      // Alone, with the budget exactly its notice: a result of that size fits, one char more does not.
      const std::size_t exact = n1.size();
      const auto one = [&](std::size_t chars) {
        return f.router.handle(batch(R"({"operations":[{"tool":"text","arguments":{"n":)" + std::to_string(chars - 2) +
                                     R"(}}],"maxTotalOutputChars":)" + std::to_string(exact) + "}"));
      };
      CHECK(one(exact) == content("1", report(true, 1, 1, 0, false, ok("text", "\"" + std::string(exact - 2, 'x') + "\""),
                                              false, exact)));
      CHECK(one(exact + 1) == content("1", report(true, 1, 1, 0, false, n1, true, exact)));
    }
    SUBCASE("errors are always kept and are not counted") {
      const std::size_t tight = notice(1, "fail").size() + n2.size();
      CHECK(f.router.handle(batch(R"({"operations":[{"tool":"fail"},{"tool":"text","arguments":{"n":1}}],"maxTotalOutputChars":)" +
                                  std::to_string(tight) + "}")) ==
            content("1", report(false, 2, 1, 1, false, failed("fail", fail_error) + "," + ok("text", R"("x")"), false, 3), true));
    }
  }

  TEST_CASE("when even the completion notices cannot fit, nothing runs and the reply says why") {
    Fixture f;
    const std::size_t needed = notice(1, "count").size() + notice(2, "count").size();
    CHECK(f.router.handle(batch(R"({"operations":[{"tool":"count"},{"tool":"count"}],"maxTotalOutputChars":)" +
                                std::to_string(needed - 1) + "}")) ==
          invalid(R"({"param":"maxTotalOutputChars","reason":"the completion notices of 2 operations need )" +
                  std::to_string(needed) + R"( chars, more than maxTotalOutputChars ()" + std::to_string(needed - 1) +
                  R"(): raise it, use 0 for no budget, or send fewer operations","required":)" + std::to_string(needed) + "}"));
    CHECK(f.runs == 0);
    CHECK(f.router.handle(batch(R"({"operations":[{"tool":"count"},{"tool":"count"}],"maxTotalOutputChars":)" +
                                std::to_string(needed) + "}")) ==
          content("1", report(true, 2, 2, 0, false, ok("count", "1") + "," + ok("count", "2"), false, 2)));
  }

  TEST_CASE("responseDetail: compact by default, full adds responseDiagnostics") {
    Fixture f;
    rpc::Session session(f.router);
    const std::string ops = R"([{"tool":"utf8"},{"tool":"embed"},{"tool":"text","arguments":{"n":2000}},{"tool":"count"}])";
    const std::size_t reserved = notice(1, "utf8").size() + notice(2, "embed").size() +
                                 notice(3, "text", "Read it directly.").size() + notice(4, "count").size();
    const std::size_t budget = reserved + 100;
    const std::string results = ok("utf8", "\"\xC3\xA9\xC3\xA9\xC3\xA9\"") + "," + failed("embed", gated_embed) + "," +
                                notice(3, "text", "Read it directly.") + "," + ok("count", "1");
    const std::size_t chars = 8 + notice(3, "text", "Read it directly.").size() + 1;
    const std::string args = R"({"operations":)" + ops + R"(,"maxTotalOutputChars":)" + std::to_string(budget);
    CHECK(session.handle(batch(args + "}")) == content("1", report(false, 4, 3, 1, false, results, true, chars), true));
    CHECK(session.handle(batch(args + R"(,"responseDetail":"compact"})")) ==
          content("1", report(false, 4, 3, 1, false, ok("utf8", "\"\xC3\xA9\xC3\xA9\xC3\xA9\"") + "," +
                                                          failed("embed", gated_embed) + "," +
                                                          notice(3, "text", "Read it directly.") + "," + ok("count", "2"),
                              true, chars),
                  true));
    CHECK(session.handle(batch(args + R"(,"responseDetail":"full","stopOnError":false})")) ==
          content("1", report(false, 4, 3, 1, false,
                              ok("utf8", "\"\xC3\xA9\xC3\xA9\xC3\xA9\"") + "," + failed("embed", gated_embed) + "," +
                                  notice(3, "text", "Read it directly.") + "," + ok("count", "3"),
                              true, chars,
                              R"({"settings":{"stopOnError":false,"maxOperations":25,"maxTotalOutputChars":)" +
                                  std::to_string(budget) + R"(},"reservedNoticeChars":)" + std::to_string(reserved) +
                                  R"(,"stopReason":"none","operations":[)"
                                  R"({"operationIndex":1,"tool":"utf8","executionStatus":"completed","outputChars":8,"included":true},)"
                                  R"({"operationIndex":2,"tool":"embed","executionStatus":"failed","errorCode":-32601},)"
                                  R"({"operationIndex":3,"tool":"text","executionStatus":"completed","outputChars":2002,"included":false},)"
                                  R"({"operationIndex":4,"tool":"count","executionStatus":"completed","outputChars":1,"included":true}]})"),
                  true));
    SUBCASE("full also shows the operations that did not run, and why") {
      CHECK(session.handle(batch(R"({"operations":[{"tool":"embed"},{"tool":"count"}],"stopOnError":true,"responseDetail":"full","maxTotalOutputChars":0})")) ==
            content("1", report(false, 2, 0, 1, true, failed("embed", gated_embed), false, 0,
                                R"({"settings":{"stopOnError":true,"maxOperations":25,"maxTotalOutputChars":0},)"
                                R"("reservedNoticeChars":0,"stopReason":"stopOnError","operations":[)"
                                R"({"operationIndex":1,"tool":"embed","executionStatus":"failed","errorCode":-32601},)"
                                R"({"operationIndex":2,"tool":"count","executionStatus":"notRun"}]})"),
                    true));
    }
  }

  TEST_CASE("malformed arguments are -32602 naming the parameter, and nothing runs") {
    Fixture f;
    CHECK(f.router.handle(batch(R"({"operations":"[{\"tool\": }]"})")) ==
          invalid(R"j({"param":"operations","reason":"not valid JSON: Invalid value. (offset 10)"})j"));
    CHECK(f.router.handle(batch(R"({"operations":"[{\"tool\":\"count\"}] x"})")) ==
          invalid(R"j({"param":"operations","reason":"not valid JSON: The document root must not be followed by other values. (offset 19)"})j"));
    CHECK(f.router.handle(batch(R"({"operations":"{\"tool\":\"count\"}"})")) ==
          invalid(R"({"param":"operations","reason":"expected a JSON array of operations, or a string holding one"})"));
    CHECK(f.router.handle(batch(R"({"operations":5})")) ==
          invalid(R"({"param":"operations","reason":"expected a JSON array of operations, or a string holding one"})"));
    CHECK(f.router.handle(batch(R"({"operations":")" + std::string(200, '[') + std::string(200, ']') + "\"}")) ==
          invalid(R"({"param":"operations","reason":"nests deeper than 128","max":128})"));
    CHECK(f.router.handle(batch("{}")) == invalid(R"({"param":"operations","reason":"missing required parameter"})"));
    CHECK(f.router.handle(call("1", "batch")) == invalid(R"({"param":"operations","reason":"missing required parameter"})"));
    CHECK(f.router.handle(batch("[[]]")) == invalid(R"j({"reason":"the batch tool takes named arguments (an object)"})j"));
    CHECK(f.router.handle(batch(R"({"operations":[],"stopOnError":"yes"})")) ==
          invalid(R"({"param":"stopOnError","reason":"expected a boolean"})"));
    CHECK(f.router.handle(batch(R"({"operations":[],"maxOperations":-1})")) ==
          invalid(R"({"param":"maxOperations","reason":"integer out of range (0 to )" +
                  std::to_string(std::numeric_limits<std::size_t>::max()) + R"x()"})x"));
    CHECK(f.router.handle(batch(R"({"operations":[],"maxTotalOutputChars":1.5})")) ==
          invalid(R"({"param":"maxTotalOutputChars","reason":"expected an integer"})"));
    CHECK(f.router.handle(batch(R"({"operations":[],"responseDetail":"verbose"})")) ==
          invalid(R"({"param":"responseDetail","reason":"expected \"compact\" or \"full\""})"));
    CHECK(f.router.handle(batch(R"({"operations":[],"operation":[]})")) ==
          invalid(R"({"param":"operation","reason":"unknown parameter"})"));
    CHECK(f.router.handle(batch(R"({"operations":[],"operations":[]})")) ==
          invalid(R"({"param":"operations","reason":"duplicate parameter"})"));

    SUBCASE("a malformed operation is named by its 1-based operationIndex") {
      const auto op = [&](std::string_view second) {
        return f.router.handle(batch(R"({"operations":[{"tool":"count"},)" + std::string(second) + "]}"));
      };
      const auto at2 = [](std::string_view reason) {
        return invalid(R"({"param":"operations","operationIndex":2,"reason":")" + std::string(reason) + "\"}");
      };
      CHECK(op("1") == at2(R"(an operation must be an object: {\"tool\": name, \"arguments\": {...}})"));
      CHECK(op("{}") == at2(R"(missing \"tool\")"));
      CHECK(op(R"({"tool":5})") == at2(R"(\"tool\" must be a string)"));
      CHECK(op(R"({"tool":"count","arguments":"x"})") == at2(R"(\"arguments\" must be an object (or an array, by position))"));
      CHECK(op(R"({"tool":"count","args":{}})") == at2(R"(unknown member \"args\")"));
      CHECK(op(R"({"tool":"count","tool":"count"})") == at2(R"(duplicate member \"tool\")"));
      CHECK(op(R"({"tool":"count","arguments":null})").value().find(R"("completedCount":2)") != std::string::npos);
    }
    CHECK(f.runs <= 2);
  }

  TEST_CASE("an operation's own bad arguments fail that operation only, with the method's -32602") {
    Fixture f;
    CHECK(f.router.handle(batch(R"({"operations":[{"tool":"subtract","arguments":{"minuend":"x"}},{"tool":"count"}]})")) ==
          content("1", report(false, 2, 1, 1, false,
                              failed("subtract", R"({"code":-32602,"message":"Invalid params","data":{"param":"minuend","reason":"expected an integer"}})") +
                                  "," + ok("count", "1"),
                              false, 1),
                  true));
  }

  TEST_CASE("a batch inside a batch is refused, an unknown tool fails its operation only") {
    Fixture f;
    const std::string nested = R"({"tool":"batch","arguments":{"operations":[{"tool":"count"}]}})";
    CHECK(f.router.handle(batch(R"({"operations":[{"tool":"count"},)" + nested + R"(,{"tool":"nope"},{"tool":"count"}]})")) ==
          content("1", report(false, 4, 2, 2, false,
                              ok("count", "1") + "," +
                                  failed("batch", R"({"code":-32602,"message":"Invalid params","data":{"param":"tool","reason":"the batch tool cannot run inside a batch"}})") +
                                  "," +
                                  failed("nope", R"({"code":-32602,"message":"Invalid params","data":{"param":"tool","reason":"unknown tool: nope"}})") +
                                  "," + ok("count", "2"),
                              false, 2),
                  true));
    CHECK(f.runs == 2);
  }

  TEST_CASE("gating inside a batch fails that operation with the same -32601 data, not the batch") {
    Fixture f;
    rpc::Session session(f.router, {.capabilities = {"other"}});
    CHECK(session.handle(batch(R"({"operations":[{"tool":"embed"},{"tool":"count"}]})")) ==
          content("1", report(false, 2, 1, 1, false, failed("embed", gated_embed) + "," + ok("count", "1"), false, 1), true));
    CHECK(session.handle(batch(R"({"operations":[{"tool":"embed"},{"tool":"count"}],"stopOnError":true})")) ==
          content("1", report(false, 2, 0, 1, true, failed("embed", gated_embed), false, 0), true));
    rpc::Session granted(f.router, {.capabilities = {"embed"}});
    CHECK(granted.handle(batch(R"({"operations":[{"tool":"embed"}]})")) ==
          content("1", report(true, 1, 1, 0, false, ok("embed", "3"), false, 1)));
    SUBCASE("and a gated batch tool is refused as a whole") {
      rpc::Router router;
      router.add("m", [] { return 1; });
      rpc::Tools tools{router};
      tools.expose("m").add_batch_tool({.capability = "batching"});
      rpc::Session none(router);
      CHECK(none.handle(batch(R"({"operations":[{"tool":"m"}]})")) ==
            error("1", -32601, "Method not found", R"({"capability":"batching"})"));
    }
  }

  // ---- Cancellation ---------------------------------------------------------------------------

  TEST_CASE("cancelling tools/call stops the batch between operations and reports what completed") {
    Fixture f;
    rpc::Session session(f.router);
    std::optional<std::string> reply;
    std::thread caller([&] {
      reply = session.handle(call("7", "batch", R"({"operations":[{"tool":"block"},{"tool":"count"},{"tool":"count"}]})"));
    });
    while (f.blocked.load() == 0) std::this_thread::sleep_for(1ms);
    CHECK_FALSE(session.handle(R"({"jsonrpc":"2.0","method":"notifications/cancel","params":{"id":7}})"));
    f.gate.count_down();  // "block" completes normally; the next operation never starts
    caller.join();
    CHECK(reply == error("7", -32800, "Request cancelled",
                         report(false, 3, 1, 0, true, ok("block", R"("opened")"), false, 8)));
    CHECK(f.runs == 0);
  }

  TEST_CASE("a running operation sees the cancellation through its context") {
    Fixture f;
    rpc::Session session(f.router);
    std::optional<std::string> reply;
    std::thread caller([&] {
      reply = session.handle(call("7", "batch",
                                  R"({"operations":[{"tool":"count"},{"tool":"wait"},{"tool":"count"}],"responseDetail":"full","maxTotalOutputChars":0})"));
    });
    while (f.waiting.load() == 0) std::this_thread::sleep_for(1ms);
    const rpc::Value id(7);
    CHECK(session.cancel(id));
    caller.join();
    CHECK(reply == error("7", -32800, "Request cancelled",
                         report(false, 3, 1, 1, true,
                                ok("count", "1") + "," + failed("wait", R"({"code":-32800,"message":"Request cancelled"})"),
                                false, 1,
                                R"({"settings":{"stopOnError":false,"maxOperations":25,"maxTotalOutputChars":0},)"
                                R"("reservedNoticeChars":0,"stopReason":"cancelled","operations":[)"
                                R"({"operationIndex":1,"tool":"count","executionStatus":"completed","outputChars":1,"included":true},)"
                                R"({"operationIndex":2,"tool":"wait","executionStatus":"failed","errorCode":-32800},)"
                                R"({"operationIndex":3,"tool":"count","executionStatus":"notRun"}]})")));
    CHECK(f.runs == 1);
  }

  TEST_CASE("a cancellation that arrives after the last operation changes nothing") {
    Fixture f;
    rpc::Session session(f.router);
    std::optional<std::string> reply;
    std::thread caller([&] { reply = session.handle(call("7", "batch", R"({"operations":[{"tool":"block"}]})")); });
    while (f.blocked.load() == 0) std::this_thread::sleep_for(1ms);
    const rpc::Value id(7);
    CHECK(session.cancel(id));
    f.gate.count_down();
    caller.join();
    CHECK(reply == content("7", report(true, 1, 1, 0, false, ok("block", R"("opened")"), false, 8)));
  }

  // ---- Executors ------------------------------------------------------------------------------

  TEST_CASE("operations run inline: a one-thread executor cannot deadlock a batch") {
    Fixture f;
    rpc::ThreadPool pool{1};
    rpc::Session session(f.router, {.executor = &pool});
    CHECK(session.handle(batch(R"({"operations":[{"tool":"count"},{"tool":"later","arguments":{"n":2}},{"tool":"count"}]})")) ==
          content("1", report(true, 3, 3, 0, false, ok("count", "1") + "," + ok("later", "4") + "," + ok("count", "2"), false, 3)));
    CHECK(session.handle(call("1", "later", R"({"n":5})")) == content("1", "10"));
  }
}
