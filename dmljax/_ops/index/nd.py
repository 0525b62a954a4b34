"""gather_nd and scatter_nd: ONNX GatherND (11/12/13) and ScatterND (11/13/16/18).

An indices tensor of shape ``(..., k)`` holds tuples of ``k`` indices, each addressing
the first ``k`` dimensions (after ``batch_dims``) of the data. The public functions
validate the static facts, check concrete indices column by column (column ``j`` along
data axis ``batch_dims + j``), then call one jitted array function on the columns, each
normalised by `dmljax._ops.common.indices.normalize` for its own axis: gather_nd is one
`lax.gather` with batching dimensions; scatter_nd with ``reduction="none"`` overwrites whole
slices, one scatter of rows at each tuple's flat row position
(`dmljax._ops.common.positions.flat_targets`), and with a reduction combines at flat element
positions in the ordered combine of `dmljax._ops.ordered.reductions`.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from dmljax._core.errors import fail
from dmljax._core.markers import mark, traced
from dmljax._core.platform import cpu_or_plain
from dmljax._core.typing import IndexArray
from dmljax._ops.common.checked import checkify_in_bounds
from dmljax._ops.common.index_checks import (
    index_range,
    marked_mode,
    prepare_indices,
    raise_out_of_range,
)
from dmljax._ops.common.indices import (
    IndexMode,
    IndexPolicy,
    as_data,
    as_indices,
    as_updates,
    check_axis_size,
    check_rank,
    lax_mode,
    normalize,
    resolve_mode,
    size_scalar,
)
from dmljax._ops.common.positions import flat_dtype, flat_targets, scatter_at
from dmljax._ops.index.gather_grad import linear_in_data, nd_targets, ordered_choice, ordered_tangent
from dmljax._ops.ordered.reductions import Formulation, check_reduction, choose_formulation, combine
from dmljax._ops.ordered.row_fold import fold_rows

__all__ = ["gather_nd", "gather_nd_validated", "scatter_nd", "scatter_nd_validated", "scatter_nd_with_policy"]


def gather_nd(
    data: jax.typing.ArrayLike,
    indices: IndexArray,
    batch_dims: int = 0,
    *,
    mode: IndexMode | str | None = None,
) -> jax.Array:
    """Gather slices of ``data`` addressed by index tuples: ONNX GatherND (opsets 11, 12, 13).

    https://onnx.ai/onnx/operators/onnx__GatherND.html. With ``b = batch_dims`` and
    ``k = indices.shape[-1]``: ``output[i, ...] = data[i[:b] + indices[i] + (...)]`` for
    every ``i`` of ``indices.shape[:-1]``: the first ``b`` dimensions are shared batch
    dimensions, each tuple picks a slice of ``data.shape[b + k:]``. Negative indices count
    from the end of their axis. ONNX calls an index outside ``[-s, s)`` an error: concrete
    indices raise `IndexError` (naming the data axis and the tuple's position); traced ones
    read clamped by default, each index on its own axis, as `gather` does. ``mode`` chooses
    (`dmljax.IndexMode`): ``"clip"`` reads the nearest slice, ``"fill"`` reads 0 for a tuple
    holding any bad index. Every index type is exact at its full width.

    Gradients: ``data``'s adds the cotangent at the gathered tuples in its row-major order,
    as `scatter_nd`'s ``"add"`` reduction does, on every platform and device count.

    Args:
      data: array of 1 to 8 dimensions, any `DataType`.
      indices: int32, int64, uint32 or uint64 array of rank ``q >= 1``; ``indices.shape[:b]
        == data.shape[:b]`` and ``1 <= indices.shape[-1] <= data.ndim - b``.
      batch_dims: ``b``, in ``[0, min(q, r))``.
      mode: ``None`` (check concrete indices, else clip), or a `dmljax.IndexMode` or its
        string: ``"clip"``, ``"fill"``, ``"promise_in_bounds"`` or ``"checked"``.

    Returns:
      Array of ``indices.shape[:-1] + data.shape[b + k:]``, ``data``'s type.

    Raises:
      ValidationError: a rank, shape, ``batch_dims`` or ``mode`` breaks its rule.
      TypeError: ``data`` or ``indices`` has an unsupported type.
      IndexError: concrete indices hold a value out of range (``mode`` None or "checked").

    Examples:
      >>> data = jnp.array([[0, 1], [2, 3]], jnp.int32)
      >>> gather_nd(data, np.array([[0, 0], [1, 1]]))
      Array([0, 3], dtype=int32)
      >>> gather_nd(data, np.array([[1], [-2]]))  # rows; -2: the first
      Array([[2, 3],
             [0, 1]], dtype=int32)
      >>> gather_nd(jnp.arange(8.0).reshape(2, 2, 2), np.array([[1], [0]]), batch_dims=1)
      Array([[2., 3.],
             [4., 5.]], dtype=float32)
      >>> gather_nd(data, np.array([[0, 5]]), mode="fill")
      Array([0], dtype=int32)
    """
    op = "gather_nd"
    data = as_data(op, "data", data)
    check_rank(op, "data", data.shape)
    policy = resolve_mode(op, mode, IndexMode.CLIP)
    indices = as_indices(op, indices)
    b = _check_batch_dims(op, batch_dims, data.shape, indices.shape)
    _check_tuple(op, data.shape, indices.shape, b, "data")
    columns, checked = _columns(op, indices, data, b, policy)
    out = _gather_nd_impl(data, columns, batch_dims=b, mode=policy.mode, checked=checked)
    if not traced(out, data, indices):
        return out
    mode = _marked_mode(policy, indices, data.shape[b:])
    return mark(out, data, _tuples(indices, columns), op=op, batch_dims=b, mode=mode)


def scatter_nd(
    input: jax.typing.ArrayLike,
    indices: IndexArray,
    updates: jax.typing.ArrayLike,
    *,
    reduction: str = "none",
    mode: IndexMode | str | None = None,
) -> jax.Array:
    """Copy ``input`` and write or combine slices addressed by index tuples: ONNX ScatterND.

    https://onnx.ai/onnx/operators/onnx__ScatterND.html (opsets 11, 13, 16, 18). With
    ``k = indices.shape[-1]``: ``output = input``; then for every ``i`` of
    ``indices.shape[:-1]`` in row-major order, ``output[indices[i]] = f(output[indices[i]],
    updates[i])``, a slice of ``input.shape[k:]``. ``reduction`` names ``f``: ``"none"``
    overwrites; ``"add"``, ``"mul"``, ``"max"``, ``"min"`` combine. Negative indices count
    from the end of their axis.

    Duplicate tuples: with ``"none"`` they are invalid input, as for `scatter` (the winner
    is unspecified; XLA is told the indices are unique). With a reduction they are valid
    and combine exactly as ONNX's loop does, in row-major order of the updates, bit for bit
    and on every platform (`dmljax._ops.ordered.reductions`: one XLA scatter, an in-order loop, on
    one CPU device; elsewhere a sort by target and an in-order fold of each target's run, one
    Pallas kernel on a CUDA GPU; docs/design/ordered-reductions.md). Float ``"max"``/``"min"``
    fold as onnxruntime's kernels do: a NaN update replaces, a NaN is replaced by the next
    update, of equal values (``+0.0``, ``-0.0``) the later one wins (docs/semantics.md).

    Out-of-range indices: concrete ones raise `IndexError` (``mode`` None or "checked");
    traced ones drop the update by default (`dmljax.IndexMode`: ``"clip"`` writes at the
    clamped position, each index clamped on its own axis).

    Gradients: ``"none"``: the cotangent flows to the updates at their written positions
    and is zero in the input there; ``"add"``: to both everywhere; ``"mul"``: the product
    rule (no division by an update); ``"max"``/``"min"``: to the element the result is
    taken from (the last of equal extremes in loop order; not shared among ties), exactly
    zero to every other.

    Args:
      input: array of 1 to 8 dimensions, any `DataType`.
      indices: int32, int64, uint32 or uint64 array of rank ``q >= 1``,
        ``1 <= indices.shape[-1] <= input.ndim``.
      updates: array of ``indices.shape[:-1] + input.shape[k:]`` and ``input``'s dtype
        (64-bit host values for a 32-bit ``input`` are converted, as for `scatter`).
      reduction: ``"none"``, ``"add"``, ``"mul"``, ``"max"`` or ``"min"``.
      mode: ``None`` (check concrete indices, else drop), or a `dmljax.IndexMode` or its
        string: ``"clip"``, ``"fill"``/``"drop"``, ``"promise_in_bounds"`` or ``"checked"``.

    Returns:
      Array of ``input``'s shape and type.

    Raises:
      ValidationError: a rank, shape, ``reduction`` or ``mode`` breaks its rule.
      TypeError: an unsupported type, or ``updates.dtype != input.dtype``.
      IndexError: concrete indices hold a value out of range (``mode`` None or "checked").

    Examples:
      >>> x = jnp.arange(8.0)
      >>> scatter_nd(x, np.array([[4], [3], [-1]]), jnp.array([9.0, 10.0, 11.0]))
      Array([ 0.,  1.,  2., 10.,  9.,  5.,  6., 11.], dtype=float32)
      >>> scatter_nd(jnp.zeros((2, 2)), np.array([[1], [1]]), jnp.ones((2, 2)), reduction="add")
      Array([[0., 0.],
             [2., 2.]], dtype=float32)
      >>> u = jnp.array([1e8, 1.0, -1e8])  # float32: the order of the sum shows
      >>> scatter_nd(jnp.zeros(1), np.zeros((3, 1), np.int32), u, reduction="add")
      Array([0.], dtype=float32)
    """
    op = "scatter_nd"
    input = as_data(op, "input", input)
    check_rank(op, "input", input.shape)
    reduction = check_reduction(op, reduction)
    policy = resolve_mode(op, mode, IndexMode.FILL)
    indices = as_indices(op, indices)
    if len(indices.shape) < 1:
        raise fail(op, "indices.ndim", "be >= 1", len(indices.shape), f"input shape {input.shape}")
    _check_tuple(op, input.shape, indices.shape, 0, "input")
    updates = as_updates(op, updates, input.dtype)
    expected = tuple(indices.shape[:-1]) + input.shape[indices.shape[-1] :]
    if updates.shape != expected:
        context = f"input shape {input.shape}, indices shape {tuple(indices.shape)}"
        raise fail(
            op, "updates.shape", f"equal indices.shape[:-1] + input.shape[k:] {expected}", updates.shape, context
        )
    return scatter_nd_with_policy(op, input, indices, updates, reduction=reduction, policy=policy)


def scatter_nd_with_policy(
    op: str,
    input: jax.Array,
    indices: jax.Array | np.ndarray,
    updates: jax.Array,
    *,
    reduction: str,
    policy: IndexPolicy,
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    row_ids: jax.Array | np.ndarray | None = None,
) -> jax.Array:
    """`scatter_nd` on arguments whose types and shapes are checked: the one path of ScatterND
    and of the segment reductions (`dmljax._ops.index.segment`), marked as ``scatter_nd`` in a trace.

    ``indices_are_sorted``: the tuples are promised in nondecreasing row-major order
    (dropped ones aside), so the flat targets can be laid out sorted for `combine`;
    ``unique_indices``: promised distinct, so a reduction is one plain scatter. A false
    promise gives unspecified results. ``row_ids``: for tuples of one index under
    `IndexMode.FILL` or `IndexMode.PROMISE_IN_BOUNDS`, the same rows as the caller's own
    ids, any integer type, whose values outside ``[0, input.shape[0])`` (negative ones
    included) are to be dropped, as XLA's scatter drops them: XLA CPU's row scatter takes
    them as they are (no converted copy; `jax.ops.segment_sum` does the same). Errors name ``op``.
    """
    flat_dtype(op, input.shape)
    columns, checked = _columns(op, indices, input, 0, policy)
    out = _scatter_nd_impl(
        input,
        columns,
        updates,
        reduction=reduction,
        mode=policy.mode,
        checked=checked,
        indices_are_sorted=indices_are_sorted,
        unique_indices=unique_indices,
        row_ids=row_ids,
    )
    if not traced(out, input, indices, updates):
        return out
    mode = _marked_mode(policy, indices, input.shape)
    return mark(out, input, _tuples(indices, columns), updates, op="scatter_nd", mode=mode, reduction=reduction)


def gather_nd_validated(data: jax.Array, indices: jax.Array, batch_dims: int) -> jax.Array:
    """`gather_nd`'s trace (default mode) of arguments the descriptor layer validated: no checks."""
    columns = tuple(indices[..., j] for j in range(indices.shape[-1]))
    out = _gather_nd_impl(data, columns, batch_dims=batch_dims, mode=IndexMode.CLIP, checked=False)
    return mark(out, data, indices, op="gather_nd", batch_dims=batch_dims, mode=IndexMode.CLIP.value)


def scatter_nd_validated(input: jax.Array, indices: jax.Array, updates: jax.Array) -> jax.Array:
    """`scatter_nd`'s trace (default mode, no reduction) of arguments the descriptor layer validated: no checks."""
    columns = tuple(indices[..., j] for j in range(indices.shape[-1]))
    out = _scatter_nd_impl(input, columns, updates, reduction="none", mode=IndexMode.FILL, checked=False)
    return mark(out, input, indices, updates, op="scatter_nd", mode=IndexMode.FILL.value, reduction="none")


def _marked_mode(policy: IndexPolicy, indices: Any, sizes: tuple[int, ...]) -> str:
    """The index mode of the marker (`dmljax._core.markers`), each column against its own axis."""
    if isinstance(indices, jax.core.Tracer) or policy.checkify:
        return "checked" if policy.checkify else policy.mode.value
    values = np.asarray(indices)
    modes = {marked_mode(policy, values[..., j], sizes[j]) for j in range(values.shape[-1])}
    return "promise_in_bounds" if modes == {"promise_in_bounds"} else policy.mode.value


def _tuples(indices: Any, columns: tuple[jax.Array, ...]) -> Any:
    """The marker's index operand: traced indices as given, host ones as the narrowed columns."""
    return indices if isinstance(indices, jax.core.Tracer) else jnp.stack(columns, axis=-1)


def _check_batch_dims(op: str, batch_dims: Any, shape: tuple[int, ...], index_shape: tuple[int, ...]) -> int:
    """ONNX GatherND: ``0 <= b < min(q, r)`` and ``indices.shape[:b] == data.shape[:b]``."""
    context = f"data shape {shape}, indices shape {tuple(index_shape)}"
    if len(index_shape) < 1:
        raise fail(op, "indices.ndim", "be >= 1", len(index_shape), context)
    if isinstance(batch_dims, jax.core.Tracer):
        rule = "be a static int (ONNX's attribute; under jax.jit mark it static: static_argnames='batch_dims')"
        raise fail(op, "batch_dims", rule, f"a traced {batch_dims.aval.str_short()}", context)
    if isinstance(batch_dims, bool) or not hasattr(batch_dims, "__index__"):
        raise fail(op, "batch_dims", "be an integer", batch_dims, context)
    b = int(batch_dims)
    high = min(len(index_shape), len(shape))
    if not 0 <= b < high:
        raise fail(op, "batch_dims", f"be in [0, {high}) (min of indices.ndim and data.ndim)", b, context)
    for d in range(b):
        if index_shape[d] != shape[d]:
            rule = f"equal data.shape[{d}] ({shape[d]}) (a batch dimension)"
            raise fail(op, f"indices.shape[{d}]", rule, index_shape[d], context)
    return b


def _check_tuple(op: str, shape: tuple[int, ...], index_shape: tuple[int, ...], b: int, param: str) -> None:
    """``1 <= k <= r - b`` for tuples of ``k = indices.shape[-1]`` indices; indexed axes non-empty."""
    k = index_shape[-1]
    if not 1 <= k <= len(shape) - b:
        context = f"{param} shape {shape}, batch_dims {b}"
        rule = f"be in [1, {len(shape) - b}] ({param}.ndim - batch_dims: one index per axis)"
        raise fail(op, "indices.shape[-1]", rule, k, context)
    for axis in range(b, b + k):
        check_axis_size(op, param, shape, axis)


def _columns(
    op: str, indices: jax.Array | np.ndarray, data: jax.Array, b: int, policy: IndexPolicy
) -> tuple[tuple[jax.Array, ...], bool]:
    """The index columns, each checked against its own axis (eagerly when concrete) and ready."""
    traced = isinstance(indices, jax.core.Tracer)
    columns = []
    for j in range(indices.shape[-1]):
        axis = b + j
        if isinstance(indices, np.ndarray) or traced:
            column = indices[..., j]
        else:
            with jax.ensure_compile_time_eval():  # concrete indices stay concrete under a trace
                column = indices[..., j]
        column, due = prepare_indices(op, column, data, axis, policy)
        if due:
            with jax.ensure_compile_time_eval():
                raise_out_of_range(op, column, index_range(column), data.shape[axis], axis)
        columns.append(column)
    return tuple(columns), policy.checkify and traced


def _positions(
    op: str, columns: tuple[jax.Array, ...], shape: tuple[int, ...], b: int, mode: IndexMode, checked: bool
) -> list[jax.Array]:
    """Each column normalised along its axis, after the checkify check when ``checked``."""
    if checked:
        for j, column in enumerate(columns):
            checkify_in_bounds(op, column, shape[b + j], b + j)
    return [normalize(column, shape[b + j], mode) for j, column in enumerate(columns)]


@functools.partial(jax.jit, static_argnames=("batch_dims", "mode", "checked"))
def _gather_nd_impl(
    data: jax.Array, columns: tuple[jax.Array, ...], *, batch_dims: int, mode: IndexMode, checked: bool
) -> jax.Array:
    """GatherND on validated arguments: one `lax.gather` with ``batch_dims`` batching dims."""
    b = batch_dims
    positions = _positions("gather_nd", columns, data.shape, b, mode, checked)
    wide = max(np.dtype(p.dtype).itemsize for p in positions)
    index = jnp.stack([lax.convert_element_type(p, np.dtype(f"uint{8 * wide}")) for p in positions], axis=-1)
    take = functools.partial(_gather_nd_lax, batch_dims=b, mode=mode)
    targets = functools.partial(_nd_targets, batch_dims=b, mode=mode)
    ordered = ordered_choice(take, functools.partial(ordered_tangent, targets=targets), data.shape, data.dtype)
    if ordered is not None:  # the cotangent added in its row-major order (gather_grad)
        return linear_in_data(take, ordered)(data, index)
    return take(data, index)


def _nd_targets(shape: tuple, index: jax.Array, *, batch_dims: int, mode: IndexMode) -> jax.Array:
    """`nd_targets` of the stacked tuples."""
    columns = tuple(index[..., j] for j in range(index.shape[-1]))
    return nd_targets(shape, columns, batch_dims=batch_dims, mode=mode)


def _gather_nd_lax(data: jax.Array, index: jax.Array, *, batch_dims: int, mode: IndexMode) -> jax.Array:
    """The gather itself on the stacked normalised tuples, 0 for a `FILL` tuple holding a bad index."""
    b, k, r, q = batch_dims, index.shape[-1], data.ndim, index.ndim
    dnums = lax.GatherDimensionNumbers(
        offset_dims=tuple(range(q - 1, q - 1 + r - b - k)),
        collapsed_slice_dims=tuple(range(b, b + k)),
        start_index_map=tuple(range(b, b + k)),
        operand_batching_dims=tuple(range(b)),
        start_indices_batching_dims=tuple(range(b)),
    )
    slice_sizes = (1,) * (b + k) + data.shape[b + k :]
    gather_mode = lax.GatherScatterMode.CLIP if mode is IndexMode.FILL else lax_mode(mode)
    out = lax.gather(data, index, dnums, slice_sizes, mode=gather_mode)
    if mode is not IndexMode.FILL:
        return out
    keep = jnp.ones(index.shape[:-1], bool)
    for j in range(k):  # the mask on the unsigned positions: exact at every width
        keep = keep & (index[..., j] < size_scalar(data.shape[b + j], index.dtype))
    keep = lax.broadcast_in_dim(keep, out.shape, tuple(range(q - 1)))
    return lax.select(keep, out, lax.full_like(out, 0))


@functools.partial(jax.jit, static_argnames=("reduction", "mode", "checked", "indices_are_sorted", "unique_indices"))
def _scatter_nd_impl(
    input: jax.Array,
    columns: tuple[jax.Array, ...],
    updates: jax.Array,
    *,
    reduction: str,
    mode: IndexMode,
    checked: bool,
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    row_ids: jax.Array | None = None,
) -> jax.Array:
    """ScatterND on validated arguments: whole slices (``"none"``), or at flat positions of the input."""
    k = len(columns)
    positions = _positions("scatter_nd", columns, input.shape, 0, mode, checked)
    if updates.size == 0:  # nothing to write (empty axes, which ONNX allows)
        return input
    if reduction == "none":
        return _write_slices(input, positions, updates, mode)
    formulation = choose_formulation(
        reduction,
        input.dtype,
        input.shape,
        window=input.shape[k:],
        indices_are_sorted=indices_are_sorted,
        unique_indices=unique_indices,
        row_ids=row_ids is not None,
    )
    layouts = {
        "flat": functools.partial(
            _combine_flat, positions=positions, formulation=formulation, mode=mode, sorted_=indices_are_sorted
        ),
        "sorted": functools.partial(_combine_sorted, positions=positions, reduction=reduction, mode=mode),
        "rows": functools.partial(
            _scatter_rows,
            positions=positions,
            reduction="add" if formulation.combiner == "scatter" else reduction,  # integers: XLA's combiner
            scatter_reduction=formulation.scatter_reduction,
            mode=mode,
            row_ids=row_ids,
        ),
    }
    plain = layouts[formulation.layout]
    if formulation.cpu_layout is None:
        return plain(input, updates)
    return cpu_or_plain(layouts[formulation.cpu_layout], plain, input, updates)


def _scatter_rows(
    input: jax.Array,
    updates: jax.Array,
    positions: list[jax.Array],
    reduction: str,
    mode: IndexMode,
    row_ids: jax.Array | None = None,
    scatter_reduction: str = "add",
) -> jax.Array:
    """On one XLA CPU device, a float reduction of whole slices as one scatter of rows (``(rows,
    w)`` windows), as `jax.ops.segment_sum` scatters, instead of one scatter of the ``w`` times
    as many flat elements: XLA CPU's scatter loops over the updates in their order, each
    row's elements inside (docs/design/ordered-reductions.md), so each element still takes
    its updates in loop order (`choose_formulation`'s ``cpu_layout="rows"``). ``"add"``:
    XLA's combiner, ``scatter_reduction`` (``"add"``; for integers and bool, exact in any
    order on every platform, `choose_formulation`'s ``layout="rows"``, the formulation's own);
    ``"mul"``, ``"max"``/``"min"``: the loop's and onnxruntime's,
    `dmljax._ops.ordered.row_fold` (with their own derivatives). The targets: ``row_ids``
    where given (see `scatter_nd_with_policy`), else the flat row positions."""
    k = len(positions)
    window = input.shape[k:]
    rows, w = math.prod(input.shape[:k]), math.prod(window)
    lead = updates.shape[: updates.ndim - len(window)]
    if row_ids is None:
        coords = [jnp.broadcast_to(p, lead) for p in positions]
        targets = flat_targets(coords, input.shape[:k], mode, flat_dtype("scatter_nd", input.shape[:k])).reshape(-1)
    else:
        targets = row_ids
    table, values = input.reshape(rows, w), updates.reshape(-1, w)
    if reduction == "add":
        return scatter_at(table, targets, values, scatter_reduction).reshape(input.shape)
    return fold_rows(table, targets, values, reduction).reshape(input.shape)


def _combine_flat(
    input: jax.Array,
    updates: jax.Array,
    positions: list[jax.Array],
    formulation: Formulation,
    mode: IndexMode,
    sorted_: bool,
) -> jax.Array:
    """`combine` at the flat element positions of the input, in the updates' row-major order
    (``sorted_``: tuples promised sorted, so the flat targets are sorted too)."""
    k = len(positions)
    full = updates.shape  # indices.shape[:-1] + input.shape[k:]
    lead = len(full) - (input.ndim - k)
    coords = [lax.broadcast_in_dim(p, full, tuple(range(lead))) for p in positions]
    coords += [lax.broadcasted_iota(np.uint32, full, lead + d) for d in range(input.ndim - k)]
    targets = flat_targets(coords, input.shape, mode, flat_dtype("scatter_nd", input.shape)).reshape(-1)
    flat, values = input.reshape(-1), updates.reshape(-1)
    reduction = formulation.reduction
    if formulation.unique_scatter:
        return scatter_at(flat, targets, values, reduction, unique=True).reshape(input.shape)  # one update a target
    out = combine(flat, targets, values, reduction, indices_are_sorted=sorted_)
    return out.reshape(input.shape)


def _combine_sorted(
    input: jax.Array, updates: jax.Array, positions: list[jax.Array], reduction: str, mode: IndexMode
) -> jax.Array:
    """`combine` with tuples in nondecreasing order and slices of ``w > 1`` elements: the input
    viewed as ``(w, rows)`` (slice element major), so the flat targets ``s * rows + row`` are
    nondecreasing too (dropped ones aside) and each element still takes its updates in loop order."""
    k = len(positions)
    lead, window = input.shape[:k], input.shape[k:]
    rows, w = math.prod(lead), math.prod(window)
    dtype = flat_dtype("scatter_nd", input.shape)
    row = flat_targets(positions, lead, mode, dtype).reshape(-1)  # (m,), rows when dropped
    m = row.shape[0]
    column = lax.broadcasted_iota(dtype, (w, m), 0)
    valid = lax.broadcast_in_dim(row < size_scalar(rows, dtype), (w, m), (1,))
    targets = jnp.where(valid, column * size_scalar(rows, dtype) + row[None, :], size_scalar(rows * w, dtype))
    flat = input.reshape(rows, w).T.reshape(-1)
    values = updates.reshape(m, w).T.reshape(-1)
    out = combine(flat, targets.reshape(-1), values, reduction, indices_are_sorted=True)
    return out.reshape(w, rows).T.reshape(input.shape)


def _write_slices(input: jax.Array, positions: list[jax.Array], updates: jax.Array, mode: IndexMode) -> jax.Array:
    """Overwrite whole slices: one scatter of rows into ``input`` viewed as ``(prod(shape[:k]), prod(shape[k:]))``,
    at each tuple's flat row position (out of range under `FILL`: the whole slice is dropped)."""
    lead, window = input.shape[: len(positions)], math.prod(input.shape[len(positions) :])
    rows = flat_targets(positions, lead, mode, flat_dtype("scatter_nd", lead)).reshape(-1)
    table = input.reshape(math.prod(lead), window)
    out = scatter_at(table, rows, updates.reshape(rows.shape[0], window), unique=True)  # unsigned rows: see scatter_at
    return out.reshape(input.shape)
