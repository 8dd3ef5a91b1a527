// SPDX-License-Identifier: MIT
// A result read into a container of a type with no default constructor names that type first,
// then the result type, instead of an error from inside the container's read.
// expect-error: result_type_must_be_default_constructible<app::Point, std::vector<app::Point
// expect-error: a result is read into a default-constructed T
// reject-output: no matching function
#include <batchrpc/client.hpp>

#include <string_view>
#include <vector>

namespace app {
struct Point {
#if BATCHRPC_TEST_FAILING_CODE
  Point(int px, int py) : x(px), y(py) {}
#endif
  int x = 0;
  int y = 0;
};
BATCHRPC_FIELDS(Point, x, y);
}  // namespace app

std::size_t count(const rpc::BatchBuilder& batch, std::string_view reply) {
  const rpc::Replies replies = rpc::correlate(batch, reply);
  return replies.result<std::vector<app::Point>>(1).size();
}
