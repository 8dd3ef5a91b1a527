// SPDX-License-Identifier: MIT
// Reply::as<T> of a struct whose field does not bind names that field's type: the struct is
// not refused first as one that might hold views into the reply.
// expect-error: struct_field_has_no_json_binding<app::Shape, app::Point, std::vector<app::Point
// expect-error: a field's type cannot be read from JSON
// reject-output: type_may_view_a_reply_that_is_gone
#include <batchrpc/peer.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace app {
struct Point {
  double x = 0;
  double y = 0;
};
#if !BATCHRPC_TEST_FAILING_CODE
BATCHRPC_FIELDS(Point, x, y);
#endif
struct Shape {
  std::string name;
  std::vector<Point> points;
};
BATCHRPC_FIELDS(Shape, name, points);
}  // namespace app

std::size_t corners(const rpc::Reply& reply) { return reply.as<app::Shape>().points.size(); }
