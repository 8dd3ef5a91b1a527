#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Network transports against peers, on loopback: builds what it needs, runs every measurement
# in rounds (the servers interleaved: A B C D, A B C D, ...) and prints markdown tables (medians
# and min-max over rounds; ratios as the median of per-round ratios). About 12 minutes.
#
#   bench/net/run.sh                  # from the repository root, or anywhere
#   ROUNDS=3 DEFENCE_ROUNDS=1 bench/net/run.sh
#
# Needs: cmake and the release preset's dependencies, g++ (C++20), Boost headers (>= 1.81),
# wrk, Node.js with npm, pkg-config and libjsonrpccpp-dev. Raw results and logs go to
# build/bench-net/ (RAW=... to choose the raw file).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"

ROUNDS=${ROUNDS:-5}                 # throughput rounds
DURATION=${DURATION:-5}             # seconds per throughput run
DEFENCE_ROUNDS=${DEFENCE_ROUNDS:-3}
IDLE=${IDLE:-10000}                 # idle connections held against rpc::net
SLOW=${SLOW:-1000}                  # slowloris clients against rpc::net
SLOW_SECONDS=${SLOW_SECONDS:-16}    # past the 10 s request_timeout
PORT=${PORT:-18400}                 # PORT+1..PORT+5 for the throughput servers, PORT+10.. for the rest
OUT=build/bench-net
BIN=$OUT/bin
SPEC=$BIN/spec_server
RAW=${RAW:-$OUT/raw-$(date -u +%Y%m%dT%H%M%SZ).txt}
HOST=127.0.0.1

mkdir -p "$BIN" "$OUT/logs"
say() { echo "[$(date -u +%H:%M:%S)] $*" >&2; }

# ---- Build -------------------------------------------------------------------------------
if [[ ! -f build/release/CMakeCache.txt ]]; then
  say "configuring the release preset"
  cmake --preset release >"$OUT/logs/configure.log"
fi
say "building spec_server"
cmake --build build/release --target spec_server batchrpc_client_load -j2 >"$OUT/logs/build.log"
# Copies, so that a rebuild of the tree during the run cannot change what is measured.
cp build/release/examples/spec_server "$BIN/spec_server"
cp build/release/bench/batchrpc_client_load "$BIN/client_load"
CXXFLAGS_NET=(-std=c++20 -O2 -Wall -Wextra -pthread)
for tool in ws_load idle_conns slowloris; do
  if [[ ! "$BIN/$tool" -nt bench/net/$tool.cpp || ! "$BIN/$tool" -nt bench/net/net_common.hpp ]]; then
    say "building $tool"
    g++ "${CXXFLAGS_NET[@]}" "bench/net/$tool.cpp" -o "$BIN/$tool"
  fi
done
if [[ ! "$BIN/jsonrpccpp_server" -nt bench/net/jsonrpccpp_server.cpp ]]; then
  say "building jsonrpccpp_server"
  # shellcheck disable=SC2046  # pkg-config prints several words on purpose
  g++ -std=c++20 -O2 -pthread bench/net/jsonrpccpp_server.cpp -o "$BIN/jsonrpccpp_server" \
    $(pkg-config --cflags --libs libjsonrpccpp-server libjsonrpccpp-common)
fi
if [[ ! -d bench/net/node_modules/jayson ]]; then
  say "installing jayson (npm ci)"
  (cd bench/net && npm ci --no-audit --no-fund >/dev/null)
fi

# ---- Servers -----------------------------------------------------------------------------
declare -A PIDS=()
stop_server() {  # name
  local pid=${PIDS[$1]:-}
  [[ -z "$pid" ]] && return 0
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 150); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  unset "PIDS[$1]"
}
stop_all() {
  for name in "${!PIDS[@]}"; do stop_server "$name"; done
}
trap stop_all EXIT

# start_server NAME PORT: starts server NAME (new, new2, jsonrpccpp, jayson) on PORT and
# waits until it answers a ping.
start_server() {
  local name=$1 port=$2
  local log="$OUT/logs/$name-$port.log"
  case $name in
    new) "$SPEC" --http --host $HOST --port "$port" --threads 2 --max-connections 20000 >"$log" 2>&1 & ;;
    new2) "$SPEC" --http --host $HOST --port "$port" --threads 2 --io-threads 1 >"$log" 2>&1 & ;;
    jsonrpccpp) "$BIN/jsonrpccpp_server" "$port" >"$log" 2>&1 & ;;
    jayson) node bench/net/jayson_server.js "$port" >"$log" 2>&1 & ;;
  esac
  PIDS[$name]=$!
  for _ in $(seq 100); do
    if curl -s -m 1 -H 'Content-Type: application/json' -d '{"jsonrpc":"2.0","method":"ping","id":1}' \
      "http://$HOST:$port/" 2>/dev/null | grep -q '"result"'; then
      return 0
    fi
    sleep 0.1
  done
  echo "run.sh: $name did not start on port $port (see $log)" >&2
  exit 1
}

# The batch of 100 pings, and a check that a server answers it with 100 results.
BATCH=$(python3 -c 'print("[" + ",".join("{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":%d}" % i for i in range(1, 101)) + "]")')
check_server() {  # name port
  local single batch results
  single=$(curl -s -m 5 -H 'Content-Type: application/json' -d '{"jsonrpc":"2.0","method":"ping","id":1}' "http://$HOST:$2/")
  batch=$(curl -s -m 5 -H 'Content-Type: application/json' -d "$BATCH" "http://$HOST:$2/")
  results=$(grep -o '"result"' <<<"$batch" | wc -l)
  echo "check $1: singleton -> $single; batch of 100 -> $results results, $(wc -c <<<"$batch") bytes" | tee -a "$OUT/logs/checks.log" >&2
}

# record LABELS... < tool output: appends the labelled RESULT line to the raw file.
record() {
  local line
  line=$(grep '^RESULT' || true)
  if [[ -z "$line" ]]; then
    echo "run.sh: no result for $*" >&2
    return 0
  fi
  echo "$* load1=$(cut -d' ' -f1 /proc/loadavg) ${line#RESULT }" | tee -a "$RAW" >&2
}

# CPU seconds (user + system, all threads) process PID has used so far.
cpu_seconds() {
  awk -v tck="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / tck }' "/proc/$1/stat"
}

# measure KIND ROUND NAME N COMMAND...: runs a load tool against server NAME and records its
# result with the server's CPU time during the run (on 2 shared vCPUs requests/s says how much
# CPU a server got; CPU per request says how well it used it).
measure() {
  local kind=$1 round=$2 name=$3 n=$4 out before after
  shift 4
  before=$(cpu_seconds "${PIDS[$name]}")
  out=$("$@")
  after=$(cpu_seconds "${PIDS[$name]}")
  record kind="$kind" round="$round" server="$name" workload="$n" \
    server_cpu_s="$(awk -v a="$before" -v b="$after" 'BEGIN { printf "%.2f", b - a }')" <<<"$out"
}

declare -A PORTS=([new]=$((PORT + 1)) [jsonrpccpp]=$((PORT + 3)) [jayson]=$((PORT + 4))
  [new2]=$((PORT + 5)))
# new: rpc::net as configured by default (one I/O thread per hardware thread); new2: with one
# I/O thread, to tell what the others cost or bring.
HTTP_ORDER=(new jsonrpccpp jayson new2)
WS_ORDER=(new jayson)  # libjson-rpc-cpp speaks no WebSocket
CLIENT_HTTP_ORDER=(new jsonrpccpp jayson)  # load through rpc::net::Client as well

say "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); load $(cut -d' ' -f1-3 /proc/loadavg)"
say "batchrpc at $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- include src 2>/dev/null || echo ' with uncommitted changes in include/ or src/')"
say "raw results: $RAW"
: >"$RAW"

# ---- Throughput: HTTP and WebSocket, in rounds -----------------------------------------------
for name in "${HTTP_ORDER[@]}"; do start_server "$name" "${PORTS[$name]}"; done
for name in "${HTTP_ORDER[@]}"; do check_server "$name" "${PORTS[$name]}"; done
say "warming up"
for name in "${HTTP_ORDER[@]}"; do
  wrk -t2 -c64 -d2s -s bench/net/post.lua "http://$HOST:${PORTS[$name]}/" -- 100 >/dev/null
done

for round in $(seq "$ROUNDS"); do
  say "round $round of $ROUNDS (load $(cut -d' ' -f1-3 /proc/loadavg))"
  for n in 1 100; do
    for name in "${HTTP_ORDER[@]}"; do
      measure http "$round" "$name" "$n" \
        wrk -t2 -c64 -d"${DURATION}s" -s bench/net/post.lua "http://$HOST:${PORTS[$name]}/" -- "$n"
    done
    for name in "${WS_ORDER[@]}"; do
      measure ws "$round" "$name" "$n" "$BIN/ws_load" $HOST "${PORTS[$name]}" 64 "$DURATION" "$n" 2
    done
    for name in "${CLIENT_HTTP_ORDER[@]}"; do
      measure client_http "$round" "$name" "$n" "$BIN/client_load" $HOST "${PORTS[$name]}" http 64 "$DURATION" "$n"
    done
    for name in "${WS_ORDER[@]}"; do
      measure client_ws "$round" "$name" "$n" "$BIN/client_load" $HOST "${PORTS[$name]}" websocket 64 "$DURATION" "$n"
    done
  done
done
stop_all

# ---- Defences: a fresh server for each run -----------------------------------------------
next_port=$((PORT + 10))
for round in $(seq "$DEFENCE_ROUNDS"); do
  say "defence round $round of $DEFENCE_ROUNDS (load $(cut -d' ' -f1-3 /proc/loadavg))"
  for name in new; do
    count=$IDLE
    start_server "$name" $next_port
    "$BIN/idle_conns" $HOST $next_port "${PIDS[$name]}" "$count" 10 2>>"$OUT/logs/idle_conns.log" \
      | record kind=idle round="$round" server="$name"
    stop_server "$name"
    next_port=$((next_port + 1))
  done
  for name in new; do
    count=$SLOW
    start_server "$name" $next_port
    "$BIN/slowloris" $HOST $next_port "$count" "$SLOW_SECONDS" \
      | record kind=slow round="$round" server="$name" seconds="$SLOW_SECONDS"
    stop_server "$name"
    next_port=$((next_port + 1))
  done
done

say "done (load $(cut -d' ' -f1-3 /proc/loadavg))"
python3 bench/net/summarize.py "$RAW"
