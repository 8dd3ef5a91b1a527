// SPDX-License-Identifier: MIT
// A misspelt member in BATCHRPC_FIELDS is named, without a note for every step of the macro
// loop behind it (over a thousand lines before that loop's header was a system header).
// expect-error: speeed
// expect-error: is not a member of
// expect-error: app::Car
// reject-output: BATCHRPC_DETAIL_RESCAN
#include <batchrpc/router.hpp>

namespace app {
struct Car {
  double speed = 0;
  int wheels = 4;
};
#if BATCHRPC_TEST_FAILING_CODE
BATCHRPC_FIELDS(Car, speeed, wheels);
#else
BATCHRPC_FIELDS(Car, speed, wheels);
#endif
}  // namespace app

void register_methods(rpc::Router& router) {
  router.add("wheels", [](const app::Car& car) { return car.wheels; });
}
