#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Configures, builds and tests one CMake workflow preset (default: dev).
#   scripts/test.sh [dev|release|asan|tsan]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

preset="${1:-dev}"
bash scripts/deps.sh
cmake --workflow --preset "$preset"
