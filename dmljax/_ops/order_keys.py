"""The order of top-k and arg-max/min as integer keys: one comparison rule on every platform.

DirectML's TOP_K1 and ONNX TopK order numbers by value and break ties by the lower index;
``-0.0`` equals ``+0.0`` (they compare equal in IEEE 754, so they tie). Neither page places
NaN; onnxruntime's TopK sorts NaN above every number, in both directions (``largest`` 0 or
1), and dmljax does the same, for top-k and arg-max/min alike (docs/semantics.md).
`lax.sort` and `lax.top_k` on floats use the IEEE total order instead (``-0.0 < +0.0``,
and a NaN's sign and payload count), so the floats are first mapped to integers of the
same width whose plain integer order is the rule above: ``-0.0`` made ``+0.0``, every NaN
one positive NaN, then the sign-magnitude bits made two's complement. ``~key`` reverses
that order exactly (smallest first), integers included, with ties left ties.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from dmljax._ops.indices import type_fail

__all__ = ["check_ordered", "order_key"]

_SIGNED: dict[int, type[np.signedinteger]] = {2: np.int16, 4: np.int32, 8: np.int64}


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
        canonical = jnp.where(jnp.isnan(x), jnp.array(np.nan, x.dtype), jnp.where(x == 0, jnp.zeros((), x.dtype), x))
        bits = lax.bitcast_convert_type(canonical, signed)
        key = jnp.where(bits < 0, bits ^ jnp.array(np.iinfo(signed).max, signed), bits)
    else:
        key = x
    return key if largest else ~key
