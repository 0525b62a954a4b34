"""Gather (ONNX Gather 1/11/13) and gather_elements (DML_GATHER_ELEMENTS).

Each public function validates the static facts (ranks, shapes, types, axis), checks
concrete indices, then calls one jitted array function (`_gather_impl`,
`_gather_elements_impl`) that holds the operator's whole semantics: one `lax.gather`
on indices normalised by `dmljax._ops.common.indices.normalize`. Where JAX's own transpose of that
gather is slow on XLA CPU, the gather gets a custom tangent (`dmljax._ops.index.gather_grad`) whose
transpose is a faster scatter-add; the forward pass is the same gather either way, run in
column blocks on XLA CPU for gather_elements along a long outer axis of 16 MiB of data or
more (`dmljax._ops.index.gather_blocked`, docs/design/blocked-gather.md), and so is its tangent. Off the CPU
the blocks serve the forward pass from 64 MiB. Every gradient adds the cotangent into the
data in its row-major order, as scatter's ``"add"`` reduction does: off one XLA CPU device
through the ordered add (`dmljax._ops.index.gather_grad.ordered_tangent`,
docs/design/gather-gradient.md).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import jax
import numpy as np
from jax import lax

from dmljax._core.config import config
from dmljax._core.errors import fail
from dmljax._core.markers import mark, traced
from dmljax._core.platform import cpu_or_plain, one_device_shape, opaque_predicate
from dmljax._core.typing import IndexArray
from dmljax._ops.common.checked import checkify_in_bounds
from dmljax._ops.common.index_checks import call_checked, marked_mode, prepare_indices
from dmljax._ops.common.indices import (
    IndexMode,
    as_data,
    as_indices,
    check_axis,
    check_axis_size,
    check_elements_shape,
    check_rank,
    gather_in_mode,
    normalize,
    position_dtype,
    resolve_mode,
)
from dmljax._ops.common.positions import use_flat
from dmljax._ops.index.gather_blocked import blocked, blocked_forward_on_cpu, use_blocked
from dmljax._ops.index.gather_grad import (
    elements_targets,
    flat_tangent,
    gather_flat_tangent,
    gather_targets,
    linear_in_data,
    ordered_choice,
    ordered_tangent,
    rows_tangent,
    use_gpu_flat,
    use_rows,
)

__all__ = ["gather", "gather_elements", "gather_elements_validated", "gather_validated"]


def gather(
    data: jax.typing.ArrayLike, indices: IndexArray, axis: int = 0, *, mode: IndexMode | str | None = None
) -> jax.Array:
    """Gather slices of ``data`` along ``axis``: ONNX Gather (opsets 1, 11, 13).

    ``output[j_0..j_{axis-1}, i_0..i_{q-1}, j_{axis+1}..] = data[j_0.., indices[i], ..]``,
    of rank ``q + r - 1`` for ``data`` of rank ``r >= 1`` and ``indices`` of rank ``q``
    (a scalar too). Negative indices count from the end of the axis. ONNX calls an index
    outside ``[-s, s)`` an error: concrete indices raise `IndexError`; traced ones read
    clamped by default, as DML_GATHER's reads are. ``mode`` chooses (`dmljax.IndexMode`):
    ``"clip"`` reads the nearest element, ``"fill"`` reads 0. Every index type is exact
    at its full width (a 64-bit index is never truncated to 32 bits), on axes of up to
    2^32 - 1 elements. Gradients: ``data``'s adds the cotangent in its row-major order, as
    `scatter`'s ``"add"`` reduction does (``np.add.at``'s bits), on every platform and
    device count.

    Args:
      data: array of rank >= 1, any `DataType` (bool, bfloat16 and complex included).
      indices: integer array of any shape: int32, int64, uint32 or uint64.
      axis: the axis to gather along, in ``[-r, r)``.
      mode: ``None`` (check concrete indices, else clip), or a `dmljax.IndexMode` or its
        string: ``"clip"``, ``"fill"``, ``"promise_in_bounds"`` or ``"checked"``.

    Returns:
      Array of ``data.shape[:axis] + indices.shape + data.shape[axis + 1:]``, ``data``'s type.

    Raises:
      ValidationError: ``data`` is a scalar, ``axis`` or ``mode`` is invalid, or the axis is empty.
      TypeError: ``data`` or ``indices`` has an unsupported type.
      IndexError: concrete indices hold a value out of range (``mode`` None or "checked").

    Examples:
      >>> data = jnp.array([[1.0, 1.2], [2.3, 3.4], [4.5, 5.7]])
      >>> gather(data, np.array([[0, 1], [1, 2]]), axis=0)[1]
      Array([[2.3, 3.4],
             [4.5, 5.7]], dtype=float32)
      >>> gather(data, -1, axis=0)
      Array([4.5, 5.7], dtype=float32)
      >>> jax.jit(gather, static_argnames="axis")(data, jnp.array([7]), axis=0)  # clamped
      Array([[4.5, 5.7]], dtype=float32)
    """
    data = as_data("gather", "data", data)
    if data.ndim < 1:
        raise fail("gather", "data.ndim", "be >= 1", data.ndim, f"data shape {data.shape}")
    axis = check_axis("gather", axis, data.ndim, f"data shape {data.shape}")
    policy = resolve_mode("gather", mode, IndexMode.CLIP)
    indices = as_indices("gather", indices)
    check_axis_size("gather", "data", data.shape, axis)
    size = data.shape[axis]
    given = indices  # host indices stay host values for the marker's mode
    indices, due = prepare_indices("gather", indices, data, axis, policy)
    checked = policy.checkify and isinstance(indices, jax.core.Tracer)
    out = call_checked("gather", _gather_impl, (data, indices), due, axis=axis, mode=policy.mode, checked=checked)
    if not traced(out, data, indices):
        return out
    return mark(out, data, indices, op="gather", axis=axis, mode=marked_mode(policy, given, size))


def gather_elements(
    data: jax.typing.ArrayLike, indices: IndexArray, axis: int = 0, *, mode: IndexMode | str | None = None
) -> jax.Array:
    """Gather single elements along ``axis``: DML_GATHER_ELEMENTS, ONNX GatherElements.

    ``output[p] = data[p with p[axis] replaced by indices[p]]``, the inverse of `scatter`.
    ``indices`` has ``data``'s rank and sizes except along ``axis`` (DirectML's rule; ONNX
    also allows smaller sizes elsewhere, dmljax does not). Negative indices count from the
    end of the axis. Out-of-range indices: as `gather` (concrete ones raise `IndexError`,
    traced ones read clamped as DML_GATHER_ELEMENTS' reads are; see `dmljax.IndexMode`).
    Gradients: ``data``'s adds the cotangent in its row-major order, as `scatter`'s
    ``"add"`` reduction does, on every platform and device count.

    Args:
      data: array of 1 to 8 dimensions, any `DataType`.
      indices: int32, int64, uint32 or uint64 array of ``data``'s rank; ``indices.shape[d]
        == data.shape[d]`` for every ``d != axis``.
      axis: the axis to gather along, in ``[-r, r)``.
      mode: as for `gather` (`dmljax.IndexMode`).

    Returns:
      Array of ``indices.shape`` and ``data``'s type.

    Raises:
      ValidationError: a rank, shape, ``axis`` or ``mode`` breaks its rule.
      TypeError: ``data`` or ``indices`` has an unsupported type.
      IndexError: concrete indices hold a value out of range (``mode`` None or "checked").

    Examples:
      >>> data = jnp.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]], dtype=jnp.uint32)
      >>> gather_elements(data, jnp.array([[1, 2, 0], [2, 0, 0]], jnp.uint32), axis=0)
      Array([[4, 8, 3],
             [7, 2, 3]], dtype=uint32)
      >>> gather_elements(jnp.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[-1], [0]]), axis=1)
      Array([[2.],
             [3.]], dtype=float32)
    """
    op = "gather_elements"
    data = as_data(op, "data", data)
    check_rank(op, "data", data.shape)
    axis = check_axis(op, axis, data.ndim, f"data shape {data.shape}")
    policy = resolve_mode(op, mode, IndexMode.CLIP)
    indices = as_indices(op, indices)
    check_elements_shape(op, data.shape, indices.shape, axis, "data")
    check_axis_size(op, "data", data.shape, axis)
    size = data.shape[axis]
    given = indices  # host indices stay host values for the marker's mode
    indices, due = prepare_indices(op, indices, data, axis, policy)
    checked = policy.checkify and isinstance(indices, jax.core.Tracer)
    impl = _gather_elements_impl
    out = call_checked(op, impl, (data, indices), due, axis=axis, mode=policy.mode, checked=checked)
    if not traced(out, data, indices):
        return out
    return mark(out, data, indices, op=op, axis=axis, mode=marked_mode(policy, given, size))


def gather_validated(data: jax.Array, indices: jax.Array, axis: int) -> jax.Array:
    """`gather`'s trace (default mode) of arguments the descriptor layer validated: no checks."""
    out = _gather_impl(data, indices, axis=axis, mode=IndexMode.CLIP, checked=False)
    return mark(out, data, indices, op="gather", axis=axis, mode=IndexMode.CLIP.value)


def gather_elements_validated(data: jax.Array, indices: jax.Array, axis: int) -> jax.Array:
    """`gather_elements`' trace (default mode) of arguments the descriptor layer validated: no checks."""
    out = _gather_elements_impl(data, indices, axis=axis, mode=IndexMode.CLIP, checked=False)
    return mark(out, data, indices, op="gather_elements", axis=axis, mode=IndexMode.CLIP.value)


@functools.partial(jax.jit, static_argnames=("axis", "mode", "checked"))
def _gather_impl(data: jax.Array, indices: jax.Array, *, axis: int, mode: IndexMode, checked: bool) -> jax.Array:
    """ONNX Gather on validated arguments: one `lax.gather` of ``data.ndim - 1`` offset dims."""
    size = data.shape[axis]
    if checked:
        checkify_in_bounds("gather", indices, size, axis)
    index = _normalize_once(indices, mode, data.shape, axis)
    take: Callable[..., jax.Array] = functools.partial(_gather_lax, axis=axis, mode=mode)
    rows = functools.partial(rows_tangent, axis=axis, mode=mode) if use_rows(data.shape, axis) else take
    targets = functools.partial(gather_targets, axis=axis, mode=mode)
    ordered = ordered_choice(rows, functools.partial(ordered_tangent, targets=targets), data.shape, data.dtype)
    if ordered is not None:  # the cotangent added in its row-major order (gather_grad)
        return linear_in_data(take, ordered)(data, index)
    tangents: dict[str, Callable[..., jax.Array]] = {}
    if rows is not take:
        tangents["cpu"] = rows
    out_shape = data.shape[:axis] + index.shape + data.shape[axis + 1 :]
    if use_gpu_flat(data.shape, axis, out_shape, data.dtype.itemsize):
        tangents["cuda"] = functools.partial(gather_flat_tangent, axis=axis, mode=mode)
    if tangents:
        take = linear_in_data(take, functools.partial(lax.platform_dependent, **tangents, default=take))
    return take(data, index)


def _normalize_once(indices: jax.Array, mode: IndexMode, shape: tuple, axis: int) -> jax.Array:
    """`normalize`, kept out of the gather's loop on XLA CPU when each index is read many times.

    XLA CPU fuses the index arithmetic into the gather's loop and runs it once per element
    read; a `lax.cond` on an opaque predicate (both branches `normalize`) computes it once,
    as ``jnp.take`` of ready indices would. Only where there is arithmetic (indices of
    another dtype than `position_dtype`), on one device. docs/design/gather-index-apart.md.
    """
    size = shape[axis]
    norm = functools.partial(normalize, axis_size=size, mode=mode)
    if (
        not config.gather_index_apart
        or not one_device_shape(shape)  # first: the sizes below are concrete
        or math.prod(shape) < size * config.gather_index_apart_min_reuse  # elements read per index
        or np.dtype(indices.dtype) == position_dtype(size)
        or indices.size == 0
    ):
        return norm(indices)

    def apart(i: jax.Array) -> jax.Array:
        return lax.cond(opaque_predicate(i), norm, norm, i)

    return cpu_or_plain(apart, norm, indices)


def _gather_lax(data: jax.Array, index: jax.Array, *, axis: int, mode: IndexMode) -> jax.Array:
    """The gather itself, on normalised indices."""
    rank, q = data.ndim, index.ndim
    dnums = lax.GatherDimensionNumbers(
        offset_dims=tuple(range(axis)) + tuple(range(axis + q, q + rank - 1)),
        collapsed_slice_dims=(axis,),
        start_index_map=(axis,),
    )
    slice_sizes = data.shape[:axis] + (1,) + data.shape[axis + 1 :]
    return gather_in_mode(data, index[..., None], dnums, slice_sizes, mode)


@functools.partial(jax.jit, static_argnames=("axis", "mode", "checked"))
def _gather_elements_impl(
    data: jax.Array, indices: jax.Array, *, axis: int, mode: IndexMode, checked: bool
) -> jax.Array:
    """GatherElements on validated arguments: one element-wise `lax.gather` (batching dims)."""
    size = data.shape[axis]
    if checked:
        checkify_in_bounds("gather_elements", indices, size, axis)
    index = normalize(indices, size, mode)
    return _elements_formulation(data.shape, data.dtype, axis, mode)(data, index)


def _elements_formulation(shape: tuple, dtype: np.dtype, axis: int, mode: IndexMode) -> Callable[..., jax.Array]:
    """The gather_elements to trace for ``data`` of ``shape``: its forward pass and its tangent, per platform.

    The tangent adds the cotangent in its row-major order (`ordered_choice`): off one XLA CPU
    device it is `ordered_tangent` (config ``ordered_gather_gradients``; off, the table's
    "elsewhere" tangents, JAX's transposes). Without `use_flat` (several devices, a symbolic
    shape, rank 1) the forward pass is the plain gather. Otherwise a `linear_in_data` gather
    whose parts `cpu_or_plain` picks:

    ========  =====================================  ===============================================
    part      XLA CPU                                elsewhere
    ========  =====================================  ===============================================
    forward   column blocks where `use_blocked` and  column blocks where `use_blocked` and from
              `blocked_forward_on_cpu` (the host's   ``blocked_gather_elements_gpu_forward_min_bytes``
              class), else the gather
    tangent   `flat_tangent`, in column blocks       `ordered_tangent`; unordered: column blocks (no
              where `use_blocked`                    apart pass) from ``blocked_gather_elements_gpu_
                                                     gradient_min_bytes``, else the gather
    ========  =====================================  ===============================================

    Where `use_blocked` holds the forward pass is always the platform choice, so that a GPU
    program is the same on every tracing host (docs/design/blocked-gather.md).
    """
    take = functools.partial(_gather_elements_lax, axis=axis, mode=mode)
    targets = functools.partial(elements_targets, axis=axis, mode=mode)
    ordered = functools.partial(ordered_tangent, targets=targets)
    if not use_flat(shape):
        chosen = ordered_choice(take, ordered, shape, dtype)
        return take if chosen is None else linear_in_data(take, chosen)
    blocks = functools.partial(blocked, functools.partial(_gather_elements_lax, mode=mode), axis=axis)
    forward: Callable[..., jax.Array] = take
    tangent_on_cpu = functools.partial(flat_tangent, axis=axis, mode=mode)
    if use_blocked(shape, axis, dtype):
        forward_on_cpu = blocks if blocked_forward_on_cpu() else take
        gpu_forward = config.blocked_gather_elements_gpu_forward_min_bytes
        forward_off_cpu = blocks if use_blocked(shape, axis, dtype, gpu_forward) else take
        forward = functools.partial(cpu_or_plain, forward_on_cpu, forward_off_cpu)
        tangent_on_cpu = functools.partial(blocked, functools.partial(flat_tangent, mode=mode), axis=axis)
    chosen = ordered_choice(tangent_on_cpu, ordered, shape, dtype)
    if chosen is not None:
        return linear_in_data(forward, chosen)
    gpu_gradient = config.blocked_gather_elements_gpu_gradient_min_bytes
    tangent_off_cpu = functools.partial(blocks, apart=False) if use_blocked(shape, axis, dtype, gpu_gradient) else take
    return linear_in_data(forward, functools.partial(cpu_or_plain, tangent_on_cpu, tangent_off_cpu))


def _gather_elements_lax(data: jax.Array, index: jax.Array, *, axis: int, mode: IndexMode) -> jax.Array:
    """The element-wise gather itself (batching dims), on normalised indices."""
    others = tuple(d for d in range(data.ndim) if d != axis)
    dnums = lax.GatherDimensionNumbers(
        offset_dims=(),
        collapsed_slice_dims=(axis,),
        start_index_map=(axis,),
        operand_batching_dims=others,
        start_indices_batching_dims=others,
    )
    return gather_in_mode(data, index[..., None], dnums, (1,) * data.ndim, mode)
