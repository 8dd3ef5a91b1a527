// SPDX-License-Identifier: MIT
// Handlers may run concurrently and are called as const: a mutable lambda is refused.
// expect-error: handler_must_be_callable_as_const_for<
// expect-error: handlers may run on many threads at once
#include <atomic>

#include <batchrpc/router.hpp>

void register_methods(rpc::Router& router) {
#if BATCHRPC_TEST_FAILING_CODE
  router.add("next", [n = 0]() mutable { return ++n; });
#else
  router.add("next", [n = std::make_shared<std::atomic<int>>(0)] { return ++*n; });
#endif
}
