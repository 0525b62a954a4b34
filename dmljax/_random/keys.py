"""Deriving states the way JAX users handle keys: `split`, `fold_in`, and `advance` by a traced count.

A state is a 128-bit counter and a 64-bit key (`dmljax.random.make_state`); its stream is the
blocks ``philox4x32_10(counter + i, key)``, i = 0, 1, ... A *block* below is one
``(counter, key)`` input of Philox: two streams can repeat each other's numbers only if
they use the same block, and distinct keys never do.

Counter offsets are not independent streams. ``state.at[0].set(i)`` gives example ``i``
the blocks ``i, i + 1, ...`` of one key, so examples 0 and 1 share every block but one:
their dropout masks are the same words shifted by four. Offsets are safe only when each
one is at least as far from the next as the blocks it uses (`advance` by
``i * blocks_per_shard``); `split` and `fold_in` give new keys and have no such rule.

How a child is derived from the whole parent state ``(c, k)`` and a 32-bit value ``d``
(the child's index for `split`, the data for `fold_in`), with two Philox blocks:

1. ``h = philox4x32_10(c, k ^ DERIVE_KEY_TWEAK)``: the parent's counter under a key that
   differs from the parent's, so ``h`` is none of the words the parent's stream emits;
   for one key, Philox is a bijection of the counter, so states that differ only in
   their counter (a state and the same state a few blocks on) get different ``h``.
2. ``g = philox4x32_10((d, tag, h2, h3), (h0, h1))`` with ``tag`` 1 for `split`, 2 for
   `fold_in`; child key ``(g0, g1)``, child counter ``(0, 0, g2, g3)``.

Siblings share no block unless one of them draws 2^64 blocks; the keys of a parent and a
child, or of children of different states, are equal with probability 2^-64. The argument,
and why not counter offsets: docs/design/key-derivation.md.

TensorFlow's ``StatelessRandomGetKeyCounter`` derives (key, counter) the same way, with
one block (`dmljax.random.state_from_tf_seed`). None of this is cryptographically secure.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from dmljax._core.errors import fail
from dmljax._core.limits import UINT32_MAX
from dmljax._random.generator import STATE_WORDS, advance_state, check_state, to_words
from dmljax._random.philox import philox4x32_10

__all__ = ["advance", "fold_in", "split", "derive"]

# ASCII "dmlj", "axky": an arbitrary constant XORed into the parent key for step 1 (module
# docstring), so that deriving keys uses Philox permutations other than the parent stream's.
DERIVE_KEY_TWEAK = (np.uint32(0x646D6C6A), np.uint32(0x61786B79))
# Word 1 of step 2's counter: separates `split`'s children from `fold_in`'s.
SPLIT_TAG = np.uint32(1)
FOLD_IN_TAG = np.uint32(2)


def derive(state: jax.Array, data: jax.Array, tag: np.uint32) -> jax.Array:
    """Children states, uint32[*data.shape, 6], of a (6,)-shaped ``state`` and uint32 ``data`` (module docstring)."""
    state = state.reshape(STATE_WORDS)
    tweaked = state[4:] ^ jnp.array(DERIVE_KEY_TWEAK, jnp.uint32)
    h = philox4x32_10(state[:4], tweaked)
    data = jnp.asarray(data, jnp.uint32)
    words = (data, jnp.full(data.shape, tag, jnp.uint32), *(jnp.broadcast_to(h[i], data.shape) for i in (2, 3)))
    g = philox4x32_10(jnp.stack(words, axis=-1), h[:2])
    zero = jnp.zeros(data.shape, jnp.uint32)
    return jnp.stack([zero, zero, g[..., 2], g[..., 3], g[..., 0], g[..., 1]], axis=-1)


def split(state: jax.typing.ArrayLike, num: int = 2) -> jax.Array:
    """``num`` new states from ``state``, none sharing a block with another, the parent or its near relatives.

    Child ``i`` is derived from the whole parent (counter and key) and ``i`` with two
    Philox blocks (``h = philox(c, k ^ tweak)``, then ``g = philox((i, 1, h2, h3), (h0, h1))``;
    child key ``(g0, g1)``, counter ``(0, 0, g2, g3)``): key and counter come from the
    hash, so children of a state and of the same state a few blocks on differ too.
    ``jax.random.split`` on a `dmljax.random.prng_impl` key gives the same states. Use this,
    not counter offsets, for per-example or per-layer streams.

    Args:
      state: uint32[6], or ``(1, ..., 1, 6)``; `vmap` for a batch of states.
      num: how many children, a static int in [1, 2^32 - 1].

    Returns:
      uint32[num, 6]: one state per row (the leading 1s of ``state`` are dropped).

    Raises:
      TypeError: ``state`` is not a uint32 array (a `jax.random` key: use `jax.random.key_data`).
      dmljax.ValidationError: bad ``state`` shape, or ``num`` not a static int >= 1.

    Examples:
      >>> from dmljax.random import make_state
      >>> children = split(make_state(0), 3)
      >>> children.shape, children.dtype
      ((3, 6), dtype('uint32'))
      >>> bool(jnp.all(children[0] == jax.jit(split, static_argnums=1)(make_state(0), 3)[0]))
      True
    """
    state = check_state("split", state)
    if isinstance(num, jax.core.Tracer):
        raise fail("split", "num", "be static (mark it static: jax.jit(..., static_argnums=...))", num)
    if isinstance(num, bool) or not isinstance(num, int | np.integer) or not 1 <= num <= UINT32_MAX:
        raise fail("split", "num", f"be an int in [1, {UINT32_MAX}]", num, f"state shape {state.shape}")
    return _split(state, int(num))


@functools.partial(jax.jit, static_argnums=1)
def _split(state: jax.Array, num: int) -> jax.Array:
    return derive(state, jnp.arange(num, dtype=jnp.uint32), SPLIT_TAG)


def fold_in(state: jax.typing.ArrayLike, data: jax.typing.ArrayLike) -> jax.Array:
    """A new state from ``state`` and a 32-bit value ``data``, as `split`'s children but tagged apart.

    ``fold_in(state, d)`` differs from ``split(state, n)[d]`` and from ``fold_in(state,
    e)`` for ``e != d``; all are derived from the whole state (module docstring).
    ``jax.random.fold_in`` on a `dmljax.random.prng_impl` key gives the same state.

    Args:
      state: uint32[6], or ``(1, ..., 1, 6)`` (the result has the same shape).
      data: a Python int in [0, 2^32), or an integer scalar array or NumPy integer
        scalar (``np.int64(-1)`` as ``np.array(-1)``; traced allowed), taken modulo 2^32
        as ``jax.random.fold_in`` does: a step, an example index.

    Returns:
      the new state, shaped like ``state``.

    Raises:
      TypeError: ``state`` is not a uint32 array, or ``data`` is an array of another dtype.
      dmljax.ValidationError: bad ``state`` shape, ``data`` out of range or not a scalar.

    Examples:
      >>> from dmljax.random import make_state
      >>> step_state = jax.jit(fold_in)(make_state(7), jnp.int32(1000))
      >>> bool(jnp.all(step_state == fold_in(make_state(7), 1000)))
      True
    """
    state = check_state("fold_in", state)
    if (
        isinstance(data, jax.Array | np.ndarray | np.generic)
        and data.shape == ()
        and jnp.issubdtype(data.dtype, jnp.integer)
    ):
        # NumPy integer scalars as 0-d arrays: modulo 2^32
        word = jnp.asarray(data).astype(jnp.uint32)
    else:
        word = jnp.asarray(to_words("fold_in", "data", data, 1)[0])
    return _fold_in(state, word)


@jax.jit
def _fold_in(state: jax.Array, data: jax.Array) -> jax.Array:
    return derive(state, data, FOLD_IN_TAG).reshape(state.shape)


def advance(state: jax.typing.ArrayLike, blocks: int | jax.typing.ArrayLike) -> jax.Array:
    """The state whose counter is ``counter + blocks`` (carrying through 128 bits, wrapping), key unchanged.

    `random_generator` returns ``advance(state, ceil(n / 4))`` after ``n`` words. Moving a
    state on by whole streams is how to give shards or steps disjoint windows of one
    stream: shard ``i`` of a `shard_map` starts at ``advance(state, i * blocks_per_shard)``
    and uses at most ``blocks_per_shard`` blocks. (Mere offsets closer than that overlap:
    see `split`.)

    Args:
      state: uint32[6], or ``(1, ..., 1, 6)`` (the result has the same shape).
      blocks: a Python int in [0, 2^128), a JAX unsigned integer scalar (traced allowed;
        uint64 with x64), or the count's uint32[4] words (least significant first).

    Returns:
      the moved state.

    Raises:
      TypeError: ``state`` is not a uint32 array, or ``blocks`` is an array of a signed or non-integer dtype.
      dmljax.ValidationError: bad ``state`` shape, or ``blocks`` negative, too large or not a scalar.

    Examples:
      >>> from dmljax.random import make_state
      >>> advance(make_state(3, counter=2**32 - 1), 2)
      Array([1, 1, 0, 0, 3, 0], dtype=uint32)
      >>> jax.jit(advance)(make_state(3), jnp.uint32(5))
      Array([5, 0, 0, 0, 3, 0], dtype=uint32)
    """
    state = check_state("advance", state)
    if isinstance(blocks, jax.Array) and blocks.shape == () and jnp.issubdtype(blocks.dtype, jnp.signedinteger):
        rule = "be a Python int or an unsigned integer array (a count of blocks is never negative)"
        got = f"blocks.dtype={blocks.dtype} (cast: blocks.astype(jnp.uint32))"
        raise TypeError(f"advance: blocks must {rule}; got {got}.")
    offset = to_words("advance", "blocks", blocks, 4)
    return _advance_jit(state, jnp.asarray(offset))


@jax.jit
def _advance_jit(state: jax.Array, offset: jax.Array) -> jax.Array:
    return advance_state(state, offset)
