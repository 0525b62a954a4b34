"""scatter (DML_SCATTER = ScatterElements): the page's examples, oracle, modes, transforms, errors."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import checkify
from jax.test_util import check_grads

import dmljax
from dmljax import DataType, ValidationError
from dmljax._descriptors.scatter import SCATTER_SUPPORT
from dmljax._descriptors.support import support_at
from dmljax.descriptors import FeatureLevel
from tests import reference

DATA_TYPES = ["float32", "float16", "bfloat16", "int32", "int16", "int8", "uint32", "uint16", "uint8", "bool"]


def unique_indices(rng, shape, axis, axis_size, dtype):
    """Indices of ``shape`` without duplicates along each line of ``axis``; negatives if signed."""
    lines = np.moveaxis(np.empty(shape, np.int64), axis, -1)
    for p in np.ndindex(*lines.shape[:-1]):
        lines[p] = rng.permutation(axis_size)[: shape[axis]]
    out = np.moveaxis(lines, -1, axis)
    if np.dtype(dtype).kind == "i":
        out = np.where(rng.random(shape) < 0.5, out - axis_size, out)
    return out.astype(dtype)


def random_case(rng, rank, dtype, index_dtype):
    shape = tuple(int(s) for s in rng.integers(1, 5, rank))
    axis = int(rng.integers(-rank, rank))
    ishape = list(shape)
    ishape[axis] = int(rng.integers(1, shape[axis] + 1))
    data = (rng.standard_normal(shape) * 10).astype(jnp.dtype(dtype))
    updates = (rng.standard_normal(ishape) * 10).astype(jnp.dtype(dtype))
    indices = unique_indices(rng, tuple(ishape), axis % rank, shape[axis], index_dtype)
    return data, indices, updates, axis


# ----- the examples of https://learn.microsoft.com/en-us/windows/win32/api/directml/ns-directml-dml_scatter_operator_desc


def test_seed_example_1_scatter_1d():
    out = dmljax.scatter(jnp.array([0.0, 1, 2, 3, 4]), jnp.array([3, 1, 3, 0], jnp.uint32), jnp.array([5.0, 6, 7, 8]))
    # Duplicate index 3: the seed shows 7 winning; DirectML does not guarantee it (checked below).
    np.testing.assert_array_equal(np.delete(np.asarray(out), 3), [8, 6, 2, 4])
    assert float(out[3]) in (5.0, 7.0)


def test_seed_example_2_scatter_2d_input_is_3x3_erratum():
    indices = jnp.array([[1, 0, 2], [0, 2, 1]], jnp.uint32)
    updates = jnp.array([[10.0, 11, 12], [20, 21, 22]])
    out = dmljax.scatter(jnp.zeros((3, 3)), indices, updates, axis=0)
    np.testing.assert_array_equal(out, [[20, 11, 0], [10, 0, 22], [0, 21, 12]])


def test_scatter_elements_is_an_alias():
    assert dmljax.scatter_elements is dmljax.scatter


# ----- random cases against the loop oracle ---------------------------------------------


@pytest.mark.parametrize("seed", range(12))
def test_random_against_oracle(seed):
    rng = np.random.default_rng(seed)
    dtype = DATA_TYPES[seed % len(DATA_TYPES)]
    rank = [1, 2, 3, 4, 8][seed % 5] if seed != 7 else 5
    data, indices, updates, axis = random_case(rng, rank, dtype, ["int32", "uint32"][seed % 2])
    expected = reference.scatter(data, indices, updates, axis % rank)
    out = dmljax.scatter(data, indices, updates, axis)
    assert out.dtype == jnp.dtype(dtype)
    np.testing.assert_array_equal(np.asarray(out), expected)
    if seed < 4:
        jitted = jax.jit(dmljax.scatter, static_argnames="axis")(data, indices, updates, axis=axis)
        np.testing.assert_array_equal(np.asarray(jitted), expected)


@pytest.mark.parametrize("index_dtype", ["int64", "uint64"])
def test_64bit_types_under_x64(x64, index_dtype):
    rng = np.random.default_rng(5)
    data, indices, updates, axis = random_case(rng, 3, "float64", index_dtype)
    out = dmljax.scatter(data, indices, updates, axis)
    assert out.dtype == jnp.float64
    np.testing.assert_array_equal(out, reference.scatter(data, indices, updates, axis % 3))


def test_numpy_int64_indices_without_x64():
    out = dmljax.scatter(jnp.zeros(4, jnp.int32), np.array([-1, 0]), jnp.array([7, 9], jnp.int32))
    np.testing.assert_array_equal(out, [9, 0, 0, 7])


# ----- out-of-range indices and modes ---------------------------------------------------


def test_concrete_out_of_range_raises_index_error():
    with pytest.raises(IndexError, match=r"scatter: index 3 is out of bounds for axis 0 with size 3 \(indices\[1\]"):
        dmljax.scatter(jnp.zeros(3), np.array([0, 3]), jnp.ones(2))
    with pytest.raises(IndexError, match=r"index -4 .* valid range \[-3, 2\]"):
        dmljax.scatter(jnp.zeros(3), np.array([-4]), jnp.ones(1))


@pytest.mark.parametrize(
    ("mode", "expected"),
    [(None, [0, 1, 0, 0]), ("fill", [0, 1, 0, 0]), ("drop", [0, 1, 0, 0]), ("clip", [3, 1, 0, 2])],
)
def test_modes_under_jit(mode, expected):
    indices = jnp.array([7, 1, -9], jnp.int32)
    updates = jnp.array([2.0, 1.0, 3.0])
    out = jax.jit(lambda x, i, u: dmljax.scatter(x, i, u, mode=mode))(jnp.zeros(4), indices, updates)
    # fill/drop: the updates at 7 and -9 are dropped; clip: 7 -> 3, -9 -> 0.
    np.testing.assert_array_equal(out, expected)


def test_explicit_mode_does_not_raise_eagerly():
    out = dmljax.scatter(jnp.zeros(2), np.array([5]), jnp.ones(1), mode="clip")
    np.testing.assert_array_equal(out, [0, 1])


def test_promise_in_bounds_in_range_is_exact():
    data, indices, updates, axis = random_case(np.random.default_rng(1), 3, "float32", "int32")
    out = jax.jit(lambda *a: dmljax.scatter(*a, axis=axis, mode="promise_in_bounds"))(data, indices, updates)
    np.testing.assert_array_equal(out, reference.scatter(data, indices, updates, axis % 3))


def test_checked_mode_under_jit_with_checkify():
    f = checkify.checkify(jax.jit(lambda x, i, u: dmljax.scatter(x, i, u, 1, mode="checked")))
    err, out = f(jnp.zeros((2, 3)), jnp.array([[0], [3]]), jnp.ones((2, 1)))
    with pytest.raises(checkify.JaxRuntimeError, match=r"scatter: index 3 is out of bounds for axis 1 with size 3"):
        err.throw()
    np.testing.assert_array_equal(out, [[1, 0, 0], [0, 0, 0]])
    err, _ = f(jnp.zeros((2, 3)), jnp.array([[0], [-3]]), jnp.ones((2, 1)))
    assert err.get() is None


def test_duplicates_write_one_of_the_updates():
    out = jax.jit(dmljax.scatter)(jnp.zeros(2), jnp.array([1, 1, 1]), jnp.array([4.0, 5.0, 6.0]))
    assert out[0] == 0 and float(out[1]) in (4.0, 5.0, 6.0)


# ----- transforms -----------------------------------------------------------------------


def test_vmap_over_every_argument_matches_loop():
    rng = np.random.default_rng(3)
    shape, axis = (3, 4), -1
    data = rng.standard_normal((5, *shape)).astype("float32")
    indices = np.stack([unique_indices(rng, (3, 2), 1, 4, "int32") for _ in range(5)])
    updates = rng.standard_normal((5, 3, 2)).astype("float32")
    out = jax.vmap(lambda x, i, u: dmljax.scatter(x, i, u, axis))(data, indices, updates)
    loop = [reference.scatter(data[b], indices[b], updates[b], 1) for b in range(5)]
    np.testing.assert_array_equal(out, np.stack(loop))
    out = jax.vmap(dmljax.scatter, in_axes=(None, 0, None, None))(data[0], indices, updates[0], axis)
    np.testing.assert_array_equal(out, np.stack([reference.scatter(data[0], i, updates[0], 1) for i in indices]))
    out = jax.vmap(dmljax.scatter, in_axes=(1, None, 2, None), out_axes=1)(
        data.transpose(1, 0, 2), indices[0], updates.transpose(1, 2, 0), axis
    )
    loop = [reference.scatter(data[b], indices[0], updates[b], 1) for b in range(5)]
    np.testing.assert_array_equal(out, np.stack(loop, axis=1))


def test_gradients_are_exact():
    data = jnp.arange(12.0).reshape(3, 4)
    indices = jnp.array([[1, 3], [0, 2], [-1, 0]])
    cotangent = jnp.arange(1.0, 13.0).reshape(3, 4)
    d_data, d_updates = jax.grad(
        lambda x, u: jnp.sum(dmljax.scatter(x, indices, u, axis=1) * cotangent), argnums=(0, 1)
    )(data, jnp.ones((3, 2)))
    written = np.zeros((3, 4), bool)
    written[[0, 0, 1, 1, 2, 2], [1, 3, 0, 2, 3, 0]] = True
    np.testing.assert_array_equal(d_data, np.where(written, 0.0, cotangent))
    np.testing.assert_array_equal(d_updates, np.take_along_axis(np.asarray(cotangent), np.asarray(indices) % 4, 1))


@pytest.mark.slow
def test_check_grads_first_and_second_order():
    data, indices, updates, axis = random_case(np.random.default_rng(7), 3, "float32", "int32")
    f = lambda x, u: dmljax.scatter(x, indices, u, axis)  # noqa: E731
    check_grads(f, (data, updates), order=2, modes=("fwd", "rev"), eps=1e-2)


def test_dropped_updates_get_zero_gradient_under_jit():
    f = jax.jit(jax.grad(lambda u: jnp.sum(dmljax.scatter(jnp.zeros(3), jnp.array([1, 5]), u))))
    np.testing.assert_array_equal(f(jnp.ones(2)), [1.0, 0.0])


# ----- errors ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "pattern"),
    [
        (
            (jnp.zeros((2, 3)), jnp.zeros((2, 3), int), jnp.zeros((2, 3))),
            {"axis": 2},
            ValidationError,
            r"scatter: axis must be in \[-2, 2\); got axis=2 \(input shape \(2, 3\)\)\.",
        ),
        (
            (jnp.zeros(()), jnp.zeros((), int), jnp.zeros(())),
            {},
            ValidationError,
            r"input.ndim must be in \[1, 8\]; got input.ndim=0",
        ),
        ((jnp.zeros((1,) * 9), jnp.zeros((1,) * 9, int), jnp.zeros((1,) * 9)), {}, ValidationError, r"input.ndim=9"),
        (
            (jnp.zeros((2, 3)), jnp.zeros((2, 2), int), jnp.zeros((2, 2))),
            {"axis": 0},
            ValidationError,
            r"indices.shape\[1\] must equal input.shape\[1\] \(3\); got indices.shape\[1\]=2",
        ),
        (
            (jnp.zeros((2, 3)), jnp.zeros((2,), int), jnp.zeros((2,))),
            {},
            ValidationError,
            r"indices.ndim must equal input.ndim \(2\); got indices.ndim=1",
        ),
        (
            (jnp.zeros(3), jnp.zeros(2, int), jnp.zeros(3)),
            {},
            ValidationError,
            r"updates.shape must equal indices.shape \(2,\); got updates.shape=\(3,\)",
        ),
        (
            (jnp.zeros(3), jnp.zeros(2, int), jnp.zeros(2, int)),
            {},
            TypeError,
            r"updates.dtype must equal input.dtype \(float32\); got updates.dtype=dtype\('int32'\)",
        ),
        (
            (jnp.zeros(3), jnp.zeros(2), jnp.zeros(2)),
            {},
            TypeError,
            r"indices.dtype must be one of INT32, INT64, UINT32, UINT64; got indices.dtype=dtype\('float32'\)",
        ),
        ((jnp.zeros(3), jnp.zeros(2, jnp.int8), jnp.zeros(2)), {}, TypeError, r"indices.dtype=dtype\('int8'\)"),
        (
            (jnp.zeros(3), jnp.zeros(2, int), jnp.zeros(2)),
            {"mode": "wrap"},
            ValidationError,
            r"mode must be None, 'drop' or one of .*; got mode='wrap'",
        ),
        (
            (jnp.zeros(3), jnp.zeros(2, int), jnp.zeros(2)),
            {"axis": 0.0},
            ValidationError,
            r"axis must be an integer; got axis=0.0",
        ),
    ],
)
def test_errors(args, kwargs, error, pattern):
    with pytest.raises(error, match=pattern):
        dmljax.scatter(*args, **kwargs)


def test_errors_are_raised_at_trace_time_under_jit():
    with pytest.raises(ValidationError, match="axis=3"):
        jax.jit(lambda x, i, u: dmljax.scatter(x, i, u, 3))(jnp.zeros(3), jnp.zeros(1, int), jnp.zeros(1))


# ----- feature-level support table (the DML_SCATTER page) ---------------------------------


def test_support_table():
    assert support_at(SCATTER_SUPPORT, FeatureLevel.FL_1_0).data_types == (DataType.FLOAT32, DataType.FLOAT16)
    assert support_at(SCATTER_SUPPORT, FeatureLevel.FL_2_1).index_types == (DataType.UINT32,)
    fl3 = support_at(SCATTER_SUPPORT, FeatureLevel.FL_3_0)
    assert fl3.dims == (1, 8) and DataType.INT64 in fl3.index_types and DataType.FLOAT64 not in fl3.data_types
    # The latest level takes every DirectML buffer type: all DataType members but ONNX Gather's extra ones.
    onnx_only = {DataType.BOOL, DataType.BFLOAT16, DataType.COMPLEX64, DataType.COMPLEX128}
    assert set(support_at(SCATTER_SUPPORT, FeatureLevel.LATEST).data_types) == set(DataType) - onnx_only


@pytest.mark.hlo
def test_flat_scatter_compiles_to_the_input_copy_the_positions_and_the_scatter_only(cpu):
    """If this fails: docs/design/scatter-cpu.md (updates as (N, 1) windows, so XLA CPU copies no updates)."""
    spec = [jax.ShapeDtypeStruct((64, 256), d) for d in (jnp.float32, jnp.int32, jnp.float32)]
    entry = jax.jit(lambda x, i, u: dmljax.scatter(x, i, u, 1)).lower(*spec).compile().as_text().split("ENTRY")[1]
    assert entry.count(" copy(") == 1  # the input, into the output buffer
    assert entry.count(" fusion(") == 2  # the flat positions, the scatter: no (N,) -> (N, 1) copy of the updates
