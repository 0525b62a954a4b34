"""tile, join, split_tensor (DML_TILE, DML_JOIN, DML_SPLIT): loop oracles, transforms, errors."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

import dmljax
from dmljax import ValidationError
from tests import reference

DTYPES = ["float32", "float16", "int8", "uint32", "bool", "bfloat16"]


def random_data(rng, shape, dtype):
    return (rng.standard_normal(shape) * 10).astype(jnp.dtype(dtype))


@pytest.mark.parametrize("seed", range(6))
def test_tile_against_oracle(seed):
    rng = np.random.default_rng(seed)
    rank = [1, 2, 3, 4, 5, 8][seed]
    shape = tuple(int(s) for s in rng.integers(1, 4 if rank < 5 else 2, rank))
    repeats = [int(r) for r in rng.integers(1, 4 if rank < 5 else 2, rank)]
    data = random_data(rng, shape, DTYPES[seed])
    out = dmljax.tile(data, repeats)
    assert out.dtype == data.dtype
    np.testing.assert_array_equal(np.asarray(out), reference.tile(data, repeats))


@pytest.mark.parametrize("seed", range(6))
def test_join_and_split_against_oracle(seed):
    rng = np.random.default_rng(seed)
    rank = [1, 2, 3, 4, 5, 8][seed]
    shape = [int(s) for s in rng.integers(1, 4 if rank < 5 else 2, rank)]
    axis = int(rng.integers(-rank, rank))
    sizes = [int(s) for s in rng.integers(1, 4, int(rng.integers(1, 4)))]
    inputs = []
    for size in sizes:
        shape[axis] = size
        inputs.append(random_data(rng, tuple(shape), DTYPES[seed]))
    joined = dmljax.concatenate(inputs, axis)
    np.testing.assert_array_equal(np.asarray(joined), reference.join(inputs, axis % rank))
    pieces = dmljax.split_tensor(joined, sizes, axis)
    assert len(pieces) == len(sizes)
    for piece, expected in zip(pieces, reference.split_tensor(np.asarray(joined), sizes, axis % rank), strict=True):
        assert piece.dtype == joined.dtype
        np.testing.assert_array_equal(np.asarray(piece), expected)


def test_64bit_under_x64(x64):
    data = np.arange(6, dtype=np.int64).reshape(2, 3) * 2**40
    np.testing.assert_array_equal(dmljax.tile(data, [2, 1]), reference.tile(data, [2, 1]))
    a, b = dmljax.split_tensor(data, [1, 2], axis=1)
    assert a.dtype == jnp.int64
    np.testing.assert_array_equal(dmljax.concatenate([a, b], 1), data)


def test_jit_vmap_and_grads():
    x = jnp.linspace(-1.0, 1.0, 12).reshape(2, 2, 3)
    tile = jax.jit(lambda v: dmljax.tile(v, [2, 3]))
    np.testing.assert_array_equal(jax.vmap(tile)(x), np.stack([reference.tile(np.asarray(v), [2, 3]) for v in x]))
    split = jax.jit(lambda v: dmljax.split_tensor(v, [1, 2], axis=-1))
    loop = [reference.split_tensor(np.asarray(v), [1, 2], 1) for v in x]
    for k, got in enumerate(jax.vmap(split)(x)):
        np.testing.assert_array_equal(got, np.stack([pieces[k] for pieces in loop]))
    check_grads(lambda v: dmljax.tile(v, [2, 2, 1]), (x,), order=1, modes=["fwd", "rev"])
    check_grads(lambda v, w: dmljax.concatenate([v, w, v], 1), (x, x[:, :1]), order=1, modes=["fwd", "rev"])
    check_grads(lambda v: dmljax.split_tensor(v, [2, 1], 2), (x,), order=1, modes=["fwd", "rev"])


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: dmljax.tile(np.ones((2, 2)), [1, 0]), ValidationError, r"tile: repeats\[1\] must be in \[1, .*=0"),
        (lambda: dmljax.tile(np.ones((2, 2)), [1]), ValidationError, r"repeats must have one entry per dimension"),
        (lambda: dmljax.concatenate([], 0), ValidationError, r"join: inputs must be a non-empty sequence"),
        (lambda: dmljax.concatenate([np.ones((2, 2)), np.ones((3, 3))], 0), ValidationError,
         r"join: inputs\[1\]\.shape\[1\] must equal inputs\[0\]\.shape\[1\] \(2\); got .*=3"),
        (lambda: dmljax.concatenate([np.ones(2), np.ones((1, 2))], 0), ValidationError,
         r"inputs\[1\]\.ndim must equal"),
        (lambda: dmljax.concatenate([np.ones(2, np.float32), np.ones(2, np.int32)], 0), TypeError,
         r"join: inputs\[1\]\.dtype must equal inputs\[0\]\.dtype \(float32\)"),
        (lambda: dmljax.concatenate([np.ones(2)], 1), ValidationError, r"join: axis must be in \[-1, 1\); got axis=1"),
        (lambda: dmljax.split_tensor(np.ones(5), [2, 2], 0), ValidationError,
         r"split_tensor: sizes must be non-empty and add up to input\.shape\[0\] \(5\); got sizes=\(2, 2\)"),
        (lambda: dmljax.split_tensor(np.ones(5), [5, 0], 0), ValidationError, r"sizes\[1\] must be in \[1, "),
    ],
)  # fmt: skip
def test_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()
