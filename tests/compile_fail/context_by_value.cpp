// SPDX-License-Identifier: MIT
// rpc::Context taken by value names rpc::Context; it is taken by reference.
// expect-error: injected_parameter_passed_the_wrong_way_for<rpc::
// expect-error: take rpc::Context and rpc::ResultWriter by reference
#include <batchrpc/router.hpp>

void register_methods(rpc::Router& router) {
#if BATCHRPC_TEST_FAILING_CODE
  router.add("cancelled", [](rpc::Context context) { return context.stop_requested(); });
#else
  router.add("cancelled", [](rpc::Context& context) { return context.stop_requested(); });
#endif
}
