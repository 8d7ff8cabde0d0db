#!/usr/bin/env python3
"""table.py merges saved bench_backends runs: medians over rounds, the range of the best peer,
"wrong" from any round, a row some rounds lack. Python 3 standard library only."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

TABLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "table.py")


def run_json(rows):
    """A bench_backends JSON run: rows of (name, threads, uops_ms, {counter: value})."""
    return {"context": {"num_cpus": 2, "mhz_per_cpu": 2000, "date": "d", "load_avg": [0, 0, 0]},
            "benchmarks": [dict({"name": f"BM_{n}/threads:{t}/real_time", "threads": t, "uops_ms": ms,
                                 "compile_ms": 100.0, "run/kernel": 1.0}, **c) for n, t, ms, c in rows]
                          + [{"name": "BM_compile_cold", "real_time": 1.0}]}


def table(*runs):
    with tempfile.TemporaryDirectory() as d:
        paths = []
        for i, r in enumerate(runs):
            paths.append(os.path.join(d, f"{i}.json"))
            with open(paths[-1], "w") as f:
                json.dump(r, f)
        out = subprocess.run([sys.executable, TABLE] + paths, check=True, stdout=subprocess.PIPE,
                             text=True).stdout
    return [l.strip("| ").split(" | ") for l in out.splitlines() if l.startswith("| ")]


class Table(unittest.TestCase):
    def test_one_run_has_no_range_column(self):
        rows = table(run_json([("conv2d", 1, 9.0, {"C/oneDNN": 0.93, "C/copy": 0.02})]))
        self.assertEqual(rows[0], ["workload", "threads", "uops ms", "cold compile ms", "run()/kernel",
                                   "oneDNN/uops", "copy/uops", "best peer/uops"])
        self.assertEqual(rows[1], ["conv2d", "1", "9", "100", "1.00", "0.93", "0.02", "0.93"])

    def test_rounds_give_medians_and_the_range_of_the_best(self):
        runs = [run_json([("matmul", 2, ms, {"C/oneDNN": d, "C/OpenBLAS": 2.0})])
                for ms, d in ((1.0, 0.8), (3.0, 1.0), (2.0, 0.9))]
        rows = table(*runs)
        self.assertEqual(rows[0][-2:], ["best peer/uops", "best over 3 rounds"])
        self.assertEqual(rows[1], ["matmul", "2", "2", "100", "1.00", "0.90", "2.00", "0.90", "0.80–1.00"])

    def test_a_peer_wrong_in_any_round_is_wrong(self):
        rows = table(run_json([("gelu_bwd", 1, 2.0, {"C/Eigen": 1.5, "C/oneDNN": 1.2})]),
                     run_json([("gelu_bwd", 1, 2.0, {"C/Eigen": 1.5, "wrong/oneDNN": 1})]))
        self.assertEqual(rows[1][5:], ["wrong", "1.50", "1.50", "1.50–1.50"])

    def test_a_row_some_rounds_lack_says_how_many_have_it(self):
        rows = table(run_json([("softmax", 1, 1.0, {"C/oneDNN": 2.0}), ("layernorm", 1, 1.0, {"C/oneDNN": 1.1})]),
                     run_json([("softmax", 1, 1.0, {"C/oneDNN": 2.2})]))
        self.assertEqual(rows[1][-1], "2.00–2.20")
        self.assertEqual(rows[2][-1], "1.10–1.10 (1 of 2 rounds)")


if __name__ == "__main__":
    unittest.main()
