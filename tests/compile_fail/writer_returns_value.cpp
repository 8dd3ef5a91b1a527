// SPDX-License-Identifier: MIT
// A handler that writes its result through rpc::ResultWriter& and also returns one names the
// type it returns.
// expect-error: handler_with_result_writer_must_return_void_not<int>
// expect-error: writes its result itself and must return void
#include <batchrpc/router.hpp>

void register_methods(rpc::Router& router) {
#if BATCHRPC_TEST_FAILING_CODE
  router.add("seven", [](rpc::ResultWriter& w) { w.write(7); return 7; });
#else
  router.add("seven", [](rpc::ResultWriter& w) { w.write(7); });
#endif
}
