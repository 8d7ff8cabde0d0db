"""A PyTorch function checked against uops' op: GELU.

    PYTHONPATH=build/release/python /usr/bin/python3 examples/python/torch_function.py

uops' gelu is the tanh approximation: torch's GELU with approximate="tanh" passes, its default
(the exact, erf-based one) does not, and the report says by how much. Needs PyTorch (Debian:
python3-torch); without it the example says so and exits 0.
"""

import sys

import uops
import uops.testing


def main():
    try:
        import torch
    except ImportError:
        print("skipped: PyTorch is not installed (Debian: apt-get install python3-torch)")
        return

    def gelu_tanh(x):
        return torch.nn.functional.gelu(x, approximate="tanh")

    def gelu_exact(x):
        return torch.nn.functional.gelu(x)

    report = uops.testing.check("gelu", uops.testing.torch_kernel(gelu_tanh), trials=200)
    print(report.message(), end="")
    report = uops.check("gelu", uops.testing.torch_kernel(gelu_exact), trials=200)
    print(report.message(), end="")
    if report.passed:
        sys.exit("the exact GELU should differ from the tanh approximation")


if __name__ == "__main__":
    main()
