// SPDX-License-Identifier: MIT
// ResultWriter: exact text of every value, misuse refused, raw handlers' replies, rpc::json/to_json.
#include <batchrpc/result_writer.hpp>

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

namespace {

// What `write` puts into a fresh buffer through a fresh writer.
template <class F>
std::string written(F&& write) {
  rpc::Buffer buffer;
  rpc::ResultWriter writer(buffer);
  write(writer);
  return buffer.str();
}

// The reply to `message`, or "<no reply>" when nothing is to be sent (never dereferences nullopt).
std::string reply(const rpc::Router& router, std::string_view message) {
  const std::optional<std::string> text = router.handle(message);
  return text ? *text : std::string("<no reply>");
}

// The reply to {"jsonrpc":"2.0","method":<method>,"id":1}.
std::string call(const rpc::Router& router, std::string_view method) {
  return reply(router, R"({"jsonrpc":"2.0","method":")" + std::string(method) + R"(","id":1})");
}

constexpr double not_a_number = std::numeric_limits<double>::quiet_NaN();
constexpr double infinity = std::numeric_limits<double>::infinity();

}  // namespace

TEST_SUITE("result_writer") {
  TEST_CASE("each kind of value is written as its exact JSON text") {
    SUBCASE("null and booleans") {
      CHECK(written([](rpc::ResultWriter& w) { w.null(); }) == "null");
      CHECK(written([](rpc::ResultWriter& w) { w.boolean(true); }) == "true");
      CHECK(written([](rpc::ResultWriter& w) { w.boolean(false); }) == "false");
    }
    SUBCASE("integers") {
      CHECK(written([](rpc::ResultWriter& w) { w.integer(0); }) == "0");
      CHECK(written([](rpc::ResultWriter& w) { w.integer(-42); }) == "-42");
      CHECK(written([](rpc::ResultWriter& w) { w.integer(std::numeric_limits<std::int64_t>::min()); }) ==
            "-9223372036854775808");
      CHECK(written([](rpc::ResultWriter& w) { w.integer(std::numeric_limits<std::int64_t>::max()); }) ==
            "9223372036854775807");
      CHECK(written([](rpc::ResultWriter& w) { w.unsigned_integer(std::numeric_limits<std::uint64_t>::max()); }) ==
            "18446744073709551615");
    }
    SUBCASE("floating-point numbers in shortest round-trip form") {
      CHECK(written([](rpc::ResultWriter& w) { w.number(0.1); }) == "0.1");
      CHECK(written([](rpc::ResultWriter& w) { w.number(-2.5); }) == "-2.5");
      CHECK(written([](rpc::ResultWriter& w) { w.number(1.0 / 3); }) == "0.3333333333333333");
      CHECK(written([](rpc::ResultWriter& w) { w.number(1e300); }) == "1e300");
      CHECK(written([](rpc::ResultWriter& w) { w.number(-1e-300); }) == "-1e-300");
      CHECK(written([](rpc::ResultWriter& w) { w.number(1.5e-7); }) == "1.5e-7");
      CHECK(written([](rpc::ResultWriter& w) { w.number(5e-324); }) == "5e-324");
      CHECK(written([](rpc::ResultWriter& w) { w.number(1.7976931348623157e308); }) == "1.7976931348623157e308");
      CHECK(written([](rpc::ResultWriter& w) { w.number(42.0); }) == "42");
      CHECK(written([](rpc::ResultWriter& w) { w.number(-0.0); }) == "-0");
      CHECK(written([](rpc::ResultWriter& w) { w.number(0.1 + 0.2); }) == "0.30000000000000004");
      CHECK(written([](rpc::ResultWriter& w) { w.number(1e21); }) == "1e21");
      CHECK(written([](rpc::ResultWriter& w) { w.number(123456789012.0); }) == "123456789012");
    }
    SUBCASE("strings are escaped, UTF-8 passes through, NUL bytes survive") {
      CHECK(written([](rpc::ResultWriter& w) { w.string("plain"); }) == R"("plain")");
      CHECK(written([](rpc::ResultWriter& w) { w.string(""); }) == R"("")");
      CHECK(written([](rpc::ResultWriter& w) { w.string("q\"b\\s/\b\f\n\r\t\x01"); }) ==
            R"("q\"b\\s/\b\f\n\r\t\u0001")");
      CHECK(written([](rpc::ResultWriter& w) { w.string(std::string_view("a\0b", 3)); }) == R"("a\u0000b")");
      CHECK(written([](rpc::ResultWriter& w) { w.string("caf\xc3\xa9 \xf0\x9f\x98\x80"); }) == "\"caf\xc3\xa9 \xf0\x9f\x98\x80\"");
    }
    SUBCASE("raw numbers are written as given") {
      CHECK(written([](rpc::ResultWriter& w) { w.raw_number("1.50"); }) == "1.50");
      CHECK(written([](rpc::ResultWriter& w) { w.raw_number("-0"); }) == "-0");
      CHECK(written([](rpc::ResultWriter& w) {
              w.start_array();
              w.raw_number("1e400");
              w.raw_number("18446744073709551616");
              w.end_array();
            }) == "[1e400,18446744073709551616]");
    }
    SUBCASE("raw(rpc::Json) writes the text verbatim, an empty Json as null") {
      CHECK(written([](rpc::ResultWriter& w) { w.raw(rpc::json(R"( {"a" : [1, 2.50]} )")); }) ==
            R"( {"a" : [1, 2.50]} )");
      CHECK(written([](rpc::ResultWriter& w) { w.raw(rpc::Json{}); }) == "null");
      CHECK(written([](rpc::ResultWriter& w) {
              w.start_object();
              w.key("raw");
              w.raw(rpc::json("[true]"));
              w.key("none");
              w.raw(rpc::Json{});
              w.end_object();
            }) == R"({"raw":[true],"none":null})");
    }
  }

  TEST_CASE("objects and arrays nest, with commas and colons where they belong") {
    CHECK(written([](rpc::ResultWriter& w) { w.start_array(); w.end_array(); }) == "[]");
    CHECK(written([](rpc::ResultWriter& w) { w.start_object(); w.end_object(); }) == "{}");
    CHECK(written([](rpc::ResultWriter& w) {
            w.start_object();
            w.key("a");
            w.integer(1);
            w.key("b");
            w.start_array();
            w.null();
            w.boolean(false);
            w.start_object();
            w.key("");
            w.start_array();
            w.end_array();
            w.end_object();
            w.start_array();
            w.string("x");
            w.end_array();
            w.end_array();
            w.key("k\"ey");
            w.start_object();
            w.end_object();
            w.end_object();
          }) == R"({"a":1,"b":[null,false,{"":[]},["x"]],"k\"ey":{}})");
  }

  TEST_CASE("write() writes any type with rpc::JsonTraits") {
    CHECK(written([](rpc::ResultWriter& w) { w.write(true); }) == "true");
    CHECK(written([](rpc::ResultWriter& w) { w.write(short{-3}); }) == "-3");
    CHECK(written([](rpc::ResultWriter& w) { w.write(7u); }) == "7");
    CHECK(written([](rpc::ResultWriter& w) { w.write(0.1f); }) == "0.1");
    CHECK(written([](rpc::ResultWriter& w) { w.write(std::string("s")); }) == R"("s")");
    CHECK(written([](rpc::ResultWriter& w) { w.write(std::string_view("v")); }) == R"("v")");
    CHECK(written([](rpc::ResultWriter& w) { w.write(nullptr); }) == "null");
    CHECK(written([](rpc::ResultWriter& w) { w.write(std::optional<int>{}); }) == "null");
    CHECK(written([](rpc::ResultWriter& w) {
            w.write(std::map<std::string, std::vector<std::optional<int>>>{{"b", {1, std::nullopt}}, {"a", {}}});
          }) == R"({"a":[],"b":[1,null]})");
    CHECK(written([](rpc::ResultWriter& w) { w.write(rpc::json(R"({"x": 1})")); }) == R"({"x": 1})");
  }

  TEST_CASE("misuse throws std::logic_error and the refused call writes nothing") {
    rpc::Buffer buffer;
    rpc::ResultWriter w(buffer);

    SUBCASE("a key outside an object") {
      CHECK_THROWS_AS(w.key("a"), std::logic_error);
      CHECK(buffer.str() == "");
      CHECK(w.empty());
      w.start_array();
      CHECK_THROWS_AS(w.key("a"), std::logic_error);
      CHECK(buffer.str() == "[");
    }
    SUBCASE("a key where the member's value is due") {
      w.start_object();
      w.key("a");
      CHECK_THROWS_AS(w.key("b"), std::logic_error);
      CHECK(buffer.str() == R"({"a")");  // the ':' comes with the value
    }
    SUBCASE("a value without a key in an object") {
      w.start_object();
      CHECK_THROWS_AS(w.integer(1), std::logic_error);
      CHECK_THROWS_AS(w.string("a"), std::logic_error);
      CHECK_THROWS_AS(w.null(), std::logic_error);
      CHECK_THROWS_AS(w.raw(rpc::json("1")), std::logic_error);
      CHECK_THROWS_AS(w.raw(rpc::Json{}), std::logic_error);
      CHECK_THROWS_AS(w.start_array(), std::logic_error);
      CHECK(buffer.str() == "{");
      w.key("a");
      w.integer(1);
      CHECK_THROWS_AS(w.boolean(true), std::logic_error);
      CHECK(buffer.str() == R"({"a":1)");
    }
    SUBCASE("a second top-level value") {
      w.integer(1);
      CHECK_THROWS_AS(w.integer(2), std::logic_error);
      CHECK_THROWS_AS(w.start_array(), std::logic_error);
      CHECK_THROWS_AS(w.raw_number("3"), std::logic_error);
      CHECK(buffer.str() == "1");
      CHECK(w.complete());
    }
    SUBCASE("a second top-level value after a container") {
      w.start_array();
      w.end_array();
      CHECK_THROWS_AS(w.start_object(), std::logic_error);
      CHECK(buffer.str() == "[]");
    }
    SUBCASE("end_array on an object, or with nothing open") {
      CHECK_THROWS_AS(w.end_array(), std::logic_error);
      w.start_object();
      CHECK_THROWS_AS(w.end_array(), std::logic_error);
      CHECK(buffer.str() == "{");
    }
    SUBCASE("end_object on an array, with nothing open, or with a member's value due") {
      CHECK_THROWS_AS(w.end_object(), std::logic_error);
      w.start_array();
      CHECK_THROWS_AS(w.end_object(), std::logic_error);
      w.start_object();
      w.key("a");
      CHECK_THROWS_AS(w.end_object(), std::logic_error);
      CHECK(buffer.str() == R"([{"a")");
    }
    SUBCASE("NaN and infinity") {
      CHECK_THROWS_AS(w.number(not_a_number), std::logic_error);
      CHECK(buffer.str().empty());
      CHECK(w.empty());
      CHECK_FALSE(w.complete());
      w.number(1.5);
      CHECK(buffer.str() == "1.5");
    }
    SUBCASE("infinity inside an array") {
      w.start_array();
      CHECK_THROWS_AS(w.number(infinity), std::logic_error);
      CHECK_THROWS_AS(w.number(-infinity), std::logic_error);
      CHECK(buffer.str() == "[");
      w.integer(1);
      CHECK_THROWS_AS(w.number(infinity), std::logic_error);
      w.integer(2);
      w.end_array();
      CHECK(buffer.str() == "[1,2]");
    }
    SUBCASE("a float NaN through write()") {
      CHECK_THROWS_AS(w.write(std::numeric_limits<float>::quiet_NaN()), std::logic_error);
    }
    SUBCASE("invalid UTF-8 in a string or a key") {
      w.start_object();
      CHECK_THROWS_AS(w.key("\xff"), std::logic_error);
      CHECK(buffer.str() == "{");
      w.key("b");
      CHECK_THROWS_AS(w.string("ab\xff"), std::logic_error);
      w.string("ok");
      w.end_object();
      CHECK(buffer.str() == R"({"b":"ok"})");
    }
    SUBCASE("invalid UTF-8 strings of every kind") {
      for (const char* bad : {"\xff", "ab\xff", "\xc3", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80"}) {
        rpc::Buffer b;
        rpc::ResultWriter fresh(b);
        CAPTURE(std::string_view(bad));
        CHECK_THROWS_AS(fresh.string(bad), std::logic_error);
      }
    }
  }

  TEST_CASE("empty() and complete() say whether nothing, part or all of one value is written") {
    rpc::Buffer buffer;
    rpc::ResultWriter w(buffer);
    CHECK(w.empty());
    CHECK_FALSE(w.complete());

    SUBCASE("a scalar is complete at once") {
      w.string("x");
      CHECK_FALSE(w.empty());
      CHECK(w.complete());
    }
    SUBCASE("a container is complete when closed") {
      w.start_object();
      CHECK_FALSE(w.empty());
      CHECK_FALSE(w.complete());
      w.key("a");
      CHECK_FALSE(w.complete());
      w.start_array();
      w.integer(1);
      CHECK_FALSE(w.complete());
      w.end_array();
      CHECK_FALSE(w.complete());
      w.end_object();
      CHECK(w.complete());
      CHECK_FALSE(w.empty());
      CHECK(buffer.str() == R"({"a":[1]})");
    }
  }

  TEST_CASE("a raw handler's writer misuse answers -32603 with no partial output") {
    rpc::Router router;
    router.add("key outside", [](rpc::ResultWriter& out) {
      out.start_array();
      out.integer(1);
      out.key("oops");
    });
    router.add("two values", [](rpc::ResultWriter& out) {
      out.integer(1);
      out.integer(2);
    });
    router.add("nan", [](rpc::ResultWriter& out) {
      out.start_array();
      out.number(1.5);
      out.number(not_a_number);
    });
    router.add("bad utf8", [](rpc::ResultWriter& out) {
      out.start_object();
      out.key("s");
      out.string("ab\xff");
      out.end_object();
    });
    router.add("ok", [](rpc::ResultWriter& out) {
      out.start_array();
      out.string("fine");
      out.end_array();
    });
    router.add("then error", [](rpc::ResultWriter& out) {
      out.start_array();
      out.integer(1);
      throw rpc::Error(-32001, "changed my mind");
    });

    CHECK(call(router, "key outside") == R"({"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error"}})");
    CHECK(call(router, "two values") == R"({"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error"}})");
    CHECK(call(router, "nan") == R"({"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error"}})");
    CHECK(call(router, "bad utf8") == R"({"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error"}})");
    CHECK(call(router, "then error") ==
          R"({"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"changed my mind"}})");
    CHECK(reply(router, R"([{"jsonrpc":"2.0","method":"ok","id":1},)"
                        R"({"jsonrpc":"2.0","method":"bad utf8","id":2},)"
                        R"({"jsonrpc":"2.0","method":"key outside","id":3},)"
                        R"({"jsonrpc":"2.0","method":"ok","id":4}])") ==
          R"([{"jsonrpc":"2.0","id":1,"result":["fine"]},)"
          R"({"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"Internal error"}},)"
          R"({"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"Internal error"}},)"
          R"({"jsonrpc":"2.0","id":4,"result":["fine"]}])");

    SUBCASE("a handler that catches a refused value and goes on still sends valid JSON") {
      rpc::Router lenient;
      lenient.add("skip", [](rpc::ResultWriter& out) {
        out.start_array();
        out.integer(1);
        for (const double bad : {std::nan(""), HUGE_VAL}) {
          try {
            out.number(bad);
          } catch (const std::logic_error&) {
          }
        }
        try {
          out.string("ab\xff");
        } catch (const std::logic_error&) {
        }
        out.integer(2);
        out.end_array();
      });
      lenient.add("alone", [](rpc::ResultWriter& out) {
        try {
          out.number(std::nan(""));
        } catch (const std::logic_error&) {
        }
      });
      CHECK(call(lenient, "skip") == R"({"jsonrpc":"2.0","id":1,"result":[1,2]})");
      CHECK(call(lenient, "alone") == R"({"jsonrpc":"2.0","id":1,"result":null})");
    }
  }

  TEST_CASE("a raw handler that writes nothing answers null") {
    rpc::Router router;
    router.add("nothing", [](rpc::ResultWriter&) {});
    router.add("nothing either", [](rpc::Context&, rpc::ResultWriter&, std::optional<int>) {});
    CHECK(call(router, "nothing") == R"({"jsonrpc":"2.0","id":1,"result":null})");
    CHECK(call(router, "nothing either") == R"({"jsonrpc":"2.0","id":1,"result":null})");
  }

  TEST_CASE("a raw handler that leaves a value open answers -32603") {
    rpc::Router router;
    router.add("open array", [](rpc::ResultWriter& out) {
      out.start_array();
      out.integer(1);
    });
    router.add("open object", [](rpc::ResultWriter& out) {
      out.start_object();
      out.key("a");
    });
    router.add("open inner", [](rpc::ResultWriter& out) {
      out.start_array();
      out.start_array();
      out.end_array();
    });
    CHECK(call(router, "open array") == R"({"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error"}})");
    CHECK(call(router, "open object") == R"({"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error"}})");
    CHECK(call(router, "open inner") == R"({"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error"}})");
  }

  TEST_CASE("rpc::json keeps valid text verbatim and refuses anything that is not one JSON value") {
    SUBCASE("valid") {
      CHECK(rpc::json(R"( {"a" : [1, 2.50, "\u00e9"]} )").text() == R"( {"a" : [1, 2.50, "\u00e9"]} )");
      CHECK(rpc::json("null").text() == "null");
      CHECK(rpc::json("-0").text() == "-0");
      CHECK(rpc::json(R"("s")").text() == R"("s")");
      CHECK(rpc::json("\"caf\xc3\xa9\"").text() == "\"caf\xc3\xa9\"");
      CHECK_FALSE(rpc::json("[]").empty());
      CHECK(rpc::Json{}.empty());
    }
    SUBCASE("invalid text") {
      for (const char* bad : {"", " ", "{", R"({"a":})", "[1,]", "'x'", "nul", "01", "-", "\"\\ud800\"", "\"\xff\""}) {
        CAPTURE(std::string_view(bad));
        CHECK_THROWS_AS(rpc::json(bad), std::invalid_argument);
      }
    }
    SUBCASE("two values") {
      CHECK_THROWS_AS(rpc::json("1 2"), std::invalid_argument);
      CHECK_THROWS_AS(rpc::json("{}{}"), std::invalid_argument);
      CHECK_THROWS_AS(rpc::json("[1],"), std::invalid_argument);
    }
    SUBCASE("a NUL byte, trailing or inside") {
      CHECK_THROWS_AS(rpc::json(std::string_view("1\0", 2)), std::invalid_argument);
      CHECK_THROWS_AS(rpc::json(std::string_view("[1]\0", 4)), std::invalid_argument);
      CHECK_THROWS_AS(rpc::json(std::string_view("\"a\0b\"", 5)), std::invalid_argument);
    }
  }

  TEST_CASE("rpc::to_json serialises any writable value") {
    CHECK(rpc::to_json(std::vector<int>{1, 2}).text() == "[1,2]");
    CHECK(rpc::to_json(std::vector<int>{}).text() == "[]");
    CHECK(rpc::to_json(std::map<std::string, bool>{{"y", false}, {"x", true}}).text() == R"({"x":true,"y":false})");
    CHECK(rpc::to_json(std::string("a\"b")).text() == R"("a\"b")");
    CHECK(rpc::to_json(std::optional<int>{}).text() == "null");
    CHECK(rpc::to_json(0.1f).text() == "0.1");
    CHECK(rpc::to_json(-5).text() == "-5");
    CHECK(rpc::to_json("disk \"full\"").text() == R"("disk \"full\"")");
    CHECK(rpc::write_json([](rpc::ResultWriter& w) { w.write("literal"); }).text() == R"("literal")");
  }

  TEST_CASE("rpc::write_json builds a value with a ResultWriter") {
    const std::string reason = "slow \"disk\"";
    const rpc::Json data = rpc::write_json([&](rpc::ResultWriter& w) {
      w.start_object();
      w.key("reason");
      w.string(reason);
      w.key("retry");
      w.boolean(true);
      w.end_object();
    });
    CHECK(data.text() == R"({"reason":"slow \"disk\"","retry":true})");
    CHECK(rpc::write_json([](rpc::ResultWriter& w) { w.integer(7); }).text() == "7");
    SUBCASE("an incomplete value is refused") {
      CHECK_THROWS_WITH_AS(rpc::write_json([](rpc::ResultWriter& w) { w.start_array(); }),
                           "rpc::write_json: the value written is incomplete", std::logic_error);
      CHECK_THROWS_AS(rpc::write_json([](rpc::ResultWriter&) {}), std::logic_error);
    }
    SUBCASE("what fill throws propagates") {
      CHECK_THROWS_WITH_AS(rpc::write_json([](rpc::ResultWriter&) { throw std::runtime_error("no"); }), "no",
                           std::runtime_error);
    }
  }
}
