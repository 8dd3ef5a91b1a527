// SPDX-License-Identifier: MIT
// A non-const member function on a const object is refused by name, and nothing follows from
// the call the router would make.
// expect-error: non_const_member_function_on_const_object<int (Counter::*)(int), const Counter>
// expect-error: the object is const but the member function is not
// reject-output: invoke
#include <batchrpc/router.hpp>

struct Counter {
  int next(int step) { return value += step; }
  int value = 0;
};

void register_methods(rpc::Router& router, [[maybe_unused]] const Counter& fixed,
                      [[maybe_unused]] Counter& counter) {
#if BATCHRPC_TEST_FAILING_CODE
  router.add("next", &Counter::next, fixed);
#else
  router.add("next", &Counter::next, counter);
#endif
}
