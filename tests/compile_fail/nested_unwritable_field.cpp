// SPDX-License-Identifier: MIT
// A BATCHRPC_FIELDS struct whose member holds a type with no JSON form names the struct, that
// type, then the member's type as written.
// expect-error: struct_field_has_no_json_form<app::Reply, app::Opaque, std::optional<std::vector<app::Opaque
// expect-error: a field's type has no JSON form
#include <batchrpc/router.hpp>

#include <optional>
#include <vector>

namespace app {
struct Opaque {
  int handle = 0;
};
#if !BATCHRPC_TEST_FAILING_CODE
BATCHRPC_FIELDS(Opaque, handle);
#endif
struct Reply {
  int code = 0;
  std::optional<std::vector<Opaque>> details;
};
BATCHRPC_FIELDS(Reply, code, details);
}  // namespace app

void register_methods(rpc::Router& router) {
  router.add("reply", [] { return app::Reply{}; });
}
