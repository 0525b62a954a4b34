"""argmax / argmin (DML_ARGMAX/ARGMIN, ONNX ArgMax/ArgMin): the page's examples, ties, NaN, several axes, errors."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import dmljax
from dmljax import ValidationError
from tests import reference

PAGE = np.array([[1, 2, 3], [3, 0, 4], [2, 5, 2]], np.float32)


def test_page_examples():
    np.testing.assert_array_equal(dmljax.argmax(PAGE, 0, keepdims=True), [[1, 2, 1]])
    np.testing.assert_array_equal(dmljax.argmax(PAGE, 1, keepdims=True), [[2], [2], [1]])
    np.testing.assert_array_equal(dmljax.argmax(PAGE, (0, 1), keepdims=True), [[7]])
    x = np.array([3, 2, 1, 2, 3], np.float32)  # the AxisDirection example
    assert dmljax.argmax(x, 0) == 0 and dmljax.argmax(x, 0, select_last_index=True) == 4
    assert dmljax.argmax(PAGE, 0).dtype == jnp.int32


def test_nan_greater_than_every_number_and_signed_zeros_tie():
    x = np.array([1.0, np.nan, 5.0, np.nan, -1.0], np.float32)
    assert dmljax.argmax(x, 0) == 1 and dmljax.argmax(x, 0, select_last_index=True) == 3
    assert dmljax.argmin(x, 0) == 4
    assert dmljax.argmin(np.full(3, np.nan, np.float32), 0, select_last_index=True) == 2
    z = np.array([0.0, -0.0, 0.0], np.float32)
    assert dmljax.argmax(z, 0) == 0 and dmljax.argmin(z, 0, select_last_index=True) == 2


@pytest.mark.parametrize("seed", range(16))
def test_random_against_loop(seed):
    rng = np.random.default_rng(seed)
    rank = [1, 2, 3, 4][seed % 4]
    shape = tuple(int(s) for s in rng.integers(1, 6 if rank < 3 else 4, rank))
    dtype = ["float32", "float16", "bfloat16", "int32", "uint32", "uint16", "int8", "uint8"][seed % 8]
    x = rng.integers(-3, 4, shape).astype(jnp.dtype(dtype))
    if seed % 8 < 3:
        x[rng.random(shape) < 0.15] = np.nan
    count = int(rng.integers(1, rank + 1))
    axes = tuple(int(a) - rank * int(rng.integers(0, 2)) for a in rng.permutation(rank)[:count])
    axis = axes[0] if count == 1 and seed % 2 else axes
    keepdims, last = bool(seed & 2), bool(seed & 4)
    for largest, fn in ((True, dmljax.argmax), (False, dmljax.argmin)):
        out = fn(x, axis, keepdims=keepdims, select_last_index=last)
        np.testing.assert_array_equal(np.asarray(out), reference.arg_reduce(x, axes, keepdims, last, largest))


def test_all_axes_by_default_and_x64(x64):
    x = np.array([[5, 2**40], [2**40, -1]], np.int64)
    assert dmljax.argmax(x) == 1 and dmljax.argmax(x, select_last_index=True) == 2 and dmljax.argmin(x) == 3


def test_jit_and_vmap():
    x = np.random.default_rng(0).integers(0, 3, (5, 4, 6)).astype(np.float32)
    f = jax.jit(dmljax.argmax, static_argnames=("axis", "keepdims", "select_last_index"))
    np.testing.assert_array_equal(
        f(x, axis=(0, 2), select_last_index=True), reference.arg_reduce(x, (0, 2), False, True)
    )
    g = lambda a: dmljax.argmin(a, (0, 1), select_last_index=True)  # noqa: E731
    np.testing.assert_array_equal(jax.vmap(g, in_axes=1)(x), np.stack([g(x[:, j]) for j in range(4)]))


@pytest.mark.parametrize(
    ("call", "error", "pattern"),
    [
        (lambda: dmljax.argmax(np.zeros((2, 3)), 2), ValidationError, r"argmax: axis must be in \[-2, 2\); got axis=2"),
        (
            lambda: dmljax.argmin(np.zeros((2, 3)), (1, -1)),
            ValidationError,
            r"argmin: axis must name at least one axis, none twice; got axis=\(1, -1\)",
        ),
        (lambda: dmljax.argmax(np.zeros((2, 3)), ()), ValidationError, r"none twice; got axis=\(\)"),
        (
            lambda: dmljax.argmax(np.zeros((2, 0)), 1),
            ValidationError,
            r"argmax: x.shape must have no empty reduced axis; got x.shape=\(2, 0\)",
        ),
        (
            lambda: dmljax.argmax(np.zeros(3), 0, keepdims=1),
            ValidationError,
            r"keepdims must be a bool; got keepdims=1",
        ),
        (lambda: dmljax.argmax(np.zeros(3, np.complex64), 0), TypeError, r"argmax: x.dtype must be real"),
    ],
)
def test_errors(call, error, pattern):
    with pytest.raises(error, match=pattern):
        call()


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_subnormals_above_zero(dtype):
    """Issue 39 class 1: XLA CPU flushes subnormals in float comparisons; the keys are bits."""
    tiny = float(jnp.finfo(jnp.dtype(dtype)).smallest_subnormal)
    x = np.array([0.0, tiny, -0.0, -tiny]).astype(jnp.dtype(dtype))
    for f in (dmljax.argmax, jax.jit(dmljax.argmax, static_argnums=1)):
        assert f(x, 0) == 1 == reference.arg_reduce(x, (0,))
    assert dmljax.argmin(x, 0) == 3 == reference.arg_reduce(x, (0,), largest=False)
    assert dmljax.argmax(np.array([0.0, 1e-45], np.float32)) == 1


def test_axes_as_an_array():
    """Issue 39 class 14: a 1-D integer array names several axes; others are refused by name."""
    x = np.arange(6.0).reshape(2, 3)
    assert dmljax.argmax(x, np.array([0, 1])) == 5 == dmljax.argmax(x, (0, 1))
    assert dmljax.argmin(x, np.int64(1))[1] == 0
    for axis in (np.array([[0, 1]]), np.array([0.0, 1.0]), np.array(1.0)):
        with pytest.raises(ValidationError, match=r"argmax: axis must be an integer; got axis="):
            dmljax.argmax(x, axis)
    with pytest.raises(ValidationError, match=r"top_k: axis must be an integer; got axis=array"):
        dmljax.top_k(x, 1, np.array([0, 1]))
