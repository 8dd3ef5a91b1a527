// SPDX-License-Identifier: MIT
// A BATCHRPC_FIELDS struct read from params with a member that cannot be read names that
// member's type first, and nothing follows from reading it.
// expect-error: struct_field_has_no_json_binding<app::Request, app::Handle>
// expect-error: a field's type cannot be read from JSON
// reject-output: nested name specifier
#include <batchrpc/router.hpp>

namespace app {
struct Handle {};
struct Request {
  int code = 0;
#if BATCHRPC_TEST_FAILING_CODE
  Handle handle;
#endif
};
#if BATCHRPC_TEST_FAILING_CODE
BATCHRPC_FIELDS(Request, code, handle);
#else
BATCHRPC_FIELDS(Request, code);
#endif
}  // namespace app

void register_methods(rpc::Router& router) {
  router.add("request", [](const app::Request& r) { return r.code; });
}
