// SPDX-License-Identifier: MIT
// A member function passed without its object says how to pass the object.
// expect-error: member_function_needs_its_object_for<int (Calc::*)(int, int) const>
// expect-error: a member function needs its object
#include <batchrpc/router.hpp>

struct Calc {
  int add(int a, int b) const { return a + b; }
};

void register_methods(rpc::Router& router, [[maybe_unused]] Calc& calc) {
#if BATCHRPC_TEST_FAILING_CODE
  router.add("add", &Calc::add);
#else
  router.add("add", &Calc::add, calc);
#endif
}
