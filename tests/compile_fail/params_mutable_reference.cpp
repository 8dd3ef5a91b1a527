// SPDX-License-Identifier: MIT
// rpc::Params taken by non-const reference is named, with how to take it.
// expect-error: injected_parameter_passed_the_wrong_way_for<rpc::
// expect-error: rpc::Responder and rpc::Params by value or const&
#include <batchrpc/router.hpp>

void register_methods(rpc::Router& router) {
#if BATCHRPC_TEST_FAILING_CODE
  router.add("count", [](rpc::Params& params) { return params.size(); });
#else
  router.add("count", [](const rpc::Params& params) { return params.size(); });
#endif
}
