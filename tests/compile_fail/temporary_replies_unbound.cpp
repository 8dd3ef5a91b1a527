// SPDX-License-Identifier: MIT
// A result type that does not bind at all, asked of a temporary Replies, is refused for what
// it is (no binding, naming the element at fault), not as a view into a reply that is gone.
// expect-error: type_has_no_json_binding_for<app::Point, std::vector<app::Point
// expect-error: needs rpc::JsonTraits<T>::read
// reject-output: type_may_view_a_reply_that_is_gone
#include <batchrpc/client.hpp>

#include <string_view>
#include <vector>

namespace app {
struct Point {
  double x = 0;
  double y = 0;
};
#if !BATCHRPC_TEST_FAILING_CODE
BATCHRPC_FIELDS(Point, x, y);
#endif
}  // namespace app

std::size_t count(const rpc::BatchBuilder& batch, std::string_view reply) {
  return rpc::correlate(batch, reply).result<std::vector<app::Point>>(1).size();
}
