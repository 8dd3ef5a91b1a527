// SPDX-License-Identifier: MIT
// Two-way sessions: the server's own notifications and requests to its client (rpc::Peer), and
// the client's Response objects routed back by id, singly or inside batches.
#include <batchrpc/batchrpc.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <deque>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <cstring>

#include <doctest/doctest.h>

#include "support/printing.hpp"
#include "support/wire.hpp"

namespace peer_test {
// A type with its own JsonTraits, which says it owns its data.
struct Celsius {
  double degrees = 0;
};
}  // namespace peer_test

template <>
struct rpc::JsonTraits<peer_test::Celsius> {
  static constexpr bool owns_its_data = true;
  static bool read(const rpc::Value& v, peer_test::Celsius& out, std::string& why) {
    if (!v.IsNumber()) return why = "expected degrees", false;
    out.degrees = v.GetDouble();
    return true;
  }
};

namespace {

std::string response(std::string_view id, std::string_view result) {
  return R"({"jsonrpc":"2.0","id":")" + std::string(id) + R"(","result":)" + std::string(result) + "}";
}

// A router whose "roots" method asks its client for roots/list and answers with how many came.
struct Fixture {
  rpc::Router router;
  Fixture() {
    router.add("roots", [](rpc::Context& ctx, rpc::Responder done) {
      ctx.peer().request("roots/list", rpc::json("{}"), [done](rpc::Reply reply) {
        if (!reply.ok()) {
          done.reject(*reply.error());
          return;
        }
        const rpc::Json roots = reply.result();
        done.resolve(roots);
      });
    });
    router.add("tell", [](std::string text, rpc::Context& ctx) {
      return ctx.peer().notify("notifications/message", rpc::named("level", "info", "data", text));
    }, rpc::names("text"));
    router.add("add", [](int a, int b) { return a + b; });
  }
};

// A session on Fixture's router, attached to a Wire, that records the ids of unmatched Responses.
struct Attached {
  Fixture f;
  Wire wire;
  std::vector<std::string> unmatched;
  rpc::Session session{f.router, {.unmatched_response = [this](const rpc::RequestId& id) {
                                    unmatched.emplace_back(id.text);
                                  }}};
  Attached() { session.attach(wire.writer()); }
};

}  // namespace

TEST_SUITE("peer: two-way sessions") {
  TEST_CASE("a handler asks its client and answers with the client's result") {
    Fixture f;
    Wire wire;
    rpc::Session session{f.router};
    session.attach(wire.writer());
    std::optional<std::string> reply;
    bool answered = false;
    session.handle(R"({"jsonrpc":"2.0","method":"roots","id":7})", [&](std::optional<std::string_view> r) {
      answered = true;
      if (r) reply.emplace(*r);
    });
    CHECK_FALSE(answered);
    const auto sent = wire.taken();
    REQUIRE(sent.size() == 1);
    CHECK(sent[0] == R"({"jsonrpc":"2.0","id":"srv-1","method":"roots/list","params":{}})");
    CHECK(session.peer().waiting() == 1);
    // The client's Response is never answered.
    CHECK(session.handle(response("srv-1", R"({"roots":[{"uri":"file:///a"}]})")) == std::nullopt);
    CHECK(answered);
    CHECK(reply == R"({"jsonrpc":"2.0","id":7,"result":{"roots":[{"uri":"file:///a"}]}})");
    CHECK(session.peer().waiting() == 0);
  }

  TEST_CASE("notifications go out whole, in order, and only while a transport is attached") {
    Fixture f;
    Wire wire;
    rpc::Session session{f.router};
    CHECK(session.handle(R"({"jsonrpc":"2.0","method":"tell","params":["early"],"id":1})") ==
          R"({"jsonrpc":"2.0","id":1,"result":false})");
    session.attach(wire.writer());
    CHECK(session.peer().connected());
    CHECK(session.handle(R"([{"jsonrpc":"2.0","method":"tell","params":["a"],"id":1},)"
                         R"({"jsonrpc":"2.0","method":"tell","params":["b\"c"],"id":2}])") ==
          R"([{"jsonrpc":"2.0","id":1,"result":true},{"jsonrpc":"2.0","id":2,"result":true}])");
    CHECK(wire.taken() == std::vector<std::string>{
                              R"({"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"a"}})",
                              R"({"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"b\"c"}})"});
    session.detach();
    CHECK_FALSE(session.peer().connected());
    CHECK_FALSE(session.peer().notify("late"));
    CHECK(wire.taken().empty());
  }

  TEST_CASE("responses inside a batch are taken, the reply holds the requests' entries only") {
    Fixture f;
    Wire wire;
    rpc::Session session{f.router};
    session.attach(wire.writer());
    const rpc::Peer peer = session.peer();
    std::vector<std::string> got;
    for (int i = 0; i < 3; ++i) {
      peer.request("ask", rpc::json("[" + std::to_string(i) + "]"), [&got](rpc::Reply r) {
        got.push_back(r.ok() ? std::string(r.result().text()) : std::to_string(r.error()->code()));
      });
    }
    CHECK(wire.taken().size() == 3);
    // Answered out of order, mixed with a request and an error response.
    CHECK(session.handle("[" + response("srv-3", "30") + R"(,{"jsonrpc":"2.0","method":"add","params":[1,2],"id":"x"},)" +
                         R"({"jsonrpc":"2.0","id":"srv-1","error":{"code":-1,"message":"no","data":[1]}}])") ==
          R"([{"jsonrpc":"2.0","id":"x","result":3}])");
    CHECK(got == std::vector<std::string>{"30", "-1"});
    // A batch of responses only gets no reply at all.
    CHECK(session.handle("[" + response("srv-2", R"("two")") + "]") == std::nullopt);
    CHECK(got == std::vector<std::string>{"30", "-1", R"("two")"});
  }

  TEST_CASE("the client's error object comes back as an rpc::Error, a malformed one is reported") {
    Fixture f;
    Wire wire;
    rpc::Session session{f.router};
    session.attach(wire.writer());
    auto first = session.peer().request("a");
    auto second = session.peer().request("b");
    CHECK(session.handle(R"({"jsonrpc":"2.0","id":"srv-1","error":{"code":-32601,"message":"Method not found","data":{"m":"a"}}})") ==
          std::nullopt);
    const rpc::Reply one = first.get();
    REQUIRE(one.error() != nullptr);
    CHECK(one.error()->code() == -32601);
    CHECK(one.error()->message() == "Method not found");
    CHECK(one.error()->data().text() == R"({"m":"a"})");
    CHECK_THROWS_AS((void)one.as<int>(), rpc::Error);
    CHECK(session.handle(R"({"jsonrpc":"2.0","id":"srv-2","error":{"code":"x"}})") == std::nullopt);
    const rpc::Reply two = second.get();
    REQUIRE(two.error() != nullptr);
    CHECK(two.error()->code() == -32603);
    CHECK(two.error()->data().text() == R"({"code":"x"})");
  }

  TEST_CASE("a client's result that does not bind is std::invalid_argument, saying why") {
    Attached attached;
    auto reply = attached.session.peer().request("ask");
    CHECK(attached.session.handle(response("srv-1", R"(["a","b"])")) == std::nullopt);
    const rpc::Reply got = reply.get();
    CHECK(got.as<std::vector<std::string>>() == std::vector<std::string>{"a", "b"});
    CHECK_THROWS_WITH_AS(
        (void)got.as<std::vector<int>>(),
        "batchrpc: the client's result does not bind: element 0: expected an integer",
        std::invalid_argument);
  }

  TEST_CASE("Reply::as reads a type with its own JsonTraits that says it owns its data") {
    Attached attached;
    auto reply = attached.session.peer().request("ask");
    CHECK(attached.session.handle(response("srv-1", "[21.5, 0]")) == std::nullopt);
    const rpc::Reply got = reply.get();
    const auto read = got.as<std::vector<peer_test::Celsius>>();
    REQUIRE(read.size() == 2);
    CHECK(read[0].degrees == 21.5);
    CHECK_THROWS_WITH_AS((void)got.as<peer_test::Celsius>(),
                         "batchrpc: the client's result does not bind: expected degrees",
                         std::invalid_argument);
  }

  TEST_CASE("a Response nobody waits for is dropped and reported, never answered") {
    Attached attached;
    rpc::Session& session = attached.session;
    const std::vector<std::string>& unmatched = attached.unmatched;
    const std::string id = session.peer().request("ask", {}, [](rpc::Reply) {});
    CHECK(id == "srv-1");
    CHECK(session.peer().cancel(id));
    CHECK_FALSE(session.peer().cancel(id));
    CHECK(session.handle(response("srv-1", "1")) == std::nullopt);            // cancelled
    CHECK(session.handle(response("srv-9", "1")) == std::nullopt);            // never sent
    CHECK(session.handle(R"({"jsonrpc":"2.0","id":5,"result":1})") == std::nullopt);  // not our form
    CHECK(unmatched == std::vector<std::string>{"srv-1", "srv-9", "5"});
  }

  TEST_CASE("a request with no client to send it to spends no id, a callback needs no params") {
    Fixture f;
    Wire wire;
    rpc::Session session{f.router};
    std::optional<rpc::Reply> unsent;
    CHECK(session.peer().request("ask", [&](const rpc::Reply& r) { unsent.emplace(r); }).empty());
    REQUIRE(unsent);
    REQUIRE(unsent->error() != nullptr);
    CHECK(unsent->error()->code() == -32094);
    CHECK_THROWS_AS((void)session.peer().request("ask", rpc::json("1"), [](const rpc::Reply&) {}), std::invalid_argument);
    session.attach(wire.writer());
    std::optional<rpc::Reply> answered;
    CHECK(session.peer().request("ask", [&](const rpc::Reply& r) { answered.emplace(r); }) == "srv-1");
    CHECK(wire.taken() == std::vector<std::string>{R"({"jsonrpc":"2.0","id":"srv-1","method":"ask"})"});
    CHECK(session.handle(response("srv-1", "7")) == std::nullopt);
    REQUIRE(answered);
    CHECK(answered->result().text() == "7");
  }

  TEST_CASE("what is not a Response is still an invalid Request") {
    Fixture f;
    rpc::Session session{f.router};
    const std::string invalid =
        R"({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":{"reason":"missing \"method\""}}})";
    CHECK(session.handle(R"({"jsonrpc":"2.0","id":1})") == invalid);                               // no answer
    CHECK(session.handle(R"({"jsonrpc":"2.0","id":1,"result":1,"error":{}})") == invalid);         // both
    CHECK(session.handle(R"({"jsonrpc":"2.0","result":1})") == invalid);                           // no id
    CHECK(session.handle(R"({"jsonrpc":"2.0","id":1,"result":1,"params":[]})") == invalid);        // params
    CHECK(session.handle(R"({"id":"srv-1","result":1})") ==
          R"({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":{"reason":"missing \"jsonrpc\""}}})");
    // A request with members named result or error is still a request, its params untouched.
    CHECK(session.handle(R"({"jsonrpc":"2.0","method":"add","result":[9],"params":[1,2],"error":5,"id":3})") ==
          R"({"jsonrpc":"2.0","id":3,"result":3})");
    // The router alone has no client: a Response is an invalid Request there, as before.
    CHECK(f.router.handle(response("srv-1", "1")) == invalid);
  }

  TEST_CASE("a broken answer to a waiting request of ours: the request hears why, the client nothing") {
    Attached attached;
    rpc::Session& session = attached.session;
    const auto broken = [&](std::string_view message) {
      auto waiting = session.peer().request("ask");
      CHECK(session.handle(message) == std::nullopt);
      REQUIRE(waiting.wait_for(std::chrono::seconds(0)) == std::future_status::ready);
      const rpc::Reply reply = waiting.get();
      REQUIRE(reply.error() != nullptr);
      CHECK(reply.error()->code() == -32603);
      CHECK(reply.error()->message() == "the client answered with a malformed Response");
      return std::string(reply.error()->data().text());
    };
    CHECK(broken(R"({"jsonrpc":"2.0","id":"srv-1"})") == R"({"reason":"a response needs \"result\" or \"error\""})");
    CHECK(broken(R"({"jsonrpc":"2.0","id":"srv-2","result":1,"error":{}})") ==
          R"({"reason":"a response must not have both \"result\" and \"error\""})");
    CHECK(broken(R"({"jsonrpc":"2.0","id":"srv-3","result":1,"params":[]})") ==
          R"({"reason":"a response must not have \"params\""})");
    CHECK(broken(R"({"id":"srv-4","result":1})") == R"({"reason":"missing \"jsonrpc\""})");
    CHECK(broken(R"({"jsonrpc":"1.0","id":"srv-5","result":1})") == R"({"reason":"\"jsonrpc\" must be exactly \"2.0\""})");
    // Not one of ours, or nobody waits: the client is told, as for any invalid Request.
    CHECK(session.handle(R"({"jsonrpc":"2.0","id":"srv-99"})") ==
          R"({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":{"reason":"missing \"method\""}}})");
    CHECK(session.peer().waiting() == 0);
  }

  TEST_CASE("requests waiting when the session ends are answered -32094, a kept Peer stays safe") {
    Fixture f;
    std::optional<rpc::Peer> kept;
    std::optional<std::string> reply;
    std::future<rpc::Reply> pending;
    {
      Wire wire;
      rpc::Session session{f.router};
      session.attach(wire.writer());
      kept = session.peer();
      pending = kept->request("slow");
      session.handle(R"({"jsonrpc":"2.0","method":"roots","id":1})", [&](std::optional<std::string_view> r) {
        if (r) reply.emplace(*r);
      });
      CHECK(kept->waiting() == 2);
    }  // the session ends
    const rpc::Reply gone = pending.get();
    REQUIRE(gone.error() != nullptr);
    CHECK(gone.error()->code() == static_cast<int>(rpc::ErrorCode::client_unavailable));
    CHECK(reply == R"({"jsonrpc":"2.0","id":1,"error":{"code":-32094,"message":"the session ended before the client answered"}})");
    CHECK_FALSE(kept->connected());
    CHECK_FALSE(kept->notify("after"));
    const rpc::Reply after = kept->request("after").get();
    REQUIRE(after.error() != nullptr);
    CHECK(after.error()->code() == -32094);
    CHECK(rpc::Peer().request("none").get().error()->code() == -32094);
  }

  TEST_CASE("requests waiting when the transport detaches hear that the connection ended") {
    Fixture f;
    Wire wire;
    rpc::Session session{f.router};
    session.attach(wire.writer());
    auto pending = session.peer().request("slow");
    session.detach();
    const rpc::Reply gone = pending.get();
    REQUIRE(gone.error() != nullptr);
    CHECK(gone.error()->code() == -32094);
    CHECK(gone.error()->message() == "the connection to the client ended before it answered");
  }

  TEST_CASE("a request past its timeout is answered -32095, and its late Response is dropped as unmatched") {
    using namespace std::chrono_literals;
    Attached attached;
    rpc::Session& session = attached.session;
    const std::vector<std::string>& unmatched = attached.unmatched;
    auto slow = session.peer().request("slow", {}, {.timeout = 50ms});
    auto fast = session.peer().request("fast", {}, {.timeout = 60s});
    auto patient = session.peer().request("patient");  // no timeout
    CHECK(session.handle(response("srv-2", "2")) == std::nullopt);
    CHECK(fast.get().as<int>() == 2);
    REQUIRE(slow.wait_for(10s) == std::future_status::ready);
    const rpc::Reply late = slow.get();
    REQUIRE(late.error() != nullptr);
    CHECK(late.error()->code() == -32095);
    CHECK(late.error()->message() == "the client did not answer in time");
    CHECK(session.handle(response("srv-1", "1")) == std::nullopt);
    CHECK(unmatched == std::vector<std::string>{"srv-1"});
    CHECK(session.peer().waiting() == 1);
    CHECK(patient.wait_for(100ms) == std::future_status::timeout);
    CHECK(session.handle(response("srv-3", "3")) == std::nullopt);
    CHECK(patient.get().as<int>() == 3);
  }

  TEST_CASE("a timeout too long for the clock, or negative, means no timeout") {
    using namespace std::chrono_literals;
    Attached attached;
    rpc::Session& session = attached.session;
    auto forever = session.peer().request("forever", {}, {.timeout = std::chrono::milliseconds::max()});
    auto negative = session.peer().request("negative", {}, {.timeout = -5ms});
    CHECK(forever.wait_for(100ms) == std::future_status::timeout);
    CHECK(negative.wait_for(1ms) == std::future_status::timeout);
    CHECK(session.peer().waiting() == 2);
    CHECK(session.handle(response("srv-1", "1")) == std::nullopt);
    CHECK(session.handle(response("srv-2", "2")) == std::nullopt);
    CHECK(forever.get().as<int>() == 1);
    CHECK(negative.get().as<int>() == 2);
  }

  TEST_CASE("a writer that refuses, a request past the size limit, and params that are not structured") {
    rpc::Router router{rpc::Limits{.max_response_bytes = 100}};
    Wire wire;
    rpc::Session session{router};
    wire.open = false;
    session.attach(wire.writer());
    CHECK(session.peer().request("a").get().error()->code() == -32094);
    CHECK(session.peer().waiting() == 0);
    wire.open = true;
    CHECK(session.peer().request("big", rpc::json("[\"" + std::string(100, 'x') + "\"]")).get().error()->code() ==
          static_cast<int>(rpc::ErrorCode::response_too_large));
    CHECK_FALSE(session.peer().notify("big", rpc::json("[\"" + std::string(100, 'x') + "\"]")));
    CHECK(wire.taken().empty());
    CHECK_THROWS_AS(session.peer().notify("n", rpc::json("5")), std::invalid_argument);
    CHECK_THROWS_AS((void)session.peer().request("n", rpc::json("\"s\"")), std::invalid_argument);
    CHECK(session.peer().waiting() == 0);
  }

  TEST_CASE("serve_stream writes the server's request as a frame and routes the client's answer back") {
    for (const rpc::Framing framing : {rpc::Framing::lines, rpc::Framing::content_length}) {
      CAPTURE(static_cast<int>(framing));
      const auto frame = [framing](std::string_view message) {
        return framing == rpc::Framing::lines
                   ? std::string(message) + "\n"
                   : "Content-Length: " + std::to_string(message.size()) + "\r\n\r\n" + std::string(message);
      };
      for (const bool client_answers : {true, false}) {
        CAPTURE(client_answers);
        Fixture f;
        rpc::Session session{f.router};
        std::deque<std::string> input{frame(R"({"jsonrpc":"2.0","method":"roots","id":7})")};
        std::vector<std::string> output;
        const rpc::StreamReader read = [&](char* data, std::size_t size) -> std::ptrdiff_t {
          if (input.empty()) return 0;
          REQUIRE(input.front().size() <= size);
          std::memcpy(data, input.front().data(), input.front().size());
          const auto n = static_cast<std::ptrdiff_t>(input.front().size());
          input.pop_front();
          return n;
        };
        const rpc::StreamWriter write = [&](std::string_view bytes) {
          output.emplace_back(bytes);
          // The scripted client answers the server's request as soon as it sees it.
          if (client_answers && bytes.find(R"("id":"srv-1")") != std::string_view::npos) {
            input.push_back(frame(response("srv-1", "[1,2]")));
          }
          return true;
        };
        rpc::serve_stream(session, read, write, {.framing = framing});
        REQUIRE(output.size() == 2);
        CHECK(output[0] == frame(R"({"jsonrpc":"2.0","id":"srv-1","method":"roots/list","params":{}})"));
        CHECK(output[1] == frame(client_answers
                                     ? R"({"jsonrpc":"2.0","id":7,"result":[1,2]})"
                                     : R"({"jsonrpc":"2.0","id":7,"error":{"code":-32094,"message":"the client's input ended before it answered"}})"));
        CHECK_FALSE(session.peer().connected());  // detached when serve_stream returned
      }
    }
  }

  TEST_CASE("serve_stream: a handler still running at end of input still reaches its client") {
    using namespace std::chrono_literals;
    rpc::Router router;
    router.add("late", [](rpc::Context& ctx) {
      std::this_thread::sleep_for(100ms);  // the input ends meanwhile
      const bool told = ctx.peer().notify("late/progress");
      const bool asked = ctx.peer().request("late/question").get().error()->code() == -32094;  // at once
      return told && asked;
    });
    rpc::ThreadPool pool{1};
    rpc::Session session{router, {.executor = &pool}};
    std::istringstream in(R"({"jsonrpc":"2.0","method":"late","id":1})" "\n");
    std::ostringstream out;
    rpc::serve_stream(session, in, out);
    CHECK(out.str() == R"({"jsonrpc":"2.0","method":"late/progress"})" "\n"
                       R"({"jsonrpc":"2.0","id":1,"result":true})" "\n");
    CHECK_FALSE(session.peer().connected());
  }

  TEST_CASE("capabilities granted and revoked during a session apply to the messages after") {
    rpc::Router router;
    router.add("tools/list", [] { return 1; }, {.capability = "tools"});
    router.add("initialize", [](rpc::Context& ctx) {
      ctx.session()->grant("tools");
      return true;
    });
    router.add("logout", [](rpc::Context& ctx) { return ctx.session()->revoke("tools"); });
    rpc::Session session{router, {.capabilities = {"other"}}};
    const std::string list = R"({"jsonrpc":"2.0","method":"tools/list","id":1})";
    const std::string refused =
        R"({"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found","data":{"capability":"tools"}}})";
    CHECK(session.handle(list) == refused);
    // Granted by a member of this batch: its members were checked before any ran.
    CHECK(session.handle("[" + std::string(R"({"jsonrpc":"2.0","method":"initialize","id":0})") + "," + list + "]") ==
          "[" + std::string(R"({"jsonrpc":"2.0","id":0,"result":true})") + "," + refused + "]");
    CHECK(session.handle(list) == R"({"jsonrpc":"2.0","id":1,"result":1})");
    CHECK(session.capabilities() == std::vector<std::string>{"other", "tools"});
    CHECK(session.handle(R"({"jsonrpc":"2.0","method":"logout","id":2})") == R"({"jsonrpc":"2.0","id":2,"result":true})");
    CHECK(session.handle(list) == refused);
    CHECK_FALSE(session.revoke("tools"));
    session.grant("tools");
    session.grant("tools");  // once is enough
    CHECK(session.capabilities() == std::vector<std::string>{"other", "tools"});
    CHECK_THROWS_AS(session.grant(""), std::invalid_argument);
  }

  TEST_CASE("grant and revoke race with messages that need the capability") {
    rpc::Router router;
    router.add("secret", [] { return 42; }, {.capability = "admin"});
    rpc::Session session{router};
    const std::string secret = R"({"jsonrpc":"2.0","method":"secret","id":1})";
    const std::string granted = R"({"jsonrpc":"2.0","id":1,"result":42})";
    const std::string refused =
        R"({"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found","data":{"capability":"admin"}}})";
    std::atomic<bool> done{false};
    std::thread flipper([&] {
      for (int i = 0; i < 2000; ++i) {
        session.grant("admin");
        (void)session.revoke("admin");
      }
      done = true;
    });
    int odd = 0;
    while (!done) {
      const auto reply = session.handle(secret);
      if (reply != granted && reply != refused) ++odd;
      (void)session.capabilities();
    }
    flipper.join();
    CHECK(odd == 0);
    CHECK(session.handle(secret) == refused);
  }

  TEST_CASE("many threads ask at once, a client answers in batches, in any order, each reply to its caller") {
    rpc::Router router;
    rpc::Session session{router};
    std::mutex mutex;
    std::deque<std::string> inbox;  // what the client has received
    session.attach([&](std::string message) {
      std::lock_guard lock(mutex);
      inbox.push_back(std::move(message));
      return true;
    });
    constexpr int threads = 4;
    constexpr int each = 500;
    std::atomic<int> right{0};
    std::atomic<int> wrong{0};
    std::atomic<bool> done{false};
    // The client echoes each request's params back as its result, a few per batch, reversed.
    std::thread client([&] {
      rapidjson::Document doc;
      while (!done.load() || [&] { std::lock_guard lock(mutex); return !inbox.empty(); }()) {
        std::vector<std::string> batch;
        {
          std::lock_guard lock(mutex);
          while (!inbox.empty() && batch.size() < 7) {
            batch.push_back(std::move(inbox.front()));
            inbox.pop_front();
          }
        }
        if (batch.empty()) {
          std::this_thread::yield();
          continue;
        }
        std::string answer = "[";
        for (auto it = batch.rbegin(); it != batch.rend(); ++it) {
          doc.Parse(it->c_str());
          const std::string id = doc["id"].GetString();
          const int n = doc["params"][0].GetInt();
          if (answer.size() > 1) answer += ",";
          answer += response(id, std::to_string(n));
        }
        answer += "]";
        if (session.handle(answer)) ++wrong;  // responses only: no reply
      }
    });
    std::vector<std::thread> askers;
    std::atomic<int> outstanding{threads * each};
    for (int t = 0; t < threads; ++t) {
      askers.emplace_back([&, t] {
        const rpc::Peer peer = session.peer();
        for (int i = 0; i < each; ++i) {
          const int n = t * each + i;
          peer.request("echo", rpc::json("[" + std::to_string(n) + "]"), [&, n](rpc::Reply r) {
            (r.ok() && r.as<int>() == n ? right : wrong)++;
            --outstanding;
          });
        }
      });
    }
    for (auto& t : askers) t.join();
    while (outstanding.load() > 0) std::this_thread::yield();
    done = true;
    client.join();
    CHECK(right.load() == threads * each);
    CHECK(wrong.load() == 0);
    CHECK(session.peer().waiting() == 0);
  }
}
