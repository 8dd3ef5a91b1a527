// SPDX-License-Identifier: MIT
// A parameter that is a container of a type with no default constructor names that type
// first, then the parameter's type, instead of an error from deep inside the container's read.
// expect-error: handler_parameter_must_be_default_constructible<app::Point, std::vector<std::optional<app::Point>
// expect-error: each element of it, must be default-constructible
// reject-output: no matching function
#include <batchrpc/router.hpp>

#include <optional>
#include <vector>

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
  router.add("count", [](const std::vector<std::optional<app::Point>>& points) {
    return points.size();
  });
}
