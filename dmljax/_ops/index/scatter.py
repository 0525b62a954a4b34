"""Scatter (DML_SCATTER_OPERATOR_DESC = ONNX ScatterElements without reduction).

The public function validates the static facts, checks concrete indices, then calls
`_scatter_impl`, the one array function holding the semantics: a single element-wise
`lax.scatter` on indices normalised by `dmljax._ops.common.indices.normalize`. On XLA CPU with one
device the scatter runs on the flattened input at flat positions (faster there:
docs/design/per-platform-formulations.md); elsewhere it keeps batching dimensions, which
partition locally.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import jax
import numpy as np
from jax import lax

from dmljax._core.errors import fail
from dmljax._core.markers import mark, traced
from dmljax._core.platform import cpu_or_plain
from dmljax._core.typing import IndexArray
from dmljax._ops.common.checked import checkify_in_bounds
from dmljax._ops.common.index_checks import call_checked, marked_mode, prepare_indices
from dmljax._ops.common.indices import (
    IndexMode,
    as_data,
    as_indices,
    as_updates,
    check_axis,
    check_axis_size,
    check_elements_shape,
    check_rank,
    lax_mode,
    normalize,
    resolve_mode,
)
from dmljax._ops.common.positions import flat_dtype, flat_positions, flat_targets, use_flat
from dmljax._ops.ordered.reductions import check_reduction, combine

__all__ = ["scatter", "scatter_elements", "scatter_validated"]


def scatter(
    input: jax.typing.ArrayLike,
    indices: IndexArray,
    updates: jax.typing.ArrayLike,
    axis: int = 0,
    *,
    reduction: str = "none",
    mode: IndexMode | str | None = None,
) -> jax.Array:
    """Copy ``input`` and overwrite the elements that ``indices`` select with ``updates``.

    DML_SCATTER_OPERATOR_DESC (also named DML_SCATTER_ELEMENTS), ONNX ScatterElements
    without reduction: ``output = input``; then for every coordinate ``p`` of ``indices``,
    ``output[p with p[axis] replaced by indices[p]] = updates[p]``. The inverse of
    `gather_elements`. Negative indices of signed types count from the end of the axis.

    Out-of-range indices: concrete ones raise `IndexError` (``mode`` None or "checked");
    traced ones are dropped by default, the input element staying (`dmljax.IndexMode`:
    ``"clip"`` writes at the clamped position instead). Every index type is exact at its
    full width (a 64-bit index is never truncated to 32 bits), on axes of up to 2^32 - 1
    elements.

    Without a reduction, duplicate indices (two updates to one element) are invalid input: DirectML does
    not say which write wins, and neither does dmljax. scatter tells XLA the indices are
    unique (``unique_indices=True``, a faster backward pass on CPU: docs/semantics.md); with
    duplicates, the winner may differ between backends and runs, and the gradient flows
    to every duplicate update as if it had won.

    ``reduction`` (ONNX ScatterElements 16/18, https://onnx.ai/onnx/operators/onnx__ScatterElements.html):
    ``"add"``, ``"mul"``, ``"max"`` or ``"min"`` combine instead,
    ``output[...] = f(output[...], updates[p])`` for every ``p`` in row-major order. Then
    duplicate indices are valid and combine exactly as ONNX's loop does, bit for bit and on
    every platform (`dmljax._ops.ordered.reductions`: one XLA scatter, an in-order loop, on one
    CPU device; elsewhere a sort by target and an in-order fold of each target's run, one
    Pallas kernel on a CUDA GPU; docs/design/ordered-reductions.md). Float ``"max"``/``"min"``
    fold as onnxruntime's kernels do, ``out = out if out > u else u`` (``<`` for min): a NaN
    update replaces, a NaN is replaced by the next update, and of equal values (``+0.0``,
    ``-0.0``) the later one wins (docs/semantics.md, "Scatter max and min").

    Gradients: the input's gradient is the cotangent, zero where an update overwrote it;
    the updates' gradient is the cotangent gathered at their positions. With a reduction:
    ``"add"`` passes the cotangent to both; ``"mul"`` the product rule; ``"max"``/``"min"``
    give it to the element the result is taken from (the last of equal extremes in loop
    order; not shared among ties) and exactly zero to every other.

    Args:
      input: array of 1 to 8 dimensions, any `DataType`.
      indices: int32, int64, uint32 or uint64 array of ``input``'s rank;
        ``indices.shape[d] == input.shape[d]`` for every ``d != axis``.
      updates: array of ``indices.shape`` and ``input``'s dtype. Host values (NumPy arrays,
        Python numbers) of the 64-bit type of a 32-bit ``input`` (float64 for float32, ...)
        are converted to it whether ``jax_enable_x64`` is on or off; integers must fit.
      axis: the axis to scatter along, in ``[-r, r)``.
      reduction: ``"none"`` (overwrite), ``"add"``, ``"mul"``, ``"max"`` or ``"min"``.
      mode: ``None`` (check concrete indices, else drop), or a `dmljax.IndexMode` or its
        string: ``"clip"``, ``"fill"``/``"drop"``, ``"promise_in_bounds"`` or ``"checked"``.

    Returns:
      Array of ``input``'s shape and type.

    Raises:
      ValidationError: a rank, shape, ``axis``, ``reduction`` or ``mode`` breaks its rule, or a 64-bit
        host update does not fit ``input``'s integer type.
      TypeError: an unsupported type, or ``updates.dtype != input.dtype`` (64-bit host
        values for a 32-bit input excepted).
      IndexError: concrete indices hold a value out of range (``mode`` None or "checked").

    Examples:
      >>> scatter(jnp.arange(5.0), np.array([3, 1, -1, 0]), jnp.array([5.0, 6.0, 7.0, 8.0]))  # -1: the last
      Array([8., 6., 2., 5., 7.], dtype=float32)
      >>> indices = jnp.array([[1, 0, 2], [0, 2, 1]], dtype=jnp.uint32)
      >>> updates = jnp.array([[10.0, 11.0, 12.0], [20.0, 21.0, 22.0]])
      >>> scatter(jnp.zeros((3, 3)), indices, updates, axis=0)
      Array([[20., 11.,  0.],
             [10.,  0., 22.],
             [ 0., 21., 12.]], dtype=float32)
      >>> scatter(jnp.zeros(3), jnp.array([-1]), jnp.array([1.0]), mode="fill")
      Array([0., 0., 1.], dtype=float32)
      >>> scatter(jnp.ones(2), np.array([1, 1, 0]), jnp.array([2.0, 3.0, 4.0]), reduction="mul")
      Array([4., 6.], dtype=float32)
    """
    op = "scatter"
    input = as_data(op, "input", input)
    check_rank(op, "input", input.shape)
    axis = check_axis(op, axis, input.ndim, f"input shape {input.shape}")
    reduction = check_reduction(op, reduction)
    policy = resolve_mode(op, mode, IndexMode.FILL)
    indices = as_indices(op, indices)
    updates = as_updates(op, updates, input.dtype)
    check_elements_shape(op, input.shape, indices.shape, axis, "input")
    check_axis_size(op, "input", input.shape, axis)
    if updates.shape != indices.shape:
        raise fail(op, "updates.shape", f"equal indices.shape {indices.shape}", updates.shape)
    size = input.shape[axis]
    given = indices  # host indices stay host values for the marker's mode
    indices, due = prepare_indices(op, indices, input, axis, policy)
    checked = policy.checkify and isinstance(indices, jax.core.Tracer)
    args = (input, indices, updates)
    impl: Callable[..., jax.Array] = _scatter_impl
    if reduction != "none":
        flat_dtype(op, input.shape)
        impl = functools.partial(_scatter_reduce_impl, reduction=reduction)
    out = call_checked(op, impl, args, due, axis=axis, mode=policy.mode, checked=checked)
    if not traced(out, *args):
        return out
    mode = marked_mode(policy, given, size)
    return mark(out, *args, op=op, axis=axis, mode=mode, reduction=reduction)


scatter_elements = scatter


def scatter_validated(input: jax.Array, indices: jax.Array, updates: jax.Array, axis: int) -> jax.Array:
    """`scatter`'s trace (default mode, no reduction) of arguments the descriptor layer validated: no checks."""
    out = _scatter_impl(input, indices, updates, axis=axis, mode=IndexMode.FILL, checked=False)
    return mark(out, input, indices, updates, op="scatter", axis=axis, mode=IndexMode.FILL.value, reduction="none")


@functools.partial(jax.jit, static_argnames=("axis", "mode", "checked"))
def _scatter_impl(
    input: jax.Array, indices: jax.Array, updates: jax.Array, *, axis: int, mode: IndexMode, checked: bool
) -> jax.Array:
    """Scatter on validated arguments: one element-wise `lax.scatter` (batching dims)."""
    size = input.shape[axis]
    if checked:
        checkify_in_bounds("scatter", indices, size, axis)
    if updates.size == 0:  # nothing to write (empty axes, which ONNX allows): XLA refuses empty windows
        return input
    index = normalize(indices, size, mode)
    plain = functools.partial(_scatter_lax, axis=axis, mode=mode)
    if use_flat(input.shape):
        flat = functools.partial(_scatter_flat, axis=axis, mode=mode)
        return cpu_or_plain(flat, plain, input, index, updates)
    return plain(input, index, updates)


def _scatter_lax(input: jax.Array, index: jax.Array, updates: jax.Array, *, axis: int, mode: IndexMode) -> jax.Array:
    """The element-wise scatter (batching dims), on normalised indices: partitionable, used off CPU."""
    others = tuple(d for d in range(input.ndim) if d != axis)
    dnums = lax.ScatterDimensionNumbers(
        update_window_dims=(),
        inserted_window_dims=(axis,),
        scatter_dims_to_operand_dims=(axis,),
        operand_batching_dims=others,
        scatter_indices_batching_dims=others,
    )
    return lax.scatter(input, index[..., None], updates, dnums, unique_indices=True, mode=lax_mode(mode))


def _scatter_flat(input: jax.Array, index: jax.Array, updates: jax.Array, *, axis: int, mode: IndexMode) -> jax.Array:
    """The same scatter on the flattened input at flat positions (XLA CPU on one device: faster).

    Each update is a window of one element (``(N, 1)`` updates): XLA CPU gives a scatter of
    ``(N,)`` updates that window itself, in a layout that costs a copy of the updates.
    """
    lin = flat_positions(index, input.shape, axis, mode)
    dnums = lax.ScatterDimensionNumbers((1,), inserted_window_dims=(), scatter_dims_to_operand_dims=(0,))
    flat = lax.scatter(
        input.reshape(-1), lin.reshape(-1, 1), updates.reshape(-1, 1), dnums, unique_indices=True, mode=lax_mode(mode)
    )
    return flat.reshape(input.shape)


@functools.partial(jax.jit, static_argnames=("axis", "mode", "checked", "reduction"))
def _scatter_reduce_impl(
    input: jax.Array,
    indices: jax.Array,
    updates: jax.Array,
    *,
    axis: int,
    mode: IndexMode,
    checked: bool,
    reduction: str,
) -> jax.Array:
    """ScatterElements with a reduction: the ordered combine at flat positions (`dmljax._ops.ordered.reductions`)."""
    size = input.shape[axis]
    if checked:
        checkify_in_bounds("scatter", indices, size, axis)
    if updates.size == 0:  # nothing to combine (empty axes, which ONNX allows)
        return input
    index = normalize(indices, size, mode)
    coords = [index if d == axis else lax.broadcasted_iota(np.uint32, index.shape, d) for d in range(input.ndim)]
    targets = flat_targets(coords, input.shape, mode, flat_dtype("scatter", input.shape))
    out = combine(input.reshape(-1), targets.reshape(-1), updates.reshape(-1), reduction)
    return out.reshape(input.shape)
