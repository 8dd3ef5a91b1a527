// SPDX-License-Identifier: MIT
// A return type with no JSON form is named in the first error, then what to return instead.
// expect-error: handler_result_has_no_json_form_for<Opaque>
// expect-error: the handler's return type has no JSON form
#include <batchrpc/router.hpp>

struct Opaque {};

void register_methods(rpc::Router& router) {
#if BATCHRPC_TEST_FAILING_CODE
  router.add("make", [] { return Opaque{}; });
#else
  router.add("make", [] { return std::map<std::string, int>{{"a", 1}}; });
#endif
}
