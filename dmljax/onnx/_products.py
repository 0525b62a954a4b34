"""`dmljax.cumulative_prod` as an ONNX model computes it: ONNX has no CumProd node.

The implementation's ``lax.scan`` in the data's type reaches jax2onnx's Loop lowering,
which types the loop body for float32/float64 and int32 only (a float16 body multiplies
by a DOUBLE value, narrower integers Concat an INT32 with their own type). The exporter
binds this formulation instead, along axis 0 after a transpose:

* integers: products modulo ``2^w`` are associative and commutative, so the running
  product is the doubling scan (Hillis and Steele): ``log2(n)`` rounds of ``Mul`` with a
  copy shifted by ``1, 2, 4...`` (ones shifted in); equal bits in any order;
* float32/float64: the loop, in the data's type (``y[i] = y[i-1] * x[i]`` rounded each step);
* float16/bfloat16: the same loop in float32, rounded to the data's type after every step
  (a product of two float16/bfloat16 values is exact in float32, so its one rounding is
  the data type's own: XLA's).

``reverse`` reverses the axis around the loop; ``exclusive`` shifts a one in.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

__all__ = ["cumulative_product"]

_HALF = (np.dtype(np.float16), np.dtype(jnp.bfloat16))


def _ones(like: Any, count: int) -> Any:
    return lax.full((count, *like.shape[1:]), 1, like.dtype)


def _doubling(xs: Any) -> Any:
    """The inclusive running product along axis 0 in ``log2(n)`` rounds (exact for integers)."""
    n, shift = xs.shape[0], 1
    while shift < n:
        shifted = lax.concatenate([_ones(xs, shift), lax.slice_in_dim(xs, 0, n - shift, axis=0)], 0)
        xs, shift = lax.mul(xs, shifted), 2 * shift
    return xs


def _loop(xs: Any) -> Any:
    """The inclusive running product along axis 0, one rounded product per step."""
    dtype = np.dtype(xs.dtype)
    carrier = np.dtype(np.float32) if dtype in _HALF else dtype
    wide = lax.convert_element_type(xs, carrier)

    def step(carry: Any, value: Any) -> tuple[Any, Any]:
        new = lax.convert_element_type(lax.convert_element_type(lax.mul(carry, value), dtype), carrier)
        return new, new

    first = lax.index_in_dim(wide, 0, axis=0, keepdims=False)
    if xs.shape[0] > 1:
        _, tally = lax.scan(step, first, lax.slice_in_dim(wide, 1, xs.shape[0], axis=0))
        wide = lax.concatenate([first[None], tally], 0)
    return lax.convert_element_type(wide, dtype)


def cumulative_product(x: Any, *, axis: int, reverse: bool, exclusive: bool) -> Any:
    """``dmljax.cumulative_prod(x, axis, reverse=..., exclusive=...)`` in the formulation above."""
    n = x.shape[axis]
    if jax.export.is_symbolic_dim(n) or n == 0:
        return None
    order = (axis, *(d for d in range(x.ndim) if d != axis))
    xs = lax.transpose(x, order)
    if reverse:
        xs = lax.rev(xs, (0,))
    ys = _doubling(xs) if np.dtype(x.dtype).kind in "iu" else _loop(xs)
    if exclusive:
        ys = lax.concatenate([_ones(ys, 1), lax.slice_in_dim(ys, 0, n - 1, axis=0)], 0)
    if reverse:
        ys = lax.rev(ys, (0,))
    return lax.transpose(ys, tuple(int(i) for i in np.argsort(order)))
