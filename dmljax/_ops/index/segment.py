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
bad concrete id and adds a checkify check for traced ones (then drops).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.experimental import checkify

from dmljax._core.dtypes import as_data_type, x64_enabled
from dmljax._core.errors import fail
from dmljax._core.limits import UINT32_MAX
from dmljax._ops.common.indices import (
    INDEX_TYPES,
    IndexMode,
    IndexPolicy,
    as_data,
    check_rank,
    type_fail,
)
from dmljax._ops.index.nd import scatter_nd_with_policy

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
    `scatter_nd`'s ``"max"`` in index order, NaN, signed zeros and gradients (ties) as
    `scatter_nd` documents them. Arguments, ids and errors as `segment_sum`.

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
    prepared = _prepare(op, data.shape, segment_ids, num_segments, indices_are_sorted, unique_indices, mode)
    total = _scatter(prepared, "add", data)
    count = _scatter(prepared, "add", jnp.ones(data.shape[:1], np.uint32))  # one per segment, not per element
    divisor = lax.convert_element_type(jnp.maximum(count, np.uint32(1)), data.dtype)
    divisor = lax.broadcast_in_dim(divisor, total.shape, (0,))
    # XLA rewrites a division by a broadcast as a product with its reciprocal, which may round
    # otherwise than the quotient: the barrier keeps the divisor opaque, so the quotient is exact.
    return total / lax.optimization_barrier(divisor)


class _Prepared(NamedTuple):
    """A segment reduction's validated arguments (`_prepare`)."""

    op: str
    ids: jax.Array | np.ndarray  # as given
    num_segments: Any
    sorted_: bool
    unique: bool
    policy: IndexPolicy


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
    prepared = _prepare(op, data.shape, segment_ids, num_segments, indices_are_sorted, unique_indices, mode)
    return _scatter(prepared, reduction, data)


def _prepare(
    op: str,
    shape: tuple[int, ...],
    segment_ids: Any,
    num_segments: Any,
    indices_are_sorted: Any,
    unique_indices: Any,
    mode: Any,
) -> _Prepared:
    """Validate the ids, flags, mode and ``num_segments`` for ``data`` of ``shape``; check the ids
    under ``mode="checked"``."""
    ids = _as_ids(op, segment_ids, shape)
    sorted_ = _flag(op, "indices_are_sorted", indices_are_sorted)
    unique = _flag(op, "unique_indices", unique_indices)
    policy = _policy(op, mode)
    n = _num_segments(op, num_segments, ids)
    if (policy.checkify or policy.eager_check) and not (isinstance(n, int) and n == 0):
        _check_ids(op, ids, n)
    return _Prepared(op, ids, n, sorted_, unique, policy)


def _scatter(prepared: _Prepared, reduction: str, data: jax.Array) -> jax.Array:
    """ScatterND of ``data`` at the ids into the reduction's identity (`scatter_nd_with_policy`).

    The ids go as unsigned tuples (a negative id is never counted from the end) and, where
    they are dropped outside ``[0, num_segments)``, also as given (``row_ids``): XLA CPU's
    row scatter drops them itself, with no converted copy of the ids.
    """
    op, ids, n, policy = prepared.op, prepared.ids, prepared.num_segments, prepared.policy
    shape = (n, *data.shape[1:])
    if isinstance(n, int) and n == 0:  # no segment: nothing lands (scatter_nd needs a non-empty axis)
        return jnp.zeros(shape, data.dtype)
    init = jnp.full(shape, _identity(reduction, data.dtype), data.dtype)
    # Host ids of a type JAX would narrow (int64 with x64 off) go only as the unsigned tuples, decided at full width.
    as_given = np.dtype(ids.dtype) == jax.dtypes.canonicalize_dtype(ids.dtype)
    row_ids = ids if as_given and policy.mode is not IndexMode.CLIP else None
    tuples = _unsigned(ids, policy.mode)[:, None]
    plain = IndexPolicy(policy.mode, eager_check=False, checkify=False)
    return scatter_nd_with_policy(
        op,
        init,
        tuples,
        data,
        reduction=reduction,
        policy=plain,
        indices_are_sorted=prepared.sorted_,
        unique_indices=prepared.unique,
        row_ids=row_ids,
    )


def _as_ids(op: str, segment_ids: Any, shape: tuple[int, ...]) -> jax.Array | np.ndarray:
    """The ids as given (JAX arrays, tracers) or as NumPy (host values), type and shape checked."""
    if not isinstance(segment_ids, jax.Array):
        segment_ids = np.asarray(segment_ids)
    dtype = np.dtype(segment_ids.dtype)
    if dtype.kind not in "iu" or as_data_type(dtype) not in INDEX_TYPES:
        names = ", ".join(t.name for t in INDEX_TYPES)
        raise type_fail(op, "segment_ids.dtype", f"be one of {names}", dtype)
    context = f"data shape {shape}"
    if segment_ids.ndim != 1:
        raise fail(op, "segment_ids.ndim", "be 1 (one id per row of data)", segment_ids.ndim, context)
    if segment_ids.shape[0] != shape[0]:
        raise fail(op, "segment_ids.shape", f"equal (data.shape[0],) ({shape[0]},)", segment_ids.shape, context)
    return segment_ids


def _flag(op: str, param: str, value: Any) -> bool:
    if isinstance(value, jax.core.Tracer) or not isinstance(value, bool | np.bool_):
        raise fail(op, param, "be a static bool (a promise about segment_ids)", value)
    return bool(value)


def _policy(op: str, mode: Any) -> IndexPolicy:
    """JAX's convention: drop by default, concrete ids too; ``"checked"`` checks, then drops."""
    if mode is None:
        return IndexPolicy(IndexMode.FILL, eager_check=False, checkify=False)
    mode = IndexMode.from_any(mode, op)
    if mode is IndexMode.CHECKED:
        return IndexPolicy(IndexMode.FILL, eager_check=True, checkify=True)
    return IndexPolicy(mode, eager_check=False, checkify=False)


def _num_segments(op: str, num_segments: Any, ids: jax.Array | np.ndarray) -> Any:
    """``num_segments`` validated, or ``max(ids) + 1`` (at least 0) from concrete ids."""
    if num_segments is None:
        if isinstance(ids, jax.core.Tracer):
            rule = "be given (a static int) when segment_ids are traced: it fixes the output's shape"
            raise fail(op, "num_segments", rule, None, "under jax.jit, jax.vmap or jax.grad of the ids")
        if ids.shape[0] == 0:
            return 0
        with jax.ensure_compile_time_eval():
            top = int(np.max(ids)) if isinstance(ids, np.ndarray) else int(jnp.max(ids))
        return _in_range(op, max(top + 1, 0))
    if jax.export.is_symbolic_dim(num_segments):
        return num_segments
    if isinstance(num_segments, jax.core.Tracer):
        raise fail(op, "num_segments", "be a static int (not traced): it fixes the output's shape", num_segments)
    if isinstance(num_segments, bool) or not hasattr(num_segments, "__index__"):
        raise fail(op, "num_segments", "be an int or None", num_segments)
    return _in_range(op, int(num_segments))


def _in_range(op: str, n: int) -> int:
    """DirectML's sizes: ``0 <= n``, and below 2^32 unless ``jax_enable_x64`` is on (uint32 positions)."""
    if n < 0:
        raise fail(op, "num_segments", "be >= 0", n)
    if n > UINT32_MAX and not x64_enabled():
        raise fail(op, "num_segments", f"be at most {UINT32_MAX} (2^32 - 1) unless jax_enable_x64 is on", n)
    return n


def _check_ids(op: str, ids: jax.Array | np.ndarray, n: Any) -> None:
    """``mode="checked"``: concrete ids raise `IndexError` for the first outside ``[0, n)``;
    traced ones get a `checkify.check`."""
    template = f"{op}: segment id {{value}} is out of range for num_segments {n} ({{where}}; valid range [0, {n - 1}])."
    if isinstance(ids, jax.core.Tracer):
        bad = _bad(jnp, ids, n)
        first = jnp.argmax(bad)
        message = template.replace("{where}", "segment_ids[{position}]")
        checkify.check(~jnp.any(bad), message, value=ids[first], position=first)
        return
    with jax.ensure_compile_time_eval():
        xp = np if isinstance(ids, np.ndarray) else jnp
        bad = _bad(xp, ids, n)
        if not bool(xp.any(bad)):
            return
        position = int(xp.argmax(bad))
        value = int(ids[position])
    raise IndexError(template.format(value=value, where=f"segment_ids[{position}]"))


def _bad(xp: Any, ids: Any, n: Any) -> Any:
    """Ids outside ``[0, n)``, compared in the ids' own type (``n`` fits it unless it exceeds every id)."""
    info = np.iinfo(ids.dtype)
    if isinstance(n, int) and n > info.max:
        return ids < 0 if info.min < 0 else xp.zeros(ids.shape, bool)
    high = ids >= xp.asarray(n, ids.dtype)
    return (ids < 0) | high if info.min < 0 else high


def _unsigned(ids: jax.Array | np.ndarray, mode: IndexMode) -> jax.Array | np.ndarray:
    """Signed ids as unsigned ones of their width, so that a negative id is never counted from
    the end: two's complement puts it at ``2^w - k >= num_segments`` (dropped), or under
    `IndexMode.CLIP` it is first raised to 0 (JAX clamps it to segment 0)."""
    dtype = np.dtype(ids.dtype)
    if dtype.kind == "u":
        return ids
    unsigned = np.dtype(f"uint{8 * dtype.itemsize}")
    if isinstance(ids, np.ndarray):
        return (np.maximum(ids, 0) if mode is IndexMode.CLIP else ids).astype(unsigned)
    if mode is IndexMode.CLIP:
        ids = jnp.maximum(ids, np.zeros((), dtype))
    return lax.convert_element_type(ids, unsigned)


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
