"""TensorFlow's Box-Muller transform, each step in the precision TensorFlow computes it.

TensorFlow's ``BoxMullerFloat`` (``tensorflow/core/lib/random/random_distributions_utils.h``)
turns two words into two float32 normals:

* ``u1 = max(Uint32ToFloat(x0), 1e-7f)`` and ``r = sqrt(-2.0f * log(u1))`` in float32;
* the angle ``v1 = 2.0f * M_PI * Uint32ToFloat(x1)``: ``M_PI`` is a double, so the
  product is formed in double and rounded to float32 once, on the assignment;
* ``sincosf(v1)`` times ``r`` in float32.

float16 and bfloat16 normals round those float32 values; ``BoxMullerDouble`` does the
same in double throughout. The angle is the step a float32 multiply gets wrong: it
differs from ``float32(2 pi) * u`` in a third of all inputs, which moves the normal by up
to tens of ulp. `float32_angle` forms it exactly, in uint32 arithmetic, whatever the x64
setting and platform (the tests check all 2^23 inputs against NumPy's double product).
What still differs from TensorFlow are the last bits of ``log``, ``sin`` and ``cos``:
XLA's implementations, not glibc's.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from dmljax._random.philox import mulhi

__all__ = ["BOX_MULLER_EPSILON", "box_muller", "float32_angle"]

# TensorFlow's BoxMullerFloat/BoxMullerDouble: "Do not send a really small number to log()".
BOX_MULLER_EPSILON = 1.0e-7

# 2 * M_PI as a double is this 53-bit integer times 2**-50; its low and high 32-bit words.
_TWO_PI_MANTISSA = 0x1921FB54442D18
_TWO_PI_LO, _TWO_PI_HI = np.uint32(_TWO_PI_MANTISSA & 0xFFFFFFFF), np.uint32(_TWO_PI_MANTISSA >> 32)
_ONE = np.uint32(1)


def _round_flags(lo: jax.Array, shift: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Round-to-nearest-even flags for dropping the low ``shift`` bits (1 <= shift < 32) of ``lo``."""
    guard = (lo >> (shift - _ONE)) & _ONE
    sticky = ((lo & ((_ONE << (shift - _ONE)) - _ONE)) != 0).astype(jnp.uint32)
    return guard, sticky


def float32_angle(w: jax.Array) -> jax.Array:
    """``float32(double(2 * M_PI) * Uint32ToFloat(w))``: TensorFlow's Box-Muller angle, exactly.

    ``Uint32ToFloat(w)`` is ``m * 2**-23`` with ``m = w & 0x7FFFFF``, so the double product
    is ``P * 2**-73`` with the integer ``P = 0x1921FB54442D18 * m`` (76 bits at most).
    With ``m`` shifted to 23 significant bits, ``P`` has 75 or 76 bits; it is rounded to
    53 bits (the double) and then to 24 (the float32), both to nearest even, in uint32
    words, and the float32 is assembled from its exponent and mantissa.

    Args:
      w: uint32 words.

    Returns:
      float32 angles in [0, 2 pi), one per word.

    Examples:
      >>> w = jnp.array([0, 1, 0x400000, 0x7FFFFF], jnp.uint32)
      >>> got = float32_angle(w)
      >>> want = (np.float64(2 * np.pi) * (np.asarray(w) * 2.0**-23)).astype(np.float32)
      >>> bool((np.asarray(got) == want).all())
      True
    """
    m = w & np.uint32(0x7FFFFF)
    shift = lax.clz(m) - np.uint32(9)  # 23 - bit length: m << shift has 23 bits
    m = m << shift
    # P = (hi * m) << 32 + lo * m, as three words w2:w1:w0.
    lo_lo, lo_hi = _TWO_PI_LO * m, mulhi(_TWO_PI_LO, m)
    hi_lo, hi_hi = _TWO_PI_HI * m, mulhi(_TWO_PI_HI, m)
    w0, w1 = lo_lo, hi_lo + lo_hi
    w2 = hi_hi + (w1 < hi_lo).astype(jnp.uint32)
    # To 53 bits: drop 23 bits when P has 76, else 22.
    drop = np.uint32(22) + ((w2 >> np.uint32(11)) & _ONE)
    q_lo = (w0 >> drop) | (w1 << (np.uint32(32) - drop))
    q_hi = (w1 >> drop) | (w2 << (np.uint32(32) - drop))
    guard, sticky = _round_flags(w0, drop)
    up = guard & (sticky | (q_lo & _ONE))
    d_lo = q_lo + up
    d_hi = q_hi + (d_lo < up).astype(jnp.uint32)
    # To 24 bits: drop 29 more; a carry out of 24 bits makes 2**24, one binade up.
    f = (d_lo >> np.uint32(29)) | (d_hi << np.uint32(3))
    guard, sticky = _round_flags(d_lo, jnp.full_like(d_lo, 29))
    f = f + (guard & (sticky | (f & _ONE)))
    carry = f >> np.uint32(24)
    f = f >> carry
    # The value is f * 2**(drop + 29 - 73 - shift + carry), f in [2**23, 2**24).
    exponent = drop + np.uint32(29 - 73 + 23 + 127) - shift + carry
    bits = (exponent << np.uint32(23)) | (f & np.uint32(0x7FFFFF))
    return jnp.where(m == 0, np.float32(0), lax.bitcast_convert_type(bits, jnp.float32))


def box_muller(u1: jax.Array, angle: jax.Array) -> tuple[jax.Array, jax.Array]:
    """``(sin(angle) r, cos(angle) r)`` with ``r = sqrt(-2 log(max(u1, 1e-7)))``, in ``u1``'s dtype."""
    radius = jnp.sqrt(-2 * jnp.log(jnp.maximum(u1, jnp.asarray(BOX_MULLER_EPSILON, u1.dtype))))
    return jnp.sin(angle) * radius, jnp.cos(angle) * radius
