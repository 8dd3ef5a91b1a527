#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Turns Google Benchmark JSON output into the tables of bench/README.md.

    batchrpc_bench --benchmark_format=json --benchmark_out=results.json --benchmark_out_format=json
    python3 bench/report.py results.json            # prints markdown

Ratios compare benchmarks of one run: BM_<Thing>/<n> against BM_Floor<Thing>/<n> (a fresh
RapidJSON Document per message) and BM_TunedFloor<Thing>/<n> (the DOM's pool reused), and
BM_PeerJsonRpcCpp<Thing>/<n> (libjson-rpc-cpp, where it was built in) against BM_<Thing>/<n>.
"""
import json
import re
import sys


def load(path):
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    runs = {}
    for b in data["benchmarks"]:
        if b.get("run_type", "iteration") == "aggregate":
            runs[b["name"]] = b  # e.g. BM_ParallelBatch/1/repeats:5/real_time_min
        elif b.get("repetitions", 1) <= 1 or b.get("repetition_index", 0) == 0:
            runs.setdefault(b["name"], b)
    return data.get("context", {}), runs


def split(name):
    m = re.match(r"BM_([A-Za-z]+)(?:/(\d+))?", name)
    return m.group(1), m.group(2)


def rate(b):
    return b.get("items_per_second", 0.0)


def fmt_rate(r):
    return f"{r / 1e6:.2f} M/s" if r >= 1e5 else f"{r / 1e3:.1f} k/s"


def main(path):
    context, runs = load(path)
    print(f"Machine: {context.get('num_cpus', '?')} CPUs at {context.get('mhz_per_cpu', '?')} MHz, "
          f"built {context.get('library_build_type', '?')}; date {context.get('date', '?')}\n")
    print("| benchmark | requests/s | allocs/request | vs floor | vs tuned floor |")
    print("|---|---:|---:|---:|---:|")
    for name, b in runs.items():
        thing, arg = split(name)
        if thing.startswith(("Floor", "TunedFloor", "Peer")) or thing == "ParallelBatch" or thing.startswith("Embed"):
            continue
        suffix = f"/{arg}" if arg else ""
        cells = []
        for prefix in ("Floor", "TunedFloor"):
            other = runs.get(f"BM_{prefix}{thing}{suffix}")
            cells.append(f"{rate(b) / rate(other):.2f}x" if other and rate(other) else "")
        allocs = b.get("allocs_per_request")
        allocs_text = f"{allocs:.3f}" if allocs is not None else ""
        print(f"| `{name}` | {fmt_rate(rate(b))} | {allocs_text} | {cells[0]} | {cells[1]} |")
    for prefix in ("Floor", "TunedFloor"):
        for name, b in runs.items():
            if split(name)[0].startswith(prefix) and not (prefix == "Floor" and split(name)[0].startswith("TunedFloor")):
                print(f"| `{name}` | {fmt_rate(rate(b))} | {b.get('allocs_per_request', 0):.3f} | | |")

    peers = [(name, b) for name, b in runs.items() if split(name)[0].startswith("PeerJsonRpcCpp")]
    if peers:
        print("\nPeer: libjson-rpc-cpp's in-process request handler (jsoncpp), on the same messages\n")
        print("| benchmark | requests/s | allocs/request | batchrpc vs peer |")
        print("|---|---:|---:|---:|")
        for name, b in peers:
            thing, arg = split(name)
            ours = runs.get(f"BM_{thing[len('PeerJsonRpcCpp'):]}" + (f"/{arg}" if arg else ""))
            ratio = f"{rate(ours) / rate(b):.1f}x" if ours and rate(b) else ""
            print(f"| `{name}` | {fmt_rate(rate(b))} | {b.get('allocs_per_request', 0):.1f} | {ratio} |")

    per_member = {}
    for name, b in runs.items():
        thing, arg = split(name)
        if thing == "Ping" and arg and int(arg) >= 10:
            per_member[int(arg)] = b["cpu_time"] / int(arg)
    if per_member:
        worst, best = max(per_member.values()), min(per_member.values())
        print("\nScaling (BM_Ping, time per member): " +
              ", ".join(f"{n}: {t:.0f} ns" for n, t in sorted(per_member.items())) +
              f"; spread {worst / best:.2f}x (target < 1.5x)")
    for stat, label in (("_min", "best of 5 repetitions"), ("_median", "median of 5 repetitions")):
        one, two = runs.get(f"BM_ParallelBatch/1/repeats:5/real_time{stat}"), runs.get(f"BM_ParallelBatch/2/repeats:5/real_time{stat}")
        if one and two:
            print(f"\nParallel batch (64 x ~50 us, {label}): 1 thread {one['real_time'] / 1e3:.0f} us, "
                  f"2 threads {two['real_time'] / 1e3:.0f} us; speed-up {one['real_time'] / two['real_time']:.2f}x "
                  "(target >= 1.7x)")


def embed_report(runs):
    def find(kind, n, b64):
        return runs.get(f"BM_Embed_{kind}/n:{n}/base64:{b64}")
    rows = []
    for n in (1, 32, 256):
        for b64 in (0, 1):
            cells = [find(k, n, b64) for k in ("Array", "Batch", "BatchAware", "Messages", "ArrayWithoutModel")]
            if not cells[0]:
                continue
            r = [rate(c) if c else 0.0 for c in cells]
            writing = ""
            if cells[0] and cells[4]:
                # ArrayWithoutModel: everything but the model, per text
                writing = f"{100.0 * (1.0 / r[4]) / (1.0 / r[0]):.0f}%" if r[4] else ""
            rows.append((n, "base64" if b64 else "float", r, writing))
    if not rows:
        return
    print("\nEmbed plugin: texts/s (12 words each); ratios array/batch and array/batch-aware; share of time outside the model")
    print("\n| n | encoding | array `inputs:[n]` | batch of n singletons | batch, batch-aware | n messages | array / batch | array / batch-aware | not model |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for n, enc, r, writing in rows:
        ratio = lambda a, b: f"{a / b:.2f}x" if a and b else ""
        print(f"| {n} | {enc} | {r[0]:,.0f} | {r[1]:,.0f} | {r[2]:,.0f} | {r[3]:,.0f} | {ratio(r[0], r[1])} | "
              f"{ratio(r[0], r[2])} | {writing} |")
    dense = runs.get("BM_Embed_DenseLayerVsEigen/n:256")
    if dense:
        print(f"\nDense layer at n = 256: {dense.get('layer_GFLOPs', 0):.1f} GFLOP/s against Eigen's plain product "
              f"{dense.get('eigen_GFLOPs', 0):.1f} GFLOP/s on the same shapes: {100 * dense.get('fraction', 0):.0f}% "
              f"(target >= 80%); a whole embed() of 256 texts: {100 * dense.get('embed_fraction', 0):.0f}%")
    model, per_input = runs.get("BM_Embed_Model/n:256"), runs.get("BM_Embed_ModelPerInput/n:256")
    if model and per_input and rate(per_input):
        print(f"\nModel alone at n = 256: one product {rate(model):,.0f} texts/s, one input at a time "
              f"{rate(per_input):,.0f} texts/s ({rate(model) / rate(per_input):.1f}x)")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "results.json")
    embed_report(load(sys.argv[1] if len(sys.argv) > 1 else "results.json")[1])
