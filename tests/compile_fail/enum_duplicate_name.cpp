// SPDX-License-Identifier: MIT
// An enumerator listed twice in BATCHRPC_ENUM is refused where the enum is bound.
// expect-error: two enumerators of Color are listed twice
#include <batchrpc/router.hpp>

namespace paint {
enum class Color { red, green };
#if BATCHRPC_TEST_FAILING_CODE
BATCHRPC_ENUM(Color, red, green, red);
#else
BATCHRPC_ENUM(Color, red, green);
#endif
}  // namespace paint

void register_methods(rpc::Router& router) {
  router.add("favourite", [] { return paint::Color::green; });
}
