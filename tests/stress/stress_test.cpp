// SPDX-License-Identifier: MIT
// Concurrency stress: many sessions, each fed by several threads at once, send mixed batches
// (results, errors, invalid members, notifications, slow handlers, handlers answering later
// from another pool, cancels of their own in-flight ids racing completions), through
// Session::handle(message, completion), over serve_stream on pipes (both framings), and
// through Router::handle; and serve_stream reaching end of input with slow requests in flight. Every request with an id must be answered exactly once, with a
// response its method can give; every message exactly once, in the shape the rules give.
// Counts are smaller under ThreadSanitizer and AddressSanitizer.
#include <batchrpc/builtins.hpp>
#include <batchrpc/executor.hpp>
#include <batchrpc/responder.hpp>
#include <batchrpc/router.hpp>
#include <batchrpc/session.hpp>
#include <batchrpc/stream.hpp>

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include "support/printing.hpp"
#include "common/cancellable_sleep.hpp"

namespace {

#if defined(__SANITIZE_THREAD__)
constexpr int scale_down = 6;
#elif defined(__SANITIZE_ADDRESS__)
constexpr int scale_down = 2;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
constexpr int scale_down = 6;
#elif __has_feature(address_sanitizer)
constexpr int scale_down = 2;
#else
constexpr int scale_down = 1;
#endif
#else
constexpr int scale_down = 1;
#endif

using namespace std::chrono_literals;

// Aborts the test binary if a phase takes far too long: a request never answered would
// otherwise hang until CTest's timeout, with no word of which phase.
class Watchdog {
 public:
  Watchdog(std::chrono::seconds limit, const char* what)
      : thread_([limit, what](std::stop_token stop) {
          std::mutex m;
          std::condition_variable_any cv;
          std::unique_lock lock(m);
          if (!cv.wait_for(lock, stop, limit, [] { return false; }) && !stop.stop_requested()) {
            std::fprintf(stderr, "stress: %s made no end in %lld s: a request or message was never answered\n",
                         what, static_cast<long long>(limit.count()));
            std::abort();
          }
        }) {}

 private:
  std::jthread thread_;
};

// The methods every phase calls.
struct Server {
  rpc::ThreadPool answerer{2};  // where "later" answers its Responders
  rpc::ThreadPool workers{4};   // the sessions' executor
  std::atomic<long> notes{0};
  std::mutex notes_mutex;
  std::map<const rpc::Session*, long> notes_by_session;  // guarded by notes_mutex
  rpc::Router router;

  long notes_of(const rpc::Session* session) {
    std::lock_guard lock(notes_mutex);
    return notes_by_session[session];
  }

  Server() {
    rpc::add_builtins(router, {.server_name = "stress", .server_version = "1"});
    router.add("add", [](long a, long b) { return a + b; }, rpc::names("a", "b"));
    router.add("sleep", [](int ms, rpc::Context& ctx) {
      if (!spec::sleep_unless_cancelled(ctx.stop_token(), std::chrono::milliseconds(ms))) throw rpc::cancelled();
      return ms;
    }, rpc::names("ms"));
    router.add("later", [this](long x, rpc::Responder done) {
      answerer.execute([x, done] { done.resolve(x); });
    }, rpc::names("x"));
    router.add("fail", []() -> long { throw std::runtime_error("hidden"); });
    router.add("note", [this](rpc::Context& ctx) {
      ++notes;
      std::lock_guard lock(notes_mutex);
      ++notes_by_session[ctx.session()];
    });
  }
};

// What one request must be answered with.
struct Expect {
  enum Kind : unsigned char { add, sleep, later, fail, unknown, cancelled_in_batch } kind;
  long value = 0;  // the result, for add, sleep and later
};

// One message and what it needs.
struct Message {
  std::string text;
  bool batch = false;
  bool needs_reply = false;
  long notifications = 0;
};

// Everything one session (or connection) was sent and got, shared by its threads.
struct Ledger {
  std::mutex mutex;
  std::unordered_map<std::string, Expect> expected;  // by id key
  std::unordered_set<std::string> targeted;          // ids some cancel named
  long invalid_members = 0;                          // each answered -32600 with id null
  long messages = 0;
  long replies_expected = 0;
  long notes_sent = 0;
  bool destroyed_in_flight = false;  // the session was destroyed with work in flight: any
                                     // request may then be answered -32800

  std::unordered_map<std::string, int> answered;     // id key -> times
  std::unordered_map<std::string, std::string> answer;  // id key -> "r:<result>" or "e:<code>"
  long null_entries = 0;
  long completions = 0;
  long replies = 0;
  std::vector<std::string> problems;

  void problem(std::string what) {
    if (problems.size() < 20) problems.push_back(std::move(what));
  }

  // Records one response object (under the lock).
  void record(const rapidjson::Value& r, std::string_view reply) {
    if (!r.IsObject() || !r.HasMember("id") || !r.HasMember("jsonrpc")) return problem("not a response: " + std::string(reply));
    const rapidjson::Value& id = r["id"];
    std::string key;
    if (id.IsString()) {
      key = "s" + std::string(id.GetString(), id.GetStringLength());
    } else if (id.IsInt64()) {
      key = "n" + std::to_string(id.GetInt64());
    } else if (id.IsNull()) {
      ++null_entries;
      if (!r.HasMember("error") || r["error"]["code"].GetInt() != -32600) problem("id null but not -32600: " + std::string(reply));
      return;
    } else {
      return problem("odd id: " + std::string(reply));
    }
    ++answered[key];
    if (r.HasMember("result")) {
      const rapidjson::Value& v = r["result"];
      answer[key] = v.IsInt64() ? "r:" + std::to_string(v.GetInt64()) : "r:?";
    } else if (r.HasMember("error") && r["error"].IsObject() && r["error"].HasMember("code") && r["error"]["code"].IsInt()) {
      answer[key] = "e:" + std::to_string(r["error"]["code"].GetInt());
    } else {
      problem("neither result nor error: " + std::string(reply));
    }
  }

  // Records a whole reply; `batch`/`needs_reply` are what was sent, when known.
  void receive(std::optional<std::string_view> reply, std::optional<bool> batch, std::optional<bool> needs_reply) {
    std::lock_guard lock(mutex);
    ++completions;
    if (needs_reply && *needs_reply != reply.has_value()) {
      return problem(reply ? "a reply to notifications only: " + std::string(*reply) : std::string("no reply to requests"));
    }
    if (!reply) return;
    ++replies;
    rapidjson::Document d;
    d.Parse(reply->data(), reply->size());
    if (d.HasParseError()) return problem("unparsable reply: " + std::string(*reply));
    if (batch && *batch != d.IsArray()) return problem("wrong shape: " + std::string(*reply));
    if (d.IsArray()) {
      if (d.Empty()) problem("empty array reply");
      for (const auto& r : d.GetArray()) record(r, *reply);
    } else {
      record(d, *reply);
    }
  }

  // Every request answered exactly once with what its method can give.
  void verify(std::string_view where) {
    std::lock_guard lock(mutex);
    CAPTURE(where);
    for (const std::string& p : problems) {
      CAPTURE(p);
      FAIL_CHECK("a reply broke the rules");
    }
    long missing = 0;
    long twice = 0;
    long wrong = 0;
    for (const auto& [key, e] : expected) {
      const auto found = answered.find(key);
      const int times = found == answered.end() ? 0 : found->second;
      if (times == 0) ++missing;
      if (times > 1) ++twice;
      if (times != 1) continue;
      const std::string& got = answer[key];
      const bool may_be_cancelled = destroyed_in_flight || targeted.count(key) != 0;
      bool ok = false;
      switch (e.kind) {
        case Expect::add:
        case Expect::sleep:
        case Expect::later:
          ok = got == "r:" + std::to_string(e.value) || (may_be_cancelled && got == "e:-32800");
          break;
        case Expect::fail:
          ok = got == "e:-32603" || (may_be_cancelled && got == "e:-32800");
          break;
        case Expect::unknown:
          ok = got == "e:-32601";
          break;
        case Expect::cancelled_in_batch:
          ok = got == "e:-32800";
          break;
      }
      if (!ok) {
        ++wrong;
        if (wrong <= 5) {
          CAPTURE(key);
          CAPTURE(got);
          FAIL_CHECK("a request got an answer its method cannot give");
        }
      }
    }
    long unexpected = 0;
    long cancelled = 0;
    for (const auto& [key, times] : answered) {
      if (expected.count(key) == 0) unexpected += times;
      if (answer[key] == "e:-32800") ++cancelled;
    }
    MESSAGE(where << ": " << messages << " messages, " << expected.size() << " requests, " << invalid_members
                  << " invalid members, " << notes_sent << " notifications, " << targeted.size()
                  << " ids named by a cancel, " << cancelled << " answered -32800");
    CHECK(missing == 0);
    CHECK(twice == 0);
    CHECK(wrong == 0);
    CHECK(unexpected == 0);
    CHECK(null_entries == invalid_members);
    CHECK(replies == replies_expected);
  }
};

// Makes the messages of one sending thread; ids are unique per session.
class Generator {
 public:
  Generator(Ledger& ledger, int thread, unsigned seed) : ledger_(ledger), thread_(thread), rng_(seed) {}

  // The next message; `direct_cancel` is set to an earlier id to cancel through the API.
  Message next(std::optional<std::string>& direct_cancel_key, std::string& direct_cancel_json) {
    Message msg;
    const int members = pick(100) < 40 ? 1 : 2 + pick(7);
    msg.batch = members > 1 || pick(100) < 10;  // a batch of one now and then
    std::vector<std::string> parts;
    std::vector<std::pair<std::string, std::string>> cancellable_here;  // (key, id json) in this message
    std::lock_guard lock(ledger_.mutex);
    ++ledger_.messages;
    for (int i = 0; i < members; ++i) {
      const int roll = pick(100);
      if (roll < 10) {  // a notification
        parts.push_back(R"({"jsonrpc":"2.0","method":"note"})");
        ++ledger_.notes_sent;
        ++msg.notifications;
        continue;
      }
      if (roll < 15) {  // an invalid member
        parts.push_back(R"({"jsonrpc":"2.0","params":[1],"id":1})");
        ++ledger_.invalid_members;
        msg.needs_reply = true;
        continue;
      }
      if (roll < 27 && !recent_.empty()) {  // cancel one of this thread's earlier ids
        const auto& [key, id] = recent_[static_cast<std::size_t>(pick(static_cast<int>(recent_.size())))];
        ledger_.targeted.insert(key);
        parts.push_back(R"({"jsonrpc":"2.0","method":"notifications/cancel","params":{"id":)" + id + "}}");
        continue;
      }
      const auto [key, id] = new_id();
      msg.needs_reply = true;
      Expect e{};
      std::string method;
      std::string params;
      if (roll < 50) {
        const long a = pick(1000);
        const long b = pick(1000);
        e = {Expect::add, a + b};
        method = "add";
        params = R"({"a":)" + std::to_string(a) + R"(,"b":)" + std::to_string(b) + "}";
      } else if (roll < 68) {
        const int ms = pick(3);
        e = {Expect::sleep, ms};
        method = "sleep";
        params = "[" + std::to_string(ms) + "]";
      } else if (roll < 85) {
        const long x = pick(1'000'000);
        e = {Expect::later, x};
        method = "later";
        params = R"({"x":)" + std::to_string(x) + "}";
      } else if (roll < 93) {
        e = {Expect::fail, 0};
        method = "fail";
      } else {
        e = {Expect::unknown, 0};
        method = "missing";
      }
      ledger_.expected[key] = e;
      if (e.kind != Expect::unknown) cancellable_here.emplace_back(key, id);
      std::string member = R"({"jsonrpc":"2.0","method":")" + method + "\"";
      if (!params.empty()) member += R"(,"params":)" + params;
      parts.push_back(member + R"(,"id":)" + id + "}");
      remember(key, id);
    }
    // Now and then a batch cancels one of its own members: applied before any member starts,
    // so that member is answered -32800 without running.
    if (msg.batch && !cancellable_here.empty() && pick(100) < 15) {
      const auto& [key, id] = cancellable_here[static_cast<std::size_t>(pick(static_cast<int>(cancellable_here.size())))];
      ledger_.expected[key].kind = Expect::cancelled_in_batch;
      ledger_.targeted.insert(key);
      parts.insert(parts.begin() + pick(static_cast<int>(parts.size()) + 1),
                   R"({"jsonrpc":"2.0","method":"notifications/cancel","params":{"id":)" + id + "}}");
    }
    if (msg.needs_reply) ++ledger_.replies_expected;
    if (!msg.batch && parts.size() == 1) {
      msg.text = parts.front();
    } else {
      msg.batch = true;
      msg.text = "[";
      for (std::size_t i = 0; i < parts.size(); ++i) msg.text += (i ? "," : "") + parts[i];
      msg.text += "]";
    }
    direct_cancel_key.reset();
    if (!recent_.empty() && pick(100) < 8) {
      const auto& [key, id] = recent_.back();
      ledger_.targeted.insert(key);
      direct_cancel_key = key;
      direct_cancel_json = id;
    }
    return msg;
  }

 private:
  int pick(int n) { return static_cast<int>(rng_() % static_cast<unsigned>(n)); }

  std::pair<std::string, std::string> new_id() {
    const long n = ++counter_;
    if (n % 2 == 0) {
      const std::string s = "t" + std::to_string(thread_) + "-" + std::to_string(n);
      return {"s" + s, "\"" + s + "\""};
    }
    const long number = static_cast<long>(thread_) * 100'000'000L + n;
    return {"n" + std::to_string(number), std::to_string(number)};
  }

  void remember(const std::string& key, const std::string& id) {
    recent_.emplace_back(key, id);
    if (recent_.size() > 8) recent_.erase(recent_.begin());
  }

  Ledger& ledger_;
  int thread_;
  std::mt19937 rng_;
  long counter_ = 0;
  std::vector<std::pair<std::string, std::string>> recent_;
};

// An id as JSON text, as a rpc::Value for Session::cancel.
bool cancel_direct(rpc::Session& session, const std::string& id_json) {
  rapidjson::Document d;
  d.Parse(id_json.data(), id_json.size());
  return session.cancel(d);
}

void write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n <= 0) return;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

// One round of the end-of-input phase: what the peer sends, all at once, then end of input.
struct Script {
  rpc::Framing framing = rpc::Framing::lines;
  std::string input;
  std::vector<std::string> expected;  // every reply, sorted
  long notes = 0;
};

Script make_script(std::mt19937& rng, int round) {
  Script s;
  s.framing = rng() % 2 == 0 ? rpc::Framing::lines : rpc::Framing::content_length;
  const auto send = [&s](const std::string& text) {
    s.input += s.framing == rpc::Framing::lines
                   ? text + "\n"
                   : "Content-Length: " + std::to_string(text.size()) + "\r\n\r\n" + text;
  };
  const auto request = [](const std::string& method, const std::string& params, const std::string& id) {
    return R"({"jsonrpc":"2.0","method":")" + method + R"(","params":)" + params + R"(,"id":)" + id + "}";
  };
  const auto result = [](const std::string& id, long value) {
    return R"({"jsonrpc":"2.0","id":)" + id + R"(,"result":)" + std::to_string(value) + "}";
  };
  const std::string note = R"({"jsonrpc":"2.0","method":"note"})";
  const int count = 1 + static_cast<int>(rng() % 12);
  for (int i = 0; i < count; ++i) {
    const std::string id = std::to_string(round * 100 + i);
    const long ms = static_cast<long>(rng() % 20);
    const long x = static_cast<long>(rng() % 1000);
    switch (rng() % 6) {
      case 0:
        send(request("sleep", "[" + std::to_string(ms) + "]", id));
        s.expected.push_back(result(id, ms));
        break;
      case 1:
        send(request("later", "[" + std::to_string(x) + "]", id));
        s.expected.push_back(result(id, x));
        break;
      case 2:
        send(request("add", "[" + std::to_string(x) + "," + std::to_string(round) + "]", id));
        s.expected.push_back(result(id, x + round));
        break;
      case 3:
        send(R"({"jsonrpc":"2.0","method":"fail","id":)" + id + "}");
        s.expected.push_back(R"({"jsonrpc":"2.0","id":)" + id + R"(,"error":{"code":-32603,"message":"Internal error"}})");
        break;
      case 4:
        send(note);
        ++s.notes;
        break;
      default: {  // a batch whose members finish on different threads
        const std::string a = "\"" + id + "a\"";
        const std::string b = "\"" + id + "b\"";
        send("[" + request("sleep", "[" + std::to_string(ms) + "]", a) + "," + note + "," +
             request("later", "[" + std::to_string(x) + "]", b) + "]");
        s.expected.push_back("[" + result(a, ms) + "," + result(b, x) + "]");
        ++s.notes;
        break;
      }
    }
  }
  // A last line without its newline is a message too.
  if (s.framing == rpc::Framing::lines && rng() % 4 == 0) s.input.pop_back();
  std::sort(s.expected.begin(), s.expected.end());
  return s;
}

// Splits what a peer read back into reply bodies; a torn frame is kept whole (and mismatches).
std::vector<std::string> split_replies(std::string stream, rpc::Framing framing) {
  std::vector<std::string> bodies;
  while (!stream.empty()) {
    if (framing == rpc::Framing::lines) {
      const std::size_t eol = stream.find('\n');
      if (eol == std::string::npos) break;
      bodies.push_back(stream.substr(0, eol));
      stream.erase(0, eol + 1);
    } else {
      const std::size_t end = stream.find("\r\n\r\n");
      if (end == std::string::npos || stream.compare(0, 16, "Content-Length: ") != 0) break;
      const std::size_t length = std::stoul(stream.substr(16, end - 16));
      if (stream.size() < end + 4 + length) break;
      bodies.push_back(stream.substr(end + 4, length));
      stream.erase(0, end + 4 + length);
    }
  }
  if (!stream.empty()) bodies.push_back(stream);
  return bodies;
}

// Reads a descriptor to its end.
std::string read_to_end(int fd) {
  std::string got;
  char chunk[4096];
  for (ssize_t n; (n = ::read(fd, chunk, sizeof chunk)) > 0;) got.append(chunk, static_cast<std::size_t>(n));
  return got;
}

}  // namespace

TEST_SUITE("stress") {
  TEST_CASE("many sessions on many threads: every request answered exactly once, cancels racing completions") {
    constexpr int sessions = 6;
    constexpr int threads_per_session = 4;
    const int messages_per_thread = 600 / scale_down;
    Watchdog watchdog(240s, "the session phase");
    Server server;
    std::vector<std::unique_ptr<Ledger>> ledgers;
    for (int s = 0; s < sessions; ++s) ledgers.push_back(std::make_unique<Ledger>());
    std::vector<const rpc::Session*> addresses;  // the sessions' notes, counted by the handler
    {
      std::vector<std::unique_ptr<rpc::Session>> live;
      for (int s = 0; s < sessions; ++s) {
        live.push_back(std::make_unique<rpc::Session>(server.router, rpc::SessionOptions{.executor = &server.workers}));
      }
      std::vector<std::thread> senders;
      for (int s = 0; s < sessions; ++s) {
        for (int t = 0; t < threads_per_session; ++t) {
          senders.emplace_back([&, s, t] {
            Ledger& ledger = *ledgers[static_cast<std::size_t>(s)];
            rpc::Session& session = *live[static_cast<std::size_t>(s)];
            Generator gen(ledger, t, static_cast<unsigned>(s * 100 + t));
            std::optional<std::string> direct_key;
            std::string direct_id;
            for (int i = 0; i < messages_per_thread; ++i) {
              const Message msg = gen.next(direct_key, direct_id);
              session.handle(msg.text, [&ledger, batch = msg.batch, needs = msg.needs_reply](std::optional<std::string_view> reply) {
                ledger.receive(reply, batch, needs);
              });
              if (direct_key) cancel_direct(session, direct_id);
            }
          });
        }
      }
      for (auto& th : senders) th.join();
      for (const auto& session : live) addresses.push_back(session.get());
      // Half the sessions are drained; the others are destroyed with work in flight, which
      // cancels it and must still answer every message.
      for (int s = 0; s < sessions; ++s) {
        if (s % 2 == 0) {
          live[static_cast<std::size_t>(s)]->drain();
        } else {
          std::lock_guard lock(ledgers[static_cast<std::size_t>(s)]->mutex);
          ledgers[static_cast<std::size_t>(s)]->destroyed_in_flight = true;
        }
        live[static_cast<std::size_t>(s)].reset();
      }
    }
    for (int s = 0; s < sessions; ++s) {
      Ledger& ledger = *ledgers[static_cast<std::size_t>(s)];
      ledger.verify("session " + std::to_string(s));
      CHECK(ledger.completions == ledger.messages);
      const long ran = server.notes_of(addresses[static_cast<std::size_t>(s)]);
      if (s % 2 == 0) {
        CHECK(ran == ledger.notes_sent);  // notifications run even in a cancelled batch
      } else {
        CHECK(ran <= ledger.notes_sent);  // those not started when the session ended are dropped
      }
    }
  }

  TEST_CASE("many connections over serve_stream on pipes, both framings: every request answered exactly once") {
    constexpr int connections = 4;
    constexpr int writers_per_connection = 3;
    const int messages_per_writer = 480 / scale_down;
    Watchdog watchdog(240s, "the stream phase");
    Server server;

    struct Connection {
      Ledger ledger;
      int to_server[2] = {-1, -1};
      int from_server[2] = {-1, -1};
      rpc::Framing framing = rpc::Framing::lines;
      std::mutex write_mutex;
    };
    std::vector<std::unique_ptr<Connection>> conns;
    std::vector<std::thread> threads;
    for (int c = 0; c < connections; ++c) {
      auto conn = std::make_unique<Connection>();
      REQUIRE(::pipe(conn->to_server) == 0);
      REQUIRE(::pipe(conn->from_server) == 0);
      conn->framing = c % 2 == 0 ? rpc::Framing::lines : rpc::Framing::content_length;
      conns.push_back(std::move(conn));
    }
    for (int c = 0; c < connections; ++c) {
      Connection& conn = *conns[static_cast<std::size_t>(c)];
      // The server side: one session per connection, answering on the session's executor.
      threads.emplace_back([&server, &conn] {
        {
          rpc::Session session(server.router, {.executor = &server.workers});
          rpc::serve_stream(session, conn.to_server[0], conn.from_server[1], {.framing = conn.framing});
        }
        ::close(conn.to_server[0]);
        ::close(conn.from_server[1]);  // the reader sees the end once every reply is written
      });
      // The client's reader: splits frames and records each reply.
      threads.emplace_back([&conn] {
        std::string buffer;
        char chunk[1 << 14];
        for (;;) {
          const ssize_t n = ::read(conn.from_server[0], chunk, sizeof chunk);
          if (n <= 0) break;
          buffer.append(chunk, static_cast<std::size_t>(n));
          for (;;) {
            std::string body;
            if (conn.framing == rpc::Framing::lines) {
              const std::size_t eol = buffer.find('\n');
              if (eol == std::string::npos) break;
              body = buffer.substr(0, eol);
              buffer.erase(0, eol + 1);
            } else {
              const std::size_t end = buffer.find("\r\n\r\n");
              if (end == std::string::npos) break;
              const std::size_t length = std::stoul(buffer.substr(16, end - 16));  // "Content-Length: "
              if (buffer.size() < end + 4 + length) break;
              body = buffer.substr(end + 4, length);
              buffer.erase(0, end + 4 + length);
            }
            conn.ledger.receive(body, std::nullopt, std::nullopt);
          }
        }
        if (!buffer.empty()) conn.ledger.receive(buffer, std::nullopt, std::nullopt);  // a torn frame: unparsable
        ::close(conn.from_server[0]);
      });
    }
    std::vector<std::thread> writers;
    for (int c = 0; c < connections; ++c) {
      for (int w = 0; w < writers_per_connection; ++w) {
        writers.emplace_back([&, c, w] {
          Connection& conn = *conns[static_cast<std::size_t>(c)];
          Generator gen(conn.ledger, w, static_cast<unsigned>(1000 + c * 10 + w));
          std::optional<std::string> direct_key;
          std::string direct_id;
          for (int i = 0; i < messages_per_writer; ++i) {
            const Message msg = gen.next(direct_key, direct_id);
            std::string frame;
            if (conn.framing == rpc::Framing::lines) {
              frame = msg.text + "\n";
            } else {
              frame = "Content-Length: " + std::to_string(msg.text.size()) + "\r\n\r\n" + msg.text;
            }
            std::lock_guard lock(conn.write_mutex);  // frames go whole onto the pipe
            write_all(conn.to_server[1], frame);
          }
          (void)direct_key;  // over a stream, cancels travel as messages only
        });
      }
    }
    for (auto& th : writers) th.join();
    for (auto& conn : conns) ::close(conn->to_server[1]);  // end of input: serve_stream finishes
    for (auto& th : threads) th.join();
    long notes_sent = 0;
    for (int c = 0; c < connections; ++c) {
      Ledger& ledger = conns[static_cast<std::size_t>(c)]->ledger;
      // A direct cancel marked an id as targeted without cancelling it: harmless (it only
      // allows -32800), so the ledger's checks stand as they are.
      ledger.verify(std::string("connection ") + std::to_string(c) +
                    (conns[static_cast<std::size_t>(c)]->framing == rpc::Framing::lines ? " (lines)" : " (Content-Length)"));
      notes_sent += ledger.notes_sent;
    }
    CHECK(server.notes.load() == notes_sent);
  }

  TEST_CASE("one router, many threads, Router::handle: exact replies, Responders answered from another pool") {
    constexpr int threads = 8;
    const int rounds = 800 / scale_down;
    Watchdog watchdog(240s, "the router phase");
    Server server;
    std::atomic<int> wrong{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        for (int r = 0; r < rounds; ++r) {
          const long a = t * 100000 + r;
          const std::string id = "\"" + std::to_string(t) + "-" + std::to_string(r) + "\"";
          const std::string message =
              R"([{"jsonrpc":"2.0","method":"add","params":{"a":)" + std::to_string(a) + R"(,"b":1},"id":)" + id + "},"
              R"({"jsonrpc":"2.0","method":"note"},)"
              R"({"jsonrpc":"2.0","method":"later","params":{"x":)" + std::to_string(a) + R"(},"id":2},)"
              R"({"jsonrpc":"2.0","method":"fail","id":3},)"
              R"({"jsonrpc":"2.0","id":4},)"
              R"({"jsonrpc":"2.0","method":"later","params":{"x":1}},)"
              R"({"jsonrpc":"2.0","method":"missing","id":5}])";
          const std::string expected =
              R"([{"jsonrpc":"2.0","id":)" + id + R"(,"result":)" + std::to_string(a + 1) + "},"
              R"({"jsonrpc":"2.0","id":2,"result":)" + std::to_string(a) + "},"
              R"({"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"Internal error"}},)"
              R"({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request","data":{"reason":"missing \"method\""}}},)"
              R"({"jsonrpc":"2.0","id":5,"error":{"code":-32601,"message":"Method not found"}}])";
          const auto reply = server.router.handle(message);
          if (reply != expected) {
            if (++wrong <= 3) {
              CAPTURE(reply);
              FAIL_CHECK("a reply differs");
            }
          }
        }
      });
    }
    for (auto& th : pool) th.join();
    CHECK(wrong == 0);
    CHECK(server.notes.load() == threads * rounds);
  }

  TEST_CASE("end of input with slow requests in flight: every reply written before serve_stream returns") {
    // Over a reader and writer in memory (chunks of random size), pipes, and a socket used
    // both ways; the peer's input ends right after its last message, while handlers still run
    // on the executor and Responders are answered from another pool.
    const int rounds = 90 / scale_down;
    Watchdog watchdog(240s, "the end-of-input phase");
    Server server;
    std::mt19937 rng(20240611);
    long notes_sent = 0;
    int mismatched = 0;
    for (int round = 0; round < rounds; ++round) {
      const Script script = make_script(rng, round);
      notes_sent += script.notes;
      const int transport = round % 3;
      std::vector<std::string> got;
      {
        rpc::Session session(server.router, {.executor = &server.workers});
        if (transport == 0) {
          std::mutex m;
          std::vector<std::string> writes;
          std::size_t at = 0;
          std::mt19937 chunks(static_cast<unsigned>(round));
          rpc::serve_stream(
              session,
              [&](char* data, std::size_t size) -> std::ptrdiff_t {
                const std::size_t n = std::min({size, std::size_t{1} + chunks() % 64, script.input.size() - at});
                script.input.copy(data, n, at);
                at += n;
                return static_cast<std::ptrdiff_t>(n);
              },
              [&](std::string_view bytes) {
                std::lock_guard lock(m);
                writes.emplace_back(bytes);
                return true;
              },
              {.framing = script.framing});
          std::lock_guard lock(m);  // what was written by the time it returned
          for (const std::string& w : writes) {
            const std::vector<std::string> bodies = split_replies(w, script.framing);
            if (bodies.size() != 1) ++mismatched;  // each write one whole frame
            got.insert(got.end(), bodies.begin(), bodies.end());
          }
        } else {
          int in[2];
          int out[2];
          if (transport == 1) {
            REQUIRE(::pipe(in) == 0);
            REQUIRE(::pipe(out) == 0);
          } else {
            REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, in) == 0);  // in[0]: the server's both ways
            out[0] = in[1];
            out[1] = in[0];
          }
          std::string read_back;
          std::thread peer([&] {
            write_all(in[1], script.input);
            if (transport == 1) {
              ::close(in[1]);
            } else {
              ::shutdown(in[1], SHUT_WR);  // end of input; replies still come back on it
            }
            read_back = read_to_end(out[0]);  // ends when the server closes its end
          });
          rpc::serve_stream(session, in[0], out[1], {.framing = script.framing});
          ::close(in[0]);
          if (transport == 1) ::close(out[1]);
          peer.join();
          ::close(out[0]);
          got = split_replies(read_back, script.framing);
        }
        CHECK(session.in_flight() == 0);
      }
      std::sort(got.begin(), got.end());
      if (got != script.expected && ++mismatched <= 3) {
        CAPTURE(round);
        CAPTURE(transport);
        CAPTURE(script.input);
        CHECK(got == script.expected);
      }
    }
    CHECK(mismatched == 0);
    CHECK(server.notes.load() == notes_sent);
  }
}
