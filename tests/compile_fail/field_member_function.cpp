// SPDX-License-Identifier: MIT
// rpc::field given a member function, not a data member, names the member function.
// expect-error: field_names_a_member_function<int (app::Tool::*)() const>
// expect-error: rpc::field names a data member
// reject-output: invalid use of non-static member function
#include <batchrpc/router.hpp>

namespace app {
struct Tool {
  int size() const { return static_cast<int>(name.size()); }
  std::string name;
};
constexpr auto batchrpc_fields(rpc::TypeTag<Tool>) {
#if BATCHRPC_TEST_FAILING_CODE
  return rpc::field_list<Tool>({}, rpc::field("size", &Tool::size));
#else
  return rpc::field_list<Tool>({}, rpc::field("name", &Tool::name));
#endif
}
}  // namespace app

void register_methods(rpc::Router& router) {
  router.add("name", [](const app::Tool& tool) { return tool.name; });
}
