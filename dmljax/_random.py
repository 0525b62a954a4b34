"""DML_RANDOM_GENERATOR_OPERATOR_DESC (SPEC §4, seed 003): Philox 4x32-10 bits and explicit state.

The state is data, not a descriptor: a uint32 array of six words, ``(c0, c1, c2, c3, k0,
k1)``: a 128-bit counter, word 0 least significant, then the 64-bit key. Each call
returns the bits and the next state, whose counter has moved past every block used.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding

from dmljax import _philox, _shard_local
from dmljax._dtypes import DataType
from dmljax._errors import fail
from dmljax._feature_levels import FeatureLevel
from dmljax._tensor_desc import MAX_DIMENSIONS

__all__ = ["RANDOM_GENERATOR_SUPPORT", "RandomGeneratorSupport", "make_state", "random_generator"]

# Seed 003: the PHILOX_4X32_10 state is six UINT32 values, a 128-bit counter then a 64-bit key.
STATE_WORDS = 6
# Seed 003 (OutputTensor sizes are UINT32, and the element count must fit one): at most 2^32 - 1 outputs.
MAX_OUTPUT_ELEMENTS = 2**32 - 1


@dataclasses.dataclass(frozen=True)
class RandomGeneratorSupport:
    """What DML_RANDOM_GENERATOR accepts from one feature level on (seed 003, "Tensor support").

    Attributes:
      state_dimension_counts: allowed DimensionCount of InputStateTensor and
        OutputStateTensor; their sizes are 1 in every dimension but the last, which is 6.
      output_dimension_counts: allowed DimensionCount of OutputTensor (any sizes).
      data_types: the one data type of all three tensors.
    """

    state_dimension_counts: tuple[int, ...]
    output_dimension_counts: tuple[int, ...]
    data_types: tuple[DataType, ...] = (DataType.UINT32,)


# Seed 003, "Tensor support": {1,1,1,6} and 4-D outputs at 3.0; 1 to 8 dimensions from 4.0.
RANDOM_GENERATOR_SUPPORT: dict[FeatureLevel, RandomGeneratorSupport] = {
    FeatureLevel.FL_3_0: RandomGeneratorSupport(state_dimension_counts=(4,), output_dimension_counts=(4,)),
    FeatureLevel.FL_4_0: RandomGeneratorSupport(
        state_dimension_counts=tuple(range(1, MAX_DIMENSIONS + 1)),
        output_dimension_counts=tuple(range(1, MAX_DIMENSIONS + 1)),
    ),
}


def make_state(seed: int, counter: int = 0, *, ndim: int = 1) -> jax.Array:
    """A Philox state from a 64-bit seed used as the key, and a 128-bit counter.

    The key is ``(k0, k1) = (seed & 0xFFFFFFFF, seed >> 32)``; TensorFlow's stateless
    Philox calls the same key ``uint64 k0 | k1 << 32``. Counter words go least
    significant first.

    Args:
      seed: Python int in [0, 2^64): the key.
      counter: Python int in [0, 2^128): the first block's counter (usually 0).
      ndim: dimensions of the state, 1 to 8: ``ndim=4`` gives DirectML 3.0's ``{1,1,1,6}``.

    Returns:
      uint32 array of shape ``(1,) * (ndim - 1) + (6,)``.

    Raises:
      dmljax.ValidationError: ``seed``, ``counter`` or ``ndim`` out of range or not an int.

    Examples:
      >>> make_state(2**32 + 7, counter=5)
      Array([5, 0, 0, 0, 7, 1], dtype=uint32)
      >>> make_state(0, ndim=4).shape
      (1, 1, 1, 6)
    """
    for name, value, bits in (("seed", seed, 64), ("counter", counter, 128)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or not 0 <= value < 2**bits:
            raise fail("make_state", name, f"be an int in [0, 2**{bits})", value)
    if isinstance(ndim, bool) or not isinstance(ndim, int) or not 1 <= ndim <= MAX_DIMENSIONS:
        raise fail("make_state", "ndim", f"be an int in [1, {MAX_DIMENSIONS}]", ndim)
    words = [(int(counter) >> (32 * i)) & 0xFFFFFFFF for i in range(4)]
    words += [int(seed) & 0xFFFFFFFF, int(seed) >> 32]
    return jnp.asarray(np.array(words, np.uint32).reshape((1,) * (ndim - 1) + (STATE_WORDS,)))


def check_state(op: str, state: Any) -> jax.Array:
    """Validate a state (uint32, 6 words, leading 1s, at most 8 dims) and return it as an array."""
    if not hasattr(state, "dtype") or not hasattr(state, "shape"):
        raise TypeError(f"{op}: state must be a uint32 array of 6 words; got state={state!r} (see make_state).")
    if state.dtype != np.uint32:
        raise TypeError(f"{op}: state must be uint32; got state.dtype={state.dtype} (state shape {state.shape}).")
    shape = tuple(state.shape)
    if not 1 <= len(shape) <= MAX_DIMENSIONS or shape[-1] != STATE_WORDS or any(d != 1 for d in shape[:-1]):
        rule = f"have shape (6,) or (1, ..., 1, 6) with at most {MAX_DIMENSIONS} dimensions"
        raise fail(op, "state.shape", rule, shape, "DirectML's state is {1,1,1,6}; vmap for a batch of states")
    return jnp.asarray(state)


def check_shape(op: str, shape: Any) -> tuple[int, ...]:
    """Validate an output shape: 1 to 8 positive dimensions, at most 2^32 - 1 elements."""
    if isinstance(shape, int | np.integer) and not isinstance(shape, bool):
        shape = (shape,)
    try:
        dims = tuple(shape)
    except TypeError:
        raise fail(op, "shape", "be a tuple of ints", shape) from None
    if not all(isinstance(d, int | np.integer) and not isinstance(d, bool) for d in dims):
        raise fail(op, "shape", "be a tuple of ints", shape)
    dims = tuple(int(d) for d in dims)
    if not 1 <= len(dims) <= MAX_DIMENSIONS:
        raise fail(op, "shape", f"have 1 to {MAX_DIMENSIONS} dimensions", dims)
    if any(d < 1 for d in dims):
        raise fail(op, "shape", "have positive sizes", dims)
    if math.prod(dims) > MAX_OUTPUT_ELEMENTS:
        raise fail(op, "shape", "have at most 2**32 - 1 elements", dims, f"{math.prod(dims)} elements")
    return dims


def split_state(state: jax.Array) -> tuple[tuple[jax.Array, ...], tuple[jax.Array, ...]]:
    """The counter words (c0..c3) and key words (k0, k1) of a (6,)-shaped state."""
    words = tuple(state[i] for i in range(STATE_WORDS))
    return words[:4], words[4:]


def advance(state: jax.Array, blocks: int) -> jax.Array:
    """The state with its counter moved on by ``blocks`` (carrying, mod 2^128), key unchanged."""
    counter, key = split_state(state.reshape(STATE_WORDS))
    moved = _philox.add_128(counter, np.uint32(blocks))
    return jnp.stack([*moved, *key]).reshape(state.shape)


def random_generator(
    state: jax.typing.ArrayLike, shape: Sequence[int], *, out_sharding: NamedSharding | None = None
) -> tuple[jax.Array, jax.Array]:
    """DML_RANDOM_GENERATOR with PHILOX_4X32_10: uniform uint32 bits and the next state.

    Element ``n`` of ``bits`` (row-major) is word ``n % 4`` of
    ``philox4x32_10(counter + n // 4, key)``, the 128-bit addition carrying and wrapping
    modulo 2^128; the next state's counter is ``counter + ceil(n_elements / 4)`` and its
    key is unchanged, so chaining calls never reuses a block and equals one long call.
    This is also TensorFlow's stateless Philox stream (SPEC §4). The function is pure:
    the same state gives the same bits under `jit`, `vmap` (a batch of states) and any
    sharding. Each device computes only its own blocks: under a sharding that XLA's
    partitioner gives it (all the work is elementwise in the leading axes) or, for any
    sharding, including a device slice of the last axis that cuts a block, when
    ``out_sharding`` is given. Not cryptographically secure.

    Seed 003's worked example prints the wrong next counter: ``0x48656c6c'6f46726f'
    6d536561'74746c65`` plus 324,855 blocks is ``...'7479615c``, not ``...'746f776e``
    (which is the counter minus 324,855). dmljax follows the rule, and tests it.

    Args:
      state: uint32[6], or ``(1, ..., 1, 6)`` up to 8 dimensions (DirectML's ``{1,1,1,6}``).
      shape: the output shape, 1 to 8 positive dimensions, at most 2^32 - 1 elements.
      out_sharding: optional `jax.sharding.NamedSharding` of ``bits``, as `jax.random`'s
        samplers take: each device then generates its own tile inside `jax.shard_map`
        with per-axis counters (no collectives; a state replicated on the mesh). Axes the
        mesh does not divide evenly are left to the partitioner.

    Returns:
      ``(bits, next_state)``: uint32 of ``shape``, and a state shaped like ``state``.

    Raises:
      TypeError: ``state`` is not a uint32 array.
      dmljax.ValidationError: ``state`` is not 6 words with leading 1s, ``shape`` is
        empty, not positive, over 8 dimensions or over 2^32 - 1 elements, or
        ``out_sharding`` is not a NamedSharding of at most ``len(shape)`` axes.

    Examples:
      >>> bits, state = random_generator(make_state(0), (2, 4))
      >>> [hex(int(b)) for b in bits[0]]
      ['0x6627e8d5', '0xe169c58d', '0xbc57ac4c', '0x9b00dbd8']
      >>> state
      Array([2, 0, 0, 0, 0, 0], dtype=uint32)
    """
    state = check_state("random_generator", state)
    shape = check_shape("random_generator", shape)
    out_sharding = _shard_local.check_out_sharding("random_generator", out_sharding, shape)
    return _random_generator(state, shape, out_sharding)


@functools.partial(jax.jit, static_argnums=(1, 2))
def _random_generator(
    state: jax.Array, shape: tuple[int, ...], out_sharding: NamedSharding | None = None
) -> tuple[jax.Array, jax.Array]:
    bits = _shard_local.generate(state, shape, out_sharding=out_sharding)
    return bits, advance(state, _philox.num_blocks(math.prod(shape)))
