#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds embed_server (Release preset) and sends it the embed plugin's sample batch over stdio:
# embed (base64), embed/sparse, embed/multi, rerank and one invalid call (-32602), answered as
# one JSON-RPC batch reply.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/deps.sh
cmake --preset release
cmake --build --preset release --target embed_server
./build/release/examples/embed_server --stdio < examples/embed/sample_batch.jsonl
