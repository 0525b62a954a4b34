"""Cumulative sum and product in sequence: DML_CUMULATIVE_SUMMATION, DML_CUMULATIVE_PRODUCT.

DirectML and onnxruntime (CumSum) keep a running tally along the axis, one element after
the other. `jnp.cumsum` does not: XLA computes it as a parallel scan (on the CPU too), so
floating-point results differ in their last bits. Here the tally is one `lax.scan` along
the axis, vectorised over every other axis: ``y[0] = x[0]``, ``y[i] = y[i-1] op x[i]``,
each partial result rounded to the data type, exactly the loop. The depth is the axis
length; the cost against `jnp.cumsum` is measured in docs/design/cumulative-in-order.md.
Gradients are JAX's own of that scan: a sequential reverse scan, exact, and for the
product free of any division (a zero input gives the exact gradient).
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from dmljax._core.errors import fail
from dmljax._core.markers import mark, traced
from dmljax._core.platform import cpu_or_plain
from dmljax._ops.common.indices import as_data, check_axis, check_rank, type_fail

__all__ = [
    "cumulative_product",
    "cumulative_product_validated",
    "cumulative_sum",
    "cumulative_sum_validated",
    "in_order",
    "in_order_last",
]

# Steps of the scan per loop iteration: fewer loop-carried round trips, same order of
# operations (unrolling repeats the body; it never reassociates).
_UNROLL = 8
# Columns per step of `in_order_last` (measured in docs/design/cumulative-in-order.md).
_BLOCK = 8


def cumulative_sum(
    x: jax.typing.ArrayLike, axis: int = 0, *, reverse: bool = False, exclusive: bool = False
) -> jax.Array:
    """Running sum along ``axis``, added in sequence: DML_CUMULATIVE_SUMMATION_OPERATOR_DESC.

    ``y[..., i, ...] = x[..., 0, ...] + x[..., 1, ...] + ... + x[..., i, ...]``, added left
    to right, each partial sum rounded to ``x``'s type: bit for bit the loop DirectML's page
    and ONNX CumSum describe (and onnxruntime runs), on every platform. ``reverse`` is
    DirectML's ``AxisDirection = DECREASING`` (ONNX ``reverse=1``): the tally runs from the
    last element down. ``exclusive`` is ``HasExclusiveSum`` (ONNX ``exclusive=1``): each
    output holds the tally before its own element (0 first). The first output of an
    inclusive sum is the first element itself (a ``-0.0`` stays ``-0.0``). Integers wrap
    around on overflow, as the loop in that type does.

    Args:
      x: array of 1 to 8 dimensions; any numeric `DataType` (DirectML lists FLOAT32,
        FLOAT16, UINT32, UINT16; every other numeric type follows the same loop).
      axis: the axis to sum along, in ``[-r, r)``.
      reverse: sum from the end of the axis (``AxisDirection`` DECREASING).
      exclusive: leave each element out of its own output (``HasExclusiveSum``).

    Returns:
      Array of ``x``'s shape and type.

    Raises:
      ValidationError: ``x`` has no or more than 8 dimensions, ``axis`` is out of range or
        traced, or ``reverse``/``exclusive`` is not a bool.
      TypeError: ``x`` is bool or of an unsupported type.

    Examples:
      >>> x = jnp.array([[2.0, 1.0, 3.0, 5.0], [3.0, 8.0, 7.0, 3.0]])
      >>> cumulative_sum(x, axis=1)
      Array([[ 2.,  3.,  6., 11.],
             [ 3., 11., 18., 21.]], dtype=float32)
      >>> cumulative_sum(x, axis=1, exclusive=True)[0]
      Array([0., 2., 3., 6.], dtype=float32)
      >>> cumulative_sum(x, axis=1, reverse=True)[0]
      Array([11.,  9.,  8.,  5.], dtype=float32)
    """
    return _cumulative("cumulative_sum", x, axis, reverse, exclusive)


def cumulative_product(
    x: jax.typing.ArrayLike, axis: int = 0, *, reverse: bool = False, exclusive: bool = False
) -> jax.Array:
    """Running product along ``axis``, multiplied in sequence: DML_CUMULATIVE_PRODUCT_OPERATOR_DESC.

    ``y[..., i, ...] = x[..., 0, ...] * ... * x[..., i, ...]``, multiplied left to right,
    each partial product rounded to ``x``'s type (the loop of DirectML's page). ``reverse``
    is ``AxisDirection = DECREASING``; ``exclusive`` is ``HasExclusiveProduct`` (1 first).
    The gradient is exact and divides by nothing: a zero in ``x`` gives the true gradient,
    not NaN. ONNX has no cumulative product operator.

    Args:
      x: array of 1 to 8 dimensions; any numeric `DataType` (DirectML lists FLOAT32,
        FLOAT16, UINT32, UINT16).
      axis: the axis to multiply along, in ``[-r, r)``.
      reverse: multiply from the end of the axis (``AxisDirection`` DECREASING).
      exclusive: leave each element out of its own output (``HasExclusiveProduct``).

    Returns:
      Array of ``x``'s shape and type.

    Raises:
      ValidationError: as `cumulative_sum`.
      TypeError: as `cumulative_sum`.

    Examples:
      >>> x = jnp.array([2.0, 1.0, 3.0, 5.0])
      >>> cumulative_product(x)
      Array([ 2.,  2.,  6., 30.], dtype=float32)
      >>> cumulative_product(x, exclusive=True, reverse=True)
      Array([15., 15.,  5.,  1.], dtype=float32)
      >>> jax.grad(lambda v: cumulative_product(v)[-1])(jnp.array([2.0, 0.0, 3.0]))
      Array([0., 6., 0.], dtype=float32)
    """
    return _cumulative("cumulative_product", x, axis, reverse, exclusive)


def _cumulative(op: str, x: Any, axis: Any, reverse: Any, exclusive: Any) -> jax.Array:
    """Validate the static facts, then run the one jitted scan."""
    x = as_data(op, "x", x)
    check_rank(op, "x", x.shape)
    if x.dtype == np.bool_:
        raise type_fail(op, "x.dtype", "be numeric (not bool)", x.dtype)
    axis = check_axis(op, axis, x.ndim, f"x shape {x.shape}")
    for name, flag in (("reverse", reverse), ("exclusive", exclusive)):
        if not isinstance(flag, bool | np.bool_):
            raise fail(op, name, "be a bool", flag, f"x shape {x.shape}")
    params = {"axis": axis, "reverse": bool(reverse), "exclusive": bool(exclusive)}
    out = _cumulative_impl(x, **params, product=op == "cumulative_product")
    return mark(out, x, op=op, **params) if traced(out, x) else out


def cumulative_sum_validated(x: jax.Array, axis: int, reverse: bool, exclusive: bool) -> jax.Array:
    """`cumulative_sum`'s trace of arguments the descriptor layer validated (axis in ``[0, r)``): no checks."""
    out = _cumulative_impl(x, axis=axis, reverse=reverse, exclusive=exclusive, product=False)
    return mark(out, x, op="cumulative_sum", axis=axis, reverse=reverse, exclusive=exclusive)


def cumulative_product_validated(x: jax.Array, axis: int, reverse: bool, exclusive: bool) -> jax.Array:
    """`cumulative_product`'s trace of arguments the descriptor layer validated (axis in ``[0, r)``): no checks."""
    out = _cumulative_impl(x, axis=axis, reverse=reverse, exclusive=exclusive, product=True)
    return mark(out, x, op="cumulative_product", axis=axis, reverse=reverse, exclusive=exclusive)


@functools.partial(jax.jit, static_argnames=("axis", "reverse", "exclusive", "product"))
def _cumulative_impl(x: jax.Array, *, axis: int, reverse: bool, exclusive: bool, product: bool) -> jax.Array:
    """The in-order tally on validated arguments: `in_order` along axis 0, then moved back."""
    if x.shape[axis] == 0:
        return x
    if x.ndim >= 2 and axis == x.ndim - 1:  # XLA CPU: columns in blocks, no element transposes
        blocks = functools.partial(in_order_last, reverse=reverse, exclusive=exclusive, product=product)
        moved = functools.partial(_moved_in_order, axis=axis, reverse=reverse, exclusive=exclusive, product=product)
        return cpu_or_plain(blocks, moved, x)
    return _moved_in_order(x, axis=axis, reverse=reverse, exclusive=exclusive, product=product)


def _moved_in_order(x: jax.Array, *, axis: int, reverse: bool, exclusive: bool, product: bool) -> jax.Array:
    """`in_order` along ``axis`` moved to the front, then moved back."""
    xs = jnp.moveaxis(x, axis, 0)
    ys = in_order(xs, reverse=reverse, exclusive=exclusive, product=product)
    return jnp.moveaxis(ys, 0, axis)


def in_order(xs: jax.Array, *, reverse: bool, exclusive: bool, product: bool) -> jax.Array:
    """The loop along axis 0 of a non-empty array: ``y[0] = x[0]``, ``y[i] = y[i-1] op x[i]``.

    An exclusive tally is the inclusive one shifted by one, the identity (0 or 1) first;
    a reverse one runs the same loop from the last element (`lax.scan` with ``reverse``).
    """
    combine = lax.mul if product else lax.add

    def step(carry: jax.Array, value: jax.Array) -> tuple[jax.Array, jax.Array]:
        new = combine(carry, value)
        return new, new

    first, rest = (xs[-1], xs[:-1]) if reverse else (xs[0], xs[1:])
    _, tally = lax.scan(step, first, rest, reverse=reverse, unroll=_UNROLL)
    ends = [tally, first[None]] if reverse else [first[None], tally]
    inclusive = jnp.concatenate(ends, axis=0)
    if not exclusive:
        return inclusive
    identity = jnp.full((1, *xs.shape[1:]), 1 if product else 0, xs.dtype)
    shifted = [inclusive[1:], identity] if reverse else [identity, inclusive[:-1]]
    return jnp.concatenate(shifted, axis=0)


def in_order_last(x: jax.Array, *, reverse: bool, exclusive: bool, product: bool) -> jax.Array:
    """`in_order`'s loop along the last axis, ``_BLOCK`` columns per scan step, without element transposes.

    The rows are cut into blocks of ``_BLOCK`` adjacent columns; one scan step carries each
    row's tally through a block's columns one after the other (the loop's order, nothing
    reassociated), so only whole blocks move, not single elements. The tally starts from
    the identity, which changes no bits: ``-0.0 + v`` is ``v`` for every float ``v``
    (``-0.0`` and NaN included), ``0 + v`` for integers, ``1 * v`` for products. A last
    axis that is no multiple of ``_BLOCK`` is padded after its end (before its start when
    ``reverse``), where the tally has passed every element already, and cut back.
    Gradients are JAX's own of the scan (a reverse scan, in order, division-free).

    Examples:
      >>> x = jnp.arange(1.0, 11.0).reshape(1, 10)
      >>> in_order_last(x, reverse=False, exclusive=False, product=False)
      Array([[ 1.,  3.,  6., 10., 15., 21., 28., 36., 45., 55.]], dtype=float32)
      >>> in_order_last(x, reverse=True, exclusive=True, product=False)
      Array([[54., 52., 49., 45., 40., 34., 27., 19., 10.,  0.]], dtype=float32)
    """
    n = x.shape[-1]
    rows = x.reshape(-1, n)
    pad = -n % _BLOCK
    if pad:
        rows = jnp.pad(rows, ((0, 0), (pad, 0) if reverse else (0, pad)))
    count, width = rows.shape
    blocks = jnp.moveaxis(rows.reshape(count, width // _BLOCK, _BLOCK), 1, 0)
    combine = lax.mul if product else lax.add
    order = range(_BLOCK - 1, -1, -1) if reverse else range(_BLOCK)

    def step(carry: jax.Array, block: jax.Array) -> tuple[jax.Array, jax.Array]:
        columns: list[Any] = [None] * _BLOCK
        for k in order:
            carry = combine(carry, block[:, k])
            columns[k] = carry
        return carry, jnp.stack(columns, axis=-1)

    identity = 1 if product else (-0.0 if jnp.issubdtype(x.dtype, jnp.floating) else 0)
    _, tallies = lax.scan(step, jnp.full((count,), identity, x.dtype), blocks, reverse=reverse)
    tally = jnp.moveaxis(tallies, 0, 1).reshape(count, width)
    tally = tally[:, pad:] if reverse else tally[:, :n]
    inclusive = tally.reshape(x.shape)
    if not exclusive:
        return inclusive
    first = jnp.full((*x.shape[:-1], 1), 1 if product else 0, x.dtype)
    shifted = [inclusive[..., 1:], first] if reverse else [first, inclusive[..., :-1]]
    return jnp.concatenate(shifted, axis=-1)
