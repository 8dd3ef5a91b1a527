#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds the libFuzzer targets with Clang (ASan + UBSan) in build/fuzz and runs each one from a
# copy of its seed corpus, with the JSON dictionary, for a fixed number of executions (capped in
# time). Exits non-zero on any crash, leak, hang or oracle failure; the input is kept in
# build/fuzz/artifacts/.
#
#   tests/fuzz/run_fuzzers.sh                                   # CI smoke: ~15 s per target
#   FUZZ_RUNS=-1 FUZZ_SECONDS=600 tests/fuzz/run_fuzzers.sh router   # ten minutes of one target
#
# Environment: FUZZ_RUNS (executions per target; default per target, about 15 s each; -1: no
# count, the time cap ends the run), FUZZ_SECONDS (time cap per target, default 30), FUZZ_JOBS
# (build jobs, default 2), CXX_FUZZ (the compiler, default clang++). Needs Debian's clang and
# libclang-rt-<version>-dev (libFuzzer and the sanitizer runtimes).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

seconds="${FUZZ_SECONDS:-30}"
jobs="${FUZZ_JOBS:-2}"
compiler="${CXX_FUZZ:-clang++}"
build="build/fuzz"
targets=("$@")
if [ "${#targets[@]}" -eq 0 ]; then targets=(router params stream); fi

if ! command -v "$compiler" >/dev/null 2>&1; then
  echo "run_fuzzers: $compiler not found (Debian: apt-get install clang libclang-rt-14-dev)" >&2
  exit 1
fi

echo "=== batchrpc fuzz: configure and build ($build, $compiler) ==="
cmake -S . -B "$build" -DCMAKE_CXX_COMPILER="$compiler" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DBATCHRPC_FUZZ=ON -DBATCHRPC_BUILD_TESTS=ON -DBATCHRPC_BUILD_EXAMPLES=OFF \
  -DBATCHRPC_BUILD_BENCH=OFF -DBATCHRPC_WERROR=ON >"$build.configure.log" 2>&1 \
  || { cat "$build.configure.log" >&2; exit 1; }
build_targets=()
for t in "${targets[@]}"; do build_targets+=("fuzz_$t"); done
cmake --build "$build" --target "${build_targets[@]}" -j "$jobs"

mkdir -p "$build/artifacts"
status=0
for t in "${targets[@]}"; do
  corpus="$build/corpus/$t"
  rm -rf "$corpus"
  mkdir -p "$corpus"
  cp -R "tests/fuzz/corpus/$t/." "$corpus/"
  case "$t" in  # executions in about 15 s on one core (the targets differ in speed)
    params) default_runs=300000 ;;
    stream) default_runs=120000 ;;
    *) default_runs=150000 ;;
  esac
  runs="${FUZZ_RUNS:-$default_runs}"
  echo "=== batchrpc fuzz: $t ($runs runs, at most ${seconds} s, corpus $(find "$corpus" -type f | wc -l) files) ==="
  # Leaks are checked at exit; -rss_limit_mb bounds memory per input; -timeout flags a hang.
  if ! "$build/tests/fuzz/fuzz_$t" "$corpus" \
      -dict=tests/fuzz/json.dict -max_total_time="$seconds" -runs="$runs" \
      -timeout=10 -rss_limit_mb=2048 -max_len=8192 -print_final_stats=1 \
      -artifact_prefix="$build/artifacts/$t-" 2>"$build/$t.log"; then
    status=1
    echo "run_fuzzers: fuzz_$t FAILED; the input is in $build/artifacts/$t-*" >&2
    tail -n 60 "$build/$t.log" >&2
    echo "reproduce: $build/tests/fuzz/fuzz_$t $build/artifacts/$t-<name>" >&2
  else
    grep -E "^(stat::number_of_executed_units|stat::average_exec_per_sec|stat::peak_rss_mb|#[0-9]+ *DONE)" "$build/$t.log" || true
    echo "corpus: $(find "tests/fuzz/corpus/$t" -type f | wc -l) seeds -> $(find "$corpus" -type f | wc -l) files"
  fi
done
exit "$status"
