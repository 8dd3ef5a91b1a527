// SPDX-License-Identifier: MIT
// A bound parameter taken by mutable reference names that parameter's type.
// expect-error: bound_parameter_passed_the_wrong_way_for<std::vector<int>&>
// expect-error: take bound parameters by value or by const reference
#include <batchrpc/router.hpp>

void register_methods(rpc::Router& router) {
#if BATCHRPC_TEST_FAILING_CODE
  router.add("count", [](std::vector<int>& items) { return items.size(); });
#else
  router.add("count", [](const std::vector<int>& items) { return items.size(); });
#endif
}
