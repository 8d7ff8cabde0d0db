"""The oracle's throughput from Python: random cases per second of uops.check on an op.

    PYTHONPATH=build/release/python /usr/bin/python3 python/benchmarks/oracle_overhead.py [op]
    build/release/bench/oracle/bench_oracle --benchmark_filter=<op>   # the same check from C++

Each line checks the op with 100 trials per round, seeds advancing as bench_oracle's do, with:
  numpy        a NumPy kernel (softmax, relu): what a user checks;
  interp       the canonical interpreter program, compiled once and run through the binding:
               the same work as bench_oracle's implementation, plus a Python call, two array
               conversions and the GIL per case: the binding's own cost;
  c            the generated C kernel, run through the binding.
"""

import sys
import time

import numpy as np

import uops


def numpy_kernel(op):
    if op == "softmax":
        def softmax(x):
            e = np.exp(x - x.max(axis=1, keepdims=True))
            return e / e.sum(axis=1, keepdims=True)
        return softmax
    if op == "relu":
        return lambda x: np.maximum(x, x.dtype.type(0))
    return None


def through_binding(op, exe):
    names = [i.name for i in uops.find_op(op).inputs]

    def kernel(*arrays, **params):
        return exe.run(dict(zip(names, arrays)), params)
    return kernel


def measure(op, fn, seconds=2.0):
    """Cases per second of this process's CPU time, as bench_oracle's counter (on a shared
    machine wall time mostly measures the neighbours), per second of wall time, and the CPU
    microseconds per case spent inside fn itself."""
    inside = [0.0]

    def timed(*args, **kwargs):
        start = time.process_time()
        try:
            return fn(*args, **kwargs)
        finally:
            inside[0] += time.process_time() - start

    cases, seed = 0, 1
    wall, cpu = time.perf_counter(), time.process_time()
    while time.process_time() - cpu < seconds:
        report = uops.check(op, timed, trials=100, seed=seed)
        assert report.passed, report.message()
        cases += report.cases
        seed += 100
    return (cases / (time.process_time() - cpu), cases / (time.perf_counter() - wall),
            inside[0] / cases * 1e6)


def main():
    op = sys.argv[1] if len(sys.argv) > 1 else "softmax"
    program = uops.forward_program(op, "f32")
    kernels = {
        "numpy": numpy_kernel(op),
        "interp": through_binding(op, uops.compile(program, "interp")),
        "c": through_binding(op, uops.compile_c(uops.optimize(program), openmp=False)),
    }
    for name, fn in kernels.items():
        if fn is not None:
            cpu, wall, fn_us = measure(op, fn)
            print(f"{op} {name:7s} {cpu:8.0f} cases per CPU second ({1e6 / cpu:5.1f} us a case, "
                  f"{fn_us:5.1f} us in fn), {wall:8.0f} per wall second")


if __name__ == "__main__":
    main()
