// SPDX-License-Identifier: MIT
// A BATCHRPC_FIELDS struct read from params with a const member names the struct and the type,
// and nothing follows from reading into it.
// expect-error: struct_field_is_const<app::Limits, int>
// expect-error: a const data member cannot be read from JSON
// reject-output: binding reference
#include <batchrpc/router.hpp>

namespace app {
struct Limits {
#if BATCHRPC_TEST_FAILING_CODE
  const int most = 0;
#else
  int most = 0;
#endif
};
BATCHRPC_FIELDS(Limits, most);
}  // namespace app

void register_methods(rpc::Router& router) {
  router.add("most", [](const app::Limits& limits) { return limits.most; });
}
