"""dmljax.onnx.export of max_pool_with_indices (MaxPool, and a NaN subgraph for windows with
NaN), fold (one Col2Im node), unfold and max_unpool (their JAX formulations), equal to JAX bit
for bit in onnxruntime, NaN payloads and signed zeros included."""

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


def _with_specials(x, rng):
    """``x`` with a fifth of its elements NaN (four payloads and signs), and some -0.0 and +-inf."""
    flat = x.reshape(-1).copy()
    nans = np.array([0x7FC00000, 0xFFC00000, 0x7FC00321, 0xFFC00001], np.uint32).view(np.float32)
    where = rng.choice(flat.size, flat.size // 5, replace=False)
    flat[where] = nans[rng.integers(0, 4, where.size)].astype(x.dtype)
    for value, count in ((-0.0, 6), (np.inf, 3), (-np.inf, 3)):
        flat[rng.choice(flat.size, count)] = value
    return flat.reshape(x.shape)


def _same_bits(got, want):
    for g, w in zip(got, want, strict=True):
        assert g.dtype == np.asarray(w).dtype and g.tobytes() == np.asarray(w).tobytes()


def test_max_pool_export_returns_the_first_nan_of_a_window():
    # onnxruntime's MaxPool alone skips a NaN after a window's first element: 3.0 at index 3.
    x = np.array([1.0, np.nan, 2.0, 3.0, -0.0, 0.0, -1.0, -2.0], np.float32).reshape(1, 2, 2, 2)

    def fn(v):
        return dmljax.max_pool_with_indices(v, (2, 2))

    values, indices = run(dmljax.onnx.export(fn, x), x)
    assert np.isnan(values[0, 0, 0, 0]) and indices.ravel().tolist() == [1, 4]
    assert values[0, 1, 0, 0].tobytes() == np.float32(-0.0).tobytes()  # the first of -0.0 and 0.0
    _same_bits((values, indices), jax.jit(fn)(x))


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize(
    "shape, args",
    [
        ((2, 3, 7, 8), ((3, 3), (2, 2), (1, 1), (1, 1), (1, 1))),
        ((2, 3, 7, 8), ((2, 3), (1, 2), (0, 1), (1, 1), (2, 1))),
        ((1, 2, 4, 5, 6), ((2, 2, 3), (1, 2, 1), (1, 1, 2), (0, 1, 1), (1, 1, 1))),
    ],
    ids=str,
)
def test_max_pool_export_equals_dmljax_on_nan_windows(dtype, shape, args):
    rng = np.random.default_rng(len(shape))
    x = _with_specials(np.round(rng.standard_normal(shape) * 2).astype(dtype), rng)

    def fn(v):
        return dmljax.max_pool_with_indices(v, *args)

    model = dmljax.onnx.export(fn, x)
    onnx.checker.check_model(model)
    _same_bits(run(model, x), jax.jit(fn)(x))


def test_fold_unfold_and_max_unpool_exports_keep_nans_bit_for_bit():
    rng = np.random.default_rng(5)
    cols = _with_specials(rng.standard_normal((2, 18, 16)).astype(np.float32), rng)

    def fold(c):
        return dmljax.fold(c, (5, 8), (2, 3), (1, 2), (2, 1), (1, 1), (0, 1))

    _same_bits(run(dmljax.onnx.export(fold, cols), cols), (jax.jit(fold)(cols),))
    x = _with_specials(rng.standard_normal((1, 2, 6, 5)).astype(np.float32), rng)

    def unfold(v):
        return dmljax.unfold(v, (2, 2), (2, 1), (1, 2), (1, 0), (0, 1))

    _same_bits(run(dmljax.onnx.export(unfold, x), x), (jax.jit(unfold)(x),))
    values, indices = (np.asarray(a) for a in dmljax.max_pool_with_indices(x, (2, 2), (2, 2)))

    def unpool(a, b):
        return dmljax.max_unpool(a, b, x.shape)

    _same_bits(run(dmljax.onnx.export(unpool, values, indices), values, indices), (jax.jit(unpool)(values, indices),))
