// SPDX-License-Identifier: MIT
// Binding without hand-written JsonTraits: structs by their fields (BATCHRPC_FIELDS), enums by
// name or number, and the standard containers, read from params and written as results, with
// the exact replies and error reasons a client sees.
#include <batchrpc/peer.hpp>
#include <batchrpc/router.hpp>

#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_set>
#include <utility>
#include <variant>
#include <vector>

namespace geo {
struct Point {
  double x = 0;
  double y = 0;
  std::optional<std::string> label;
};
BATCHRPC_FIELDS(Point, x, y, label);

struct Polygon {
  std::string name;
  std::vector<Point> points;
};
BATCHRPC_FIELDS(Polygon, name, points);

struct Strict {
  int a = 0;
};
BATCHRPC_FIELDS_STRICT(Strict, a);

struct Empty {};
BATCHRPC_FIELDS(Empty);

struct Defaults {
  int quantity = 1;
  std::string unit = "each";
  std::optional<int> limit;
};
BATCHRPC_FIELDS_DEFAULTED(Defaults, quantity, unit, limit);

// Both rules at once, written by hand.
struct Both {
  int a = 5;
};
constexpr auto batchrpc_fields(rpc::TypeTag<Both>) {
  return rpc::field_list<Both>({.refuse_unknown = true, .absent_keeps_default = true},
                               rpc::field("a", &Both::a));
}

// A tree: a struct holding containers of itself.
struct Node {
  int value = 0;
  std::vector<Node> children;
};
BATCHRPC_FIELDS(Node, value, children);

// JSON names that are not the member names.
struct Tool {
  std::string name;
  std::string input_schema;
};
constexpr auto batchrpc_fields(rpc::TypeTag<Tool>) {
  return rpc::field_list<Tool>({}, rpc::field("name", &Tool::name),
                               rpc::field("inputSchema", &Tool::input_schema));
}

// Fields inherited from a base class.
struct Entity {
  std::int64_t id = 0;
};
struct User : Entity {
  std::string name;
};
BATCHRPC_FIELDS(User, id, name);

enum class Color { red, green, blue };
BATCHRPC_ENUM(Color, red, green, blue);

enum class Status : std::uint8_t { queued, done };
constexpr std::array<rpc::EnumName<Status>, 2> batchrpc_enum_names(rpc::TypeTag<Status>) {
  return {{{Status::queued, "in-queue"}, {Status::done, "done"}}};
}

enum Level : char { low = 1, high = 9 };  // no names: a number

// A tree of views: it may not outlive the JSON it was read from.
struct Outline {
  std::string_view title;
  std::vector<Outline> sections;
};
BATCHRPC_FIELDS(Outline, title, sections);
}  // namespace geo

// Variants of recursive structs. Told apart by their fields (Binary has "op", Call has "fn"):
namespace ast {
struct Binary;
struct Call;
struct Num {
  double value = 0;
};
using Expr = std::variant<Binary, Call, Num>;
struct Binary {
  std::string op;
  std::vector<Expr> args;
};
struct Call {
  std::string fn;
  std::vector<Expr> args;
};
BATCHRPC_FIELDS(Num, value);
BATCHRPC_FIELDS(Binary, op, args);
BATCHRPC_FIELDS(Call, fn, args);

// ... and not told apart until the last field is read: a client can make each level retry the
// levels under it.
struct Same1;
struct Same2;
using Retried = std::variant<Same1, Same2, Num>;
struct Same1 {
  std::vector<Retried> args;
  int x = 0;
};
struct Same2 {
  std::vector<Retried> args;
  std::string x;
};
BATCHRPC_FIELDS(Same1, args, x);
BATCHRPC_FIELDS(Same2, args, x);
}  // namespace ast

namespace hex {
// A user's own binding whose read fails without saying why.
struct Byte {
  int value = 0;
};
struct Holder {
  Byte byte;
};
BATCHRPC_FIELDS(Holder, byte);
}  // namespace hex

template <>
struct rpc::JsonTraits<hex::Byte> {
  static bool read(const rpc::Value& v, hex::Byte& out, std::string&) {
    if (!v.IsString() || v.GetStringLength() != 2) return false;
    out.value = 1;
    return true;
  }
  static void write(rpc::ResultWriter& w, const hex::Byte& b) { w.integer(b.value); }
};

namespace {

std::string call(const rpc::Router& router, std::string_view method, std::string_view params) {
  const std::string message = R"({"jsonrpc":"2.0","method":")" + std::string(method) +
                              R"(","params":)" + std::string(params) + R"(,"id":1})";
  const std::optional<std::string> text = router.handle(message);
  return text ? *text : std::string("<no reply>");
}

std::string result(std::string_view json) {
  return R"({"jsonrpc":"2.0","id":1,"result":)" + std::string(json) + "}";
}

std::string invalid(std::string_view reason, int param = 0) {
  return R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":)" +
         std::to_string(param) + R"(,"reason":")" + std::string(reason) + R"("}}})";
}

// A router with one method that echoes its one parameter of type T.
template <class T>
rpc::Router echo_router() {
  rpc::Router router;
  router.add("echo", [](T value) { return value; });
  return router;
}

}  // namespace

TEST_SUITE("json binding") {
  TEST_CASE("a struct binds by its fields, in both directions") {
    const rpc::Router router = echo_router<geo::Point>();
    CHECK(call(router, "echo", R"([{"x":1,"y":2.5,"label":"a"}])") ==
          result(R"({"x":1,"y":2.5,"label":"a"})"));
    // Order does not matter; an absent or null optional is empty and left out when written.
    CHECK(call(router, "echo", R"([{"y":2,"x":1}])") == result(R"({"x":1,"y":2})"));
    CHECK(call(router, "echo", R"([{"y":2,"x":1,"label":null}])") == result(R"({"x":1,"y":2})"));
    // Unknown members are ignored.
    CHECK(call(router, "echo", R"([{"x":1,"y":2,"z":3}])") == result(R"({"x":1,"y":2})"));
  }

  TEST_CASE("a struct handler registered without names takes a params object whole") {
    rpc::Router router;
    router.add("echo", [](const geo::Point& p) { return p; });
    router.add("strict", [](rpc::Context&, geo::Strict s) { return s.a; });
    router.add("named", [](const geo::Point& p) { return p; }, rpc::names("p"));
    router.add("two", [](const geo::Point& p, int n) { return p.x + n; });
    CHECK(call(router, "echo", R"({"y":2,"x":1,"label":"a"})") == result(R"({"x":1,"y":2,"label":"a"})"));
    CHECK(call(router, "echo", R"([{"x":1,"y":2}])") == result(R"({"x":1,"y":2})"));  // by position, as ever
    // MCP's `_meta` and LSP's `workDoneToken` are members like any other: ignored, or refused by
    // a strict struct; the errors name no parameter.
    CHECK(call(router, "echo", R"({"x":1,"y":2,"_meta":{"progressToken":1}})") == result(R"({"x":1,"y":2})"));
    CHECK(call(router, "echo", R"({"x":1})") ==
          R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"reason":"missing field \"y\""}}})");
    CHECK(call(router, "echo", R"({"x":1,"y":"2"})") ==
          R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"reason":"y: expected a number"}}})");
    CHECK(call(router, "strict", R"({"a":7})") == result("7"));
    CHECK(call(router, "strict", R"({"a":7,"_meta":{}})") ==
          R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"reason":"unknown field \"_meta\""}}})");
    // With names, or with more than one parameter, an object binds by name.
    CHECK(call(router, "named", R"({"p":{"x":1,"y":2}})") == result(R"({"x":1,"y":2})"));
    CHECK(call(router, "named", R"({"x":1,"y":2})") ==
          R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":"x","reason":"unknown parameter"}}})");
    CHECK(call(router, "two", R"({"x":1,"y":2})") ==
          R"x({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"reason":"this method takes its params by position (an array)"}}})x");
  }

  TEST_CASE("a struct's errors say which field and why") {
    const rpc::Router router = echo_router<geo::Point>();
    CHECK(call(router, "echo", R"([{"x":1,"y":"2"}])") == invalid("y: expected a number"));
    CHECK(call(router, "echo", R"([{"x":1}])") == invalid(R"(missing field \"y\")"));
    CHECK(call(router, "echo", R"([{"x":1,"y":2,"x":3}])") == invalid(R"(duplicate field \"x\")"));
    CHECK(call(router, "echo", R"([[1,2]])") == invalid("expected an object"));
    CHECK(call(router, "echo", R"([{"x":1,"y":2,"label":7}])") == invalid("label: expected a string"));
  }

  TEST_CASE("nested structs and containers name the whole path") {
    const rpc::Router router = echo_router<geo::Polygon>();
    CHECK(call(router, "echo", R"([{"name":"t","points":[{"x":0,"y":0},{"x":1,"y":1}]}])") ==
          result(R"({"name":"t","points":[{"x":0,"y":0},{"x":1,"y":1}]})"));
    CHECK(call(router, "echo", R"([{"name":"t","points":[{"x":0,"y":0},{"x":1,"y":true}]}])") ==
          invalid("points: element 1: y: expected a number"));
    const rpc::Router points = echo_router<std::vector<geo::Point>>();
    CHECK(call(points, "echo", R"([[{"x":0,"y":0},{"x":1,"y":"no"}]])") ==
          invalid("element 1: y: expected a number"));
  }

  TEST_CASE("a recursive struct binds") {
    const rpc::Router router = echo_router<geo::Node>();
    CHECK(call(router, "echo", R"([{"value":1,"children":[{"value":2,"children":[]}]}])") ==
          result(R"({"value":1,"children":[{"value":2,"children":[]}]})"));
    CHECK(call(router, "echo", R"([{"value":1,"children":[{"value":2}]}])") ==
          invalid(R"(children: element 0: missing field \"children\")"));
  }

  TEST_CASE("strict structs refuse unknown members, an empty struct is an object") {
    const rpc::Router strict = echo_router<geo::Strict>();
    CHECK(call(strict, "echo", R"([{"a":1}])") == result(R"({"a":1})"));
    CHECK(call(strict, "echo", R"([{"a":1,"b":2}])") == invalid(R"(unknown field \"b\")"));
    const rpc::Router empty = echo_router<geo::Empty>();
    CHECK(call(empty, "echo", R"([{"any":1}])") == result("{}"));
    CHECK(call(empty, "echo", "[[]]") == invalid("expected an object"));
  }

  TEST_CASE("defaulted structs keep the default of a field that is absent") {
    const rpc::Router router = echo_router<geo::Defaults>();
    CHECK(call(router, "echo", "[{}]") == result(R"({"quantity":1,"unit":"each"})"));
    CHECK(call(router, "echo", R"([{"unit":"kg","limit":3}])") == result(R"({"quantity":1,"unit":"kg","limit":3})"));
    CHECK(call(router, "echo", R"([{"quantity":null}])") == invalid("quantity: expected an integer"));
    const rpc::Router both = echo_router<geo::Both>();
    CHECK(call(both, "echo", "[{}]") == result(R"({"a":5})"));
    CHECK(call(both, "echo", R"([{"b":1}])") == invalid(R"(unknown field \"b\")"));
  }

  TEST_CASE("fields may be inherited") {
    const rpc::Router router = echo_router<geo::User>();
    CHECK(call(router, "echo", R"([{"name":"ada","id":7}])") == result(R"({"id":7,"name":"ada"})"));
    CHECK(call(router, "echo", R"([{"name":"ada"}])") == invalid(R"(missing field \"id\")"));
  }

  TEST_CASE("fields may have JSON names of their own") {
    const rpc::Router router = echo_router<geo::Tool>();
    CHECK(call(router, "echo", R"([{"name":"n","inputSchema":"s"}])") ==
          result(R"({"name":"n","inputSchema":"s"})"));
    CHECK(call(router, "echo", R"([{"name":"n","input_schema":"s"}])") ==
          invalid(R"(missing field \"inputSchema\")"));
  }

  TEST_CASE("a struct is a named parameter like any other") {
    rpc::Router router;
    router.add("move", [](geo::Point p, double dx) { return geo::Point{p.x + dx, p.y, p.label}; },
               rpc::names("point", "dx"));
    CHECK(call(router, "move", R"({"point":{"x":1,"y":2},"dx":0.5})") == result(R"({"x":1.5,"y":2})"));
    CHECK(call(router, "move", R"({"point":{"x":1},"dx":0.5})") ==
          R"({"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"param":"point","reason":"missing field \"y\""}}})");
  }

  TEST_CASE("enums bind by name, by a table of names, or as numbers") {
    const rpc::Router colors = echo_router<geo::Color>();
    CHECK(call(colors, "echo", R"(["green"])") == result(R"("green")"));
    CHECK(call(colors, "echo", R"(["Green"])") == invalid(R"(expected one of \"red\", \"green\", \"blue\")"));
    CHECK(call(colors, "echo", "[1]") == invalid(R"(expected one of \"red\", \"green\", \"blue\")"));
    const rpc::Router statuses = echo_router<geo::Status>();
    CHECK(call(statuses, "echo", R"(["in-queue"])") == result(R"("in-queue")"));
    CHECK(call(statuses, "echo", R"(["queued"])") == invalid(R"(expected one of \"in-queue\", \"done\")"));
    const rpc::Router levels = echo_router<geo::Level>();
    CHECK(call(levels, "echo", "[9]") == result("9"));
    // Level's underlying type is char, signed or not as the platform has it.
    CHECK(call(levels, "echo", "[300]") ==
          invalid("integer out of range (" + std::to_string(std::numeric_limits<char>::min() + 0) + " to " +
                  std::to_string(std::numeric_limits<char>::max() + 0) + ")"));
    CHECK(call(levels, "echo", R"(["high"])") == invalid("expected an integer"));
  }

  TEST_CASE("an enum value without a name is an internal error, not a wrong reply") {
    rpc::Router router;
    router.add("bad", [] { return static_cast<geo::Color>(7); });
    CHECK(call(router, "bad", "[]") ==
          R"({"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error"}})");
  }

  TEST_CASE("std::array, std::pair and std::tuple are arrays of their exact size") {
    const rpc::Router arrays = echo_router<std::array<int, 3>>();
    CHECK(call(arrays, "echo", "[[1,2,3]]") == result("[1,2,3]"));
    CHECK(call(arrays, "echo", "[[1,2]]") == invalid("expected an array of 3 elements"));
    CHECK(call(arrays, "echo", R"([[1,2,"3"]])") == invalid("element 2: expected an integer"));
    const rpc::Router pairs = echo_router<std::pair<std::string, int>>();
    CHECK(call(pairs, "echo", R"([["a",1]])") == result(R"(["a",1])"));
    CHECK(call(pairs, "echo", R"([["a","b"]])") == invalid("element 1: expected an integer"));
    CHECK(call(pairs, "echo", R"([["a",1,2]])") == invalid("expected an array of 2 elements"));
    const rpc::Router tuples = echo_router<std::tuple<bool, geo::Color, std::optional<int>>>();
    CHECK(call(tuples, "echo", R"([[true,"red",null]])") == result(R"([true,"red",null])"));
    CHECK(call(tuples, "echo", R"([[true,"red"]])") == invalid("expected an array of 3 elements"));
    const rpc::Router one = echo_router<std::tuple<int>>();
    CHECK(call(one, "echo", "[[1,2]]") == invalid("expected an array of 1 element"));
  }

  TEST_CASE("sets are arrays, repeated elements collapse") {
    const rpc::Router sets = echo_router<std::set<std::string>>();
    CHECK(call(sets, "echo", R"([["b","a","b"]])") == result(R"(["a","b"])"));
    CHECK(call(sets, "echo", R"([["b",1]])") == invalid("element 1: expected a string"));
    const rpc::Router hashed = echo_router<std::unordered_set<int>>();
    CHECK(call(hashed, "echo", "[[4,4,4]]") == result("[4]"));
  }

  TEST_CASE("a variant takes the first alternative that reads the value") {
    const rpc::Router router = echo_router<std::variant<std::monostate, std::int64_t, double, std::string>>();
    CHECK(call(router, "echo", "[null]") == result("null"));
    CHECK(call(router, "echo", "[3]") == result("3"));
    CHECK(call(router, "echo", "[3.5]") == result("3.5"));
    CHECK(call(router, "echo", R"(["x"])") == result(R"("x")"));
    CHECK(call(router, "echo", "[true]") ==
          invalid("matches no alternative (alternative 0: expected null; alternative 1: expected an integer; "
                  "alternative 2: expected a number; alternative 3: expected a string)"));
    const rpc::Router shapes = echo_router<std::variant<geo::Point, std::vector<geo::Point>>>();
    CHECK(call(shapes, "echo", R"([[{"x":1,"y":2}]])") == result(R"([{"x":1,"y":2}])"));
  }

  TEST_CASE("reading a variant of recursive structs costs in proportion to the message") {
    // `args` comes first, so a struct that lacks a field learns it only after reading `args`
    // unless it looks first: without that look, each level would read the levels under it twice.
    const auto nest = [](std::string leaf, int depth, std::string_view tail) {
      for (int i = 0; i < depth; ++i) leaf = R"({"args":[)" + leaf + "]," + std::string(tail) + "}";
      return "[" + leaf + "]";
    };
    rpc::Router router;
    router.add("kind", [](const ast::Expr& e) { return e.index(); });
    router.add("retried", [](const ast::Retried& e) { return e.index(); });
    CHECK(call(router, "kind", nest(R"({"value":1})", 60, R"("fn":"f")")) == result("1"));
    CHECK(call(router, "kind", nest(R"({"value":1})", 60, R"("op":"+")")) == result("0"));
    CHECK(call(router, "kind", nest(R"({"value":"x"})", 1, R"("fn":"f")")) ==
          invalid(R"(matches no alternative (alternative 0: missing field \"op\"; alternative 1: args: element 0: )"
                  R"(matches no alternative (alternative 0: missing field \"op\"; alternative 1: missing field \"fn\"; )"
                  R"(alternative 2: value: expected a number); alternative 2: missing field \"value\"))"));
    // Retrying is bounded: a few levels read, many are refused rather than run for ever.
    CHECK(call(router, "retried", nest(R"({"value":1})", 4, R"("x":"s")")) == result("1"));
    CHECK(call(router, "retried", nest(R"({"value":1})", 30, R"("x":"s")")) ==
          invalid("too costly to read: its alternatives were retried too often"));
  }

  TEST_CASE("a variant's reasons are cut short, at a character boundary") {
    const rpc::Router router = echo_router<std::variant<std::vector<geo::Strict>, int>>();
    const std::string name = "\u00e9" + std::string(300, 'z');  // é, then 300 bytes
    const std::string reply = call(router, "echo", R"([[{"a":1,")" + name + R"(":1}]])");
    // 200 bytes of the first reason: `element 0: unknown field "` (26), é (2), 172 z.
    CHECK(reply == invalid("matches no alternative (alternative 0: element 0: unknown field \\\"\u00e9" +
                           std::string(172, 'z') + "...; alternative 1: expected an integer)"));
  }

  TEST_CASE("a read that fails without a reason is answered \"invalid value\", wherever it is") {
    CHECK(call(echo_router<hex::Byte>(), "echo", R"(["ff"])") == result("1"));
    CHECK(call(echo_router<hex::Byte>(), "echo", "[3]") == invalid("invalid value"));
    CHECK(call(echo_router<std::vector<hex::Byte>>(), "echo", R"([["ff","zzz"]])") ==
          invalid("element 1: invalid value"));
    CHECK(call(echo_router<std::map<std::string, hex::Byte>>(), "echo", R"([{"k":0}])") ==
          invalid(R"(member \"k\": invalid value)"));
    CHECK(call(echo_router<hex::Holder>(), "echo", R"([{"byte":0}])") == invalid("byte: invalid value"));
    CHECK(call(echo_router<std::variant<hex::Byte, bool>>(), "echo", "[0]") ==
          invalid("matches no alternative (alternative 0: invalid value; alternative 1: expected a boolean)"));
  }

  TEST_CASE("a span is written as an array") {
    static constexpr std::array<int, 3> primes{2, 3, 5};
    rpc::Router router;
    router.add("primes", [] { return std::span<const int>(primes); });
    router.add("first", [] { return std::span<const int, 1>(primes.data(), 1); });
    CHECK(call(router, "primes", "[]") == result("[2,3,5]"));
    CHECK(call(router, "first", "[]") == result("[2]"));
  }

  TEST_CASE("maps of structs and structs in optionals") {
    const rpc::Router router = echo_router<std::map<std::string, std::optional<geo::Point>>>();
    CHECK(call(router, "echo", R"([{"a":{"x":1,"y":2},"b":null}])") ==
          result(R"({"a":{"x":1,"y":2},"b":null})"));
    CHECK(call(router, "echo", R"([{"a":{"x":1}}])") == invalid(R"(member \"a\": missing field \"y\")"));
  }

  TEST_CASE("a compile error names the part of a container that does not bind") {
    // What the first line of a binding error names (see detail/json_parts.hpp).
    struct Opaque {};
    using rpc::detail::unreadable_part_t;
    using rpc::detail::unwritable_part_t;
    static_assert(std::is_same_v<unreadable_part_t<Opaque>, Opaque>);
    static_assert(std::is_same_v<unreadable_part_t<std::vector<std::optional<Opaque>>>, Opaque>);
    static_assert(
        std::is_same_v<unreadable_part_t<std::map<std::string, std::set<Opaque>>>, Opaque>);
    static_assert(
        std::is_same_v<unreadable_part_t<std::tuple<int, std::vector<char>, Opaque>>, char>);
    static_assert(
        std::is_same_v<unreadable_part_t<std::variant<int, std::array<Opaque, 2>>>, Opaque>);
    // A map without string keys is at fault itself: its parts bind.
    static_assert(std::is_same_v<unreadable_part_t<std::vector<std::map<int, double>>>,
                                 std::map<int, double>>);
    static_assert(std::is_same_v<unwritable_part_t<std::pair<geo::Point, Opaque>>, Opaque>);
    static_assert(std::is_same_v<unwritable_part_t<std::span<const Opaque>>, Opaque>);
    CHECK(std::is_same_v<unwritable_part_t<std::optional<std::vector<Opaque>>>, Opaque>);
  }

  TEST_CASE("a set is read only into a set whose comparator, or hash and equality, take its type") {
    struct Tag {};
    struct Order {
      bool operator()(const Tag&, const Tag&) const { return false; }
    };
    struct Hash {
      std::size_t operator()(const Tag&) const { return 0; }
    };
    using rpc::detail::set_can_insert;
    static_assert(set_can_insert<std::set<int>> && set_can_insert<std::unordered_set<std::string>>);
    static_assert(!set_can_insert<std::set<Tag>> && !set_can_insert<std::set<Tag, std::less<>>>);
    static_assert(set_can_insert<std::set<Tag, Order>>);
    static_assert(!set_can_insert<std::unordered_set<Tag>>);        // no std::hash<Tag>
    static_assert(!set_can_insert<std::unordered_set<Tag, Hash>>);  // no operator==
    CHECK(set_can_insert<std::unordered_set<Tag, Hash, Order>>);
  }

  TEST_CASE("a recursive struct owns its data when its fields do, and reads from a reply") {
    using rpc::detail::owns_its_data;
    static_assert(owns_its_data<geo::Node>::value);
    static_assert(owns_its_data<std::map<std::string, std::vector<geo::Node>>>::value);
    static_assert(!owns_its_data<geo::Outline>::value);
    static_assert(!owns_its_data<std::vector<std::string_view>>::value);
    const rpc::Reply reply{rpc::json(R"({"value":1,"children":[{"value":2,"children":[]}]})")};
    const auto node = reply.as<geo::Node>();
    CHECK(node.value == 1);
    REQUIRE(node.children.size() == 1);
    CHECK(node.children[0].value == 2);
    CHECK(node.children[0].children.empty());
  }

  TEST_CASE("a read needs every element it makes to be default-constructible") {
    struct NoDefault {
      explicit NoDefault(int) {}
    };
    using rpc::detail::default_readable;
    using rpc::detail::parts_default_constructible;
    using at_fault =
        rpc::detail::part_at_fault<default_readable, std::vector<std::optional<NoDefault>>>;
    static_assert(default_readable<std::map<std::string, std::vector<int>>>::value);
    static_assert(!default_readable<NoDefault>::value);
    static_assert(!default_readable<std::vector<NoDefault>>::value);
    static_assert(!default_readable<std::tuple<int, std::set<NoDefault>>>::value);
    // A field is read in place: only what its read makes must be default-constructible.
    static_assert(parts_default_constructible<NoDefault>::value);
    static_assert(!parts_default_constructible<std::optional<NoDefault>>::value);
    CHECK(std::is_same_v<at_fault::type, NoDefault>);
  }
}
