// SPDX-License-Identifier: MIT
// A member function's object may not be a temporary: the router would call a dead object.
// expect-error: member_function_object_is_a_temporary<Calc>
// expect-error: not a temporary
#include <batchrpc/router.hpp>

struct Calc {
  int add(int a, int b) const { return a + b; }
};

void register_methods(rpc::Router& router, [[maybe_unused]] Calc* calc) {
#if BATCHRPC_TEST_FAILING_CODE
  router.add("add", &Calc::add, Calc{});
#else
  router.add("add", &Calc::add, calc);
#endif
}
