"""Arg-max and arg-min over one or more axes (DML_ARGMAX/ARGMIN, ONNX ArgMax/ArgMin).

The public functions validate the axes; `_arg_reduce_impl` moves the reduced axes last,
flattens them (row-major, as DirectML numbers an index over several axes), and takes
`jnp.argmax` of the integer keys of `dmljax._ops.selection.order_keys`: the first of the greatest
key, exact on every platform. The last index on ties is the first of the flipped axis.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from dmljax._core.errors import fail
from dmljax._core.markers import mark, traced
from dmljax._ops.common.indices import as_data, check_axis, check_rank
from dmljax._ops.selection.order_keys import check_ordered, order_key

__all__ = ["argmax", "argmax_validated", "argmin", "argmin_validated"]

Axes = int | Sequence[int] | None


def argmax(
    x: jax.typing.ArrayLike, axis: Axes = None, *, keepdims: bool = False, select_last_index: bool = False
) -> jax.Array:
    """Index of the largest element over ``axis``: DML_ARGMAX_OPERATOR_DESC, ONNX ArgMax.

    ``axis`` is one axis or several (DirectML's ``Axes``; ``None``: all). Over several
    axes the index is row-major within the reduced axes: over all axes of a 3x3 input,
    the element at ``[2, 1]`` is index 7. On ties the first index wins, or the last with
    ``select_last_index`` (DirectML's ``AxisDirection`` INCREASING / DECREASING, ONNX's
    ``select_last_index``). ``-0.0`` ties ``+0.0``. NaN counts as greater than every number
    (the order of `top_k`, and where NumPy's ``argmax`` puts it too): the first (last) NaN
    wins. onnxruntime's ArgMax instead skips a NaN that is not the first element;
    docs/semantics.md.

    Args:
      x: array of 1 to 8 dimensions of a real `DataType` (DirectML lists FLOAT32, FLOAT16,
        INT32, INT16, INT8, UINT32, UINT16, UINT8).
      axis: an int, a sequence (or 1-D integer array) of distinct ints in ``[-r, r)``, or
        ``None`` for all axes.
      keepdims: keep each reduced axis with size 1 (DirectML's output always does).
      select_last_index: the last index on ties instead of the first.

    Returns:
      int32 array: ``x``'s shape without the reduced axes (size 1 with ``keepdims``).

    Raises:
      ValidationError: a rank or axis breaks its rule (repeated, traced, out of range),
        or a flag is not a bool.
      TypeError: ``x`` is complex or of an unsupported type.

    Examples:
      >>> x = jnp.array([[1.0, 2.0, 3.0], [3.0, 0.0, 4.0], [2.0, 5.0, 2.0]])
      >>> argmax(x, 0), argmax(x, (0, 1), keepdims=True)
      (Array([1, 2, 1], dtype=int32), Array([[7]], dtype=int32))
      >>> argmax(jnp.array([3, 2, 1, 2, 3]), 0, select_last_index=True)
      Array(4, dtype=int32)
    """
    return _arg_reduce("argmax", x, axis, keepdims, select_last_index)


def argmin(
    x: jax.typing.ArrayLike, axis: Axes = None, *, keepdims: bool = False, select_last_index: bool = False
) -> jax.Array:
    """Index of the smallest element over ``axis``: DML_ARGMIN_OPERATOR_DESC, ONNX ArgMin.

    As `argmax`, with the least element winning. NaN counts as greater than every number,
    so it never wins unless every element is NaN (the order of `top_k` with
    ``largest=False``; NumPy's ``argmin`` returns the first NaN instead).

    Args:
      x: as `argmax`.
      axis: as `argmax`.
      keepdims: as `argmax`.
      select_last_index: as `argmax`.

    Returns:
      As `argmax`.

    Raises:
      ValidationError: as `argmax`.
      TypeError: as `argmax`.

    Examples:
      >>> argmin(jnp.array([3.0, 1.0, jnp.nan, 1.0]), 0), argmin(jnp.array([3, 1, 1]), 0, select_last_index=True)
      (Array(1, dtype=int32), Array(2, dtype=int32))
    """
    return _arg_reduce("argmin", x, axis, keepdims, select_last_index)


def _arg_reduce(op: str, x: Any, axis: Any, keepdims: Any, select_last_index: Any) -> jax.Array:
    x = as_data(op, "x", x)
    check_rank(op, "x", x.shape)
    check_ordered(op, x)
    axes = _check_axes(op, axis, x.shape)
    for name, flag in (("keepdims", keepdims), ("select_last_index", select_last_index)):
        if not isinstance(flag, bool | np.bool_):
            raise fail(op, name, "be a bool", flag, f"x shape {x.shape}")
    if math.prod(x.shape[a] for a in axes) == 0:
        raise fail(op, "x.shape", "have no empty reduced axis", x.shape, f"axes {axes}")
    params = {"axes": axes, "keepdims": bool(keepdims), "last": bool(select_last_index), "largest": op == "argmax"}
    out = _arg_reduce_impl(x, **params)
    return mark(out, x, op="arg_reduce", **params) if traced(out, x) else out


def argmax_validated(x: jax.Array, axes: tuple[int, ...], keepdims: bool, select_last_index: bool) -> jax.Array:
    """`argmax`'s trace of arguments the descriptor layer validated (``axes`` sorted, in ``[0, r)``): no checks."""
    params = {"axes": axes, "keepdims": keepdims, "last": select_last_index, "largest": True}
    return mark(_arg_reduce_impl(x, **params), x, op="arg_reduce", **params)


def argmin_validated(x: jax.Array, axes: tuple[int, ...], keepdims: bool, select_last_index: bool) -> jax.Array:
    """`argmin`'s trace of arguments the descriptor layer validated (``axes`` sorted, in ``[0, r)``): no checks."""
    params = {"axes": axes, "keepdims": keepdims, "last": select_last_index, "largest": False}
    return mark(_arg_reduce_impl(x, **params), x, op="arg_reduce", **params)


def _check_axes(op: str, axis: Any, shape: tuple[int, ...]) -> tuple[int, ...]:
    """The reduced axes, sorted, each in ``[0, rank)``; none repeated."""
    context = f"x shape {shape}"
    if axis is None:
        return tuple(range(len(shape)))
    if isinstance(axis, np.ndarray | jax.Array) and not isinstance(axis, jax.core.Tracer) and axis.ndim == 1:
        axis = tuple(axis.tolist())  # NumPy's spelling of several axes, as a tuple
    many = isinstance(axis, Sequence) and not isinstance(axis, str)
    axes = tuple(check_axis(op, a, len(shape), context) for a in (axis if many else (axis,)))
    if not axes or len(set(axes)) != len(axes):
        raise fail(op, "axis", "name at least one axis, none twice", axis, context)
    return tuple(sorted(axes))


@functools.partial(jax.jit, static_argnames=("axes", "keepdims", "last", "largest"))
def _arg_reduce_impl(x: jax.Array, *, axes: tuple[int, ...], keepdims: bool, last: bool, largest: bool) -> jax.Array:
    """`jnp.argmax` of the order keys over the reduced axes flattened row-major."""
    kept = tuple(d for d in range(x.ndim) if d not in axes)
    size = math.prod(x.shape[a] for a in axes)
    keys = order_key(x, largest=largest).transpose(kept + axes).reshape(tuple(x.shape[d] for d in kept) + (size,))
    if last:
        keys = lax.rev(keys, (keys.ndim - 1,))
    index = jnp.argmax(keys, axis=-1).astype(np.int32)
    if last:
        index = np.int32(size - 1) - index
    if keepdims:
        index = index.reshape(tuple(1 if d in axes else n for d, n in enumerate(x.shape)))
    return index
