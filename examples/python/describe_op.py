"""An op described in Python, registered, checked, and run through generated C.

    PYTHONPATH=build/release/python /usr/bin/python3 examples/python/describe_op.py

swish_rows(x, b)[i, j] = (x[i, j] + b[j]) * sigmoid(x[i, j] + b[j]): a broadcast bias added to
each row (a reindex, with b's size asserted equal to x's columns), then an elementwise swish.
"""

import numpy as np

import uops


def build(dtype):
    g = uops.Graph()
    x = g.input("x", 2, dtype)
    b = g.input("b", 1, dtype)
    rows = g.reindex(b, ["dA0", "dA1[=dB0]"], ["i1"], [x, b])
    h = g.binary("add", x, rows)
    g.output("y", g.binary("mul", h, g.unary("sigmoid", h)))
    return g


def main():
    op = uops.register_op("swish_rows", build,
                          inputs=[uops.OpInput("x", 2), uops.OpInput("b", 1)], outputs=["y"],
                          example_shapes={"x": [64, 128], "b": [128]})
    program = uops.optimize(uops.forward_program(op, "f32"))
    print(uops.emit(program, "c", reassociate=False))

    kernel = uops.compile_c(program)
    x = np.random.default_rng(0).normal(size=(64, 128)).astype(np.float32)
    b = np.linspace(-1, 1, 128, dtype=np.float32)
    y = kernel.run({"x": x, "b": b})["y"]
    h = x + b
    np.testing.assert_allclose(y, h / (1 + np.exp(-h)), rtol=1e-5, atol=1e-6)
    print("generated C agrees with NumPy on", x.shape)

    # The compiled kernel as the implementation under the oracle, and the gradient program.
    report = uops.check(op, lambda x, b: kernel.run({"x": x, "b": b})["y"], trials=100)
    print(report.message(), end="")
    assert report.passed
    print("gradient outputs:", uops.gradient_program(op).outputs)


if __name__ == "__main__":
    main()
