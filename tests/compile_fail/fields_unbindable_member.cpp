// SPDX-License-Identifier: MIT
// A BATCHRPC_FIELDS struct with a member that has no JSON form names that member's type.
// expect-error: struct_field_has_no_json_form<app::Reply, app::Opaque>
// expect-error: a field's type has no JSON form
#include <batchrpc/router.hpp>

namespace app {
struct Opaque {};
struct Reply {
  int code = 0;
#if BATCHRPC_TEST_FAILING_CODE
  Opaque detail;
#endif
};
#if BATCHRPC_TEST_FAILING_CODE
BATCHRPC_FIELDS(Reply, code, detail);
#else
BATCHRPC_FIELDS(Reply, code);
#endif
}  // namespace app

void register_methods(rpc::Router& router) {
  router.add("reply", [] { return app::Reply{}; });
}
