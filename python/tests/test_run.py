"""Running programs on NumPy arrays: the interpreter, the C backend, CUDA where a device is.

Arrays that are non-contiguous are copied; a wrong dtype or rank is an error; never a wrong
result."""

import numpy as np
import pytest

import uops


def program(op="transpose", dtype="f32"):
    return uops.optimize(uops.forward_program(op, dtype))


@pytest.fixture(scope="module")
def c_transpose():
    return uops.compile_c(program(), reassociate=False)


def test_c_and_interpreter_agree_with_numpy(c_transpose):
    x = np.random.default_rng(1).normal(size=(5, 7)).astype(np.float32)
    for exe in (uops.compile(program(), "interp"), c_transpose):
        out = exe.run({"x": x})
        np.testing.assert_array_equal(out["y"], x.T)
        assert out["y"].dtype == np.float32
    assert c_transpose.backend == "c"


def test_outputs_own_their_memory(c_transpose):
    out = c_transpose.run({"x": np.ones((2, 3), np.float32)})["y"]
    del c_transpose
    assert out.flags.c_contiguous and out.flags.writeable
    out[0, 0] = 5  # the array owns the result, with no copy made
    assert out.sum() == 10


@pytest.mark.parametrize("view", [
    lambda a: a.T,                 # Fortran order
    lambda a: a[::2, 1::3],        # strided
    lambda a: a[::-1, ::-1],       # negative strides
    lambda a: np.asfortranarray(a),
])
def test_non_contiguous_inputs_give_the_right_result(view, c_transpose):
    base = np.arange(12 * 9, dtype=np.float32).reshape(12, 9)
    x = view(base)
    assert not x.flags.c_contiguous
    for exe in (uops.compile(program()), c_transpose):
        np.testing.assert_array_equal(exe.run({"x": x})["y"], np.ascontiguousarray(x).T)


def test_wrong_dtype_is_an_error_naming_the_input(c_transpose):
    with pytest.raises(uops.Error, match="input 'x' has dtype f64, expected f32"):
        c_transpose.run({"x": np.ones((2, 3))})
    with pytest.raises(uops.Error, match="input 'x' has dtype int64, which uops has no type for"):
        c_transpose.run({"x": np.ones((2, 3), np.int64)})
    with pytest.raises(uops.Error, match="input 'x' has dtype >f4"):
        c_transpose.run({"x": np.ones((2, 3), ">f4")})


def test_wrong_rank_missing_and_unknown_inputs_are_errors(c_transpose):
    with pytest.raises(uops.Error, match="input 'x' has rank 1"):
        c_transpose.run({"x": np.ones(3, np.float32)})
    with pytest.raises(uops.Error, match="input 'x' has rank 3"):
        c_transpose.run({"x": np.ones((1, 2, 3), np.float32)})
    with pytest.raises(uops.Error, match="missing input 'x'"):
        c_transpose.run({})
    with pytest.raises(uops.Error, match="unknown input 'z'"):
        c_transpose.run({"x": np.ones((2, 2), np.float32), "z": np.ones(1, np.float32)})


def test_lists_are_taken_as_arrays():
    out = uops.compile(program(dtype="f64")).run({"x": [[1.0, 2.0], [3.0, 4.0]]})
    np.testing.assert_array_equal(out["y"], [[1.0, 3.0], [2.0, 4.0]])


def test_parameters_and_missing_ones():
    exe = uops.compile(program("pad2d"))
    x = np.ones((1, 1, 2, 2), np.float32)
    out = exe.run({"x": x}, {"pad": 1})["y"]
    np.testing.assert_array_equal(out, np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0))))  # NHWC
    with pytest.raises(uops.Error, match="missing parameter 'pad'"):
        exe.run({"x": x})


def test_fixed_parameters_run_and_refuse_other_values():
    fixed = uops.fix_params(program("pad2d"), {"pad": 1})
    exe = uops.compile(fixed)
    x = np.ones((1, 1, 2, 2), np.float32)
    out = exe.run({"x": x}, {"pad": 1})["y"]
    np.testing.assert_array_equal(out, np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0))))
    with pytest.raises(uops.Error, match=r"\$pad"):
        exe.run({"x": x}, {"pad": 2})
    with pytest.raises(uops.Error, match="cannot fix unknown parameter .stride."):
        uops.fix_params(program("pad2d"), {"stride": 1})


def test_a_run_past_the_memory_budget_is_a_limit_error():
    g = uops.Graph()
    g.param("n")
    x = g.input("x", 1)
    g.output("y", g.reindex(x, ["$n", "$n"], ["0"]))
    with pytest.raises(uops.LimitError, match="tensor 'y'"):
        uops.compile(uops.lower(g)).run({"x": np.ones(1, np.float32)}, {"n": 1 << 30})


@pytest.mark.skipif("cuda" not in uops.available_backends(),
                    reason="no CUDA backend here: " + uops.cuda_unavailable_reason())
def test_cuda_agrees_with_numpy():
    x = np.random.default_rng(2).normal(size=(33, 17)).astype(np.float32)
    np.testing.assert_array_equal(uops.compile(program(), "cuda").run({"x": x})["y"], x.T)


def test_cuda_unavailable_is_an_error_saying_why():
    if "cuda" in uops.available_backends():
        pytest.skip("CUDA runs here")
    with pytest.raises(uops.Error, match="CUDA backend cannot run"):
        uops.compile(program(), "cuda")


def test_compiling_releases_the_gil(tmp_path, monkeypatch):
    """The C compiler, run by compile_c, waits for a file only this test's main thread creates:
    were the GIL held while compiling, the main thread could not run, and the compiler would
    give up after 30 s and fail the compilation."""
    started, go = tmp_path / "started", tmp_path / "go"
    compiler = tmp_path / "cc"
    compiler.write_text(f"""#!/bin/sh
[ "$1" = --version ] && exec cc "$@"
touch {started}
for i in $(seq 300); do [ -f {go} ] && exec cc "$@"; sleep 0.1; done
exit 1
""")
    compiler.chmod(0o700)
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    monkeypatch.setenv("UOPS_CACHE_DIR", str(cache))

    import threading
    result = {}

    def compile_in_thread():
        try:
            result["exe"] = uops.compile_c(program("relu"), compiler=str(compiler))
        except uops.Error as e:
            result["error"] = e

    thread = threading.Thread(target=compile_in_thread)
    thread.start()
    while not started.exists() and thread.is_alive():
        thread.join(0.01)
    go.touch()
    thread.join()
    assert "error" not in result, result["error"]
    x = np.array([[-1.0, 1.0]], np.float32)
    np.testing.assert_array_equal(result["exe"].run({"x": x})["y"], [[0.0, 1.0]])


def test_empty_and_zero_dimensional_arrays(c_transpose):
    assert c_transpose.run({"x": np.ones((0, 3), np.float32)})["y"].shape == (3, 0)
    g = uops.Graph()
    g.output("y", g.unary("neg", g.input("x", 0)))
    exe = uops.compile(uops.lower(g))
    for x in (np.float32(2), np.array(2, np.float32)):
        y = exe.run({"x": x})["y"]
        assert y.shape == () and y == -2
    with pytest.raises(uops.Error, match="input 'x' has dtype object"):
        exe.run({"x": object()})
