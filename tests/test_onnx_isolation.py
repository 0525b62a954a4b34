"""dmljax.onnx.export touches no global state, takes any callable, keeps input dtypes, refuses by name.

The process-state checks run in a fresh process (``tests/onnx_isolation_worker.py``).
Design note: docs/design/onnx-export.md.
"""

import json
import os
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

pytest.importorskip("jax2onnx")
onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

import dmljax  # noqa: E402
import dmljax.onnx  # noqa: E402
from tests._util import run_onnx  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.system
@pytest.mark.slow
def test_exports_leave_the_process_as_they_found_it():
    """Operator, partial, closure, another module's function, compile_operator, Equinox and NNX methods."""
    env = dict(os.environ, PYTHONPATH=ROOT)
    done = subprocess.run(
        [sys.executable, os.path.join(ROOT, "tests", "onnx_isolation_worker.py")],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    for key in ("onnx_matches", "after_eager", "after_jit"):
        assert all(report[key].values()), (key, report[key])
    assert report["nodes"]["operator"] == report["nodes"]["compile_operator"] == ["Clip", "Gather"]
    assert report["nodes"]["equinox"] == report["nodes"]["nnx"] == report["nodes"]["other_module"]
    assert report["thread"]["calls"] > 0 and report["thread"]["bad"] == 0, report["thread"]
    assert report["thread"]["errors"] == []
    assert report["state_unchanged"]


def test_int64_example_indices_stay_int64_model_inputs():
    data, indices = np.arange(10, dtype=np.float32).reshape(5, 2), np.array([4, -1, 0], np.int64)
    model = dmljax.onnx.export(lambda t, i: dmljax.gather(t, i), data, indices)
    onnx.checker.check_model(model, full_check=True)
    elem = [i.type.tensor_type.elem_type for i in model.graph.input]
    assert elem == [onnx.TensorProto.FLOAT, onnx.TensorProto.INT64]
    (got,) = run_onnx(model, data, indices)
    np.testing.assert_array_equal(got, data[[4, -1, 0]])


def test_int64_inputs_beyond_int32_saturate_instead_of_wrapping():
    """2^32 + 1 must not become 1 in the Cast: it stays out of range and is clipped to the last row."""
    data, indices = np.arange(10, dtype=np.float32).reshape(5, 2), np.array([0], np.int64)
    model = dmljax.onnx.export(lambda t, i: dmljax.gather(t, i), data, indices)
    (got,) = run_onnx(model, data, np.array([2**32 + 1], np.int64))
    np.testing.assert_array_equal(got, data[[4]])


def test_complex_data_is_refused_by_name():
    data = np.ones((3, 2), np.complex64)
    with pytest.raises(dmljax.ValidationError, match=r"dmljax.onnx.export: .* must hold no complex values.*complex64"):
        dmljax.onnx.export(lambda t, i: dmljax.gather(t, i), data, np.array([1], np.int32))


def test_jax_random_on_prng_impl_keys_is_refused_by_name():
    data = jax.random.key_data(jax.random.key(0, impl=dmljax.random.prng_impl))

    def fn(words):
        return jax.random.uniform(jax.random.wrap_key_data(words, impl=dmljax.random.prng_impl), (3,))

    with pytest.raises(dmljax.ValidationError, match=r"jax.random \(random_\w+\): .*must not reach an ONNX export"):
        dmljax.onnx.export(fn, np.asarray(data))


def test_opsets_onnxruntime_or_onnx_cannot_load_are_refused():
    fn, args = (lambda t: dmljax.slice(t, (0,), (2,), (1,))), (np.ones(3, np.float32),)
    with pytest.raises(dmljax.ValidationError, match=r"opset must be <= \d+, the newest the installed onnx"):
        dmljax.onnx.export(fn, *args, opset=onnx.defs.onnx_opset_version() + 1)


def test_the_marker_is_an_identity_for_jit_grad_vmap_and_transpose():
    from dmljax._core.markers import MARK_P, mark

    def f(x, i):
        return mark(x[i] * 2.0, x, i, op="demo", axis=0)

    x = jnp.arange(3.0)
    assert [e.primitive for e in jax.make_jaxpr(f)(x, 1).eqns][-1] is MARK_P
    assert "dmljax_mark" not in jax.jit(f).lower(x, 1).as_text()
    assert float(jax.jit(f)(x, 2)) == 4.0
    np.testing.assert_array_equal(jax.grad(f)(x, 1), [0.0, 2.0, 0.0])
    np.testing.assert_array_equal(jax.vmap(f, (0, None))(jnp.stack([x, x + 1]), 1), [2.0, 4.0])
    (ct,) = jax.linear_transpose(lambda v: f(v, 1), x)(3.0)
    np.testing.assert_array_equal(ct, [0.0, 6.0, 0.0])
    exported = jax.export.export(jax.jit(f))(x, 1)
    assert float(jax.export.deserialize(exported.serialize()).call(x, 0)) == 0.0


@pytest.mark.parametrize("dtype", [np.float16, np.int16, np.uint16, np.uint32, np.uint64])
def test_fill_and_drop_run_on_onnxruntime_for_types_its_where_and_pad_lack(dtype):
    """onnxruntime's CPU Where/Pad lack these types: the subgraph casts around them (uint64 wraps there and back)."""
    high = np.iinfo(dtype).max if np.dtype(dtype).kind in "iu" else 9
    data = np.array([[0, 1, 2], [high, 4, 5], [6, 7, 8], [9, 10, 11]], dtype=dtype)
    rows = np.array([[1, 7, -1]], np.int32)
    cases = [
        (lambda d, i: dmljax.gather(d, i[0], mode="fill"), (data, rows)),
        (lambda d, i: dmljax.gather_elements(d, i, axis=0, mode="fill"), (data, rows)),
        (lambda d, i, u: dmljax.scatter(d, i, u, mode="fill"), (data, rows, data[1:2])),
    ]
    with jax.enable_x64(True):
        for fn, args in cases:
            (got,) = run_onnx(dmljax.onnx.export(fn, *args), *args)
            want = np.asarray(jax.jit(fn)(*args))
            assert got.dtype == want.dtype and got.tobytes() == want.tobytes(), (got, want)


B = jax.export.symbolic_shape("B")[0]
B3 = jax.export.symbolic_shape("B", constraints=("B >= 3",))[0]  # a window may start past row 0


@pytest.mark.parametrize(
    "offset, stride",
    [(0, 1), (0, -1), (0, 2), (1, -2), (2, 1)],
    ids=["whole", "reversed", "step2", "rev-step2", "tail"],
)
def test_slice1_on_a_symbolic_batch_runs_to_the_end(offset, stride):
    def fn(d):
        return dmljax.slice(d, (offset, 0), (d.shape[0] - offset, 2), (stride, 1))

    model = dmljax.onnx.export(fn, jax.ShapeDtypeStruct((B3, 2), np.float32))
    for rows in (5, 8):
        data = np.arange(rows * 2, dtype=np.float32).reshape(rows, 2)
        (got,) = run_onnx(model, data)
        np.testing.assert_array_equal(got, np.asarray(fn(data)))


@pytest.mark.parametrize(
    "fn, specs, match",
    [
        (lambda d: dmljax.slice(d, (0, 0), (d.shape[0], 2), (1, 1), (1, 2)), [((B, 2), np.float32)], r"window\[0\]"),
        (
            lambda d, i: dmljax.gather(d, i),
            [((B, 2), np.float32), ((3,), np.int32)],
            r"gather: data.shape\[0\] must be a fixed size in an ONNX",
        ),
        (
            lambda d, i: dmljax.gather(d, i),
            [((B, 2), np.float32), ((3,), np.int32)],
            r"gather: data.shape\[0\] must be a fixed size in an ONNX",
        ),
        (
            lambda d, i, u: dmljax.scatter(d, i, u),
            [((B, 2), np.float32), ((1, 2), np.int32), ((1, 2), np.float32)],
            r"scatter: data.shape\[0\] must be a fixed size in an ONNX",
        ),
        (
            lambda b: dmljax.read_tensor(b, dmljax.TensorDesc("float32", (2, 3), strides=(5, 1))),
            [((B,), np.float32)],
            r"buffer length must be a fixed",
        ),
    ],
    ids=["slice1-short-window", "gather-along-B", "gather-int32-along-B", "scatter-along-B", "read_tensor-length-B"],
)
def test_symbolic_dimensions_onnx_cannot_express_raise_named_errors(fn, specs, match):
    with pytest.raises(dmljax.ValidationError, match=match):
        dmljax.onnx.export(fn, *[jax.ShapeDtypeStruct(*s) for s in specs])


@pytest.mark.parametrize("reduction", ["add", "mul", "max", "min"])
@pytest.mark.parametrize("mode", [None, "clip", "fill"])
def test_scatter_reductions_are_scatter_elements_equal_to_onnxruntime_with_duplicates(reduction, mode):
    """Duplicates combine in ONNX's row-major order on both sides: bit for bit (float32 sums included)."""
    rng = np.random.default_rng(31)
    data = rng.standard_normal((3, 4)).astype(np.float32) * 1e4
    indices = np.array([[0, 2, 2, 1], [2, 2, 0, 7 if mode else 1]], np.int32)  # duplicates; 7 out of range
    updates = rng.standard_normal((2, 4)).astype(np.float32)

    def fn(d, i, u):
        return dmljax.scatter(d, i, u, axis=0, reduction=reduction, mode=mode)

    model = dmljax.onnx.export(fn, data, indices, updates, opset=18)
    onnx.checker.check_model(model, full_check=True)
    scatters = [n for n in model.graph.node if n.op_type == "ScatterElements"]
    assert [a.s for n in scatters for a in n.attribute if a.name == "reduction"] == [reduction.encode()]
    (got,) = run_onnx(model, data, indices, updates)
    assert got.tobytes() == np.asarray(jax.jit(fn)(data, indices, updates)).tobytes()


def test_a_reduction_the_opset_cannot_express_is_refused():
    args = np.zeros((3, 2), np.float32), np.zeros((1, 2), np.int32), np.ones((1, 2), np.float32)
    dmljax.onnx.export(lambda d, i, u: dmljax.scatter(d, i, u, reduction="add"), *args, opset=16)
    with pytest.raises(dmljax.ValidationError, match=r"scatter: reduction must be exportable at opset 17 .*'max'.*18"):
        dmljax.onnx.export(lambda d, i, u: dmljax.scatter(d, i, u, reduction="max"), *args, opset=17)


@pytest.mark.parametrize("mode", [None, "clip", "fill", "promise_in_bounds"])
@pytest.mark.parametrize("batch_dims", [0, 1])
def test_gather_nd_is_one_gather_nd_equal_to_onnxruntime(mode, batch_dims):
    rng = np.random.default_rng(41)
    data = rng.standard_normal((2, 3, 4)).astype(np.float32)
    bad = mode in ("clip", "fill")
    indices = np.array([[[1, -1], [0, 9 if bad else 2]], [[-5 if bad else -2, 2], [1, 0]]], np.int32)
    indices = indices[..., :1] if batch_dims else indices

    def fn(d, i):
        return dmljax.gather_nd(d, i, batch_dims, mode=mode)

    model = dmljax.onnx.export(fn, data, indices)
    onnx.checker.check_model(model, full_check=True)
    assert [n.op_type for n in model.graph.node].count("GatherND") == 1
    (got,) = run_onnx(model, data, indices)
    assert got.tobytes() == np.asarray(jax.jit(fn)(data, indices)).tobytes()


@pytest.mark.parametrize("reduction", ["none", "add", "max"])
@pytest.mark.parametrize("mode", [None, "clip", "fill"])
def test_scatter_nd_is_one_scatter_nd_equal_to_onnxruntime_with_duplicates(mode, reduction):
    rng = np.random.default_rng(42)
    data = rng.standard_normal((4, 3)).astype(np.float32) * 1e4
    rows = [[1, 0], [3, 2], [1, 0], [-1, 1]] if reduction != "none" else [[1, 0], [3, 2], [-4, 1]]
    indices = np.array(rows + ([[7, 0]] if mode else []), np.int32)  # duplicates with a reduction; 7 out of range
    updates = rng.standard_normal(len(indices)).astype(np.float32)

    def fn(d, i, u):
        return dmljax.scatter_nd(d, i, u, reduction=reduction, mode=mode)

    model = dmljax.onnx.export(fn, data, indices, updates, opset=18)
    onnx.checker.check_model(model, full_check=True)
    assert [n.op_type for n in model.graph.node].count("ScatterND") == 1
    (got,) = run_onnx(model, data, indices, updates)
    assert got.tobytes() == np.asarray(jax.jit(fn)(data, indices, updates)).tobytes()
