// SPDX-License-Identifier: MIT
// A handler taking rpc::Params and a bound parameter too names the handler.
// expect-error: handler_takes_params_and_bound_parameters_for<
// expect-error: a handler taking rpc::Params reads all params itself
#include <batchrpc/router.hpp>

void register_methods(rpc::Router& router) {
#if BATCHRPC_TEST_FAILING_CODE
  router.add("size", [](const rpc::Params& params, int extra) { return params.size() > 1 ? extra : 0; });
#else
  router.add("size", [](const rpc::Params& params) { return params.size(); });
#endif
}
