"""slice_grad (DML_SLICE_GRAD): Slice1's adjoint, against the loop oracle and jax.vjp of slice1."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

import dmljax
from dmljax import ValidationError
from tests import reference
from tests.test_slice import random_window


def test_by_hand_negative_stride():
    out = dmljax.slice_grad(np.array([[1.0, 2.0]], np.float32), [2, 5], [1, 0], [1, 4], [1, -2])
    np.testing.assert_array_equal(out, [[0, 0, 0, 0, 0], [0, 2, 0, 1, 0]])


@pytest.mark.parametrize("seed", range(12))
def test_random_against_oracle_and_slice1_vjp(seed):
    rng = np.random.default_rng(seed)
    rank = [1, 2, 3, 4, 5, 8][seed % 6]
    shape = tuple(int(s) for s in rng.integers(1, 7 if rank < 5 else 3, rank))
    offsets, sizes, strides, outs = random_window(rng, shape)
    dtype = ["float32", "float16", "int8", "uint32", "bool", "bfloat16"][seed % 6]
    grad = (rng.standard_normal(outs) * 10).astype(jnp.dtype(dtype))
    out = dmljax.slice_grad(grad, shape, offsets, sizes, strides)
    assert out.dtype == grad.dtype and out.shape == shape
    np.testing.assert_array_equal(np.asarray(out), reference.slice_grad(grad, shape, offsets, sizes, strides))
    if dtype in ("float32", "float16"):
        _, vjp = jax.vjp(lambda x: dmljax.slice(x, offsets, sizes, strides, outs), jnp.zeros(shape, dtype))
        np.testing.assert_array_equal(vjp(jnp.asarray(grad))[0], out)


def test_jit_vmap_grad():
    g = jnp.linspace(-1.0, 1.0, 12).reshape(3, 2, 2)
    fn = jax.jit(lambda v: dmljax.slice_grad(v, [4, 6], [0, 1], [4, 5], [-2, 3]))
    loop = np.stack([reference.slice_grad(np.asarray(v), [4, 6], [0, 1], [4, 5], [-2, 3]) for v in g])
    np.testing.assert_array_equal(jax.vmap(fn)(g), loop)
    check_grads(fn, (g[0],), order=1, modes=["fwd", "rev"])


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (([2, 5], [1, 0], [1, 4], [1, 0]), r"slice_grad: strides\[1\] must be nonzero; got strides\[1\]=0"),
        (([2, 5], [1, 2], [1, 4], [1, 1]), r"sizes\[1\] must keep the window inside the input: offsets\[1\] \+ sizes"),
        (([2, 5], [1, 0], [1, 2], [1, 2]), r"input_gradient\.shape\[1\] must be in \[1, 1\]"),
        (([2], [1, 0], [1, 4], [1, 1]), r"output_shape must have one entry per dimension \(2\)"),
    ],
)
def test_errors(args, match):
    with pytest.raises(ValidationError, match=match):
        dmljax.slice_grad(np.ones((1, 2), np.float32), *args)
