// SPDX-License-Identifier: MIT
// Sessions under misuse and at the edges of their lifetime: stop callbacks that answer, executors
// that throw, drop or die, Responders kept after their request or their session has ended.
#include <batchrpc/session.hpp>

#include <batchrpc/batch_call.hpp>
#include <batchrpc/builtins.hpp>
#include <batchrpc/executor.hpp>
#include <batchrpc/responder.hpp>
#include <batchrpc/router.hpp>

#include <doctest/doctest.h>

#include "support/death.hpp"
#include "support/handed.hpp"
#include "support/printing.hpp"
#include "support/replies.hpp"
#include "support/watchdog.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <latch>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace {

using namespace replies;

std::string request(std::string_view method, std::string_view id, std::string_view params = {}) {
  std::string s = R"({"jsonrpc":"2.0","method":")" + std::string(method) + "\"";
  if (!params.empty()) s += R"(,"params":)" + std::string(params);
  if (!id.empty()) s += R"(,"id":)" + std::string(id);
  return s + "}";
}

// Whether `latch` opened within five seconds, polled without blocking the thread for good:
// a member that waits for others of its batch, and must not hang the test when they never run.
bool waited_for(std::latch& latch) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!latch.try_wait()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::yield();
  }
  return true;
}

std::string overloaded(std::string_view id, std::string_view reason) {
  return error(id, -32093, "Server overloaded", R"({"reason":")" + std::string(reason) + "\"}");
}

// The replies a session's completions received, in the order they came.
struct Replies {
  std::mutex mutex;
  std::vector<std::optional<std::string>> got;

  rpc::Completion callback() {
    return [this](std::optional<std::string_view> reply) {
      std::lock_guard lock(mutex);
      got.emplace_back(reply ? std::optional<std::string>(*reply) : std::nullopt);
    };
  }
  std::vector<std::optional<std::string>> all() {
    std::lock_guard lock(mutex);
    return got;
  }
};

// Handlers that park their Responder, answering it from a stop callback when cancelled: the
// natural way to answer at once when a timer or an I/O wait is cancelled.
struct Parking {
  struct Parked {
    explicit Parked(rpc::Responder r) : done(std::move(r)) {}
    rpc::Responder done;
    std::optional<std::stop_callback<std::function<void()>>> on_stop;
  };
  std::mutex mutex;
  std::vector<std::shared_ptr<Parked>> parked;
  rpc::Router router;

  Parking() {
    rpc::add_builtins(router);
    router.add("park", [this](rpc::Responder done) {
      auto p = std::make_shared<Parked>(done);
      // Runs inside request_stop(): it answers, which completes the member and the message.
      p->on_stop.emplace(done.stop_token(), std::function<void()>([done] { done.reject(rpc::cancelled()); }));
      std::lock_guard lock(mutex);
      parked.push_back(std::move(p));
    });
    router.add("add", [](int a, int b) { return a + b; });
    router.add_batched("sum", [](std::span<rpc::BatchCall> calls) {
      for (rpc::BatchCall& call : calls) {
        call.result().number(call.params().at(0)->GetInt() + call.params().at(1)->GetInt());
      }
    });
  }
  ~Parking() {
    std::lock_guard lock(mutex);
    parked.clear();
  }
};

// Executors that misbehave in the ways real ones do.
struct Refusing final : rpc::Executor {
  void execute(std::function<void()>) override { throw std::runtime_error("queue full"); }
};
struct Dropping final : rpc::Executor {
  void execute(std::function<void()> task) override { std::function<void()> gone = std::move(task); }
};
struct Inline final : rpc::Executor {
  void execute(std::function<void()> task) override { task(); }
};
// Drops the first `drop` tasks unrun, then runs the rest inline; counts what it was given.
struct DroppingFirst final : rpc::Executor {
  explicit DroppingFirst(int first) : drop(first) {}
  int drop;
  int given = 0;
  void execute(std::function<void()> task) override {
    if (given++ < drop) {
      std::function<void()> gone = std::move(task);
      return;
    }
    task();
  }
};
// Keeps tasks until run_all() runs them (on whatever thread calls it).
struct Delaying final : rpc::Executor {
  std::mutex mutex;
  std::vector<std::function<void()>> tasks;
  void execute(std::function<void()> task) override {
    std::lock_guard lock(mutex);
    tasks.push_back(std::move(task));
  }
  void run_all() {
    std::vector<std::function<void()>> now;
    {
      std::lock_guard lock(mutex);
      now.swap(tasks);
    }
    for (auto& task : now) task();
  }
};

}  // namespace

TEST_SUITE("session lifetime") {
  TEST_CASE("a stop callback that rejects its Responder: notifications/cancel answers it, no deadlock") {
    Parking f;
    Replies replies;
    rpc::Session session(f.router);
    watchdog::must_finish("cancel with an answering stop callback", [&] {
      session.handle(request("park", "1"), replies.callback());
      CHECK(replies.all().empty());
      CHECK(session.in_flight() == 1);
      session.handle(request("notifications/cancel", "", R"({"id":1})"), replies.callback());
    });
    const auto got = replies.all();
    REQUIRE(got.size() == 2);
    CHECK(got[0] == cancelled("1"));  // the parked request, answered by its stop callback
    CHECK(got[1] == std::nullopt);    // the cancel notification itself
    CHECK(session.in_flight() == 0);
  }

  TEST_CASE("a stop callback that rejects its Responder: Session::cancel from another thread answers it") {
    Parking f;
    Replies replies;
    rpc::Session session(f.router);
    session.handle(request("park", "\"a\""), replies.callback());
    watchdog::must_finish("Session::cancel with an answering stop callback", [&] {
      std::thread other([&] { CHECK(session.cancel(rpc::Value("a"))); });
      other.join();
    });
    CHECK(replies.all() == std::vector<std::optional<std::string>>{cancelled("\"a\"")});
  }

  TEST_CASE("a stop callback that rejects its Responder: ~Session answers it, no deadlock") {
    Parking f;
    Replies replies;
    watchdog::must_finish("~Session with an answering stop callback", [&] {
      rpc::Session session(f.router);
      session.handle(request("park", "1"), replies.callback());
      session.handle(request("park", "2"), replies.callback());
    });
    auto got = replies.all();  // cancelled in no particular order
    std::sort(got.begin(), got.end());
    CHECK(got == std::vector<std::optional<std::string>>{cancelled("1"), cancelled("2")});
  }

  TEST_CASE("a stop callback that rejects its Responder: cancel_all answers every request") {
    Parking f;
    Replies replies;
    rpc::ThreadPool pool(2);
    rpc::Session session(f.router, {.executor = &pool});
    session.handle("[" + request("park", "1") + "," + request("park", "2") + "]", replies.callback());
    watchdog::must_finish("cancel_all with answering stop callbacks", [&] {
      while (session.in_flight() != 2 || [&] { std::lock_guard l(f.mutex); return f.parked.size() != 2; }()) {
        std::this_thread::yield();
      }
      CHECK(session.cancel_all() == 2);
      session.drain();
    });
    CHECK(replies.all() == std::vector<std::optional<std::string>>{"[" + cancelled("1") + "," + cancelled("2") + "]"});
  }

  TEST_CASE("an executor that throws: its members are answered -32093 and the session stays usable") {
    Parking f;
    Refusing refusing;
    watchdog::must_finish("a throwing executor", [&] {
      rpc::Session session(f.router, {.executor = &refusing});
      CHECK(handed(session, request("add", "1", "[1,2]")) == overloaded("1", "the executor refused the task"));
      // A batch: the inline-only ping still runs; the refused member is answered, in order.
      CHECK(handed(session, "[" + request("add", "1", "[1,2]") + "," + request("ping", "2") + "]") ==
            "[" + overloaded("1", "the executor refused the task") + "," + result("2", "{}") + "]");
      CHECK(session.in_flight() == 0);
      CHECK(session.handle(request("ping", "3")) == result("3", "{}"));
      // The waiting handle() lends its thread: what the executor refuses, it runs itself...
      CHECK(session.handle("[" + request("add", "4", "[1,2]") + "," + request("add", "5", "[3,4]") + "]") ==
            "[" + result("4", "3") + "," + result("5", "7") + "]");
      // ...but a batch-aware group is one task of its own, answered -32093 when refused.
      CHECK(session.handle("[" + request("sum", "6", "[1,2]") + "," + request("sum", "7", "[3,4]") + "," +
                           request("add", "8", "[5,6]") + "]") ==
            "[" + overloaded("6", "the executor refused the task") + "," +
                overloaded("7", "the executor refused the task") + "," + result("8", "11") + "]");
    });
  }

  TEST_CASE("an executor that drops its tasks unrun: their members are answered -32093") {
    Parking f;
    Dropping dropping;
    watchdog::must_finish("a dropping executor", [&] {
      rpc::Session session(f.router, {.executor = &dropping});
      CHECK(handed(session, request("add", "1", "[1,2]")) == overloaded("1", "the executor dropped the task"));
      CHECK(session.in_flight() == 0);
      CHECK(session.handle(request("add", "2", "[1,2]")) == result("2", "3"));  // run by this thread
    });
  }

  TEST_CASE("a batch's executor members are handed over as a few tasks that take them in turn") {
    Parking f;
    std::string batch = "[";
    std::string expected = "[";
    for (int i = 0; i < 100; ++i) {
      batch += std::string(i ? "," : "") + request("add", std::to_string(i), "[" + std::to_string(i) + ",1]");
      expected += std::string(i ? "," : "") + result(std::to_string(i), std::to_string(i + 1));
    }
    batch += "]";
    expected += "]";
    DroppingFirst counting(0);
    rpc::Session session(f.router, {.executor = &counting});
    CHECK(handed(session, batch) == expected);
    CHECK(counting.given >= 2);
    CHECK(counting.given <= 8);  // one task per turn at the sweep, not one per member
    // The waiting handle() takes one of the turns itself, so one task fewer is handed over.
    const int before = counting.given;
    CHECK(session.handle(batch) == expected);
    CHECK(counting.given - before == before - 1);
    // A dropped turn leaves its members to the turns still to come...
    DroppingFirst drops_one(1);
    rpc::Session survivor(f.router, {.executor = &drops_one});
    CHECK(handed(survivor, batch) == expected);
    // ...and when every turn is dropped, the last one answers them all -32093...
    Dropping dropping;
    rpc::Session refused(f.router, {.executor = &dropping});
    const std::string two = "[" + request("add", "1", "[1,2]") + "," + request("add", "2", "[3,4]") + "]";
    CHECK(handed(refused, two) == "[" + overloaded("1", "the executor dropped the task") + "," +
                                      overloaded("2", "the executor dropped the task") + "]");
    CHECK(refused.in_flight() == 0);
    // ...unless the waiting handle()'s own turn is still to come: it runs them.
    CHECK(refused.handle(two) == "[" + result("1", "3") + "," + result("2", "7") + "]");
  }

  TEST_CASE("an executor that runs tasks inline, inside execute()") {
    Parking f;
    Inline inline_executor;
    rpc::Session session(f.router, {.executor = &inline_executor});
    CHECK(session.handle("[" + request("add", "1", "[1,2]") + "," + request("add", "2", "[3,4]") + "]") ==
          "[" + result("1", "3") + "," + result("2", "7") + "]");
  }

  TEST_CASE("an executor that runs tasks later, on another thread") {
    Parking f;
    Delaying delaying;
    Replies replies;
    {
      rpc::Session session(f.router, {.executor = &delaying});
      session.handle("[" + request("add", "1", "[1,2]") + "," + request("add", "2", "[3,4]") + "]",
                     replies.callback());
      CHECK(replies.all().empty());
      std::thread runner([&] { delaying.run_all(); });
      runner.join();
    }
    CHECK(replies.all() == std::vector<std::optional<std::string>>{"[" + result("1", "3") + "," + result("2", "7") + "]"});
  }

  TEST_CASE("the waiting handle() runs members on its own thread, tasks that come round later find none") {
    Parking f;
    Delaying delaying;
    rpc::Session session(f.router, {.executor = &delaying});
    const std::string three = "[" + request("add", "1", "[1,2]") + "," + request("add", "2", "[3,4]") + "," +
                              request("add", "3", "[5,6]") + "]";
    CHECK(session.handle(three) == "[" + result("1", "3") + "," + result("2", "7") + "," + result("3", "11") + "]");
    CHECK(session.in_flight() == 0);
    std::thread runner([&] { delaying.run_all(); });  // each task finds its members taken
    runner.join();
    CHECK(session.handle(request("add", "4", "[7,8]")) == result("4", "15"));  // one call: never handed off
    std::lock_guard lock(delaying.mutex);
    CHECK(delaying.tasks.empty());
  }

  TEST_CASE("the waiting handle() runs a batch on its own thread beside the executor's") {
    rpc::Router router;
    std::latch both{2};  // each member waits for the other: they must run at once, on two threads
    std::mutex mutex;
    std::vector<std::thread::id> ran_on;
    router.add("meet", [&] {
      both.arrive_and_wait();
      std::lock_guard lock(mutex);
      ran_on.push_back(std::this_thread::get_id());
    });
    rpc::ThreadPool pool(2);
    rpc::Session session(router, {.executor = &pool});
    std::thread::id caller;
    watchdog::must_finish("a batch of two members that meet", [&] {  // on a thread of its own
      caller = std::this_thread::get_id();
      CHECK(session.handle("[" + request("meet", "1") + "," + request("meet", "2") + "]") ==
            "[" + result("1", "null") + "," + result("2", "null") + "]");
    });
    std::lock_guard lock(mutex);
    REQUIRE(ran_on.size() == 2);
    CHECK(ran_on[0] != ran_on[1]);
    CHECK(std::count(ran_on.begin(), ran_on.end(), caller) == 1);
  }

  TEST_CASE("a member that waits for a later member of its batch is not held up behind it") {
    rpc::Router router;
    std::latch second_ran{1};
    // a bounded wait: a turn that held both would time out
    router.add("first", [&second_ran] { return waited_for(second_ran); });
    router.add("other", [&second_ran](int i) {
      if (i == 1) second_ran.count_down();
      return i;
    });
    rpc::ThreadPool pool(4);
    rpc::Session session(router, {.executor = &pool});
    std::string batch = "[" + request("first", "0");
    std::string expected = "[" + result("0", "true");
    for (int i = 1; i < 32; ++i) {
      batch += "," + request("other", std::to_string(i), "[" + std::to_string(i) + "]");
      expected += "," + result(std::to_string(i), std::to_string(i));
    }
    CHECK(session.handle(batch + "]") == expected + "]");
  }

  TEST_CASE("the members behind a long one are taken by the batch's other turns") {
    // The executor's tasks share a batch's members out; the first member waits for all the
    // others, so those of its own share must be taken by another turn, with the waiting
    // handle (which takes a turn itself) and with a completion (the pool's turns only: two
    // threads at least, or the only one waits).
    rpc::Router router;
    std::atomic<std::latch*> others{nullptr};
    // a bounded wait: a turn that held the others would time out
    router.add("long", [&others] { return waited_for(*others.load()); });
    router.add("short", [&others](int i) {
      others.load()->count_down();
      return i;
    });
    std::string batch = "[" + request("long", "0");
    std::string expected = "[" + result("0", "true");
    for (int i = 1; i < 8; ++i) {
      batch += "," + request("short", std::to_string(i), "[" + std::to_string(i) + "]");
      expected += "," + result(std::to_string(i), std::to_string(i));
    }
    batch += "]";
    expected += "]";
    for (const std::size_t threads : {std::size_t{1}, std::size_t{2}, std::size_t{4}}) {
      CAPTURE(threads);
      rpc::ThreadPool pool(threads);
      rpc::Session session(router, {.executor = &pool});
      std::latch waiting{7};
      others = &waiting;
      CHECK(session.handle(batch) == expected);
      if (threads == 1) continue;
      std::latch completed{7};
      others = &completed;
      Replies replies;
      session.handle(batch, replies.callback());
      session.drain();
      CHECK(replies.all() == std::vector<std::optional<std::string>>{expected});
    }
  }

  TEST_CASE("~Session does not wait for the executor to come round to work it has answered (an event loop)") {
    // An event loop destroys a session between two turns, its tasks still queued: requests not
    // started are answered -32800 and notifications dropped at once; the tasks, run or
    // destroyed later, find nothing to do (AddressSanitizer sees them touch nothing).
    Parking f;
    std::atomic<int> notified{0};
    f.router.add("note", [&notified](int) { ++notified; });
    for (const bool run_later : {true, false}) {
      CAPTURE(run_later);
      Delaying loop;
      Replies replies;
      watchdog::must_finish("~Session with its tasks still queued", [&] {
        rpc::Session session(f.router, {.executor = &loop});
        session.handle("[" + request("add", "1", "[1,2]") + "," + request("note", "", "[1]") + "]", replies.callback());
        session.handle(request("note", "", "[2]"), replies.callback());
        session.handle(request("add", "2", "[3,4]"), replies.callback());
        CHECK(loop.tasks.size() == 4);
      });
      auto got = replies.all();  // in no particular order
      std::sort(got.begin(), got.end());
      CHECK(got == std::vector<std::optional<std::string>>{std::nullopt, "[" + cancelled("1") + "]", cancelled("2")});
      if (run_later) {
        loop.run_all();
      } else {
        loop.tasks.clear();  // destroyed unrun
      }
      CHECK(replies.all().size() == 3);
      CHECK(notified == 0);
    }
  }

  TEST_CASE("~Session answers a message its completion hands in while it ends, without waiting for the executor") {
    Parking f;
    Delaying loop;
    Replies replies;
    auto* session = new rpc::Session(f.router, {.executor = &loop});
    bool handed_in = false;
    rpc::Completion record = replies.callback();
    session->handle(request("add", "1", "[1,2]"), [&](std::optional<std::string_view> reply) {
      record(reply);
      if (handed_in) return;
      handed_in = true;  // answered by ~Session's cancel: the next message goes in meanwhile
      session->handle("[" + request("add", "2", "[3,4]") + "," + request("add", "", "[5,6]") + "]", record);
    });
    watchdog::must_finish("~Session with a completion handing in a message", [&] { delete session; });
    CHECK(handed_in);
    CHECK(replies.all() == std::vector<std::optional<std::string>>{cancelled("1"), "[" + cancelled("2") + "]"});
    loop.run_all();  // their tasks come round after the session is gone, and do nothing
    CHECK(replies.all().size() == 2);
  }

  TEST_CASE("drain() returns once every message is answered, without waiting for tasks that have nothing left to do") {
    Parking f;
    Delaying loop;
    Replies replies;
    rpc::Session session(f.router, {.executor = &loop});
    session.handle(request("add", "1", "[1,2]"), replies.callback());
    CHECK(session.cancel_all() == 1);
    watchdog::must_finish("drain() with a cancelled request's task still queued", [&] { session.drain(); });
    CHECK(replies.all() == std::vector<std::optional<std::string>>{cancelled("1")});
    loop.run_all();  // the task comes round and finds nothing to do; the session goes on
    session.handle(request("add", "2", "[3,4]"), replies.callback());
    loop.run_all();
    CHECK(replies.all() == std::vector<std::optional<std::string>>{cancelled("1"), result("2", "7")});
    CHECK(session.in_flight() == 0);
  }

  TEST_CASE("a ThreadPool destroyed before its session: messages are answered -32093, no use-after-free") {
    Parking f;
    auto pool = std::make_unique<rpc::ThreadPool>(1);
    rpc::Session session(f.router, {.executor = pool.get()});
    CHECK(session.handle(request("add", "1", "[1,2]")) == result("1", "3"));
    pool.reset();
    CHECK(handed(session, request("add", "2", "[1,2]")) == overloaded("2", "the executor is gone"));
    CHECK(session.handle(request("ping", "3")) == result("3", "{}"));  // inline-only: no executor needed
    CHECK(session.handle(request("add", "4", "[1,2]")) == result("4", "3"));  // the waiting caller runs it
  }

  TEST_CASE("a Responder copy kept after the session is gone owns what it reads") {
    rpc::Router router;
    std::optional<rpc::Responder> kept;
    router.add("keep", [&kept](rpc::Responder done) {
      kept = done;
      done.resolve(1);
    });
    {
      rpc::Session session(router);
      CHECK(session.handle(request("keep", "1")) == result("1", "1"));
    }
    REQUIRE(kept.has_value());
    CHECK_FALSE(kept->stop_requested());  // read after the session (and its slots) are gone
    CHECK_FALSE(kept->pending());
    CHECK_THROWS_AS(kept->resolve(2), std::logic_error);  // answered already, by this very request
  }

  TEST_CASE("a Responder copy kept after answering does not see a later request's cancel") {
    Parking f;
    std::optional<rpc::Responder> kept;
    f.router.add("keep", [&kept](rpc::Responder done) {
      kept = done;
      done.resolve(1);
    });
    Replies replies;
    rpc::Session session(f.router);
    CHECK(session.handle(request("keep", "1")) == result("1", "1"));
    session.handle(request("park", "2"), replies.callback());  // reuses the first request's slot
    CHECK(session.cancel(rpc::Value(2)));
    CHECK(replies.all() == std::vector<std::optional<std::string>>{cancelled("2")});
    REQUIRE(kept.has_value());
    CHECK_FALSE(kept->stop_requested());
  }

  TEST_CASE("~Session answers requests whose Responder is kept unanswered, a later answer is refused quietly") {
    rpc::Router router;
    std::mutex mutex;
    std::vector<rpc::Responder> registry;
    router.add("park", [&](rpc::Responder done) {
      std::lock_guard lock(mutex);
      registry.push_back(std::move(done));  // ignores cancellation: only the registry answers
    });
    Replies replies;
    watchdog::must_finish("~Session with parked Responders", [&] {
      rpc::Session session(router);
      session.handle(request("park", "1"), replies.callback());
      session.handle("[" + request("park", "2") + "," + request("park", "") + "]", replies.callback());
    });
    auto got = replies.all();  // the two messages complete in no particular order
    std::sort(got.begin(), got.end());
    CHECK(got == std::vector<std::optional<std::string>>{"[" + cancelled("2") + "]", cancelled("1")});
    std::lock_guard lock(mutex);
    REQUIRE(registry.size() == 3);
    for (rpc::Responder& done : registry) {
      CHECK_FALSE(done.pending());
      CHECK_FALSE(done.resolve(7));  // the session answered it: quietly refused, nothing thrown
    }
  }

  // The session keeps the slots waiting on a Responder in a list; one answered from the middle
  // of it leaves its place to the last, which must still be answered when the session ends.
  TEST_CASE("~Session answers the Responders still waiting after one in the middle has answered") {
    rpc::Router router;
    std::mutex mutex;
    std::condition_variable parked;
    std::vector<rpc::Responder> registry;  // in the order the session came to know them
    router.add("park", [&](rpc::Responder done) {
      std::lock_guard lock(mutex);
      registry.push_back(std::move(done));
      parked.notify_all();
    });
    Replies replies;
    watchdog::must_finish("~Session after a middle Responder answered", [&] {
      rpc::Session session(router);
      for (std::size_t i = 0; i < 4; ++i) {
        session.handle(request("park", std::to_string(i + 1)), replies.callback());
        std::unique_lock lock(mutex);
        parked.wait(lock, [&] { return registry.size() == i + 1; });
      }
      std::lock_guard lock(mutex);
      CHECK(registry[1].resolve(20));  // request 2
    });
    auto got = replies.all();  // the messages complete in no particular order
    std::sort(got.begin(), got.end());
    std::vector<std::optional<std::string>> expected{result("2", "20"), cancelled("1"), cancelled("3"),
                                                     cancelled("4")};
    std::sort(expected.begin(), expected.end());
    CHECK(got == expected);
    std::lock_guard lock(mutex);
    for (std::size_t i : {std::size_t{0}, std::size_t{2}, std::size_t{3}}) {
      CHECK_FALSE(registry[i].pending());
      CHECK_FALSE(registry[i].resolve(7));  // the session answered it: quietly refused
    }
    CHECK_THROWS_AS(registry[1].resolve(7), std::logic_error);  // answered already, by its handler
  }

#if BATCHRPC_CHECKS_ENABLED
  TEST_CASE("usage errors stop a debug build with a message that names the rule") {
    const auto check = [](const death::Ending& e, const char* rule) {
      CAPTURE(e.stderr_text);
      CHECK(e.aborted);
      CHECK(e.stderr_text.find(rule) != std::string::npos);
    };
    check(death::in_child([] {
            rpc::Router router;
            router.add("one", [] { return 1; });
            (void)router.handle(request("one", "1"));
            router.add("two", [] { return 2; });
          }),
          "a method was registered after the router started handling messages");
    check(death::in_child([] {  // a session's fast path counts as handling too
            rpc::Router router;
            router.add("one", [] { return 1; });
            rpc::Session session(router);
            (void)session.handle(request("one", "1"));
            router.add("two", [] { return 2; });
          }),
          "a method was registered after the router started handling messages");
    check(death::in_child([] {
            rpc::Router router;
            std::optional<rpc::Session> session;
            router.add("close", [&session] { session.reset(); });
            session.emplace(router);
            (void)session->handle(request("close", "1"));
          }),
          "a session was destroyed from one of its own handlers");
    check(death::in_child([] {
            rpc::Router router;
            std::optional<rpc::Session> session;
            router.add("one", [] { return 1; });
            session.emplace(router);
            session->handle(request("one", "1"), [&session](std::optional<std::string_view>) { session.reset(); });
          }),
          "a session was destroyed from one of its own handlers or completions");
    check(death::in_child([] {
            rpc::Router router;
            router.add("one", [] { return 1; });
            auto session = std::make_shared<rpc::Session>(router);
            rpc::Session& s = *session;
            s.handle(request("one", "1"), rpc::Completion([owner = std::move(session)](std::optional<std::string_view>) {}));
          }),
          "a session was destroyed from one of its own handlers or completions");
    check(death::in_child([] {  // a lambda the session keeps, since a job answers: the same
            rpc::Router router;
            router.add("one", [](rpc::Context&) { return 1; });
            auto session = std::make_shared<rpc::Session>(router);
            rpc::Session& s = *session;
            s.handle(request("one", "1"), [owner = std::move(session)](std::optional<std::string_view>) {});
          }),
          "a session was destroyed from one of its own handlers or completions");
    check(death::in_child([] {
            rpc::Router router;
            rpc::ThreadPool pool(1);
            rpc::Session* self = nullptr;
            router.add("inner", [] { return 1; });
            router.add("outer", [&self] { return self->handle(request("inner", "2")).value_or(""); });
            rpc::Session session(router, {.executor = &pool});
            self = &session;
            (void)session.handle(request("outer", "1"));
          }),
          "Session::handle(message) waits for its reply");
    check(death::in_child([] {
            auto pool = std::make_unique<rpc::ThreadPool>(1);
            std::latch done{1};
            pool->execute([&pool, &done] {
              pool.reset();
              done.count_down();
            });
            done.wait();
          }),
          "a ThreadPool was destroyed from one of its own tasks");
  }
#endif
}
