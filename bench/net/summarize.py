#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Turns the raw lines bench/net/run.sh collects into markdown tables.

Each raw line is key=value pairs: the run's labels (kind, round, server, workload) followed by
what the tool printed after "RESULT". Every figure is given as the median over rounds with the
spread (min-max); a ratio of ours to a peer is the median of the per-round ratios.

usage: summarize.py RAW_FILE
"""
import statistics
import sys
from collections import defaultdict

SERVERS = {
    "new": "A: batchrpc `rpc::net`",
    "httplib": "B: batchrpc cpp-httplib adapter",  # retired: in raw files of earlier runs only
    "jsonrpccpp": "C: libjson-rpc-cpp 0.7",
    "jayson": "D: jayson 5 (Node.js)",
    "new2": "E: A with `--io-threads 1`",
}
WORKLOADS = {"1": "singleton `ping`", "100": "batch of 100 `ping`"}


def parse(path):
    runs = []
    with open(path) as f:
        for line in f:
            fields = dict(item.split("=", 1) for item in line.split() if "=" in item)
            if "kind" in fields:
                runs.append(fields)
    return runs


def num(run, key):
    return float(run[key])


def cpu_per_request(run):
    """The server's CPU µs per request answered in a run, or None when not measured."""
    if "server_cpu_s" not in run or int(run.get("requests", 0)) == 0:
        return None
    return num(run, "server_cpu_s") * 1e6 / int(run["requests"])


def spread(values, fmt):
    if not values:
        return "n/a"
    med = statistics.median(values)
    if len(values) == 1 or fmt(min(values)) == fmt(max(values)):
        return fmt(med)
    return f"{fmt(med)} ({fmt(min(values))}–{fmt(max(values))})"


def rate(v):
    return f"{v:,.0f}"


def ms(v):
    return f"{v / 1000:.1f}" if v >= 10000 else f"{v / 1000:.2f}"


def us(v):
    return f"{v:,.0f}"


def ratio(v):
    return f"{v:.2f}x"


def throughput(runs, kind, servers, title):
    rows = [r for r in runs if r["kind"] == kind]
    if not rows:
        return ""
    by = defaultdict(dict)  # (workload, server) -> round -> run
    for r in rows:
        by[(r["workload"], r["server"])][r["round"]] = r
    rounds = sorted({r["round"] for r in rows}, key=int)
    out = [f"{title} ({len(rounds)} rounds)", "",
           "| workload | server | requests/s | pings/s | latency p50 ms | latency p99 ms | errors | server CPU µs per request | A's req/s ÷ this | A's p99 ÷ this | A's CPU per request ÷ this |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for w in WORKLOADS:
        for s in servers:
            got = by.get((w, s))
            if not got:
                continue
            runs_ = list(got.values())
            rps = [num(r, "rps") for r in runs_]
            pings = [v * int(w) for v in rps]
            errors = 0
            for r in runs_:
                for key in ("connect", "read", "write", "status", "timeout", "errors", "bad_replies"):
                    errors += int(r.get(key, 0))
            ours = by.get((w, "new"), {})
            cpu = [cpu_per_request(r) for r in runs_ if cpu_per_request(r) is not None]
            if s == "new":
                rr = pr = cr = "—"
            else:
                common = [k for k in got if k in ours]
                rr = spread([num(ours[k], "rps") / num(got[k], "rps") for k in common if num(got[k], "rps") > 0], ratio)
                pr = spread([num(ours[k], "p99_us") / num(got[k], "p99_us") for k in common if num(got[k], "p99_us") > 0], ratio)
                cr = spread([cpu_per_request(ours[k]) / cpu_per_request(got[k]) for k in common
                             if cpu_per_request(ours[k]) and cpu_per_request(got[k])], ratio)
            out.append(f"| {WORKLOADS[w]} | {SERVERS[s]} | {spread(rps, rate)} | {spread(pings, rate)} | "
                       f"{spread([num(r, 'p50_us') for r in runs_], ms)} | {spread([num(r, 'p99_us') for r in runs_], ms)} | "
                       f"{errors} | {spread(cpu, lambda v: f'{v:.1f}')} | {rr} | {pr} | {cr} |")
    return "\n".join(out) + "\n"


def defence(runs):
    rows = [r for r in runs if r["kind"] in ("idle", "slow")]
    if not rows:
        return ""
    out = ["Defences (ping latency on one more keep-alive connection, one request in flight; "
           f"median (min–max) over rounds)", "",
           "| test | server | connections | ping p50 µs | ping p99 µs | ping p99 µs without them | pings failed (2 s timeout) | what the server did |",
           "|---|---|---:|---:|---:|---:|---:|---|"]
    groups = defaultdict(list)
    for r in rows:
        groups[(r["kind"], r["server"])].append(r)
    for (kind, server), rs in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1] != "new")):
        failures = sum(int(r["ping_failures"]) + int(r["ping_bad"]) for r in rs)
        pings = sum(int(r["pings"]) for r in rs)
        p50 = spread([num(r, "p50_us") for r in rs if int(r["pings"]) > 0], us)
        p99 = spread([num(r, "p99_us") for r in rs if int(r["pings"]) > 0], us)
        base = spread([num(r, "base_p99_us") for r in rs], us)
        if kind == "idle":
            n = spread([num(r, "opened") for r in rs], rate)
            held = spread([num(r, "opened") - num(r, "closed_by_server") for r in rs], rate)
            answered = [num(r, "answered") for r in rs]
            what = f"{held} still open at the end; one ping sent on each was answered on {spread(answered, rate)}"
            if all(num(r, "answered") == num(r, "opened") for r in rs):
                what += (f"; RSS per idle connection {spread([num(r, 'bare_per_conn_kib') for r in rs], lambda v: f'{v:.1f}')} KiB, "
                         f"{spread([num(r, 'pinged_per_conn_kib') for r in rs], lambda v: f'{v:.1f}')} KiB after that ping")
            else:
                what += (f" (refused or closed: {spread([num(r, 'refused') for r in rs], rate)}, "
                         f"no answer within 10 s: {spread([num(r, 'lost') for r in rs], rate)})")
            if any(r.get("connect_error", "none") != "none" for r in rs):
                what += "; connecting stopped: " + ", ".join(sorted({r["connect_error"].replace("_", " ") for r in rs}))
            test = "idle connections"
        else:
            n = spread([num(r, "slow") for r in rs], rate)
            cut = [r for r in rs if int(r["cut"]) > 0]
            what = f"closed {spread([num(r, 'cut') for r in rs], rate)} of the slow clients"
            if cut:
                what += (f"; those closed went {min(num(r, 'cut_min_s') for r in cut):.1f} to "
                         f"{max(num(r, 'cut_max_s') for r in cut):.1f} s after their first byte (all rounds)")
            if any(int(r["answered_before_cut"]) > 0 for r in rs):
                what += f"; a response before closing on {spread([num(r, 'answered_before_cut') for r in rs], rate)}"
            else:
                what += ", closed without a response"
            what += f" (run of {rs[0].get('seconds', '?')} s)"
            test = "slowloris (1 header byte/s)"
        out.append(f"| {test} | {SERVERS[server]} | {n} | {p50} | {p99} | {base} | {failures} of {pings + failures} | {what} |")
    return "\n".join(out) + "\n"


def main():
    runs = parse(sys.argv[1])
    print(throughput(runs, "http", ["new", "httplib", "jsonrpccpp", "jayson", "new2"],
                     "HTTP POST, keep-alive, 64 connections (wrk -t2 -c64, 5 s per run)"))
    print(throughput(runs, "ws", ["new", "jayson"],
                     "WebSocket, 64 connections, one request in flight on each (bench/net/ws_load.cpp, 2 threads, 5 s per run)"))
    print(throughput(runs, "client_http", ["new", "httplib", "jsonrpccpp", "jayson"],
                     "HTTP through batchrpc's own client, rpc::net::Client (bench/net/client_load.cpp: 64 clients, "
                     "one message in flight on each, 5 s per run)"))
    print(throughput(runs, "client_ws", ["new", "jayson"],
                     "WebSocket through rpc::net::Client (bench/net/client_load.cpp, as above)"))
    print(defence(runs))


if __name__ == "__main__":
    main()
