// SPDX-License-Identifier: MIT
// The doctest runner, compiled once for every test binary.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
