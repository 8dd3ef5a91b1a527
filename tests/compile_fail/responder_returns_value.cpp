// SPDX-License-Identifier: MIT
// A handler that answers through rpc::Responder and also returns a result names that type.
// expect-error: handler_with_responder_must_return_void_not<bool>
// expect-error: a handler taking rpc::Responder answers through it
#include <batchrpc/router.hpp>

void register_methods(rpc::Router& router) {
#if BATCHRPC_TEST_FAILING_CODE
  router.add("later", [](rpc::Responder responder) { return responder.resolve(1); });
#else
  router.add("later", [](rpc::Responder responder) { responder.resolve(1); });
#endif
}
