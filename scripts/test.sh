#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Configures, builds and tests one CMake workflow preset (default: dev).
#   scripts/test.sh [dev|release|asan|tsan|libcxx]
# libcxx builds the library and its unit, spec and network suites with clang 19 and libc++ 19
# (Debian 12 has both): -fexperimental-library because libc++ 19 still counts <stop_token> experimental,
# -fdelayed-template-parsing because RapidJSON 1.1.0's document.h has a member that clang 19
# and later reject even when it is never used (GenericStringRef::operator=).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

preset="${1:-dev}"
bash scripts/deps.sh
if [[ "$preset" == libcxx ]]; then
  bash scripts/deps.sh clang-19 libc++-19-dev libc++abi-19-dev
fi
cmake --workflow --preset "$preset"
