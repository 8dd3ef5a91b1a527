// SPDX-License-Identifier: MIT
// Handlers: typed parameter binding, result writing, errors and registration, with exact replies.
#include <batchrpc/handler.hpp>

#include <batchrpc/router.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <exception>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace {

// The reply to `message`, or "<no reply>" when nothing is to be sent (never dereferences nullopt).
std::string reply(const rpc::Router& router, std::string_view message) {
  const std::optional<std::string> text = router.handle(message);
  return text ? *text : std::string("<no reply>");
}

// The reply to {"jsonrpc":"2.0","method":<method>[,"params":<params>],"id":<id>}.
std::string call(const rpc::Router& router, std::string_view method, std::string_view params = {},
                 std::string_view id = "1") {
  std::string message = R"({"jsonrpc":"2.0","method":")" + std::string(method) + "\"";
  if (!params.empty()) message += R"(,"params":)" + std::string(params);
  message += R"(,"id":)" + std::string(id) + "}";
  return reply(router, message);
}

// A user type bound through its own rpc::JsonTraits specialisation (below).
struct Point {
  int x = 0;
  int y = 0;
};

const char* kind_name(rpc::RequestId::Kind kind) {
  switch (kind) {
    case rpc::RequestId::Kind::none: return "none";
    case rpc::RequestId::Kind::null: return "null";
    case rpc::RequestId::Kind::number: return "number";
    case rpc::RequestId::Kind::string: return "string";
  }
  return "?";
}

int twice(int n) { return 2 * n; }

struct Adder {
  int base;
  int operator()(int n) const { return base + n; }
};

}  // namespace

template <>
struct rpc::JsonTraits<Point> {
  static bool read(const rpc::Value& v, Point& out, std::string& why) {
    if (!v.IsObject() || v.MemberCount() != 2 || !v.HasMember("x") || !v.HasMember("y") ||
        !v["x"].IsInt() || !v["y"].IsInt()) {
      why = "expected a point {x, y}";
      return false;
    }
    out = Point{v["x"].GetInt(), v["y"].GetInt()};
    return true;
  }
  static void write(rpc::ResultWriter& w, const Point& p) {
    w.start_object();
    w.key("x");
    w.integer(p.x);
    w.key("y");
    w.integer(p.y);
    w.end_object();
  }
};

TEST_SUITE("handler") {
  TEST_CASE("bool parameters take only JSON booleans") {
    rpc::Router router;
    router.add("not", [](bool b) { return !b; });
    CHECK(call(router, "not", "[true]") == R"({"jsonrpc":"2.0","id":1,"result":false})");
    CHECK(call(router, "not", "[false]") == R"({"jsonrpc":"2.0","id":1,"result":true})");
    CHECK(call(router, "not", "[1]") ==
          R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":0,"reason":"expected a boolean"}}})");
    CHECK(call(router, "not", R"(["true"])") ==
          R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":0,"reason":"expected a boolean"}}})");
    CHECK(call(router, "not", "[null]") ==
          R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":0,"reason":"expected a boolean"}}})");
  }

  TEST_CASE("integer parameters take JSON integers within the type's range, nothing else") {
    rpc::Router router;
    router.add("int", [](int i) { return i; });
    router.add("int64", [](std::int64_t i) { return i; });
    router.add("uint64", [](std::uint64_t u) { return u; });
    router.add("unsigned", [](unsigned u) { return u; });
    router.add("short", [](short s) { return s; });

    SUBCASE("int") {
      CHECK(call(router, "int", "[42]") == R"({"jsonrpc":"2.0","id":1,"result":42})");
      CHECK(call(router, "int", "[-0]") == R"({"jsonrpc":"2.0","id":1,"result":0})");
      CHECK(call(router, "int", "[2147483647]") == R"({"jsonrpc":"2.0","id":1,"result":2147483647})");
      CHECK(call(router, "int", "[-2147483648]") == R"({"jsonrpc":"2.0","id":1,"result":-2147483648})");
      CHECK(call(router, "int", "[2147483648]") ==
            R"x({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":0,"reason":"integer out of range (-2147483648 to 2147483647)"}}})x");
      CHECK(call(router, "int", "[-2147483649]") ==
            R"x({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":0,"reason":"integer out of range (-2147483648 to 2147483647)"}}})x");
      CHECK(call(router, "int", "[18446744073709551615]") ==
            R"x({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":0,"reason":"integer out of range (-2147483648 to 2147483647)"}}})x");
    }
    SUBCASE("a fraction, an exponent or a non-number is not an integer") {
      CHECK(call(router, "int", "[42.0]") ==
            R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":0,"reason":"expected an integer"}}})");
      CHECK(call(router, "int", "[1.5]") ==
            R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":0,"reason":"expected an integer"}}})");
      CHECK(call(router, "int", "[1e2]") ==
            R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":0,"reason":"expected an integer"}}})");
      CHECK(call(router, "int", R"(["42"])") ==
            R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":0,"reason":"expected an integer"}}})");
      CHECK(call(router, "int", "[true]") ==
            R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":0,"reason":"expected an integer"}}})");
      CHECK(call(router, "int", "[null]") ==
            R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":0,"reason":"expected an integer"}}})");
    }
    SUBCASE("int64_t") {
      CHECK(call(router, "int64", "[9223372036854775807]") ==
            R"({"jsonrpc":"2.0","id":1,"result":9223372036854775807})");
      CHECK(call(router, "int64", "[-9223372036854775808]") ==
            R"({"jsonrpc":"2.0","id":1,"result":-9223372036854775808})");
      CHECK(call(router, "int64", "[9223372036854775808]") ==
            R"x({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":0,"reason":"integer out of range (-9223372036854775808 to 9223372036854775807)"}}})x");
      CHECK(call(router, "int64", "[-9223372036854775809]") ==
            R"x({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":0,"reason":"integer out of range (-9223372036854775808 to 9223372036854775807)"}}})x");
      CHECK(call(router, "int64", "[100000000000000000000000]") ==
            R"x({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":0,"reason":"integer out of range (-9223372036854775808 to 9223372036854775807)"}}})x");
    }
    SUBCASE("uint64_t") {
      CHECK(call(router, "uint64", "[18446744073709551615]") ==
            R"({"jsonrpc":"2.0","id":1,"result":18446744073709551615})");
      CHECK(call(router, "uint64", "[0]") == R"({"jsonrpc":"2.0","id":1,"result":0})");
      CHECK(call(router, "uint64", "[-1]") ==
            R"x({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":0,"reason":"integer out of range (0 to 18446744073709551615)"}}})x");
      CHECK(call(router, "uint64", "[18446744073709551616]") ==
            R"x({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":0,"reason":"integer out of range (0 to 18446744073709551615)"}}})x");
    }
    SUBCASE("unsigned") {
      CHECK(call(router, "unsigned", "[4294967295]") == R"({"jsonrpc":"2.0","id":1,"result":4294967295})");
      CHECK(call(router, "unsigned", "[4294967296]") ==
            R"x({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":0,"reason":"integer out of range (0 to 4294967295)"}}})x");
      CHECK(call(router, "unsigned", "[-1]") ==
            R"x({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":0,"reason":"integer out of range (0 to 4294967295)"}}})x");
      CHECK(call(router, "unsigned", "[1.0]") ==
            R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":0,"reason":"expected an integer"}}})");
    }
    SUBCASE("short") {
      CHECK(call(router, "short", "[32767]") == R"({"jsonrpc":"2.0","id":1,"result":32767})");
      CHECK(call(router, "short", "[-32768]") == R"({"jsonrpc":"2.0","id":1,"result":-32768})");
      CHECK(call(router, "short", "[32768]") ==
            R"x({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":0,"reason":"integer out of range (-32768 to 32767)"}}})x");
      CHECK(call(router, "short", "[-32769]") ==
            R"x({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":0,"reason":"integer out of range (-32768 to 32767)"}}})x");
    }
  }

#if defined(__SIZEOF_INT128__)
  // Where the compiler counts `__int128` as an integer type (GNU modes), it binds like the others;
  // its range is cut to the 64 bits a JSON integer is read into.
  TEST_CASE("an integer type wider than 64 bits reads every JSON integer that fits 64 bits") {
    __extension__ using Wide = __int128;
    __extension__ using UnsignedWide = unsigned __int128;
    constexpr Wide wide_min = -(Wide{1} << 126) * 2;
    constexpr Wide wide_max = ~wide_min;
    CHECK(rpc::detail::bound_within<Wide, std::int64_t>(wide_min) == INT64_MIN);
    CHECK(rpc::detail::bound_within<Wide, std::int64_t>(wide_max) == INT64_MAX);
    CHECK(rpc::detail::bound_within<UnsignedWide, std::uint64_t>(~UnsignedWide{0}) == UINT64_MAX);
    CHECK(rpc::detail::bound_within<std::int64_t, std::int64_t>(INT64_MIN) == INT64_MIN);
    CHECK(rpc::detail::bound_within<std::int8_t, std::int64_t>(-128) == -128);
    CHECK(rpc::detail::bound_within<std::uint16_t, std::uint64_t>(65535) == 65535);
    if constexpr (rpc::JsonReadable<Wide>) {
      rpc::Router router;
      router.add("wide", [](Wide w) { return static_cast<std::int64_t>(w); });
      CHECK(call(router, "wide", "[-9223372036854775808]") ==
            R"({"jsonrpc":"2.0","id":1,"result":-9223372036854775808})");
      CHECK(call(router, "wide", "[5]") == R"({"jsonrpc":"2.0","id":1,"result":5})");
      CHECK(call(router, "wide", "[9223372036854775808]") ==
            R"x({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":0,"reason":"integer out of range (-9223372036854775808 to 9223372036854775807)"}}})x");
    }
  }
#endif

  TEST_CASE("floating-point parameters take any JSON number") {
    rpc::Router router;
    router.add("double", [](double d) { return d + 0.5; });
    router.add("float", [](float f) { return f; });

    SUBCASE("double") {
      CHECK(call(router, "double", "[2]") == R"({"jsonrpc":"2.0","id":1,"result":2.5})");
      CHECK(call(router, "double", "[0.75]") == R"({"jsonrpc":"2.0","id":1,"result":1.25})");
      CHECK(call(router, "double", "[-1e1]") == R"({"jsonrpc":"2.0","id":1,"result":-9.5})");
      CHECK(call(router, "double", R"(["2"])") ==
            R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":0,"reason":"expected a number"}}})");
      CHECK(call(router, "double", "[null]") ==
            R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":0,"reason":"expected a number"}}})");
    }
    SUBCASE("float, written back in its shortest form") {
      CHECK(call(router, "float", "[0.1]") == R"({"jsonrpc":"2.0","id":1,"result":0.1})");
      CHECK(call(router, "float", "[-2.5]") == R"({"jsonrpc":"2.0","id":1,"result":-2.5})");
      CHECK(call(router, "float", "[1e39]") ==
            R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":0,"reason":"number out of range for float"}}})");
      CHECK(call(router, "float", "[false]") ==
            R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":0,"reason":"expected a number"}}})");
    }
  }

  TEST_CASE("string parameters receive the decoded text, NUL bytes included") {
    rpc::Router router;
    router.add("string/echo", [](std::string s) { return s; });
    router.add("string/size", [](const std::string& s) { return s.size(); });
    router.add("view/echo", [](std::string_view s) { return std::string(s); });
    router.add("view/size", [](std::string_view s) { return s.size(); });

    SUBCASE("std::string") {
      CHECK(call(router, "string/echo", R"(["hello"])") == R"({"jsonrpc":"2.0","id":1,"result":"hello"})");
      CHECK(call(router, "string/echo", R"([""])") == R"({"jsonrpc":"2.0","id":1,"result":""})");
      CHECK(call(router, "string/size", R"(["a\u0000b"])") == R"({"jsonrpc":"2.0","id":1,"result":3})");
      CHECK(call(router, "string/echo", R"(["a\u0000b"])") == R"({"jsonrpc":"2.0","id":1,"result":"a\u0000b"})");
      // Escapes are decoded on the way in and re-escaped on the way out ("/" needs none).
      CHECK(call(router, "string/size", R"(["\"\\\/\b\f\n\r\t\u0001\u00e9\ud83d\ude00"])") ==
            R"({"jsonrpc":"2.0","id":1,"result":15})");
      CHECK(call(router, "string/echo", R"(["\"\\\/\b\f\n\r\t\u0001\u00e9\ud83d\ude00"])") ==
            R"({"jsonrpc":"2.0","id":1,"result":"\"\\/\b\f\n\r\t\u0001é😀"})");
      CHECK(call(router, "string/echo", "[1]") ==
            R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":0,"reason":"expected a string"}}})");
      CHECK(call(router, "string/echo", "[null]") ==
            R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":0,"reason":"expected a string"}}})");
    }
    SUBCASE("std::string_view") {
      CHECK(call(router, "view/echo", R"(["hello"])") == R"({"jsonrpc":"2.0","id":1,"result":"hello"})");
      CHECK(call(router, "view/size", R"(["a\u0000b"])") == R"({"jsonrpc":"2.0","id":1,"result":3})");
      CHECK(call(router, "view/echo", R"(["a\u0000b"])") == R"({"jsonrpc":"2.0","id":1,"result":"a\u0000b"})");
      CHECK(call(router, "view/echo", R"(["tab\there \"quoted\""])") ==
            R"({"jsonrpc":"2.0","id":1,"result":"tab\there \"quoted\""})");
      CHECK(call(router, "view/echo", R"([["a"]])") ==
            R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":0,"reason":"expected a string"}}})");
    }
  }

  TEST_CASE("std::vector parameters take arrays and name the bad element") {
    rpc::Router router;
    router.add("sum", [](const std::vector<int>& v) {
      int total = 0;
      for (int i : v) total += i;
      return total;
    }, rpc::names("values"));
    router.add("sum/positional", [](std::vector<int> v) { return v.size(); });

    CHECK(call(router, "sum", "[[1,2,3]]") == R"({"jsonrpc":"2.0","id":1,"result":6})");
    CHECK(call(router, "sum", "[[]]") == R"({"jsonrpc":"2.0","id":1,"result":0})");
    CHECK(call(router, "sum", R"({"values":[4,5]})") == R"({"jsonrpc":"2.0","id":1,"result":9})");
    CHECK(call(router, "sum", R"([[1,"2",3]])") ==
          R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":"values","reason":"element 1: expected an integer"}}})");
    CHECK(call(router, "sum", "[[1,2.5]]") ==
          R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":"values","reason":"element 1: expected an integer"}}})");
    CHECK(call(router, "sum", "[1]") ==
          R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":"values","reason":"expected an array"}}})");
    CHECK(call(router, "sum/positional", R"([[0,0,"x"]])") ==
          R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":0,"reason":"element 2: expected an integer"}}})");
  }

  TEST_CASE("std::map parameters take objects and refuse a duplicate key") {
    rpc::Router router;
    router.add("keys", [](const std::map<std::string, int>& m) {
      std::string keys;
      for (const auto& [key, value] : m) keys += key + "=" + std::to_string(value) + ";";
      return keys;
    }, rpc::names("m"));

    CHECK(call(router, "keys", R"([{"b":2,"a":1}])") == R"({"jsonrpc":"2.0","id":1,"result":"a=1;b=2;"})");
    CHECK(call(router, "keys", R"({"m":{}})") == R"({"jsonrpc":"2.0","id":1,"result":""})");
    CHECK(call(router, "keys", R"([{"a":1,"a":2}])") ==
          R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":"m","reason":"duplicate member \"a\""}}})");
    CHECK(call(router, "keys", R"([{"a":1,"b":true}])") ==
          R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":"m","reason":"member \"b\": expected an integer"}}})");
    CHECK(call(router, "keys", "[[1]]") ==
          R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":"m","reason":"expected an object"}}})");
  }

  TEST_CASE("std::optional parameters may be absent (by position or by name) or null") {
    rpc::Router router;
    router.add("greet", [](const std::string& name, std::optional<std::string> title) {
      return (title ? *title + " " : std::string()) + name;
    }, rpc::names("name", "title"));
    router.add("opt", [](std::optional<int> a, std::optional<int> b) {
      return (a ? std::to_string(*a) : "-") + "," + (b ? std::to_string(*b) : "-");
    });

    CHECK(call(router, "greet", R"(["Ada","Dr"])") == R"({"jsonrpc":"2.0","id":1,"result":"Dr Ada"})");
    CHECK(call(router, "greet", R"(["Ada"])") == R"({"jsonrpc":"2.0","id":1,"result":"Ada"})");
    CHECK(call(router, "greet", R"({"name":"Ada"})") == R"({"jsonrpc":"2.0","id":1,"result":"Ada"})");
    CHECK(call(router, "greet", R"({"title":"Dr","name":"Ada"})") == R"({"jsonrpc":"2.0","id":1,"result":"Dr Ada"})");
    CHECK(call(router, "greet", R"(["Ada",null])") == R"({"jsonrpc":"2.0","id":1,"result":"Ada"})");
    CHECK(call(router, "greet", R"({"name":"Ada","title":null})") == R"({"jsonrpc":"2.0","id":1,"result":"Ada"})");
    CHECK(call(router, "greet", R"(["Ada",7])") ==
          R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":"title","reason":"expected a string"}}})");
    // Optional is optional; the required one still is required.
    CHECK(call(router, "greet", R"({"title":"Dr"})") ==
          R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":"name","reason":"missing required parameter"}}})");

    CHECK(call(router, "opt") == R"({"jsonrpc":"2.0","id":1,"result":"-,-"})");
    CHECK(call(router, "opt", "[]") == R"({"jsonrpc":"2.0","id":1,"result":"-,-"})");
    CHECK(call(router, "opt", "[null,2]") == R"({"jsonrpc":"2.0","id":1,"result":"-,2"})");
    CHECK(call(router, "opt", "[1]") == R"({"jsonrpc":"2.0","id":1,"result":"1,-"})");
  }

  TEST_CASE("const rpc::Value& takes any JSON value and is required") {
    rpc::Router router;
    router.add("echo", [](const rpc::Value& v) { return rpc::to_json(v); });
    router.add("kind", [](int n, const rpc::Value& v) {
      return std::to_string(n) + (v.IsObject() ? " object" : v.IsNull() ? " null" : " other");
    }, rpc::names("n", "v"));

    CHECK(call(router, "echo", R"([{"a":[1,-2,true,false,null,"x",{}]}])") ==
          R"({"jsonrpc":"2.0","id":1,"result":{"a":[1,-2,true,false,null,"x",{}]}})");
    CHECK(call(router, "echo", R"(["s"])") == R"({"jsonrpc":"2.0","id":1,"result":"s"})");
    CHECK(call(router, "echo", "[null]") == R"({"jsonrpc":"2.0","id":1,"result":null})");
    CHECK(call(router, "echo", "[]") ==
          R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":0,"reason":"missing required parameter"}}})");
    CHECK(call(router, "kind", R"({"v":{"k":1},"n":2})") == R"({"jsonrpc":"2.0","id":1,"result":"2 object"})");
    CHECK(call(router, "kind", R"([3,null])") == R"({"jsonrpc":"2.0","id":1,"result":"3 null"})");
    CHECK(call(router, "kind", R"({"n":2})") ==
          R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":"v","reason":"missing required parameter"}}})");
  }

  TEST_CASE("const rpc::Value* is an optional raw value: nullptr when absent") {
    rpc::Router router;
    router.add("extra", [](int n, const rpc::Value* extra) {
      return std::to_string(n) + ":" + (extra == nullptr ? std::string("absent") : std::string(rpc::to_json(*extra).text()));
    }, rpc::names("n", "extra"));

    CHECK(call(router, "extra", "[1]") == R"({"jsonrpc":"2.0","id":1,"result":"1:absent"})");
    CHECK(call(router, "extra", R"({"n":1})") == R"({"jsonrpc":"2.0","id":1,"result":"1:absent"})");
    CHECK(call(router, "extra", "[1,null]") == R"({"jsonrpc":"2.0","id":1,"result":"1:null"})");
    CHECK(call(router, "extra", R"({"extra":[1,"x"],"n":1})") ==
          R"({"jsonrpc":"2.0","id":1,"result":"1:[1,\"x\"]"})");
  }

  TEST_CASE("rpc::Json parameters receive the value as JSON text") {
    rpc::Router router;
    router.add("text", [](rpc::Json j) { return std::string(j.text()); });
    router.add("pass", [](const rpc::Json& j) { return j; }, rpc::names("j"));

    CHECK(call(router, "text", R"([{"a":[1,"x",null]}])") ==
          R"({"jsonrpc":"2.0","id":1,"result":"{\"a\":[1,\"x\",null]}"})");
    CHECK(call(router, "text", R"([ { "a" : true } ])") == R"({"jsonrpc":"2.0","id":1,"result":"{\"a\":true}"})");
    CHECK(call(router, "text", "[null]") == R"({"jsonrpc":"2.0","id":1,"result":"null"})");
    CHECK(call(router, "pass", R"({"j":{"b":[true,false]}})") ==
          R"({"jsonrpc":"2.0","id":1,"result":{"b":[true,false]}})");
    CHECK(call(router, "pass", "{}") ==
          R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":"j","reason":"missing required parameter"}}})");
  }

  TEST_CASE("an rpc::Params handler reads the raw params itself, whatever their shape") {
    rpc::Router router;
    router.add("shape", [](const rpc::Params& p) -> std::string {
      if (p.absent()) return "absent";
      if (p.is_array()) {
        const rpc::Value* second = p.at(1);
        return "array of " + std::to_string(p.size()) +
               (second != nullptr && second->IsInt() ? ", [1]=" + std::to_string(second->GetInt()) : "");
      }
      const rpc::Value* x = p.find("x");
      return "object of " + std::to_string(p.size()) + (x != nullptr ? ", has x" : ", no x");
    });
    router.add("method", [](rpc::Context& ctx, rpc::Params p) {
      return std::string(ctx.method()) + " " + std::to_string(p.size());
    });

    CHECK(call(router, "shape") == R"({"jsonrpc":"2.0","id":1,"result":"absent"})");
    CHECK(call(router, "shape", "[]") == R"({"jsonrpc":"2.0","id":1,"result":"array of 0"})");
    CHECK(call(router, "shape", R"([1,2,3,4,5,6,7,"x"])") == R"({"jsonrpc":"2.0","id":1,"result":"array of 8, [1]=2"})");
    CHECK(call(router, "shape", R"({"x":1,"y":2})") == R"({"jsonrpc":"2.0","id":1,"result":"object of 2, has x"})");
    CHECK(call(router, "shape", R"({"y":2})") == R"({"jsonrpc":"2.0","id":1,"result":"object of 1, no x"})");
    CHECK(call(router, "method", R"({"a":1,"b":2})") == R"({"jsonrpc":"2.0","id":1,"result":"method 2"})");
  }

  TEST_CASE("rpc::Context& is injected at any position and takes no param") {
    rpc::Router router;
    router.add("ctx/first", [](rpc::Context& ctx, int a) { return std::string(ctx.method()) + " " + std::to_string(a); });
    router.add("ctx/middle", [](int a, rpc::Context& ctx, int b) {
      return std::to_string(a) + " " + std::string(ctx.method()) + " " + std::to_string(b);
    }, rpc::names("a", "b"));
    router.add("ctx/last", [](int a, const rpc::Context& ctx) { return std::string(ctx.method()) + " " + std::to_string(a); });
    router.add("ctx/id", [](rpc::Context& ctx) {
      return std::string(kind_name(ctx.id().kind)) + " [" + std::string(ctx.id().text) + "]" +
             (ctx.is_notification() ? " notification" : "");
    });

    SUBCASE("position") {
      CHECK(call(router, "ctx/first", "[1]") == R"({"jsonrpc":"2.0","id":1,"result":"ctx/first 1"})");
      CHECK(call(router, "ctx/middle", "[1,2]") == R"({"jsonrpc":"2.0","id":1,"result":"1 ctx/middle 2"})");
      CHECK(call(router, "ctx/middle", R"({"b":2,"a":1})") == R"({"jsonrpc":"2.0","id":1,"result":"1 ctx/middle 2"})");
      CHECK(call(router, "ctx/last", "[3]") == R"({"jsonrpc":"2.0","id":1,"result":"ctx/last 3"})");
      // The context takes no param: indexes count bound parameters only.
      CHECK(call(router, "ctx/first", "[1,2]") ==
            R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"reason":"too many params: expected at most 1, got 2"}}})");
      CHECK(call(router, "ctx/first", R"(["x"])") ==
            R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":0,"reason":"expected an integer"}}})");
      CHECK(call(router, "ctx/middle", R"([1,"x"])") ==
            R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":"b","reason":"expected an integer"}}})");
      CHECK(call(router, "ctx/id", "[]") == R"({"jsonrpc":"2.0","id":1,"result":"number [1]"})");
    }
    SUBCASE("id") {
      CHECK(call(router, "ctx/id", {}, "7") == R"({"jsonrpc":"2.0","id":7,"result":"number [7]"})");
      CHECK(call(router, "ctx/id", {}, "1.50") == R"({"jsonrpc":"2.0","id":1.50,"result":"number [1.50]"})");
      CHECK(call(router, "ctx/id", {}, "-0") == R"({"jsonrpc":"2.0","id":-0,"result":"number [-0]"})");
      CHECK(call(router, "ctx/id", {}, R"("abc")") == R"({"jsonrpc":"2.0","id":"abc","result":"string [abc]"})");
      CHECK(call(router, "ctx/id", {}, R"("a\"b\u00e9")") ==
            R"({"jsonrpc":"2.0","id":"a\"bé","result":"string [a\"bé]"})");
      CHECK(call(router, "ctx/id", {}, "null") == R"({"jsonrpc":"2.0","id":null,"result":"null []"})");
    }
    SUBCASE("notification") {
      std::string seen;
      rpc::Router notified;
      notified.add("note", [&seen](rpc::Context& ctx, int n) {
        seen = std::string(ctx.method()) + " " + kind_name(ctx.id().kind) + " [" + std::string(ctx.id().text) + "] " +
               (ctx.is_notification() ? "notification" : "request") + " " + std::to_string(n);
      });
      CHECK(!notified.handle(R"({"jsonrpc":"2.0","method":"note","params":[5]})"));
      CHECK(seen == "note none [] notification 5");
    }
  }

  TEST_CASE("rpc::ResultWriter& handlers write their result themselves") {
    rpc::Router router;
    router.add("range", [](int n, rpc::ResultWriter& out) {
      out.start_array();
      for (int i = 0; i < n; ++i) out.integer(i);
      out.end_array();
    }, rpc::names("n"));
    router.add("labelled", [](rpc::Context& ctx, rpc::ResultWriter& out, const std::string& label) {
      out.start_object();
      out.key("method");
      out.string(ctx.method());
      out.key(label);
      out.write(std::vector<std::string>{"a", "b"});
      out.end_object();
    });

    CHECK(call(router, "range", "[3]") == R"({"jsonrpc":"2.0","id":1,"result":[0,1,2]})");
    CHECK(call(router, "range", R"({"n":0})") == R"({"jsonrpc":"2.0","id":1,"result":[]})");
    CHECK(call(router, "range", R"({"n":"3"})") ==
          R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":"n","reason":"expected an integer"}}})");
    CHECK(call(router, "labelled", R"(["items"])") ==
          R"({"jsonrpc":"2.0","id":1,"result":{"method":"labelled","items":["a","b"]}})");
  }

  TEST_CASE("a handler with names takes the same params by position or by name") {
    rpc::Router router;
    router.add("subtract", [](int minuend, int subtrahend) { return minuend - subtrahend; },
               rpc::names("minuend", "subtrahend"));

    CHECK(call(router, "subtract", "[42,23]") == R"({"jsonrpc":"2.0","id":1,"result":19})");
    CHECK(call(router, "subtract", "[23,42]") == R"({"jsonrpc":"2.0","id":1,"result":-19})");
    CHECK(call(router, "subtract", R"({"minuend":42,"subtrahend":23})") == R"({"jsonrpc":"2.0","id":1,"result":19})");
    CHECK(call(router, "subtract", R"({"subtrahend":23,"minuend":42})") == R"({"jsonrpc":"2.0","id":1,"result":19})");
  }

  TEST_CASE("params that do not fit are -32602 with data naming the param and the reason") {
    rpc::Router router;
    router.add("named", [](int a, const std::string& b) { return b + std::to_string(a); }, rpc::names("a", "b"));
    router.add("positional", [](int a, const std::string& b) { return b + std::to_string(a); });
    router.add("none", [] { return 0; });

    SUBCASE("too many positional params") {
      CHECK(call(router, "named", R"([1,"x",3])") ==
            R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"reason":"too many params: expected at most 2, got 3"}}})");
      CHECK(call(router, "positional", R"([1,"x",3,4])") ==
            R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"reason":"too many params: expected at most 2, got 4"}}})");
    }
    SUBCASE("a missing required param, by name when the handler has names, else by index") {
      CHECK(call(router, "named", "[1]") ==
            R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":"b","reason":"missing required parameter"}}})");
      CHECK(call(router, "named", R"({"b":"x"})") ==
            R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":"a","reason":"missing required parameter"}}})");
      CHECK(call(router, "named") ==
            R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":"a","reason":"missing required parameter"}}})");
      CHECK(call(router, "positional", "[1]") ==
            R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":1,"reason":"missing required parameter"}}})");
      CHECK(call(router, "positional") ==
            R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":0,"reason":"missing required parameter"}}})");
    }
    SUBCASE("a param of the wrong type") {
      CHECK(call(router, "named", R"({"a":"1","b":"x"})") ==
            R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":"a","reason":"expected an integer"}}})");
      CHECK(call(router, "named", "[1,2]") ==
            R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":"b","reason":"expected a string"}}})");
      CHECK(call(router, "positional", "[1,2]") ==
            R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":1,"reason":"expected a string"}}})");
    }
    SUBCASE("an unknown named param") {
      CHECK(call(router, "named", R"({"a":1,"b":"x","c":3})") ==
            R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":"c","reason":"unknown parameter"}}})");
    }
    SUBCASE("a named param given twice") {
      CHECK(call(router, "named", R"({"a":1,"a":2,"b":"x"})") ==
            R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":"a","reason":"duplicate parameter"}}})");
    }
    SUBCASE("named params for a handler registered without names") {
      CHECK(call(router, "positional", R"({"a":1,"b":"x"})") ==
            R"x({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"reason":"this method takes its params by position (an array)"}}})x");
      CHECK(call(router, "positional", R"({"_meta":{},"a":1})") ==
            R"x({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"reason":"this method takes its params by position (an array)"}}})x");
    }
    SUBCASE("an object of protocol metadata alone binds no parameter") {
      // MCP clients may send params {"_meta": {...}} to any method.
      CHECK(call(router, "positional", R"({"_meta":{"progressToken":1}})") ==
            R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":0,"reason":"missing required parameter"}}})");
      CHECK(call(router, "none", R"({"_meta":{}})") == R"({"jsonrpc":"2.0","id":1,"result":0})");
    }
    SUBCASE("params for a handler that takes none") {
      CHECK(call(router, "none") == R"({"jsonrpc":"2.0","id":1,"result":0})");
      CHECK(call(router, "none", "[]") == R"({"jsonrpc":"2.0","id":1,"result":0})");
      CHECK(call(router, "none", "{}") == R"({"jsonrpc":"2.0","id":1,"result":0})");
      CHECK(call(router, "none", "[1]") ==
            R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"reason":"too many params: expected at most 0, got 1"}}})");
      CHECK(call(router, "none", R"({"x":1})") ==
            R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":"x","reason":"unknown parameter"}}})");
    }
    SUBCASE("invalid params of a notification are not answered") {
      CHECK(!router.handle(R"({"jsonrpc":"2.0","method":"named","params":[1,2,3]})"));
    }
  }

  TEST_CASE("a handler's return value is written as the result") {
    rpc::Router router;
    int void_calls = 0;
    router.add("void", [&void_calls] { ++void_calls; });
    router.add("bool", [] { return true; });
    router.add("int", [] { return -7; });
    router.add("double", [] { return 1.0 / 3; });
    router.add("float", [] { return 0.1f; });
    router.add("string", [] { return std::string("caf\xc3\xa9 \"x\""); });
    router.add("const char*", []() -> const char* { return "text"; });
    router.add("null const char*", []() -> const char* { return nullptr; });
    router.add("strings", [] { return std::vector<std::string>{"a", "b"}; });
    router.add("empty strings", [] { return std::vector<std::string>{}; });
    router.add("map", [] { return std::map<std::string, int>{{"b", 2}, {"a", 1}}; });
    router.add("optional empty", [] { return std::optional<int>{}; });
    router.add("optional full", [] { return std::optional<int>{5}; });
    router.add("json", [] { return rpc::json(R"({"a": [1, 2.50]})"); });
    router.add("empty json", [] { return rpc::Json{}; });

    CHECK(call(router, "void") == R"({"jsonrpc":"2.0","id":1,"result":null})");
    CHECK(void_calls == 1);
    CHECK(call(router, "bool") == R"({"jsonrpc":"2.0","id":1,"result":true})");
    CHECK(call(router, "int") == R"({"jsonrpc":"2.0","id":1,"result":-7})");
    CHECK(call(router, "double") == R"({"jsonrpc":"2.0","id":1,"result":0.3333333333333333})");
    CHECK(call(router, "float") == R"({"jsonrpc":"2.0","id":1,"result":0.1})");
    CHECK(call(router, "string") == R"({"jsonrpc":"2.0","id":1,"result":"café \"x\""})");
    CHECK(call(router, "const char*") == R"({"jsonrpc":"2.0","id":1,"result":"text"})");
    CHECK(call(router, "null const char*") == R"({"jsonrpc":"2.0","id":1,"result":null})");
    CHECK(call(router, "strings") == R"({"jsonrpc":"2.0","id":1,"result":["a","b"]})");
    CHECK(call(router, "empty strings") == R"({"jsonrpc":"2.0","id":1,"result":[]})");
    CHECK(call(router, "map") == R"({"jsonrpc":"2.0","id":1,"result":{"a":1,"b":2}})");
    CHECK(call(router, "optional empty") == R"({"jsonrpc":"2.0","id":1,"result":null})");
    CHECK(call(router, "optional full") == R"({"jsonrpc":"2.0","id":1,"result":5})");
    CHECK(call(router, "json") == R"({"jsonrpc":"2.0","id":1,"result":{"a": [1, 2.50]}})");
    CHECK(call(router, "empty json") == R"({"jsonrpc":"2.0","id":1,"result":null})");
  }

  TEST_CASE("rpc::Error thrown by a handler is the error object, code, message and data as given") {
    rpc::RouterOptions options;
    int hook_calls = 0;
    options.on_exception = [&hook_calls](std::string_view, std::exception_ptr) { ++hook_calls; };
    rpc::Router router(std::move(options));
    router.add("quota", []() -> int { throw rpc::Error(-32001, "Quota exceeded", rpc::json(R"({"retryAfter": 30})")); });
    router.add("plain", []() -> int { throw rpc::Error(42, "no data"); });
    router.add("code", [](int n) -> int {
      if (n <= 0) throw rpc::Error(rpc::ErrorCode::invalid_params, "n must be positive");
      return n;
    });
    router.add("code only", [] { throw rpc::Error(rpc::ErrorCode::request_cancelled); });
    router.add("code and data", [] { throw rpc::Error(rpc::ErrorCode::internal_error, rpc::json("[1,2]")); });

    CHECK(call(router, "quota") ==
          R"({"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"Quota exceeded","data":{"retryAfter": 30}}})");
    CHECK(call(router, "plain") == R"({"jsonrpc":"2.0","id":1,"error":{"code":42,"message":"no data"}})");
    CHECK(call(router, "code", "[0]") ==
          R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"n must be positive"}})");
    CHECK(call(router, "code", "[3]") == R"({"jsonrpc":"2.0","id":1,"result":3})");
    CHECK(call(router, "code only") == R"({"jsonrpc":"2.0","id":1,"error":{"code":-32800,"message":"Request cancelled"}})");
    CHECK(call(router, "code and data") ==
          R"({"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error","data":[1,2]}})");
    CHECK(!router.handle(R"({"jsonrpc":"2.0","method":"quota"})"));
    CHECK(hook_calls == 0);  // rpc::Error is an answer, not an unexpected exception
  }

  TEST_CASE("batchrpc's own codes are -32090..-32095, each with its standard message") {
    using rpc::ErrorCode;
    static_assert(static_cast<int>(ErrorCode::message_too_large) == -32090);
    static_assert(static_cast<int>(ErrorCode::nesting_too_deep) == -32091);
    static_assert(static_cast<int>(ErrorCode::response_too_large) == -32092);
    static_assert(static_cast<int>(ErrorCode::overloaded) == -32093);
    static_assert(static_cast<int>(ErrorCode::client_unavailable) == -32094);
    static_assert(static_cast<int>(ErrorCode::client_timeout) == -32095);
    static_assert(rpc::default_message(ErrorCode::client_unavailable) == "Client unavailable");
    static_assert(rpc::default_message(ErrorCode::client_timeout) == "Client timeout");
    const rpc::Error timeout(ErrorCode::client_timeout);
    CHECK(timeout.code() == -32095);
    CHECK(timeout.message() == "Client timeout");
    const rpc::Error unavailable(ErrorCode::client_unavailable);
    CHECK(unavailable.code() == -32094);
    CHECK(unavailable.message() == "Client unavailable");
  }

  TEST_CASE("other exceptions are -32603 with their text hidden unless exposed, the hook sees each once") {
    SUBCASE("hidden by default") {
      rpc::Router router;
      router.add("fail", []() -> int { throw std::runtime_error("secret detail"); });
      router.add("throw int", []() -> int { throw 42; });
      CHECK(call(router, "fail") == R"({"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error"}})");
      CHECK(call(router, "throw int") == R"({"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error"}})");
    }
    SUBCASE("exposed on request, and the hook is called once with the method name") {
      std::vector<std::string> seen;
      rpc::Router router(rpc::RouterOptions{
          .expose_exception_text = true,
          .on_exception = [&seen](std::string_view method, std::exception_ptr error) {
            try {
              std::rethrow_exception(error);
            } catch (const std::exception& e) {
              seen.push_back(std::string(method) + ": " + e.what());
            }
          }});
      router.add("fail", []() -> int { throw std::runtime_error("disk \"full\""); });
      CHECK(call(router, "fail") ==
            R"({"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error","data":{"exception":"disk \"full\""}}})");
      CHECK(seen == std::vector<std::string>{"fail: disk \"full\""});
    }
  }

  TEST_CASE("registration refuses reserved, empty and duplicate names with std::invalid_argument") {
    rpc::Router router;
    router.add("taken", [] { return 1; });

    CHECK_THROWS_AS(router.add("rpc.foo", [] {}), std::invalid_argument);
    CHECK_THROWS_AS(router.add("rpc.", [] {}), std::invalid_argument);
    CHECK_THROWS_AS(router.add("", [] {}), std::invalid_argument);
    CHECK_THROWS_AS(router.add("taken", [] { return 2; }), std::invalid_argument);
    CHECK_THROWS_AS(router.add("pair", [](int, int) {}, rpc::names("a", "a")), std::invalid_argument);
    CHECK_THROWS_AS(router.add("pair", [](int, int) {}, rpc::names("a", "")), std::invalid_argument);

    CHECK_FALSE(router.contains("rpc.foo"));
    CHECK_FALSE(router.contains("pair"));
    // Only the exact "rpc." prefix is reserved.
    CHECK_NOTHROW(router.add("rpcx", [] {}));
    CHECK_NOTHROW(router.add("x.rpc.y", [] {}));
    // The first registration stands.
    CHECK(call(router, "taken") == R"({"jsonrpc":"2.0","id":1,"result":1})");
  }

  TEST_CASE("a custom type binds and returns through its rpc::JsonTraits specialisation") {
    rpc::Router router;
    router.add("mirror", [](Point p) { return Point{-p.x, -p.y}; }, rpc::names("p"));
    router.add("sum", [](const std::vector<Point>& points) {
      Point total;
      for (const Point& p : points) total = Point{total.x + p.x, total.y + p.y};
      return total;
    });
    router.add("maybe", [](std::optional<Point> p) { return p; });

    CHECK(call(router, "mirror", R"([{"x":1,"y":-2}])") == R"({"jsonrpc":"2.0","id":1,"result":{"x":-1,"y":2}})");
    CHECK(call(router, "mirror", R"({"p":{"y":4,"x":3}})") == R"({"jsonrpc":"2.0","id":1,"result":{"x":-3,"y":-4}})");
    CHECK(call(router, "mirror", R"([{"x":1}])") ==
          R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":"p","reason":"expected a point {x, y}"}}})");
    CHECK(call(router, "sum", R"([[{"x":1,"y":2},{"x":10,"y":20}]])") ==
          R"({"jsonrpc":"2.0","id":1,"result":{"x":11,"y":22}})");
    CHECK(call(router, "sum", R"([[{"x":1,"y":2},[]]])") ==
          R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":0,"reason":"element 1: expected a point {x, y}"}}})");
    CHECK(call(router, "maybe", "[null]") == R"({"jsonrpc":"2.0","id":1,"result":null})");
    CHECK(call(router, "maybe", R"([{"x":0,"y":0}])") == R"({"jsonrpc":"2.0","id":1,"result":{"x":0,"y":0}})");
  }

  TEST_CASE("free functions, function pointers and function objects are handlers too") {
    rpc::Router router;
    router.add("twice", twice, rpc::names("n"));
    router.add("twice/pointer", &twice);
    router.add("add", Adder{100});

    CHECK(call(router, "twice", R"({"n":21})") == R"({"jsonrpc":"2.0","id":1,"result":42})");
    CHECK(call(router, "twice/pointer", "[4]") == R"({"jsonrpc":"2.0","id":1,"result":8})");
    CHECK(call(router, "add", "[1]") == R"({"jsonrpc":"2.0","id":1,"result":101})");
  }

  TEST_CASE("member functions are handlers, their object by reference or by pointer") {
    struct Calc {
      int offset = 0;
      [[nodiscard]] int add(int a, int b) const { return a + b + offset; }
      int bump(int step) noexcept { return offset += step; }
      void reset(rpc::Context& ctx) { offset = static_cast<int>(ctx.method().size()); }
    };
    Calc calc{10};
    rpc::Router router;
    router.add("add", &Calc::add, calc);
    router.add("add/named", &Calc::add, &calc, rpc::names("a", "b"));
    router.add("bump", &Calc::bump, &calc, {.capability = "admin"});
    router.add("reset", &Calc::reset, calc);
    const Calc& fixed = calc;
    router.add("add/const", &Calc::add, fixed);

    CHECK(call(router, "add", "[1,2]") == R"({"jsonrpc":"2.0","id":1,"result":13})");
    CHECK(call(router, "add/named", R"({"b":2,"a":1})") == R"({"jsonrpc":"2.0","id":1,"result":13})");
    CHECK(call(router, "add", R"([1,"2"])") ==
          R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":1,"reason":"expected an integer"}}})");
    CHECK(router.options_of("bump")->capability == "admin");
    CHECK(call(router, "bump", "[5]") == R"({"jsonrpc":"2.0","id":1,"result":15})");
    CHECK(calc.offset == 15);  // the router calls the object it was given, not a copy
    CHECK(call(router, "reset", "[]") == R"({"jsonrpc":"2.0","id":1,"result":null})");
    CHECK(calc.offset == 5);
    CHECK(call(router, "add/const", "[0,0]") == R"({"jsonrpc":"2.0","id":1,"result":5})");

    Calc* none = nullptr;
    CHECK_THROWS_WITH_AS(router.add("none", &Calc::add, none),
                         "batchrpc: a member function's object is null", std::invalid_argument);
    CHECK_FALSE(router.contains("none"));
  }
}

TEST_CASE("an rpc::Error message keeps its NUL bytes") {
  rpc::Router router;
  router.add("nul", []() -> int { throw rpc::Error(-32001, std::string("a\0b", 3)); });
  CHECK(rpc::Error(1, std::string("a\0b", 3)).message() == std::string_view("a\0b", 3));
  CHECK(router.handle(R"({"jsonrpc":"2.0","method":"nul","id":1})") ==
        std::optional<std::string>(R"({"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"a\u0000b"}})"));
}
