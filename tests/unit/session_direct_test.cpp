// SPDX-License-Identifier: MIT
// A session's fast path: a message the calling thread can answer whole (no executor, handlers
// that take neither a Context nor a Responder) is answered as Router::handle answers it, and
// every other message goes to a job with what was parsed, giving the same bytes either way.
#include <batchrpc/builtins.hpp>
#include <batchrpc/executor.hpp>
#include <batchrpc/router.hpp>
#include <batchrpc/session.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <latch>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <doctest/doctest.h>

#include "support/printing.hpp"

#include "common/spec_examples.hpp"
#include "common/spec_methods.hpp"

namespace {

// Runs every task at once on the calling thread: a session with it answers each message
// through a job (its executor path), on the same thread, in the same order.
class RunAtOnce final : public rpc::Executor {
 public:
  void execute(std::function<void()> task) override { task(); }
};

rpc::Router make_router() {
  rpc::Router router(rpc::Limits{.max_response_bytes = 300});
  rpc::add_builtins(router);
  spec::add_spec_methods(router);
  router.add("add", [](int a, int b) { return a + b; }, {.inline_only = true});
  router.add("boom", []() -> int { throw std::runtime_error("boom"); });
  router.add("refuse", []() -> int { throw rpc::Error(rpc::ErrorCode::invalid_params, "no"); });
  router.add("long", [](int n) { return std::string(static_cast<std::size_t>(n), 'x'); });
  router.add("watching", [](int a, rpc::Context&) { return a; });
  return router;
}

// Messages beyond the specification's: each kind of member the fast path answers or passes on.
const std::vector<std::string> extra_messages = {
    R"({"jsonrpc":"2.0","method":"add","params":[1,2],"id":1})",
    R"(  {"jsonrpc":"2.0","method":"add","params":[1,2],"id":"a\u0041"}  )",
    R"({"jsonrpc":"2.0","method":"add","params":[1],"id":2})",
    R"({"jsonrpc":"2.0","method":"add","params":[1,2]})",
    R"({"jsonrpc":"2.0","method":"boom","id":3})",
    R"({"jsonrpc":"2.0","method":"refuse","id":4})",
    R"({"jsonrpc":"2.0","method":"long","params":[100],"id":5})",
    R"({"jsonrpc":"2.0","method":"long","params":[1000],"id":6})",
    R"({"jsonrpc":"2.0","method":"watching","params":[7],"id":7})",
    R"({"jsonrpc":"2.0","method":"ping","id":123456789012345678901234567890})",
    R"([{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1},{"jsonrpc":"2.0","method":"watching","params":[2],"id":2}])",
    R"([{"jsonrpc":"2.0","method":"ping","id":1},{"jsonrpc":"2.0","method":"add","params":[3,4],"id":2},{"jsonrpc":"2.0","method":"long","params":[120],"id":3}])",
    R"([{"jsonrpc":"2.0","method":"long","params":[120],"id":1},{"jsonrpc":"2.0","method":"ping","id":2}])",
    R"([{"jsonrpc":"2.0","method":"long","params":[200],"id":1},{"jsonrpc":"2.0","method":"long","params":[200],"id":2}])",
    R"([{"jsonrpc":"2.0","method":"add","params":[1,2]},{"jsonrpc":"2.0","method":"nothing"}])",
    R"([{"jsonrpc":"2.0","method":"add","params":[1,2],"id":1},7,{"jsonrpc":"2.0","method":"nothing","id":2}])",
    R"({"jsonrpc":"2.0","method":"add","params":[1,2],"id":1} trailing)",
    R"({"jsonrpc":"2.0","method":"rpc.anything","id":1})",
    R"({"id":1})",
    "{}",
    "[]",
    "",
};

// The reply a session gives `message`, handed in as a view or as an owned string, with a
// Completion or with a lambda (which the fast path calls in place).
std::optional<std::string> through(rpc::Session& session, const std::string& message, bool owned,
                                   bool as_lambda = false) {
  std::optional<std::string> reply;
  bool called = false;
  const auto keep = [&](std::optional<std::string_view> r) {
    called = true;
    if (r) reply.emplace(*r);
  };
  rpc::Completion done = keep;
  if (owned) {
    as_lambda ? session.handle(std::string(message), keep) : session.handle(std::string(message), std::move(done));
  } else {
    as_lambda ? session.handle(message, keep) : session.handle(message, std::move(done));
  }
  REQUIRE(called);  // without an executor or Responders, answered before handle returns
  return reply;
}

// The replies `receive` was given: a completion that is a plain function.
std::vector<std::string> received;
void receive(std::optional<std::string_view> reply) { received.emplace_back(reply ? *reply : "none"); }

// How often a completion was copied and moved, and the replies it was given.
struct CompletionLog {
  int copies = 0;
  int moves = 0;
  std::vector<std::string> replies;
};

// A completion that writes into a CompletionLog.
struct LoggingCompletion {
  std::shared_ptr<CompletionLog> log = std::make_shared<CompletionLog>();

  LoggingCompletion() = default;
  LoggingCompletion(const LoggingCompletion& other) : log(other.log) { ++log->copies; }
  LoggingCompletion(LoggingCompletion&& other) noexcept : log(other.log) { ++log->moves; }
  LoggingCompletion& operator=(const LoggingCompletion&) = delete;
  LoggingCompletion& operator=(LoggingCompletion&&) = delete;
  ~LoggingCompletion() = default;

  void operator()(std::optional<std::string_view> reply) const { log->replies.emplace_back(reply ? *reply : "none"); }
};

}  // namespace

TEST_SUITE("session fast path") {
  TEST_CASE("a session answers every message byte for byte as the router and as a job do") {
    const rpc::Router router = make_router();
    RunAtOnce at_once;
    rpc::Session direct(router);
    rpc::Session queued(router, {.executor = &at_once});
    std::vector<std::string> messages;
    for (const auto& example : spec::examples) messages.emplace_back(example.message);
    messages.insert(messages.end(), extra_messages.begin(), extra_messages.end());
    for (const std::string& message : messages) {
      CAPTURE(message);
      const std::optional<std::string> expected = router.handle(message);
      for (const bool owned : {false, true}) {
        for (const bool as_lambda : {false, true}) {
          CAPTURE(owned);
          CAPTURE(as_lambda);
          CHECK(through(direct, message, owned, as_lambda) == expected);
          CHECK(through(queued, message, owned, as_lambda) == expected);
        }
      }
    }
  }

  TEST_CASE("a client's answer to a request of ours goes to the session's own handling") {
    const rpc::Router router = make_router();
    std::vector<std::string> unmatched;
    rpc::Session session(router, {.unmatched_response = [&](const rpc::RequestId& id) { unmatched.emplace_back(id.text); }});
    for (const bool owned : {false, true}) {
      CAPTURE(owned);
      unmatched.clear();
      CHECK(through(session, R"({"jsonrpc":"2.0","id":41,"result":1})", owned) == std::nullopt);
      CHECK(through(session, R"([{"jsonrpc":"2.0","id":42,"result":1},{"jsonrpc":"2.0","method":"add","params":[1,2],"id":3}])", owned) ==
            R"([{"jsonrpc":"2.0","id":3,"result":3}])");
      CHECK(unmatched == std::vector<std::string>{"41", "42"});
    }
  }

  TEST_CASE("drain waits for a message another thread is answering on the fast path") {
    rpc::Router router;
    std::latch entered{1};
    std::latch release{1};
    router.add("hold", [&] {
      entered.count_down();
      release.wait();
      return true;
    });
    rpc::Session session(router);
    std::optional<std::string> reply;
    std::thread caller([&] { reply = session.handle(R"({"jsonrpc":"2.0","method":"hold","id":1})"); });
    entered.wait();
    CHECK(session.in_flight() == 0);  // run at once, nothing before it: no cancel could find it queued
    std::future<void> drained = std::async(std::launch::async, [&] { session.drain(); });
    CHECK(drained.wait_for(std::chrono::milliseconds(100)) == std::future_status::timeout);
    release.count_down();
    drained.get();  // returns only once the reply is out
    caller.join();
    CHECK(reply == R"({"jsonrpc":"2.0","id":1,"result":true})");
  }

  TEST_CASE("drain waits for what a fast-path completion hands in, and the session may go right after") {
    rpc::Router router;
    std::latch entered{1};
    std::latch release{1};
    std::vector<rpc::Responder> later;
    std::mutex later_mutex;
    router.add("hold", [&] {
      entered.count_down();
      release.wait();
      return 1;
    });
    router.add("later", [&](rpc::Responder r) {
      std::lock_guard lock(later_mutex);
      later.push_back(std::move(r));
    });
    auto session = std::make_unique<rpc::Session>(router);
    std::optional<std::string> inner;
    std::thread caller([&] {
      session->handle(R"({"jsonrpc":"2.0","method":"hold","id":1})", [&](std::optional<std::string_view>) {
        session->handle(R"({"jsonrpc":"2.0","method":"later","id":2})",
                        [&](std::optional<std::string_view> reply) { inner.emplace(*reply); });
      });
    });
    entered.wait();
    std::future<void> drained = std::async(std::launch::async, [&] { session->drain(); });
    release.count_down();
    caller.join();  // the inner message is handed in, and waits on its Responder
    CHECK(drained.wait_for(std::chrono::milliseconds(100)) == std::future_status::timeout);
    {
      std::lock_guard lock(later_mutex);
      REQUIRE(later.size() == 1);
      CHECK(later[0].resolve(2));
    }
    drained.get();
    CHECK(inner == R"({"jsonrpc":"2.0","id":2,"result":2})");

    // Whoever sees drain() return may destroy the session at once, while the thread whose
    // completion it waited for is still returning from handle().
    rpc::Router adder;
    adder.add("add", [](int a, int b) { return a + b; });
    for (int i = 0; i < 200; ++i) {
      auto doomed = std::make_unique<rpc::Session>(adder);
      std::atomic<bool> replied{false};
      std::thread a([&] {
        doomed->handle(R"({"jsonrpc":"2.0","method":"add","params":[1,2],"id":1})",
                       [&](std::optional<std::string_view>) { replied = true; });
      });
      while (!replied) std::this_thread::yield();
      doomed->drain();
      doomed.reset();
      a.join();
    }
  }

  TEST_CASE("handlers and completions on the fast path may hand their session more messages") {
    rpc::Router router;
    rpc::Session* self = nullptr;
    router.add("add", [](int a, int b) { return a + b; });
    router.add("nested", [&self](int depth) {
      std::string inner = R"({"jsonrpc":"2.0","method":"add","params":[)" + std::to_string(depth) + ",1],\"id\":9}";
      if (depth > 0) inner = R"({"jsonrpc":"2.0","method":"nested","params":[)" + std::to_string(depth - 1) + "],\"id\":9}";
      return self->handle(inner).value_or("none");
    });
    rpc::Session session(router);
    self = &session;
    const auto quoted = [](const std::string& text) {
      std::string out = "\"";
      for (const char c : text) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
      }
      return out + "\"";
    };
    std::string expected = R"({"jsonrpc":"2.0","id":9,"result":1})";  // the innermost add
    for (int level = 0; level < 3; ++level) {
      expected = R"({"jsonrpc":"2.0","id":)" + std::string(level == 2 ? "1" : "9") + R"(,"result":)" + quoted(expected) + "}";
    }
    CHECK(session.handle(R"({"jsonrpc":"2.0","method":"nested","params":[2],"id":1})") == expected);

    // A completion that hands in the next message, and keeps reading its own reply after.
    std::vector<std::string> replies;
    std::function<void(int)> send = [&](int n) {
      session.handle(R"({"jsonrpc":"2.0","method":"add","params":[)" + std::to_string(n) + ",0],\"id\":" +
                         std::to_string(n) + "}",
                     [&, n](std::optional<std::string_view> reply) {
                       const std::string before(*reply);
                       if (n < 3) send(n + 1);
                       CHECK(*reply == before);
                       replies.emplace_back(*reply);
                     });
    };
    send(1);
    CHECK(replies == std::vector<std::string>{R"({"jsonrpc":"2.0","id":3,"result":3})",
                                              R"({"jsonrpc":"2.0","id":2,"result":2})",
                                              R"({"jsonrpc":"2.0","id":1,"result":1})"});
  }

  TEST_CASE("many threads on one session's fast path each get their own replies") {
    rpc::Router router;
    router.add("add", [](int a, int b) { return a + b; });
    rpc::Session session(router);
    std::atomic<int> wrong{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < 2000; ++i) {
          const std::string id = std::to_string(t * 10000 + i);
          const auto reply = session.handle(R"([{"jsonrpc":"2.0","method":"add","params":[)" + std::to_string(i) + "," +
                                            std::to_string(t) + "],\"id\":" + id + "}]");
          if (reply != "[{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"result\":" + std::to_string(i + t) + "}]") ++wrong;
        }
      });
    }
    for (std::thread& t : threads) t.join();
    CHECK(wrong == 0);
  }

  TEST_CASE("a completion other than rpc::Completion is called in place on the fast path, and kept only for later") {
    const rpc::Router router = make_router();
    rpc::Session session(router);
    const std::string add = R"({"jsonrpc":"2.0","method":"add","params":[1,2],"id":1})";
    const std::string watching = R"({"jsonrpc":"2.0","method":"watching","params":[7],"id":7})";
    const std::string add_reply = R"({"jsonrpc":"2.0","id":1,"result":3})";
    const std::string watching_reply = R"({"jsonrpc":"2.0","id":7,"result":7})";

    SUBCASE("answered here: an rvalue is neither copied nor moved, so no std::function was made of it") {
      LoggingCompletion done;
      session.handle(add, LoggingCompletion(done));  // one copy, by this line itself
      session.handle(std::string(add), LoggingCompletion(done));
      CHECK(done.log->replies == std::vector<std::string>{add_reply, add_reply});
      CHECK(done.log->copies == 2);
      CHECK(done.log->moves == 0);
    }
    SUBCASE("answered here: an lvalue is copied once, as a Completion would copy it") {
      LoggingCompletion done;
      session.handle(add, done);
      session.handle(std::string(add), done);
      CHECK(done.log->replies == std::vector<std::string>{add_reply, add_reply});
      CHECK(done.log->copies == 2);
      CHECK(done.log->moves == 0);
    }
    SUBCASE("answered by a job (a handler taking a Context): an rvalue is moved in, never copied") {
      LoggingCompletion done;
      const std::shared_ptr<CompletionLog> log = done.log;
      session.handle(watching, std::move(done));
      CHECK(log->replies == std::vector<std::string>{watching_reply});
      CHECK(log->copies == 0);
      CHECK(log->moves >= 1);
    }
    SUBCASE("answered by a job: an lvalue is copied once and stays the caller's") {
      LoggingCompletion done;
      session.handle(watching, done);
      CHECK(done.log->replies == std::vector<std::string>{watching_reply});
      CHECK(done.log->copies == 1);
      done(std::nullopt);  // still whole
      CHECK(done.log->replies.back() == "none");
    }
  }

  TEST_CASE("a mutable lambda handed in as an lvalue is called on the session's copy, on either path") {
    const rpc::Router router = make_router();
    rpc::Session session(router);
    std::vector<int> seen;
    auto counting = [&seen, calls = 0](std::optional<std::string_view>) mutable { seen.push_back(++calls); };
    session.handle(R"({"jsonrpc":"2.0","method":"add","params":[1,2],"id":1})", counting);
    session.handle(R"({"jsonrpc":"2.0","method":"add","params":[1,2],"id":2})", counting);
    session.handle(R"({"jsonrpc":"2.0","method":"watching","params":[7],"id":7})", counting);
    counting(std::nullopt);  // the caller's own object was never called
    CHECK(seen == std::vector<int>{1, 1, 1, 1});
  }

  TEST_CASE("a function passed by name is a completion, a null function pointer is dropped as an empty one") {
    const rpc::Router router = make_router();
    rpc::Session session(router);
    received.clear();
    session.handle(R"({"jsonrpc":"2.0","method":"add","params":[1,2],"id":1})", receive);
    session.handle(R"({"jsonrpc":"2.0","method":"watching","params":[7],"id":7})", receive);
    CHECK(received == std::vector<std::string>{R"({"jsonrpc":"2.0","id":1,"result":3})",
                                               R"({"jsonrpc":"2.0","id":7,"result":7})"});
    void (*none)(std::optional<std::string_view>) = nullptr;
    session.handle(R"({"jsonrpc":"2.0","method":"add","params":[1,2],"id":2})", none);
    session.handle(R"({"jsonrpc":"2.0","method":"watching","params":[7],"id":8})", none);
    CHECK(through(session, R"({"jsonrpc":"2.0","method":"add","params":[2,3],"id":3})", false, true) ==
          R"({"jsonrpc":"2.0","id":3,"result":5})");
  }

  TEST_CASE("a message's text taken over leaves its string empty, not holding an earlier message") {
    const rpc::Router router = make_router();
    rpc::Session first(router);
    rpc::Session second(router);
    const auto ignore = [](std::optional<std::string_view>) {};
    std::string secret = R"({"jsonrpc":"2.0","method":"add","params":[1,2],"id":"first connection's"})";
    first.handle(std::move(secret), ignore);
    std::string text = R"({"jsonrpc":"2.0","method":"add","params":[3,4],"id":2})";
    second.handle(std::move(text), ignore);
    CHECK(text.empty());  // NOLINT(bugprone-use-after-move): what a moved-from string holds is the point
    std::string queued = R"({"jsonrpc":"2.0","method":"watching","params":[7],"id":7})";
    second.handle(std::move(queued), ignore);
    CHECK(queued.empty());  // NOLINT(bugprone-use-after-move)
  }

  TEST_CASE("what a lambda completion throws is swallowed, on the fast path and from a job") {
    const rpc::Router router = make_router();
    rpc::Session session(router);
    int calls = 0;
    const auto throwing = [&](std::optional<std::string_view>) {
      ++calls;
      throw std::runtime_error("the transport failed");
    };
    CHECK_NOTHROW(session.handle(R"({"jsonrpc":"2.0","method":"add","params":[1,2],"id":1})", throwing));
    CHECK_NOTHROW(session.handle(R"({"jsonrpc":"2.0","method":"watching","params":[7],"id":7})", throwing));
    CHECK(calls == 2);
    CHECK(through(session, R"({"jsonrpc":"2.0","method":"add","params":[2,3],"id":2})", false, true) ==
          R"({"jsonrpc":"2.0","id":2,"result":5})");
  }
}
