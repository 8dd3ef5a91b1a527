// SPDX-License-Identifier: MIT
// Replies::result<T>() for a T with no JSON binding names T, and nothing follows from reading it.
// expect-error: type_has_no_json_binding_for<app::Handle>
// expect-error: a result read as T needs rpc::JsonTraits<T>::read
// reject-output: nested name specifier
#include <batchrpc/client.hpp>

#include <string_view>

namespace app {
struct Handle {
  int fd = 0;
};
}  // namespace app

int fd(const rpc::BatchBuilder& batch, std::string_view reply) {
  const rpc::Replies replies = rpc::correlate(batch, reply);
#if BATCHRPC_TEST_FAILING_CODE
  return replies.result<app::Handle>(1).fd;
#else
  return replies.result<int>(1);
#endif
}
