"""A NumPy softmax checked against uops' softmax on random cases.

    PYTHONPATH=build/release/python /usr/bin/python3 examples/python/softmax_numpy.py

The right kernel passes; the one without the max shift overflows on the large inputs the oracle
draws for softmax, and the failure comes back shrunk, with a replay of the same function.
"""

import numpy as np

import uops
import uops.testing


def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def softmax_without_max_shift(x):
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(x)
        return e / e.sum(axis=1, keepdims=True)


def main():
    print(uops.testing.check("softmax", softmax, trials=200).message(), end="")
    report = uops.check("softmax", softmax_without_max_shift, trials=200)
    assert not report.passed
    print(report.message(), end="")
    # The inputs of the shrunk case, to debug with.
    print("shrunk inputs:", uops.case_inputs("softmax", report.replay))


if __name__ == "__main__":
    main()
