"""The op registry from Python: built-in ops, ops registered from Python, op libraries."""

import os

import numpy as np
import pytest

import uops
import uops.testing


def test_built_in_ops_are_listed_and_found():
    names = [op.name for op in uops.all_ops()]
    assert "softmax" in names and "conv2d" in names
    conv = uops.find_op("conv2d")
    assert conv.origin == "builtin" and [i.name for i in conv.inputs] == ["x", "w"]
    assert conv.params == ["stride", "pad", "dilation"] and conv.outputs == ["y"]
    assert isinstance(conv.build("f64"), uops.Graph)
    with pytest.raises(uops.Error, match="unknown op 'softmaxx'"):
        uops.find_op("softmaxx")


def build_scaled_diff(dtype):
    """z = (x - y) * $k, and the row sums of z: an op with a parameter and two outputs."""
    g = uops.Graph()
    g.param("k")
    x = g.input("x", 2, dtype)
    y = g.input("y", 2, dtype)
    k = g.cast(g.iota(["dA0", "dA1"], "$k", [x]), dtype)
    z = g.binary("mul", g.binary("sub", x, g.reindex(y, ["dA0[=dB0]", "dA1[=dB1]"], ["i0", "i1"], [x, y])), k)
    g.output("z", z)
    g.output("s", g.reduce("sum", [1], z))
    return g


@pytest.fixture(scope="module")
def scaled_diff():
    return uops.register_op(
        "py_scaled_diff", build_scaled_diff,
        inputs=[uops.OpInput("x", 2), uops.OpInput("y", 2)], outputs=["z", "s"], params=["k"],
        example_shapes={"x": [4, 8], "y": [4, 8]}, example_params={"k": 2},
        param_ranges={"k": (1, 5)}, invalid=lambda shapes, params: (
            "k = 4 is refused" if params["k"] == 4 else None))


def test_an_op_registered_from_python_is_checked_run_and_differentiated(scaled_diff):
    assert uops.find_op("py_scaled_diff").origin == "user"

    def kernel(x, y, k):
        z = (x - y) * x.dtype.type(k)
        return {"z": z, "s": z.sum(axis=1, keepdims=True)}

    report = uops.testing.check(scaled_diff, kernel, trials=30)
    assert not report.has_reference  # a user's op is held to its own description
    ks = set()
    uops.check(scaled_diff, lambda x, y, k: ks.add(k) or kernel(x, y, k), trials=40)
    assert ks <= {1, 2, 3, 5}  # the range, less what `invalid` refuses
    wrong = uops.check(scaled_diff, lambda x, y, k: (x - y, (x - y).sum(axis=1, keepdims=True)))
    assert not wrong.passed and wrong.shrunk.params["k"] != 1  # where it would pass

    p = uops.optimize(uops.forward_program("py_scaled_diff", "f64"))
    x, y = np.ones((2, 3)), np.zeros((2, 3))
    out = uops.compile_c(p).run({"x": x, "y": y}, {"k": 3})
    np.testing.assert_array_equal(out["s"], [[9.0], [9.0]])
    assert uops.gradient_program("py_scaled_diff").outputs == ["dx", "dy"]


def test_registration_errors(scaled_diff):
    def broken(dtype):
        g = uops.Graph()
        g.reindex(g.input("x", 1, dtype), ["dA0 +"], ["i0"])
        return g

    with pytest.raises(uops.Error, match="column"):
        uops.register_op("py_broken", broken, inputs=[uops.OpInput("x", 1)], outputs=["y"])
    with pytest.raises(uops.Error, match="not a uops.Graph"):
        uops.register_op("py_none", lambda dtype: None, inputs=[uops.OpInput("x", 1)],
                         outputs=["y"])
    with pytest.raises(uops.Error, match="py_scaled_diff"):
        uops.register_op("py_scaled_diff", build_scaled_diff,
                         inputs=[uops.OpInput("x", 2), uops.OpInput("y", 2)], outputs=["z", "s"])
    with pytest.raises(uops.Error, match="unknown value distribution 'huge'"):
        uops.register_op("py_v", build_scaled_diff, inputs=[], outputs=[], values=["huge"])


def test_an_op_library_is_loaded_and_its_op_checked():
    path = os.environ.get("UOPS_OP_LIBRARY")
    if not path:
        pytest.skip("UOPS_OP_LIBRARY (the example op library the build makes) is not set")
    uops.load_op_library(path)
    rmsnorm = uops.find_op("rmsnorm")
    assert rmsnorm.origin == "library" and rmsnorm.library == os.path.abspath(path)
    assert [i.name for i in rmsnorm.inputs] == ["x", "w"]

    def kernel(x, w):
        return x / np.sqrt((x * x).mean(axis=1, keepdims=True) + x.dtype.type(1e-6)) * w

    assert uops.testing.check(rmsnorm, kernel, trials=20).cases == 20
    assert not uops.check(rmsnorm, lambda x, w: x * w).passed


def test_a_missing_op_library_is_an_error():
    with pytest.raises(uops.Error, match="cannot load op library"):
        uops.load_op_library("/nonexistent/libnope.so")


def test_an_op_with_an_index_input_draws_its_values_from_a_python_range():
    def build(dtype):
        g = uops.Graph()
        table = g.input("table", 2, dtype)
        idx = g.input("idx", 1, "i32")
        # y[n, d] = table[idx[n], d]
        g.output("y", g.select(0, table, g.reindex(idx, ["dA0", "dB1"], ["i0"], [idx, table])))
        return g

    seen = []

    def take(table, idx):
        seen.append((idx.dtype, int(idx.min()), int(idx.max()), table.shape[0]))
        return table[idx]

    op = uops.register_op(
        "py_take", build,
        inputs=[uops.OpInput("table", 2),
                uops.OpInput("idx", 1, is_index=True, differentiable=False,
                             values=lambda shapes, params: (0, shapes["table"][0] - 1))],
        outputs=["y"])
    assert [i.is_index for i in op.inputs] == [False, True]
    uops.testing.check(op, take, trials=30)
    assert all(dtype == np.int32 and 0 <= lo <= hi < rows for dtype, lo, hi, rows in seen)


def test_a_python_callback_returning_the_wrong_type_is_an_error():
    def build(dtype):
        g = uops.Graph()
        table = g.input("table", 2, dtype)
        idx = g.input("idx", 1, "i32")
        g.output("y", g.select(0, table, g.reindex(idx, ["dA0", "dB1"], ["i0"], [idx, table])))
        return g

    op = uops.register_op(
        "py_take_bad_range", build,
        inputs=[uops.OpInput("table", 2),
                uops.OpInput("idx", 1, is_index=True, values=lambda shapes, params: "all")],
        outputs=["y"])
    with pytest.raises(uops.Error, match="returned a value of the wrong type"):
        uops.check(op, lambda table, idx: table[idx], trials=2)
