// SPDX-License-Identifier: MIT
// Fuzz target: typed parameter binding. The first byte picks one of many typed methods, the
// rest is the `params` of {"jsonrpc":"2.0","method":M,"params":<rest>,"id":1}. Oracle: a valid
// message is answered with a result or -32602 whose data says which parameter and why, never
// -32603; for single scalar parameters the oracle also knows whether binding must succeed and
// what the echoed result must be.
#include <batchrpc/context.hpp>
#include <batchrpc/json.hpp>
#include <batchrpc/params.hpp>
#include <batchrpc/result_writer.hpp>
#include <batchrpc/router.hpp>

#include <cerrno>
#include <charconv>
#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <vector>

#include "oracle.hpp"

namespace {

namespace fz = batchrpc_fuzz;
using fz::Node;

// What the oracle knows about a method's single parameter "v" (`other`: nothing beyond the
// general rules).
enum class Kind : unsigned char { i32, u8, i64, u64, f64, f32, boolean, string, opt_i32, vec_i32, any, other };

struct MethodInfo {
  const char* name;
  Kind kind;
};

constexpr MethodInfo methods[] = {
    {"i32", Kind::i32},           {"u8", Kind::u8},           {"i64", Kind::i64},
    {"u64", Kind::u64},           {"f64", Kind::f64},         {"f32", Kind::f32},
    {"bool", Kind::boolean},      {"str", Kind::string},      {"sv", Kind::string},
    {"opt_i32", Kind::opt_i32},   {"vec_i32", Kind::vec_i32}, {"value", Kind::any},
    {"json", Kind::any},          {"vec_vec_str", Kind::other}, {"map_f64", Kind::other},
    {"umap_vec_i64", Kind::other}, {"opt_vec_map", Kind::other}, {"value_ptr", Kind::other},
    {"multi", Kind::other},       {"multi_pos", Kind::other}, {"ctx", Kind::other},
    {"params", Kind::other},      {"nothing", Kind::other},   {"writer", Kind::other},
    {"pair", Kind::other},        {"i16_u16", Kind::other},
};
constexpr std::size_t method_count = sizeof methods / sizeof methods[0];

rpc::Router make_router() {
  rpc::Router r;
  const auto v = rpc::names("v");
  r.add("i32", [](std::int32_t x) { return x; }, v);
  r.add("u8", [](std::uint8_t x) { return x; }, v);
  r.add("i64", [](std::int64_t x) { return x; }, v);
  r.add("u64", [](std::uint64_t x) { return x; }, v);
  r.add("f64", [](double x) { return x; }, v);
  r.add("f32", [](float x) { return x; }, v);
  r.add("bool", [](bool x) { return x; }, v);
  r.add("str", [](const std::string& x) { return x; }, v);
  r.add("sv", [](std::string_view x) { return std::string(x); }, v);
  r.add("opt_i32", [](std::optional<std::int32_t> x) { return x; }, v);
  r.add("vec_i32", [](const std::vector<int>& x) { return x; }, v);
  r.add("value", [](const rpc::Value& x) { return rpc::to_json(x); }, v);
  r.add("json", [](const rpc::Json& x) { return x; }, v);
  r.add("vec_vec_str", [](std::vector<std::vector<std::string>> x) { return x; }, v);
  r.add("map_f64", [](const std::map<std::string, double>& x) { return x; }, v);
  r.add("umap_vec_i64", [](std::unordered_map<std::string, std::vector<std::int64_t>> x) { return x.size(); }, v);
  r.add("opt_vec_map", [](std::optional<std::vector<std::map<std::string, int>>> x) { return x; }, v);
  r.add("value_ptr", [](const rpc::Value* x) { return x == nullptr ? rpc::Json() : rpc::to_json(*x); }, v);
  r.add("multi", [](int a, std::string b, std::optional<double> c, std::vector<bool> d) {
    return std::to_string(a) + b + (c ? "c" : "") + std::to_string(d.size());
  }, rpc::names("a", "b", "c", "d"));
  r.add("multi_pos", [](int a, std::string b, std::optional<double> c, std::vector<bool> d) {
    return std::to_string(a) + b + (c ? "c" : "") + std::to_string(d.size());
  });
  r.add("ctx", [](rpc::Context& ctx, int a, const rpc::Value* b) {
    return std::string(ctx.method()) + std::to_string(a) + (b != nullptr ? "b" : "");
  }, rpc::names("a", "b"));
  r.add("params", [](const rpc::Params& p) { return p.size(); });
  r.add("nothing", [] { return true; });
  r.add("writer", [](rpc::ResultWriter& w, std::string s) { w.string(s); }, rpc::names("s"));
  r.add("pair", [](int a, int b) { return static_cast<long long>(a) * b; });
  r.add("i16_u16", [](std::int16_t a, std::uint16_t b) { return a + b; }, rpc::names("a", "b"));
  return r;
}

const rpc::Router& router() {
  static const rpc::Router r = make_router();
  return r;
}

// `text` (a JSON integer) as T, or nullopt when it is not an integer or does not fit.
template <class T>
std::optional<T> integer_value(const Node& x) {
  if (!x.is(Node::Kind::number) || !fz::integer_text(x.text)) return std::nullopt;
  const char* first = x.text.data();
  const char* last = first + x.text.size();
  if (x.text == "-0") return T{0};
  T value{};
  const auto [ptr, ec] = std::from_chars(first, last, value);
  if (ec != std::errc{} || ptr != last) return std::nullopt;
  return value;
}

double as_double(const std::string& text) { return std::strtod(text.c_str(), nullptr); }

// The result the oracle expects for `kind` bound from `x` (nullptr: the parameter is absent),
// as a check on the reply's result; returns false when binding must fail.
struct Expectation {
  bool bindable = false;
  std::optional<std::string> exact;   // the result's JSON text as the tree holds it
  std::optional<double> number;       // the result as a number
  std::optional<float> single;        // the result as a float
  std::optional<std::string> string;  // the result as a (decoded) string
  bool null = false;                  // the result is null
};

Expectation expect(Kind kind, const Node* x) {
  Expectation e;
  if (x == nullptr) {
    e.bindable = kind == Kind::opt_i32;
    e.null = e.bindable;
    return e;
  }
  const auto integer = [&](auto type) {
    using T = decltype(type);
    if (const auto v = integer_value<T>(*x)) {
      e.bindable = true;
      e.exact = std::to_string(*v);
    }
  };
  switch (kind) {
    case Kind::i32: integer(std::int32_t{}); break;
    case Kind::u8: {
      if (const auto v = integer_value<std::int64_t>(*x); v && *v >= 0 && *v <= 255) {
        e.bindable = true;
        e.exact = std::to_string(*v);
      }
      break;
    }
    case Kind::i64: integer(std::int64_t{}); break;
    case Kind::u64: integer(std::uint64_t{}); break;
    case Kind::f64:
      if (x->is(Node::Kind::number)) {
        e.bindable = true;
        e.number = as_double(x->text);
      }
      break;
    case Kind::f32:
      if (x->is(Node::Kind::number)) {
        const double d = as_double(x->text);
        if (std::fabs(d) <= static_cast<double>(FLT_MAX)) {
          e.bindable = true;
          e.single = static_cast<float>(d);
        }
      }
      break;
    case Kind::boolean:
      if (x->is(Node::Kind::boolean)) {
        e.bindable = true;
        e.exact = x->text;
      }
      break;
    case Kind::string:
      if (x->is(Node::Kind::string)) {
        e.bindable = true;
        e.string = x->text;
      }
      break;
    case Kind::opt_i32:
      if (x->is(Node::Kind::null)) {
        e.bindable = e.null = true;
      } else {
        integer(std::int32_t{});
      }
      break;
    case Kind::vec_i32:
      if (x->is(Node::Kind::array)) {
        std::string all = "[";
        for (const Node& el : x->elements) {  // all kept: they are two levels below params
          const auto v = integer_value<int>(el);
          if (!v) return e;
          if (all.size() > 1) all += ',';
          all += std::to_string(*v);
        }
        e.bindable = true;
        e.exact = all + "]";
      }
      break;
    case Kind::any:
      e.bindable = true;
      break;
    case Kind::other:
      break;
  }
  return e;
}

// Re-serialises a kept array of integers as the oracle writes it.
std::string integers_text(const Node& n) {
  std::string all = "[";
  for (const Node& el : n.elements) {
    if (all.size() > 1) all += ',';
    all += el.text;
  }
  return all + "]";
}

struct Rules final : fz::MemberCheck {
  const MethodInfo& method;
  std::string_view params_text;
  explicit Rules(const MethodInfo& m, std::string_view params) : method(m), params_text(params) {}

  void operator()(const fz::Report& r, const fz::Member& m, const fz::Response& resp) const override {
    r.check(m.method == method.name, "the oracle lost track of the method");
    r.check(resp.result != nullptr || resp.code == -32602,
            "a typed handler's params must give a result or -32602 (never -32603 or another code)");
    if (resp.result == nullptr) {
      r.check(resp.data != nullptr && resp.data->is(Node::Kind::object), "-32602 needs data");
      const Node* reason = resp.data->find("reason");
      r.check(reason != nullptr && reason->is(Node::Kind::string) && !reason->text.empty(),
              "-32602 needs data.reason, a non-empty string");
      if (const Node* param = resp.data->find("param")) {
        r.check(param->is(Node::Kind::string) ||
                    (param->is(Node::Kind::number) && fz::integer_text(param->text) && param->text[0] != '-'),
                "data.param must be a name or a non-negative index");
      }
    }
    if (method.kind == Kind::other) return;

    // Which value binds to "v": by position ([x]) or by name ({"v": x}); anything else about
    // the shape decides on its own.
    const fz::Parsed p = fz::parse(params_text, 3);
    if (!p.ok()) return;  // then the message itself was not valid; check_message has decided
    const Node& params = p.root;
    const Node* x = nullptr;
    bool shape_ok = true;
    if (params.is(Node::Kind::array)) {
      shape_ok = params.size <= 1;
      if (params.size == 1) x = &params.elements[0];
    } else {
      for (const auto& [name, value] : params.members) {
        if (name != "v" || x != nullptr) shape_ok = false;
        x = &value;
      }
      if (params.size != params.members.size()) shape_ok = false;
    }
    if (!shape_ok) {
      r.check(resp.result == nullptr, "params of the wrong shape were accepted");
      return;
    }
    const Expectation e = expect(method.kind, x);
    if (!e.bindable) {
      r.check(resp.result == nullptr, "a value that cannot bind was accepted");
      return;
    }
    r.check(resp.result != nullptr, "a value that binds was refused");
    const Node& got = *resp.result;
    if (e.null) r.check(got.is(Node::Kind::null), "the result should be null");
    if (e.exact) {
      const std::string text = got.is(Node::Kind::array) ? integers_text(got) : got.text;
      r.check(text == *e.exact, "the echoed value differs from the one sent");
    }
    if (e.number) {
      r.check(got.is(Node::Kind::number) && as_double(got.text) == *e.number, "the echoed double differs");
    }
    if (e.single) {
      r.check(got.is(Node::Kind::number) && std::strtof(got.text.c_str(), nullptr) == *e.single,
              "the echoed float differs");
    }
    if (e.string) r.check(got.is(Node::Kind::string) && got.text == *e.string, "the echoed string differs");
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const MethodInfo& method = methods[data[0] % method_count];
  const std::string_view params(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::string message =
      std::string(R"({"jsonrpc":"2.0","method":")") + method.name + R"(","params":)" + std::string(params) + R"(,"id":1})";
  const std::optional<std::string> reply = router().handle(message);
  fz::Report report;
  report.target = "params";
  report.input = message;
  report.where = method.name;
  if (reply) report.reply = *reply;
  fz::check_message(report, fz::Limits{}, reply ? std::optional<std::string_view>(*reply) : std::nullopt,
                    Rules(method, params));
  return 0;
}
