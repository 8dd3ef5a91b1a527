// SPDX-License-Identifier: MIT
// A batch handler that cannot take std::span<rpc::BatchCall> names the handler.
// expect-error: batch_handler_is_not_callable_as_const_with_a_span<
// expect-error: a batch handler is called as const with std::span<rpc::BatchCall>
#include <batchrpc/router.hpp>

void register_methods(rpc::Router& router) {
#if BATCHRPC_TEST_FAILING_CODE
  router.add_batched("embed", [](std::vector<rpc::BatchCall>&) {});
#else
  router.add_batched("embed", [](std::span<rpc::BatchCall> calls) { static_cast<void>(calls); });
#endif
}
