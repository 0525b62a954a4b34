"""A lax scatter with any dimension numbers, combined in the updates' order.

`ordered_scatter` computes what ``lax.scatter_add`` (``scatter_sub``, ``scatter_mul``)
computes, with every update element combined into its target one after the other: scatter
index after scatter index (row-major over the updates' scatter dimensions), each window in
row-major order. That is ``np.add.at``'s order, ONNX ScatterND's loop, and the row-major
order of the updates whenever their scatter dimensions come first (as in every scatter
jnp and the transposes of jnp's gathers make); it differs from the updates' row-major
order only for windows that overlap, with a window dimension before a scatter dimension. Each update element gets the
flat (row-major) position of the operand element it lands on, from XLA's scatter
semantics (https://openxla.org/xla/operation_semantics#scatter): its scatter dimensions
pick a start index vector (``scatter_dims_to_operand_dims``; batching dimensions take
their own position), its window dimensions the offset inside the window; a window that
does not fit is dropped (``FILL_OR_DROP``, and ``PROMISE_IN_BOUNDS``, which XLA lowers
the same way) or its start clamped (``CLIP``). The 1-D positions then go to dmljax's
ordered reductions (`dmljax._ops.ordered.ordered_add` for add and subtract, the ordered
``"mul"`` of `dmljax._ops.ordered.reductions.combine`), which combine in the updates'
order on every platform and device count.
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from dmljax._core.config import config
from dmljax._core.platform import cpu_or_plain
from dmljax._ops.common.positions import flat_dtype
from dmljax._ops.ordered.ordered_add import ordered_add, ordered_add_p
from dmljax._ops.ordered.reductions import choose_formulation, combine

__all__ = ["flat_update_targets", "in_manual_context", "ordered_scatter"]

OP = "deterministic"


def in_manual_context() -> bool:
    """Whether the trace is inside a `jax.shard_map` body (a mesh axis is manual there)."""
    mesh = jax.sharding.get_abstract_mesh()
    return bool(getattr(mesh, "manual_axes", ()))


def _window_sizes(operand_shape: tuple[int, ...], updates_shape: tuple[int, ...], dnums) -> list[int]:
    """The window size along every operand dimension (1 where inserted or batching)."""
    window_dims = [
        d for d in range(len(operand_shape)) if d not in (*dnums.inserted_window_dims, *dnums.operand_batching_dims)
    ]
    sizes = [1] * len(operand_shape)
    for d, u in zip(window_dims, dnums.update_window_dims, strict=True):
        sizes[d] = updates_shape[u]
    return sizes


def _start(index: jax.Array, high: int, mode: lax.GatherScatterMode, valid: jax.Array) -> tuple[jax.Array, jax.Array]:
    """One start coordinate in its own type: clamped to ``[0, high]`` (``CLIP``; ``high``, the
    operand's size less the window's, is >= 0), else its validity recorded (dropped windows)."""
    top = np.asarray(min(high, np.iinfo(index.dtype).max), index.dtype)
    zero = np.asarray(0, index.dtype)
    if mode == lax.GatherScatterMode.CLIP:
        return lax.clamp(zero, index, lax.full_like(index, top)), valid
    return index, valid & (index >= zero) & (index <= top)


def flat_update_targets(
    operand_shape: tuple[int, ...], indices: jax.Array, updates_shape: tuple[int, ...], dnums, mode
) -> jax.Array:
    """The flat position in the operand of every update element (shape ``updates_shape``);
    ``prod(operand_shape)`` (dropped) for an element of a window that does not fit.

    Examples:
      >>> dnums = lax.ScatterDimensionNumbers((1,), (0,), (0,))
      >>> flat_update_targets((3, 2), jnp.array([[2], [0], [5]]), (3, 2), dnums, lax.GatherScatterMode.FILL_OR_DROP)
      Array([[4, 5],
             [0, 1],
             [6, 6]], dtype=uint32)
    """
    mode = lax.GatherScatterMode.from_any(mode)
    rank, size = len(operand_shape), math.prod(operand_shape)
    dtype = flat_dtype(OP, operand_shape)
    scatter_dims = [d for d in range(len(updates_shape)) if d not in dnums.update_window_dims]
    window_dims = [d for d in range(rank) if d not in (*dnums.inserted_window_dims, *dnums.operand_batching_dims)]
    sizes = _window_sizes(operand_shape, updates_shape, dnums)
    valid = jnp.ones(indices.shape[:-1], bool)
    starts: dict[int, jax.Array] = {}
    for k, d in enumerate(dnums.scatter_dims_to_operand_dims):
        starts[d], valid = _start(indices[..., k], operand_shape[d] - sizes[d], mode, valid)
    position = jnp.zeros(updates_shape, dtype)
    for d in range(rank):
        stride = np.asarray(math.prod(operand_shape[d + 1 :]), dtype)
        if d in starts:
            coord = lax.broadcast_in_dim(starts[d].astype(dtype), updates_shape, tuple(scatter_dims))
        elif d in dnums.operand_batching_dims:
            along = dnums.scatter_indices_batching_dims[dnums.operand_batching_dims.index(d)]
            coord = lax.broadcasted_iota(dtype, updates_shape, scatter_dims[along])
        else:
            coord = jnp.zeros(updates_shape, dtype)
        if d in window_dims:
            coord = coord + lax.broadcasted_iota(dtype, updates_shape, dnums.update_window_dims[window_dims.index(d)])
        position = position + coord * stride
    valid = lax.broadcast_in_dim(valid, updates_shape, tuple(scatter_dims))
    return jnp.where(valid, position, np.asarray(size, dtype))


def ordered_scatter(kind: str, operand: jax.Array, indices: jax.Array, updates: jax.Array, dnums, mode) -> jax.Array:
    """``lax.scatter_<kind>(operand, indices, updates, dnums, mode=mode)`` with the update elements
    combined one after the other: scatter index after scatter index (row-major over the
    updates' scatter dimensions), each window in row-major order; ``kind``: ``"add"``,
    ``"sub"`` or ``"mul"``. On one XLA CPU device (`reductions.choose_formulation`'s ``cpu_scatter``) the XLA
    scatter itself (`_cpu_scatter`); elsewhere dmljax's ordered reductions at flat positions.

    Examples:
      >>> dnums = lax.ScatterDimensionNumbers((), (0,), (0,))
      >>> u = jnp.array([1e8, 1.0, -1e8], jnp.float32)
      >>> ordered_scatter("add", jnp.zeros(2), jnp.array([[1], [1], [1]]), u, dnums, "fill")
      Array([0., 0.], dtype=float32)
    """
    if operand.size == 0 or updates.size == 0:
        return operand
    mode = lax.GatherScatterMode.from_any(mode)
    plain = functools.partial(_flat_ordered, kind, dnums=dnums, mode=mode)
    reduction = "mul" if kind == "mul" else "add"
    if not choose_formulation(reduction, operand.dtype, operand.shape).cpu_scatter or in_manual_context():
        return plain(operand, indices, updates)
    on_cpu = functools.partial(_cpu_scatter, kind, dnums=dnums, mode=mode)
    return cpu_or_plain(on_cpu, plain, operand, indices, updates)


def _cpu_scatter(kind: str, operand: jax.Array, indices: jax.Array, updates: jax.Array, *, dnums, mode) -> jax.Array:
    """The XLA scatter itself (one XLA CPU device: its loop runs in `ordered_scatter`'s order),
    between optimization barriers: XLA's simplifier would otherwise fold an add of its result
    into its operand (``scatter(0, i, u) + y`` as ``scatter(y, i, u)``), which rounds otherwise
    than the program on several devices does (measured: a wrapped jraph step's gradient)."""
    scatter = {"add": lax.scatter_add, "sub": lax.scatter_sub, "mul": lax.scatter_mul}[kind]
    operand, indices, updates = lax.optimization_barrier((operand, indices, updates))
    return lax.optimization_barrier(scatter(operand, indices, updates, dnums, mode=mode))


def _flat_ordered(kind: str, operand: jax.Array, indices: jax.Array, updates: jax.Array, *, dnums, mode) -> jax.Array:
    """`ordered_scatter` at flat positions through dmljax's ordered reductions (every platform)."""
    scatter_dims = [d for d in range(updates.ndim) if d not in dnums.update_window_dims]
    order = (*scatter_dims, *dnums.update_window_dims)  # scatter index major, then the window
    targets = flat_update_targets(operand.shape, indices, updates.shape, dnums, mode)
    targets, values = targets.transpose(order).reshape(-1), updates.transpose(order).reshape(-1)
    flat = operand.reshape(-1)
    if kind == "mul":
        partitions = config.ordered_replicated_partitions and not in_manual_context()
        with config.override(ordered_replicated_partitions=partitions):
            out = combine(flat, targets, values, "mul")
        return out.reshape(operand.shape)
    if kind == "sub":
        values = -values
    if in_manual_context():  # a shard_map body: each device combines its own operands
        out = ordered_add_p.bind(flat, targets, values, indices_are_sorted=False)
    else:
        out = ordered_add(flat, targets, values)
    return out.reshape(operand.shape)
