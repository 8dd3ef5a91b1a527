// SPDX-License-Identifier: MIT
// rpc::positional with a value that has no JSON form names that value's type.
// expect-error: type_has_no_json_form_for<app::Handle>
// expect-error: rpc::positional takes values with a JSON form
#include <batchrpc/client.hpp>

namespace app {
struct Handle {
  int fd = 0;
};
}  // namespace app

rpc::Json params(const app::Handle& handle) {
#if BATCHRPC_TEST_FAILING_CODE
  return rpc::positional(1, handle);
#else
  return rpc::positional(1, handle.fd);
#endif
}
