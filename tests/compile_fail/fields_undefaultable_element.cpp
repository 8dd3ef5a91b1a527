// SPDX-License-Identifier: MIT
// A BATCHRPC_FIELDS struct with a container of a type that has no default constructor names
// the struct, that type and the field's type, and nothing follows from reading the field.
// expect-error: struct_field_element_must_be_default_constructible<app::Path, app::Point, std::vector<app::Point
// expect-error: a field's elements must be default-constructible
// reject-output: no matching function
#include <batchrpc/router.hpp>

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
struct Path {
  std::vector<Point> points;
};
BATCHRPC_FIELDS(Path, points);
}  // namespace app

void register_methods(rpc::Router& router) {
  router.add("length", [](const app::Path& path) { return path.points.size(); });
}
