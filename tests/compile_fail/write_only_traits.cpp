// SPDX-License-Identifier: MIT
// A parameter whose JsonTraits only writes is named, and told that it needs a read.
// expect-error: json_traits_has_write_but_no_read_for<Celsius>
// expect-error: this type can be written but not read (a result, not a parameter)
#include <batchrpc/router.hpp>

#include <string>

struct Celsius {
  double degrees = 0;
};

template <>
struct rpc::JsonTraits<Celsius> {
  static void write(rpc::ResultWriter& w, const Celsius& c) { w.write(c.degrees); }
#if !BATCHRPC_TEST_FAILING_CODE
  static bool read(const rpc::Value& v, Celsius& out, std::string& why) {
    if (!v.IsNumber()) return why = "expected a number", false;
    out.degrees = v.GetDouble();
    return true;
  }
#endif
};

void register_methods(rpc::Router& router) {
  router.add("warmer", [](Celsius c) { return Celsius{c.degrees + 1}; });
}
