#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds and runs the spec_demo example (Release preset).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/deps.sh
cmake --preset release
cmake --build --preset release --target spec_demo
./build/release/examples/spec_demo
