// SPDX-License-Identifier: MIT
// A JsonTraits whose read returns void is named, and told the signature read must have; not
// told that the type has no binding at all.
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
  static void read(const rpc::Value& v, Celsius& out, std::string&) { out.degrees = v.GetDouble(); }
#else
  static bool read(const rpc::Value& v, Celsius& out, std::string& why) {
    if (!v.IsNumber()) return why = "expected a number", false;
    out.degrees = v.GetDouble();
    return true;
  }
#endif
};

void register_methods(rpc::Router& router) {
  router.add("warm", [](Celsius c) { return c.degrees > 20; });
}
