// SPDX-License-Identifier: MIT
// Reading a result into a type whose JsonTraits read lacks the `why` argument names that type
// and the signature read must have; it does not advise to specialise JsonTraits.
// expect-error: json_traits_read_has_the_wrong_signature_for<app::Celsius>
// expect-error: rpc::JsonTraits<T>::read must be `static bool read(
// reject-output: specialise rpc::JsonTraits<T> with read()
#include <batchrpc/client.hpp>

#include <string>
#include <string_view>

namespace app {
struct Celsius {
  double degrees = 0;
};
}  // namespace app

template <>
struct rpc::JsonTraits<app::Celsius> {
#if BATCHRPC_TEST_FAILING_CODE
  static bool read(const rpc::Value& v, app::Celsius& out) {
#else
  static bool read(const rpc::Value& v, app::Celsius& out, std::string&) {
#endif
    if (!v.IsNumber()) return false;
    out.degrees = v.GetDouble();
    return true;
  }
};

double first(const rpc::BatchBuilder& batch, std::string_view reply) {
  const rpc::Replies replies = rpc::correlate(batch, reply);
  return replies.result<app::Celsius>(1).degrees;
}
