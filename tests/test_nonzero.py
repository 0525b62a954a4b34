"""nonzero_coordinates (DML_NONZERO_COORDINATES): the page's example, zeros, loop oracle, transforms, errors."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import dmljax
from dmljax import ValidationError
from tests import reference


def test_page_example():
    x = np.array([[[[1.0, 0.0, 0.0, 2.0], [-0.0, 3.5, 0.0, -5.2]]]], np.float32)
    count, coordinates = dmljax.nonzero_coordinates(x)
    assert count == 4 and count.dtype == jnp.int32 and coordinates.shape == (8, 4)
    np.testing.assert_array_equal(coordinates[:4, 2:], [[0, 0], [0, 3], [1, 1], [1, 3]])
    np.testing.assert_array_equal(coordinates[4:], 0)  # rows past the count: 0 here (undefined in DirectML)


def test_nan_is_nonzero_and_signed_zero_is_zero():
    count, coordinates = dmljax.nonzero_coordinates(np.array([np.nan, -0.0, 0.0, 1.0], np.float32))
    assert count == 2
    np.testing.assert_array_equal(coordinates, [[0], [3], [0], [0]])


@pytest.mark.parametrize("seed", range(10))
def test_random_against_loop(seed):
    rng = np.random.default_rng(seed)
    rank = int(rng.integers(1, 6))
    shape = tuple(int(s) for s in rng.integers(1, 5, rank))
    dtype = ["float32", "float16", "int8", "uint32", "bool", "bfloat16", "int32", "uint8", "complex64", "int16"][seed]
    x = (rng.random(shape) < 0.4).astype(jnp.dtype(dtype)) * (1 if dtype == "bool" else 3)
    count, coordinates = dmljax.nonzero_coordinates(x.astype(jnp.dtype(dtype)))
    expected_count, expected = reference.nonzero_coordinates(x)
    assert int(count) == expected_count
    np.testing.assert_array_equal(np.asarray(coordinates), expected)


def test_jit_and_vmap():
    x = (np.random.default_rng(0).random((3, 4, 5)) < 0.5).astype(np.float32)
    count, coordinates = jax.jit(dmljax.nonzero_coordinates)(x)
    np.testing.assert_array_equal(coordinates, reference.nonzero_coordinates(x)[1])
    counts, tables = jax.vmap(dmljax.nonzero_coordinates)(x)
    for i in range(3):
        c, t = reference.nonzero_coordinates(x[i])
        assert counts[i] == c
        np.testing.assert_array_equal(tables[i], t)


def test_errors():
    with pytest.raises(ValidationError, match=r"nonzero_coordinates: x.ndim must be in \[1, 8\]; got x.ndim=0"):
        dmljax.nonzero_coordinates(np.float32(1))
    with pytest.raises(TypeError, match=r"nonzero_coordinates: x.dtype must be one of"):
        dmljax.nonzero_coordinates(np.array(["a"]))


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "complex64"])
def test_subnormals_are_nonzero_on_bits(dtype):
    """Issue 39 class 1: XLA CPU flushes subnormals in `x != 0`; the count must not."""
    tiny = float(jnp.finfo(jnp.dtype(dtype)).smallest_subnormal)
    x = np.array([0.0, tiny, -0.0, -tiny, 1.0]).astype(jnp.dtype(dtype))
    if dtype == "complex64":
        x = x * 1j + np.array([0, 0, 0, tiny, 0], np.float32)  # subnormal imaginary parts
    expected_count, expected = reference.nonzero_coordinates(np.asarray(x))
    for f in (dmljax.nonzero_coordinates, jax.jit(dmljax.nonzero_coordinates)):
        count, coordinates = f(x)
        assert int(count) == expected_count == 3
        np.testing.assert_array_equal(np.asarray(coordinates), expected)
