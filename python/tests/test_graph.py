"""Graphs with the C++ API's ops and index expressions; lower, optimize, gradient, emit."""

import io

import numpy as np
import pytest

import uops


def matmul_graph(dtype="f32"):
    g = uops.Graph()
    a = g.input("a", 2, dtype)
    b = g.input("b", 2, dtype)
    prod = g.binary(uops.BinaryOp.mul,
                    g.reindex(a, ["dA0", "dB1", "dA1[=dB0]"], ["i0", "i2"], [a, b]),
                    g.reindex(b, ["dA0", "dB1", "dA1"], ["i2", "i1"], [a, b]))
    g.output("c", g.reindex(g.reduce("sum", [2], prod), ["dA0", "dB1"], ["i0", "i1", "0"], [a, b]))
    return g


def test_matmul_described_in_python_runs_on_the_interpreter():
    p = uops.optimize(uops.lower(matmul_graph()))
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.arange(12, dtype=np.float32).reshape(3, 4)
    out = uops.compile(p, "interp").run({"a": a, "b": b})
    np.testing.assert_allclose(out["c"], a @ b, rtol=1e-6)
    assert p.inputs == ["a", "b"] and p.outputs == ["c"]


def test_bad_index_expression_raises_uops_error_naming_the_column():
    g = uops.Graph()
    x = g.input("x", 2)
    with pytest.raises(uops.Error, match=r'"i0 \+ \* 2": column 6: expected a term'):
        g.reindex(x, ["dA0", "dA1"], ["i0 + * 2", "i1"])


def test_unknown_parameter_and_operator_are_errors_naming_them():
    g = uops.Graph()
    x = g.input("x", 1)
    with pytest.raises(uops.Error, match=r"\$stride"):
        g.reindex(x, ["dA0"], ["i0 * $stride"])
    with pytest.raises(uops.Error, match="expm1"):
        g.unary("expm1", x)
    with pytest.raises(uops.Error, match="no dtype int64"):
        g.input("y", 1, np.int64)


def test_lower_without_outputs_is_an_error():
    g = uops.Graph()
    g.input("x", 1)
    with pytest.raises(uops.Error):
        uops.lower(g)


def test_optimize_dumps_after_a_pass_and_refuses_an_unknown_one():
    dump = io.StringIO()
    p = uops.optimize(uops.lower(matmul_graph()), dump_after="all", dump=dump, verify=True)
    assert p.blocks == 2  # the zeros, one loop nest, no temporaries
    uops.plan_cpu(p, dump_after="all", dump=dump, verify=True)
    for name in uops.pass_names():
        assert name in dump.getvalue()
    with pytest.raises(uops.Error, match="no_such_pass"):
        uops.optimize(uops.lower(matmul_graph()), dump_after="no_such_pass")


def test_gradient_of_a_python_graph_matches_numpy():
    g = matmul_graph("f64")
    grad = uops.optimize(uops.gradient(g, ["a"]))
    assert grad.outputs == ["da"]
    rng = np.random.default_rng(0)
    a, b, dc = rng.normal(size=(2, 3)), rng.normal(size=(3, 4)), rng.normal(size=(2, 4))
    inputs = {name: v for name, v in {"dc": dc, "a": a, "b": b}.items() if name in grad.inputs}
    out = uops.compile(grad).run(inputs)
    np.testing.assert_allclose(out["da"], dc @ b.T, rtol=1e-12)


def test_stop_gradient_keeps_the_value_and_blocks_the_gradient():
    g = uops.Graph()
    x = g.input("x", 1, "f64")
    g.output("y", g.binary("mul", x, g.stop_gradient(x)))  # y = x^2, dx = x dy
    x0, dy = np.array([1.0, -2.0, 0.5]), np.array([1.0, 2.0, 3.0])
    out = uops.compile(uops.optimize(uops.lower(g))).run({"x": x0})
    np.testing.assert_array_equal(out["y"], x0 * x0)
    out = uops.compile(uops.optimize(uops.gradient(g, ["x"]))).run({"x": x0, "dy": dy})
    np.testing.assert_array_equal(out["dx"], x0 * dy)


def test_gradient_graph_differentiates_again_and_hvp_matches_numpy():
    g = uops.Graph()
    x = g.input("x", 1, "f64")
    g.output("y", g.binary("mul", g.binary("mul", x, x), x))  # y = x^3
    gg = uops.gradient_graph(g, ["x"])  # dx = 3 x^2 dy
    second = uops.optimize(uops.gradient(gg, ["x"], "g"))  # gx = 6 x dy gdx
    x0, dy, gdx = np.array([1.0, -2.0, 0.5]), np.array([1.0, 2.0, 3.0]), np.array([2.0, 1.0, -1.0])
    feed = {"x": x0, "dy": dy, "gdx": gdx}
    out = uops.compile(second).run({k: v for k, v in feed.items() if k in second.inputs})
    np.testing.assert_allclose(out["gx"], 6 * x0 * dy * gdx, rtol=1e-12)
    h = uops.optimize(uops.lower(uops.hvp(g, ["x"])))
    feed = {"x": x0, "dy": dy, "tx": gdx}
    out = uops.compile(h).run({k: v for k, v in feed.items() if k in h.inputs})
    hv = [v for k, v in out.items() if k != "dx" and k != "y"]
    assert any(np.allclose(v, 6 * x0 * dy * gdx, rtol=1e-12) for v in hv), out


def test_gradient_given_saved_values_matches_the_recomputing_one():
    g = uops.find_op("softmax").build("f64")
    saved = uops.gradient_residuals(g, ["x"])
    forward = uops.compile(uops.optimize(uops.lower(uops.with_saved_outputs(g, saved))))
    rng = np.random.default_rng(1)
    x, dy = rng.normal(size=(3, 5)), rng.normal(size=(3, 5))
    kept = forward.run({"x": x})
    given = uops.optimize(uops.gradient(g, ["x"], saved=saved))
    assert "x" not in given.inputs
    out = uops.compile(given).run({k: v for k, v in {**kept, "dy": dy}.items()
                                   if k in given.inputs})
    y = kept["y"]
    np.testing.assert_allclose(out["dx"], y * (dy - (dy * y).sum(1, keepdims=True)), rtol=1e-12)
    with pytest.raises(uops.Error, match="saved twice"):
        uops.gradient(g, ["x"], saved=[saved[0], saved[0]])


def test_gradient_program_of_a_registered_op():
    p = uops.gradient_program("relu", "f64")
    x = np.array([[-1.0, 2.0]])
    dy = np.array([[5.0, 7.0]])
    out = uops.compile(uops.optimize(p)).run({"dy": dy, "x": x})
    np.testing.assert_array_equal(out["dx"], [[0.0, 7.0]])
    assert uops.differentiable_inputs("matmul") == ["a", "b"]


def test_emit_gives_c_and_cuda_source():
    p = uops.optimize(uops.lower(matmul_graph()))
    c = uops.emit(p, "c")
    assert "uops_kernel" in c and "for (int64_t" in c
    cuda = uops.emit(p, "cuda")
    assert "__global__" in cuda
    with pytest.raises(uops.Error, match="unknown emit target 'ptx'"):
        uops.emit(p, "ptx")


def test_dtypes_are_accepted_by_name_enum_and_numpy_type():
    for dtype in ("f64", uops.f64, uops.DType.f64, np.float64, np.dtype("float64")):
        g = uops.Graph()
        g.output("y", g.unary("neg", g.input("x", 1, dtype)))
        out = uops.compile(uops.lower(g)).run({"x": np.ones(2)})
        assert out["y"].dtype == np.float64
