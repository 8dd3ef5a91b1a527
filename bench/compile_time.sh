#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What including batchrpc costs a translation unit: compile time (user CPU), peak memory and
# headers pulled in, for the files in bench/compile_time/, as ratios to RapidJSON alone
# measured in the same repetition (these machines are noisy; a ratio travels, a time does not);
# and the stripped size of a minimal program, header-only against the compiled variant.
#
#   bash bench/compile_time.sh [REPETITIONS]     (default 5; CXX picks the compiler, g++)
#
# Prints a Markdown table: per file, the median over repetitions of time and of its ratio to
# the floor, with the ratios' spread (min-max). Asserts nothing: CI runs it so it cannot rot.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

repetitions="${1:-5}"
cxx="${CXX:-g++}"
command -v /usr/bin/time >/dev/null 2>&1 || bash scripts/deps.sh time
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

flags=(-std=c++20 -O2 -Iinclude)
header_only=()
compiled=(-DBATCHRPC_SEPARATE_COMPILATION)
probes=bench/compile_time

# name|source|mode: the files measured, in the order they run within each repetition.
cases=(
  "RapidJSON alone (floor)|rapidjson_alone.cpp|floor"
  "header-only, 1 handler|one_handler.cpp|header_only"
  "header-only, 11 handlers|eleven_handlers.cpp|header_only"
  "compiled variant, 1 handler|one_handler.cpp|compiled"
  "compiled variant, 11 handlers|eleven_handlers.cpp|compiled"
)

mode_flags() {
  case "$1" in
    compiled) echo "${compiled[@]}" ;;
    *) echo "${header_only[@]}" ;;
  esac
}

# Compiles one case to an object file; appends "seconds kilobytes" to its samples file.
measure() {
  local index="$1" source="$2" mode="$3"
  # shellcheck disable=SC2046
  /usr/bin/time -f "%U %M" -o "$work/time" "$cxx" "${flags[@]}" $(mode_flags "$mode") \
    -c "$probes/$source" -o "$work/probe.o"
  cat "$work/time" >> "$work/samples.$index"
}

for ((r = 0; r < repetitions; r++)); do
  for i in "${!cases[@]}"; do
    IFS='|' read -r _ source mode <<< "${cases[$i]}"
    measure "$i" "$source" "$mode"
  done
done

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
spread() { sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.2f-%.2f", lo, hi }'; }

echo "| file | user CPU (s) | ratio to floor (median, spread) | peak memory (MB) | headers |"
echo "|---|---|---|---|---|"
for i in "${!cases[@]}"; do
  IFS='|' read -r name source mode <<< "${cases[$i]}"
  # Per repetition: this case's time over the floor's time in the same repetition.
  paste -d' ' "$work/samples.$i" "$work/samples.0" | awk '{ printf "%.4f\n", $1 / $3 }' > "$work/ratios"
  seconds="$(cut -d' ' -f1 "$work/samples.$i" | median)"
  megabytes="$(cut -d' ' -f2 "$work/samples.$i" | median | awk '{ printf "%.0f", $1 / 1024 }')"
  # shellcheck disable=SC2046
  headers="$("$cxx" "${flags[@]}" $(mode_flags "$mode") -M "$probes/$source" | tr ' \\' '\n\n' |
             grep -c -E '\.(h|hpp|ipp|tcc)$|/c\+\+/[0-9]+/[a-z_]+$' || true)"
  printf '| %s | %.2f | %.2fx (%s) | %s | %s |\n' "$name" "$seconds" "$(median < "$work/ratios")" \
    "$(spread < "$work/ratios")" "$megabytes" "$headers"
done
per_handler() {  # (11 handlers - 1 handler) / 10, as a ratio to the floor, median over repetitions
  paste -d' ' "$work/samples.$1" "$work/samples.$2" "$work/samples.0" |
    awk '{ printf "%.4f\n", ($1 - $3) / 10 / $5 }' | median
}
echo
printf 'Each further handler: %.3fx the floor header-only, %.3fx with the compiled variant.\n' \
  "$(per_handler 2 1)" "$(per_handler 4 3)"

# Size of a minimal program, stripped: header-only, and the compiled variant linked against its
# static library as is and with unused sections dropped.
"$cxx" "${flags[@]}" "${compiled[@]}" -ffunction-sections -fdata-sections -c src/batchrpc.cpp -o "$work/batchrpc.o"
ar rcs "$work/libbatchrpc.a" "$work/batchrpc.o"
"$cxx" "${flags[@]}" -s "$probes/one_handler.cpp" -o "$work/header_only" -lpthread
"$cxx" "${flags[@]}" "${compiled[@]}" -s "$probes/one_handler.cpp" -o "$work/compiled" "$work/libbatchrpc.a" -lpthread
"$cxx" "${flags[@]}" "${compiled[@]}" -s -ffunction-sections -fdata-sections -Wl,--gc-sections \
  "$probes/one_handler.cpp" -o "$work/compiled_gc" "$work/libbatchrpc.a" -lpthread
for program in header_only compiled compiled_gc; do
  "$work/$program" > "$work/$program.out"
done
for program in compiled compiled_gc; do
  cmp -s "$work/header_only.out" "$work/$program.out" ||
    { echo "compile_time: $program disagrees with header_only" >&2; exit 1; }
done
echo
echo "Minimal program (one_handler.cpp), stripped: header-only $(stat -c %s "$work/header_only") bytes;" \
     "compiled variant $(stat -c %s "$work/compiled") bytes, $(stat -c %s "$work/compiled_gc") with --gc-sections."
