#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs the Debian packages batchrpc's build needs, if any are missing (libcpp-httplib-dev:
# the HTTP client of the end-to-end tests).
#   scripts/deps.sh [package...]   (default: rapidjson-dev doctest-dev libbenchmark-dev
#                                   libcpp-httplib-dev libeigen3-dev libboost1.81-dev
#                                   libssl-dev pkg-config; and Node.js
#                                   with npm, clang and its fuzzer runtime when missing)
# Runs apt-get (update first) only when something is missing; uses sudo when not root.
set -euo pipefail

if [[ $# -gt 0 ]]; then
  packages=("$@")
else
  packages=(rapidjson-dev doctest-dev libbenchmark-dev libcpp-httplib-dev libeigen3-dev libboost1.81-dev libssl-dev pkg-config)
fi

missing=()
for pkg in "${packages[@]}"; do
  status="$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)"
  if [[ "$status" != *"install ok installed"* ]]; then
    missing+=("$pkg")
  fi
done

# Commands checked by name, not package: a machine may have Node.js from elsewhere (with npm
# inside), and Debian's npm would then conflict with it. Only with the default list.
if [[ $# -eq 0 ]]; then
  command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || missing+=(nodejs npm)
  command -v clang++ >/dev/null 2>&1 || missing+=(clang)
  if ! compgen -G "/usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a" >/dev/null; then
    missing+=(libclang-rt-dev)
  fi
fi

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "deps: all present (${packages[*]})"
  exit 0
fi
echo "deps: installing ${missing[*]}"

if ! command -v apt-get >/dev/null 2>&1; then
  echo "deps: error: apt-get not found; install these packages by hand: ${missing[*]}" >&2
  exit 1
fi

if [[ "$(id -u)" -eq 0 ]]; then
  as_root=(env DEBIAN_FRONTEND=noninteractive)
elif command -v sudo >/dev/null 2>&1; then
  as_root=(sudo env DEBIAN_FRONTEND=noninteractive)
else
  echo "deps: error: need root or sudo to install: ${missing[*]}" >&2
  echo "deps: run as root: apt-get update && apt-get install -y ${missing[*]}" >&2
  exit 1
fi

if ! "${as_root[@]}" apt-get update; then
  echo "deps: error: 'apt-get update' failed; cannot install ${missing[*]}" >&2
  exit 1
fi
if ! "${as_root[@]}" apt-get install -y --no-install-recommends "${missing[@]}"; then
  echo "deps: error: 'apt-get install ${missing[*]}' failed" >&2
  exit 1
fi
echo "deps: installed ${missing[*]}"
