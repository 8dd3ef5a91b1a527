// SPDX-License-Identifier: MIT
// A JsonTraits write that takes its value by non-const reference is named and told the
// signature write must have; not told to specialise the JsonTraits it did specialise.
// expect-error: json_traits_write_has_the_wrong_signature_for<app::Color, std::vector<app::Color
// expect-error: rpc::JsonTraits<T>::write must be `static void write(
// reject-output: or specialise rpc::JsonTraits<T>
#include <batchrpc/router.hpp>

#include <cstddef>
#include <vector>

namespace app {
struct Color {
  unsigned rgb = 0;
};
}  // namespace app

template <>
struct rpc::JsonTraits<app::Color> {
#if BATCHRPC_TEST_FAILING_CODE
  static void write(rpc::ResultWriter& w, app::Color& c) { w.unsigned_integer(c.rgb); }
#else
  static void write(rpc::ResultWriter& w, const app::Color& c) { w.unsigned_integer(c.rgb); }
#endif
};

void register_methods(rpc::Router& router) {
  router.add("palette", [](int n) { return std::vector<app::Color>(static_cast<std::size_t>(n)); });
}
