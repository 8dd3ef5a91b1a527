// SPDX-License-Identifier: MIT
// A field listed twice in BATCHRPC_FIELDS would write its key twice: refused where it is bound.
// expect-error: two fields of Point have the same name
#include <batchrpc/router.hpp>

namespace geo {
struct Point {
  double x = 0;
  double y = 0;
};
#if BATCHRPC_TEST_FAILING_CODE
BATCHRPC_FIELDS(Point, x, y, x);
#else
BATCHRPC_FIELDS(Point, x, y);
#endif
}  // namespace geo

void register_methods(rpc::Router& router) {
  router.add("origin", [] { return geo::Point{}; });
}
