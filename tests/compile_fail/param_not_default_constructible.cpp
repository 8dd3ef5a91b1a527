// SPDX-License-Identifier: MIT
// A bound parameter whose type has no default constructor names that type, instead of an error
// from deep inside std::tuple.
// expect-error: handler_parameter_must_be_default_constructible<app::Point>
// expect-error: must be default-constructible
#include <batchrpc/router.hpp>

namespace app {
struct Point {
#if BATCHRPC_TEST_FAILING_CODE
  Point(int px, int py) : x(px), y(py) {}
#endif
  int x = 0;
  int y = 0;
};
BATCHRPC_FIELDS(Point, x, y);
}  // namespace app

void register_methods(rpc::Router& router) {
  router.add("x_of", [](const app::Point& p) { return p.x; });
}
