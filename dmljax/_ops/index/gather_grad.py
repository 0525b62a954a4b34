"""Tangents of gather, gather_elements and gather_nd: ordered, and fast on XLA CPU.

The cotangent of every dmljax gather is added into the data in its row-major order, as
``scatter(..., reduction="add")`` adds its updates (`ordered_choice`): the tangent is
`ordered_tangent`, one `dmljax._ops.ordered.ordered_add.ordered_take` at the flat position
of every output element (`gather_targets`, `elements_targets`, `nd_targets`), whose
transpose is the ordered add (the sorted fold off the CPU, through the replicated partition
on several devices). On one XLA CPU device (config ``cpu_ordered_scatter``) the tangents
below stay: XLA CPU's scatter loop runs over the updates in their order, so their
transposes already add each element's cotangents in that order, at no extra cost.
Config ``ordered_gather_gradients`` off restores JAX's transposes everywhere.

JAX transposes a `lax.gather` into a `lax.scatter_add` of the same dimension numbers, and
XLA CPU runs a scatter as a serial loop over indices, each copying one window: a gather
along a trailing axis scatters one element per index (13-30x its forward pass). There the
tangent is the same linear map in ``data`` written another way (`linear_in_data`, a
``jax.custom_jvp`` whose primal is the gather itself), so that reverse mode gets a faster
scatter-add:

* `rows_tangent` (gather along an axis with little data after it, XLA CPU): the axis moved
  to the front, whole rows gathered, the result moved back.
* `flat_tangent` (gather_elements on one CPU device, see `dmljax._core.platform`): one 1-D
  gather at flat positions.
* `gather_flat_tangent` (ONNX Gather on one CUDA GPU along an axis with little data after
  it, `use_gpu_flat`, only with ``ordered_gather_gradients`` off): the same 1-D gather at
  flat positions, faster than JAX's transpose there (docs/design/gather-gradient.md).

All are exact (the same additions as JAX's scatter-add, in the same order where XLA fixes
one), linear and made of standard primitives, so every JAX transformation works.
`IndexMode.FILL` tangents are zero where the read is filled (gradients dropped); other
modes clamp, so gradients go to the clamped position. Measurements: docs/design/gather-gradient.md.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from dmljax._core.config import config
from dmljax._core.platform import concrete_shape, cpu_or_plain, one_device_shape
from dmljax._ops.common.indices import IndexMode, gather_in_mode, size_scalar
from dmljax._ops.common.positions import clamped, flat_dtype, flat_positions, flat_targets, use_flat
from dmljax._ops.ordered.ordered_add import ordered_take

__all__ = [
    "elements_targets",
    "flat_tangent",
    "gather_flat_tangent",
    "gather_targets",
    "linear_in_data",
    "nd_targets",
    "ordered_choice",
    "ordered_tangent",
    "rows_tangent",
    "use_gpu_flat",
    "use_rows",
]


def linear_in_data(primal: Callable, tangent: Callable) -> Callable:
    """``primal(data, index)`` whose derivative in ``data`` is ``tangent(data_dot, index)``.

    ``tangent`` must be the same linear map in ``data`` as ``primal``; ``index`` (integer)
    gets no derivative.
    """

    @jax.custom_jvp
    def fun(data: jax.Array, index: jax.Array) -> jax.Array:
        return primal(data, index)

    @fun.defjvp
    def fun_jvp(primals: tuple, tangents: tuple) -> tuple[jax.Array, jax.Array]:
        data, index = primals
        return fun(data, index), tangent(tangents[0], index)

    return fun


def use_rows(shape: tuple, axis: int) -> bool:
    """Whether `rows_tangent` beats JAX's own transpose for a gather along ``axis``."""
    inner = shape[axis + 1 :]
    limit = config.gather_rows_tangent_max_inner
    return config.gather_rows_tangent and axis > 0 and concrete_shape(inner) and math.prod(inner) < limit


def use_gpu_flat(data_shape: tuple, axis: int, out_shape: tuple, itemsize: int) -> bool:
    """Whether `gather_flat_tangent` beats JAX's own transpose on a CUDA GPU (see the constants).

    ``out_shape`` is the gather's output shape (the cotangent's), concrete (an index with a
    symbolic dimension, as in `jax.export`, keeps JAX's transpose); the flat positions need
    `use_flat`'s conditions on ``data_shape`` (one device, a concrete shape, uint32 positions).

    Examples:
      >>> use_gpu_flat((4096, 1024), 1, (4096, 1024), 4)  # 16 MiB along the last axis, one device
      True
      >>> use_gpu_flat((1024, 1024, 4), 1, (1024, 1024, 4), 4), use_gpu_flat((64, 1024), 0, (64, 1024), 4)
      (False, False)
    """
    if not (config.gather_gpu_flat_tangent and use_flat(data_shape) and concrete_shape(out_shape)):
        return False
    inner = math.prod(data_shape[axis + 1 :])
    nbytes = math.prod(out_shape) * itemsize
    return (
        inner < config.gather_gpu_flat_tangent_max_inner
        and nbytes >= inner * config.gather_gpu_flat_tangent_bytes_per_inner
    )


def _take_leading(operand: jax.Array, index: jax.Array, mode: IndexMode) -> jax.Array:
    """``operand[index]`` along axis 0 (1-D ``index``), zero for out-of-range `FILL` reads.

    A 1-D operand is read in windows of one element (``(N, 1)``, then reshaped): the
    transposed scatter-add then takes ``(N, 1)`` updates, which XLA CPU does not copy
    (docs/design/scatter-cpu.md).
    """
    inner = mode if mode is IndexMode.FILL else IndexMode.PROMISE_IN_BOUNDS  # other modes: clamped already
    if operand.ndim == 1:
        dnums = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(), start_index_map=(0,))
        return gather_in_mode(operand, index[:, None], dnums, (1,), inner).reshape(index.shape)
    dnums = lax.GatherDimensionNumbers(
        offset_dims=tuple(range(1, operand.ndim)), collapsed_slice_dims=(0,), start_index_map=(0,)
    )
    return gather_in_mode(operand, index[:, None], dnums, (1, *operand.shape[1:]), inner)


def rows_tangent(data_dot: jax.Array, index: jax.Array, *, axis: int, mode: IndexMode) -> jax.Array:
    """ONNX Gather's tangent: move ``axis`` to the front, gather rows, move the result back."""
    rows = clamped(index.reshape(-1), data_dot.shape[axis], mode)
    out = _take_leading(jnp.moveaxis(data_dot, axis, 0), rows, mode)
    out = out.reshape(index.shape + out.shape[1:])
    return jnp.moveaxis(out, tuple(range(index.ndim)), tuple(range(axis, axis + index.ndim)))


def gather_flat_tangent(data_dot: jax.Array, index: jax.Array, *, axis: int, mode: IndexMode) -> jax.Array:
    """ONNX Gather's tangent on one CUDA GPU: one gather from the flattened ``data_dot``.

    `flat_tangent` on the data viewed as ``(outer, size, inner)``, with the index ``(k,)``
    broadcast to ``(outer, k, inner)``: each result reads one element at its flat position.
    """
    shape = data_dot.shape
    outer, inner = math.prod(shape[:axis]), math.prod(shape[axis + 1 :])
    along = lax.broadcast_in_dim(index.reshape(-1), (outer, index.size, inner), (1,))
    out = flat_tangent(data_dot.reshape(outer, shape[axis], inner), along, axis=1, mode=mode)
    return out.reshape(shape[:axis] + index.shape + shape[axis + 1 :])


def flat_tangent(data_dot: jax.Array, index: jax.Array, *, axis: int, mode: IndexMode) -> jax.Array:
    """GatherElements' tangent on one CPU device: one gather from the flattened ``data_dot``."""
    lin = flat_positions(index, data_dot.shape, axis, mode)
    return _take_leading(data_dot.reshape(-1), lin.reshape(-1), mode).reshape(index.shape)


def ordered_choice(on_cpu: Callable, ordered: Callable, shape: tuple, dtype: jax.typing.DTypeLike) -> Callable | None:
    """The tangent of a gather of ``shape`` and ``dtype`` whose transpose adds in the cotangent's order.

    ``on_cpu(data_dot, index)`` on one XLA CPU device (config ``cpu_ordered_scatter``: its
    transpose is an in-order XLA scatter there), ``ordered`` (`ordered_tangent`) on every
    other platform and device count. None where the caller keeps its own tangents: config
    ``ordered_gather_gradients`` off, or data that has no gradient (integers, bool).
    """
    if not (config.ordered_gather_gradients and jnp.issubdtype(dtype, jnp.inexact)):
        return None
    if config.cpu_ordered_scatter and one_device_shape(shape):
        return functools.partial(cpu_or_plain, on_cpu, ordered)
    return ordered


def ordered_tangent(data_dot: jax.Array, index: jax.Array, *, targets: Callable) -> jax.Array:
    """A gather's tangent as one `ordered_take` at the flat position of every output element.

    ``targets(shape, index)`` gives those positions (of the output's shape; ``prod(shape)``
    where a `FILL` read is filled): its transpose adds the cotangent into the data in the
    cotangent's row-major order (`dmljax._ops.ordered.ordered_add.ordered_add`).
    """
    positions = targets(data_dot.shape, index)
    return ordered_take(data_dot.reshape(-1), positions.reshape(-1)).reshape(positions.shape)


def _bounded(index: jax.Array, size: int, mode: IndexMode) -> jax.Array:
    """Normalised indices at most ``size`` (`FILL`: out of range, so dropped) or ``size - 1``, in
    their own type, so that a narrower flat type cannot wrap them."""
    top = size if mode is IndexMode.FILL else size - 1
    return jnp.minimum(index, size_scalar(top, index.dtype))


def gather_targets(shape: tuple, index: jax.Array, *, axis: int, mode: IndexMode) -> jax.Array:
    """Flat positions into data of ``shape`` of ONNX Gather's output elements along ``axis``.

    Examples:
      >>> gather_targets((2, 3), jnp.array([2, 0, 9], jnp.uint32), axis=1, mode=IndexMode.FILL)
      Array([[2, 0, 6],
             [5, 3, 6]], dtype=uint32)
    """
    q = index.ndim
    out = shape[:axis] + index.shape + shape[axis + 1 :]
    coords = [lax.broadcasted_iota(np.uint32, out, d) for d in range(axis)]
    coords.append(lax.broadcast_in_dim(_bounded(index, shape[axis], mode), out, tuple(range(axis, axis + q))))
    coords += [lax.broadcasted_iota(np.uint32, out, d + q - 1) for d in range(axis + 1, len(shape))]
    return flat_targets(coords, shape, mode, flat_dtype("gather", shape))


def elements_targets(shape: tuple, index: jax.Array, *, axis: int, mode: IndexMode) -> jax.Array:
    """Flat positions into data of ``shape`` of GatherElements' output elements along ``axis``.

    Examples:
      >>> elements_targets((2, 3), jnp.array([[1], [0]], jnp.uint32), axis=0, mode=IndexMode.CLIP)
      Array([[3],
             [0]], dtype=uint32)
    """
    coords = [lax.broadcasted_iota(np.uint32, index.shape, d) for d in range(len(shape))]
    coords[axis] = _bounded(index, shape[axis], mode)
    return flat_targets(coords, shape, mode, flat_dtype("gather_elements", shape))


def nd_targets(shape: tuple, positions: tuple, *, batch_dims: int, mode: IndexMode) -> jax.Array:
    """Flat positions into data of ``shape`` of GatherND's output elements: ``positions`` holds one
    normalised index array per indexed axis (``indices.shape[:-1]``), after ``batch_dims``.

    Examples:
      >>> rows = (jnp.array([1, 0], jnp.uint32),)
      >>> nd_targets((2, 2), rows, batch_dims=0, mode=IndexMode.CLIP)
      Array([[2, 3],
             [0, 1]], dtype=uint32)
    """
    b, k = batch_dims, len(positions)
    lead = positions[0].shape
    out = lead + shape[b + k :]
    coords = [lax.broadcasted_iota(np.uint32, out, d) for d in range(b)]
    for j, p in enumerate(positions):
        coords.append(lax.broadcast_in_dim(_bounded(p, shape[b + j], mode), out, tuple(range(len(lead)))))
    coords += [lax.broadcasted_iota(np.uint32, out, len(lead) + t) for t in range(len(shape) - b - k)]
    return flat_targets(coords, shape, mode, flat_dtype("gather_nd", shape))
