// SPDX-License-Identifier: MIT
// A JsonTraits read without the `why` argument is named and told the signature read must
// have; not told to specialise the JsonTraits it did specialise.
// expect-error: json_traits_read_has_the_wrong_signature_for<Celsius>
// expect-error: rpc::JsonTraits<T>::read must be `static bool read(
#include <batchrpc/router.hpp>

#include <string>

struct Celsius {
  double degrees = 0;
};

template <>
struct rpc::JsonTraits<Celsius> {
#if BATCHRPC_TEST_FAILING_CODE
  static bool read(const rpc::Value& v, Celsius& out) {
#else
  static bool read(const rpc::Value& v, Celsius& out, std::string&) {
#endif
    if (!v.IsNumber()) return false;
    out.degrees = v.GetDouble();
    return true;
  }
};

void register_methods(rpc::Router& router) {
  router.add("fahrenheit", [](Celsius c) { return c.degrees * 9 / 5 + 32; });
}
