#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Turns Google Benchmark JSON output into the tables of bench/README.md.

    batchrpc_bench --benchmark_repetitions=11 --benchmark_enable_random_interleaving=true \\
        --benchmark_out=results.json --benchmark_out_format=json
    python3 bench/report.py results.json            # prints markdown
    python3 bench/report.py results.json --pair=index

Ratios compare benchmarks of one run: BM_<Thing>/<n> against BM_Floor<Thing>/<n> (a fresh
RapidJSON Document per message) and BM_TunedFloor<Thing>/<n> (the DOM's pool reused),
BM_PeerJsonRpcCpp<Thing>/<n> (libjson-rpc-cpp, where it was built in) against BM_<Thing>/<n>,
BM_SessionPing/<n> against BM_Ping/<n>, BM_SessionShapeTypedPing/<n> against BM_ShapeTypedPing/<n>, and BM_PipePing/100 (and BM_PipePingSigpipeIgnored/100) against BM_SessionPing/100.

The machine is noisy (a busy neighbour slows whole stretches of a run), so with repetitions a
ratio is not taken between two medians: each repetition of a benchmark is paired with one of
its counterpart's, and the median of the per-pair ratios is reported with their interquartile
range and their extremes. Google Benchmark 1.7.1 shuffles the repetitions of all benchmarks as
one list, so repetition k of two benchmarks may run far apart: by default a repetition is paired
with the counterpart's repetition that started nearest in time (the `started_s` counter the
benchmarks record); --pair=index pairs repetition k with repetition k. A single-repetition run
gives the plain ratio.
"""
import argparse
import json
import re
import statistics


def load(path):
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    reps, aggregates = {}, {}
    for b in data["benchmarks"]:
        if b.get("run_type", "iteration") == "aggregate":
            aggregates[b["name"]] = b  # e.g. BM_ParallelBatch/1/repeats:5/real_time_min
        elif not b.get("error_occurred"):
            reps.setdefault(b["name"], []).append(b)
    # With interleaving, a benchmark is written out when its last repetition ends: put them
    # back in the order they were registered.
    order = sorted(reps, key=lambda name: (reps[name][0].get("family_index", 0),
                                           reps[name][0].get("per_family_instance_index", 0)))
    runs = {name: sorted(reps[name], key=lambda b: b.get("repetition_index", 0)) for name in order}
    return data.get("context", {}), runs, aggregates


def split(name):
    m = re.match(r"BM_([A-Za-z]+)(?:/(\d+))?", name)
    return m.group(1), m.group(2)


def find(runs, prefix):
    """The repetitions of the benchmark named `prefix`, or `prefix/...` (e.g. `/real_time`)."""
    for name, reps in runs.items():
        if name == prefix or name.startswith(prefix + "/"):
            return name, reps
    return None, None


def rate(b):
    return b.get("items_per_second", 0.0)


def median_of(reps, key):
    values = [b[key] for b in reps if key in b]
    return statistics.median(values) if values else None


def fmt_rate(r):
    return f"{r / 1e6:.2f} M/s" if r >= 1e5 else f"{r / 1e3:.1f} k/s"


def paired(ours, theirs, by_index=False):
    """Ratios rate(ours) / rate(theirs), one per repetition of `ours` that has a partner, and
    the gaps in seconds between partners' starts (empty when paired by index)."""
    timed = not by_index and all("started_s" in b for b in ours + theirs)
    ratios, gaps = [], []
    if timed:
        for b in ours:
            partner = min(theirs, key=lambda t: abs(t["started_s"] - b["started_s"]))
            if rate(partner):
                ratios.append(rate(b) / rate(partner))
                gaps.append(abs(partner["started_s"] - b["started_s"]))
    else:
        by_rep = {t.get("repetition_index", 0): t for t in theirs}
        for b in ours:
            partner = by_rep.get(b.get("repetition_index", 0))
            if partner and rate(partner):
                ratios.append(rate(b) / rate(partner))
    return ratios, gaps


def fmt_ratios(ratios, digits=2):
    """`1.41x [1.38-1.45] (1.30-1.52)`: median [interquartile range] (min-max); one ratio alone."""
    if not ratios:
        return ""
    med = statistics.median(ratios)
    if len(ratios) == 1:
        return f"{med:.{digits}f}x"
    q1, _, q3 = statistics.quantiles(ratios, n=4, method="inclusive")
    return (f"{med:.{digits}f}x [{q1:.{digits}f}–{q3:.{digits}f}] "
            f"({min(ratios):.{digits}f}–{max(ratios):.{digits}f})")


class Gaps:
    """Collects how far apart paired repetitions ran, for one line under each table."""

    def __init__(self):
        self.gaps, self.pairs, self.repeated = [], 0, False

    def add(self, ratios, gaps):
        self.pairs += len(ratios)
        self.gaps += gaps
        self.repeated |= len(ratios) > 1
        return ratios

    def note(self, by_index):
        if self.pairs == 0:
            return ""
        if not self.repeated:
            return "One repetition of each benchmark: plain ratios."
        if self.gaps:
            return (f"Paired ratios, median [interquartile range] (min–max): each repetition against the "
                    f"counterpart's repetition that started nearest in time; {self.pairs} pairs, "
                    f"{statistics.median(self.gaps):.1f} s apart at the median, {max(self.gaps):.1f} s at most.")
        return (f"Paired ratios, median [interquartile range] (min–max): repetition k against "
                f"repetition k; {self.pairs} pairs.")


def main(path, by_index):
    context, runs, aggregates = load(path)
    print(f"Machine: {context.get('num_cpus', '?')} CPUs at {context.get('mhz_per_cpu', '?')} MHz, "
          f"built {context.get('library_build_type', '?')}; date {context.get('date', '?')}; "
          f"repetitions: {statistics.mode(len(r) for r in runs.values()) if runs else 0}\n")
    print("| benchmark | requests/s | allocs/request | vs floor | vs tuned floor |")
    print("|---|---:|---:|---:|---:|")
    gaps = Gaps()
    for name, reps in runs.items():
        thing, arg = split(name)
        if thing.startswith(("Floor", "TunedFloor", "Peer", "Embed")) or thing == "ParallelBatch":
            continue
        suffix = f"/{arg}" if arg else ""
        cells = []
        for prefix in ("Floor", "TunedFloor"):
            other = runs.get(f"BM_{prefix}{thing}{suffix}")
            cells.append(fmt_ratios(gaps.add(*paired(reps, other, by_index))) if other else "")
        allocs = median_of(reps, "allocs_per_request")
        allocs_text = f"{allocs:.3f}" if allocs is not None else ""
        print(f"| `{name}` | {fmt_rate(statistics.median(map(rate, reps)))} | {allocs_text} | {cells[0]} | {cells[1]} |")
    for prefix in ("Floor", "TunedFloor"):
        for name, reps in runs.items():
            if split(name)[0].startswith(prefix):
                allocs = median_of(reps, "allocs_per_request") or 0.0
                print(f"| `{name}` | {fmt_rate(statistics.median(map(rate, reps)))} | {allocs:.3f} | | |")
    print("\n" + gaps.note(by_index))

    comparisons = [
        ("Session against the router (target: Session >= 0.9x the router)", 0.9,
         [("BM_SessionPing/1", "BM_Ping/1"), ("BM_SessionPing/100", "BM_Ping/100"),
          ("BM_SessionShapeTypedPing/1", "BM_ShapeTypedPing/1"),
          ("BM_SessionShapeTypedPing/100", "BM_ShapeTypedPing/100")]),
        ("End to end over pipes against the in-process Session (target: >= 0.7x)", 0.7,
         [("BM_PipePing/100", "BM_SessionPing/100"), ("BM_PipePingSigpipeIgnored/100", "BM_SessionPing/100")]),
        ("Calls of ~1 us through a Session's waiting handle, a message of 1, 10 or 100: a ThreadPool "
         "of 2 (and of 1) beside the calling thread against inline (target: >= 1.2x for 2 threads "
         "and 100 calls)", 1.2,
         [(f"BM_SessionWork/{threads}/{calls}/820", f"BM_SessionWork/0/{calls}/820")
          for calls in (100, 10, 1) for threads in (2, 1)]),
        ("The same with calls of ~0.5 us (shown beside; the target is for ~1 us)", 1.2,
         [(f"BM_SessionWork/{threads}/100/400", "BM_SessionWork/0/100/400") for threads in (2, 1)]),
    ]
    for title, target, pairs in comparisons:
        rows, gaps = [], Gaps()
        for ours_prefix, theirs_prefix in pairs:
            ours_name, ours = find(runs, ours_prefix)
            theirs_name, theirs = find(runs, theirs_prefix)
            if not ours or not theirs:
                continue
            ratios = gaps.add(*paired(ours, theirs, by_index))
            met = "met" if ratios and statistics.median(ratios) >= target else "not met"
            rows.append(f"| `{ours_name}` | {fmt_rate(statistics.median(map(rate, ours)))} | `{theirs_name}` | "
                        f"{fmt_rate(statistics.median(map(rate, theirs)))} | {fmt_ratios(ratios)} | {met} |")
        if rows:
            print(f"\n{title}\n")
            print("| benchmark | requests/s | against | requests/s | ratio | |")
            print("|---|---:|---|---:|---:|---|")
            print("\n".join(rows))
            print("\n" + gaps.note(by_index))

    peers = [(name, reps) for name, reps in runs.items() if split(name)[0].startswith("PeerJsonRpcCpp")]
    if peers:
        print("\nPeer: libjson-rpc-cpp's in-process request handler (jsoncpp), on the same messages\n")
        print("| benchmark | requests/s | allocs/request | batchrpc vs peer |")
        print("|---|---:|---:|---:|")
        for name, reps in peers:
            thing, arg = split(name)
            ours = runs.get(f"BM_{thing[len('PeerJsonRpcCpp'):]}" + (f"/{arg}" if arg else ""))
            ratio = fmt_ratios(paired(ours, reps, by_index)[0], digits=1) if ours else ""
            allocs = median_of(reps, "allocs_per_request") or 0.0
            print(f"| `{name}` | {fmt_rate(statistics.median(map(rate, reps)))} | {allocs:.1f} | {ratio} |")

    per_member = {}
    for name, reps in runs.items():
        thing, arg = split(name)
        if thing == "Ping" and arg and int(arg) >= 10:
            per_member[int(arg)] = median_of(reps, "cpu_time") / int(arg)
    if per_member:
        worst, best = max(per_member.values()), min(per_member.values())
        print("\nScaling (BM_Ping, time per member): " +
              ", ".join(f"{n}: {t:.0f} ns" for n, t in sorted(per_member.items())) +
              f"; spread {worst / best:.2f}x (target < 1.5x)")
    for stat, label in (("_min", "best of 5 repetitions"), ("_median", "median of 5 repetitions")):
        # /0: the calling thread alone; /1: a pool of 1 beside it; /2: a pool of 2 beside it.
        one, two, three = (aggregates.get(f"BM_ParallelBatch/{n}/repeats:5/real_time{stat}") for n in (0, 1, 2))
        if one and two and three:
            print(f"\nParallel batch (64 x ~50 us, {label}): 1 thread {one['real_time'] / 1e3:.0f} us, "
                  f"2 threads {two['real_time'] / 1e3:.0f} us; speed-up {one['real_time'] / two['real_time']:.2f}x "
                  f"(target >= 1.7x); a pool of 2 beside the caller {three['real_time'] / 1e3:.0f} us")
    embed_report(runs)
    coalesce_report(runs, by_index)


def coalesce_report(runs, by_index):
    """BM_Embed_Clients (bench_coalesce.cpp): clients sending single-text calls, coalescing off
    and on, against the same texts as one call (BM_Embed_Array/n:256)."""
    rows, gaps = [], Gaps()
    for b64 in (0, 1):
        _, array = find(runs, f"BM_Embed_Array/n:256/base64:{b64}")
        for clients in (1, 8, 64):
            for groups in (0, 1, 2):
                _, reps = find(runs, f"BM_Embed_Clients/clients:{clients}/coalesce:{groups}/base64:{b64}")
                if not reps:
                    continue
                ratios = gaps.add(*paired(array, reps, by_index)) if array else []
                rows.append((clients, "base64" if b64 else "float", groups, statistics.median(map(rate, reps)),
                             median_of(reps, "p50_us"), median_of(reps, "p99_us"), fmt_ratios(ratios)))
    if not rows:
        return
    print("\nDynamic batching: clients each sending single-text `embed` calls, one after another; texts/s, "
          "latency per call, and the same texts as one call `inputs:[256]` against them (target at 64 "
          "clients: <= 1.3x)")
    print("\n| clients | encoding | coalescing | texts/s | p50 | p99 | array / this |")
    print("|---:|---|---|---:|---:|---:|---:|")
    label = {0: "off", 1: "1 group at once", 2: "2 groups at once"}
    for clients, enc, groups, r, p50, p99, vs_array in rows:
        print(f"| {clients} | {enc} | {label[groups]} | {r:,.0f} | {p50:,.0f} us | {p99:,.0f} us | {vs_array} |")
    print("\n" + gaps.note(by_index))
    for enc in ("float", "base64"):
        lone = {g: p50 for c, e, g, _, p50, _, _ in rows if c == 1 and e == enc}
        if 0 in lone and lone[0]:
            on = ", ".join(f"{label[g]} {lone[g] / lone[0]:.2f}x" for g in (1, 2) if g in lone)
            print(f"\nOne client, {enc}: p50 latency with coalescing against without: {on} (target <= 1.1x)")


def embed_report(runs):
    def find_rate(kind, n, b64):
        reps = runs.get(f"BM_Embed_{kind}/n:{n}/base64:{b64}")
        return statistics.median(map(rate, reps)) if reps else 0.0
    rows = []
    for n in (1, 32, 256):
        for b64 in (0, 1):
            r = [find_rate(k, n, b64) for k in ("Array", "Batch", "BatchAware", "Messages", "ArrayWithoutModel")]
            if not r[0]:
                continue
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
        value = lambda key: median_of(dense, key) or 0.0
        print(f"\nDense layer at n = 256: {value('layer_GFLOPs'):.1f} GFLOP/s against Eigen's plain product "
              f"{value('eigen_GFLOPs'):.1f} GFLOP/s on the same shapes: {100 * value('fraction'):.0f}% "
              f"(target >= 80%); a whole embed() of 256 texts: {100 * value('embed_fraction'):.0f}%")
    model_reps, per_input_reps = runs.get("BM_Embed_Model/n:256"), runs.get("BM_Embed_ModelPerInput/n:256")
    if model_reps and per_input_reps:
        model = statistics.median(map(rate, model_reps))
        per_input = statistics.median(map(rate, per_input_reps))
        if per_input:
            print(f"\nModel alone at n = 256: one product {model:,.0f} texts/s, one input at a time "
                  f"{per_input:,.0f} texts/s ({model / per_input:.1f}x)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Markdown tables from batchrpc_bench's JSON output.")
    parser.add_argument("results", nargs="?", default="results.json")
    parser.add_argument("--pair", choices=("time", "index"), default="time",
                        help="pair repetitions by start time (default) or by repetition index")
    args = parser.parse_args()
    main(args.results, args.pair == "index")
