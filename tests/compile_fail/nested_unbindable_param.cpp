// SPDX-License-Identifier: MIT
// A parameter that is a container of a type with no JSON binding names that type first, then
// the parameter's type: the element is what needs binding, not the container.
// expect-error: handler_parameter_has_no_json_binding_for<app::Point, std::map<
// expect-error: a handler parameter has no JSON binding
#include <batchrpc/router.hpp>

#include <map>
#include <string>
#include <vector>

namespace app {
struct Point {
  double x = 0;
  double y = 0;
};
#if !BATCHRPC_TEST_FAILING_CODE
BATCHRPC_FIELDS(Point, x, y);
#endif
}  // namespace app

void register_methods(rpc::Router& router) {
  router.add("count", [](std::map<std::string, std::vector<app::Point>> paths) { return paths.size(); });
}
