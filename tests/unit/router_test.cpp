// SPDX-License-Identifier: MIT
// Router: every rule of the behaviour contract for singletons and batches, with exact replies.
#include <batchrpc/batch_call.hpp>
#include <batchrpc/responder.hpp>
#include <batchrpc/router.hpp>

#include <atomic>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "support/printing.hpp"
#include "support/replies.hpp"

namespace {

using namespace replies;

// A router with a few methods and a counter of calls, for checking that things ran.
struct Fixture {
  std::atomic<int> calls{0};
  rpc::Router router;
  Fixture() {
    router.add("echo", [](const rpc::Value& v) { return rpc::to_json(v); });
    router.add("count", [this] { return ++calls; });
    router.add("fail", []() -> int { throw std::runtime_error("secret detail"); });
    router.add("refuse", []() -> int { throw rpc::Error(-32001, "Quota exceeded", rpc::json(R"({"retryAfter":30})")); });
  }
  std::optional<std::string> handle(std::string_view message) const { return router.handle(message); }
};


}  // namespace

TEST_SUITE("router") {
  TEST_CASE("a valid request gets its result with the id echoed") {
    Fixture f;
    CHECK(f.handle(R"({"jsonrpc":"2.0","method":"echo","params":[[1,"a",null]],"id":7})") ==
          result("7", R"([1,"a",null])"));
  }

  TEST_CASE("ids are echoed byte for byte") {
    Fixture f;
    for (const char* id : {"1.0", "-0", "18446744073709551616", "1e3", "-1.5E-7", "0.10000000000000000001",
                           "123456789012345678901234567890", "\"\"", "\"plain\"", "null"}) {
      CAPTURE(id);
      const std::string message = std::string(R"({"jsonrpc":"2.0","method":"count","id":)") + id + "}";
      const auto reply = f.handle(message);
      REQUIRE(reply);
      CHECK(reply->find(std::string(R"("id":)") + id + ",") != std::string::npos);
    }
  }

  TEST_CASE("string ids keep the meaning of their escapes") {
    Fixture f;
    CHECK(f.handle(R"({"jsonrpc":"2.0","method":"count","id":"a\"b\\c\n\u00e9\ud83d\ude00\u0000"})") ==
          result(R"("a\"b\\c\né😀\u0000")", "1"));
  }

  TEST_CASE("a request with id null is answered (it is not a notification)") {
    Fixture f;
    CHECK(f.handle(R"({"jsonrpc":"2.0","method":"count","id":null})") == result("null", "1"));
  }

  TEST_CASE("notifications run their handler and are never answered") {
    Fixture f;
    CHECK_FALSE(f.handle(R"({"jsonrpc":"2.0","method":"count"})"));
    CHECK(f.calls == 1);
    SUBCASE("not even for an unknown method") {
      CHECK_FALSE(f.handle(R"({"jsonrpc":"2.0","method":"nope"})"));
    }
    SUBCASE("not even for invalid params") {
      CHECK_FALSE(f.handle(R"({"jsonrpc":"2.0","method":"count","params":[1]})"));
    }
    SUBCASE("not even when the handler throws") {
      CHECK_FALSE(f.handle(R"({"jsonrpc":"2.0","method":"fail"})"));
      CHECK_FALSE(f.handle(R"({"jsonrpc":"2.0","method":"refuse"})"));
    }
  }

  TEST_CASE("invalid JSON is a single -32700 with id null") {
    Fixture f;
    CHECK(f.handle(R"({"jsonrpc":"2.0","method":"count","id":1)") ==
          parse_error(40, "Missing a comma or '}' after an object member."));
    CHECK(f.handle("") == parse_error(0, "The document is empty."));
    CHECK(f.handle("  \n ") == parse_error(4, "The document is empty."));
    CHECK(f.handle("[1,]") == parse_error(3, "Invalid value."));
    CHECK(f.handle("{'a':1}") == parse_error(1, "Missing a name for object member."));
    CHECK(f.handle("[NaN]") == parse_error(1, "Invalid value."));
  }

  TEST_CASE("trailing garbage after the message is -32700") {
    Fixture f;
    CHECK(f.handle(R"({"jsonrpc":"2.0","method":"count","id":1} x)") ==
          parse_error(42, "The document root must not be followed by other values."));
    CHECK(f.handle(R"({"jsonrpc":"2.0","method":"count","id":1}{})") ==
          parse_error(41, "The document root must not be followed by other values."));
    CHECK(f.calls == 0);
  }

  TEST_CASE("a NUL byte anywhere is -32700") {
    Fixture f;
    using namespace std::string_literals;
    CHECK(f.handle(R"({"jsonrpc":"2.0","method":"count","id":1})"s + '\0' + "garbage") ==
          parse_error(41, "Unexpected NUL byte."));
    CHECK(f.handle(R"({"jsonrpc":"2.0","method":")"s + '\0' + R"("})") ==
          parse_error(27, "Unexpected NUL byte."));
    CHECK(f.calls == 0);
  }

  TEST_CASE("invalid UTF-8 is -32700") {
    Fixture f;
    CHECK(f.handle("{\"jsonrpc\":\"2.0\",\"method\":\"echo\",\"params\":[\"\xff\"],\"id\":1}") ==
          parse_error(44, "Invalid UTF-8."));
    SUBCASE("an overlong encoding") {
      CHECK(f.handle("[\"\xc0\xaf\"]") == parse_error(2, "Invalid UTF-8."));
    }
    SUBCASE("in a member name") {
      CHECK(f.handle("{\"\xed\xa0\x80\":1}") == parse_error(2, "Invalid UTF-8."));
    }
  }

  TEST_CASE("numbers beyond the range of double are -32700") {
    Fixture f;
    CHECK(f.handle(R"({"jsonrpc":"2.0","method":"echo","params":[1e999999],"id":1})") ==
          parse_error(43, "Number too big to be stored in double."));
    CHECK(f.handle(R"({"jsonrpc":"2.0","method":"echo","params":[1e-999999],"id":1})") ==
          result("1", "0"));
  }

  TEST_CASE("JSON that is not a Request object is -32600 with id null") {
    Fixture f;
    CHECK(f.handle("1") == invalid_request("a request must be an object"));
    CHECK(f.handle(R"("count")") == invalid_request("a request must be an object"));
    CHECK(f.handle("null") == invalid_request("a request must be an object"));
    CHECK(f.handle("{}") == invalid_request("missing \\\"jsonrpc\\\""));
    CHECK(f.handle(R"({"method":"count","id":1})") == invalid_request("missing \\\"jsonrpc\\\""));
    CHECK(f.handle(R"({"jsonrpc":"2.0","id":1})") == invalid_request("missing \\\"method\\\""));
    for (const char* version : {R"("1.0")", "2.0", R"("2.0 ")", "null", R"("2")"}) {
      CAPTURE(version);
      CHECK(f.handle(std::string(R"({"jsonrpc":)") + version + R"(,"method":"count","id":1})") ==
            invalid_request("\\\"jsonrpc\\\" must be exactly \\\"2.0\\\""));
    }
    for (const char* method : {"1", "null", "[]", "{}", "true"}) {
      CAPTURE(method);
      CHECK(f.handle(std::string(R"({"jsonrpc":"2.0","method":)") + method + R"(,"id":1})") ==
            invalid_request("\\\"method\\\" must be a string"));
    }
    for (const char* params : {"null", "1", R"("a")", "true"}) {
      CAPTURE(params);
      CHECK(f.handle(std::string(R"({"jsonrpc":"2.0","method":"count","params":)") + params + R"(,"id":1})") ==
            invalid_request("\\\"params\\\" must be an array or an object"));
    }
    for (const char* id : {"[]", "{}", "true", "false", "[1]"}) {
      CAPTURE(id);
      CHECK(f.handle(std::string(R"({"jsonrpc":"2.0","method":"count","id":)") + id + "}") ==
            invalid_request("\\\"id\\\" must be a string, a number or null"));
    }
    CHECK(f.calls == 0);
  }

  TEST_CASE("the same member name twice is -32600") {
    Fixture f;
    const std::string dup = invalid_request("member names must be unique");
    CHECK(f.handle(R"({"jsonrpc":"2.0","method":"count","id":1,"id":2})") == dup);
    CHECK(f.handle(R"({"jsonrpc":"2.0","jsonrpc":"2.0","method":"count","id":1})") == dup);
    CHECK(f.handle(R"({"jsonrpc":"2.0","method":"count","method":"count","id":1})") == dup);
    CHECK(f.handle(R"({"jsonrpc":"2.0","method":"count","params":[],"params":[],"id":1})") == dup);
    CHECK(f.handle(R"({"x":1,"jsonrpc":"2.0","method":"count","x":2,"id":1})") == dup);
    SUBCASE("also among many unknown members") {
      std::string many = R"({"jsonrpc":"2.0","method":"count","id":1)";
      for (int i = 0; i < 100; ++i) many += ",\"m" + std::to_string(i) + "\":0";
      CHECK(f.handle(many + "}") == result("1", "1"));
      CHECK(f.handle(many + ",\"m42\":1}") == dup);
    }
    CHECK(f.calls == 1);
  }

  TEST_CASE("unknown extra members are ignored") {
    Fixture f;
    CHECK(f.handle(R"({"jsonrpc":"2.0","method":"count","id":1,"meta":{"trace":"x"}})") == result("1", "1"));
  }

  TEST_CASE("an unknown method is -32601") {
    Fixture f;
    CHECK(f.handle(R"({"jsonrpc":"2.0","method":"nope","id":1})") == error("1", -32601, "Method not found"));
    CHECK(f.handle(R"({"jsonrpc":"2.0","method":"rpc.discover","id":1})") ==
          error("1", -32601, "Method not found"));
    CHECK(f.handle(R"({"jsonrpc":"2.0","method":"Count","id":1})") == error("1", -32601, "Method not found"));
  }

  TEST_CASE("rpc.Error thrown by a handler is sent as is") {
    Fixture f;
    CHECK(f.handle(R"({"jsonrpc":"2.0","method":"refuse","id":1})") ==
          error("1", -32001, "Quota exceeded", R"({"retryAfter":30})"));
  }

  TEST_CASE("other exceptions are -32603 with the text hidden unless opted in") {
    Fixture f;
    CHECK(f.handle(R"({"jsonrpc":"2.0","method":"fail","id":1})") == error("1", -32603, "Internal error"));

    std::vector<std::string> seen;
    rpc::Router verbose(rpc::RouterOptions{
        .expose_exception_text = true,
        .on_exception = [&seen](std::string_view method, std::exception_ptr e) {
          try {
            std::rethrow_exception(e);
          } catch (const std::exception& ex) {
            seen.push_back(std::string(method) + ": " + ex.what());
          }
        }});
    verbose.add("fail", []() -> int { throw std::runtime_error("disk \"full\""); });
    verbose.add("throw_int", []() -> int { throw 42; });
    CHECK(verbose.handle(R"({"jsonrpc":"2.0","method":"fail","id":1})") ==
          error("1", -32603, "Internal error", R"({"exception":"disk \"full\""})"));
    CHECK(verbose.handle(R"({"jsonrpc":"2.0","method":"throw_int","id":2})") ==
          error("2", -32603, "Internal error", R"({"exception":"unknown exception"})"));
    CHECK_FALSE(verbose.handle(R"({"jsonrpc":"2.0","method":"fail"})"));
    CHECK(seen == std::vector<std::string>{"fail: disk \"full\"", "fail: disk \"full\""});
  }

  TEST_CASE("a batch gets one response per request, in request order") {
    Fixture f;
    CHECK(f.handle(R"([{"jsonrpc":"2.0","method":"echo","params":["a"],"id":"x"},)"
                   R"({"jsonrpc":"2.0","method":"echo","params":["b"],"id":2},)"
                   R"({"jsonrpc":"2.0","method":"echo","params":["c"],"id":1.5}])") ==
          "[" + result(R"("x")", R"("a")") + "," + result("2", R"("b")") + "," + result("1.5", R"("c")") + "]");
  }

  TEST_CASE("duplicate ids in a batch are each answered") {
    Fixture f;
    CHECK(f.handle(R"([{"jsonrpc":"2.0","method":"count","id":1},{"jsonrpc":"2.0","method":"count","id":1}])") ==
          "[" + result("1", "1") + "," + result("1", "2") + "]");
  }

  TEST_CASE("notification members run but get no entry") {
    Fixture f;
    CHECK(f.handle(R"([{"jsonrpc":"2.0","method":"count"},{"jsonrpc":"2.0","method":"count","id":9},)"
                   R"({"jsonrpc":"2.0","method":"nope"}])") == "[" + result("9", "2") + "]");
    CHECK(f.calls == 2);
  }

  TEST_CASE("a batch of only notifications is processed and nothing is sent") {
    Fixture f;
    CHECK_FALSE(f.handle(R"([{"jsonrpc":"2.0","method":"count"},{"jsonrpc":"2.0","method":"count"}])"));
    CHECK(f.calls == 2);
    rpc::Buffer out;
    CHECK_FALSE(f.router.handle(R"([{"jsonrpc":"2.0","method":"count"}])", out));
    CHECK(out.empty());
  }

  TEST_CASE("an empty batch is a single -32600, not an array") {
    Fixture f;
    CHECK(f.handle("[]") == invalid_request("empty batch"));
    CHECK(f.handle(" [ ] ") == invalid_request("empty batch"));
  }

  TEST_CASE("malformed members get -32600 entries and the others still run") {
    Fixture f;
    CHECK(f.handle(R"([1,{"foo":"boo"},{"jsonrpc":"2.0","method":"count","id":1},[],)"
                   R"({"jsonrpc":"2.0","method":"count","id":2,"id":3}])") ==
          "[" + invalid_request("a request must be an object") + "," +
              invalid_request("missing \\\"jsonrpc\\\"") + "," + result("1", "1") + "," +
              invalid_request("a request must be an object") + "," +
              invalid_request("member names must be unique") + "]");
  }

  TEST_CASE("one member's error never fails the others") {
    Fixture f;
    CHECK(f.handle(R"([{"jsonrpc":"2.0","method":"fail","id":1},{"jsonrpc":"2.0","method":"count","id":2},)"
                   R"({"jsonrpc":"2.0","method":"refuse","id":3},{"jsonrpc":"2.0","method":"count","params":[1],"id":4},)"
                   R"({"jsonrpc":"2.0","method":"count","id":5}])") ==
          "[" + error("1", -32603, "Internal error") + "," + result("2", "1") + "," +
              error("3", -32001, "Quota exceeded", R"({"retryAfter":30})") + "," +
              error("4", -32602, "Invalid params", R"({"reason":"too many params: expected at most 0, got 1"})") + "," +
              result("5", "2") + "]");
  }

  TEST_CASE("invalid JSON anywhere in a batch is a single -32700") {
    Fixture f;
    CHECK(f.handle(R"([{"jsonrpc":"2.0","method":"count","id":1},{"jsonrpc":"2.0","method":"count","id":2])") ==
          parse_error(83, "Missing a comma or '}' after an object member."));
    CHECK(f.calls == 0);
  }

  TEST_CASE("a batch nested in a batch is a malformed member") {
    Fixture f;
    CHECK(f.handle(R"([[{"jsonrpc":"2.0","method":"count","id":1}]])") ==
          "[" + invalid_request("a request must be an object") + "]");
    CHECK(f.calls == 0);
  }

  TEST_CASE("all entry points give the same reply") {
    Fixture f;
    const std::string message = R"([{"jsonrpc":"2.0","method":"echo","params":["caf\u00e9"],"id":1},)"
                                R"({"jsonrpc":"2.0","method":"count","id":"two"}])";
    const std::string expected =
        "[" + result("1", R"("café")") + "," + result(R"("two")", "1") + "]";
    rpc::Buffer out;
    SUBCASE("string_view in, std::string out") { CHECK(f.handle(message) == expected); }
    SUBCASE("string_view in, reused buffer out") {
      CHECK(f.router.handle(message, out));
      CHECK(out.view() == expected);
    }
    SUBCASE("in situ on a std::string") {
      std::string mutable_copy = message;
      CHECK(f.router.handle_insitu(mutable_copy, out));
      CHECK(out.view() == expected);
    }
    SUBCASE("in situ on a NUL-terminated span") {
      std::vector<char> bytes(message.begin(), message.end());
      bytes.push_back('\0');
      CHECK(f.router.handle_insitu(std::span<char>(bytes), out));
      CHECK(out.view() == expected);
    }
  }

  TEST_CASE("handle_insitu refuses a span without its NUL terminator") {
    Fixture f;
    std::vector<char> bytes{'[', ']'};
    rpc::Buffer out;
    CHECK_THROWS_AS((void)f.router.handle_insitu(std::span<char>(bytes), out), std::invalid_argument);
  }

  TEST_CASE("a reused buffer is cleared before each reply") {
    Fixture f;
    rpc::Buffer out;
    CHECK(f.router.handle(R"({"jsonrpc":"2.0","method":"count","id":1})", out));
    CHECK(f.router.handle(R"({"jsonrpc":"2.0","method":"count","id":2})", out));
    CHECK(out.view() == result("2", "2"));
  }

  TEST_CASE("a handler may handle another message on the same router") {
    rpc::Router router;
    router.add("inner", [] { return 1; });
    router.add("outer", [&router](std::string message) { return rpc::json(*router.handle(message)); },
               rpc::names("message"));
    CHECK(router.handle(R"({"jsonrpc":"2.0","method":"outer","params":["{\"jsonrpc\":\"2.0\",\"method\":\"inner\",\"id\":5}"],"id":1})") ==
          result("1", result("5", "1")));
  }

  TEST_CASE("registration refuses reserved, empty and duplicate names") {
    rpc::Router router;
    router.add("a", [] {});
    CHECK_THROWS_AS(router.add("a", [] {}), std::invalid_argument);
    CHECK_THROWS_AS(router.add("rpc.x", [] {}), std::invalid_argument);
    CHECK_THROWS_AS(router.add("", [] {}), std::invalid_argument);
    CHECK(router.contains("a"));
    CHECK_FALSE(router.contains("rpc.x"));
  }
}

TEST_CASE("invalid UTF-8 anywhere is found at its first bad byte, also after long ASCII runs") {
  rpc::Router router;
  router.add("echo", [](std::string s) { return s; });
  const std::string head = R"({"jsonrpc":"2.0","method":"echo","params":[")" + std::string(100, 'a');
  CHECK(router.handle(head + "\xe2\x82\xac\"],\"id\":1}") ==
        std::optional<std::string>(R"({"jsonrpc":"2.0","id":1,"result":")" + std::string(100, 'a') + "\xe2\x82\xac\"}"));
  CHECK(router.handle(head + "\xe2\x82\"],\"id\":1}") ==
        std::optional<std::string>(parse_error(head.size(), "Invalid UTF-8.")));
  CHECK(router.handle(head + "\xf4\x90\x80\x80\"],\"id\":1}") ==
        std::optional<std::string>(parse_error(head.size(), "Invalid UTF-8.")));
  CHECK(router.handle(head + "\"],\"id\":1}\xff") == std::optional<std::string>(parse_error(head.size() + 10, "Invalid UTF-8.")));
}

TEST_CASE("nesting past the recursive-parse bound is parsed iteratively, limits still apply") {
  // Deep nesting costs 16 to 32 bytes of parse memory per byte: no parse budget here.
  rpc::Router router(rpc::Limits{.max_depth = 100000, .max_parse_ratio = rpc::Limits::unlimited});
  router.add("echo", [](const rpc::Value&) { return true; });
  router.add("say", [](std::string text) { return text; });
  // This parse reads through the stream that decodes escapes, with or without any.
  CHECK(router.handle(R"({"jsonrpc":"2.0","method":"say","params":["plain"],"id":"a"})") ==
        std::optional<std::string>(R"({"jsonrpc":"2.0","id":"a","result":"plain"})"));
  CHECK(router.handle(R"({"jsonrpc":"2.0","method":"say","params":["tab\there \u00e9"],"id":"\u0062"})") ==
        std::optional<std::string>("{\"jsonrpc\":\"2.0\",\"id\":\"b\",\"result\":\"tab\\there \xc3\xa9\"}"));
  CHECK(router.handle(R"({"jsonrpc":"2.0","method":"say","params":["x"],"id":1)") ==
        std::optional<std::string>(parse_error(53, "Missing a comma or '}' after an object member.")));
  const std::string deep = std::string(50000, '[') + std::string(50000, ']');
  CHECK(router.handle(R"({"jsonrpc":"2.0","method":"echo","params":[)" + deep + R"(],"id":1})") ==
        std::optional<std::string>(R"({"jsonrpc":"2.0","id":1,"result":true})"));
  CHECK(router.handle(std::string(200000, '[')) ==
        std::optional<std::string>(R"({"jsonrpc":"2.0","id":null,"error":{"code":-32091,"message":"Nesting too deep","data":{"max":100000}}})"));
}

TEST_CASE("numbers out of range toward infinity are -32700 even when they start with 0.") {
  rpc::Router router;
  router.add("echo", [](const rpc::Value& v) { return rpc::to_json(v); });
  CHECK(router.handle(R"({"jsonrpc":"2.0","method":"echo","params":[0.79e309],"id":1})") ==
        std::optional<std::string>(parse_error(43, "Number too big to be stored in double.")));
  CHECK(router.handle(R"({"jsonrpc":"2.0","method":"echo","params":[0.0000001e-400],"id":1})") ==
        std::optional<std::string>(R"({"jsonrpc":"2.0","id":1,"result":0})"));
  SUBCASE("the digits and the exponent count together") {
    const std::string tiny = "0." + std::string(400, '0') + "17e3";
    CHECK(router.handle(R"({"jsonrpc":"2.0","method":"echo","params":[)" + tiny + R"(],"id":1})") ==
          std::optional<std::string>(R"({"jsonrpc":"2.0","id":1,"result":0})"));
    CHECK(router.handle(R"({"jsonrpc":"2.0","method":"echo","params":[-123e-400],"id":1})") ==
          std::optional<std::string>(R"({"jsonrpc":"2.0","id":1,"result":-0})"));
    CHECK(router.handle(R"({"jsonrpc":"2.0","method":"echo","params":[0.00017e330],"id":1})") ==
          std::optional<std::string>(parse_error(43, "Number too big to be stored in double.")));
  }
}

// The offset of a parse error is where reading stopped: just past the offending token.
TEST_CASE("members the router ignores are still checked like the rest of the message") {
  rpc::Router router;
  router.add("count", [] { return 1; });
  const std::string head = R"({"jsonrpc":"2.0","method":"count","id":1,"meta":)";
  CHECK(router.handle(head + R"({"trace":["a",{"b":null}]}})") == std::optional<std::string>(result("1", "1")));
  CHECK(router.handle(head + R"({"x":"\udc00"}})") ==
        std::optional<std::string>(parse_error(61, "Invalid UTF-8 from an escape (a lone surrogate).")));
  CHECK(router.handle(head + R"({"\udc00":1}})") ==
        std::optional<std::string>(parse_error(57, "Invalid UTF-8 from an escape (a lone surrogate).")));
  CHECK(router.handle(head + R"([1e400]})") ==
        std::optional<std::string>(parse_error(49, "Number too big to be stored in double.")));
  SUBCASE("so are the values of members that make a request invalid") {
    CHECK(router.handle(R"({"jsonrpc":"2.0","method":["\udc00"],"id":1})") ==
          std::optional<std::string>(parse_error(35, "Invalid UTF-8 from an escape (a lone surrogate).")));
    CHECK(router.handle(R"([{"jsonrpc":"2.0","method":"count","id":[1e400]}])") ==
          std::optional<std::string>(parse_error(41, "Number too big to be stored in double.")));
  }
  SUBCASE("and a malformed batch member's content") {
    CHECK(router.handle(R"([[{"a":"\udc00"}]])") ==
          std::optional<std::string>(parse_error(15, "Invalid UTF-8 from an escape (a lone surrogate).")));
    CHECK(router.handle(R"([[{"a":[1]}],"x"])") ==
          std::optional<std::string>("[" + invalid_request("a request must be an object") + "," +
                                     invalid_request("a request must be an object") + "]"));
  }
}

TEST_CASE("envelope member names may be written with escapes") {
  rpc::Router router;
  router.add("echo", [](const rpc::Value& v) { return rpc::to_json(v); });
  CHECK(router.handle(R"({"\u006asonrpc":"2.0","m\u0065thod":"\u0065cho","p\u0061rams":[2],"\u0069d":"\u0031"})") ==
        std::optional<std::string>(result(R"("1")", "2")));
  CHECK(router.handle(R"({"jsonrpc":"2.0","method":"echo","params":[1],"p\u0061rams":[2],"id":1})") ==
        std::optional<std::string>(invalid_request("member names must be unique")));
}

TEST_CASE("the first member that breaks a rule names the reason") {
  rpc::Router router;
  router.add("count", [] { return 1; });
  CHECK(router.handle(R"({"id":{},"jsonrpc":"1.0","method":1})") ==
        std::optional<std::string>(invalid_request("\\\"id\\\" must be a string, a number or null")));
  CHECK(router.handle(R"({"method":1,"id":{},"jsonrpc":"1.0"})") ==
        std::optional<std::string>(invalid_request("\\\"method\\\" must be a string")));
  CHECK(router.handle(R"({"method":"count","method":1,"jsonrpc":"2.0"})") ==
        std::optional<std::string>(invalid_request("\\\"method\\\" must be a string")));
  CHECK(router.handle(R"({"method":"count","method":"count"})") ==
        std::optional<std::string>(invalid_request("member names must be unique")));
  CHECK(router.handle(R"({"method":"count","params":{"a":1}})") ==
        std::optional<std::string>(invalid_request("missing \\\"jsonrpc\\\"")));
  CHECK(router.handle(R"({"jsonrpc":"2.0","params":[],"id":1})") ==
        std::optional<std::string>(invalid_request("missing \\\"method\\\"")));
}

TEST_CASE("many methods are each found, and names that are not registered are not") {
  rpc::Router router;
  for (int i = 0; i < 1000; ++i) {
    router.add("m" + std::to_string(i), [i] { return i; });
  }
  for (int i = 0; i < 1000; i += 37) {
    CAPTURE(i);
    CHECK(router.handle(R"({"jsonrpc":"2.0","method":"m)" + std::to_string(i) + R"(","id":1})") ==
          std::optional<std::string>(result("1", std::to_string(i))));
  }
  CHECK(router.contains("m999"));
  CHECK_FALSE(router.contains("m1000"));
  CHECK_FALSE(router.contains("m"));
  CHECK_FALSE(router.contains(""));
  rpc::Router moved = std::move(router);
  CHECK(moved.handle(R"({"jsonrpc":"2.0","method":"m500","id":2})") == std::optional<std::string>(result("2", "500")));
}

namespace {
struct Deferring {
  int offset = 0;
  void add(int x, rpc::Responder done) const { done.resolve(x + offset); }
};
}  // namespace

// A router reaches the paths for Responder and batch handlers only once one is registered;
// whichever way it was, and after a move, they answer.
TEST_CASE("handlers that answer later or in groups are answered, also by a moved router") {
  Deferring deferring{100};
  rpc::Router router;
  router.add("later", &Deferring::add, deferring);
  router.add("named_later", [](int x, rpc::Responder done) { done.resolve(x * 2); }, rpc::names("x"));
  router.add_batched("count", [](std::span<rpc::BatchCall> group) {
    for (rpc::BatchCall& call : group) call.result().unsigned_integer(group.size());
  });
  rpc::Router moved = std::move(router);
  CHECK(moved.handle(R"([{"jsonrpc":"2.0","method":"later","params":[1],"id":1},)"
                     R"({"jsonrpc":"2.0","method":"count","id":2},)"
                     R"({"jsonrpc":"2.0","method":"named_later","params":{"x":4},"id":3},)"
                     R"({"jsonrpc":"2.0","method":"count","id":4}])") ==
        std::optional<std::string>(R"([{"jsonrpc":"2.0","id":1,"result":101},{"jsonrpc":"2.0","id":2,"result":2},)"
                                   R"({"jsonrpc":"2.0","id":3,"result":8},{"jsonrpc":"2.0","id":4,"result":2}])"));
  CHECK(moved.handle(R"({"jsonrpc":"2.0","method":"count","id":5})") ==
        std::optional<std::string>(R"({"jsonrpc":"2.0","id":5,"result":1})"));
}
