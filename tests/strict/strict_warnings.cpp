// SPDX-License-Identifier: MIT
// Every public header, and what users instantiate from them, compiled with GCC's strict warnings
// (-Wconversion -Wsign-conversion -Wshadow -Wold-style-cast, as errors) and with clang's
// -Weverything (see tests/CMakeLists.txt for the groups left out): a user who builds with these
// flags sees nothing from batchrpc. Compiled only; nothing runs.
#include <batchrpc/batchrpc.hpp>
#include <batchrpc/log.hpp>
#include <batchrpc/progress.hpp>
#include <batchrpc/stream.hpp>
#if defined(BATCHRPC_STRICT_NET)
#include <batchrpc/net.hpp>
#include <batchrpc/net_client.hpp>
#endif

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

namespace strict {

struct Point {
  double x = 0;
  double y = 0;
};

struct Shape {
  std::string name;
  std::vector<Point> corners;
  std::optional<std::int16_t> layer;
};
BATCHRPC_FIELDS(Shape, name, corners, layer);

struct Settings {
  std::uint8_t level = 3;
};
BATCHRPC_FIELDS_DEFAULTED(Settings, level);

enum class Mode : std::uint8_t { fast, exact };
BATCHRPC_ENUM(Mode, fast, exact);
enum class Code : char { a = 'a' };

class Calc {
 public:
  [[nodiscard]] int add(int a, int b) const { return a + b; }
  std::uint32_t bump(std::uint32_t by) { return count_ += by; }

 private:
  std::uint32_t count_ = 0;
};

}  // namespace strict

template <>
struct rpc::JsonTraits<strict::Point> {
  static bool read(const rpc::Value& v, strict::Point& out, std::string& why) {
    if (!v.IsObject() || !v.HasMember("x") || !v.HasMember("y") || !v["x"].IsNumber() || !v["y"].IsNumber()) {
      why = "expected {x, y}";
      return false;
    }
    out = {v["x"].GetDouble(), v["y"].GetDouble()};
    return true;
  }
  static void write(rpc::ResultWriter& w, const strict::Point& p) {
    w.start_object();
    w.key("x");
    w.write(p.x);
    w.key("y");
    w.write(p.y);
    w.end_object();
  }
};

[[maybe_unused]] static void instantiate_what_users_write(rpc::Router& router) {
  router.add("add", [](int a, int b) { return a + b; }, rpc::names("a", "b"));
  router.add("scale", [](std::vector<double> v, std::optional<float> k) {
    for (double& x : v) x *= static_cast<double>(k.value_or(1.0f));
    return v;
  });
  router.add("sum64", [](std::int64_t a, std::uint64_t b, std::uint32_t c, std::int16_t d) {
    return static_cast<double>(a) + static_cast<double>(b) + c + d;
  });
  router.add("echo", [](const std::string& s, std::map<std::string, std::string> m) { return s + std::to_string(m.size()); });
  router.add("mid", [](strict::Point a, strict::Point b) { return strict::Point{(a.x + b.x) / 2, (a.y + b.y) / 2}; });
  router.add("later", [](rpc::Context& ctx, rpc::Responder answer) {
    const rpc::Progress progress(ctx);
    progress.report(1, 2, "half");
    rpc::mcp::log(ctx.peer(), rpc::mcp::LogLevel::info, "log");
    rpc::lsp::log_message(ctx.peer(), rpc::lsp::MessageType::info, "log");
    ctx.peer().request("roots/list", [answer](const rpc::Reply& reply) {
      if (reply.ok()) answer.resolve(reply.result());
    });
  });
  router.add("shape", [](const strict::Shape& s, strict::Settings t, strict::Mode m, strict::Code c) {
    return std::tuple{s, t, m, c};
  });
  router.add("std", [](std::array<std::uint16_t, 2> a, std::pair<int, std::string> p, std::set<std::int64_t> s,
                       std::variant<std::monostate, std::uint32_t, std::string> v) {
    return std::tuple{a, p, s, v, std::span<const std::uint16_t>(a)};
  });
  static strict::Calc calc;
  router.add("calc", &strict::Calc::add, calc);
  router.add("bump", &strict::Calc::bump, &calc, rpc::names("by"));
  router.add("raw", [](rpc::Params params, rpc::ResultWriter& out) { out.raw(rpc::json(params.find("x") ? "1" : "0")); });
  rpc::add_builtins(router, {.mcp_cancel = true});
  rpc::Tools tools{router};
  tools.expose("add", {.name = "add_numbers"}).add_batch_tool();
}

[[maybe_unused]] static std::size_t read_results(const rpc::BatchBuilder& batch, std::string_view text,
                                                 const rpc::Reply& reply) {
  const rpc::Replies replies = rpc::correlate(batch, text);
  return replies.result<std::vector<strict::Point>>(1).size() +
         rpc::correlate(batch, text).result<std::set<std::int64_t>>(2).size() +
         reply.as<std::vector<std::string>>().size();
}

[[maybe_unused]] static void serve(const rpc::Router& router) {
  rpc::ThreadPool pool{2};
  rpc::Session session{router, {.executor = &pool}};
  (void)session.handle(R"({"jsonrpc":"2.0","method":"add","params":[1,2],"id":1})");
  std::string taken = R"({"jsonrpc":"2.0","method":"add","params":[1,2],"id":2})";
  session.handle(std::move(taken), [](std::optional<std::string_view> reply) { (void)reply; });
  const auto keep = [](std::optional<std::string_view> reply) { (void)reply; };
  session.handle(R"({"jsonrpc":"2.0","method":"add","params":[1,2],"id":3})", keep);
  rpc::serve_stream(session, 0, 1);
#if defined(BATCHRPC_STRICT_NET)
  rpc::net::Server server{router};
  (void)server.listen("127.0.0.1", 0, rpc::net::Protocol::mcp);
  server.start();
#endif
}
