#!/usr/bin/env python3
"""The markdown table of bench_backends' peer comparisons, from its JSON output (issue 30).

    python3 bench/backends/table.py --bench build/release/bench/backends/bench_backends --rounds 3

runs every workload against its peers (--filter for fewer) in --rounds processes, one after
another, and prints the table, with the load average before and after; or, from saved runs:

    bench_backends --benchmark_format=json --benchmark_filter=... > run1.json   # and run2.json ...
    python3 bench/backends/table.py run1.json run2.json

One row per workload and thread count: uops' median time, what its first call cost (the program
compiled into an empty kernel cache), run()'s time over its kernel called directly (the median
over the samples; issue 30 asks for at most 1.05) and, per peer, the median of the
peer's time over uops' (above 1: uops is faster). "best" is the smallest ratio over the library
peers (the copy bound is not one). A peer whose output differed from uops' in the bench's
one-time check has no ratio: its cell says "wrong" (in any round).

With several rounds each cell is the median over the rounds of the rounds' medians, and a last
column gives the range of "best" over the rounds: this host's noise moves whole processes (a
ratio read 0.65 in one and 0.87 in the next), which the samples within one process cannot show.
Python 3 standard library only.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

# Every workload against its peers: the forward ones, then those users train with.
WORKLOADS = ("BM_(elementwise|elementwise_large|softmax|layernorm|matmul|matmul_s128|matmul_s1000|linear|conv2d|"
             "matmul_grad|conv2d_bwd_data|conv2d_bwd_weights|conv2d_grad|linear_grad|softmax_bwd|"
             "layernorm_bwd|gelu_bwd|batched_matmul|attention_s128|attention_s512|attention_s1024|"
             "attention_grad_s512|"
             "maxpool2d|avgpool2d|maxpool2d_grad|avgpool2d_grad|sum_axis0|depthwise_conv2d|"
             "depthwise_conv2d_grad)/")
LIBRARY_ORDER = ["oneDNN", "OpenBLAS", "Eigen"]


def read_round(data):
    """{(workload, threads): row} of one run's JSON, a row holding its time, compile time,
    run()/kernel and {peer: ratio or "wrong"}, in the run's order."""
    rows = {}
    for b in data["benchmarks"]:
        if "uops_ms" not in b:
            continue  # compile latency, interpreter: not a peer comparison
        cells = {}
        for key, value in b.items():
            for prefix, wrong in (("C/", False), ("wrong/", True)):
                if key.startswith(prefix):
                    cells[key[len(prefix):]] = "wrong" if wrong else value
        key = (b["name"].split("/")[0].removeprefix("BM_"), int(b["threads"]))
        rows[key] = {"ms": b["uops_ms"], "compile_ms": b.get("compile_ms"),
                     "run_kernel": b.get("run/kernel"), "cells": cells}
    return rows


def best(cells):
    """The smallest ratio over the library peers, None where there is none."""
    real = [v for p, v in cells.items() if p != "copy" and not isinstance(v, str)]
    return min(real) if real else None


def merge(rounds):
    """One row per (workload, threads) seen in any round: each value the median over the rounds
    that have it ("wrong" if any round says so), and best's (low, high) over the rounds."""
    keys = []
    for r in rounds:
        keys += [k for k in r if k not in keys]
    merged = {}
    for key in keys:
        rs = [r[key] for r in rounds if key in r]
        med = lambda xs: statistics.median(xs) if xs else None
        cells = {}
        for peer in {p for r in rs for p in r["cells"]}:
            vs = [r["cells"][peer] for r in rs if peer in r["cells"]]
            cells[peer] = "wrong" if "wrong" in vs else med(vs)
        # Each round's best over the same peers as the merged one: a peer wrong anywhere is out.
        bests = [b for b in (best({p: v for p, v in r["cells"].items() if cells[p] != "wrong"})
                             for r in rs) if b is not None]
        merged[key] = {"ms": med([r["ms"] for r in rs]),
                       "compile_ms": med([r["compile_ms"] for r in rs if r["compile_ms"] is not None]),
                       "run_kernel": med([r["run_kernel"] for r in rs if r["run_kernel"] is not None]),
                       "cells": cells, "best": best(cells),
                       "best_range": (min(bests), max(bests)) if bests else None,
                       "rounds": len(rs)}
    return merged


def table(merged, n_rounds):
    """The markdown lines of the merged rows."""
    peers = sorted({p for row in merged.values() for p in row["cells"]},
                   key=lambda p: (p == "copy", LIBRARY_ORDER.index(p) if p in LIBRARY_ORDER
                                  else len(LIBRARY_ORDER), p))  # library peers first, copy last
    header = (["workload", "threads", "uops ms", "cold compile ms", "run()/kernel"] +
              [f"{p}/uops" for p in peers] + ["best peer/uops"])
    if n_rounds > 1:
        header.append(f"best over {n_rounds} rounds")
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] + ["--:"] * (len(header) - 1)) + "|"]
    ratio = lambda v: f"{v:.2f}" if v >= 0.1 else f"{v:.2g}"  # the copy bound can be far below
    for (name, threads), row in merged.items():
        ms = row["ms"]
        line = [name, str(threads), f"{ms:.0f}" if ms >= 100 else f"{ms:.3g}",
                "" if row["compile_ms"] is None else f"{row['compile_ms']:.0f}",
                "" if row["run_kernel"] is None else f"{row['run_kernel']:.2f}"]
        for p in peers:
            v = row["cells"].get(p)
            line.append("" if v is None else v if isinstance(v, str) else ratio(v))
        line.append("" if row["best"] is None else ratio(row["best"]))
        if n_rounds > 1:
            lo_hi = row["best_range"]
            line.append("" if lo_hi is None else f"{ratio(lo_hi[0])}–{ratio(lo_hi[1])}"
                        + ("" if row["rounds"] == n_rounds else f" ({row['rounds']} of {n_rounds} rounds)"))
        lines.append("| " + " | ".join(line) + " |")
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("json", nargs="*", help="saved --benchmark_format=json runs (else stdin)")
    ap.add_argument("--bench", help="run this bench_backends binary instead")
    ap.add_argument("--filter", default=WORKLOADS, help="its --benchmark_filter")
    ap.add_argument("--rounds", type=int, default=1, help="with --bench: processes, one after another")
    ap.add_argument("--save", help="also write each round's JSON here (PATH.N with several rounds)")
    args = ap.parse_args()
    if args.rounds < 1:
        ap.error("--rounds must be at least 1")
    if args.bench and args.json:
        ap.error("give --bench or saved runs, not both")
    load_before = None
    if args.bench:
        load_before = os.getloadavg()
        texts = [subprocess.run([args.bench, "--benchmark_format=json", f"--benchmark_filter={args.filter}"],
                                check=True, stdout=subprocess.PIPE, text=True).stdout
                 for _ in range(args.rounds)]
    elif args.json:
        texts = [open(path).read() for path in args.json]
    else:
        texts = [sys.stdin.read()]
    if args.save:
        for i, text in enumerate(texts):
            with open(args.save if len(texts) == 1 else f"{args.save}.{i + 1}", "w") as f:
                f.write(text)
    runs = [json.loads(text) for text in texts]
    for line in table(merge([read_round(d) for d in runs]), len(runs)):
        print(line)
    ctx = runs[0].get("context", {})
    fmt = lambda xs: " ".join(f"{x:.2f}" for x in xs)
    line = (f"{ctx.get('num_cpus', '?')} CPUs at {ctx.get('mhz_per_cpu', '?')} MHz, "
            f"{ctx.get('date', '')}, load average (1, 5, 15 min) ")
    if load_before is not None:
        line += f"before {fmt(load_before)}, after {fmt(os.getloadavg())}"
    else:
        line += f"at the start {fmt(ctx.get('load_avg', []))}"
    print()
    print(line)


if __name__ == "__main__":
    main()
