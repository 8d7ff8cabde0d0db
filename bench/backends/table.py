#!/usr/bin/env python3
"""The markdown table of bench_backends' peer comparisons, from its JSON output (issue 30).

    python3 bench/backends/table.py --bench build/release/bench/backends/bench_backends

runs every workload against its peers (--filter for fewer) and prints the table, with the load average
before and after; or, from a saved run:

    bench_backends --benchmark_format=json --benchmark_filter=... | python3 bench/backends/table.py

One row per workload and thread count: uops' median time, what its first call cost (the program
compiled into an empty kernel cache), run()'s time over its kernel called directly (the median
over the samples; issue 30 asks for at most 1.05) and, per peer, the median of the
peer's time over uops' (above 1: uops is faster). "best" is the smallest ratio over the library
peers (the copy bound is not one). A peer whose output differed from uops' in the bench's
one-time check has no ratio: its cell says "wrong". Python 3 standard library only.
"""

import argparse
import json
import os
import subprocess
import sys

# Every workload against its peers: the forward ones, then those users train with.
WORKLOADS = ("BM_(elementwise|elementwise_large|softmax|layernorm|matmul|matmul_s128|linear|conv2d|"
             "matmul_grad|conv2d_bwd_data|conv2d_bwd_weights|softmax_bwd|layernorm_bwd|gelu_bwd|"
             "batched_matmul|attention_s128|attention_s512|attention_s1024|maxpool2d|avgpool2d|"
             "sum_axis0|depthwise_conv2d)/")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("json", nargs="?", help="a saved --benchmark_format=json run (else stdin)")
    ap.add_argument("--bench", help="run this bench_backends binary instead")
    ap.add_argument("--filter", default=WORKLOADS, help="its --benchmark_filter")
    ap.add_argument("--save", help="also write the run's JSON here")
    args = ap.parse_args()
    load_before = None
    if args.bench:
        load_before = os.getloadavg()
        text = subprocess.run([args.bench, "--benchmark_format=json", f"--benchmark_filter={args.filter}"],
                              check=True, stdout=subprocess.PIPE, text=True).stdout
    else:
        text = open(args.json).read() if args.json else sys.stdin.read()
    if args.save:
        with open(args.save, "w") as f:
            f.write(text)
    data = json.loads(text)
    rows, peers = [], []
    for b in data["benchmarks"]:
        if "uops_ms" not in b:
            continue  # compile latency, interpreter: not a peer comparison
        name = b["name"].split("/")[0].removeprefix("BM_")
        cells = {}
        for key, value in b.items():
            for prefix, wrong in (("C/", False), ("wrong/", True)):
                if key.startswith(prefix):
                    peer = key[len(prefix):]
                    cells[peer] = "wrong" if wrong else value
                    if peer not in peers:
                        peers.append(peer)
        rows.append((name, int(b["threads"]), b["uops_ms"], b.get("compile_ms"), b.get("run/kernel"),
                     cells))
    # Library peers first in a fixed order, the copy bound last.
    order = ["oneDNN", "OpenBLAS", "Eigen"]
    peers.sort(key=lambda p: (p == "copy", order.index(p) if p in order else len(order), p))
    header = (["workload", "threads", "uops ms", "cold compile ms", "run()/kernel"] +
              [f"{p}/uops" for p in peers] + ["best peer/uops"])
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join(["---"] + ["--:"] * (len(header) - 1)) + "|")
    ratio = lambda v: f"{v:.2f}" if v >= 0.1 else f"{v:.2g}"  # the copy bound can be far below
    for name, threads, ms, compile_ms, run_kernel, cells in rows:
        line = [name, str(threads), f"{ms:.0f}" if ms >= 100 else f"{ms:.3g}",
                "" if compile_ms is None else f"{compile_ms:.0f}",
                "" if run_kernel is None else f"{run_kernel:.2f}"]
        for p in peers:
            v = cells.get(p)
            line.append("" if v is None else v if isinstance(v, str) else ratio(v))
        real = [v for p, v in cells.items() if p != "copy" and not isinstance(v, str)]
        line.append(ratio(min(real)) if real else "")
        print("| " + " | ".join(line) + " |")
    ctx = data.get("context", {})
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
