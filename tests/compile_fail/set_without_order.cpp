// SPDX-License-Identifier: MIT
// A std::set parameter of a type with no operator< names that type and the set, instead of an
// error from inside std::less.
// expect-error: set_element_has_no_order_or_hash_for<app::Point, std::set<app::Point
// expect-error: a set is read by inserting each element
// reject-output: no match for
#include <batchrpc/router.hpp>

#include <set>

namespace app {
struct Point {
  int x = 0;
  int y = 0;
#if !BATCHRPC_TEST_FAILING_CODE
  friend bool operator<(const Point& a, const Point& b) {
    return a.x != b.x ? a.x < b.x : a.y < b.y;
  }
#endif
};
BATCHRPC_FIELDS(Point, x, y);
}  // namespace app

void register_methods(rpc::Router& router) {
  router.add("count", [](const std::set<app::Point>& points) { return points.size(); });
}
