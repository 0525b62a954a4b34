"""DML_RANDOM_GENERATOR_OPERATOR_DESC: Philox 4x32-10 bits and explicit state.

DirectML: https://learn.microsoft.com/en-us/windows/win32/api/directml/ns-directml-dml_random_generator_operator_desc.

The state is data, not a descriptor: a uint32 array of six words, ``(c0, c1, c2, c3, k0,
k1)``: a 128-bit counter, word 0 least significant, then the 64-bit key. Each call
returns the bits and the next state, whose counter has moved past every block used.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.sharding import NamedSharding

from dmljax._core.errors import fail
from dmljax._core.limits import MAX_DIMENSIONS, MAX_TENSOR_ELEMENTS
from dmljax._core.markers import mark
from dmljax._random import philox, shard_local, vector_width
from dmljax._random.checks import check_static

__all__ = ["STATE_WORDS", "make_state", "random_generator", "random_generator_validated"]

# DML_RANDOM_GENERATOR: the PHILOX_4X32_10 state is six UINT32 values, a 128-bit counter then a 64-bit key.
STATE_WORDS = 6


def make_state(
    seed: int | jax.typing.ArrayLike, counter: int | jax.typing.ArrayLike = 0, *, ndim: int = 1
) -> jax.Array:
    """A Philox state from a 64-bit seed used as the key, and a 128-bit counter.

    The key is ``(k0, k1) = (seed & 0xFFFFFFFF, seed >> 32)``; TensorFlow's stateless
    Philox calls the same key ``uint64 k0 | k1 << 32``. Counter words go least
    significant first. The state is a plain function of its arguments, so ``make_state``
    works under `jit` and `vmap` with a traced ``seed`` or ``counter``.

    Values, seed and counter alike:

    - Python or NumPy integers (and NumPy integer arrays of shape ``()``) are exact at
      any width, whatever the x64 setting, and checked: ``seed`` in [0, 2^64),
      ``counter`` in [0, 2^128).
    - A JAX integer scalar (traced or not) is taken by its bits: a 32-bit one fills the
      low word (``k1 = 0``), a 64-bit one (x64) the low two words; a negative value
      stands for its two's complement in its own width (``int32 -1`` is ``0xFFFFFFFF``).
    - The words themselves: ``seed`` as uint32[2] ``(k0, k1)``, ``counter`` as uint32[4].

    Args:
      seed: the key, as above.
      counter: the first block's counter (usually 0), as above.
      ndim: dimensions of the state, 1 to 8: ``ndim=4`` gives DirectML 3.0's ``{1,1,1,6}``.

    Returns:
      uint32 array of shape ``(1,) * (ndim - 1) + (6,)``.

    Raises:
      TypeError: an array ``seed`` or ``counter`` of a non-integer dtype, or word arrays not uint32.
      dmljax.ValidationError: ``seed``, ``counter`` or ``ndim`` out of range, not an int or
        of the wrong shape.

    Examples:
      >>> make_state(2**32 + 7, counter=5)
      Array([5, 0, 0, 0, 7, 1], dtype=uint32)
      >>> make_state(0, ndim=4).shape
      (1, 1, 1, 6)
      >>> jax.jit(make_state)(jnp.uint32(9))  # a traced seed
      Array([0, 0, 0, 0, 9, 0], dtype=uint32)
      >>> jax.vmap(make_state)(jnp.arange(3, dtype=jnp.uint32))[:, 4]
      Array([0, 1, 2], dtype=uint32)
    """
    if isinstance(ndim, bool) or not isinstance(ndim, int) or not 1 <= ndim <= MAX_DIMENSIONS:
        raise fail("make_state", "ndim", f"be an int in [1, {MAX_DIMENSIONS}]", ndim)
    counter_words = to_words("make_state", "counter", counter, 4)
    key_words = to_words("make_state", "seed", seed, 2)
    shape = (1,) * (ndim - 1) + (STATE_WORDS,)
    if isinstance(counter_words, np.ndarray) and isinstance(key_words, np.ndarray):
        return jnp.asarray(np.concatenate([counter_words, key_words]).reshape(shape))
    return jnp.concatenate([jnp.asarray(counter_words), jnp.asarray(key_words)]).reshape(shape)


def _host_int(value: Any) -> int | None:
    """``value`` as a Python int when it is a host integer (Python, NumPy scalar or 0-d array), else None."""
    if isinstance(value, bool | np.bool_):
        return None
    if isinstance(value, int | np.integer):
        return int(value)
    if isinstance(value, np.ndarray) and value.shape == () and np.issubdtype(value.dtype, np.integer):
        return int(value)
    return None


def to_words(op: str, name: str, value: Any, n_words: int) -> np.ndarray | jax.Array:
    """An unsigned integer of ``32 * n_words`` bits as uint32 words, least significant first.

    Host integers (Python, NumPy) are exact and range-checked and give a NumPy array;
    a JAX integer scalar gives its two's-complement bits (zero-extended past its width);
    a uint32[n_words] array is the words themselves. See `make_state`.
    """
    bits = 32 * n_words
    rule = f"be an int in [0, 2**{bits}), an integer scalar array or uint32[{n_words}]"
    number = _host_int(value)
    if number is not None:
        if not 0 <= number < 2**bits:
            raise fail(op, name, rule, value)
        return np.array([(number >> (32 * i)) & 0xFFFFFFFF for i in range(n_words)], np.uint32)
    if not isinstance(value, np.ndarray | jax.Array):
        raise fail(op, name, rule, value)
    if value.shape == (n_words,):
        if value.dtype != np.uint32:
            raise TypeError(f"{op}: {name} words must be uint32; got {name}.dtype={value.dtype} ({rule}).")
        return value.copy() if isinstance(value, np.ndarray) else value
    if value.shape != ():
        raise fail(op, f"{name}.shape", f"be () (an integer) or ({n_words},) (uint32 words)", value.shape)
    if isinstance(value, np.ndarray) or not jnp.issubdtype(value.dtype, jnp.integer):
        raise TypeError(f"{op}: {name} must have an integer dtype; got {name}.dtype={value.dtype} ({rule}).")
    unsigned = lax.bitcast_convert_type(value, jnp.dtype(f"uint{8 * value.dtype.itemsize}"))
    words = [unsigned.astype(jnp.uint32)]
    if value.dtype.itemsize == 8:
        words.append((unsigned >> np.uint64(32)).astype(jnp.uint32))
    words += [jnp.zeros((), jnp.uint32)] * (n_words - len(words))
    return jnp.stack(words[:n_words])


def check_state(op: str, state: Any) -> jax.Array:
    """Validate a state (uint32, 6 words, leading 1s, at most 8 dims) and return it as an array."""
    dtype = getattr(state, "dtype", None)
    if dtype is not None and jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key):
        raise TypeError(
            f"{op}: state must be a uint32[6] Philox state, not a jax.random key; got state.dtype={dtype} "
            f"(state shape {state.shape}; a dmljax.random.prng_impl key's state is jax.random.key_data(key), "
            "else use make_state)."
        )
    if dtype is None or not hasattr(state, "shape"):
        raise TypeError(f"{op}: state must be a uint32 array of 6 words; got state={state!r} (see make_state).")
    if state.dtype != np.uint32:
        raise TypeError(f"{op}: state must be uint32; got state.dtype={state.dtype} (state shape {state.shape}).")
    shape = tuple(state.shape)
    if not 1 <= len(shape) <= MAX_DIMENSIONS or shape[-1] != STATE_WORDS or any(d != 1 for d in shape[:-1]):
        rule = f"have shape (6,) or (1, ..., 1, 6) with at most {MAX_DIMENSIONS} dimensions"
        context = "DirectML's state is {1,1,1,6}; vmap for a batch of states"
        if shape and shape[-1] in (2, 4):
            context += (
                "; a raw jax.random key is no state: use make_state, or key_data of a dmljax.random.prng_impl key"
            )
        raise fail(op, "state.shape", rule, shape, context)
    return jnp.asarray(state)


def check_output_shape(op: str, shape: Any) -> tuple[int, ...]:
    """Validate an output shape: 1 to 8 positive dimensions, at most 2^32 - 1 elements.

    A `jax.export` symbolic size is kept (it is at least 1); the element limit is then
    checked only where the product is a known int.
    """
    if isinstance(shape, int | np.integer) and not isinstance(shape, bool):
        shape = (shape,)
    try:
        dims = tuple(shape)
    except TypeError:
        raise fail(op, "shape", "be a tuple of ints", shape) from None
    check_static(op, shape, dims)
    if not all(jax.export.is_symbolic_dim(d) or _is_int(d) for d in dims):
        raise fail(op, "shape", "be a tuple of ints", shape)
    dims = tuple(d if jax.export.is_symbolic_dim(d) else int(d) for d in dims)
    if not 1 <= len(dims) <= MAX_DIMENSIONS:
        raise fail(op, "shape", f"have 1 to {MAX_DIMENSIONS} dimensions", dims)
    if any(isinstance(d, int) and d < 1 for d in dims):
        raise fail(op, "shape", "have positive sizes", dims)
    if isinstance(math.prod(dims), int) and math.prod(dims) > MAX_TENSOR_ELEMENTS:
        raise fail(op, "shape", "have at most 2**32 - 1 elements", dims, f"{math.prod(dims)} elements")
    return dims


def _is_int(d: Any) -> bool:
    return isinstance(d, int | np.integer) and not isinstance(d, bool)


def split_state(state: jax.Array) -> tuple[tuple[jax.Array, ...], tuple[jax.Array, ...]]:
    """The counter words (c0..c3) and key words (k0, k1) of a (6,)-shaped state."""
    words = tuple(state[i] for i in range(STATE_WORDS))
    return words[:4], words[4:]


def advance_state(state: jax.Array, blocks: Any) -> jax.Array:
    """The state with its counter moved on by ``blocks`` (carrying, mod 2^128), key unchanged.

    Unchecked (the public, validating function is `dmljax.random.advance`): ``state`` is a state
    array of any leading 1s, ``blocks`` a Python int in [0, 2^128) or a JAX unsigned
    integer scalar (traced or not).
    """
    counter, key = split_state(state.reshape(STATE_WORDS))
    if isinstance(blocks, int | np.integer):
        offset = tuple(np.uint32((int(blocks) >> (32 * i)) & 0xFFFFFFFF) for i in range(4))
    else:
        offset = tuple(to_words("advance", "blocks", blocks, 4))
    return jnp.stack([*add_words(counter, offset), *key]).reshape(state.shape)


def add_words(a: tuple[Any, ...], b: tuple[Any, ...]) -> tuple[jax.Array, ...]:
    """The sum of two unsigned integers given as equally many uint32 words (least significant first), wrapped.

    Examples:
      >>> ones = (np.uint32(0xFFFFFFFF),) * 4
      >>> [int(w) for w in add_words(ones, (np.uint32(2), np.uint32(0), np.uint32(1), np.uint32(0)))]
      [1, 0, 1, 0]
    """
    carry = jnp.zeros((), jnp.uint32)
    words = []
    for x, y in zip(a, b, strict=True):
        partial = jnp.asarray(x, jnp.uint32) + jnp.asarray(y, jnp.uint32)
        total = partial + carry
        carry = ((partial < jnp.asarray(y, jnp.uint32)) | (total < carry)).astype(jnp.uint32)
        words.append(total)
    return tuple(words)


def random_generator(
    state: jax.typing.ArrayLike, shape: Sequence[int], *, out_sharding: NamedSharding | None = None
) -> tuple[jax.Array, jax.Array]:
    """DML_RANDOM_GENERATOR with PHILOX_4X32_10: uniform uint32 bits and the next state.

    Element ``n`` of ``bits`` (row-major) is word ``n % 4`` of
    ``philox4x32_10(counter + n // 4, key)``, the 128-bit addition carrying and wrapping
    modulo 2^128; the next state's counter is ``counter + ceil(n_elements / 4)`` and its
    key is unchanged, so chaining calls never reuses a block and equals one long call.
    This is also TensorFlow's stateless Philox stream (``StatelessRandomUniformFullIntV2``
    with ``alg=1``, key ``k0 | k1 << 32``). The function is pure: the same state gives
    the same bits under `jit`, `vmap` (a batch of states) and any
    sharding. Each device computes only its own blocks: under a sharding that XLA's
    partitioner gives it (all the work is elementwise in the leading axes) or, for any
    sharding, including a device slice of the last axis that cuts a block, when
    ``out_sharding`` is given. Not cryptographically secure.

    The worked example of Microsoft's DML_RANDOM_GENERATOR_OPERATOR_DESC page prints the
    wrong next counter: ``0x48656c6c'6f46726f'6d536561'74746c65`` plus 324,855 blocks is
    ``...'7479615c``, not ``...'746f776e`` (which is the counter minus 324,855). dmljax
    follows the rule, and tests it.

    Args:
      state: uint32[6], or ``(1, ..., 1, 6)`` up to 8 dimensions (DirectML's ``{1,1,1,6}``).
      shape: the output shape, 1 to 8 positive dimensions, at most 2^32 - 1 elements
        (`jax.export` symbolic sizes allowed; their product is not checked).
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
    shape = check_output_shape("random_generator", shape)
    out_sharding = shard_local.check_out_sharding("random_generator", out_sharding, shape)
    values, new_state = vector_width.call(_random_generator, _random_generator_wide, state, shape, out_sharding)
    return mark(values, state, op="random_generator"), new_state


def random_generator_validated(state: jax.Array, shape: tuple[int, ...]) -> tuple[jax.Array, jax.Array]:
    """`random_generator`'s trace of a state and shape the descriptor layer validated: no checks."""
    values, new_state = vector_width.call(_random_generator, _random_generator_wide, state, shape, None)
    return mark(values, state, op="random_generator"), new_state


def _random_generator_fn(
    state: jax.Array, shape: tuple[int, ...], out_sharding: NamedSharding | None = None
) -> tuple[jax.Array, jax.Array]:
    bits = shard_local.generate(state, shape, out_sharding=out_sharding)
    size = math.prod(shape)
    if isinstance(size, int):
        return bits, advance_state(state, philox.num_blocks(size))
    # A `jax.export` symbolic size: the block count ceil(size / 4) is a traced value.
    return bits, advance_state(state, jnp.asarray((size + 3) // 4, jnp.uint32))


# The plain twin, and the one compiled with 512-bit vectors for eager calls on AVX-512 CPUs (`_vector_width`).
_random_generator, _random_generator_wide = vector_width.twin_jit(_random_generator_fn, static_argnums=(1, 2))
