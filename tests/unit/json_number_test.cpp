// SPDX-License-Identifier: MIT
// Number text to double: std::from_chars where the standard library has it for floating point,
// std::strtod where it does not (libc++ before 20). Both must give the correctly rounded double,
// zero for values too small and a refusal for values too big, whichever one a build uses.
#include <batchrpc/detail/json_number.hpp>

#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>

#include <doctest/doctest.h>

namespace {

using rpc::detail::DoubleText;

struct Converted {
  DoubleText status = DoubleText::too_big;
  double value = 0;
};

Converted by_strtod(const std::string& text) {
  Converted out;
  out.status = rpc::detail::strtod_to_double(text.data(), text.data() + text.size(), out.value);
  return out;
}

Converted by_default(const std::string& text) {
  Converted out;
  out.status = rpc::detail::to_double(text.data(), text.data() + text.size(), out.value);
  return out;
}

std::uint64_t bits(double d) { return std::bit_cast<std::uint64_t>(d); }

// The shortest text that reads back as `d`.
std::string shortest(double d) {
  std::array<char, 64> buffer{};
  const auto end = std::to_chars(buffer.data(), buffer.data() + buffer.size(), d).ptr;
  return {buffer.data(), end};
}

void check_known(Converted (*convert)(const std::string&)) {
  struct Case {
    std::string text;
    DoubleText status;
    double value;
  };
  const Case cases[] = {
      {"0.1", DoubleText::ok, 0x1.999999999999ap-4},
      {"-0.0", DoubleText::ok, -0.0},
      {"4.9e-324", DoubleText::ok, std::numeric_limits<double>::denorm_min()},
      {"2.2250738585072011e-308", DoubleText::ok, 0x0.fffffffffffffp-1022},
      {"1.7976931348623157e308", DoubleText::ok, std::numeric_limits<double>::max()},
      {"9007199254740993", DoubleText::ok, 9007199254740992.0},  // halfway: rounds to even
      {"123456789012345678901234567890", DoubleText::ok, 1.2345678901234568e29},
      {"0.00017e330", DoubleText::too_big, 0},
      {"1.7976931348623159e308", DoubleText::too_big, 0},
      {"0.79e309", DoubleText::too_big, 0},
      {"1e400", DoubleText::too_big, 0},
      {"1e-400", DoubleText::too_small, 0},
      {"-123e-400", DoubleText::too_small, 0},
      {"0." + std::string(400, '0') + "17e3", DoubleText::too_small, 0},
  };
  for (const Case& c : cases) {
    CAPTURE(c.text);
    const Converted got = convert(c.text);
    CHECK(got.status == c.status);
    if (c.status == DoubleText::ok) CHECK(bits(got.value) == bits(c.value));
  }
}

}  // namespace

TEST_CASE(
    "number text converts to the correctly rounded double, by strtod and by the build's default") {
  SUBCASE("known values and both ends of the range") {
    check_known(by_strtod);
    check_known(by_default);
  }
  SUBCASE("every double read back from its shortest text") {
    std::mt19937_64 random(20261205);
    for (int i = 0; i < 20000; ++i) {
      const double d = std::bit_cast<double>(random());
      if (!std::isfinite(d)) continue;
      const std::string text = shortest(d);
      CAPTURE(text);
      const Converted strtod = by_strtod(text);
      const Converted chosen = by_default(text);
      REQUIRE(strtod.status == DoubleText::ok);
      REQUIRE(chosen.status == DoubleText::ok);
      REQUIRE(bits(strtod.value) == bits(d));
      REQUIRE(bits(chosen.value) == bits(d));
    }
  }
}
