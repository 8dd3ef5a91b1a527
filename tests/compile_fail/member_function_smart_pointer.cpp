// SPDX-License-Identifier: MIT
// A smart pointer as a member function's object is refused: the router would keep the address
// of the caller's variable, not of the object.
// expect-error: object_is_not_of_the_member_functions_class<const std::shared_ptr<Calc>, Calc>
// expect-error: pass the member function's object itself
#include <batchrpc/router.hpp>

#include <memory>

struct Calc {
  int add(int a, int b) const { return a + b; }
};

void register_methods(rpc::Router& router, const std::shared_ptr<Calc>& calc) {
#if BATCHRPC_TEST_FAILING_CODE
  router.add("add", &Calc::add, calc);
#else
  router.add("add", &Calc::add, calc.get());
#endif
}
