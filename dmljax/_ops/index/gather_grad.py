"""Tangents of gather and gather_elements, written so that their transposes run fast on XLA CPU.

JAX transposes a `lax.gather` into a `lax.scatter_add` of the same dimension numbers, and
XLA CPU runs a scatter as a serial loop over indices, each copying one window: a gather
along a trailing axis scatters one element per index (13-30x its forward pass).
`linear_in_data` wraps a gather in `jax.custom_jvp`: the primal is the gather itself, the
tangent the same linear map in ``data`` written another way, so that reverse mode gets a
faster scatter-add:

* `rows_tangent` (gather along an axis with little data after it, XLA CPU, any number of
  devices): the axis moved to the front, whole rows gathered, the result moved back.
* `flat_tangent` (gather_elements on one CPU device, see `dmljax._core.platform`): one 1-D
  gather at flat positions. Elsewhere the tangent is the gather itself (JAX's transpose).
* `gather_flat_tangent` (ONNX Gather on one CUDA GPU along an axis with little data after
  it, `use_gpu_flat`): the same 1-D gather at flat positions, faster than JAX's transpose
  there (docs/design/gather-gradient.md).

All are exact (the same additions as JAX's scatter-add, in the same order where XLA fixes
one), linear and made of standard primitives, so every JAX transformation works.
`IndexMode.FILL` tangents are zero where the read is filled (gradients dropped); other
modes clamp, so gradients go to the clamped position. Measurements: docs/design/gather-gradient.md.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import jax
import jax.numpy as jnp
from jax import lax

from dmljax._core.config import config
from dmljax._core.platform import concrete_shape
from dmljax._ops.common.indices import IndexMode, gather_in_mode
from dmljax._ops.common.positions import clamped, flat_positions, use_flat

__all__ = [
    "flat_tangent",
    "gather_flat_tangent",
    "linear_in_data",
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
