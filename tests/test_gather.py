"""gather (ONNX Gather, DML_GATHER) and gather_elements (DML_GATHER_ELEMENTS)."""

import functools
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import checkify
from jax.test_util import check_grads

import dmljax
from dmljax import DataType, ValidationError
from dmljax._core import platform
from dmljax._descriptors.gather_elements import GATHER_ELEMENTS_SUPPORT
from dmljax._descriptors.support import support_at
from dmljax._ops.common.indices import IndexMode, normalize
from dmljax._ops.common.positions import use_flat
from dmljax._ops.index.gather import _gather_elements_lax, _gather_lax
from dmljax._ops.index.gather_blocked import blocked, use_blocked
from dmljax._ops.index.gather_grad import flat_tangent, gather_flat_tangent, use_rows
from dmljax.descriptors import FeatureLevel
from tests import reference
from tests._util import spec

DATA_TYPES = ["float32", "float16", "bfloat16", "int32", "int8", "uint16", "uint8", "bool", "complex64", "int16"]


def random_indices(rng, shape, axis_size, dtype):
    low = -axis_size if np.dtype(dtype).kind == "i" else 0
    return rng.integers(low, axis_size, shape).astype(dtype)


def random_data(rng, shape, dtype):
    values = rng.standard_normal(shape) * 10
    if dtype.startswith("complex"):
        values = values + 1j * rng.standard_normal(shape)
    return values.astype(jnp.dtype(dtype))


# ----- the examples of https://onnx.ai/onnx/operators/onnx__Gather.html
# and of https://learn.microsoft.com/en-us/windows/win32/api/directml/ns-directml-dml_gather_elements_operator_desc

SEED_DATA_0 = np.array([[1.0, 1.2], [2.3, 3.4], [4.5, 5.7]], np.float32)
SEED_DATA_1 = np.array([[1.0, 1.2, 1.9], [2.3, 3.4, 3.9], [4.5, 5.7, 5.9]], np.float32)


def test_seed_gather_axis_0():
    out = dmljax.gather(SEED_DATA_0, np.array([[0, 1], [1, 2]]), axis=0)
    expected = np.array([[[1.0, 1.2], [2.3, 3.4]], [[2.3, 3.4], [4.5, 5.7]]], np.float32)
    np.testing.assert_array_equal(out, expected)


def test_seed_gather_axis_1():
    out = dmljax.gather(SEED_DATA_1, np.array([[0, 2]]), axis=1)
    np.testing.assert_array_equal(out, np.array([[[1.0, 1.9]], [[2.3, 3.9]], [[4.5, 5.9]]], np.float32))


@pytest.mark.parametrize(
    ("data_shape", "indices", "axis", "expected"),
    [
        ((4, 5), np.array(2), 0, lambda d: d[2]),  # (P, Q), scalar, axis 0 -> (Q)
        ((4, 5, 6), np.array(-1), 1, lambda d: d[:, 4]),  # (P, Q, R), scalar, axis 1 -> (P, R)
        ((4, 5), np.array([[0, 3], [1, 1], [2, 0]]), 0, lambda d: d[[[0, 3], [1, 1], [2, 0]]]),
        ((4, 5), np.array([[0, 3], [1, 1], [2, 0]]), -1, lambda d: d[:, [[0, 3], [1, 1], [2, 0]]]),
    ],
)
def test_seed_shape_table(data_shape, indices, axis, expected):
    data = np.arange(np.prod(data_shape), dtype=np.float32).reshape(data_shape)
    out = dmljax.gather(data, indices, axis)
    np.testing.assert_array_equal(out, expected(data))


def test_directml_gather_elements_example():
    data = jnp.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]], jnp.float32)
    out = dmljax.gather_elements(data, jnp.array([[1, 2, 0], [2, 0, 0]], jnp.uint32), axis=0)
    np.testing.assert_array_equal(out, [[4, 8, 3], [7, 2, 3]])


def test_gather_elements_inverts_scatter():
    data = jnp.arange(12.0).reshape(3, 4)
    indices = jnp.array([[3, 0], [1, 2], [2, -1]])
    updates = jnp.arange(6.0).reshape(3, 2) + 100
    out = dmljax.gather_elements(dmljax.scatter(data, indices, updates, 1), indices, 1)
    np.testing.assert_array_equal(out, updates)


# ----- random cases against the loop oracles --------------------------------------------


@pytest.mark.parametrize("seed", range(10))
def test_gather_random_against_oracle(seed):
    rng = np.random.default_rng(seed)
    dtype = DATA_TYPES[seed]
    rank = int(rng.integers(1, 4))
    shape = tuple(int(s) for s in rng.integers(1, 5, rank))
    axis = int(rng.integers(-rank, rank))
    index_shape = tuple(int(s) for s in rng.integers(1, 4, int(rng.integers(0, 3))))
    data = random_data(rng, shape, dtype)
    indices = random_indices(rng, index_shape, shape[axis], ["int32", "uint32"][seed % 2])
    out = dmljax.gather(data, indices, axis)
    assert out.dtype == jnp.dtype(dtype)
    np.testing.assert_array_equal(np.asarray(out), reference.gather(data, indices, axis % rank))


@pytest.mark.parametrize("seed", range(10))
def test_gather_elements_random_against_oracle(seed):
    rng = np.random.default_rng(100 + seed)
    dtype = DATA_TYPES[seed]
    rank = [1, 2, 3, 4, 8][seed % 5]
    shape = tuple(int(s) for s in rng.integers(1, 4 if rank < 8 else 3, rank))
    axis = int(rng.integers(-rank, rank))
    index_shape = list(shape)
    index_shape[axis] = int(rng.integers(1, 5))
    data = random_data(rng, shape, dtype)
    indices = random_indices(rng, tuple(index_shape), shape[axis], ["int32", "uint32"][seed % 2])
    out = dmljax.gather_elements(data, indices, axis)
    np.testing.assert_array_equal(np.asarray(out), reference.gather_elements(data, indices, axis % rank))
    if seed < 3:
        jitted = jax.jit(dmljax.gather_elements, static_argnames="axis")(data, indices, axis=axis)
        np.testing.assert_array_equal(np.asarray(jitted), np.asarray(out))


@pytest.mark.parametrize("index_dtype", ["int64", "uint64"])
def test_64bit_types_under_x64(x64, index_dtype):
    rng = np.random.default_rng(0)
    data = random_data(rng, (3, 4), "complex128")
    indices = random_indices(rng, (3, 5), 4, index_dtype)
    np.testing.assert_array_equal(dmljax.gather_elements(data, indices, 1), reference.gather_elements(data, indices, 1))
    np.testing.assert_array_equal(dmljax.gather(data, indices, 1), reference.gather(data, indices, 1))


# ----- out-of-range indices and modes ---------------------------------------------------


@pytest.mark.parametrize("op", [dmljax.gather, dmljax.gather_elements])
def test_concrete_out_of_range_raises_index_error(op):
    name = op.__name__
    with pytest.raises(IndexError, match=rf"{name}: index 4 is out of bounds for axis 1 with size 4 \(indices\[1, 0\]"):
        op(jnp.zeros((2, 4)), np.array([[0], [4]]), 1)
    with pytest.raises(IndexError, match=r"index -5 .*valid range \[-4, 3\]"):
        op(jnp.zeros((2, 4)), jnp.array([[-5], [0]]), 1)


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        (None, [30, 10, 0, 30]),  # clip: 9 -> last, -5 -> first
        ("clip", [30, 10, 0, 30]),
        ("checked", [30, 10, 0, 30]),
        ("fill", [30, 10, 0, 0]),  # out-of-range reads are zero
    ],
)
def test_modes_under_jit(mode, expected):
    data = jnp.array([0.0, 10.0, 20.0, 30.0])
    indices = jnp.array([-1, 1, -5, 9])
    gather = jax.jit(lambda d, i: dmljax.gather(d, i, mode=mode))
    elements = jax.jit(lambda d, i: dmljax.gather_elements(d, i, mode=mode))
    if mode == "checked":
        gather, elements = checkify.checkify(gather), checkify.checkify(elements)
        (err, out), (err2, out2) = gather(data, indices), elements(data, indices)
        assert "index -5 is out of bounds for axis 0 with size 4" in err.get()
        assert "index -5 is out of bounds for axis 0 with size 4 (indices[2]; valid range [-4, 3])" in err2.get()
    else:
        out, out2 = gather(data, indices), elements(data, indices)
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(out2, expected)


def test_unsigned_out_of_range_reads_clamped_under_jit():
    out = jax.jit(dmljax.gather)(jnp.arange(3.0), jnp.array([2**32 - 1, 1], jnp.uint32))
    np.testing.assert_array_equal(out, [2.0, 1.0])


def test_explicit_mode_does_not_raise_eagerly():
    np.testing.assert_array_equal(dmljax.gather(jnp.arange(3.0), np.array([5]), mode="fill"), [0.0])
    np.testing.assert_array_equal(dmljax.gather(jnp.arange(3.0), np.array([5]), mode="clip"), [2.0])


def test_fill_mode_bool_and_int():
    out = jax.jit(lambda d, i: dmljax.gather(d, i, mode="fill"))(jnp.array([True, True]), jnp.array([0, 2]))
    np.testing.assert_array_equal(out, [True, False])


# ----- transforms -----------------------------------------------------------------------


def test_vmap_matches_loop():
    rng = np.random.default_rng(2)
    data = random_data(rng, (4, 3, 5), "float32")
    indices = random_indices(rng, (4, 3, 2), 5, "int32")
    out = jax.vmap(lambda d, i: dmljax.gather_elements(d, i, -1))(data, indices)
    np.testing.assert_array_equal(
        out, np.stack([reference.gather_elements(d, i, 1) for d, i in zip(data, indices, strict=True)])
    )
    out = jax.vmap(lambda d, i: dmljax.gather(d, i, 1))(data, indices)
    np.testing.assert_array_equal(
        out, np.stack([reference.gather(d, i, 1) for d, i in zip(data, indices, strict=True)])
    )
    out = jax.vmap(dmljax.gather, in_axes=(None, 0, None))(data[0], indices, 1)
    np.testing.assert_array_equal(out, np.stack([reference.gather(data[0], i, 1) for i in indices]))
    column = random_indices(rng, (4, 1), 3, "int32")
    out = jax.vmap(dmljax.gather_elements, in_axes=(2, None, None))(data, column, 1)
    loop = [reference.gather_elements(data[:, :, b], column, 1) for b in range(5)]
    np.testing.assert_array_equal(out, np.stack(loop))


@pytest.mark.slow
def test_gradients_are_exact_scatter_adds():
    data = jnp.arange(6.0).reshape(2, 3)
    cotangent = jnp.array([[1.0, 2.0, 4.0, 8.0], [16.0, 32.0, 64.0, 128.0]])
    indices = jnp.array([[0, 0, -1, 1], [2, 2, 2, 0]])
    grad = jax.grad(lambda d: jnp.sum(dmljax.gather_elements(d, indices, 1) * cotangent))(data)
    np.testing.assert_array_equal(grad, [[3.0, 8.0, 4.0], [128.0, 0.0, 112.0]])
    grad = jax.grad(lambda d: jnp.sum(dmljax.gather(d, jnp.array([1, 1, 0]), 0).sum(1) * jnp.array([1.0, 2, 4])))(data)
    np.testing.assert_array_equal(grad, [[4.0] * 3, [3.0] * 3])


@pytest.mark.slow
@pytest.mark.parametrize("op", [dmljax.gather, dmljax.gather_elements])
def test_check_grads_first_and_second_order(op):
    rng = np.random.default_rng(4)
    data = random_data(rng, (3, 4), "float32")
    indices = random_indices(rng, (3, 6), 4, "int32")
    check_grads(lambda d: op(d, indices, 1), (data,), order=2, modes=("fwd", "rev"), eps=1e-2)


def test_clip_mode_gradient_follows_clamped_reads():
    grad = jax.jit(jax.grad(lambda d: jnp.sum(dmljax.gather(d, jnp.array([5, -9]), mode="clip"))))(jnp.zeros(3))
    np.testing.assert_array_equal(grad, [1.0, 0.0, 1.0])


# ----- gradients through the custom tangents (dmljax._ops.index.gather_grad) ----------------------

# (data shape, axis, gather index shape): the rows tangent (axis 1 of 2-D, inner size 2 of
# 3-D, last of 3-D) and JAX's own (axis 0, inner size 4); gather_elements takes the flat one.
GRAD_CASES = [((3, 5), 1, (7,)), ((2, 4, 2), 1, (3, 2)), ((2, 3, 4), 2, (6,)), ((5, 3), 0, (6,)), ((2, 3, 4), 1, (5,))]


def repeated_indices(rng, shape, axis_size, out_of_range):
    """Indices with repeats, negative values and (optionally) values outside ``[-n, n)``."""
    spread = axis_size + 3 if out_of_range else axis_size
    return rng.integers(-spread, spread, shape).astype(np.int32)


def test_grad_cases_take_the_custom_tangents():
    assert [use_rows(shape, axis) for shape, axis, _ in GRAD_CASES] == [True, True, True, False, False]
    assert use_flat((2, 3)) and not use_flat((3,)) and not use_flat((2**16, 2**16))


@pytest.mark.parametrize("mode", [None, "clip", "fill", "promise_in_bounds"])
@pytest.mark.parametrize(("shape", "axis", "index_shape"), GRAD_CASES)
def test_gather_grad_against_loop_oracle(shape, axis, index_shape, mode):
    rng = np.random.default_rng(len(shape) * 10 + axis)
    indices = repeated_indices(rng, index_shape, shape[axis], mode in ("clip", "fill"))
    out_shape = shape[:axis] + index_shape + shape[axis + 1 :]
    cotangent = rng.integers(-8, 9, out_shape).astype(np.float32)  # integers: sums are exact
    loss = lambda d, i: jnp.sum(dmljax.gather(d, i, axis, mode=mode) * cotangent)  # noqa: E731
    grad = jax.jit(jax.grad(loss))(jnp.zeros(shape), jnp.asarray(indices))
    expected = reference.gather_grad(shape, indices, cotangent, axis, "fill" if mode == "fill" else "clip")
    np.testing.assert_array_equal(grad, expected)


@pytest.mark.parametrize("mode", [None, "clip", "fill", "promise_in_bounds"])
@pytest.mark.parametrize(("shape", "axis"), [((3, 5), 1), ((4, 3), 0), ((2, 3, 4), 1), ((2, 3, 4), -1)])
def test_gather_elements_grad_against_loop_oracle(shape, axis, mode):
    rng = np.random.default_rng(len(shape) * 10 + axis)
    index_shape = list(shape)
    index_shape[axis] = 6
    indices = repeated_indices(rng, tuple(index_shape), shape[axis], mode in ("clip", "fill"))
    cotangent = rng.integers(-8, 9, indices.shape).astype(np.float32)
    loss = lambda d, i: jnp.sum(dmljax.gather_elements(d, i, axis, mode=mode) * cotangent)  # noqa: E731
    grad = jax.jit(jax.grad(loss))(jnp.zeros(shape), jnp.asarray(indices))
    expected = reference.gather_elements_grad(shape, indices, cotangent, axis % len(shape), mode or "clip")
    np.testing.assert_array_equal(grad, expected)


@pytest.mark.parametrize("mode", ["clip", "fill"])
@pytest.mark.parametrize(("op", "shape", "axis"), [(dmljax.gather, (2, 4, 2), 1), (dmljax.gather_elements, (3, 4), 0)])
def test_jvp_is_the_op_applied_to_the_tangent(op, shape, axis, mode):
    rng = np.random.default_rng(6)
    data, tangent = random_data(rng, shape, "float32"), random_data(rng, shape, "float32")
    index_shape = (5, 2) if op is dmljax.gather else (6,) + shape[1:]
    indices = jnp.asarray(repeated_indices(rng, index_shape, shape[axis], out_of_range=True))
    fun = lambda d: op(d, indices, axis, mode=mode)  # noqa: E731
    out, out_dot = jax.jit(lambda d, t: jax.jvp(fun, (d,), (t,)))(data, tangent)
    np.testing.assert_array_equal(out, fun(data))
    np.testing.assert_array_equal(out_dot, fun(tangent))


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["clip", "fill"])
@pytest.mark.parametrize(
    ("op", "shape", "axis"), [(dmljax.gather, (2, 3, 2), 1), (dmljax.gather_elements, (3, 2, 2), 0)]
)
def test_check_grads_second_order_custom_tangents(op, shape, axis, mode):
    rng = np.random.default_rng(7)
    data = random_data(rng, shape, "float32")
    index_shape = (4,) if op is dmljax.gather else (5,) + shape[1:]
    indices = jnp.asarray(repeated_indices(rng, index_shape, shape[axis], out_of_range=True))
    check_grads(lambda d: op(d, indices, axis, mode=mode), (data,), order=2, modes=("fwd", "rev"), eps=1e-2)


@pytest.mark.slow
def test_vmap_of_grad_matches_loop():
    rng = np.random.default_rng(8)
    data = random_data(rng, (4, 3, 5), "float32")
    indices = repeated_indices(rng, (4, 7), 5, out_of_range=True)
    elements = repeated_indices(rng, (4, 3, 6), 5, out_of_range=True)
    loss = lambda d, i: jnp.sum(dmljax.gather(d, i, 1, mode="fill") ** 2)  # noqa: E731
    loss_e = lambda d, i: jnp.sum(dmljax.gather_elements(d, i, 1, mode="clip") ** 2)  # noqa: E731
    for fun, idx, data_axis in [(loss, indices, 2), (loss_e, elements, 0)]:
        grad = jax.grad(fun)
        loop = np.stack([grad(d, i) for d, i in zip(data, idx, strict=True)])
        np.testing.assert_allclose(jax.jit(jax.vmap(grad))(data, idx), loop, rtol=1e-6)
        loop = np.stack([grad(d, idx[0]) for d in np.moveaxis(data, data_axis, 0)])
        np.testing.assert_allclose(jax.vmap(grad, in_axes=(data_axis, None))(data, idx[0]), loop, rtol=1e-6)
        loop = np.stack([grad(data[0], i) for i in idx])
        np.testing.assert_allclose(jax.vmap(grad, in_axes=(None, 0))(data[0], idx), loop, rtol=1e-6)


@pytest.mark.slow
@pytest.mark.parametrize("index_dtype", ["int64", "uint64"])
def test_grads_under_x64(x64, index_dtype):
    rng = np.random.default_rng(9)
    indices = random_indices(rng, (3, 6), 4, index_dtype)
    cotangent = rng.integers(-8, 9, (3, 6)).astype(np.float64)
    grad = jax.grad(lambda d: jnp.sum(dmljax.gather_elements(d, indices, 1) * cotangent))(jnp.zeros((3, 4)))
    np.testing.assert_array_equal(grad, reference.gather_elements_grad((3, 4), indices, cotangent, 1))
    grad = jax.grad(lambda d: jnp.sum(dmljax.gather(d, indices[0], 1) * cotangent[:, :6]))(jnp.zeros((3, 4)))
    np.testing.assert_array_equal(grad, reference.gather_grad((3, 4), indices[0], cotangent, 1))


# ----- errors ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("op", "args", "error", "pattern"),
    [
        (
            dmljax.gather,
            (jnp.zeros(()), jnp.zeros(1, int), 0),
            ValidationError,
            r"gather: data.ndim must be >= 1; got data.ndim=0 \(data shape \(\)\)\.",
        ),
        (
            dmljax.gather,
            (jnp.zeros((2, 3)), jnp.zeros(1, int), -3),
            ValidationError,
            r"gather: axis must be in \[-2, 2\); got axis=-3 \(data shape \(2, 3\)\)\.",
        ),
        (
            dmljax.gather,
            (jnp.zeros((0, 3)), jnp.zeros(1, int), 0),
            ValidationError,
            r"data.shape\[0\] must be >= 1 \(the indexed axis\); got data.shape\[0\]=0",
        ),
        (dmljax.gather, (jnp.zeros(3), jnp.zeros(1, bool), 0), TypeError, r"indices.dtype=dtype\('bool'\)"),
        (dmljax.gather, (np.array(["a"]), jnp.zeros(1, int), 0), TypeError, r"gather: data.dtype must be one of"),
        (
            dmljax.gather_elements,
            (jnp.zeros((2, 3)), jnp.zeros((3, 3), int), 1),
            ValidationError,
            r"gather_elements: indices.shape\[0\] must equal data.shape\[0\] \(2\); got indices.shape\[0\]=3",
        ),
        (
            dmljax.gather_elements,
            (jnp.zeros((2, 3)), jnp.zeros(3, int), 1),
            ValidationError,
            r"indices.ndim must equal data.ndim \(2\); got indices.ndim=1",
        ),
        (
            dmljax.gather_elements,
            (jnp.zeros((1,) * 9), jnp.zeros((1,) * 9, int), 0),
            ValidationError,
            r"data.ndim must be in \[1, 8\]; got data.ndim=9",
        ),
        (
            dmljax.gather_elements,
            (jnp.zeros(3), jnp.zeros(3, jnp.uint16), 0),
            TypeError,
            r"gather_elements: indices.dtype must be one of INT32, INT64, UINT32, UINT64",
        ),
    ],
)
def test_errors(op, args, error, pattern):
    with pytest.raises(error, match=pattern):
        op(*args)


def test_unknown_mode():
    with pytest.raises(ValidationError, match=r"gather: mode must be .*; got mode='nearest'"):
        dmljax.gather(jnp.zeros(3), jnp.zeros(1, int), mode="nearest")


# ----- feature-level support table ------------------------------------------------------


def test_gather_elements_support_table():
    assert support_at(GATHER_ELEMENTS_SUPPORT, FeatureLevel.FL_2_0) is None
    assert support_at(GATHER_ELEMENTS_SUPPORT, FeatureLevel.FL_2_1).dims == (4, 4)
    assert DataType.UINT64 in support_at(GATHER_ELEMENTS_SUPPORT, FeatureLevel.FL_5_0).data_types


# --- gather_elements along a long outer axis: column blocks on XLA CPU -----------------------

_LONG = (4096, 1024)  # float32: 16 MiB, the smallest blocked size


def _long_case(rng, mode_range):
    data = rng.standard_normal(_LONG).astype(np.float32)
    data.reshape(-1)[:3] = [np.nan, -0.0, np.inf]
    index = rng.integers(-mode_range, mode_range, _LONG, dtype=np.int32)
    return data, index


@pytest.fixture
def host_class(monkeypatch):
    """Pin the tracing host's class: ``host_class(avx512)`` makes `platform.host_has_avx512` say ``avx512``."""

    def pin(avx512: bool) -> None:
        monkeypatch.setattr(platform, "host_has_avx512", lambda: avx512)
        jax.clear_caches()  # nothing traced under the real host's class is reused

    yield pin
    jax.clear_caches()


# The hosts on which the CPU forward runs in blocks: AVX2, and AVX-512 with the option on.
BLOCKED_FORWARD_HOSTS = [
    pytest.param(False, False, id="avx2"),
    pytest.param(True, True, id="avx512, blocked_gather_elements_forward_avx512"),
]


@pytest.mark.hlo
@pytest.mark.parametrize(("avx512", "option"), BLOCKED_FORWARD_HOSTS)
def test_long_axis_gather_elements_compiles_to_blocks_on_cpu(cpu, host_class, avx512, option):
    """If this fails: docs/design/blocked-gather.md (the block layout and when it is used)."""
    host_class(avx512)
    with dmljax.config.override(blocked_gather_elements_forward_avx512=option):
        _assert_blocked_forward_on_cpu()


def _assert_blocked_forward_on_cpu():
    assert use_blocked(_LONG, 0, np.float32) and not use_blocked((2048, 1024), 0, np.float32)
    specs = (jax.ShapeDtypeStruct(_LONG, jnp.float32), jax.ShapeDtypeStruct(_LONG, jnp.int32))
    entry = jax.jit(lambda x, i: dmljax.gather_elements(x, i, 0)).lower(*specs).compile().as_text().split("ENTRY")[1]
    # First conditional: data and indices written as 32 blocks of 4096 x 32; second: the gather.
    assert "(f32[1,32,131072]{2,1,0}, u32[1,32,131072]{2,1,0}) conditional(" in entry
    assert "(f32[1,32,131072]{2,1,0}) conditional(" in entry and entry.count(" conditional(") == 2
    small = (jax.ShapeDtypeStruct((2048, 1024), jnp.float32), jax.ShapeDtypeStruct((2048, 1024), jnp.int32))
    assert "conditional(" not in jax.jit(lambda x, i: dmljax.gather_elements(x, i, 0)).lower(*small).compile().as_text()


@pytest.mark.hlo
def test_avx512_default_compiles_a_plain_forward_and_a_blocked_gradient_on_cpu(cpu, host_class):
    """If this fails: docs/design/blocked-gather.md (on AVX-512 hosts the plain CPU forward wins)."""
    host_class(True)
    assert not dmljax.config.blocked_gather_elements_forward_avx512  # the default
    specs = (jax.ShapeDtypeStruct(_LONG, jnp.float32), jax.ShapeDtypeStruct(_LONG, jnp.int32))
    fwd = jax.jit(lambda x, i: dmljax.gather_elements(x, i, 0)).lower(*specs).compile().as_text()
    assert "conditional(" not in fwd and "transpose(" not in fwd.split("ENTRY")[1]
    grad = jax.jit(jax.grad(lambda x, i: dmljax.gather_elements(x, i, 0).sum())).lower(*specs).compile().as_text()
    entry = grad.split("ENTRY")[1]  # the cotangent and the indices in blocks, the scatter-add, back
    assert "(f32[1,32,131072]{2,1,0}) conditional(" in entry and entry.count(" conditional(") == 4


@pytest.mark.hlo
def test_programs_off_the_cpu_and_the_cpu_gradient_are_the_same_on_every_host_class(host_class):
    """If this fails: docs/design/blocked-gather.md (only the CPU forward reads the host's class)."""
    programs = {}
    for avx512 in (False, True):
        host_class(avx512)
        for rows in (4096, 16384):  # 16 and 64 MiB: below and at the GPU forward's threshold
            x, i = jax.ShapeDtypeStruct((rows, 1024), jnp.float32), jax.ShapeDtypeStruct((rows, 1024), jnp.int32)
            fwd = jax.jit(lambda x, i: dmljax.gather_elements(x, i, 0))
            grad = jax.jit(jax.grad(lambda x, i: dmljax.gather_elements(x, i, 0).sum()))
            for name, fn in (("fwd", fwd), ("grad", grad)):
                for p in ("cuda", "rocm", "tpu", "cpu"):
                    programs[avx512, rows, name, p] = jax.export.export(fn, platforms=[p])(x, i).mlir_module()
    for (avx512, rows, name, p), text in programs.items():
        same = programs[not avx512, rows, name, p] == text
        assert same == (name == "grad" or p != "cpu"), (rows, name, p)


@pytest.mark.hlo
def test_short_axis_gather_elements_of_16_mib_stays_one_plain_gather_on_cpu(cpu):
    """If this fails: docs/design/blocked-gather.md (the size and axis-length thresholds)."""
    # An axis of 8 (channels): the plain gather streams; blocks cost 2.4x (compile_operator's NHWC case).
    shape = (1, 8, 8192, 64)
    specs = (jax.ShapeDtypeStruct(shape, jnp.float32), jax.ShapeDtypeStruct(shape, jnp.uint32))
    assert not use_blocked(shape, 1, np.float32) and not use_blocked((16, 2**18), 0, np.float32)
    assert use_blocked((32, 2**17), 0, np.float32)
    text = jax.jit(lambda x, i: dmljax.gather_elements(x, i, 1)).lower(*specs).compile().as_text()
    assert "conditional(" not in text and text.count(" gather(") == 1


@pytest.mark.hlo
def test_long_axis_gather_elements_is_one_plain_gather_for_gpus(host_class):
    """If this fails: docs/design/blocked-gather.md (GPUs keep the plain gather below their threshold)."""
    host_class(False)  # an AVX2 host, whose CPU forward runs in blocks
    specs = (jax.ShapeDtypeStruct(_LONG, jnp.float32), jax.ShapeDtypeStruct(_LONG, jnp.int32))
    fn = jax.jit(lambda x, i: dmljax.gather_elements(x, i, 0))
    assert "stablehlo.transpose" not in jax.export.export(fn, platforms=["cuda"])(*specs).mlir_module()
    assert "stablehlo.transpose" in jax.export.export(fn, platforms=["cpu"])(*specs).mlir_module()


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["clip", "fill"])
@pytest.mark.parametrize("avx512", [False, True], ids=["avx2: blocked forward", "avx512: plain forward"])
def test_long_axis_gather_elements_bits_and_gradient(mode, avx512, host_class):
    host_class(avx512)
    rng = np.random.default_rng(12)
    data, index = _long_case(rng, _LONG[0] + 5)  # some out of range: clamped or filled
    wrapped = np.where(index < 0, index + _LONG[0], index)
    inside = (wrapped >= 0) & (wrapped < _LONG[0])
    expected = np.take_along_axis(data, np.clip(wrapped, 0, _LONG[0] - 1), 0)
    if mode == "fill":
        expected = np.where(inside, expected, np.float32(0))
    out = jax.jit(lambda x, i: dmljax.gather_elements(x, i, 0, mode=mode))(data, index)
    np.testing.assert_array_equal(np.asarray(out).view(np.uint32), expected.view(np.uint32))
    cotangent = rng.integers(-3, 4, _LONG).astype(np.float32)  # small integers: sums exact in any order
    grad = jax.jit(jax.grad(lambda x, i: jnp.vdot(dmljax.gather_elements(x, i, 0, mode=mode), cotangent)))
    expected_grad = np.zeros(_LONG, np.float32)
    keep = inside if mode == "fill" else np.ones(_LONG, bool)
    rows = np.clip(wrapped, 0, _LONG[0] - 1)
    np.add.at(expected_grad, (rows[keep], np.nonzero(keep)[1]), cotangent[keep])
    np.testing.assert_array_equal(grad(data, index), expected_grad)


@pytest.mark.parametrize("apart", [True, False], ids=["conditionals", "plain transposes"])
@pytest.mark.parametrize("dtype", ["float16", "int8", "bool", "float32", "uint32"])
@pytest.mark.parametrize(("shape", "axis", "count"), [((3, 40, 2, 64), 1, 25), ((50, 256), 0, 70)])
def test_blocked_gather_matches_the_plain_gather(dtype, shape, axis, count, apart):
    # The blocked formulation called directly on small arrays, any rank, axis, type and index count.
    rng = np.random.default_rng(3)
    data = random_data(rng, shape, dtype)
    index_shape = shape[:axis] + (count,) + shape[axis + 1 :]
    index = jnp.asarray(rng.integers(0, shape[axis], index_shape, dtype=np.uint32))
    take = functools.partial(_gather_elements_lax, mode=IndexMode.PROMISE_IN_BOUNDS)
    out = jax.jit(lambda d, i: blocked(take, d, i, axis, apart=apart))(data, index)
    np.testing.assert_array_equal(out, take(jnp.asarray(data), index, axis=axis))
    assert out.shape == index_shape


@pytest.mark.slow
@pytest.mark.parametrize("mode", [IndexMode.CLIP, IndexMode.FILL])
def test_blocked_tangent_transposes_to_the_flat_scatter_add_bit_for_bit(mode, cpu):
    # Repeated indices and float cotangents: the blocked scatter-add must add in the flat one's order
    # (on the CPU, where both run: XLA GPU's scatter-add adds with atomics, in no fixed order).
    rng = np.random.default_rng(4)
    shape = (300, 2, 64)
    index = rng.integers(0, 37, shape, dtype=np.uint32)  # many repeats per target
    if mode is IndexMode.FILL:  # out-of-range reads are filled, their cotangents dropped
        index = np.where(rng.random(shape) < 0.1, np.uint32(305), index)
    index = jnp.asarray(index)
    cotangent = jnp.asarray(rng.standard_normal(shape).astype(np.float32) * 1e3)
    zeros = jnp.zeros(shape, jnp.float32)
    flat = functools.partial(flat_tangent, axis=0, mode=mode)
    blocks = functools.partial(blocked, functools.partial(flat_tangent, mode=mode), axis=0)
    (want,) = jax.linear_transpose(lambda d: flat(d, index), zeros)(cotangent)
    (got,) = jax.jit(jax.linear_transpose(lambda d: blocks(d, index), zeros))(cotangent)
    np.testing.assert_array_equal(np.asarray(got).view(np.uint32), np.asarray(want).view(np.uint32))


@pytest.mark.parametrize("mode", [IndexMode.CLIP, IndexMode.FILL])
def test_off_cpu_blocked_tangent_transposes_to_the_plain_scatter_add(mode):
    # The gradient off the CPU: a scatter-add in column blocks between plain transposes. Small
    # integer cotangents: the sums are exact in any order (XLA GPU's atomics choose one).
    rng = np.random.default_rng(5)
    shape = (300, 2, 64)
    index = rng.integers(0, 37, shape, dtype=np.uint32)
    if mode is IndexMode.FILL:
        index = np.where(rng.random(shape) < 0.1, np.uint32(305), index)
    index = jnp.asarray(index)
    cotangent = jnp.asarray(rng.integers(-8, 9, shape).astype(np.float32))
    zeros = jnp.zeros(shape, jnp.float32)
    take = functools.partial(_gather_elements_lax, mode=mode)
    (want,) = jax.linear_transpose(lambda d: take(d, index, axis=0), zeros)(cotangent)
    blocks = functools.partial(blocked, take, axis=0, apart=False)
    (got,) = jax.jit(jax.linear_transpose(lambda d: blocks(d, index), zeros))(cotangent)
    np.testing.assert_array_equal(got, want)


@pytest.fixture
def unordered_gradients():
    """JAX's transposes for the gathers' gradients (config ordered_gather_gradients off): the
    unordered GPU formulations, kept behind that switch (tests/test_gather_grad_order.py tests the default)."""
    with dmljax.config.override(ordered_gather_gradients=False):
        yield


@pytest.mark.hlo
@pytest.mark.parametrize(("rows", "transposes"), [(4096, 0), (8192, 3)], ids=["16 MiB", "32 MiB"])
def test_gpu_gradient_of_a_long_axis_runs_in_blocks_from_32_mib(rows, transposes, unordered_gradients):
    """If this fails: docs/design/blocked-gather.md (the GPU gradient's block threshold)."""
    # Exported for CUDA (lowered here without a GPU): from
    # config.blocked_gather_elements_gpu_gradient_min_bytes on, the cotangent, the
    # indices and the result go through the block layout; below it, the plain scatter-add.
    x, i = jax.ShapeDtypeStruct((rows, 1024), jnp.float32), jax.ShapeDtypeStruct((rows, 1024), jnp.int32)
    grad = jax.jit(jax.grad(lambda x, i: dmljax.gather_elements(x, i, 0, mode="clip").sum()))
    gpu = jax.export.export(grad, platforms=["cuda"])(x, i).mlir_module()
    assert gpu.count("stablehlo.transpose") == transposes  # the CPU's conditionals hold 5


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["clip", "fill"])
@pytest.mark.parametrize(("shape", "axis", "index_shape"), GRAD_CASES)
def test_gpu_flat_gather_tangent_is_the_gather_and_transposes_to_the_oracle(shape, axis, index_shape, mode):
    # The CUDA tangent, run here on the CPU: forward it reads what the gather reads, and its
    # transpose (a 1-D scatter-add) is the loop oracle's gradient (integer cotangents: exact).
    rng = np.random.default_rng(7 + axis)
    indices = repeated_indices(rng, index_shape, shape[axis], out_of_range=True)
    index = normalize(jnp.asarray(indices), shape[axis], IndexMode(mode))
    out_shape = shape[:axis] + index_shape + shape[axis + 1 :]
    data = jnp.asarray(rng.standard_normal(shape).astype(np.float32))
    tangent = functools.partial(gather_flat_tangent, axis=axis, mode=IndexMode(mode))
    np.testing.assert_array_equal(tangent(data, index), _gather_lax(data, index, axis=axis, mode=IndexMode(mode)))
    cotangent = rng.integers(-8, 9, out_shape).astype(np.float32)
    (got,) = jax.jit(jax.linear_transpose(lambda d: tangent(d, index), jnp.zeros(shape)))(cotangent)
    np.testing.assert_array_equal(got, reference.gather_grad(shape, indices, cotangent, axis, mode))


@pytest.mark.hlo
@pytest.mark.parametrize(
    ("shape", "flat"),
    [((2048, 1024), True), ((1024, 1024), False), ((2048, 1024, 4), True), ((1024, 1024, 4), False)]
    + [((2048, 1024, 16), True), ((1024, 1024, 16), False), ((8192, 1024, 32), False)],
    ids=["8 MiB", "4 MiB", "inner 4 32 MiB", "inner 4 16 MiB", "inner 16 128 MiB", "inner 16 64 MiB", "inner 32 1 GiB"],
)
def test_gpu_gradient_along_a_short_inner_axis_is_one_flat_scatter_add(shape, flat, unordered_gradients):
    """If this fails: docs/design/gather-gradient.md (the flat scatter-add on GPUs and its threshold)."""
    # Exported for CUDA (lowered here without a GPU): from inner * 8 MiB of cotangent on, with
    # fewer than 32 elements after the axis, the gradient is one 1-D scatter-add (H100: up to
    # 4.7x faster); the CPU keeps its rows tangent.
    x, i = jax.ShapeDtypeStruct(shape, jnp.float32), jax.ShapeDtypeStruct((1024,), jnp.int32)
    grad = jax.jit(jax.grad(lambda x, i: dmljax.gather(x, i, 1, mode="clip").sum()))
    n = np.prod(shape)
    one_d = f"(tensor<{n}xf32>, tensor<{n}x1xui32>, tensor<{n}x1xf32>)"  # updates as (N, 1) windows
    gpu, cpu = (jax.export.export(grad, platforms=[p])(x, i).mlir_module() for p in ("cuda", "cpu"))
    assert (one_d in gpu) == flat
    assert one_d not in cpu


@pytest.mark.hlo
def test_gpu_gradient_with_a_symbolic_index_size_keeps_jax_transpose(unordered_gradients):
    """If this fails: docs/design/gather-gradient.md (symbolic sizes keep JAX's transpose)."""
    # jax.export with a symbolic number of indices: the cotangent's size is unknown, so the
    # CUDA program keeps JAX's scatter-add (the size rule must not compare symbolic sizes).
    (b,) = jax.export.symbolic_shape("b")
    x, i = jax.ShapeDtypeStruct((4096, 1024), jnp.float32), jax.ShapeDtypeStruct((b,), jnp.int32)
    grad = jax.jit(jax.grad(lambda x, i: dmljax.gather(x, i, 1, mode="clip").sum()))
    gpu = jax.export.export(grad, platforms=["cuda"])(x, i).mlir_module()
    assert "update_window_dims = [0], inserted_window_dims = [1]" in gpu


@pytest.mark.hlo
@pytest.mark.parametrize("rows", [8192, 16384], ids=["32 MiB", "64 MiB"])
def test_gpu_forward_of_a_long_axis_runs_in_blocks_from_64_mib(rows, host_class):
    """If this fails: docs/design/blocked-gather.md (the GPU forward's block threshold)."""
    host_class(False)  # an AVX2 host, whose CPU forward runs in blocks
    # From config.blocked_gather_elements_gpu_forward_min_bytes on, the CUDA program is
    # the CPU's (the blocks in two conditionals).
    x, i = jax.ShapeDtypeStruct((rows, 1024), jnp.float32), jax.ShapeDtypeStruct((rows, 1024), jnp.int32)
    fwd = jax.jit(lambda x, i: dmljax.gather_elements(x, i, 0, mode="clip"))
    gpu, cpu = (jax.export.export(fwd, platforms=[p])(x, i).mlir_module() for p in ("cuda", "cpu"))
    assert cpu.count("stablehlo.transpose") == 5
    assert gpu.count("stablehlo.transpose") == (
        5 if rows * 1024 * 4 >= dmljax.config.blocked_gather_elements_gpu_forward_min_bytes else 0
    )


def _gather_fusion_ops(fn, *specs) -> list[str]:
    """Opcodes of the compiled fused computation that holds the gather (sorted), and its index operand's producer."""
    text = jax.jit(fn).lower(*specs).compile().as_text()
    (body,) = [c for c in text.split("\n\n") if " gather(" in c and c.lstrip().startswith("%fused")]
    ops = sorted(re.findall(r"= \S+ ([a-z-]+)\(", body))
    (gather,) = [line for line in body.splitlines() if " gather(" in line]
    index_name = re.search(r"gather\(%[\w.-]+, (%[\w.-]+)\)", gather).group(1)
    (producer,) = [line for line in body.splitlines() if line.strip().startswith(index_name + " ")]
    return ops + ["index from " + re.search(r"= \S+ ([a-z-]+)\(", producer).group(1)]


@pytest.mark.hlo
@pytest.mark.parametrize("dtype", ["int32", "uint32", "int64", "uint64"])
@pytest.mark.parametrize("mode", [None, "clip", "fill", "promise_in_bounds"])
def test_gather_along_axis_1_compiles_to_jnp_takes_gather_loop(cpu, dtype, mode):
    """If this fails: docs/design/gather-index-apart.md (the index arithmetic left the gather's loop)."""
    take_mode = "fill" if mode == "fill" else "clip"
    data = jax.ShapeDtypeStruct((64, 256), jnp.float32)
    with jax.enable_x64(dtype.endswith("64")):
        ours = _gather_fusion_ops(lambda a, i: dmljax.gather(a, i, axis=1, mode=mode), data, spec((256,), dtype))
        theirs = _gather_fusion_ops(lambda a, i: jnp.take(a, i, axis=1, mode=take_mode), data, spec((256,), "uint32"))
    assert "gather" in ours and ("transpose" in ours) == ("transpose" in theirs)
    assert ours == theirs  # the same loop as jnp.take on ready uint32 positions: no per-read index arithmetic


@pytest.mark.hlo
def test_gather_elements_gradient_copies_no_cotangent_on_cpu(cpu):
    """If this fails: docs/design/scatter-cpu.md (the flat tangent reads (N, 1) windows; no copy in its transpose)."""
    specs = (jax.ShapeDtypeStruct((64, 256), jnp.float32), jax.ShapeDtypeStruct((64, 256), jnp.int32))
    grad = jax.jit(jax.grad(lambda x, i: jnp.sum(dmljax.gather_elements(x, i, 1) * x)))
    entry = grad.lower(*specs).compile().as_text().split("ENTRY")[1]
    assert " scatter(" in entry or "wrapped_scatter" in entry
    assert "f32[16384,1]{1,0} fusion(" not in entry  # the cotangent, copied into (N, 1) windows
