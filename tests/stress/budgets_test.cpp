// SPDX-License-Identifier: MIT
// Budgets bound memory, not just output: a result past the reply budget stops being written as
// soon as it passes it, on every path a result takes (handler, Responder, batch handler,
// session members in parallel), and a value nested as deep as a client likes is written back
// without recursion. Each case runs in a forked child that measures its peak memory.
#include <batchrpc/builtins.hpp>
#include <batchrpc/executor.hpp>
#include <batchrpc/responder.hpp>
#include <batchrpc/router.hpp>
#include <batchrpc/session.hpp>

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include "peak_memory.hpp"
#include "support/printing.hpp"

namespace {

using stress::KiB;
using stress::MiB;

std::string request(std::string_view method, std::string_view params, std::string_view id = "1") {
  return R"({"jsonrpc":"2.0","method":")" + std::string(method) + R"(","params":)" + std::string(params) +
         R"(,"id":)" + std::string(id) + "}";
}

std::string too_large(std::string_view id, std::size_t max) {
  return R"({"jsonrpc":"2.0","id":)" + std::string(id) +
         R"(,"error":{"code":-32003,"message":"Response too large","data":{"max":)" + std::to_string(max) + "}}}";
}

// Checks and reports the memory a case took: at most `bound` bytes (times the sanitizer factor).
void check_memory(const stress::Measured& m, std::size_t bound) {
  REQUIRE(m.child_ok);
  const auto allowed = static_cast<std::size_t>(stress::sanitizer_factor * static_cast<double>(bound));
  MESSAGE("working memory " << m.working_bytes << " B, bound " << allowed << " B"
                            << std::string(m.peak_reset ? "" : " (peak not reset)"));
  CHECK(m.working_bytes <= allowed);
}

// Writes 0, 1, ..., n-1: 10^8 of them is ~900 MB of text.
void write_range(long long n, rpc::ResultWriter& out) {
  out.start_array();
  for (long long i = 0; i < n; ++i) out.integer(i);
  out.end_array();
}

constexpr std::size_t budget = 1 * MiB;

rpc::Router make_writers(rpc::ThreadPool* answers) {
  rpc::Router r{rpc::Limits{.max_response_bytes = budget}};
  r.add("range", [](long long n, rpc::ResultWriter& out) { write_range(n, out); }, rpc::names("n"));
  // A handler that swallows the budget's exception and keeps going: still -32003, still bounded.
  r.add("stubborn", [](long long n, rpc::ResultWriter& out) {
    out.start_array();
    for (long long i = 0; i < n; ++i) {
      try {
        out.integer(i);
      } catch (const std::length_error&) {
      }
    }
  }, rpc::names("n"));
  r.add("later_range", [answers](long long n, rpc::Responder done) {
    answers->execute([n, done] { done.resolve_with([n](rpc::ResultWriter& out) { write_range(n, out); }); });
  }, rpc::names("n"));
  r.add_batched("batched_range", [](std::span<rpc::BatchCall> calls) {
    for (rpc::BatchCall& call : calls) {
      try {
        write_range(call.params().at(0)->GetInt64(), call.result());
      } catch (const std::length_error&) {  // this call is -32003; the others go on
      }
    }
  });
  return r;
}

}  // namespace

TEST_SUITE("budgets") {
  TEST_CASE("a result past the reply budget is -32003 as soon as it passes it, on every path") {
    const std::string huge = "100000000";  // ~900 MB if it were written whole
    struct Case {
      const char* path;
      std::string message;
      std::string expected;
      bool session;
    };
    const std::vector<Case> cases = {
        {"handler, Router::handle", request("range", "[" + huge + "]"), too_large("1", budget), false},
        {"handler, Session", request("range", "[" + huge + "]"), too_large("1", budget), true},
        {"handler that catches the exception", request("stubborn", "[" + huge + "]"), too_large("1", budget), false},
        {"Responder, Router::handle", request("later_range", "[" + huge + "]"), too_large("1", budget), false},
        {"Responder, Session", request("later_range", "[" + huge + "]"), too_large("1", budget), true},
        {"batch handler, Router::handle",
         "[" + request("batched_range", "[" + huge + "]", "1") + "," + request("batched_range", "[3]", "2") + "]",
         "[" + too_large("1", budget) + R"(,{"jsonrpc":"2.0","id":2,"result":[0,1,2]}])", false},
        {"batch handler, Session",
         "[" + request("batched_range", "[" + huge + "]", "1") + "," + request("batched_range", "[3]", "2") + "]",
         "[" + too_large("1", budget) + R"(,{"jsonrpc":"2.0","id":2,"result":[0,1,2]}])", true},
    };
    for (const Case& c : cases) {
      CAPTURE(c.path);
      const stress::Measured m = stress::in_child(
          [&] { return c.message; },
          [&](const std::string& input) {
            rpc::ThreadPool answers(1);
            const rpc::Router router = make_writers(&answers);
            if (!c.session) return router.handle(input);
            rpc::ThreadPool pool(2);
            rpc::Session session(router, {.executor = &pool});
            return session.handle(input);
          });
      CHECK(m.reply == c.expected);
      check_memory(m, 8 * MiB);  // the budget, the writer's growth step, and the thread stacks
    }
  }

  TEST_CASE("members writing in parallel share one reply budget: memory stays within a few budgets") {
    // 200 members of ~830 KB each: each fits the budget alone, all of them would take 166 MB.
    std::string batch = "[";
    for (int i = 0; i < 200; ++i) batch += (i ? "," : "") + request("range", "[120000]", std::to_string(i));
    batch += "]";
    const stress::Measured m = stress::in_child([&] { return batch; }, [](const std::string& input) {
      rpc::ThreadPool answers(1);
      const rpc::Router router = make_writers(&answers);
      rpc::ThreadPool pool(2);
      rpc::Session session(router, {.executor = &pool});
      return session.handle(input);
    });
    REQUIRE(m.reply.has_value());
    rapidjson::Document reply;
    reply.Parse(m.reply->data(), m.reply->size());
    REQUIRE(reply.IsArray());
    REQUIRE(reply.Size() == 200);
    CHECK(reply[0].HasMember("result"));  // the first fits; every later one would take the reply past it
    for (rapidjson::SizeType i = 1; i < reply.Size(); ++i) CHECK(reply[i]["error"]["code"].GetInt() == -32003);
    check_memory(m, 8 * MiB);
  }

  TEST_CASE("a value nested 1,000,000 deep is written back without recursion when depth is unlimited") {
    constexpr std::size_t depth = 1'000'000;
    const std::string nested = std::string(depth, '[') + std::string(depth, ']');
    const stress::Measured m = stress::in_child(
        [&] { return "[" + request("ping", R"({"nonce":)" + nested + "}", "1") + "," +
                     request("echo", "[" + nested + "]", "2") + "]"; },
        [](const std::string& input) {
          rpc::Router router{rpc::Limits{.max_depth = rpc::Limits::unlimited, .max_response_bytes = 64 * MiB,
                                         .max_parse_ratio = rpc::Limits::unlimited}};
          rpc::add_builtins(router);
          router.add("echo", [](rpc::Json value) { return value; });  // binds through the same walk
          return router.handle(input);
        });
    CHECK(m.reply == R"([{"jsonrpc":"2.0","id":1,"result":{"nonce":)" + nested + R"(}},{"jsonrpc":"2.0","id":2,"result":)" +
                         nested + "}]");
  }
}
