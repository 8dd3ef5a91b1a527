// SPDX-License-Identifier: MIT
// A parameter type with no JSON binding is named in the first error, then what to use instead.
// expect-error: handler_parameter_has_no_json_binding_for<Point>
// expect-error: a handler parameter has no JSON binding
#include <batchrpc/router.hpp>

struct Point {
  double x, y;
};

void register_methods(rpc::Router& router) {
#if BATCHRPC_TEST_FAILING_CODE
  router.add("norm", [](Point p) { return p.x * p.x + p.y * p.y; });
#else
  router.add("norm", [](std::vector<double> p) { return p.at(0) * p.at(0) + p.at(1) * p.at(1); });
#endif
}
