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
#include <cstdio>
#include <utility>
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

#if defined(__SANITIZE_ADDRESS__)
// AddressSanitizer keeps freed memory in a quarantine (256 MiB by default) to catch uses after
// free; a handler that throws and catches millions of times would measure the quarantine, not
// the library. A small one keeps the figures about the library.
extern "C" const char* __asan_default_options();
extern "C" const char* __asan_default_options() { return "quarantine_size_mb=4"; }
#endif

namespace {

using stress::KiB;
using stress::MiB;

std::string request(std::string_view method, std::string_view params, std::string_view id = "1") {
  return R"({"jsonrpc":"2.0","method":")" + std::string(method) + R"(","params":)" + std::string(params) +
         R"(,"id":)" + std::string(id) + "}";
}

std::string too_large(std::string_view id, std::size_t max) {
  return R"({"jsonrpc":"2.0","id":)" + std::string(id) +
         R"(,"error":{"code":-32092,"message":"Response too large","data":{"max":)" + std::to_string(max) + "}}}";
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
  // A handler that swallows the budget's exception and keeps going: still -32092, still bounded.
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
      } catch (const std::length_error&) {  // this call is -32092; the others go on
      }
    }
  });
  return r;
}

// A hostile `nonce` for ping of about `bytes` bytes, by shape.
std::string shape(std::string_view name, std::size_t bytes) {
  std::string s;
  s.reserve(bytes + 16);
  if (name == "numbers array") {
    s = "[0";
    while (s.size() < bytes) s += ",0";
    return s + "]";
  }
  if (name == "nested empties") {
    s = "[[]";
    while (s.size() < bytes) s += ",[]";
    return s + "]";
  }
  if (name == "object members") {
    s = "{";
    for (std::size_t i = 0; s.size() < bytes; ++i) s += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":0";
    return s + "}";
  }
  if (name == "long string") return "\"" + std::string(bytes, 'a') + "\"";
  if (name == "deep nesting") return std::string(bytes / 2, '[') + std::string(bytes / 2, ']');
  return "null";
}

}  // namespace

TEST_SUITE("budgets") {
  TEST_CASE("peak memory per hostile shape at the default limits is at most 10x the message") {
    // Each shape as ping's nonce in a message just under the default 16 MiB limit, handled the
    // way the transports hand messages in (a session that takes the message over) and through
    // Router::handle (which copies it). The table is printed for the README's security section.
    const std::size_t bytes = 15 * MiB / stress::sanitizer_shrink;
    const char* shapes[] = {"numbers array", "nested empties", "object members", "long string", "deep nesting"};
    MESSAGE("| shape | message | reply | session: peak | ratio | Router::handle: peak | ratio |");
    for (const char* name : shapes) {
      CAPTURE(name);
      const auto make = [&] { return request("ping", std::string(R"({"nonce":)") + shape(name, bytes) + "}"); };
      const std::string message = make();
      std::string expected;
      const rpc::Limits defaults;
      if (std::string_view(name) == "numbers array" || std::string_view(name) == "nested empties") {
        expected = R"({"jsonrpc":"2.0","id":null,"error":{"code":-32090,"message":"Message too large","data":)"
                   R"({"reason":"its parsed form exceeds the parse budget","budget":)" +
                   std::to_string(defaults.parse_budget(message.size())) + "}}}";
      } else if (std::string_view(name) == "deep nesting") {
        expected = R"({"jsonrpc":"2.0","id":null,"error":{"code":-32091,"message":"Nesting too deep","data":{"max":128}}})";
      } else {
        expected = R"({"jsonrpc":"2.0","id":1,"result":{"nonce":)" + shape(name, bytes) + "}}";
      }
      const auto router = [] {
        rpc::Router r;
        rpc::add_builtins(r);
        return r;
      };
      const stress::Measured session = stress::in_child(make, [&](std::string& input) {
        const rpc::Router r = router();
        rpc::Session s(r);
        std::optional<std::string> reply;
        s.handle(std::move(input), [&](std::optional<std::string_view> text) {
          if (text) reply.emplace(*text);
        });
        return reply;
      });
      const stress::Measured direct = stress::in_child(make, [&](const std::string& input) {
        return router().handle(input);
      });
      CHECK(session.reply == expected);
      CHECK(direct.reply == expected);
      const auto peak = [](const stress::Measured& m) {
        char cell[64];
        std::snprintf(cell, sizeof cell, "%.0f MiB | %.1fx", static_cast<double>(m.working_bytes) / MiB,
                      static_cast<double>(m.working_bytes) / static_cast<double>(m.input_bytes));
        return std::string(cell);
      };
      const std::string code = expected.find("\"error\"") == std::string::npos
                                   ? std::string("result")
                                   : expected.substr(expected.find("\"code\":") + 7, 6);
      MESSAGE("| " << std::string(name) << " | " << session.input_bytes / MiB << " MiB | " << code << " | "
                   << peak(session) << " | " << peak(direct) << " |");
      check_memory(session, 10 * session.input_bytes);
      check_memory(direct, 10 * direct.input_bytes);
    }
  }

  TEST_CASE("a result past the reply budget is -32092 as soon as it passes it, on every path") {
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
        // Every call past the budget throws again: 2,000,000 calls (about 14 MB) keep it quick.
        {"handler that catches the exception", request("stubborn", "[2000000]"), too_large("1", budget), false},
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
    for (rapidjson::SizeType i = 1; i < reply.Size(); ++i) CHECK(reply[i]["error"]["code"].GetInt() == -32092);
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
