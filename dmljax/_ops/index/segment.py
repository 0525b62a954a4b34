"""Segment reductions in JAX's convention (``jax.ops.segment_sum``), combined in index order.

``segment_<f>(data, segment_ids, num_segments)`` is ONNX ScatterND with a reduction: an
output of ``(num_segments,) + data.shape[1:]`` holding the reduction's identity (sum 0,
prod 1, max the type's lowest value, min its highest: ``-inf``/``+inf`` for floats, as
JAX's), then ``out[segment_ids[i]] = f(out[segment_ids[i]], data[i])`` for ``i = 0, 1, ...``
in order. Each function validates its arguments and calls the very path of `scatter_nd`
(`dmljax._ops.index.nd.scatter_nd_with_policy` with ``segment_ids[:, None]``), so every segment
reduction combines as `dmljax._ops.ordered.reductions.combine` does: in the loop's order, bit for
bit, on every platform and device count; it is marked as ``scatter_nd`` in a trace, so
`dmljax.onnx.export` writes a ScatterND with ``reduction``. `segment_mean` is the ordered
sum divided by the count of each segment, at least 1 (jraph's convention).

Segment ids follow JAX's segment operations, not dmljax's index rules: the valid range is
``[0, num_segments)`` (a negative id never counts from the end), and by default an id
outside it is dropped, concrete or traced (JAX's ``FILL_OR_DROP``). ``mode`` chooses
otherwise (`IndexMode`): ``"clip"`` combines into the nearest segment (negative ids: 0),
``"promise_in_bounds"`` promises every id valid, ``"checked"`` raises `IndexError` for a
bad concrete id and adds a checkify check for traced ones (then drops); compiled without
`checkify.checkify`, that check raises `ValidationError` naming the function, as
`scatter_nd`'s does.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from dmljax._ops.common.indices import IndexMode, IndexPolicy, as_data, check_rank, type_fail
from dmljax._ops.index.nd import scatter_nd_with_policy
from dmljax._ops.index.segment_ids import Segments, validate_segments

__all__ = ["segment_max", "segment_mean", "segment_min", "segment_prod", "segment_sum"]


def segment_sum(
    data: jax.typing.ArrayLike,
    segment_ids: jax.typing.ArrayLike,
    num_segments: int | None = None,
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    *,
    mode: IndexMode | str | None = None,
) -> jax.Array:
    """Sum ``data``'s rows per segment, in index order: ``jax.ops.segment_sum``, deterministic.

    ``out = zeros((num_segments,) + data.shape[1:])``, then ``out[segment_ids[i]] +=
    data[i]`` for ``i = 0, 1, ...`` in order (ONNX ScatterND with ``reduction="add"``): bit
    for bit the same on every platform, device count and run, where XLA's scatter-add
    (``jax.ops.segment_sum``) combines in no defined order. An empty segment gives 0.
    bool data: ``or``. Integer sums wrap.

    Segment ids: valid in ``[0, num_segments)``; others are dropped by default (JAX's
    convention, concrete ids too), see ``mode``.

    Gradients: the cotangent of ``out[s]`` flows to every row ``i`` with
    ``segment_ids[i] == s`` (zero for dropped rows); any order.

    Args:
      data: array of 1 to 8 dimensions, any `DataType`; axis 0 runs over the ids.
      segment_ids: 1-D int32, int64, uint32 or uint64 array of ``data.shape[0]`` ids.
      num_segments: the number of segments, a static int ``>= 0`` (or a `jax.export`
        symbolic size). None: ``max(segment_ids) + 1``, which needs concrete ids (not under
        `jax.jit`, as in JAX).
      indices_are_sorted: a promise that ``segment_ids`` are nondecreasing; the ordered
        formulation then skips its sort. A false promise gives unspecified results.
      unique_indices: a promise that no two rows share a segment, so one plain scatter
        suffices. A false promise gives unspecified results.
      mode: ``None`` or ``"drop"``/``"fill"`` (drop bad ids), ``"clip"``,
        ``"promise_in_bounds"`` or ``"checked"`` (`dmljax.IndexMode`).

    Returns:
      Array of ``(num_segments,) + data.shape[1:]``, ``data``'s type.

    Raises:
      ValidationError: a rank, shape, ``num_segments``, flag or ``mode`` breaks its rule.
      TypeError: ``data`` or ``segment_ids`` has an unsupported type.
      IndexError: ``mode="checked"`` and a concrete id lies outside ``[0, num_segments)``.

    Examples:
      >>> data = jnp.array([1.0, 2.0, 3.0, 4.0])
      >>> segment_sum(data, np.array([0, 0, 2, -1]), num_segments=3)  # -1: dropped
      Array([3., 0., 3.], dtype=float32)
      >>> u = jnp.array([1e8, 1.0, -1e8])  # float32: index order, (1e8 + 1) - 1e8
      >>> segment_sum(u, np.array([0, 0, 0]))
      Array([0.], dtype=float32)
    """
    return _segment("segment_sum", "add", data, segment_ids, num_segments, indices_are_sorted, unique_indices, mode)


def segment_prod(
    data: jax.typing.ArrayLike,
    segment_ids: jax.typing.ArrayLike,
    num_segments: int | None = None,
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    *,
    mode: IndexMode | str | None = None,
) -> jax.Array:
    """Multiply ``data``'s rows per segment, in index order: ``jax.ops.segment_prod``, deterministic.

    ``out = ones(...)``, then ``out[segment_ids[i]] *= data[i]`` in order (ScatterND
    ``reduction="mul"``). An empty segment gives 1. bool data: ``and``. Arguments, ids and
    errors as `segment_sum`.

    Gradients: the product rule, without dividing by any row (zeros are exact).

    Args:
      data: array of 1 to 8 dimensions, any `DataType`.
      segment_ids: 1-D int32, int64, uint32 or uint64 array of ``data.shape[0]`` ids.
      num_segments: static int ``>= 0``, or None (``max(segment_ids) + 1``, concrete ids).
      indices_are_sorted: the ids are promised nondecreasing.
      unique_indices: the ids are promised distinct.
      mode: as `segment_sum`.

    Returns:
      Array of ``(num_segments,) + data.shape[1:]``, ``data``'s type.

    Raises:
      ValidationError: a rank, shape, ``num_segments``, flag or ``mode`` breaks its rule.
      TypeError: ``data`` or ``segment_ids`` has an unsupported type.
      IndexError: ``mode="checked"`` and a concrete id lies outside ``[0, num_segments)``.

    Examples:
      >>> segment_prod(jnp.array([2.0, 3.0, 4.0]), np.array([1, 1, 0]), num_segments=3)
      Array([4., 6., 1.], dtype=float32)
    """
    return _segment("segment_prod", "mul", data, segment_ids, num_segments, indices_are_sorted, unique_indices, mode)


def segment_max(
    data: jax.typing.ArrayLike,
    segment_ids: jax.typing.ArrayLike,
    num_segments: int | None = None,
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    *,
    mode: IndexMode | str | None = None,
) -> jax.Array:
    """The maximum of ``data``'s rows per segment: ``jax.ops.segment_max``, ScatterND ``"max"``.

    ``out`` starts at the type's lowest value (``-inf`` for floats, the integer minimum,
    ``False``), which an empty segment keeps, as in JAX; then each row is combined with
    `scatter_nd`'s ``"max"`` in index order, NaN and signed zeros as `scatter_nd`
    documents them. Arguments, ids and errors as `segment_sum`.

    Gradients: the cotangent of ``out[s]`` goes whole to the one row the maximum is taken
    from, the last of equal maxima in index order, and is zero for every other row.
    ``jax.ops.segment_max`` shares it among tied rows instead, so swapping one for the other
    changes the gradients of ties (not the values): for rows ``[2.0, 2.0, 1.0]`` in one
    segment, dmljax gives ``[0, 1, 0]`` where JAX gives ``[0.5, 0.5, 0]``.

    Args:
      data: array of 1 to 8 dimensions, any real `DataType` (not complex).
      segment_ids: 1-D int32, int64, uint32 or uint64 array of ``data.shape[0]`` ids.
      num_segments: static int ``>= 0``, or None (``max(segment_ids) + 1``, concrete ids).
      indices_are_sorted: the ids are promised nondecreasing.
      unique_indices: the ids are promised distinct.
      mode: as `segment_sum`.

    Returns:
      Array of ``(num_segments,) + data.shape[1:]``, ``data``'s type.

    Raises:
      ValidationError: a rank, shape, ``num_segments``, flag or ``mode`` breaks its rule.
      TypeError: ``data`` is complex, or a type is unsupported.
      IndexError: ``mode="checked"`` and a concrete id lies outside ``[0, num_segments)``.

    Examples:
      >>> segment_max(jnp.array([1.0, 5.0, 3.0]), np.array([0, 0, 2]), num_segments=3)
      Array([  5., -inf,   3.], dtype=float32)
      >>> jax.grad(lambda d: segment_max(d, np.array([0, 0, 0]), 1).sum())(jnp.array([2.0, 2.0, 1.0]))
      Array([0., 1., 0.], dtype=float32)
    """
    return _segment("segment_max", "max", data, segment_ids, num_segments, indices_are_sorted, unique_indices, mode)


def segment_min(
    data: jax.typing.ArrayLike,
    segment_ids: jax.typing.ArrayLike,
    num_segments: int | None = None,
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    *,
    mode: IndexMode | str | None = None,
) -> jax.Array:
    """The minimum of ``data``'s rows per segment: ``jax.ops.segment_min``, ScatterND ``"min"``.

    ``out`` starts at the type's highest value (``+inf`` for floats, the integer maximum,
    ``True``), which an empty segment keeps, as in JAX; then each row is combined with
    `scatter_nd`'s ``"min"`` in index order. Arguments, ids and errors as `segment_max`.

    Gradients: the cotangent of ``out[s]`` goes whole to the last of the tied minima in
    index order (``jax.ops.segment_min`` shares it among them): for rows ``[1.0, 3.0, 1.0]``
    in one segment, dmljax gives ``[0, 0, 1]`` where JAX gives ``[0.5, 0, 0.5]``.

    Args:
      data: array of 1 to 8 dimensions, any real `DataType` (not complex).
      segment_ids: 1-D int32, int64, uint32 or uint64 array of ``data.shape[0]`` ids.
      num_segments: static int ``>= 0``, or None (``max(segment_ids) + 1``, concrete ids).
      indices_are_sorted: the ids are promised nondecreasing.
      unique_indices: the ids are promised distinct.
      mode: as `segment_sum`.

    Returns:
      Array of ``(num_segments,) + data.shape[1:]``, ``data``'s type.

    Raises:
      ValidationError: a rank, shape, ``num_segments``, flag or ``mode`` breaks its rule.
      TypeError: ``data`` is complex, or a type is unsupported.
      IndexError: ``mode="checked"`` and a concrete id lies outside ``[0, num_segments)``.

    Examples:
      >>> segment_min(jnp.array([4, 2, 7], jnp.int32), np.array([1, 1, 0]), num_segments=3)
      Array([         7,          2, 2147483647], dtype=int32)
      >>> jax.grad(lambda d: segment_min(d, np.array([0, 0, 0]), 1).sum())(jnp.array([1.0, 3.0, 1.0]))
      Array([0., 0., 1.], dtype=float32)
    """
    return _segment("segment_min", "min", data, segment_ids, num_segments, indices_are_sorted, unique_indices, mode)


def segment_mean(
    data: jax.typing.ArrayLike,
    segment_ids: jax.typing.ArrayLike,
    num_segments: int | None = None,
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    *,
    mode: IndexMode | str | None = None,
) -> jax.Array:
    """The mean of ``data``'s rows per segment: `segment_sum` divided by the segment's row count.

    The sum is `segment_sum`'s (index order, bit for bit); the count is an exact integer
    count of the rows that reach the segment (dropped ids do not count), converted to
    ``data``'s type and at least 1, so an empty segment gives 0 (jraph's
    ``segment_mean``). Arguments, ids and errors as `segment_sum`.

    Args:
      data: array of 1 to 8 dimensions, a float or complex `DataType`.
      segment_ids: 1-D int32, int64, uint32 or uint64 array of ``data.shape[0]`` ids.
      num_segments: static int ``>= 0``, or None (``max(segment_ids) + 1``, concrete ids).
      indices_are_sorted: the ids are promised nondecreasing.
      unique_indices: the ids are promised distinct.
      mode: as `segment_sum`.

    Returns:
      Array of ``(num_segments,) + data.shape[1:]``, ``data``'s type.

    Raises:
      ValidationError: a rank, shape, ``num_segments``, flag or ``mode`` breaks its rule.
      TypeError: ``data`` is an integer or bool array, or a type is unsupported.
      IndexError: ``mode="checked"`` and a concrete id lies outside ``[0, num_segments)``.

    Examples:
      >>> segment_mean(jnp.array([1.0, 2.0, 6.0]), np.array([0, 0, 2]), num_segments=3)
      Array([1.5, 0. , 6. ], dtype=float32)
    """
    op = "segment_mean"
    data = as_data(op, "data", data)
    check_rank(op, "data", data.shape)
    if np.dtype(data.dtype).kind not in "fcV":  # V: bfloat16
        raise type_fail(op, "data.dtype", "be a float or complex type (a mean of integers is not one)", data.dtype)
    segments = validate_segments(op, data.shape, segment_ids, num_segments, indices_are_sorted, unique_indices, mode)
    total = _reduce(op, "add", data, segments)
    # The count at full shape: XLA rewrites a division by a broadcast as a product with its
    # reciprocal, which may round otherwise than the quotient. The ones depend on ``data`` (a
    # select between equal operands, which XLA drops) so that under `jax.vmap` of ``data``
    # with shared ids they carry the batch axis too, and the count keeps ``total``'s shape.
    one = np.ones((), np.uint32)
    ones = jnp.where(data == data, one, one)
    count = _reduce(op, "add", ones, segments)
    return total / lax.convert_element_type(jnp.maximum(count, np.uint32(1)), data.dtype)


def _segment(
    op: str,
    reduction: str,
    data: Any,
    segment_ids: Any,
    num_segments: Any,
    indices_are_sorted: Any,
    unique_indices: Any,
    mode: Any,
) -> jax.Array:
    """Validate; then ScatterND of ``data`` at ``segment_ids[:, None]`` into the identity."""
    data = as_data(op, "data", data)
    check_rank(op, "data", data.shape)
    if reduction in ("max", "min") and np.dtype(data.dtype).kind == "c":
        raise type_fail(op, "data.dtype", "be a real type (max and min need an order)", data.dtype)
    segments = validate_segments(op, data.shape, segment_ids, num_segments, indices_are_sorted, unique_indices, mode)
    return _reduce(op, reduction, data, segments)


def _reduce(op: str, reduction: str, data: jax.Array, segments: Segments) -> jax.Array:
    """ScatterND of ``data`` at the validated ``segments`` into the reduction's identity."""
    shape = (segments.n, *data.shape[1:])
    if segments.tuples is None:
        return jnp.zeros(shape, data.dtype)
    init = jnp.full(shape, _identity(reduction, data.dtype), data.dtype)
    plain = IndexPolicy(segments.mode, eager_check=False, checkify=False)
    # The ids as given too (``row_ids``), where they are dropped outside ``[0, n)``: XLA CPU's row
    # scatter drops them itself, with no converted copy. Host ids of a type JAX would narrow
    # (int64 with x64 off) go only as the unsigned tuples, decided at full width.
    ids = segments.ids
    as_given = ids is not None and np.dtype(ids.dtype) == jax.dtypes.canonicalize_dtype(ids.dtype)
    row_ids = ids if as_given and segments.mode is not IndexMode.CLIP else None
    return scatter_nd_with_policy(
        op,
        init,
        segments.tuples,
        data,
        reduction=reduction,
        policy=plain,
        indices_are_sorted=segments.indices_are_sorted,
        unique_indices=segments.unique_indices,
        row_ids=row_ids,
    )


def _identity(reduction: str, dtype: np.dtype) -> Any:
    """The reduction's identity in ``dtype``, JAX's segment initial values."""
    dtype = np.dtype(dtype)
    if reduction == "add":
        return np.zeros((), dtype)
    if reduction == "mul":
        return np.ones((), dtype)
    if dtype == np.dtype(bool):
        return np.asarray(reduction == "min")
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return np.asarray(info.min if reduction == "max" else info.max, dtype)
    return np.asarray(-np.inf if reduction == "max" else np.inf, dtype)
