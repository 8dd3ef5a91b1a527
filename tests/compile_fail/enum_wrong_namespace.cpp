// SPDX-License-Identifier: MIT
// BATCHRPC_ENUM written outside the enum's namespace fails at the macro. Before, it compiled
// and the enum silently travelled as an integer: "urgent" was refused as "expected an integer".
// expect-error: write BATCHRPC_ENUM(shop::Priority, ...) in the namespace that declares shop::Priority
#include <batchrpc/router.hpp>

namespace shop {
enum class Priority { low, urgent };
#if !BATCHRPC_TEST_FAILING_CODE
BATCHRPC_ENUM(Priority, low, urgent);
#endif
}  // namespace shop

#if BATCHRPC_TEST_FAILING_CODE
BATCHRPC_ENUM(shop::Priority, low, urgent);
#endif

void register_methods(rpc::Router& router) {
  router.add("escalate", [](shop::Priority p) { return p == shop::Priority::low ? shop::Priority::urgent : p; });
}
