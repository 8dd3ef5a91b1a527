// SPDX-License-Identifier: MIT
// Responder: answering inside the call or later from another thread, through routers and sessions.
#include <batchrpc/responder.hpp>

#include <batchrpc/builtins.hpp>
#include <batchrpc/error.hpp>
#include <batchrpc/executor.hpp>
#include <batchrpc/router.hpp>
#include <batchrpc/session.hpp>

#include <doctest/doctest.h>

#include "support/printing.hpp"
#include "support/replies.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace {

using namespace replies;

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

std::string request(std::string_view method, std::string_view id, std::string_view params = {}) {
  std::string s = R"({"jsonrpc":"2.0","method":")" + std::string(method) + "\"";
  if (!params.empty()) s += R"(,"params":)" + std::string(params);
  if (!id.empty()) s += R"(,"id":)" + std::string(id);
  return s + "}";
}

// Threads that answer later; every one is joined before the test ends.
class Later {
 public:
  Later() = default;
  Later(const Later&) = delete;
  Later& operator=(const Later&) = delete;
  ~Later() { join(); }

  template <class F>
  void run(F&& task) {
    std::lock_guard lock(mutex_);
    threads_.emplace_back(std::forward<F>(task));
  }
  void join() {
    std::vector<std::thread> threads;
    {
      std::lock_guard lock(mutex_);
      threads.swap(threads_);
    }
    for (std::thread& t : threads) t.join();
  }

 private:
  std::mutex mutex_;
  std::vector<std::thread> threads_;
};

// One completion's outcome: how often it was called, and the reply it got.
struct Completed {
  std::mutex mutex;
  std::condition_variable cv;
  int calls = 0;
  std::optional<std::string> reply;

  rpc::Completion callback() {
    return [this](std::optional<std::string_view> r) {
      std::lock_guard lock(mutex);
      ++calls;
      if (r) reply.emplace(*r);
      cv.notify_all();  // under the lock: the waiter may go away once it is released
    };
  }
  // Waits (generously) for the first call; true when it came.
  bool wait() {
    std::unique_lock lock(mutex);
    return cv.wait_for(lock, 10s, [this] { return calls > 0; });
  }
  int count() {
    std::lock_guard lock(mutex);
    return calls;
  }
  std::optional<std::string> text() {
    std::lock_guard lock(mutex);
    return reply;
  }
};

// A router whose methods all answer through a Responder.
struct Fixture {
  Later later;  // declared first: joined after everything else is gone
  std::atomic<int> ran{0};
  std::atomic<int> noted{0};
  std::atomic<bool> second_resolve_threw{false};
  std::atomic<bool> second_reject_threw{false};
  std::atomic<bool> pending_after_answer{true};
  std::atomic<int> late_copy_threw{0};

  std::mutex hook_mutex;
  std::vector<std::string> hooked_methods;
  std::vector<std::exception_ptr> hooked_errors;

  rpc::ThreadPool answer_pool{2};  // where "pooled" answers from (not where handlers run)

  rpc::Router router{rpc::RouterOptions{
      .on_exception = [this](std::string_view method, std::exception_ptr e) {
        std::lock_guard lock(hook_mutex);
        hooked_methods.emplace_back(method);
        hooked_errors.push_back(std::move(e));
      }}};

  Fixture() {
    router.add("int", [](rpc::Responder done) { done.resolve(42); });
    router.add("text", [](rpc::Responder done) { done.resolve(std::string("hi")); });
    router.add("list", [](rpc::Responder done) { done.resolve(std::vector<int>{1, 2, 3}); });
    router.add("object", [](rpc::Responder done) {
      done.resolve_with([](rpc::ResultWriter& out) {
        out.start_object();
        out.key("a");
        out.integer(1);
        out.key("b");
        out.start_array();
        out.boolean(true);
        out.null();
        out.end_array();
        out.end_object();
      });
    });
    router.add("refuse", [](rpc::Responder done) {
      done.reject(rpc::Error(-32001, "Quota exceeded", rpc::json(R"({"retryAfter":30})")));
    });
    router.add("add", [](int a, int b, rpc::Responder done) { done.resolve(a + b); },
               rpc::names("a", "b"));
    router.add("plain", [] { return 42; });  // an ordinary handler, for batches
    router.add("twice", [this](rpc::Responder done) {
      done.resolve(1);
      pending_after_answer = done.pending();
      try {
        done.resolve(2);
      } catch (const std::logic_error&) {
        second_resolve_threw = true;
      }
      try {
        done.reject(rpc::Error(-32001, "too late"));
      } catch (const std::logic_error&) {
        second_reject_threw = true;
      }
    });
    router.add("drop", [this](rpc::Responder) { ++ran; });
    router.add("drop_later", [this](rpc::Responder done) {
      later.run([done = std::move(done)]() mutable {
        std::this_thread::sleep_for(20ms);
        rpc::Responder gone = std::move(done);  // destroyed here, unanswered
      });
    });
    // Answers `tag` after `ms` milliseconds, from another thread.
    router.add("later", [this](std::string tag, int ms, rpc::Responder done) {
      later.run([tag = std::move(tag), ms, done = std::move(done)]() mutable {
        std::this_thread::sleep_for(std::chrono::milliseconds(ms));
        done.resolve(tag);
      });
    }, rpc::names("tag", "ms"));
    // Answers `tag` after `ms` milliseconds, from a pool thread (a copy rides in the task).
    router.add("pooled", [this](std::string tag, int ms, rpc::Responder done) {
      answer_pool.execute([tag, ms, done] {
        std::this_thread::sleep_for(std::chrono::milliseconds(ms));
        done.resolve(tag);
      });
    }, rpc::names("tag", "ms"));
    // Two copies on two threads; the first answer wins, the other throws.
    router.add("race", [this](rpc::Responder done) {
      for (int i = 0; i < 2; ++i) {
        later.run([this, done, i] {
          std::this_thread::sleep_for(std::chrono::milliseconds(10 + 20 * i));
          try {
            done.resolve(i);
          } catch (const std::logic_error&) {
            ++late_copy_threw;
          }
        });
      }
    });
    // Two copies, both dropped on other threads without answering.
    router.add("drop_copies", [this](rpc::Responder done) {
      for (int i = 0; i < 2; ++i) {
        later.run([done, i]() mutable {
          std::this_thread::sleep_for(std::chrono::milliseconds(10 + 10 * i));
          rpc::Responder gone = std::move(done);
        });
      }
    });
    // A notification target: counts its call, answers 20 ms later.
    router.add("note", [this](rpc::Responder done) {
      ++ran;
      later.run([this, done = std::move(done)]() mutable {
        std::this_thread::sleep_for(20ms);
        ++noted;
        done.resolve(0);
      });
    });
    // Waits (up to 5 s) for cancellation, then answers -32800.
    router.add("wait", [this](rpc::Responder done) {
      ++ran;
      later.run([done = std::move(done)]() mutable {
        std::mutex m;
        std::condition_variable_any cv;
        std::unique_lock lock(m);
        cv.wait_for(lock, done.stop_token(), 5s, [] { return false; });
        if (done.stop_requested()) {
          done.reject(rpc::cancelled());
        } else {
          done.resolve(std::string("not cancelled"));
        }
      });
    });
    rpc::add_builtins(router);
  }

  std::vector<std::string> methods_hooked() {
    std::lock_guard lock(hook_mutex);
    return hooked_methods;
  }
  // True when every hooked exception is a std::logic_error.
  bool all_hooked_are_logic_errors() {
    std::lock_guard lock(hook_mutex);
    for (const std::exception_ptr& e : hooked_errors) {
      try {
        std::rethrow_exception(e);
      } catch (const std::logic_error&) {
      } catch (...) {
        return false;
      }
    }
    return true;
  }
  void clear_hooked() {
    std::lock_guard lock(hook_mutex);
    hooked_methods.clear();
    hooked_errors.clear();
  }
};

// The three ways a message reaches a handler.
enum class Path { router, session, pooled_session };

std::string name_of(Path p) {
  switch (p) {
    case Path::router: return "Router::handle";
    case Path::session: return "Session (inline)";
    case Path::pooled_session: return "Session (ThreadPool)";
  }
  return "?";
}

std::optional<std::string> handle(Fixture& f, Path path, std::string_view message) {
  switch (path) {
    case Path::router:
      return f.router.handle(message);
    case Path::session: {
      rpc::Session session(f.router);
      return session.handle(message);
    }
    case Path::pooled_session: {
      rpc::ThreadPool pool(4);
      rpc::Session session(f.router, {.executor = &pool});
      return session.handle(message);
    }
  }
  return std::nullopt;
}

constexpr Path all_paths[] = {Path::router, Path::session, Path::pooled_session};

}  // namespace

TEST_SUITE("responder") {
  TEST_CASE("a Responder resolving inside the call answers with an int") {
    Fixture f;
    for (Path path : all_paths) {
      CAPTURE(name_of(path));
      CHECK(handle(f, path, request("int", "1")) == result("1", "42"));
    }
  }

  TEST_CASE("a Responder resolving inside the call answers with a string") {
    Fixture f;
    for (Path path : all_paths) {
      CAPTURE(name_of(path));
      CHECK(handle(f, path, request("text", R"("t")")) == result(R"("t")", R"("hi")"));
    }
  }

  TEST_CASE("a Responder resolving inside the call answers with a vector") {
    Fixture f;
    for (Path path : all_paths) {
      CAPTURE(name_of(path));
      CHECK(handle(f, path, request("list", "2")) == result("2", "[1,2,3]"));
    }
  }

  TEST_CASE("resolve_with writes the result value itself") {
    Fixture f;
    for (Path path : all_paths) {
      CAPTURE(name_of(path));
      CHECK(handle(f, path, request("object", "3")) == result("3", R"({"a":1,"b":[true,null]})"));
    }
  }

  TEST_CASE("reject answers with the error's code, message and data") {
    Fixture f;
    for (Path path : all_paths) {
      CAPTURE(name_of(path));
      CHECK(handle(f, path, request("refuse", "4")) ==
            error("4", -32001, "Quota exceeded", R"({"retryAfter":30})"));
    }
  }

  TEST_CASE("a Responder handler that throws before answering is answered with what it threw") {
    Fixture f;
    f.router.add("check", [](int n, rpc::Responder done) {
      if (n < 0) throw rpc::Error(rpc::ErrorCode::invalid_params, "n must be >= 0");
      if (n == 0) throw std::runtime_error("zero");
      done.resolve(n);
    }, rpc::names("n"));
    for (Path path : all_paths) {
      CAPTURE(name_of(path));
      CHECK(handle(f, path, request("check", "1", "[-1]")) == error("1", -32602, "n must be >= 0"));
      CHECK(handle(f, path, request("check", "2", "[0]")) == error("2", -32603, "Internal error"));
      CHECK(handle(f, path, request("check", "3", "[3]")) == result("3", "3"));
    }
    std::lock_guard lock(f.hook_mutex);
    // once per runtime_error (one per path), never for the Responder it took along
    CHECK(f.hooked_methods == std::vector<std::string>{"check", "check", "check"});
  }

  TEST_CASE("a Responder handler still binds its params by name and by position") {
    Fixture f;
    for (Path path : all_paths) {
      CAPTURE(name_of(path));
      CHECK(handle(f, path, request("add", "5", R"({"a":2,"b":3})")) == result("5", "5"));
      CHECK(handle(f, path, request("add", "6", "[4,5]")) == result("6", "9"));
    }
  }

  TEST_CASE("a batch of members answering inside the call keeps request order") {
    Fixture f;
    const std::string batch = "[" + request("list", "1") + "," + request("plain", "2") + "," +
                              request("refuse", "3") + "," + request("int", "4") + "]";
    const std::string expected = "[" + result("1", "[1,2,3]") + "," + result("2", "42") + "," +
                                 error("3", -32001, "Quota exceeded", R"({"retryAfter":30})") +
                                 "," + result("4", "42") + "]";
    for (Path path : all_paths) {
      CAPTURE(name_of(path));
      CHECK(handle(f, path, batch) == expected);
    }
  }

  TEST_CASE("a Responder moved to another thread answers later and the reply waits for it") {
    Fixture f;
    for (Path path : all_paths) {
      CAPTURE(name_of(path));
      CHECK(handle(f, path, request("later", "7", R"({"tag":"late","ms":30})")) ==
            result("7", R"("late")"));
    }
  }

  TEST_CASE("a Responder copied into a ThreadPool task answers from the pool") {
    Fixture f;
    for (Path path : all_paths) {
      CAPTURE(name_of(path));
      CHECK(handle(f, path, request("pooled", "8", R"({"tag":"pool","ms":20})")) ==
            result("8", R"("pool")"));
    }
  }

  TEST_CASE("a batch waits for late answers and keeps request order") {
    Fixture f;
    // The first member answers last, the third before it, the second and fifth at once.
    const std::string batch = "[" + request("later", "1", R"({"tag":"a","ms":50})") + "," +
                              request("plain", "2") + "," +
                              request("pooled", "3", R"({"tag":"b","ms":20})") + "," +
                              request("note", "") + "," + request("plain", R"("x")") + "]";
    const std::string expected = "[" + result("1", R"("a")") + "," + result("2", "42") + "," +
                                 result("3", R"("b")") + "," + result(R"("x")", "42") + "]";
    for (Path path : all_paths) {
      CAPTURE(name_of(path));
      const int noted_before = f.noted.load();
      CHECK(handle(f, path, batch) == expected);
      CHECK(f.noted.load() == noted_before + 1);  // the notification's late answer came first
    }
  }

  TEST_CASE("a Responder destroyed without answering answers -32603 and the hook sees a logic_error") {
    Fixture f;
    for (Path path : all_paths) {
      CAPTURE(name_of(path));
      f.clear_hooked();
      CHECK(handle(f, path, request("drop", "8")) == error("8", -32603, "Internal error"));
      CHECK(f.methods_hooked() == std::vector<std::string>{"drop"});
      CHECK(f.all_hooked_are_logic_errors());
    }
  }

  TEST_CASE("a Responder destroyed unanswered on another thread answers -32603 and the hook sees a logic_error") {
    Fixture f;
    for (Path path : all_paths) {
      CAPTURE(name_of(path));
      f.clear_hooked();
      CHECK(handle(f, path, request("drop_later", "9")) == error("9", -32603, "Internal error"));
      CHECK(f.methods_hooked() == std::vector<std::string>{"drop_later"});
      CHECK(f.all_hooked_are_logic_errors());
    }
  }

  TEST_CASE("copies all dropped unanswered give one -32603 once the last one goes") {
    Fixture f;
    for (Path path : all_paths) {
      CAPTURE(name_of(path));
      f.clear_hooked();
      CHECK(handle(f, path, request("drop_copies", "10")) == error("10", -32603, "Internal error"));
      CHECK(f.methods_hooked() == std::vector<std::string>{"drop_copies"});
      CHECK(f.all_hooked_are_logic_errors());
    }
  }

  TEST_CASE("the text of a dropped Responder's error is sent only when the server opts in") {
    rpc::Router router{rpc::RouterOptions{.expose_exception_text = true}};
    router.add("drop", [](rpc::Responder) {});
    CHECK(router.handle(request("drop", "1")) ==
          error("1", -32603, "Internal error",
                R"({"exception":"batchrpc: a Responder was destroyed without answering"})"));
  }

  TEST_CASE("a second answer on the same Responder throws std::logic_error and the first one stands") {
    Fixture f;
    for (Path path : all_paths) {
      CAPTURE(name_of(path));
      f.second_resolve_threw = false;
      f.second_reject_threw = false;
      f.pending_after_answer = true;
      CHECK(handle(f, path, request("twice", "10")) == result("10", "1"));
      CHECK(f.second_resolve_threw.load());
      CHECK(f.second_reject_threw.load());
      CHECK_FALSE(f.pending_after_answer.load());
    }
  }

  TEST_CASE("copies share one answer: the first wins and the later one throws std::logic_error") {
    Fixture f;
    for (Path path : all_paths) {
      CAPTURE(name_of(path));
      f.late_copy_threw = 0;
      CHECK(handle(f, path, request("race", "11")) == result("11", "0"));
      f.later.join();  // the losing copy answers after the reply has gone
      CHECK(f.late_copy_threw.load() == 1);
    }
  }

  TEST_CASE("a moved-from Responder is not pending and the moved-to one answers") {
    std::atomic<bool> moved_from_pending{true};
    std::atomic<bool> moved_to_pending{false};
    rpc::Router router;
    router.add("move", [&](rpc::Responder done) {
      rpc::Responder other = std::move(done);
      moved_from_pending = done.pending();  // NOLINT(bugprone-use-after-move): checked on purpose
      moved_to_pending = other.pending();
      other.resolve(2);
    });
    CHECK(router.handle(request("move", "1")) == result("1", "2"));
    CHECK_FALSE(moved_from_pending.load());
    CHECK(moved_to_pending.load());
  }

  TEST_CASE("a notification handled through a Responder runs but gets no reply") {
    Fixture f;
    for (Path path : all_paths) {
      CAPTURE(name_of(path));
      const int ran_before = f.ran.load();
      const int noted_before = f.noted.load();
      CHECK(handle(f, path, request("note", "")) == std::nullopt);
      CHECK(f.ran.load() == ran_before + 1);
      CHECK(f.noted.load() == noted_before + 1);  // nothing is "sent" before its answer
    }
  }

  TEST_CASE("a batch of notifications answered later sends nothing, after every answer") {
    Fixture f;
    const std::string batch = "[" + request("note", "") + "," + request("note", "") + "]";
    for (Path path : all_paths) {
      CAPTURE(name_of(path));
      const int noted_before = f.noted.load();
      CHECK(handle(f, path, batch) == std::nullopt);
      CHECK(f.noted.load() == noted_before + 2);
    }
  }

  TEST_CASE("Session::handle with a completion calls it exactly once, with the text the sync call returns") {
    Fixture f;
    const std::string messages[] = {
        request("later", "1", R"({"tag":"late","ms":30})"),
        request("pooled", "2", R"({"tag":"pool","ms":20})"),
        "[" + request("later", "3", R"({"tag":"a","ms":40})") + "," + request("plain", "4") + "," +
            request("note", "") + "]",
        request("note", ""),
        request("drop_later", "5"),
    };
    for (const bool pooled : {false, true}) {
      CAPTURE(pooled);
      rpc::ThreadPool pool(4);
      for (const std::string& message : messages) {
        CAPTURE(message);
        std::optional<std::string> sync_reply;
        {
          rpc::Session session(f.router, {.executor = pooled ? &pool : nullptr});
          sync_reply = session.handle(message);
        }
        Completed completed;
        {
          rpc::Session session(f.router, {.executor = pooled ? &pool : nullptr});
          session.handle(message, completed.callback());
          CHECK(completed.wait());
        }  // destruction waits for everything: no late second call can follow
        CHECK(completed.count() == 1);
        CHECK(completed.text() == sync_reply);
      }
    }
  }

  TEST_CASE("an async answer's completion comes after handle returns, once") {
    Fixture f;
    rpc::Session session(f.router);
    Completed completed;
    session.handle(request("later", "1", R"({"tag":"late","ms":300})"), completed.callback());
    CHECK(completed.count() == 0);  // the answer is 300 ms away
    REQUIRE(completed.wait());
    f.later.join();
    CHECK(completed.count() == 1);
    CHECK(completed.text() == result("1", R"("late")"));
  }

  TEST_CASE("Responder::stop_token is signalled when the session cancels the request") {
    for (const bool pooled : {false, true}) {
      CAPTURE(pooled);
      Fixture f;
      rpc::ThreadPool pool(2);
      rpc::Session session(f.router, {.executor = pooled ? &pool : nullptr});
      Completed completed;
      const auto start = Clock::now();
      session.handle(request("wait", "1"), completed.callback());
      while (f.ran.load() == 0 && Clock::now() - start < 5s) std::this_thread::sleep_for(1ms);
      REQUIRE(f.ran.load() == 1);
      CHECK(completed.count() == 0);

      std::optional<std::string> cancel_reply{"not set"};
      std::thread canceller([&] {
        cancel_reply = session.handle(
            R"({"jsonrpc":"2.0","method":"notifications/cancel","params":{"id":1}})");
      });
      canceller.join();
      CHECK(cancel_reply == std::nullopt);
      REQUIRE(completed.wait());
      CHECK(Clock::now() - start < 3s);  // the handler would wait 5 s without the cancel
      CHECK(completed.text() == error("1", -32800, "Request cancelled"));
      CHECK(completed.count() == 1);
    }
  }

  TEST_CASE("a Responder's stop_token is not signalled through Router::handle") {
    rpc::Router router;
    router.add("probe", [](rpc::Responder done) { done.resolve(done.stop_requested()); });
    CHECK(router.handle(request("probe", "1")) == result("1", "false"));
  }
}
