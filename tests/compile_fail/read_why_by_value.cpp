// SPDX-License-Identifier: MIT
// A JsonTraits read that takes `why` by value could never tell the client what was wrong: it
// is named and told the signature read must have, instead of compiling and losing the reason.
// expect-error: json_traits_read_has_the_wrong_signature_for<app::Color>
// expect-error: rpc::JsonTraits<T>::read must be `static bool read(
#include <batchrpc/router.hpp>

#include <string>

namespace app {
struct Color {
  unsigned rgb = 0;
};
}  // namespace app

template <>
struct rpc::JsonTraits<app::Color> {
#if BATCHRPC_TEST_FAILING_CODE
  static bool read(const rpc::Value& v, app::Color& out, std::string why) {
#else
  static bool read(const rpc::Value& v, app::Color& out, std::string& why) {
#endif
    if (!v.IsUint()) return why = "expected a colour", false;
    out.rgb = v.GetUint();
    return true;
  }
};

void register_methods(rpc::Router& router) {
  router.add("red", [](app::Color colour) { return colour.rgb >> 16; });
}
