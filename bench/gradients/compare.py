#!/usr/bin/env python3
"""Runs two builds of bench_gradients interleaved (before, after, after, before, ...) and prints,
per benchmark, the median time of each over the rounds and their ratio (after / before: below 1,
the change made it faster).

  bench/gradients/compare.py OLD/bench_gradients NEW/bench_gradients [--rounds 7]
      [--filter REGEX] [--min-time 0.2]

On a shared, noisy machine, interleaving and medians keep drift from reading as a difference.
"""
import argparse
import json
import statistics
import subprocess
import sys


def run(binary, filt, min_time):
    cmd = [binary, "--benchmark_format=json", f"--benchmark_min_time={min_time}"]
    if filt:
        cmd.append(f"--benchmark_filter={filt}")
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    times = {}
    for b in json.loads(out)["benchmarks"]:
        unit = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}[b.get("time_unit", "ns")]
        times[b["name"]] = b["real_time"] * unit
    return times


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--filter", default="")
    ap.add_argument("--min-time", default="0.2")
    a = ap.parse_args()
    samples = {"before": {}, "after": {}}
    for r in range(a.rounds):
        order = ["before", "after"] if r % 2 == 0 else ["after", "before"]
        for which in order:
            for name, t in run(getattr(a, which), a.filter, a.min_time).items():
                samples[which].setdefault(name, []).append(t)
        print(f"round {r + 1}/{a.rounds} done", file=sys.stderr)
    names = [n for n in samples["after"] if n in samples["before"]]
    print(f"{'benchmark':40} {'before us':>12} {'after us':>12} {'after/before':>12}")
    for n in names:
        b = statistics.median(samples["before"][n])
        f = statistics.median(samples["after"][n])
        print(f"{n:40} {b:12.2f} {f:12.2f} {f / b:12.3f}")
    for n in sorted(set(samples["after"]) ^ set(samples["before"])):
        print(f"{n}: only in {'after' if n in samples['after'] else 'before'}")


if __name__ == "__main__":
    main()
