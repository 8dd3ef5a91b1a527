// SPDX-License-Identifier: MIT
// one_handler.cpp plus ten typed handlers of different shapes: (this - one_handler) / 10 is
// what each further handler costs.
#include <batchrpc/batchrpc.hpp>

#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace shapes {
struct Point {
  double x = 0;
  double y = 0;
};
BATCHRPC_FIELDS(Point, x, y);
}  // namespace shapes

int main() {
  rpc::Router router;
  router.add("subtract", [](int minuend, int subtrahend) { return minuend - subtrahend; });
  router.add("h1", [](std::string s) { return s.size(); });
  router.add("h2", [](double a, double b, double c) { return a * b + c; });
  router.add("h3", [](std::vector<int> v) { return v; });
  router.add("h4", [](std::optional<std::string> s) { return s.value_or("none"); });
  router.add("h5", [](std::map<std::string, double> m) { return m.size(); });
  router.add("h6", [](bool b, std::int64_t i) { return b ? i : -i; });
  router.add("h7", [](shapes::Point p) { return shapes::Point{p.y, p.x}; });
  router.add("h8", [](std::vector<shapes::Point> ps) { return ps.size(); });
  router.add("h9", [](rpc::Context& ctx, std::uint32_t n) { return ctx.method().size() + n; });
  router.add("h10", [](const rpc::Value& v) { return v.IsObject(); });
  const auto reply = router.handle(R"({"jsonrpc":"2.0","method":"subtract","params":[42,23],"id":1})");
  std::puts(reply ? reply->c_str() : "");
  return 0;
}
