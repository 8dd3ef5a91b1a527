// SPDX-License-Identifier: MIT
// rpc::names must give one name per bound parameter (Context& takes none).
// expect-error: names_given_for_bound_parameters<3, 2>
// expect-error: must give exactly one name per bound parameter
#include <batchrpc/router.hpp>

void register_methods(rpc::Router& router) {
#if BATCHRPC_TEST_FAILING_CODE
  router.add("sub", [](int a, int b, rpc::Context&) { return a - b; }, rpc::names("a", "b", "ctx"));
#else
  router.add("sub", [](int a, int b, rpc::Context&) { return a - b; }, rpc::names("a", "b"));
#endif
}
