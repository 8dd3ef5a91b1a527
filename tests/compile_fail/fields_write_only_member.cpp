// SPDX-License-Identifier: MIT
// A BATCHRPC_FIELDS struct read from params, with a field whose JsonTraits only writes, is told
// that the JsonTraits needs a read (not to specialise the JsonTraits it did specialise), naming
// the element first, then the field's type.
// expect-error: json_traits_has_write_but_no_read_for<app::Celsius, std::vector<app::Celsius
// expect-error: this type can be written but not read
// reject-output: specialise rpc::JsonTraits<T>.
#include <batchrpc/router.hpp>

#include <string>
#include <vector>

namespace app {
struct Celsius {
  double degrees = 0;
};
}  // namespace app

template <>
struct rpc::JsonTraits<app::Celsius> {
  static void write(rpc::ResultWriter& w, const app::Celsius& c) { w.write(c.degrees); }
#if !BATCHRPC_TEST_FAILING_CODE
  static bool read(const rpc::Value& v, app::Celsius& out, std::string& why) {
    if (!v.IsNumber()) return why = "expected a number", false;
    out.degrees = v.GetDouble();
    return true;
  }
#endif
};

namespace app {
struct Log {
  std::vector<Celsius> readings;
};
BATCHRPC_FIELDS(Log, readings);
}  // namespace app

void register_methods(rpc::Router& router) {
  router.add("count", [](const app::Log& log) { return log.readings.size(); });
}
