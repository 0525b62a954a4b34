"""one_hot (DML_ONE_HOT, ONNX OneHot): the page's examples, negative and out-of-range indices, loop oracle, errors."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

import dmljax
from dmljax import ValidationError
from tests import reference

F01 = np.array([0.0, 1.0], np.float32)


def test_page_examples():
    # DirectML's IndicesTensor keeps the axis with size 1; here the axis is new (ONNX's layout).
    np.testing.assert_array_equal(dmljax.one_hot(np.array([0, 3, 2], np.uint32), 4, values=F01), np.eye(4)[[0, 3, 2]])
    np.testing.assert_array_equal(
        dmljax.one_hot(np.array([0, 2, 1, 0], np.uint32), 3, values=F01, axis=0),
        [[1, 0, 0, 1], [0, 0, 1, 0], [0, 1, 0, 0]],
    )
    values = np.array([4.0, 2.0, 9.0], np.float32)[:2]  # off, on (the page's third element is unused)
    np.testing.assert_array_equal(
        dmljax.one_hot(np.array([0, 3, 2], np.uint32), 4, values=values), [[2, 4, 4, 4], [4, 4, 4, 2], [4, 4, 2, 4]]
    )
    out = dmljax.one_hot(np.array([-3, 100, 3], np.int32), 4, values=F01)
    np.testing.assert_array_equal(out, [[0, 1, 0, 0], [0, 0, 0, 0], [0, 0, 0, 1]])


@pytest.mark.parametrize("seed", range(12))
def test_random_against_loop(seed):
    rng = np.random.default_rng(seed)
    rank = [0, 1, 2, 3][seed % 4]
    shape = tuple(int(s) for s in rng.integers(1, 5, rank))
    depth = int(rng.integers(1, 7))
    dtype = ["int32", "uint32"][seed % 2]
    indices = rng.integers(-depth - 2 if dtype == "int32" else 0, depth + 3, shape).astype(dtype)
    vdtype = ["float32", "float16", "int8", "uint16", "bfloat16", "bool"][seed % 6]
    values = np.array([3, 0] if vdtype != "bool" else [True, False]).astype(jnp.dtype(vdtype))
    axis = int(rng.integers(-rank - 1, rank + 1))
    out = dmljax.one_hot(indices, depth, values=values, axis=axis)
    expected = reference.one_hot(indices, depth, values[0], values[1], axis, values.dtype)
    assert out.dtype == values.dtype
    np.testing.assert_array_equal(np.asarray(out), expected)


def test_64bit_indices_exact_with_and_without_x64():
    indices = np.array([2**32 + 1, -1, -(2**40), 2, -3], np.int64)  # 2^32 + 1 must not wrap to 1
    expected = reference.one_hot(indices, 3, 0, 1)
    np.testing.assert_array_equal(dmljax.one_hot(indices, 3), expected)
    with jax.enable_x64(True):
        np.testing.assert_array_equal(dmljax.one_hot(jnp.asarray(indices), 3), expected)
        big = np.array([2**63 + 1, 1], np.uint64)
        np.testing.assert_array_equal(dmljax.one_hot(big, 3), reference.one_hot(big, 3, 0, 1))


def test_jit_vmap_and_grad_of_values():
    indices = np.array([[0, 2, -1], [5, 1, 1]], np.int32)
    f = jax.jit(dmljax.one_hot, static_argnames=("depth", "axis"))
    np.testing.assert_array_equal(f(indices, depth=3, axis=1), reference.one_hot(indices, 3, 0, 1, 1))
    g = lambda i: dmljax.one_hot(i, 4, values=F01, axis=0)  # noqa: E731
    np.testing.assert_array_equal(jax.vmap(g)(indices), np.stack([g(i) for i in indices]))
    check_grads(lambda v: dmljax.one_hot(indices, 3, values=v), (np.array([0.5, 2.0]),), order=1, modes=("rev",))
    grad = jax.grad(lambda v: dmljax.one_hot(indices, 3, values=v).sum())(F01)
    np.testing.assert_array_equal(grad, [18 - 5, 5])  # 5 hits (5 is out of range), 13 misses


@pytest.mark.parametrize(
    ("call", "error", "pattern"),
    [
        (
            lambda: dmljax.one_hot(np.zeros(3, np.int32), 0),
            ValidationError,
            r"one_hot: depth must be in \[1, 4294967295\]; got depth=0",
        ),
        (
            lambda: dmljax.one_hot(np.zeros(3, np.int32), 2.0),
            ValidationError,
            r"depth must be an integer; got depth=2.0",
        ),
        (
            lambda: dmljax.one_hot(np.zeros(3, np.int32), 2, axis=2),
            ValidationError,
            r"axis must be in \[-2, 2\); got axis=2",
        ),
        (
            lambda: dmljax.one_hot(np.zeros(3, np.int32), 2, values=(0, 1, 2)),
            ValidationError,
            r"values must hold exactly two elements \(off, on\); got values=\(3,\)",
        ),
        (lambda: dmljax.one_hot(np.zeros(3, np.float32), 2), TypeError, r"one_hot: indices.dtype must be one of"),
        (lambda: dmljax.one_hot(np.zeros((1,) * 8, np.int32), 2), ValidationError, r"indices.ndim must be at most 7"),
        (lambda: jax.jit(dmljax.one_hot)(np.zeros(3, np.int32), 2), ValidationError, r"depth must be a static int"),
    ],
)
def test_errors(call, error, pattern):
    with pytest.raises(error, match=pattern):
        call()


def test_default_type_does_not_depend_on_x64():
    """Issue 39 class 9: the default (0, 1) gave int64 under x64; Python numbers now take the
    types they take with x64 off, arrays keep theirs."""
    for on in (False, True):
        with jax.enable_x64(on):
            assert dmljax.one_hot(np.array([0, 1]), 3).dtype == np.int32
            assert dmljax.one_hot([0], 2, values=(0.0, 2.0)).dtype == np.float32
            assert dmljax.one_hot([0], 2, values=jnp.array([1, 2], jnp.int16)).dtype == np.int16


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "int8", "uint8", "bool", "complex64"])
def test_dtype_as_jax_nn_one_hot(dtype):
    """Issue 39 class 9: ``dtype=`` as ``jax.nn.one_hot``'s, eager and under jit."""
    indices = np.array([2, 0, -1, 7])
    want = np.array(jax.nn.one_hot(indices, 4, dtype=jnp.dtype(dtype)))
    want[2] = 0  # jax.nn.one_hot marks nothing for -1; ONNX's -1 is depth - 1
    want[2, 3] = 1
    got = dmljax.one_hot(indices, 4, dtype=dtype)
    assert got.dtype == jnp.dtype(dtype)
    np.testing.assert_array_equal(np.asarray(got), want)
    jitted = jax.jit(lambda i: dmljax.one_hot(i, 4, dtype=dtype))(jnp.asarray(indices))
    np.testing.assert_array_equal(np.asarray(jitted), want)
    assert dmljax.one_hot([1], 2, values=(-1.5, 2.5), dtype=jnp.float16).tolist() == [[-1.5, 2.5]]


@pytest.mark.parametrize(
    ("kwargs", "error", "pattern"),
    [
        (
            {"dtype": "uint8", "values": (0, 300)},
            ValidationError,
            r"one_hot: values must fit dtype uint8.*got values=\[0, 300\]",
        ),
        (
            {"dtype": "int32", "values": (0.5, 1.0)},
            ValidationError,
            r"values must fit dtype int32.*got values=\[0.5, 1.0\]",
        ),
        ({"dtype": "int64"}, TypeError, r"one_hot: dtype must be 32-bit or narrower unless jax_enable_x64.*INT64"),
        ({"dtype": "text"}, TypeError, r"one_hot: dtype must be one of .*got dtype='text'"),
    ],
)
def test_dtype_errors(kwargs, error, pattern):
    with pytest.raises(error, match=pattern):
        dmljax.one_hot([0], 2, **kwargs)
