// SPDX-License-Identifier: MIT
// rpc::named with an odd number of arguments names the count; a name that is not a string
// names its type.
// expect-error: named_takes_name_value_pairs_not<3>
// expect-error: rpc::named takes name/value pairs
// expect-error: param_name_is_not_a_string<int>
// expect-error: every name must be a string
#include <batchrpc/client.hpp>

rpc::Json odd() {
#if BATCHRPC_TEST_FAILING_CODE
  return rpc::named("a", 1, "b");
#else
  return rpc::named("a", 1, "b", 2);
#endif
}

rpc::Json unnamed() {
#if BATCHRPC_TEST_FAILING_CODE
  return rpc::named("a", 1, 2, 3);
#else
  return rpc::named("a", 1, "b", 3);
#endif
}
