"""slice1 (DML_SLICE1): the page's examples, loop oracle, lowering, transforms, errors."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

import dmljax
from dmljax import DataType, ValidationError
from dmljax._descriptors.slice1 import SLICE1_SUPPORT
from dmljax._descriptors.support import support_at
from dmljax.descriptors import FeatureLevel
from tests import reference

SEED_INPUT = np.arange(1, 17, dtype=np.float32).reshape(1, 1, 4, 4)


def test_seed_example_1_positive_strides():
    out = dmljax.slice(SEED_INPUT, [0, 0, 0, 1], [1, 1, 4, 3], [1, 1, 2, 2])
    np.testing.assert_array_equal(out, [[[[2, 4], [10, 12]]]])


def test_seed_example_2_negative_stride():
    out = dmljax.slice(SEED_INPUT, [0, 0, 0, 1], [1, 1, 4, 3], [1, 1, -2, 2])
    np.testing.assert_array_equal(out, [[[[14, 16], [6, 8]]]])


def random_window(rng, shape):
    offsets, sizes, strides, outs = [], [], [], []
    for dim in shape:
        offset = int(rng.integers(0, dim))
        size = int(rng.integers(1, dim - offset + 1))
        stride = int(rng.choice([-3, -2, -1, 1, 2, 3]))
        offsets.append(offset), sizes.append(size), strides.append(stride)
        outs.append(int(rng.integers(1, 1 + (size - 1) // abs(stride) + 1)))
    return offsets, sizes, strides, outs


@pytest.mark.parametrize("seed", range(12))
def test_random_against_oracle(seed):
    rng = np.random.default_rng(seed)
    rank = [1, 2, 3, 4, 5, 8][seed % 6]
    shape = tuple(int(s) for s in rng.integers(1, 7 if rank < 5 else 3, rank))
    dtype = ["float32", "float16", "int8", "uint32", "bool", "bfloat16"][seed % 6]
    data = (rng.standard_normal(shape) * 10).astype(jnp.dtype(dtype))
    offsets, sizes, strides, outs = random_window(rng, shape)
    output_sizes = outs if seed % 2 else None
    out = dmljax.slice(data, offsets, sizes, strides, output_sizes)
    np.testing.assert_array_equal(np.asarray(out), reference.slice1(data, offsets, sizes, strides, output_sizes))
    assert out.dtype == jnp.dtype(dtype)


def test_64bit_under_x64(x64):
    data = np.arange(30, dtype=np.uint64).reshape(5, 6) * 2**40
    out = dmljax.slice(data, [1, 0], [4, 6], [-2, 5])
    assert out.dtype == jnp.uint64
    np.testing.assert_array_equal(out, reference.slice1(data, [1, 0], [4, 6], [-2, 5]))


@pytest.mark.hlo
def test_lowers_to_slice_and_reverse_never_a_gather():
    """If this fails: docs/design/strided-lowering.md (negative strides are a slice and a reverse)."""
    hlo = jax.jit(lambda x: dmljax.slice(x, [0, 1], [4, 3], [-2, 2])).lower(jnp.zeros((4, 4))).as_text()
    assert "stablehlo.slice" in hlo and "stablehlo.reverse" in hlo
    assert "gather" not in hlo


def test_jit_vmap_and_grad():
    rng = np.random.default_rng(0)
    data = rng.standard_normal((3, 5, 6)).astype(np.float32)
    f = lambda x: dmljax.slice(x, [1, 0], [4, 5], [-1, 2], [3, 2])  # noqa: E731
    np.testing.assert_array_equal(jax.jit(f)(data[0]), reference.slice1(data[0], [1, 0], [4, 5], [-1, 2], [3, 2]))
    np.testing.assert_array_equal(jax.vmap(f)(data), np.stack([f(d) for d in data]))
    check_grads(f, (data[0],), order=2, modes=("fwd", "rev"))
    grad = jax.grad(lambda x: jnp.sum(dmljax.slice(x, [0], [5], [-2])))(jnp.zeros(6))
    np.testing.assert_array_equal(grad, [1, 0, 1, 0, 1, 0])


@pytest.mark.parametrize(
    ("args", "pattern"),
    [
        (([0], [4], [0]), r"slice1: strides\[0\] must be nonzero; got strides\[0\]=0 \(input shape \(4,\)\)\."),
        (([1], [4], [1]), r"sizes\[0\] must keep the window inside the input: offsets\[0\] \+ sizes\[0\] <= 4; got"),
        (([0], [0], [1]), r"sizes\[0\] must be >= 1 \(a non-empty window\); got sizes\[0\]=0"),
        (([-1], [2], [1]), r"offsets\[0\] must be >= 0; got offsets\[0\]=-1"),
        (([0, 0], [1, 1], [1, 1]), r"offsets must have one entry per dimension \(1\); got offsets=\(0, 0\)"),
        (([0], [4], [2], [3]), r"output_sizes\[0\] must be in \[1, 2\] .*; got output_sizes\[0\]=3"),
        (([0], [4], [2], [0]), r"output_sizes\[0\]=0"),
        (([0], [4.0], [1]), r"sizes\[0\] must be a Python integer; got sizes\[0\]=4.0"),
        (([0], 4, [1]), r"sizes must be a sequence of integers; got sizes=4"),
    ],
)
def test_errors(args, pattern):
    with pytest.raises(ValidationError, match=pattern):
        dmljax.slice(jnp.zeros(4), *args)


def test_rank_errors():
    with pytest.raises(ValidationError, match=r"input.ndim must be in \[1, 8\]; got input.ndim=0"):
        dmljax.slice(jnp.zeros(()), [], [], [])
    with pytest.raises(ValidationError, match=r"input.ndim=9"):
        dmljax.slice(jnp.zeros((1,) * 9), [0] * 9, [1] * 9, [1] * 9)


def test_support_table():
    assert support_at(SLICE1_SUPPORT, FeatureLevel.FL_2_0) is None
    assert support_at(SLICE1_SUPPORT, FeatureLevel.FL_2_1).dims == (4, 5)
    assert support_at(SLICE1_SUPPORT, FeatureLevel.FL_3_0).dims == (1, 8)
    assert DataType.FLOAT64 in support_at(SLICE1_SUPPORT, FeatureLevel.FL_4_1).data_types
