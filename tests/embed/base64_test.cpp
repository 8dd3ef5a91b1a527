// SPDX-License-Identifier: MIT
// The compact float encoding: little-endian float32 as padded base64, and back.
#include "embed/base64.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

TEST_SUITE("embed.base64") {
  TEST_CASE("known values: 1.0f is 00 00 80 3f") {
    CHECK(embed::base64::encode_floats(std::vector<float>{1.0f}) == "AACAPw==");
    CHECK(embed::base64::encode_floats(std::vector<float>{1.0f, -2.0f}) == "AACAPwAAAMA=");
    CHECK(embed::base64::encode_floats(std::vector<float>{0.0f, 1.0f, -2.0f}) ==
          "AAAAAAAAgD8AAADA");
    CHECK(embed::base64::encode_floats(std::vector<float>{}).empty());
  }

  TEST_CASE("every float comes back bit for bit, whatever the padding") {
    const std::vector<float> values{0.1f,
                                    -0.0f,
                                    3.4028235e38f,
                                    std::numeric_limits<float>::denorm_min(),
                                    -1.17549435e-38f,
                                    0.33333334f,
                                    12345.678f};
    for (std::size_t n = 0; n <= values.size(); ++n) {
      CAPTURE(n);
      const std::vector<float> part(values.begin(),
                                    values.begin() + static_cast<std::ptrdiff_t>(n));
      const std::string text = embed::base64::encode_floats(part);
      CHECK(text.size() == (4 * n + 2) / 3 * 4);
      const auto back = embed::base64::decode_floats(text);
      REQUIRE(back);
      REQUIRE(back->size() == n);
      for (std::size_t i = 0; i < n; ++i) {
        CHECK(std::signbit((*back)[i]) == std::signbit(part[i]));
        CHECK((*back)[i] == part[i]);
      }
    }
  }

  TEST_CASE("append_floats appends") {
    std::string text = "x";
    embed::base64::append_floats(std::vector<float>{1.0f}, text);
    CHECK(text == "xAACAPw==");
  }

  TEST_CASE("decoding refuses what encode_floats cannot make") {
    for (const char* bad : {"AACAPw=", "AACAP===", "AACA", "AACAPw=A",
                            "AA=APw==", "AACAP!==", "AACAPw==AACAPw==", "AAAAAAA="}) {
      CAPTURE(bad);
      CHECK_FALSE(embed::base64::decode_floats(bad));
    }
    CHECK(embed::base64::decode_floats("")->empty());
  }
}
