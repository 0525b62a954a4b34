"""Distributions on the Philox stream of `random_generator`, with TensorFlow's word-to-value maps.

Every function takes a state and returns ``(value, next_state)``. The values come from
the same word stream as ``random_generator(state, ...)`` (word ``i`` is word ``i % 4``
of block ``counter + i // 4``) and use TensorFlow's conversions
(``tensorflow/core/lib/random/random_distributions{,_utils}.h``), which DirectML's
TensorFlow plugin uses too, so the same key and counter give the same uniform floats
and integers as TensorFlow's stateless Philox ops (SPEC §4):

============  =====  ===============================================================
value         words  value ``i`` from the stream words ``w``
============  =====  ===============================================================
float32       1      ``bitcast_f32(0x3F800000 | (w[i] & 0x7FFFFF)) - 1`` (Uint32ToFloat)
float16       1      ``bitcast_f16(15 << 10 | (w[i] & 0x3FF)) - 1`` (Uint16ToHalf)
bfloat16      1      ``bitcast_bf16(127 << 7 | (w[i] & 0x7F)) - 1``
float64       2      ``bitcast_f64(1023 << 52 | (w[2i] & 0xFFFFF) << 32 | w[2i+1]) - 1``
normal f32    1      Box-Muller on ``(w[2j], w[2j+1])``: ``u1 = max(U(w[2j]), 1e-7)``,
                     ``v = 2 pi U(w[2j+1])``, value ``2j = sin(v) r``, ``2j+1 = cos(v) r``,
                     ``r = sqrt(-2 log u1)``; float16/bfloat16 round the float32 result
normal f64    2      the same on ``(w[4j], w[4j+1])`` and ``(w[4j+2], w[4j+3])`` as doubles
int32/uint32  1      ``minval + w[i] % (maxval - minval)`` (modulo bias < range / 2^32)
int64/uint64  2      ``minval + (w[2i] | w[2i+1] << 32) % (maxval - minval)``
============  =====  ===============================================================

The next state skips ``ceil(words / 4)`` blocks, as TensorFlow's generator consumes them.
Uniform floats and integers match TensorFlow bit for bit; normals use XLA's ``log``,
``sin`` and ``cos`` (and ``2 pi`` in the output precision) and so agree to a few ulp.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from dmljax import _philox
from dmljax._errors import fail
from dmljax._random import advance, check_state, split_state

__all__ = ["uniform", "normal", "bernoulli", "dropout", "randint"]

# TensorFlow random_distributions_utils.h, BoxMullerFloat/BoxMullerDouble: "Do not send a really small number to log()".
BOX_MULLER_EPSILON = 1.0e-7
# One call may use at most 2^32 - 1 stream words (the counter offsets are uint32).
MAX_WORDS = 2**32 - 1
_FLOATS = ("float16", "bfloat16", "float32", "float64")
_INTS = ("int32", "uint32", "int64", "uint64")


def _check_dtype(op: str, dtype: Any, allowed: tuple[str, ...]) -> np.dtype:
    name = jnp.dtype(dtype).name
    if name not in allowed:
        raise TypeError(f"{op}: dtype must be one of {', '.join(allowed)}; got dtype={name}.")
    if jnp.dtype(dtype).itemsize == 8 and not jax.config.jax_enable_x64:
        raise TypeError(f"{op}: dtype must be 32-bit or narrower unless x64 is on; got dtype={name} (jax.enable_x64).")
    return jnp.dtype(dtype)


def _check_shape(op: str, shape: Any, words_per_value: int) -> tuple[int, ...]:
    try:
        dims = tuple(shape)
    except TypeError:
        raise fail(op, "shape", "be a tuple of non-negative ints", shape) from None
    if not all(hasattr(d, "__index__") and not isinstance(d, bool) and d >= 0 for d in dims):
        raise fail(op, "shape", "be a tuple of non-negative ints", shape)
    dims = tuple(int(d) for d in dims)
    if math.prod(dims) * words_per_value > MAX_WORDS:
        raise fail(op, "shape", f"need at most 2**32 - 1 stream words ({words_per_value} per value)", dims)
    return dims


def _concrete(value: Any) -> Any:
    """``value`` as a NumPy scalar when it is known at trace time, else None."""
    try:
        return np.asarray(value).item()
    except (jax.errors.ConcretizationTypeError, jax.errors.TracerArrayConversionError):
        return None


def _words(state: jax.Array, n_words: int) -> tuple[tuple[jax.Array, ...], jax.Array]:
    """The four word planes of the ``ceil(n_words / 4)`` blocks from ``state``, and the next state."""
    blocks = _philox.num_blocks(n_words)
    counter, key = split_state(state.reshape(6))
    return _philox.block_planes(counter, key, (blocks,)), advance(state, blocks)


def _values(planes: tuple[jax.Array, ...], shape: tuple[int, ...]) -> jax.Array:
    """Interleave per-block value planes into stream order and cut to ``shape``."""
    return _philox.interleave(planes)[: math.prod(shape)].reshape(shape)


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


def uniform(
    state: jax.Array, shape: tuple[int, ...], dtype: Any = jnp.float32, minval: Any = 0.0, maxval: Any = 1.0
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

    Returns:
      ``(values, next_state)``: ``dtype`` of ``shape``; the state moved ``ceil(words / 4)`` blocks.

    Raises:
      TypeError: bad ``state`` or ``dtype``.
      dmljax.ValidationError: bad ``state`` shape or ``shape``.

    Examples:
      >>> from dmljax import make_state
      >>> u, state = uniform(make_state(0), (4,))
      >>> u  # word 0x6627e8d5: 0x27e8d5 / 2**23 = 0.31179...
      Array([0.31179297, 0.8263413 , 0.6849456 , 0.0067091 ], dtype=float32)
      >>> state
      Array([1, 0, 0, 0, 0, 0], dtype=uint32)
    """
    state = check_state("uniform", state)
    dtype = _check_dtype("uniform", dtype, _FLOATS)
    shape = _check_shape("uniform", shape, 2 if dtype.itemsize == 8 else 1)
    return _uniform(state, shape, dtype, minval, maxval)


@functools.partial(jax.jit, static_argnums=(1, 2))
def _uniform(state, shape, dtype, minval, maxval):
    u, next_state = _unit_values(state, shape, dtype)
    minval, maxval = (jnp.broadcast_to(jnp.asarray(v, dtype), shape) for v in (minval, maxval))
    return u * (maxval - minval) + minval, next_state


def _unit_values(state: jax.Array, shape: tuple[int, ...], dtype: np.dtype) -> tuple[jax.Array, jax.Array]:
    if dtype.itemsize == 8:
        w, next_state = _words(state, 2 * math.prod(shape))
        return _values((_unit64(w[0], w[1]), _unit64(w[2], w[3])), shape), next_state
    w, next_state = _words(state, math.prod(shape))
    return _values(tuple(_unit(x, dtype) for x in w), shape), next_state


def _box_muller(u1: jax.Array, u2: jax.Array) -> tuple[jax.Array, jax.Array]:
    """TensorFlow's BoxMullerFloat/Double on two unit values: (sin, cos) times the radius."""
    radius = jnp.sqrt(-2 * jnp.log(jnp.maximum(u1, jnp.asarray(BOX_MULLER_EPSILON, u1.dtype))))
    angle = jnp.asarray(2 * np.pi, u2.dtype) * u2
    return jnp.sin(angle) * radius, jnp.cos(angle) * radius


def normal(
    state: jax.Array, shape: tuple[int, ...], dtype: Any = jnp.float32, mean: Any = 0.0, stddev: Any = 1.0
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

    Returns:
      ``(values, next_state)``.

    Raises:
      TypeError: bad ``state`` or ``dtype``.
      dmljax.ValidationError: bad ``state`` shape or ``shape``.

    Examples:
      >>> from dmljax import make_state
      >>> z, state = normal(make_state(0), (3,))
      >>> z.shape, z.dtype, state[0]
      ((3,), dtype('float32'), Array(1, dtype=uint32))
    """
    state = check_state("normal", state)
    dtype = _check_dtype("normal", dtype, _FLOATS)
    shape = _check_shape("normal", shape, 2 if dtype.itemsize == 8 else 1)
    return _normal(state, shape, dtype, mean, stddev)


@functools.partial(jax.jit, static_argnums=(1, 2))
def _normal(state, shape, dtype, mean, stddev):
    if dtype.itemsize == 8:
        w, next_state = _words(state, 2 * math.prod(shape))
        z = _values(_box_muller(_unit64(w[0], w[1]), _unit64(w[2], w[3])), shape)
    else:
        w, next_state = _words(state, math.prod(shape))
        u = [_unit(x, jnp.float32) for x in w]
        z = _values((*_box_muller(u[0], u[1]), *_box_muller(u[2], u[3])), shape).astype(dtype)
    mean, stddev = (jnp.broadcast_to(jnp.asarray(v, dtype), shape) for v in (mean, stddev))
    return z * stddev + mean, next_state


def bernoulli(state: jax.Array, p: Any = 0.5, shape: tuple[int, ...] | None = None) -> tuple[jax.Array, jax.Array]:
    """Booleans that are True with probability ``p``: ``uniform(state, shape, float32) < p``.

    One word per value; ``p`` resolves to multiples of 2^-23 (the float32 uniform's grid).

    Args:
      state: uint32[6] Philox state.
      p: probability, a scalar or an array broadcasting to ``shape``.
      shape: output shape; default ``jnp.shape(p)``.

    Returns:
      ``(bool values, next_state)``.

    Raises:
      TypeError: bad ``state``.
      dmljax.ValidationError: bad ``state`` shape or ``shape``.

    Examples:
      >>> from dmljax import make_state
      >>> bernoulli(make_state(0), 0.5, (4,))[0]
      Array([ True, False, False,  True], dtype=bool)
    """
    state = check_state("bernoulli", state)
    shape = _check_shape("bernoulli", jnp.shape(p) if shape is None else shape, 1)
    u, next_state = _uniform(state, shape, jnp.dtype(jnp.float32), 0.0, 1.0)
    return u < jnp.broadcast_to(jnp.asarray(p, jnp.float32), shape), next_state


def dropout(state: jax.Array, x: jax.typing.ArrayLike, rate: Any) -> tuple[jax.Array, jax.Array]:
    """Inverted dropout as TensorFlow's ``stateless_dropout``: keep where ``uniform >= rate``, scale by ``1/(1-rate)``.

    The uniform values have ``x``'s dtype and shape (one word per element; two for
    float64). Dropped elements are exactly zero; kept ones are ``x * (1 / (1 - rate))``.
    Differentiable in ``x`` (the mask is not).

    Args:
      state: uint32[6] Philox state.
      x: float16, bfloat16, float32 or float64 array.
      rate: drop probability in [0, 1), a scalar (checked when concrete).

    Returns:
      ``(dropped x, next_state)``.

    Raises:
      TypeError: bad ``state`` or ``x`` dtype.
      dmljax.ValidationError: bad ``state`` shape, or a concrete ``rate`` outside [0, 1).

    Examples:
      >>> from dmljax import make_state
      >>> dropout(make_state(0), jnp.ones(4), 0.5)[0]
      Array([0., 2., 2., 0.], dtype=float32)
    """
    state = check_state("dropout", state)
    x = jnp.asarray(x)
    dtype = _check_dtype("dropout", x.dtype, _FLOATS)
    concrete_rate = _concrete(rate)
    if concrete_rate is not None and not 0 <= concrete_rate < 1:
        raise fail("dropout", "rate", "be in [0, 1)", rate, f"x shape {x.shape}")
    shape = _check_shape("dropout", x.shape, 2 if dtype.itemsize == 8 else 1)
    u, next_state = _uniform(state, shape, dtype, 0.0, 1.0)
    rate = jnp.asarray(rate, dtype)
    return jnp.where(u >= rate, x * (1 / (1 - rate)), jnp.zeros((), dtype)), next_state


def randint(
    state: jax.Array, shape: tuple[int, ...], minval: Any, maxval: Any, dtype: Any = jnp.int32
) -> tuple[jax.Array, jax.Array]:
    """Integers in ``[minval, maxval)`` as TensorFlow's ``stateless_random_uniform`` for ints.

    ``minval + w % (maxval - minval)`` with one word (32-bit types) or two words,
    ``w[2i] | w[2i+1] << 32``, for 64-bit types. The modulo has TensorFlow's small bias
    (under ``range / 2^32`` relative; none when the range is a power of two).

    Args:
      state: uint32[6] Philox state.
      shape: output shape.
      minval, maxval: integer scalars with ``minval < maxval`` (checked when concrete).
      dtype: int32, uint32, int64 or uint64 (64-bit types need x64).

    Returns:
      ``(values, next_state)``.

    Raises:
      TypeError: bad ``state`` or ``dtype``.
      dmljax.ValidationError: bad ``state`` shape or ``shape``, or concrete ``minval >= maxval``.

    Examples:
      >>> from dmljax import make_state
      >>> randint(make_state(0), (4,), 0, 10)[0]  # 0x6627e8d5 % 10 == 1
      Array([1, 3, 8, 0], dtype=int32)
    """
    state = check_state("randint", state)
    dtype = _check_dtype("randint", dtype, _INTS)
    low, high = _concrete(minval), _concrete(maxval)
    if low is not None and high is not None and not low < high:
        raise fail("randint", "maxval", "exceed minval", maxval, f"minval={minval!r}")
    shape = _check_shape("randint", shape, dtype.itemsize // 4)
    return _randint(state, shape, minval, maxval, dtype)


@functools.partial(jax.jit, static_argnums=(1, 4))
def _randint(state, shape, minval, maxval, dtype):
    unsigned = jnp.dtype(f"uint{8 * dtype.itemsize}")
    lo = lax.convert_element_type(minval, dtype).astype(unsigned)
    span = lax.convert_element_type(maxval, dtype).astype(unsigned) - lo
    if dtype.itemsize == 8:
        w, next_state = _words(state, 2 * math.prod(shape))
        pairs = [(w[i].astype(unsigned) | w[i + 1].astype(unsigned) << np.uint64(32)) for i in (0, 2)]
    else:
        pairs, next_state = _words(state, math.prod(shape))
    values = _values(tuple(lax.rem(p, span) + lo for p in pairs), shape)
    return lax.bitcast_convert_type(values, dtype), next_state
