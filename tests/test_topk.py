"""top_k (DML_TOP_K1, ONNX TopK): the page's examples, ties, NaN and signed zeros, loop oracle, transforms, errors."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

import dmljax
from dmljax import ValidationError
from tests import reference

PAGE = np.array([[[[0, 1, 10, 11], [3, 2, 9, 8], [4, 5, 6, 7]]]], np.float32)
TIES = np.array([[[[1, 2, 2, 3], [3, 4, 5, 5], [6, 6, 6, 6]]]], np.float32)


@pytest.mark.parametrize(
    ("x", "k", "axis", "largest", "values", "indices"),
    [
        (PAGE, 2, 3, True, [[11, 10], [9, 8], [7, 6]], [[3, 2], [2, 3], [3, 2]]),
        (PAGE, 2, 2, True, [[4, 5, 10, 11], [3, 2, 9, 8]], [[2, 2, 0, 0], [1, 1, 1, 1]]),
        (TIES, 3, 3, True, [[3, 2, 2], [5, 5, 4], [6, 6, 6]], [[3, 1, 2], [2, 3, 1], [0, 1, 2]]),
        (TIES, 3, 3, False, [[1, 2, 2], [3, 4, 5], [6, 6, 6]], [[0, 1, 2], [0, 1, 2], [0, 1, 2]]),
    ],
    ids=["example1", "example2_axis2", "example3_ties", "example4_increasing"],
)
def test_page_examples(x, k, axis, largest, values, indices):
    v, i = dmljax.top_k(x, k, axis, largest=largest)
    np.testing.assert_array_equal(v[0, 0], values)
    np.testing.assert_array_equal(i[0, 0], indices)
    assert i.dtype == jnp.int32 and v.dtype == jnp.float32


def test_nan_above_every_number_and_signed_zeros_tie():
    """onnxruntime's order: NaN first when largest, last when smallest; -0.0 ties +0.0 (lax.top_k: +0 > -0)."""
    x = np.array([1.0, np.nan, 3.0, 3.0, -0.0, 0.0, -np.nan, -np.inf, np.inf], np.float32)
    v, i = dmljax.top_k(x, 9)
    np.testing.assert_array_equal(i, [1, 6, 8, 2, 3, 0, 4, 5, 7])
    assert np.signbit(v[6]) and not np.signbit(v[7])  # values keep their own bits
    _, i = dmljax.top_k(x, 9, largest=False)
    np.testing.assert_array_equal(i, [7, 4, 5, 0, 2, 3, 8, 1, 6])
    assert not np.array_equal(np.asarray(jax.lax.top_k(x, 9)[1]), [1, 6, 8, 2, 3, 0, 4, 5, 7])


@pytest.mark.parametrize("seed", range(16))
def test_random_against_loop(seed):
    rng = np.random.default_rng(seed)
    rank = [1, 2, 3, 4][seed % 4]
    shape = tuple(int(s) for s in rng.integers(1, 9 if rank < 3 else 5, rank))
    dtype = ["float32", "float16", "bfloat16", "int32", "uint32", "uint16", "int8", "uint8"][seed % 8]
    x = rng.integers(-4, 5, shape).astype(jnp.dtype(dtype))  # few distinct values: many ties
    if seed % 8 < 3:
        x[rng.random(shape) < 0.2] = np.nan
        x[rng.random(shape) < 0.2] = -0.0
    axis = int(rng.integers(-rank, rank))
    k = int(rng.integers(1, shape[axis] + 1))
    largest = bool(seed & 1)
    v, i = dmljax.top_k(x, k, axis, largest=largest)
    ev, ei = reference.top_k(x, k, axis % rank, largest)
    np.testing.assert_array_equal(np.asarray(i), ei)
    np.testing.assert_array_equal(np.asarray(v).view(np.uint8), ev.view(np.uint8))


def test_64bit_under_x64(x64):
    x = np.array([2**40, -(2**62), 2**40, 7], np.int64)
    v, i = dmljax.top_k(x, 3, largest=False)
    np.testing.assert_array_equal(i, [1, 3, 0])
    y = np.array([0.5, -0.0, 0.0, np.nan, 0.5])
    np.testing.assert_array_equal(dmljax.top_k(y, 5)[1], reference.top_k(y, 5, 0)[1])


def test_jit_vmap_and_grad():
    x = np.random.default_rng(0).standard_normal((4, 3, 7)).astype(np.float32)
    f = jax.jit(dmljax.top_k, static_argnames=("k", "axis", "largest"))
    v, i = f(x, k=2, axis=1, largest=False)
    np.testing.assert_array_equal(i, reference.top_k(x, 2, 1, False)[1])
    g = lambda a: dmljax.top_k(a, 3, 0)  # noqa: E731
    vv, vi = jax.vmap(g, in_axes=2, out_axes=2)(x)
    np.testing.assert_array_equal(vi, np.stack([g(x[..., j])[1] for j in range(7)], 2))
    check_grads(lambda a: dmljax.top_k(a, 3)[0], (x,), order=2, modes=("fwd", "rev"))
    grad = jax.grad(lambda a: dmljax.top_k(a, 2)[0].sum())(jnp.array([1.0, 5.0, 5.0, 2.0]))
    np.testing.assert_array_equal(grad, [0, 1, 1, 0])


@pytest.mark.parametrize(
    ("call", "error", "pattern"),
    [
        (
            lambda: dmljax.top_k(np.zeros((2, 3)), 4),
            ValidationError,
            r"top_k: k must be in \[1, 3\] \(the axis' size\); got k=4",
        ),
        (lambda: dmljax.top_k(np.zeros(3), 0), ValidationError, r"k must be in \[1, 3\].*got k=0"),
        (lambda: dmljax.top_k(np.zeros(3), 1.5), ValidationError, r"k must be an integer; got k=1.5"),
        (lambda: dmljax.top_k(np.zeros(3), 1, axis=2), ValidationError, r"axis must be in \[-1, 1\); got axis=2"),
        (
            lambda: dmljax.top_k(np.zeros(3), 1, largest="no"),
            ValidationError,
            r"largest must be a bool; got largest='no'",
        ),
        (lambda: dmljax.top_k(np.zeros(3, np.complex64), 1), TypeError, r"top_k: x.dtype must be real"),
        (lambda: jax.jit(dmljax.top_k)(np.zeros(3), 1), ValidationError, r"k must be a static int"),
    ],
)
def test_errors(call, error, pattern):
    with pytest.raises(error, match=pattern):
        call()


def test_bool_input_orders_false_below_true():
    x = np.array([False, True, False, True])
    v, i = dmljax.top_k(x, 3)
    np.testing.assert_array_equal(i, [1, 3, 0])
    assert v.dtype == np.bool_ and dmljax.argmin(x, 0, select_last_index=True) == 2
