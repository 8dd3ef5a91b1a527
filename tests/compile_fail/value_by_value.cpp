// SPDX-License-Identifier: MIT
// An rpc::Value parameter taken by value (it is a view into the request and cannot be copied)
// is named, with how to take it; not a failed std::invoke deep in the library.
// expect-error: bound_parameter_passed_the_wrong_way_for<rapidjson::GenericValue<
// expect-error: rpc::Value as const rpc::Value&
#include <batchrpc/router.hpp>

void register_methods(rpc::Router& router) {
#if BATCHRPC_TEST_FAILING_CODE
  router.add("is_null", [](rpc::Value v) { return v.IsNull(); });
#else
  router.add("is_null", [](const rpc::Value& v) { return v.IsNull(); });
#endif
}
