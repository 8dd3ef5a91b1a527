// SPDX-License-Identifier: MIT
// Client helpers: BatchBuilder's exact message text, and correlate() against a live Router and
// against hand-written replies (missing, duplicate, unexpected, message errors, garbage).
#include <batchrpc/client.hpp>

#include <batchrpc/router.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "support/printing.hpp"

// Lets doctest print the id and text lists a check compares.
namespace doctest {
template <class T>
struct StringMaker<std::vector<T>> {
  static String convert(const std::vector<T>& items) {
    String out = "{";
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (i != 0) out += ", ";
      out += toString(items[i]);
    }
    return out + "}";
  }
};
}  // namespace doctest

namespace {

using Ids = std::vector<std::int64_t>;
using Texts = std::vector<std::string>;

// A router in the spirit of the JSON-RPC 2.0 examples (§7).
struct Server {
  int updates = 0;
  rpc::Router router;
  Server() {
    router.add(
        "subtract", [](int minuend, int subtrahend) { return minuend - subtrahend; },
        rpc::names("minuend", "subtrahend"));
    router.add("sum", [](std::vector<int> xs) {
      int total = 0;
      for (int x : xs) total += x;
      return total;
    });
    router.add(
        "greet", [](std::string name) { return "hello " + name; }, rpc::names("name"));
    router.add("refuse", []() -> int {
      throw rpc::Error(-32001, "Quota exceeded", rpc::json(R"({"retryAfter":30})"));
    });
    router.add("update", [this](int a, int b, int c) { updates += a + b + c; });
  }
};

// The message of a builder holding one call of `method` with `params`.
std::string single(std::string_view method, rpc::Json params = {}) {
  rpc::BatchBuilder b;
  b.call(method, std::move(params));
  return b.text();
}

// A builder with `n` calls of "m" (ids 1..n).
rpc::BatchBuilder calls(int n) {
  rpc::BatchBuilder b;
  for (int i = 0; i < n; ++i) b.call("m");
  return b;
}

}  // namespace

TEST_SUITE("client") {
  TEST_CASE("a single call is one Request object with id 1") {
    CHECK(single("subtract", rpc::positional(42, 23)) ==
          R"({"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1})");
    CHECK(single("ping") == R"({"jsonrpc":"2.0","method":"ping","id":1})");
  }

  TEST_CASE("a single notification has no id") {
    rpc::BatchBuilder b;
    b.notify("update", rpc::positional(1, 2, 3));
    CHECK(b.text() == R"({"jsonrpc":"2.0","method":"update","params":[1,2,3]})");
    CHECK_FALSE(b.expects_reply());
    CHECK_FALSE(b.is_batch());
    CHECK(b.requests() == 0);
  }

  TEST_CASE("two or more items make an array, ids count calls only") {
    rpc::BatchBuilder b;
    CHECK(b.call("sum", rpc::positional(1, 2, 4)) == 1);
    b.notify("notify_hello", rpc::positional(7));
    CHECK(b.call("subtract", rpc::positional(42, 23)) == 2);
    CHECK(b.call("get_data") == 3);
    CHECK(b.size() == 4);
    CHECK(b.requests() == 3);
    CHECK(b.is_batch());
    CHECK(b.text() == R"([{"jsonrpc":"2.0","method":"sum","params":[1,2,4],"id":1},)"
                      R"({"jsonrpc":"2.0","method":"notify_hello","params":[7]},)"
                      R"({"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":2},)"
                      R"({"jsonrpc":"2.0","method":"get_data","id":3}])");
  }

  TEST_CASE("as_batch makes an array even for one item") {
    rpc::BatchBuilder b{rpc::as_batch};
    CHECK(b.call("ping") == 1);
    CHECK(b.is_batch());
    CHECK(b.text() == R"([{"jsonrpc":"2.0","method":"ping","id":1}])");
    SUBCASE("one notification") {
      rpc::BatchBuilder n{rpc::as_batch};
      n.notify("tick");
      CHECK(n.text() == R"([{"jsonrpc":"2.0","method":"tick"}])");
    }
  }

  TEST_CASE("ids are per builder") {
    rpc::BatchBuilder a;
    rpc::BatchBuilder b;
    CHECK(a.call("x") == 1);
    CHECK(a.call("x") == 2);
    CHECK(b.call("x") == 1);
  }

  TEST_CASE("a builder may start its ids elsewhere, and correlate matches them there") {
    rpc::BatchBuilder b{1000};
    CHECK(b.first_id() == 1000);
    CHECK(b.call("ping") == 1000);
    b.notify("tick");
    CHECK(b.call("ping") == 1001);
    CHECK(b.requests() == 2);
    CHECK(b.text() == R"([{"jsonrpc":"2.0","method":"ping","id":1000},{"jsonrpc":"2.0","method":"tick"},)"
                      R"({"jsonrpc":"2.0","method":"ping","id":1001}])");
    const rpc::Replies r = rpc::correlate(b, R"([{"jsonrpc":"2.0","result":7,"id":1001},)"
                                             R"({"jsonrpc":"2.0","result":1,"id":1}])");
    CHECK(r.result<int>(1001) == 7);
    CHECK(r.missing() == std::vector<std::int64_t>{1000});
    CHECK(r.unexpected() == std::vector<std::string>{"1"});
    CHECK_FALSE(r.ok(1));
    CHECK_THROWS_WITH_AS((void)r.result<int>(999), "batchrpc: id 999 is not a request of this batch",
                         std::invalid_argument);
    rpc::BatchBuilder one{5, true};
    one.call("ping");
    CHECK(one.text() == R"([{"jsonrpc":"2.0","method":"ping","id":5}])");
    CHECK_THROWS_AS(rpc::BatchBuilder{0}, std::invalid_argument);
  }

  TEST_CASE("method names are escaped") {
    CHECK(single("a\"b\\c\nd\x01\xc3\xa9/") == R"({"jsonrpc":"2.0","method":"a\"b\\c\nd\u0001)"
                                               "\xc3\xa9"
                                               R"(/","id":1})");
    CHECK(single("\",\"id\":99,\"x\":\"") ==
          R"({"jsonrpc":"2.0","method":"\",\"id\":99,\"x\":\"","id":1})");
    using namespace std::string_literals;
    CHECK(single("nul\0byte"s) == R"({"jsonrpc":"2.0","method":"nul\u0000byte","id":1})");
  }

  TEST_CASE("positional params") {
    CHECK(rpc::positional().text() == "[]");
    CHECK(rpc::positional(1, -2, 2.5, true, nullptr, "s").text() == R"([1,-2,2.5,true,null,"s"])");
    const std::string name = "q\"uote";
    const std::optional<int> none;
    CHECK(rpc::positional(name, std::string_view("v"), none, std::optional<int>(3)).text() ==
          R"(["q\"uote","v",null,3])");
    CHECK(
        rpc::positional(std::vector<int>{1, 2}, std::map<std::string, bool>{{"k", false}}).text() ==
        R"([[1,2],{"k":false}])");
    CHECK(rpc::positional(rpc::json(R"({"raw": [1]})"), 0.1f).text() == R"([{"raw": [1]},0.1])");
    char buffer[] = "mutable";
    CHECK(rpc::positional(buffer).text() == R"(["mutable"])");
  }

  TEST_CASE("named params") {
    CHECK(rpc::named().text() == "{}");
    CHECK(rpc::named("minuend", 42, "subtrahend", 23).text() ==
          R"({"minuend":42,"subtrahend":23})");
    CHECK(rpc::named(std::string("k\"ey"), "v", std::string_view("list"), std::vector<int>{})
              .text() == R"({"k\"ey":"v","list":[]})");
    CHECK(
        single("subtract", rpc::named("subtrahend", 23, "minuend", 42)) ==
        R"({"jsonrpc":"2.0","method":"subtract","params":{"subtrahend":23,"minuend":42},"id":1})");
  }

  TEST_CASE("params that are not JSON-RPC params are refused") {
    rpc::BatchBuilder b;
    for (const char* text : {"1", R"("x")", "null", "true", " 2 "}) {
      CAPTURE(text);
      CHECK_THROWS_AS(b.call("m", rpc::json(text)), std::invalid_argument);
      CHECK_THROWS_AS(b.notify("m", rpc::json(text)), std::invalid_argument);
    }
    CHECK(b.empty());
    CHECK(b.requests() == 0);  // a refused call takes no id
    CHECK(b.call("m", rpc::json(" \n[1, 2]\t")) == 1);
    CHECK(b.text() == R"({"jsonrpc":"2.0","method":"m","params":[1, 2],"id":1})");
  }

  TEST_CASE("misuse is refused with an exception, never a broken message") {
    rpc::BatchBuilder b;
    CHECK_THROWS_WITH_AS(
        (void)b.text(),
        "batchrpc: an empty BatchBuilder has no message (an empty batch is invalid, "
        "JSON-RPC 2.0 section 6)",
        std::logic_error);
    CHECK_THROWS_WITH_AS(b.call("bad\xff"), "batchrpc: the method name is not valid UTF-8",
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS((void)rpc::named("a", 1, "a", 2),
                         "rpc::named: the name \"a\" is given twice", std::invalid_argument);
    CHECK_THROWS_AS((void)rpc::named("bad\xc0", 1), std::invalid_argument);
    CHECK_THROWS_AS((void)rpc::positional("bad\xed\xa0\x80"), std::invalid_argument);
    CHECK_THROWS_AS((void)rpc::positional(std::nan("")), std::invalid_argument);
    CHECK_THROWS_AS((void)rpc::positional(std::numeric_limits<double>::infinity()),
                    std::invalid_argument);
    CHECK(b.empty());
  }

  TEST_CASE("round trip: results and errors by id") {
    Server s;
    rpc::BatchBuilder b;
    const auto diff = b.call("subtract", rpc::positional(42, 23));
    const auto named_diff = b.call("subtract", rpc::named("subtrahend", 23, "minuend", 42));
    b.notify("update", rpc::positional(1, 2, 3));
    const auto total = b.call("sum", rpc::positional(std::vector<int>{1, 2, 4}));
    const auto greeting = b.call("greet", rpc::named("name", "w\"orld"));
    const auto refused = b.call("refuse");
    const auto unknown = b.call("no_such_method");
    const auto bad_params = b.call("subtract", rpc::positional("x", 1));

    const rpc::Replies r = rpc::correlate(b, s.router.handle(b.text()));
    CHECK(s.updates == 6);
    CHECK(r.complete());
    CHECK(r.missing().empty());
    CHECK(r.duplicate().empty());
    CHECK(r.unexpected().empty());
    CHECK(r.problems().empty());
    CHECK(r.message_error() == nullptr);

    CHECK(r.ok(diff));
    CHECK(r.error(diff) == nullptr);
    CHECK(r.result<int>(diff) == 19);
    CHECK(r.result<int>(named_diff) == 19);
    CHECK(r.result<long long>(total) == 7);
    CHECK(r.result<std::string>(greeting) == "hello w\"orld");
    CHECK(r.result<std::string_view>(greeting) == "hello w\"orld");
    CHECK(r.result_json(greeting).text() == R"("hello w\"orld")");
    CHECK(r.result_json(total).text() == "7");

    CHECK_FALSE(r.ok(refused));
    const rpc::Error* e = r.error(refused);
    REQUIRE(e != nullptr);
    CHECK(e->code() == -32001);
    CHECK(e->message() == "Quota exceeded");
    CHECK(e->data().text() == R"({"retryAfter":30})");

    REQUIRE(r.error(unknown) != nullptr);
    CHECK(r.error(unknown)->code() == -32601);
    CHECK(r.error(unknown)->message() == "Method not found");
    REQUIRE(r.error(bad_params) != nullptr);
    CHECK(r.error(bad_params)->code() == -32602);
  }

  TEST_CASE("result<T> of an error response throws the server's rpc::Error") {
    Server s;
    rpc::BatchBuilder b;
    const auto id = b.call("refuse");
    const rpc::Replies r = rpc::correlate(b, s.router.handle(b.text()));
    CHECK(r.complete());
    try {
      (void)r.result<int>(id);
      FAIL("result<int> did not throw");
    } catch (const rpc::Error& e) {
      CHECK(e.code() == -32001);
      CHECK(e.message() == "Quota exceeded");
      CHECK(e.data().text() == R"({"retryAfter":30})");
    }
    CHECK_THROWS_AS((void)r.result_json(id), rpc::Error);
    SUBCASE("on a temporary too") {
      CHECK_THROWS_AS((void)rpc::correlate(b, s.router.handle(b.text())).result<int>(id),
                      rpc::Error);
    }
  }

  TEST_CASE("result<T> that does not bind, or of an unknown id, is std::invalid_argument") {
    Server s;
    rpc::BatchBuilder b;
    const auto id = b.call("greet", rpc::positional("x"));
    const rpc::Replies r = rpc::correlate(b, s.router.handle(b.text()));
    CHECK_THROWS_WITH_AS((void)r.result<int>(id),
                         "batchrpc: the result of id 1 does not bind: expected an integer",
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS((void)r.result<int>(2), "batchrpc: id 2 is not a request of this batch",
                         std::invalid_argument);
    CHECK_THROWS_AS((void)r.result<int>(0), std::invalid_argument);
    CHECK_THROWS_AS((void)r.result_json(-1), std::invalid_argument);
    CHECK_FALSE(r.ok(2));
    CHECK(r.error(2) == nullptr);
  }

  TEST_CASE("round trip: a single call and a batch of one") {
    Server s;
    rpc::BatchBuilder single_call;
    single_call.call("subtract", rpc::positional(1, 2));
    const rpc::Replies a = rpc::correlate(single_call, s.router.handle(single_call.text()));
    CHECK(a.complete());
    CHECK(a.result<int>(1) == -1);

    rpc::BatchBuilder batch_of_one{rpc::as_batch};
    batch_of_one.call("subtract", rpc::positional(1, 2));
    const std::optional<std::string> reply = s.router.handle(batch_of_one.text());
    CHECK(reply == R"([{"jsonrpc":"2.0","id":1,"result":-1}])");
    const rpc::Replies b = rpc::correlate(batch_of_one, reply);
    CHECK(b.complete());
    CHECK(b.result<int>(1) == -1);
  }

  TEST_CASE("round trip: notifications only expect no reply") {
    Server s;
    rpc::BatchBuilder b;
    b.notify("update", rpc::positional(1, 2, 3));
    b.notify("update", rpc::named());  // invalid params: still never answered
    const std::optional<std::string> reply = s.router.handle(b.text());
    CHECK_FALSE(reply);
    const rpc::Replies r = rpc::correlate(b, reply);
    CHECK(r.complete());
    CHECK(r.missing().empty());
    CHECK(s.updates == 6);
  }

  TEST_CASE("a reply to notifications only is unexpected") {
    rpc::BatchBuilder b;
    b.notify("update");
    const rpc::Replies r = rpc::correlate(b, R"({"jsonrpc":"2.0","id":1,"result":0})");
    CHECK_FALSE(r.complete());
    CHECK(r.unexpected() == Texts{"1"});
    CHECK(r.missing().empty());
  }

  TEST_CASE("no reply when answers were due: every id is missing") {
    const rpc::BatchBuilder b = calls(3);
    const rpc::Replies r = rpc::correlate(b, std::nullopt);
    CHECK_FALSE(r.complete());
    CHECK(r.missing() == Ids{1, 2, 3});
    CHECK(r.problems().empty());
    CHECK_FALSE(r.ok(1));
    CHECK(r.error(1) == nullptr);
    CHECK_THROWS_WITH_AS((void)r.result<int>(2), "batchrpc: no response for id 2",
                         std::invalid_argument);
  }

  TEST_CASE("missing responses are listed in id order") {
    const rpc::BatchBuilder b = calls(4);
    const rpc::Replies r = rpc::correlate(b, R"([{"jsonrpc":"2.0","id":3,"result":"c"},)"
                                             R"({"jsonrpc":"2.0","id":1,"result":"a"}])");
    CHECK_FALSE(r.complete());
    CHECK(r.missing() == Ids{2, 4});
    CHECK(r.result<std::string>(3) == "c");
    CHECK(r.result<std::string>(1) == "a");
  }

  TEST_CASE("an id answered twice is a duplicate, the first response counts") {
    const rpc::BatchBuilder b = calls(3);
    const rpc::Replies r = rpc::correlate(
        b, R"([{"jsonrpc":"2.0","id":2,"result":"first"},{"jsonrpc":"2.0","id":1,"result":1},)"
           R"({"jsonrpc":"2.0","id":2,"error":{"code":-1,"message":"second"}},)"
           R"({"jsonrpc":"2.0","id":3,"result":3},{"jsonrpc":"2.0","id":1,"result":1},)"
           R"({"jsonrpc":"2.0","id":2,"result":"third"}])");
    CHECK_FALSE(r.complete());
    CHECK(r.duplicate() == Ids{1, 2});
    CHECK(r.missing().empty());
    CHECK(r.unexpected().empty());
    CHECK(r.ok(2));
    CHECK(r.error(2) == nullptr);
    CHECK(r.result<std::string>(2) == "first");
  }

  TEST_CASE("responses to ids never sent are unexpected, their ids as JSON text") {
    const rpc::BatchBuilder b = calls(2);
    const rpc::Replies r = rpc::correlate(
        b, R"([{"jsonrpc":"2.0","id":1,"result":1},{"jsonrpc":"2.0","id":7,"result":7},)"
           R"({"jsonrpc":"2.0","id":"x","result":0},{"jsonrpc":"2.0","id":"2","result":0},)"
           R"({"jsonrpc":"2.0","id":2.0,"result":0},{"jsonrpc":"2.0","id":0,"result":0},)"
           R"({"jsonrpc":"2.0","id":-1,"result":0},{"jsonrpc":"2.0","id":1E0,"result":0},)"
           R"({"jsonrpc":"2.0","id":"a\"\u00e9","result":0},)"
           R"({"jsonrpc":"2.0","id":18446744073709551617,"result":0},)"
           R"({"jsonrpc":"2.0","id":2,"result":2}])");
    CHECK_FALSE(r.complete());
    CHECK(r.unexpected() == Texts{"7", R"("x")", R"("2")", "2.0", "0", "-1", "1E0",
                                  "\"a\\\"\xc3\xa9\"", "18446744073709551617"});
    CHECK(r.missing().empty());
    CHECK(r.duplicate().empty());
    CHECK(r.result<int>(1) == 1);
    CHECK(r.result<int>(2) == 2);
  }

  TEST_CASE("id null entries for invalid members of a batch are unexpected") {
    // What a server sends for [1, {"jsonrpc":"2.0","method":"m","id":1}, {"foo":"boo"}].
    const rpc::BatchBuilder b = calls(1);
    const rpc::Replies r = rpc::correlate(
        b, R"([{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}},)"
           R"({"jsonrpc":"2.0","id":1,"result":19},)"
           R"({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request"}}])");
    CHECK_FALSE(r.complete());
    CHECK(r.unexpected() == Texts{"null", "null"});
    CHECK(r.message_error() == nullptr);
    CHECK(r.result<int>(1) == 19);
    CHECK(r.problems() == Texts{"the reply is an array, but the message was a single request"});
  }

  TEST_CASE("an error with id null answering the whole message is the message error") {
    const rpc::BatchBuilder b = calls(2);
    const rpc::Replies r = rpc::correlate(
        b, R"({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request",)"
           R"("data":{"reason":"x"}}})");
    CHECK_FALSE(r.complete());
    const rpc::Error* e = r.message_error();
    REQUIRE(e != nullptr);
    CHECK(e->code() == -32600);
    CHECK(e->message() == "Invalid Request");
    CHECK(e->data().text() == R"({"reason":"x"})");
    CHECK(r.missing() == Ids{1, 2});
    CHECK(r.unexpected().empty());
    CHECK(r.problems().empty());
    CHECK_THROWS_WITH_AS((void)r.result<int>(1),
                         "batchrpc: no response for id 1 (the server rejected the whole message: "
                         "-32600 Invalid Request)",
                         std::invalid_argument);
    SUBCASE("a parse error for a single request") {
      const rpc::Replies p = rpc::correlate(
          calls(1),
          R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}})");
      REQUIRE(p.message_error() != nullptr);
      CHECK(p.message_error()->code() == -32700);
      CHECK(p.missing() == Ids{1});
    }
    SUBCASE("from a live router rejecting an oversized batch") {
      rpc::Limits limits;
      limits.max_batch = 1;
      rpc::Router router(limits);
      router.add("m", [] { return 0; });
      const rpc::Replies p = rpc::correlate(b, router.handle(b.text()));
      REQUIRE(p.message_error() != nullptr);
      CHECK(p.message_error()->code() == -32602);
      CHECK(p.missing() == Ids{1, 2});
    }
  }

  TEST_CASE("a reply that is not JSON is a problem, never a crash") {
    const rpc::BatchBuilder b = calls(2);
    const auto problems = [&](std::string_view reply) {
      const rpc::Replies r = rpc::correlate(b, reply);
      CHECK_FALSE(r.complete());
      CHECK(r.missing() == Ids{1, 2});
      return r.problems();
    };
    CHECK(problems("garbage") == Texts{"the reply is not JSON: Invalid value. (offset 0)"});
    CHECK(problems("") == Texts{"the reply is not JSON: The document is empty. (offset 0)"});
    CHECK(
        problems(R"([{"jsonrpc":"2.0","id":1,"result":1})") ==
        Texts{"the reply is not JSON: Missing a comma or ']' after an array element. (offset 36)"});
    CHECK(problems(R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}} x)") ==
          Texts{"the reply is not JSON: The document root must not be followed by other values. "
                "(offset 66)"});
    CHECK(problems("[\"\xff\"]") ==
          Texts{"the reply is not JSON: Invalid encoding in string. (offset 2)"});
    using namespace std::string_literals;
    CHECK(problems(R"([{"jsonrpc":"2.0","id":1,"result":1}])"s + '\0' + "x") ==
          Texts{"the reply is not JSON: Unexpected NUL byte. (offset 37)"});
    CHECK(problems("[1e999]") ==
          Texts{"the reply is not JSON: Number too big to be stored in double. (offset 1)"});
  }

  TEST_CASE("deep nesting and oversized replies are bounded by Limits") {
    const rpc::BatchBuilder b = calls(1);
    const std::string deep = R"({"jsonrpc":"2.0","id":1,"result":)" + std::string(1000000, '[') +
                             std::string(1000000, ']') + "}";
    const rpc::Replies r = rpc::correlate(b, deep);
    CHECK(r.problems() == Texts{"the reply nests deeper than max_depth (128)"});
    CHECK(r.missing() == Ids{1});

    rpc::Limits limits;
    limits.max_depth = 2;
    const std::string three = R"({"jsonrpc":"2.0","id":1,"result":[[1]]})";  // 3 levels deep
    const rpc::Replies too_deep = rpc::correlate(b, three, limits);
    CHECK(too_deep.problems() == Texts{"the reply nests deeper than max_depth (2)"});
    limits.max_depth = 3;
    CHECK(rpc::correlate(b, three, limits).result_json(1).text() == "[[1]]");
    limits.max_message_bytes = three.size() - 1;
    const rpc::Replies too_large = rpc::correlate(b, three, limits);
    CHECK(too_large.problems() == Texts{"the reply is larger than max_message_bytes (" +
                                        std::to_string(three.size() - 1) + ")"});
    CHECK(too_large.missing() == Ids{1});
  }

  TEST_CASE("JSON that is not a response is a problem") {
    const rpc::BatchBuilder b = calls(1);
    const auto problems = [&](std::string_view reply) {
      const rpc::Replies r = rpc::correlate(b, reply);
      CHECK_FALSE(r.complete());
      return r.problems();
    };
    CHECK(problems("42") == Texts{"reply: a response must be an object"});
    CHECK(problems("[]") == Texts{"the reply is an empty array"});
    CHECK(problems(R"({"id":1,"result":1})") == Texts{R"(reply: missing "jsonrpc")"});
    CHECK(problems(R"({"jsonrpc":"1.0","id":1,"result":1})") ==
          Texts{R"(reply: "jsonrpc" must be exactly "2.0")"});
    CHECK(problems(R"({"jsonrpc":"2.0","result":1})") == Texts{R"(reply: missing "id")"});
    CHECK(problems(R"({"jsonrpc":"2.0","id":[1],"result":1})") ==
          Texts{R"(reply: "id" must be a string, a number or null)"});
    CHECK(problems(R"({"jsonrpc":"2.0","id":1})") ==
          Texts{R"(reply: missing "result" or "error")"});
    CHECK(problems(R"({"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"m"}})") ==
          Texts{R"(reply: a response must not have both "result" and "error")"});
    CHECK(problems(R"({"jsonrpc":"2.0","id":1,"result":1,"result":2})") ==
          Texts{"reply: member names must be unique"});
    CHECK(problems(R"({"jsonrpc":"2.0","id":1,"error":"boom"})") ==
          Texts{R"(reply: "error" must be an object)"});
    CHECK(problems(R"({"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"m"}})") ==
          Texts{R"(reply: "error.code" must be an integer)"});
    CHECK(problems(R"({"jsonrpc":"2.0","id":1,"error":{"code":4294967296,"message":"m"}})") ==
          Texts{R"(reply: "error.code" must be an integer)"});
    CHECK(problems(R"({"jsonrpc":"2.0","id":1,"error":{"code":1}})") ==
          Texts{R"(reply: "error.message" must be a string)"});
    CHECK(problems(R"({"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","code":2}})") ==
          Texts{R"(reply: member names must be unique in "error")"});
    SUBCASE("invalid members of an array are reported by index; valid ones still match") {
      const rpc::BatchBuilder two = calls(2);
      const rpc::Replies r = rpc::correlate(
          two, R"([1,{"jsonrpc":"2.0","id":2,"result":2},{"id":1,"result":1},null])");
      CHECK(r.problems() == Texts{"reply[0]: a response must be an object",
                                  R"(reply[2]: missing "jsonrpc")",
                                  "reply[3]: a response must be an object"});
      CHECK(r.missing() == Ids{1});
      CHECK(r.result<int>(2) == 2);
    }
  }

  TEST_CASE("a single response where an array was due is a problem, and still matched") {
    const rpc::BatchBuilder b = calls(2);
    const rpc::Replies r = rpc::correlate(b, R"({"jsonrpc":"2.0","id":1,"result":"one"})");
    CHECK_FALSE(r.complete());
    CHECK(r.problems() == Texts{"the reply is a single response, but the message was a batch"});
    CHECK(r.missing() == Ids{2});
    CHECK(r.message_error() == nullptr);
    CHECK(r.result<std::string>(1) == "one");
    SUBCASE("also for a batch of one") {
      rpc::BatchBuilder one{rpc::as_batch};
      one.call("m");
      const rpc::Replies s = rpc::correlate(one, R"({"jsonrpc":"2.0","id":1,"result":1})");
      CHECK(s.problems() == Texts{"the reply is a single response, but the message was a batch"});
      CHECK(s.missing().empty());
    }
  }

  TEST_CASE("extra members of a response are ignored") {
    const rpc::BatchBuilder b = calls(1);
    const rpc::Replies r =
        rpc::correlate(b, R"({"meta":{"t":1},"result":{"a":[1,"x",null]},"id":1,"jsonrpc":"2.0"})");
    CHECK(r.complete());
    CHECK(r.result_json(1).text() == R"({"a":[1,"x",null]})");
    CHECK(r.result<std::map<std::string, std::vector<rpc::Json>>>(1).at("a").size() == 3);
  }

  TEST_CASE("error data is optional and kept as JSON") {
    const rpc::BatchBuilder b = calls(2);
    const rpc::Replies r = rpc::correlate(
        b,
        R"([{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"no data"}},)"
        R"({"jsonrpc":"2.0","id":2,"error":{"code":7,"message":"m\n\u00e9","data":[1.50,"x"]}}])");
    CHECK(r.complete());
    REQUIRE(r.error(1) != nullptr);
    CHECK(r.error(1)->data().empty());
    REQUIRE(r.error(2) != nullptr);
    CHECK(r.error(2)->message() == "m\n\xc3\xa9");
    CHECK(r.error(2)->data().text() == R"([1.5,"x"])");
  }

  TEST_CASE("Replies outlive the reply text, and copies share it") {
    const rpc::BatchBuilder b = calls(1);
    std::optional<rpc::Replies> kept;
    {
      std::string reply = R"({"jsonrpc":"2.0","id":1,"result":"kept"})";
      const rpc::Replies r = rpc::correlate(b, reply);
      reply.assign(reply.size(), 'x');
      kept = r;
    }
    CHECK(kept->result<std::string_view>(1) == "kept");
    const rpc::Replies moved = std::move(*kept);
    CHECK(moved.result<std::string>(1) == "kept");
    CHECK(rpc::Replies{}.complete());
  }
}
