"""The order of top-k and arg-max/min as integer keys: one comparison rule on every platform.

DirectML's TOP_K1 and ONNX TopK order numbers by value and break ties by the lower index;
``-0.0`` equals ``+0.0`` (they compare equal in IEEE 754, so they tie). Neither page places
NaN; onnxruntime's TopK sorts NaN above every number, in both directions (``largest`` 0 or
1), and dmljax does the same, for top-k and arg-max/min alike (docs/semantics.md).
`lax.sort` and `lax.top_k` on floats use the IEEE total order instead (``-0.0 < +0.0``,
and a NaN's sign and payload count), so the floats are first mapped to integers of the
same width whose plain integer order is the rule above: ``-0.0`` made ``+0.0``, every NaN
one positive NaN, then the sign-magnitude bits made two's complement. Zero and NaN are
told apart on the bits, never by comparing floats: XLA CPU flushes subnormals to zero in
float comparisons, which would tie the smallest subnormal with zero. ``~key`` reverses
that order exactly (smallest first), integers included, with ties left ties.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from dmljax._ops.common.indices import type_fail

__all__ = ["FLOAT32_KEY_DTYPES", "check_ordered", "float32_order_key", "order_key"]

_SIGNED: dict[int, type[np.signedinteger]] = {2: np.int16, 4: np.int32, 8: np.int64}

# Types whose order keys map one to one onto float32 values (`float32_order_key`): float32
# itself, and the types that float32 holds exactly.
FLOAT32_KEY_DTYPES = frozenset(
    np.dtype(t) for t in ("float32", "float16", "bfloat16", "int8", "uint8", "int16", "uint16", "bool")
)


def check_ordered(op: str, x: jax.Array) -> None:
    """Complex numbers have no order: a `TypeError` naming ``op``."""
    if jnp.issubdtype(x.dtype, jnp.complexfloating):
        raise type_fail(op, "x.dtype", "be real (complex numbers have no order)", x.dtype, f"x shape {x.shape}")


def order_key(x: jax.Array, *, largest: bool = True) -> jax.Array:
    """Integer keys whose order is the operators' order; ``largest=False`` reverses it (``~key``).

    Examples:
      >>> x = jnp.array([1.0, -0.0, jnp.nan, 0.0, -jnp.inf, -2.0])
      >>> order_key(x)[1] == order_key(x)[3], jnp.argsort(order_key(x), stable=True)
      (Array(True, dtype=bool), Array([4, 5, 1, 3, 0, 2], dtype=int32))
    """
    if x.dtype == np.bool_:
        key = x.astype(np.uint8)
    elif jnp.issubdtype(x.dtype, jnp.floating):
        signed = _SIGNED[x.dtype.itemsize]
        bits = lax.bitcast_convert_type(x, signed)
        magnitude = bits & np.iinfo(signed).max  # decided on bits: XLA CPU flushes subnormals in `x == 0`
        nan = np.array(np.nan, x.dtype).view(signed)
        inf = np.array(np.inf, x.dtype).view(signed)
        key = jnp.where(bits < 0, bits ^ np.iinfo(signed).max, bits)
        key = jnp.where(magnitude == 0, jnp.zeros((), signed), jnp.where(magnitude > inf, nan, key))
    else:
        key = x
    return key if largest else ~key


def float32_order_key(x: jax.Array, *, largest: bool = True) -> jax.Array:
    """float32 keys whose IEEE total order (``-0.0 < +0.0``, what `lax.top_k` compares) is
    `order_key`'s order, for the `FLOAT32_KEY_DTYPES` (XLA CPU's fast TopK takes float32 only).

    ``order_key``'s int32 keys of a float32 array take every value of the total order of the
    non-NaN floats except ``-0.0``'s, plus one NaN key above ``+inf``'s. Shifting every key
    from zero's up by one step down the total order (zero to ``-0.0``, the smallest
    subnormal to ``+0.0``, ``+inf`` to the largest finite float) and NaN's to ``+inf`` keeps
    that order exactly, ties included, with no NaN among the keys; negation reverses it
    (``largest=False``).

    Examples:
      >>> x = jnp.array([-0.0, 0.0, jnp.nan, jnp.inf])
      >>> float32_order_key(x).tolist()
      [-0.0, -0.0, inf, 3.4028234663852886e+38]
    """
    key = order_key(x.astype(np.float32))  # exact for these types, order and NaN kept
    nan = np.int32(np.array(np.nan, np.float32).view(np.int32))
    inf = np.int32(np.array(np.inf, np.float32).view(np.int32))
    shifted = jnp.where(key >= 0, jnp.where(key == nan, inf, key - 1), key)
    bits = jnp.where(shifted < 0, shifted ^ np.int32(np.iinfo(np.int32).max), shifted)
    value = lax.bitcast_convert_type(bits, np.float32)
    return value if largest else -value
