"""dmljax.onnx.export of cumulative_sum, top_k, argmax/argmin, one_hot: ONNX nodes equal to JAX, bit for bit.

Each case exports, checks the model and its node types, runs it with onnxruntime's CPU
provider and compares with the jitted JAX result; nonzero_coordinates (and CumSum types
without an in-order onnxruntime kernel) are refused by name. Skipped without the onnx extra.
"""

import functools

import jax
import numpy as np
import pytest

pytest.importorskip("jax2onnx")
onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import dmljax  # noqa: E402
import dmljax.onnx  # noqa: E402
from dmljax import ValidationError  # noqa: E402


def run(model, *args):
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    feeds = {spec.name: np.asarray(a) for spec, a in zip(session.get_inputs(), args, strict=True)}
    return session.run(None, feeds)


def exported(fn, *args, nodes=()):
    """Export ``fn``, check the model and its nodes, and compare onnxruntime's outputs with jit(fn)'s bits."""
    model = dmljax.onnx.export(fn, *args)
    onnx.checker.check_model(model)
    types = [n.op_type for n in model.graph.node]
    assert set(nodes) <= set(types), types
    expected = jax.tree.leaves(jax.jit(fn)(*args))
    got = run(model, *args)
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        e = np.asarray(e)
        assert g.dtype == e.dtype and g.shape == e.shape
        np.testing.assert_array_equal(g.view(np.uint8), e.view(np.uint8))
    return types


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
@pytest.mark.parametrize(("axis", "reverse", "exclusive"), [(1, False, False), (0, True, False), (-1, True, True)])
def test_cumulative_sum_is_one_cumsum_node_adding_in_sequence(dtype, axis, reverse, exclusive):
    with jax.enable_x64(dtype.endswith("64")):
        x = (np.random.default_rng(0).standard_normal((3, 300)) * 100).astype(dtype)
        fn = functools.partial(dmljax.cumulative_sum, axis=axis, reverse=reverse, exclusive=exclusive)
        types = exported(fn, x, nodes=("CumSum",))
        assert "Loop" not in types and "Scan" not in types


def test_cumulative_sum_types_without_an_in_order_kernel_are_refused():
    x = np.ones((4,), np.float16)
    with pytest.raises(ValidationError, match=r"cumulative_sum: x.dtype must be float32, float64, int32 or int64"):
        dmljax.onnx.export(dmljax.cumulative_sum, x)


@pytest.mark.parametrize("dtype", ["float32", "float16", "int8", "uint16", "uint32", "int32"])
@pytest.mark.parametrize("largest", [True, False])
def test_top_k_ties_signed_zeros_and_nan(dtype, largest):
    rng = np.random.default_rng(1)
    x = rng.integers(0, 4, (3, 9)).astype(dtype)
    if dtype.startswith("float"):
        x[rng.random(x.shape) < 0.2] = np.nan
        x[rng.random(x.shape) < 0.3] = -0.0
    fn = functools.partial(dmljax.top_k, k=4, axis=1, largest=largest)
    exported(fn, x, nodes=("TopK",))


@pytest.mark.parametrize("select_last_index", [False, True])
@pytest.mark.parametrize(("axis", "keepdims"), [(0, False), ((0, 2), True), (-1, False), (None, True)])
def test_arg_reduce_via_top_k_keeps_the_nan_rule(axis, keepdims, select_last_index):
    rng = np.random.default_rng(2)
    x = rng.integers(0, 3, (3, 4, 5)).astype(np.float32)
    x[rng.random(x.shape) < 0.1] = np.nan
    for fn in (dmljax.argmax, dmljax.argmin):
        f = functools.partial(fn, axis=axis, keepdims=keepdims, select_last_index=select_last_index)
        types = exported(f, x, nodes=("TopK",))
        assert "ArgMax" not in types and "ArgMin" not in types


@pytest.mark.parametrize("index_dtype", ["int32", "int64", "uint32"])
@pytest.mark.parametrize("values_dtype", ["float32", "float16", "int16", "uint8"])
def test_one_hot(index_dtype, values_dtype):
    rng = np.random.default_rng(3)
    low = -6 if index_dtype.startswith("int") else 0
    indices = rng.integers(low, 6, (2, 5)).astype(index_dtype)
    values = np.array([7, 3], values_dtype)
    with jax.enable_x64(index_dtype == "int64"):
        for axis in (-1, 0, 1):
            exported(
                lambda i, v, axis=axis: dmljax.one_hot(i, 4, values=v, axis=axis), indices, values, nodes=("Where",)
            )


def test_nonzero_coordinates_is_refused_by_name():
    with pytest.raises(ValidationError, match=r"nonzero_coordinates: x must not reach an ONNX export: ONNX's NonZero"):
        dmljax.onnx.export(dmljax.nonzero_coordinates, np.ones((2, 3), np.float32))


def test_cumulative_product_exports_as_the_in_order_loop():
    x = (np.random.default_rng(4).standard_normal((3, 50)) + 1).astype(np.float32)
    types = exported(lambda v: dmljax.cumulative_prod(v, 1, exclusive=True), x, nodes=("Loop",))
    assert "CumSum" not in types
    types = exported(lambda v: dmljax.cumulative_prod(v, 1, reverse=True), x, nodes=("Loop",))  # reversed around it
    assert "CumSum" not in types


def test_vmapped_operators_stay_one_node():
    x = np.random.default_rng(5).standard_normal((2, 3, 5)).astype(np.float32)
    assert exported(jax.vmap(lambda v: dmljax.top_k(v, 2)), x, nodes=("TopK",)).count("TopK") == 2
    assert "Loop" not in exported(jax.vmap(lambda v: dmljax.cumulative_sum(v, 1)), x, nodes=("CumSum",))
    assert "ArgMax" not in exported(jax.vmap(lambda v: dmljax.argmax(v, (0, 1))), x, nodes=("TopK",))
    indices = np.array([[0, 1, -1], [2, -1, 9]], np.int32)
    values = np.array([0.5, 2.0], np.float32)
    exported(jax.vmap(lambda i: dmljax.one_hot(i, 4, values=values, axis=0)), indices, nodes=("Where",))
    with pytest.raises(ValidationError, match=r"nonzero_coordinates: x must not reach an ONNX export"):
        dmljax.onnx.export(jax.vmap(dmljax.nonzero_coordinates), x)
