// SPDX-License-Identifier: MIT
// A JsonTraits read that is not static is named and told the signature read must have; not
// told to specialise the JsonTraits it did specialise.
// expect-error: json_traits_read_has_the_wrong_signature_for<app::Color, std::vector<app::Color
// expect-error: rpc::JsonTraits<T>::read must be `static bool read(
// reject-output: or specialise rpc::JsonTraits<T>
#include <batchrpc/router.hpp>

#include <string>
#include <vector>

namespace app {
struct Color {
  unsigned rgb = 0;
};
}  // namespace app

template <>
struct rpc::JsonTraits<app::Color> {
#if BATCHRPC_TEST_FAILING_CODE
  bool read(const rpc::Value& v, app::Color& out, std::string& why) {
#else
  static bool read(const rpc::Value& v, app::Color& out, std::string& why) {
#endif
    if (!v.IsUint()) return why = "expected a colour", false;
    out.rgb = v.GetUint();
    return true;
  }
};

void register_methods(rpc::Router& router) {
  router.add("paint", [](const std::vector<app::Color>& colours) { return colours.size(); });
}
