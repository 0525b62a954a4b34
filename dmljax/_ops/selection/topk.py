"""Top-k (DML_TOP_K1_OPERATOR_DESC, ONNX TopK) with DirectML's tie and NaN order.

The public function validates ``k`` and the axis; `_top_k_impl` runs `lax.top_k` on the
integer keys of `dmljax._ops.selection.order_keys` (ties: lower index first, as `lax.top_k`
documents; ``-0.0`` ties ``+0.0``; NaN above every number) and reads the values at the
chosen indices, so each value keeps its own bits (a ``-0.0`` stays ``-0.0``). On XLA CPU
(config ``cpu_float_top_k``) the keys of float32 and the types float32 holds exactly are
float32 keys of the same order (`float32_order_key`): XLA CPU's fast TopK takes float32
only, and sorts whole rows for integer keys (docs/design/top-k-keys.md).
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from dmljax._core.config import config
from dmljax._core.errors import fail
from dmljax._core.markers import mark, traced
from dmljax._core.platform import cpu_or_plain
from dmljax._ops.common.indices import as_data, check_axis, check_rank
from dmljax._ops.selection.order_keys import FLOAT32_KEY_DTYPES, check_ordered, float32_order_key, order_key

__all__ = ["top_k", "top_k_validated"]


def top_k(x: jax.typing.ArrayLike, k: int, axis: int = -1, *, largest: bool = True) -> tuple[jax.Array, jax.Array]:
    """The ``k`` largest (or smallest) elements along ``axis`` and their indices: DML_TOP_K1, ONNX TopK.

    Each sequence along ``axis`` is ordered by value, largest first (``largest=True``,
    DirectML's ``AxisDirection = DECREASING``) or smallest first (``INCREASING``), and the
    first ``k`` are kept. Equal values keep ascending index order in both directions
    (DirectML's and ONNX's rule); ``-0.0`` and ``+0.0`` are equal. NaN sorts above every
    number in both directions, as onnxruntime's TopK does: the largest-k start with the
    NaNs, the smallest-k take them last. Indices count from the start of the sequence.

    Args:
      x: array of 1 to 8 dimensions of a real `DataType` (DirectML lists FLOAT32, FLOAT16,
        INT32, INT16, INT8, UINT32, UINT16, UINT8).
      k: a static int in ``[1, x.shape[axis]]``.
      axis: the axis to select along, in ``[-r, r)``.
      largest: the largest ``k`` (descending) or the smallest (ascending).

    Returns:
      ``(values, indices)``, both of ``x``'s shape with ``k`` along ``axis``; ``values`` of
      ``x``'s type, ``indices`` int32 (DirectML writes UINT32, ONNX INT64).

    Raises:
      ValidationError: a rank, ``axis`` or ``k`` breaks its rule, ``k`` is traced, or
        ``largest`` is not a bool.
      TypeError: ``x`` is complex or of an unsupported type.

    Examples:
      >>> x = jnp.array([[1.0, 2.0, 2.0, 3.0], [6.0, 6.0, 6.0, 6.0]])
      >>> values, indices = top_k(x, 3)
      >>> values
      Array([[3., 2., 2.],
             [6., 6., 6.]], dtype=float32)
      >>> indices
      Array([[3, 1, 2],
             [0, 1, 2]], dtype=int32)
      >>> top_k(jnp.array([jnp.nan, 1.0, -0.0, 0.0]), 3, largest=False)[1]
      Array([2, 3, 1], dtype=int32)
    """
    op = "top_k"
    x = as_data(op, "x", x)
    check_rank(op, "x", x.shape)
    check_ordered(op, x)
    axis = check_axis(op, axis, x.ndim, f"x shape {x.shape}")
    k = _check_k(op, k, x.shape, axis)
    if not isinstance(largest, bool | np.bool_):
        raise fail(op, "largest", "be a bool", largest, f"x shape {x.shape}")
    params = {"k": k, "axis": axis, "largest": bool(largest)}
    values, indices = _top_k_impl(x, **params)
    if not traced(values, x):
        return values, indices
    return mark(values, x, op="top_k_values", **params), mark(indices, x, op="top_k_indices", **params)


def top_k_validated(x: jax.Array, k: int, axis: int, largest: bool) -> tuple[jax.Array, jax.Array]:
    """`top_k`'s trace of arguments the descriptor layer validated (axis in ``[0, r)``): no checks."""
    params = {"k": k, "axis": axis, "largest": largest}
    values, indices = _top_k_impl(x, **params)
    return mark(values, x, op="top_k_values", **params), mark(indices, x, op="top_k_indices", **params)


def _check_k(op: str, k: Any, shape: tuple[int, ...], axis: int) -> int:
    """``k`` static, integral, in ``[1, shape[axis]]`` (DirectML: K > 0, at most the axis' size)."""
    context = f"x shape {shape}, axis {axis}"
    if isinstance(k, jax.core.Tracer):
        raise fail(op, "k", "be a static int (not traced)", k, f"{context}; mark it static")
    if isinstance(k, bool) or not hasattr(k, "__index__"):
        raise fail(op, "k", "be an integer", k, context)
    if not 1 <= int(k) <= shape[axis]:
        raise fail(op, "k", f"be in [1, {shape[axis]}] (the axis' size)", int(k), context)
    return int(k)


@functools.partial(jax.jit, static_argnames=("k", "axis", "largest"))
def _top_k_impl(x: jax.Array, *, k: int, axis: int, largest: bool) -> tuple[jax.Array, jax.Array]:
    """`lax.top_k` of the order keys along the last axis, values read at its indices."""
    last = jnp.moveaxis(x, axis, -1)
    plain = lambda last: lax.top_k(order_key(last, largest=largest), k)[1]  # noqa: E731
    if config.cpu_float_top_k and last.dtype in FLOAT32_KEY_DTYPES:
        float32_keys = lambda last: lax.top_k(float32_order_key(last, largest=largest), k)[1]  # noqa: E731
        indices = cpu_or_plain(float32_keys, plain, last)
    else:
        indices = plain(last)
    values = jnp.take_along_axis(last, indices, axis=-1, mode="promise_in_bounds")
    return jnp.moveaxis(values, -1, axis), jnp.moveaxis(indices.astype(np.int32), -1, axis)
