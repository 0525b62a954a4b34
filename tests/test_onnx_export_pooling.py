"""dmljax.onnx.export of max_pool_with_indices (one MaxPool node), fold (one Col2Im node),
unfold and max_unpool (their JAX formulations), equal to JAX bit for bit in onnxruntime."""

import jax
import numpy as np
import pytest

pytest.importorskip("jax2onnx")
onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import dmljax  # noqa: E402
import dmljax.onnx  # noqa: E402


def run(model, *args):
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    feeds = {spec.name: np.asarray(a) for spec, a in zip(session.get_inputs(), args, strict=True)}
    return session.run(None, feeds)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize(
    "args", [((3, 3), (2, 2), (1, 1), (1, 1), (1, 1)), ((2, 3), (1, 2), (0, 1), (1, 1), (2, 1))], ids=str
)
def test_max_pool_is_one_maxpool_node(dtype, args):
    x = np.round(np.random.default_rng(0).standard_normal((2, 3, 7, 8)) * 2).astype(dtype)  # ties

    def fn(v):
        return dmljax.max_pool_with_indices(v, *args)

    model = dmljax.onnx.export(fn, x)
    onnx.checker.check_model(model)
    assert [n.op_type for n in model.graph.node].count("MaxPool") >= 1
    got = run(model, x)
    want = jax.jit(fn)(x)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.tobytes() == np.asarray(w).tobytes()


def test_fold_is_one_col2im_node_bit_for_bit():
    rng = np.random.default_rng(1)
    cols = (rng.standard_normal((2, 18, 16)) * 10.0 ** rng.integers(-6, 8, (2, 18, 16))).astype(np.float32)
    args = ((2, 3), (1, 2), (2, 1), (1, 1), (0, 1))

    def fn(c):
        return dmljax.fold(c, (5, 8), *args)

    model = dmljax.onnx.export(fn, cols)
    onnx.checker.check_model(model)
    assert "Col2Im" in [n.op_type for n in model.graph.node]
    assert run(model, cols)[0].tobytes() == np.asarray(jax.jit(fn)(cols)).tobytes()


def test_unfold_and_max_unpool_export_equal_jax():
    x = np.random.default_rng(2).standard_normal((1, 2, 6, 5)).astype(np.float32)

    def unfold(v):
        return dmljax.unfold(v, (2, 2), (2, 1), (1, 2), (1, 0), (0, 1))

    model = dmljax.onnx.export(unfold, x)
    assert run(model, x)[0].tobytes() == np.asarray(jax.jit(unfold)(x)).tobytes()
    v, i = dmljax.max_pool_with_indices(x, (2, 2), (2, 2))

    def unpool(values, indices):
        return dmljax.max_unpool(values, indices, x.shape)

    model = dmljax.onnx.export(unpool, np.asarray(v), np.asarray(i))
    assert run(model, np.asarray(v), np.asarray(i))[0].tobytes() == np.asarray(jax.jit(unpool)(v, i)).tobytes()


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "uint16"])
def test_integer_max_pool_exports_equal_jax(dtype):
    """int8/uint8: MaxPool; other integer types (no MaxPool kernel): the offset loop."""
    x = np.random.default_rng(3).integers(0, 50, (1, 2, 5, 6)).astype(dtype)

    def fn(v):
        return dmljax.max_pool_with_indices(v, 2, 1, 1, 0)

    model = dmljax.onnx.export(fn, x)
    assert ("MaxPool" in [n.op_type for n in model.graph.node]) == (dtype in ("int8", "uint8"))
    for got, want in zip(run(model, x), jax.jit(fn)(x), strict=True):
        np.testing.assert_array_equal(got, np.asarray(want))
