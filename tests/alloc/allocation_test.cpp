// SPDX-License-Identifier: MIT
// The hot path allocates nothing per message or per member once warmed up. Heap allocations
// are counted by interposing glibc's malloc family, so RapidJSON's allocators are seen too;
// this binary is not built under sanitizers, which bring their own allocator.
#include <batchrpc/context.hpp>
#include <batchrpc/json.hpp>
#include <batchrpc/router.hpp>
#include <batchrpc/session.hpp>

#include <atomic>
#include <cstddef>
#include <limits>
#include <new>
#include <optional>
#include <string>
#include <string_view>

#include <doctest/doctest.h>

#include "support/printing.hpp"

#if defined(__GLIBC__)

extern "C" {
void* __libc_malloc(std::size_t size);
void* __libc_calloc(std::size_t count, std::size_t size);
void* __libc_realloc(void* ptr, std::size_t size);
void __libc_free(void* ptr);
}

namespace {
std::atomic<long> allocations{0};
// malloc fails for this many bytes or more: what running out of memory looks like.
std::atomic<std::size_t> refused_from{std::numeric_limits<std::size_t>::max()};
}

extern "C" {
void* malloc(std::size_t size) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  if (size >= refused_from.load(std::memory_order_relaxed)) return nullptr;
  return __libc_malloc(size);
}
void* calloc(std::size_t count, std::size_t size) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_calloc(count, size);
}
void* realloc(void* ptr, std::size_t size) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_realloc(ptr, size);
}
void free(void* ptr) { __libc_free(ptr); }
}

namespace {

// Heap allocations made while running `f`.
template <class F>
long allocations_during(F&& f) {
  const long before = allocations.load();
  f();
  return allocations.load() - before;
}

std::string ping_batch(int members, bool with_errors) {
  std::string s = "[";
  for (int i = 0; i < members; ++i) {
    if (i) s += ',';
    if (with_errors && i % 10 == 3) {
      s += R"({"jsonrpc":"1.0","method":"ping","id":)" + std::to_string(i) + "}";  // invalid
    } else if (i % 3 == 2) {
      s += R"({"jsonrpc":"2.0","method":"ping","params":{"nonce":"n)" + std::to_string(i) + R"("}})";
    } else {
      s += R"({"jsonrpc":"2.0","method":"ping","params":{"nonce":)" + std::to_string(i) + R"(},"id":)" +
           std::to_string(i) + "}";
    }
  }
  return s + "]";
}

rpc::Router make_router() {
  rpc::Router router;
  router.add("ping", [](const rpc::Value& nonce, rpc::ResultWriter& out) {
    out.start_object();
    out.key("nonce");
    out.write(nonce);
    out.end_object();
  }, rpc::names("nonce"));
  router.add("subtract", [](long a, long b) { return a - b; }, rpc::names("minuend", "subtrahend"));
  return router;
}

}  // namespace

TEST_SUITE("allocation") {
  TEST_CASE("a warmed-up router allocates nothing for a batch of 1000") {
    const rpc::Router router = make_router();
    for (const bool with_errors : {false, true}) {
      CAPTURE(with_errors);
      const std::string message = ping_batch(1000, with_errors);
      rpc::Buffer out;
      REQUIRE(router.handle(message, out));  // warm-up: pools and buffers grow once
      CHECK(allocations_during([&] { (void)router.handle(message, out); }) == 0);

      std::string insitu = message;
      REQUIRE(router.handle_insitu(insitu, out));
      insitu = message;
      CHECK(allocations_during([&] { (void)router.handle_insitu(insitu, out); }) == 0);
    }
  }

  TEST_CASE("typed handlers with numeric params allocate nothing") {
    const rpc::Router router = make_router();
    std::string message = "[";
    for (int i = 0; i < 100; ++i) {
      message += std::string(i ? "," : "") + R"({"jsonrpc":"2.0","method":"subtract","params":)" +
                 (i % 2 ? R"({"subtrahend":1,"minuend":)" + std::to_string(i) + "}"
                        : "[" + std::to_string(i) + ",1]") +
                 R"(,"id":)" + std::to_string(i) + "}";
    }
    message += "]";
    rpc::Buffer out;
    REQUIRE(router.handle(message, out));
    CHECK(allocations_during([&] { (void)router.handle(message, out); }) == 0);
  }

  TEST_CASE("rpc::json validates without allocating: only its copy of the text costs one") {
    const std::string text = R"({"pong":true,"items":[1,2,{"deep":[[["x"]]]}],"name":"a longer string"})";
    CHECK(allocations_during([&] { (void)rpc::json(text); }) == 1);
    std::string deep(300, '[');
    deep += std::string(300, ']');
    CHECK(rpc::json(deep).text() == deep);  // deeper than the buffer: grows on the heap
  }

  TEST_CASE("returning the reply as a std::string costs that one allocation") {
    const rpc::Router router = make_router();
    const std::string message = ping_batch(100, false);
    REQUIRE(router.handle(message));
    CHECK(allocations_during([&] { (void)router.handle(message); }) == 1);
  }

  TEST_CASE("the waiting handle throws bad_alloc, and does not hang, when it cannot copy the reply") {
    static const std::string big(std::size_t{1} << 20, 'x');
    rpc::Router router;
    router.add("big", [](rpc::ResultWriter& out) { out.string(big); });
    rpc::Session session(router);
    const std::string message = R"({"jsonrpc":"2.0","method":"big","id":1})";
    const std::string expected = R"({"jsonrpc":"2.0","id":1,"result":")" + big + R"("})";
    REQUIRE(session.handle(message) == expected);  // the session's buffers are warm
    refused_from.store(big.size());  // only the copy handed back is that large
    CHECK_THROWS_AS((void)session.handle(message), std::bad_alloc);
    refused_from.store(std::numeric_limits<std::size_t>::max());
    CHECK(session.handle(message) == expected);
  }

  TEST_CASE("a warmed-up session allocates only the stop states handlers can see") {
    rpc::Router router = make_router();
    // Takes a Context, so it can see its cancellation: each call with an id gets a stop state.
    router.add("watch", [](rpc::Context& ctx) { return ctx.stop_requested(); });
    rpc::Session session(router);
    std::size_t replies = 0;
    std::size_t bytes = 0;
    const auto sink = [&](std::optional<std::string_view> reply) {
      ++replies;
      bytes = reply ? reply->size() : 0;
    };
    const auto warmed_allocations = [&](const std::string& message) {
      replies = 0;
      session.handle(message, sink);  // warm-up: jobs, members and their table entries
      session.handle(message, sink);
      REQUIRE(replies == 2);
      REQUIRE(bytes > 0);
      const long n = allocations_during([&] { session.handle(message, sink); });
      CHECK(replies == 3);
      CHECK(session.in_flight() == 0);
      return n;
    };

    // ping's handler takes no Context: its calls have no stop state, and cost nothing.
    CHECK(warmed_allocations(ping_batch(100, true)) == 0);

    std::string mixed = "[";
    long watched = 0;  // calls of watch with an id
    for (int i = 0; i < 100; ++i) {
      if (i) mixed += ',';
      if (i % 4 == 0) {
        mixed += R"({"jsonrpc":"2.0","method":"watch","id":)" + std::to_string(i) + "}";
        ++watched;
      } else if (i % 4 == 1) {
        mixed += R"({"jsonrpc":"2.0","method":"watch"})";  // a notification: not cancellable
      } else {
        mixed += R"({"jsonrpc":"2.0","method":"ping","params":{"nonce":1},"id":)" + std::to_string(i) + "}";
      }
    }
    mixed += "]";
    CHECK(warmed_allocations(mixed) == watched);
  }

  TEST_CASE("parse errors and limit errors allocate nothing") {
    const rpc::Router router = make_router();
    rpc::Buffer out;
    REQUIRE(router.handle("[1,", out));
    CHECK(allocations_during([&] { (void)router.handle("[1,", out); }) == 0);
    const std::string deep(200, '[');
    REQUIRE(router.handle(deep, out));  // warm-up: the parser's stack grows to the depth limit once
    CHECK(allocations_during([&] { (void)router.handle(deep, out); }) == 0);
    CHECK(out.view() ==
          R"({"jsonrpc":"2.0","id":null,"error":{"code":-32091,"message":"Nesting too deep","data":{"max":128}}})");
  }
}

#endif  // __GLIBC__
