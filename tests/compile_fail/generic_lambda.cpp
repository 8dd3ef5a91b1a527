// SPDX-License-Identifier: MIT
// A handler with `auto` parameters has no signature to bind params to.
// expect-error: handler_parameters_cannot_be_seen_for<
// expect-error: cannot see the handler's parameters
#include <batchrpc/router.hpp>

void register_methods(rpc::Router& router) {
#if BATCHRPC_TEST_FAILING_CODE
  router.add("add", [](auto a, auto b) { return a + b; });
#else
  router.add("add", [](int a, int b) { return a + b; });
#endif
}
