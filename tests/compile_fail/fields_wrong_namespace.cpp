// SPDX-License-Identifier: MIT
// BATCHRPC_FIELDS written outside the struct's namespace, where the library would never find
// it, fails at the macro; not later with "has no JSON binding" for a struct the user did bind.
// expect-error: write BATCHRPC_FIELDS(geo::Point, ...) in the namespace that declares geo::Point
#include <batchrpc/router.hpp>

namespace geo {
struct Point {
  double x = 0, y = 0;
};
#if !BATCHRPC_TEST_FAILING_CODE
BATCHRPC_FIELDS(Point, x, y);
#endif
}  // namespace geo

#if BATCHRPC_TEST_FAILING_CODE
BATCHRPC_FIELDS(geo::Point, x, y);
#endif

void register_methods(rpc::Router& router) {
  router.add("norm2", [](const geo::Point& p) { return p.x * p.x + p.y * p.y; });
}
