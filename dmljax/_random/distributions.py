"""Distributions on the Philox stream of `random_generator`, with TensorFlow's word-to-value maps.

Every function takes a state and returns ``(value, next_state)``. The values come from
the same word stream as ``random_generator(state, ...)`` (word ``i`` is word ``i % 4``
of block ``counter + i // 4``) and use TensorFlow's conversions
(``tensorflow/core/lib/random/random_distributions{,_utils}.h``), which DirectML's
TensorFlow plugin uses too, so the same key and counter give the same uniform floats
and integers as TensorFlow's stateless Philox ops (https://www.tensorflow.org/api_docs/python/tf/random/stateless_uniform):

============  =====  ===============================================================
value         words  value ``i`` from the stream words ``w``
============  =====  ===============================================================
float32       1      ``bitcast_f32(0x3F800000 | (w[i] & 0x7FFFFF)) - 1`` (Uint32ToFloat)
float16       1      ``bitcast_f16(15 << 10 | (w[i] & 0x3FF)) - 1`` (Uint16ToHalf)
bfloat16      1      ``bitcast_bf16(127 << 7 | (w[i] & 0x7F)) - 1``
float64       2      ``bitcast_f64(1023 << 52 | (w[2i] & 0xFFFFF) << 32 | w[2i+1]) - 1``
normal f32    1      Box-Muller on ``(w[2j], w[2j+1])``: ``u1 = max(U(w[2j]), 1e-7)``,
                     ``v = 2 pi U(w[2j+1])`` in double, rounded to float32 once
                     (`dmljax._random.box_muller`), value ``2j = sin(v) r``,
                     ``2j+1 = cos(v) r``, ``r = sqrt(-2 log u1)``; float16/bfloat16
                     round the float32 result
normal f64    2      the same on ``(w[4j], w[4j+1])`` and ``(w[4j+2], w[4j+3])`` as doubles
int32/uint32  1      ``minval + w[i] % (maxval - minval)`` (modulo bias < range / 2^32)
int64/uint64  2      ``minval + (w[2i] | w[2i+1] << 32) % (maxval - minval)``
============  =====  ===============================================================

The next state skips ``ceil(words / 4)`` blocks, as TensorFlow's generator consumes them.
Each step runs in the precision TensorFlow runs it in (``minval``/``maxval`` and
``mean``/``stddev`` as a multiply and then an add, each rounded: `_multiply_add`), so
uniform floats, integers, dropout and float16/bfloat16/float64 normals match TensorFlow
bit for bit; float32 normals go through XLA's ``log``, ``sin`` and ``cos``, not the C
library's, and match in about 93% of values, the rest within 2 ulp of max(|x|, 1).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.sharding import NamedSharding

from dmljax._core.markers import mark
from dmljax._random import philox_layout, shard_local, vector_width
from dmljax._random.box_muller import box_muller, float32_angle
from dmljax._random.checks import (
    FLOATS,
    INTS,
    check_broadcast,
    check_dtype,
    check_int_bounds,
    check_probability,
    check_stream_shape,
)
from dmljax._random.generator import advance_state, check_state
from dmljax._random.philox import Words

__all__ = ["uniform", "normal", "bernoulli", "randint"]


def _generate(
    state: jax.Array, shape: tuple[int, ...], per_block: Callable[[Words], Words], out_sharding: Any
) -> tuple[jax.Array, jax.Array]:
    """Stream values of ``shape`` (value ``n`` is value ``n % v`` of block ``counter + n // v``) and the next state.

    ``per_block`` maps a block's four words to its ``v`` values. The values are computed
    in the output's own shape with per-axis counters (`shard_local.generate`); a scalar
    or empty shape uses one row of ``max(1, size)`` values. The state moves on by
    ``ceil(size / v)`` blocks.
    """
    size = math.prod(shape)
    v = philox_layout.values_per_block(per_block)
    if len(shape) and not (isinstance(size, int) and size == 0):
        values = shard_local.generate(state, shape, per_block, out_sharding)
    else:
        values = shard_local.generate(state, (1,), per_block)[:size].reshape(shape)
    blocks = (size + v - 1) // v
    if not isinstance(blocks, int):  # a `jax.export` symbolic size: the block count is a traced value
        blocks = jnp.asarray(blocks, jnp.uint32)
    return values, advance_state(state, blocks)


def _unit(w: jax.Array, dtype: np.dtype) -> jax.Array:
    """One word to [0, 1) in a float type of 32 bits or fewer (TensorFlow's Uint32ToFloat and kin)."""
    if dtype == jnp.float32:
        return lax.bitcast_convert_type(w & np.uint32(0x7FFFFF) | np.uint32(0x3F800000), jnp.float32) - 1
    mantissa, exponent = (0x3FF, 15 << 10) if dtype == jnp.float16 else (0x7F, 127 << 7)
    half = (w & np.uint32(mantissa) | np.uint32(exponent)).astype(jnp.uint16)
    return lax.bitcast_convert_type(half, dtype) - jnp.ones((), dtype)


def _unit64(hi: jax.Array, lo: jax.Array) -> jax.Array:
    """Two words to a double in [0, 1) (TensorFlow's Uint64ToDouble): 20 bits of ``hi``, all of ``lo``."""
    bits = (hi & np.uint32(0xFFFFF)).astype(jnp.uint64) << np.uint64(32) | lo.astype(jnp.uint64)
    return lax.bitcast_convert_type(bits | np.uint64(1023 << 52), jnp.float64) - 1


def _multiply_add(x: jax.Array, scale: jax.Array, shift: jax.Array) -> jax.Array:
    """``x * scale + shift`` rounded after each step, as TensorFlow's separate Mul and AddV2 kernels round.

    XLA fuses a multiply and an add into one FMA (one rounding: 45% of float32 uniforms
    on [-1.3, 2.4) came out different on XLA CPU). The product goes through an XOR with a
    value the compiler cannot prove zero (1 only where ``x`` is not finite, which Philox
    values never are), so the add gets the rounded product, on every platform.
    """
    product = x * scale
    info = jnp.finfo(x.dtype)
    uint = jnp.dtype(f"uint{8 * x.dtype.itemsize}")
    exponent = np.asarray((1 << info.nexp) - 1, uint)
    finite = (lax.bitcast_convert_type(x, uint) >> np.asarray(info.nmant, uint)) & exponent != exponent
    bits = lax.bitcast_convert_type(product, uint) ^ (~finite).astype(uint)
    return lax.bitcast_convert_type(bits, x.dtype) + shift


# --- per block: a block's four words -> its values in stream order (the module table) ---------


def _uniform_block(dtype: np.dtype) -> Callable[[Words], Words]:
    if dtype.itemsize == 8:
        return lambda w: (_unit64(w[0], w[1]), _unit64(w[2], w[3]))
    return lambda w: tuple(_unit(x, dtype) for x in w)


def _normal_block(dtype: np.dtype) -> Callable[[Words], Words]:
    if dtype.itemsize == 8:  # BoxMullerDouble: the angle 2 * M_PI * u in double
        return lambda w: (*box_muller(_unit64(w[0], w[1]), 2 * np.pi * _unit64(w[2], w[3])),)

    def block(w: Words) -> Words:  # BoxMullerFloat in float32 (its angle: `float32_angle`), then dtype
        u1, u3 = (_unit(x, jnp.dtype(jnp.float32)) for x in (w[0], w[2]))
        pairs = (*box_muller(u1, float32_angle(w[1])), *box_muller(u3, float32_angle(w[3])))
        return tuple(z.astype(dtype) for z in pairs)

    return block


def _int_block(dtype: np.dtype) -> Callable[[Words], Words]:
    if dtype.itemsize == 8:
        return lambda w: tuple(w[i].astype(jnp.uint64) | w[i + 1].astype(jnp.uint64) << np.uint64(32) for i in (0, 2))
    return lambda w: w


def uniform(
    state: jax.typing.ArrayLike,
    shape: Sequence[int],
    dtype: jax.typing.DTypeLike = jnp.float32,
    minval: jax.typing.ArrayLike = 0.0,
    maxval: jax.typing.ArrayLike = 1.0,
    *,
    out_sharding: NamedSharding | None = None,
) -> tuple[jax.Array, jax.Array]:
    """Uniform floats in ``[minval, maxval)``: TensorFlow's ``stateless_random_uniform`` on the stream.

    The unit value ``u`` in [0, 1) is built from the mantissa bits of one word (float16:
    10, bfloat16: 7, float32: 23) or two words (float64: 52 bits of ``w[2i] << 32 |
    w[2i+1]``), see the module table; the result is ``u * (maxval - minval) + minval``
    in ``dtype``, as in TensorFlow (so it can round up to ``maxval`` in low precision).

    Args:
      state: uint32[6] Philox state (see `random_generator`).
      shape: output shape (any rank; zero sizes allowed).
      dtype: float16, bfloat16, float32 or float64 (float64 needs x64).
      minval, maxval: scalars or arrays broadcasting to ``shape``.
      out_sharding: optional `jax.sharding.NamedSharding` of the values: each device then
        computes only its own tile, whatever axes the mesh splits (see `random_generator`).

    Returns:
      ``(values, next_state)``: ``dtype`` of ``shape``; the state moved ``ceil(words / 4)`` blocks.

    Raises:
      TypeError: bad ``state`` or ``dtype``, or bounds that are no real numbers or arrays.
      dmljax.ValidationError: bad ``state`` shape, ``shape`` or ``out_sharding``, or bounds
        that do not broadcast to ``shape``.

    Examples:
      >>> from dmljax.random import make_state
      >>> u, state = uniform(make_state(0), (4,))
      >>> u  # word 0x6627e8d5: 0x27e8d5 / 2**23 = 0.31179...
      Array([0.31179297, 0.8263413 , 0.6849456 , 0.0067091 ], dtype=float32)
      >>> state
      Array([1, 0, 0, 0, 0, 0], dtype=uint32)
    """
    state = check_state("uniform", state)
    dtype = check_dtype("uniform", dtype, FLOATS)
    shape = check_stream_shape("uniform", shape, 2 if dtype.itemsize == 8 else 1)
    for name, value in (("minval", minval), ("maxval", maxval)):
        check_broadcast("uniform", name, value, shape)
    out_sharding = shard_local.check_out_sharding("uniform", out_sharding, shape)
    values, new_state = vector_width.call(_uniform, _uniform_wide, state, shape, dtype, minval, maxval, out_sharding)
    return mark(values, state, op="uniform"), new_state


def _uniform_fn(state, shape, dtype, minval, maxval, out_sharding=None):
    u, next_state = _generate(state, shape, _uniform_block(dtype), out_sharding)
    minval, maxval = (jnp.broadcast_to(jnp.asarray(v, dtype), shape) for v in (minval, maxval))
    return _multiply_add(u, maxval - minval, minval), next_state


_uniform, _uniform_wide = vector_width.twin_jit(_uniform_fn, static_argnums=(1, 2, 5))


def normal(
    state: jax.typing.ArrayLike,
    shape: Sequence[int],
    dtype: jax.typing.DTypeLike = jnp.float32,
    mean: jax.typing.ArrayLike = 0.0,
    stddev: jax.typing.ArrayLike = 1.0,
    *,
    out_sharding: NamedSharding | None = None,
) -> tuple[jax.Array, jax.Array]:
    """Normal floats by Box-Muller over word pairs, as TensorFlow's ``stateless_random_normal``.

    Values ``2j`` and ``2j + 1`` are ``sin`` and ``cos`` of the pair ``(w[2j], w[2j+1])``
    (float16, bfloat16, float32: computed in float32, then rounded) or of the four words
    ``w[4j..4j+3]`` (float64); see the module table. Result: ``z * stddev + mean``.

    Args:
      state: uint32[6] Philox state.
      shape: output shape.
      dtype: float16, bfloat16, float32 or float64 (float64 needs x64).
      mean, stddev: scalars or arrays broadcasting to ``shape``.
      out_sharding: optional `jax.sharding.NamedSharding` of the values (see `uniform`).

    Returns:
      ``(values, next_state)``.

    Raises:
      TypeError: bad ``state`` or ``dtype``.
      dmljax.ValidationError: bad ``state`` shape, ``shape`` or ``out_sharding``, or
        ``mean``/``stddev`` that do not broadcast to ``shape``.

    Examples:
      >>> from dmljax.random import make_state
      >>> z, state = normal(make_state(0), (3,))
      >>> z.shape, z.dtype, state[0]
      ((3,), dtype('float32'), Array(1, dtype=uint32))
    """
    state = check_state("normal", state)
    dtype = check_dtype("normal", dtype, FLOATS)
    shape = check_stream_shape("normal", shape, 2 if dtype.itemsize == 8 else 1)
    for name, value in (("mean", mean), ("stddev", stddev)):
        check_broadcast("normal", name, value, shape)
    out_sharding = shard_local.check_out_sharding("normal", out_sharding, shape)
    values, new_state = vector_width.call(_normal, _normal_wide, state, shape, dtype, mean, stddev, out_sharding)
    return mark(values, state, op="normal"), new_state


def _normal_fn(state, shape, dtype, mean, stddev, out_sharding=None):
    z, next_state = _generate(state, shape, _normal_block(dtype), out_sharding)
    mean, stddev = (jnp.broadcast_to(jnp.asarray(v, dtype), shape) for v in (mean, stddev))
    return _multiply_add(z, stddev, mean), next_state


_normal, _normal_wide = vector_width.twin_jit(_normal_fn, static_argnums=(1, 2, 5))


def bernoulli(
    state: jax.typing.ArrayLike,
    p: jax.typing.ArrayLike = 0.5,
    shape: Sequence[int] | None = None,
    *,
    out_sharding: NamedSharding | None = None,
) -> tuple[jax.Array, jax.Array]:
    """Booleans that are True with probability ``p``: ``uniform(state, shape, float32) < p``.

    One word per value; ``p`` resolves to multiples of 2^-23 (the float32 uniform's grid).
    A concrete ``p`` must lie in [0, 1]. A traced ``p`` cannot be checked: a value below
    0 or NaN gives False, a value above 1 gives True (the comparison ``u < p`` as is).

    Args:
      state: uint32[6] Philox state.
      p: probability in [0, 1] (values checked when concrete): a real scalar or an array
        broadcasting to ``shape``.
      shape: output shape; default ``jnp.shape(p)``.
      out_sharding: optional `jax.sharding.NamedSharding` of the values (see `uniform`).

    Returns:
      ``(bool values, next_state)``.

    Raises:
      TypeError: bad ``state``, or a ``p`` that is no real number or array.
      dmljax.ValidationError: bad ``state`` shape, ``shape`` or ``out_sharding``, a ``p``
        that does not broadcast to ``shape``, or a concrete ``p`` outside [0, 1] or NaN.

    Examples:
      >>> from dmljax.random import make_state
      >>> bernoulli(make_state(0), 0.5, (4,))[0]
      Array([ True, False, False,  True], dtype=bool)
    """
    state = check_state("bernoulli", state)
    shape = check_stream_shape("bernoulli", jnp.shape(p) if shape is None else shape, 1)
    check_broadcast("bernoulli", "p", p, shape)
    check_probability("bernoulli", "p", p, f"shape {shape}")
    out_sharding = shard_local.check_out_sharding("bernoulli", out_sharding, shape)
    f32 = jnp.dtype(jnp.float32)
    u, next_state = vector_width.call(_uniform, _uniform_wide, state, shape, f32, 0.0, 1.0, out_sharding)
    values = u < jnp.broadcast_to(jnp.asarray(p, jnp.float32), shape)
    return mark(values, state, op="bernoulli"), next_state


def randint(
    state: jax.typing.ArrayLike,
    shape: Sequence[int],
    minval: jax.typing.ArrayLike,
    maxval: jax.typing.ArrayLike,
    dtype: jax.typing.DTypeLike = jnp.int32,
    *,
    out_sharding: NamedSharding | None = None,
) -> tuple[jax.Array, jax.Array]:
    """Integers in ``[minval, maxval)`` as TensorFlow's ``stateless_random_uniform`` for ints.

    ``minval + w % (maxval - minval)`` with one word (32-bit types) or two words,
    ``w[2i] | w[2i+1] << 32``, for 64-bit types. The modulo has TensorFlow's small bias
    (under ``range / 2^32`` relative; none when the range is a power of two).

    Concrete bounds must lie in ``dtype``'s range with ``minval < maxval``. Traced bounds
    cannot be checked; they are first clamped into ``dtype``'s range (so a traced
    ``maxval`` above it excludes ``dtype``'s maximum, which `jax.random.randint` would
    include), then an empty range (``minval >= maxval``) gives ``minval``, as
    `jax.random.randint` does.

    Args:
      state: uint32[6] Philox state.
      shape: output shape.
      minval, maxval: integers (scalars or integer arrays broadcasting to ``shape``) in
        ``dtype``'s range with ``minval < maxval`` (values checked when concrete; traced
        ones clamped, see above).
      dtype: int32, uint32, int64 or uint64 (64-bit types need x64).
      out_sharding: optional `jax.sharding.NamedSharding` of the values (see `uniform`).

    Returns:
      ``(values, next_state)``.

    Raises:
      TypeError: bad ``state`` or ``dtype``, or bounds that are no real numbers or arrays.
      dmljax.ValidationError: bad ``state`` shape, ``shape`` or ``out_sharding``; bounds
        that are not integers, do not broadcast to ``shape``, lie outside ``dtype``'s
        range, or (concrete) ``minval >= maxval``.

    Examples:
      >>> from dmljax.random import make_state
      >>> randint(make_state(0), (4,), 0, 10)[0]  # 0x6627e8d5 % 10 == 1
      Array([1, 3, 8, 0], dtype=int32)
    """
    state = check_state("randint", state)
    dtype = check_dtype("randint", dtype, INTS)
    shape = check_stream_shape("randint", shape, dtype.itemsize // 4)
    check_int_bounds("randint", minval, maxval, dtype, shape)
    # Python ints are in range now: give them the dtype (jit would read 2**63 as an overflowing int64).
    minval, maxval = (np.asarray(v, dtype) if isinstance(v, int) else v for v in (minval, maxval))
    out_sharding = shard_local.check_out_sharding("randint", out_sharding, shape)
    values, new_state = vector_width.call(_randint, _randint_wide, state, shape, minval, maxval, dtype, out_sharding)
    return mark(values, state, op="randint"), new_state


def _clamp_to(value: jax.Array, dtype: np.dtype) -> jax.Array:
    """An integer ``value`` clamped into ``dtype``'s range (in its own type), then converted exactly."""
    value = jnp.asarray(value)
    own, to = np.iinfo(value.dtype), np.iinfo(dtype)
    low, high = max(own.min, to.min), min(own.max, to.max)
    if (low, high) != (own.min, own.max):
        value = lax.clamp(np.asarray(low, value.dtype), value, np.asarray(high, value.dtype))
    return lax.convert_element_type(value, dtype)


def _randint_fn(state, shape, minval, maxval, dtype, out_sharding=None):
    unsigned = jnp.dtype(f"uint{8 * dtype.itemsize}")
    lo, hi = (jnp.broadcast_to(_clamp_to(v, dtype), shape) for v in (minval, maxval))
    span = jnp.where(hi > lo, hi.astype(unsigned) - lo.astype(unsigned), np.ones((), unsigned))  # empty: w % 1 == 0
    words, next_state = _generate(state, shape, _int_block(dtype), out_sharding)
    return lax.bitcast_convert_type(lax.rem(words, span) + lo.astype(unsigned), dtype), next_state


_randint, _randint_wide = vector_width.twin_jit(_randint_fn, static_argnums=(1, 4, 5))
