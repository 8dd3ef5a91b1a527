// SPDX-License-Identifier: MIT
// The reference model the embed tests share (its weights are generated once per test binary).
#pragma once

#include "embed/hashing_model.hpp"

namespace test {

/// The default reference model (384 dimensions, seed 42), built on first use.
inline const embed::HashingModel& model() {
  static const embed::HashingModel shared{{.dimensions = 384, .seed = 42}};
  return shared;
}

}  // namespace test
