"""One-hot encoding (DML_ONE_HOT_OPERATOR_DESC, ONNX OneHot).

The public function validates ``depth``, ``values`` and the axis and narrows 64-bit host
indices exactly (`dmljax._ops.common.index_checks.narrow_on_host`); `_one_hot_impl` maps the
indices to positions with `dmljax._ops.common.indices.normalize` (negative ones from the end,
out-of-range ones to positions ``>= depth``, which match no element) and selects the
on or off value where a position equals the new axis' iota.
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from dmljax._core.dtypes import x64_enabled
from dmljax._core.errors import fail
from dmljax._core.limits import MAX_DIMENSIONS, UINT32_MAX
from dmljax._core.markers import mark, traced
from dmljax._ops.common.index_checks import narrow_on_host
from dmljax._ops.common.indices import IndexMode, as_data, as_indices, check_axis, normalize

__all__ = ["one_hot", "one_hot_validated"]


def one_hot(
    indices: jax.typing.ArrayLike,
    depth: int,
    *,
    values: jax.typing.ArrayLike | tuple[Any, Any] = (0, 1),
    axis: int = -1,
) -> jax.Array:
    """One-hot encode ``indices`` along a new axis of ``depth`` elements: DML_ONE_HOT, ONNX OneHot.

    ``output[..., j, ...] = on if j == indices[...] else off``, the new axis at ``axis``
    (ONNX's layout: the output has one more dimension than ``indices``; DirectML's
    IndicesTensor holds that axis with size 1). ``values = (off, on)``: DirectML's
    ValuesTensor element 0 and 1, ONNX's ``values`` input. A negative index of a signed
    type counts from the end (``-1`` is ``depth - 1``; DirectML from feature level 3.0,
    ONNX). An index outside ``[-depth, depth)`` marks nothing: its whole sequence is
    ``off`` (both pages). Every index type is exact at its full width.

    Args:
      indices: int32, int64, uint32 or uint64 array of 0 to 7 dimensions.
      depth: a static int >= 1, the size of the new axis.
      values: ``(off, on)``: two elements of any `DataType`, the output's type (the
        default ``(0, 1)`` gives int32; pass ``jnp.array([0.0, 1.0])`` for float32).
      axis: where the new axis goes, in ``[-(r + 1), r + 1)`` for ``indices`` of rank ``r``.

    Returns:
      Array of ``indices.shape`` with ``depth`` inserted at ``axis``, ``values``' type.

    Raises:
      ValidationError: ``depth``, ``axis`` or the output's rank breaks its rule, or
        ``values`` does not hold exactly two elements.
      TypeError: ``indices`` or ``values`` has an unsupported type.

    Examples:
      >>> one_hot(jnp.array([0, 3, 2]), 4)
      Array([[1, 0, 0, 0],
             [0, 0, 0, 1],
             [0, 0, 1, 0]], dtype=int32)
      >>> one_hot(jnp.array([-3, 100, 3]), 4, values=jnp.array([4.0, 2.0]))
      Array([[4., 2., 4., 4.],
             [4., 4., 4., 4.],
             [4., 4., 4., 2.]], dtype=float32)
      >>> one_hot(jnp.array([0, 2, 1, 0]), 3, axis=0)[:, 0]
      Array([1, 0, 0], dtype=int32)
    """
    op = "one_hot"
    indices = as_indices(op, indices)
    context = f"indices shape {indices.shape}"
    if indices.ndim + 1 > MAX_DIMENSIONS:
        raise fail(
            op, "indices.ndim", f"be at most {MAX_DIMENSIONS - 1} (the output gains an axis)", indices.ndim, context
        )
    axis = check_axis(op, axis, indices.ndim + 1, context)
    depth = _check_depth(op, depth, context)
    values = as_data(op, "values", values)
    if values.size != 2:
        raise fail(op, "values", "hold exactly two elements (off, on)", values.shape, context)
    if isinstance(indices, np.ndarray):
        if indices.dtype.itemsize == 8 and not x64_enabled():
            indices = narrow_on_host(indices, depth, IndexMode.FILL)
        indices = jnp.asarray(indices)
    values = values.reshape(2)
    out = _one_hot_impl(indices, values, depth=depth, axis=axis)
    return mark(out, indices, values, op="one_hot", depth=depth, axis=axis) if traced(out, indices, values) else out


def one_hot_validated(indices: jax.Array, values: jax.Array, depth: int, axis: int) -> jax.Array:
    """`one_hot`'s trace of arguments the descriptor layer validated (``values`` of shape (2,)): no checks."""
    out = _one_hot_impl(indices, values, depth=depth, axis=axis)
    return mark(out, indices, values, op="one_hot", depth=depth, axis=axis)


def _check_depth(op: str, depth: Any, context: str) -> int:
    """``depth`` static, integral, in ``[1, 2^32 - 1]`` (DirectML sizes are UINT32, at least 1)."""
    if isinstance(depth, jax.core.Tracer):
        raise fail(op, "depth", "be a static int (not traced)", depth, f"{context}; mark it static")
    if isinstance(depth, bool) or not hasattr(depth, "__index__"):
        raise fail(op, "depth", "be an integer", depth, context)
    if not 1 <= int(depth) <= UINT32_MAX:
        raise fail(op, "depth", f"be in [1, {UINT32_MAX}]", int(depth), context)
    return int(depth)


@functools.partial(jax.jit, static_argnames=("depth", "axis"))
def _one_hot_impl(indices: jax.Array, values: jax.Array, *, depth: int, axis: int) -> jax.Array:
    """``on`` where the normalised position equals the new axis' iota, else ``off``."""
    position = jnp.expand_dims(normalize(indices, depth, IndexMode.FILL), axis)
    shape = indices.shape[:axis] + (depth,) + indices.shape[axis:]
    hit = position == lax.broadcasted_iota(position.dtype, shape, axis)
    return jnp.where(hit, values[1], values[0])
