// SPDX-License-Identifier: MIT
// Dynamic batching (Router::coalesce): calls of a batch-aware method from different messages
// and sessions answered by one handler call, each reply byte-identical to the uncoalesced one.
#include <batchrpc/coalescing.hpp>

#include <batchrpc/builtins.hpp>
#include <batchrpc/executor.hpp>
#include <batchrpc/router.hpp>
#include <batchrpc/session.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

#include "support/printing.hpp"
#include "support/watchdog.hpp"

namespace {

using namespace std::chrono_literals;

std::size_t index(int k) { return static_cast<std::size_t>(k); }

// Holds every group inside the handler while closed (but for those let through one by one), so
// that tests can queue calls behind a running group.
class Blocker {
 public:
  void close() {
    std::lock_guard lock(mutex_);
    open_ = false;
  }
  void open() {
    std::lock_guard lock(mutex_);
    open_ = true;
    changed_.notify_all();
  }
  void let_one_through() {
    std::lock_guard lock(mutex_);
    ++tickets_;
    changed_.notify_all();
  }
  void pass() {
    std::unique_lock lock(mutex_);
    ++entered_;
    changed_.notify_all();
    changed_.wait(lock, [this] { return open_ || tickets_ > 0; });
    if (!open_) --tickets_;
  }
  // True once `n` groups have reached the blocker in all; false after 10 s.
  bool wait_entered(int n) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, 10s, [&] { return entered_ == n; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  bool open_ = true;
  int tickets_ = 0;
  int entered_ = 0;
};

// A reply that arrives through a completion, possibly on another thread.
class Reply {
 public:
  rpc::Completion sink() {
    return [this](std::optional<std::string_view> reply) {
      std::lock_guard lock(mutex_);
      text_ = reply ? std::string(*reply) : "(none)";
      changed_.notify_all();
    };
  }
  [[nodiscard]] bool ready() {
    std::lock_guard lock(mutex_);
    return text_.has_value();
  }
  std::string get() {
    std::unique_lock lock(mutex_);
    if (!changed_.wait_for(lock, 10s, [this] { return text_.has_value(); })) return "(no reply in 10 s)";
    return *text_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::optional<std::string> text_;
};

// Named events that threads set and wait for (10 s at most).
class Events {
 public:
  void set(const std::string& name) {
    std::lock_guard lock(mutex_);
    set_.push_back(name);
    changed_.notify_all();
  }
  bool wait(const std::string& name) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, 10s, [&] { return std::find(set_.begin(), set_.end(), name) != set_.end(); });
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::string> set_;
};

std::string call(const char* method, int id, int param) {
  return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":")" + method + R"(","params":[)" +
         std::to_string(param) + "]}";
}

// "twice" doubles its one integer param (a negative one is rejected, anything else is -32602)
// and records each group's ids; `reference` serves the same method without coalescing.
struct Fixture {
  Blocker blocker;
  std::mutex mutex;
  std::vector<std::vector<std::string>> groups;
  std::vector<std::thread::id> threads;
  std::vector<bool> stopped;  // per call of every group, in order: its stop was requested
  rpc::Router router;
  rpc::Router reference;

  explicit Fixture(rpc::Coalescing settings = {}) {
    for (rpc::Router* r : {&router, &reference}) {
      r->add_batched("twice", [this, r](std::span<rpc::BatchCall> calls) {
        if (r == &router) {
          record(calls);
          blocker.pass();
          std::lock_guard lock(mutex);
          for (rpc::BatchCall& call : calls) stopped.push_back(call.context().stop_requested());
        }
        for (rpc::BatchCall& call : calls) answer(call);
      }, {.capability = "math"});
      rpc::add_builtins(*r, {.server_name = "t", .server_version = "1"});
    }
    router.coalesce("twice", settings);
  }

  void record(std::span<rpc::BatchCall> calls) {
    std::vector<std::string> ids;
    for (const rpc::BatchCall& call : calls) ids.emplace_back(call.context().id().text);
    std::lock_guard lock(mutex);
    groups.push_back(std::move(ids));
    threads.push_back(std::this_thread::get_id());
  }
  static void answer(rpc::BatchCall& call) {
    const rpc::Value* v = call.params().at(0);
    if (v == nullptr || !v->IsInt64()) {
      call.reject(rpc::Error(rpc::ErrorCode::invalid_params, "need an integer"));
    } else if (v->GetInt64() < 0) {
      call.reject(rpc::Error(-32001, "negative"));
    } else {
      call.result().integer(2 * v->GetInt64());
    }
  }
  std::vector<std::vector<std::string>> seen() {
    std::lock_guard lock(mutex);
    return groups;
  }
};

std::string twice(int id, std::string_view param) {
  return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":"twice","params":[)" +
         std::string(param) + "]}";
}
std::string doubled(int id, long long value) {
  return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"result":)" + std::to_string(2 * value) + "}";
}

using Groups = std::vector<std::vector<std::string>>;

rpc::SessionOptions math() { return {.capabilities = {"math"}}; }

// Session a's call 1, run as a group of its own on a thread of its own and held by the blocker,
// so that the test can queue calls behind it; release() lets it (and every later group) go.
struct HeldFirstGroup {
  Fixture& f;
  rpc::Session a{f.router, math()};
  std::string reply;
  std::thread runner;

  explicit HeldFirstGroup(Fixture& fixture) : f(fixture) {
    f.blocker.close();
    runner = std::thread([this] { reply = a.handle(twice(1, "1")).value_or("(none)"); });
    REQUIRE(f.blocker.wait_entered(1));
  }
  HeldFirstGroup(const HeldFirstGroup&) = delete;
  HeldFirstGroup& operator=(const HeldFirstGroup&) = delete;
  ~HeldFirstGroup() {
    if (runner.joinable()) release();
  }
  void release() {
    f.blocker.open();
    runner.join();
  }
};

}  // namespace

TEST_SUITE("coalesce") {
  TEST_CASE("a lone call runs at once on the caller's thread, as a group of one") {
    Fixture f;
    rpc::Session s(f.router, {.capabilities = {"math"}});
    for (int id = 1; id <= 3; ++id) {
      Reply reply;
      s.handle(twice(id, std::to_string(id)), reply.sink());
      REQUIRE(reply.ready());  // answered before handle() returned
      CHECK(reply.get() == doubled(id, id));
    }
    CHECK(f.seen() == Groups{{"1"}, {"2"}, {"3"}});
    CHECK(f.threads == std::vector<std::thread::id>(3, std::this_thread::get_id()));
  }

  TEST_CASE("calls that meet a running group form the next group, each with its own reply") {
    watchdog::must_finish("coalesce: next group", [] {
      Fixture f({.max_wait = 10s});
      HeldFirstGroup held(f);
      std::vector<std::unique_ptr<rpc::Session>> sessions;
      std::vector<Reply> replies(4);
      for (int k = 0; k < 4; ++k) {
        sessions.push_back(std::make_unique<rpc::Session>(f.router, rpc::SessionOptions{.capabilities = {"math"}}));
        sessions.back()->handle(twice(10 + k, std::to_string(100 + k)), replies[index(k)].sink());
        CHECK_FALSE(replies[index(k)].ready());  // queued behind the running group
      }
      held.release();
      CHECK(held.reply == doubled(1, 1));
      for (int k = 0; k < 4; ++k) CHECK(replies[index(k)].get() == doubled(10 + k, 100 + k));
      CHECK(f.seen() == Groups{{"1"}, {"10", "11", "12", "13"}});
      CHECK(f.threads[1] != f.threads[0]);  // the queued group ran on the batcher thread
    });
  }

  TEST_CASE("a message's calls join the queue together, replies stay in request order") {
    watchdog::must_finish("coalesce: batch", [] {
      Fixture f({.max_wait = 10s});
      HeldFirstGroup held(f);
      rpc::Session b(f.router, math());
      rpc::Session c(f.router, math());
      const std::string batch = "[" + twice(20, "-5") + "," + twice(21, R"("x")") + "," +
                                R"({"jsonrpc":"2.0","method":"twice","params":[3]})" + "," + twice(22, "7") + "]";
      Reply rb;
      Reply rc;
      b.handle(batch, rb.sink());
      c.handle(twice(30, "30"), rc.sink());
      held.release();
      CHECK(rb.get() == *rpc::Session(f.reference, {.capabilities = {"math"}}).handle(batch));
      CHECK(rb.get() ==
            R"([{"jsonrpc":"2.0","id":20,"error":{"code":-32001,"message":"negative"}},)"
            R"({"jsonrpc":"2.0","id":21,"error":{"code":-32602,"message":"need an integer"}},)"
            R"({"jsonrpc":"2.0","id":22,"result":14}])");
      CHECK(rc.get() == doubled(30, 30));
      CHECK(f.seen() == Groups{{"1"}, {"20", "21", "", "22", "30"}});
    });
  }

  TEST_CASE("a call cancelled while queued is answered -32800 at once and never runs") {
    watchdog::must_finish("coalesce: cancel queued", [] {
      Fixture f({.max_wait = 10s});
      HeldFirstGroup held(f);
      rpc::Session b(f.router, math());
      rpc::Session c(f.router, math());
      Reply rb;
      Reply rc;
      b.handle(twice(7, "7"), rb.sink());
      c.handle(twice(7, "8"), rc.sink());  // the same id in another session: not cancelled
      CHECK(b.handle(R"({"jsonrpc":"2.0","method":"notifications/cancel","params":{"id":7}})") == std::nullopt);
      REQUIRE(rb.ready());  // while the group it waited for still runs
      CHECK(rb.get() == R"({"jsonrpc":"2.0","id":7,"error":{"code":-32800,"message":"Request cancelled"}})");
      CHECK_FALSE(rc.ready());
      held.release();
      CHECK(rc.get() == doubled(7, 8));
      CHECK(f.seen() == Groups{{"1"}, {"7"}});  // c's call only
    });
  }

  TEST_CASE("a cancel during a group reaches only its own call") {
    watchdog::must_finish("coalesce: cancel running", [] {
      Fixture f({.max_wait = 10s});
      HeldFirstGroup held(f);
      rpc::Session b(f.router, math());
      rpc::Session c(f.router, math());
      Reply rb;
      Reply rc;
      b.handle(twice(5, "5"), rb.sink());
      c.handle(twice(6, "6"), rc.sink());
      f.blocker.let_one_through();  // the first group ends; b's and c's starts, and is held
      REQUIRE(f.blocker.wait_entered(2));
      CHECK(b.handle(R"({"jsonrpc":"2.0","method":"notifications/cancel","params":{"id":5}})") == std::nullopt);
      held.release();
      // The handler answered both; the stop reached call 5 only (its handler may still answer).
      CHECK(rb.get() == doubled(5, 5));
      CHECK(rc.get() == doubled(6, 6));
      CHECK(f.seen() == Groups{{"1"}, {"5", "6"}});
      CHECK(f.stopped == std::vector<bool>{false, true, false});
    });
  }

  TEST_CASE("gating applies per call: an ungranted session is answered at once, not queued") {
    watchdog::must_finish("coalesce: gating", [] {
      Fixture f({.max_wait = 10s});
      HeldFirstGroup held(f);
      rpc::Session ungranted(f.router);
      rpc::Session granted(f.router, math());
      Reply ru;
      Reply rg;
      ungranted.handle(twice(8, "8"), ru.sink());
      granted.handle(twice(9, "9"), rg.sink());
      REQUIRE(ru.ready());
      CHECK(ru.get() == *rpc::Session(f.reference).handle(twice(8, "8")));
      CHECK(ru.get().find(R"("code":-32601)") != std::string::npos);
      held.release();
      CHECK(rg.get() == doubled(9, 9));
      CHECK(f.seen() == Groups{{"1"}, {"9"}});
    });
  }

  TEST_CASE("a session that ends while its call is queued answers it, the group runs without it") {
    watchdog::must_finish("coalesce: session ends", [] {
      Fixture f({.max_wait = 10s});
      HeldFirstGroup held(f);
      Reply gone;
      Reply stays;
      rpc::Session c(f.router, math());
      {
        rpc::Session b(f.router, math());
        b.handle(twice(3, "3"), gone.sink());
        c.handle(twice(4, "4"), stays.sink());
      }  // b ends here, its call still queued
      REQUIRE(gone.ready());
      CHECK(gone.get() == R"({"jsonrpc":"2.0","id":3,"error":{"code":-32800,"message":"Request cancelled"}})");
      held.release();
      CHECK(stays.get() == doubled(4, 4));
      CHECK(f.seen() == Groups{{"1"}, {"4"}});
    });
  }

  TEST_CASE("max_group bounds a group, a full queue starts a group beside the running one") {
    watchdog::must_finish("coalesce: max_group", [] {
      Fixture f({.max_wait = 10s, .max_quiet = 10s, .max_group = 2, .max_concurrent_groups = 2});
      HeldFirstGroup held(f);
      std::vector<std::unique_ptr<rpc::Session>> sessions;
      std::vector<Reply> replies(5);
      for (int k = 0; k < 5; ++k) {
        sessions.push_back(std::make_unique<rpc::Session>(f.router, rpc::SessionOptions{.capabilities = {"math"}}));
        sessions.back()->handle(twice(10 + k, std::to_string(k)), replies[index(k)].sink());
        if (k == 1) REQUIRE(f.blocker.wait_entered(2));  // two queued: their group runs beside
      }
      held.release();
      for (int k = 0; k < 5; ++k) CHECK(replies[index(k)].get() == doubled(10 + k, k));
      // Once the first two groups end, two batchers take the rest: in which order is theirs.
      Groups seen = f.seen();
      REQUIRE(seen.size() == 4);
      CHECK(Groups(seen.begin(), seen.begin() + 2) == Groups{{"1"}, {"10", "11"}});
      CHECK((Groups(seen.begin() + 2, seen.end()) == Groups{{"12", "13"}, {"14"}} ||
             Groups(seen.begin() + 2, seen.end()) == Groups{{"14"}, {"12", "13"}}));
    });
  }

  TEST_CASE("with one group at once (the default), queued calls wait for the running group") {
    watchdog::must_finish("coalesce: one at once", [] {
      Fixture f({.max_wait = 1ms, .max_group = 1});
      HeldFirstGroup held(f);
      rpc::Session b(f.router, math());
      Reply rb;
      b.handle(twice(2, "2"), rb.sink());
      std::this_thread::sleep_for(50ms);  // far past max_wait, with a full group queued
      CHECK_FALSE(rb.ready());
      held.release();
      CHECK(rb.get() == doubled(2, 2));
      CHECK(f.seen() == Groups{{"1"}, {"2"}});
    });
  }

  TEST_CASE("max_concurrent_groups bounds the groups at once") {
    watchdog::must_finish("coalesce: concurrent groups", [] {
      Fixture f({.max_wait = 1ms, .max_concurrent_groups = 2});
      HeldFirstGroup held(f);
      rpc::Session b(f.router, math());
      Reply rb;
      b.handle(twice(2, "2"), rb.sink());
      REQUIRE(f.blocker.wait_entered(2));  // after max_wait, beside a's group
      rpc::Session c(f.router, math());
      Reply rc;
      c.handle(twice(3, "3"), rc.sink());
      std::this_thread::sleep_for(50ms);
      CHECK_FALSE(rc.ready());  // two groups run: c's call waits for one to end
      held.release();
      CHECK(held.reply == doubled(1, 1));
      CHECK(rb.get() == doubled(2, 2));
      CHECK(rc.get() == doubled(3, 3));
      CHECK(f.seen() == Groups{{"1"}, {"2"}, {"3"}});
    });
  }

  TEST_CASE("a call that waited max_wait starts its group beside the running one") {
    watchdog::must_finish("coalesce: max_wait", [] {
      Fixture f({.max_wait = 20ms, .max_quiet = 10s, .max_concurrent_groups = 2});
      HeldFirstGroup held(f);
      rpc::Session b(f.router, math());
      Reply rb;
      b.handle(twice(2, "2"), rb.sink());
      REQUIRE(f.blocker.wait_entered(2));  // started while the first group is still held
      held.release();
      CHECK(rb.get() == doubled(2, 2));
      CHECK(f.seen() == Groups{{"1"}, {"2"}});
    });
  }

  TEST_CASE("calls that stop coming start their group beside the running one after max_quiet") {
    watchdog::must_finish("coalesce: max_quiet", [] {
      Fixture f({.max_wait = 10s, .max_quiet = 1s, .max_concurrent_groups = 2});
      HeldFirstGroup held(f);
      rpc::Session b(f.router, math());
      rpc::Session c(f.router, math());
      Reply rb;
      Reply rc;
      b.handle(twice(2, "2"), rb.sink());
      std::this_thread::sleep_for(100ms);  // within b's quiet period: c joins b's group
      c.handle(twice(3, "3"), rc.sink());
      REQUIRE(f.blocker.wait_entered(2));  // a second after c, long before max_wait
      CHECK_FALSE(rb.ready());
      held.release();
      CHECK(rb.get() == doubled(2, 2));
      CHECK(rc.get() == doubled(3, 3));
      CHECK(f.seen() == Groups{{"1"}, {"2", "3"}});
    });
  }

  TEST_CASE("a group that starts with room for another beside it takes its share of the queue") {
    watchdog::must_finish("coalesce: shares", [] {
      Fixture f({.max_wait = 10s, .max_quiet = 10s, .max_concurrent_groups = 2});
      HeldFirstGroup held(f);
      std::vector<std::unique_ptr<rpc::Session>> sessions;
      std::vector<Reply> replies(5);
      for (int k = 0; k < 5; ++k) {
        sessions.push_back(std::make_unique<rpc::Session>(f.router, math()));
        sessions.back()->handle(twice(10 + k, std::to_string(k)), replies[index(k)].sink());
      }
      f.blocker.let_one_through();  // the first group ends; the five queued calls may start
      // Two groups, three calls and two, both inside the handler at once.
      REQUIRE(f.blocker.wait_entered(3));
      Groups seen = f.seen();
      REQUIRE(seen.size() == 3);
      const Groups shares{{"10", "11", "12"}, {"13", "14"}};
      const Groups reversed{shares[1], shares[0]};  // which of the two entered first is not ours
      CHECK((Groups(seen.begin() + 1, seen.end()) == shares || Groups(seen.begin() + 1, seen.end()) == reversed));
      CHECK(f.threads[1] != f.threads[2]);
      held.release();
      for (int k = 0; k < 5; ++k) CHECK(replies[index(k)].get() == doubled(10 + k, k));
    });
  }

  TEST_CASE("a lone message with more calls than one group takes: the rest run on batcher threads") {
    // The first message the method ever sees, so no batcher thread runs yet: the caller runs
    // one group, and the calls it leaves need batchers started for them.
    const rpc::Coalescing settings[] = {{.max_group = 2}, {.max_concurrent_groups = 2}};
    for (const rpc::Coalescing& setting : settings) watchdog::must_finish("coalesce: lone batch", [&] {
      Fixture f(setting);
      const std::string batch = "[" + twice(1, "1") + "," + twice(2, "2") + "," + twice(3, "3") + "]";
      const std::optional<std::string> reply = rpc::Session(f.router, math()).handle(batch);
      CHECK(reply == "[" + doubled(1, 1) + "," + doubled(2, 2) + "," + doubled(3, 3) + "]");
      Groups seen = f.seen();
      std::sort(seen.begin(), seen.end());  // the two groups may run at once
      CHECK(seen == Groups{{"1", "2"}, {"3"}});
    });
  }

  TEST_CASE("many clients at once: every reply byte-identical to the uncoalesced one") {
    const rpc::Coalescing settings[] = {
        {}, {.max_concurrent_groups = 2}, {.max_wait = 200us, .max_quiet = 20us, .max_group = 3, .max_concurrent_groups = 3}};
    for (const rpc::Coalescing& setting : settings) watchdog::must_finish("coalesce: many clients", [&] {
      CAPTURE(setting.max_concurrent_groups);
      Fixture f(setting);
      rpc::ThreadPool pool(2);
      const std::vector<std::string> messages = {
          twice(1, "1"), twice(2, "-2"), twice(3, R"("three")"), R"({"jsonrpc":"2.0","method":"twice","params":[4]})",
          "[" + twice(5, "5") + R"(,{"jsonrpc":"2.0","id":6,"method":"ping"},)" + twice(7, "-7") +
              R"(,{"jsonrpc":"2.0","id":8,"method":"nope"}])",
          twice(9, "[]"), R"({"jsonrpc":"2.0","id":10,"method":"twice"})"};
      std::vector<std::string> expected;
      std::vector<std::size_t> calls_in;  // per message: its calls of "twice"
      rpc::Session plain(f.reference, {.capabilities = {"math"}});
      for (const std::string& m : messages) {
        expected.push_back(plain.handle(m).value_or("(none)"));
        std::size_t n = 0;
        for (std::size_t at = m.find(R"("twice")"); at != std::string::npos; at = m.find(R"("twice")", at + 1)) ++n;
        calls_in.push_back(n);
      }
      std::atomic<std::size_t> sent_calls{0};
      std::vector<std::thread> clients;
      std::atomic<int> mismatches{0};
      for (int t = 0; t < 8; ++t) {
        clients.emplace_back([&, t] {
          rpc::Session s(f.router, {.capabilities = {"math"}, .executor = t % 2 == 0 ? &pool : nullptr});
          for (int round = 0; round < 50; ++round) {
            const std::size_t k = static_cast<std::size_t>(t + round) % messages.size();
            if (s.handle(messages[k]).value_or("(none)") != expected[k]) ++mismatches;
            sent_calls += calls_in[k];
          }
        });
      }
      for (std::thread& c : clients) c.join();
      CHECK(mismatches == 0);
      std::size_t calls = 0;
      for (const auto& g : f.seen()) calls += g.size();
      CHECK(calls == sent_calls);  // each call ran exactly once
    });
  }

  TEST_CASE("a group that throws: calls of other messages are run again alone, each its own answer") {
    watchdog::must_finish("coalesce: throw", [] {
      Fixture f({.max_wait = 10s});
      std::atomic<int> runs{0};
      f.router.add_batched("strict", [&](std::span<rpc::BatchCall> calls) {
        ++runs;
        f.record(calls);
        f.blocker.pass();
        for (rpc::BatchCall& call : calls) {
          if (call.params().at(0)->GetInt64() < 0) throw rpc::Error(-32001, "negative in the group");
          call.result().integer(call.params().at(0)->GetInt64());
        }
      });
      f.router.coalesce("strict");
      const auto strict = [](int id, int v) {
        return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":"strict","params":[)" +
               std::to_string(v) + "]}";
      };
      rpc::Session a(f.router);
      f.blocker.close();
      std::string first;
      std::thread runner([&] { first = a.handle(strict(1, 1)).value_or("(none)"); });
      REQUIRE(f.blocker.wait_entered(1));
      rpc::Session b(f.router);
      rpc::Session c(f.router);
      Reply rb;
      Reply rc;
      b.handle(strict(2, -2), rb.sink());
      c.handle(strict(3, 3), rc.sink());
      f.blocker.open();
      runner.join();
      CHECK(first == R"({"jsonrpc":"2.0","id":1,"result":1})");
      CHECK(rb.get() == R"({"jsonrpc":"2.0","id":2,"error":{"code":-32001,"message":"negative in the group"}})");
      CHECK(rc.get() == R"({"jsonrpc":"2.0","id":3,"result":3})");  // not b's error
      CHECK(f.seen() == Groups{{"1"}, {"2", "3"}, {"2"}, {"3"}});
      // Within one message, a throw still answers every call of its group (as without coalescing).
      rpc::Session d(f.router);
      CHECK(d.handle("[" + strict(4, 4) + "," + strict(5, -5) + "]") ==
            R"([{"jsonrpc":"2.0","id":4,"error":{"code":-32001,"message":"negative in the group"}},)"
            R"({"jsonrpc":"2.0","id":5,"error":{"code":-32001,"message":"negative in the group"}}])");
    });
  }

  TEST_CASE("a call queued while every group runs starts when one ends and its wait is over") {
    watchdog::must_finish("coalesce: slot freed", [] {
      Events events;
      rpc::Router router;
      router.add_batched("step", [&](std::span<rpc::BatchCall> calls) {
        const std::int64_t step = calls.front().params().at(0)->GetInt64();
        events.set("started " + std::to_string(step));
        if (step == 1) events.wait("end 1");
        if (step == 2) events.set(events.wait("started 3") ? "3 started beside 2" : "3 waited for 2");
        for (rpc::BatchCall& c : calls) c.result().integer(step);
      });
      router.coalesce("step", {.max_wait = 20ms, .max_quiet = 20ms, .max_concurrent_groups = 2});
      rpc::Session a(router);
      rpc::Session b(router);
      rpc::Session c(router);
      std::thread first([&] { (void)a.handle(call("step", 1, 1)); });  // a group on this thread
      REQUIRE(events.wait("started 1"));
      Reply rb;
      b.handle(call("step", 2, 2), rb.sink());  // starts beside the first after max_wait
      REQUIRE(events.wait("started 2"));
      Reply rc;
      c.handle(call("step", 3, 3), rc.sink());  // both groups run: it waits for one to end
      events.set("end 1");
      first.join();
      CHECK(events.wait("3 started beside 2"));
      CHECK(rb.get() == R"({"jsonrpc":"2.0","id":2,"result":2})");
      CHECK(rc.get() == R"({"jsonrpc":"2.0","id":3,"result":3})");
    });
  }

  TEST_CASE("a call made from inside a group runs at once, even behind other queued calls") {
    for (const std::size_t groups : {std::size_t{1}, std::size_t{2}}) watchdog::must_finish("coalesce: nested behind others", [&] {
      CAPTURE(groups);
      Events events;
      rpc::Router router;
      std::unique_ptr<rpc::Session> inner;
      router.add_batched("square", [&](std::span<rpc::BatchCall> calls) {
        for (rpc::BatchCall& c : calls) {
          const std::int64_t n = c.params().at(0)->GetInt64();
          if (n == 1) {  // once another client's call is queued, call the method again
            events.set("running");
            (void)events.wait("queued");
            const std::optional<std::string> nested = inner->handle(call("square", 9, 10));
            c.result().integer(nested == R"({"jsonrpc":"2.0","id":9,"result":100})" ? 1 : -1);
          } else {
            c.result().integer(n * n);
          }
        }
      });
      // One call a group: the oldest queued call is another client's, not the nested one.
      router.coalesce("square", {.max_wait = 10s, .max_quiet = 10s, .max_group = 1, .max_concurrent_groups = groups});
      inner = std::make_unique<rpc::Session>(router);
      rpc::Session a(router);
      rpc::Session b(router);
      Reply ra;
      std::thread first([&] { (void)a.handle(call("square", 1, 1), ra.sink()); });
      REQUIRE(events.wait("running"));
      Reply rb;
      b.handle(call("square", 2, 3), rb.sink());
      events.set("queued");
      first.join();
      CHECK(ra.get() == R"({"jsonrpc":"2.0","id":1,"result":1})");
      CHECK(rb.get() == R"({"jsonrpc":"2.0","id":2,"result":9})");
    });
  }

  TEST_CASE("a batch split into shares stays in as many groups as may run at once, however quick") {
    watchdog::must_finish("coalesce: parts", [] {
      std::mutex mutex;
      std::vector<std::size_t> sizes;
      rpc::Router router;
      router.add_batched("square", [&](std::span<rpc::BatchCall> calls) {
        {
          std::lock_guard lock(mutex);
          sizes.push_back(calls.size());
        }
        for (rpc::BatchCall& c : calls) c.result().integer(c.params().at(0)->GetInt64() * c.params().at(0)->GetInt64());
      });
      // No group starts beside another on a timer: the warm-up's group may still be ending (its
      // reply is out before it counts itself done), and a batcher starting beside it would find
      // room for two groups, not three. The batch then starts when that group ends, and its split
      // alone decides the groups.
      router.coalesce("square", {.max_wait = 10s, .max_quiet = 10s, .max_concurrent_groups = 3});
      rpc::ThreadPool pool(1);
      rpc::Session s(router, {.executor = &pool});  // every call queues for the batcher threads
      REQUIRE(s.handle(call("square", 0, 0)) == R"({"jsonrpc":"2.0","id":0,"result":0})");  // they run now
      std::string batch = "[";
      std::string expected = "[";
      for (int k = 1; k <= 9; ++k) {
        batch += (k > 1 ? "," : "") + call("square", k, k);
        expected += (k > 1 ? "," : "") + std::string(R"({"jsonrpc":"2.0","id":)") + std::to_string(k) +
                    R"(,"result":)" + std::to_string(k * k) + "}";
      }
      CHECK(s.handle(batch + "]") == expected + "]");
      std::lock_guard lock(mutex);
      CHECK(sizes == std::vector<std::size_t>{1, 3, 3, 3});
    });
  }

  TEST_CASE("a handler or a completion calling back into a coalesced method does not wait for itself") {
    watchdog::must_finish("coalesce: reentry", [] {
      rpc::Router router;
      rpc::ThreadPool pool(1);
      std::unique_ptr<rpc::Session> inner_plain;
      std::unique_ptr<rpc::Session> inner_pooled;
      router.add_batched("depth", [&](std::span<rpc::BatchCall> calls) {
        for (rpc::BatchCall& call : calls) {
          const std::int64_t n = call.params().at(0)->GetInt64();
          if (n == 0) {
            call.result().integer(0);
            continue;
          }
          // Two levels deep, alternating sessions with and without an executor.
          rpc::Session& next = n % 2 == 0 ? *inner_plain : *inner_pooled;
          const std::optional<std::string> reply =
              next.handle(R"({"jsonrpc":"2.0","id":1,"method":"depth","params":[)" + std::to_string(n - 1) + "]}");
          call.result().integer(reply && reply->find(std::to_string(n - 1) + "}") != std::string::npos ? n : -1);
        }
      });
      router.coalesce("depth");
      inner_plain = std::make_unique<rpc::Session>(router);
      inner_pooled = std::make_unique<rpc::Session>(router, rpc::SessionOptions{.executor = &pool});
      rpc::Session outer(router);
      CHECK(outer.handle(R"({"jsonrpc":"2.0","id":7,"method":"depth","params":[3]})") ==
            R"({"jsonrpc":"2.0","id":7,"result":3})");
      // A completion (here run by the group's thread) that waits for another call of the method.
      std::string chained;
      Reply done;
      inner_pooled->handle(R"({"jsonrpc":"2.0","id":8,"method":"depth","params":[0]})",
                           [&](std::optional<std::string_view>) {
                             chained = inner_plain->handle(R"({"jsonrpc":"2.0","id":9,"method":"depth","params":[0]})")
                                           .value_or("(none)");
                             done.sink()(std::string_view("ok"));
                           });
      CHECK(done.get() == "ok");
      CHECK(chained == R"({"jsonrpc":"2.0","id":9,"result":0})");
      inner_plain.reset();
      inner_pooled.reset();
    });
  }

  TEST_CASE("Router::handle groups within one message only") {
    Fixture f;
    const std::string batch = "[" + twice(1, "1") + "," + twice(2, "2") + "]";
    CHECK(f.router.handle(batch) == "[" + doubled(1, 1) + "," + doubled(2, 2) + "]");
    CHECK(f.seen() == Groups{{"1", "2"}});
  }

  TEST_CASE("coalesce refuses what it cannot serve") {
    rpc::Router router;
    router.add("plain", [] { return 1; });
    router.add_batched("batched", [](std::span<rpc::BatchCall>) {});
    auto message = [&](std::string_view name, rpc::Coalescing settings) -> std::string {
      try {
        router.coalesce(name, settings);
      } catch (const std::invalid_argument& e) {
        return e.what();
      }
      return "(accepted)";
    };
    CHECK(message("plain", {}) == R"(batchrpc: coalesce("plain"): not a method registered with add_batched)");
    CHECK(message("absent", {}) == R"(batchrpc: coalesce("absent"): not a method registered with add_batched)");
    CHECK(message("batched", {.max_wait = std::chrono::microseconds(-1)}) ==
          "batchrpc: Coalescing::max_wait cannot be negative");
    CHECK(message("batched", {.max_quiet = std::chrono::microseconds(-1)}) ==
          "batchrpc: Coalescing::max_quiet cannot be negative");
    CHECK(message("batched", {.max_group = 0}) == "batchrpc: Coalescing::max_group must be at least 1");
    CHECK(message("batched", {.max_concurrent_groups = 0}) ==
          "batchrpc: Coalescing::max_concurrent_groups must be at least 1");
    CHECK(message("batched", {}) == "(accepted)");
  }
}
