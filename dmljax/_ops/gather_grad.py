"""Tangents of gather and gather_elements, written so that their transposes run fast on XLA CPU.

JAX transposes a `lax.gather` into a `lax.scatter_add` of the same dimension numbers. XLA CPU
runs a scatter as a serial loop over indices, each copying one window: a gather along a
trailing axis scatters one element per index (13-30x its forward pass), and gather_elements'
batching dimensions become a two-column index array (take_along_axis: 2-5x its forward pass).

`linear_in_data` wraps a gather in `jax.custom_jvp`: the primal is the gather itself (the
forward pass is unchanged), the tangent is the same linear map in ``data`` written another
way, so that reverse mode, which transposes the tangent, gets a faster scatter-add:

* `rows_tangent` (gather along an axis with little data after it): the axis is moved to the
  front (`jnp.moveaxis`: the other axes stay separate, so a sharded one stays sharded), whole
  rows are gathered, and the result is moved back; its transpose scatter-adds whole
  contiguous rows along the leading axis between two transposes. On XLA CPU only (other
  platforms get JAX's transpose), on any number of devices: it adds no collective.
* `flat_tangent` (gather_elements on one CPU device, see `dmljax._core.platform`): one 1-D
  gather at flat positions; its transpose is one 1-D scatter-add with a one-column index.
  Elsewhere (GPU, several devices) the tangent is the gather itself: JAX's transpose, with
  batching dimensions, which the partitioner keeps local.
* `gather_flat_tangent` (ONNX Gather on one CUDA GPU along an axis with little data after
  it, `use_gpu_flat`): the same one 1-D gather at flat positions. XLA GPU's scatter-add of
  JAX's transpose writes one window of ``inner`` elements per update; along the last axis of
  float32 ``(65536, 1024)`` it took 4.78 ms, 23x the forward pass, and the 1-D scatter-add
  1.01 ms (H100, jax 0.11.2; more figures at `GPU_FLAT_MAX_INNER`). `rows_tangent` gained
  nothing there (4.78 ms: XLA GPU's scatter is the same with the axis in front), nor did a
  flat gather_elements tangent (the same time as JAX's on both axes).

All are exact (the same additions as JAX's scatter-add: in index order on the CPU, in the
order of XLA GPU's atomics on a GPU, as for JAX's own), linear, and made of standard
primitives, so `jax.jvp`, `jax.vjp`, `jax.grad`, `jax.vmap` and higher orders all work.
Forward-mode tangents pay for the rearrangement (the transposes or the flat indices).
Out-of-range indices: `IndexMode.FILL` tangents are zero where the read is filled
(gradients dropped); other modes clamp, so gradients go to the clamped position.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import jax
import jax.numpy as jnp
from jax import lax

from dmljax._core.platform import concrete_shape
from dmljax._ops.formulation import clamped, flat_positions, use_flat
from dmljax._ops.indices import IndexMode, gather_in_mode

__all__ = [
    "GPU_FLAT_MAX_INNER",
    "GPU_FLAT_BYTES_PER_INNER",
    "ROWS_MAX_INNER",
    "flat_tangent",
    "gather_flat_tangent",
    "linear_in_data",
    "rows_tangent",
    "use_gpu_flat",
    "use_rows",
]

# `rows_tangent` is used when fewer than this many elements follow the gathered axis: measured
# on float32 (., 1024, inner) at 16 MiB, moving the axis to the front made the backward pass
# 5.6x faster for inner 1, equal for 4, and 1.3-2x slower for 16-64 (the windows are long
# enough for XLA's scatter loop, and the transposes cost two extra passes).
ROWS_MAX_INNER = 4

# `gather_flat_tangent` is used on a CUDA GPU with fewer than `GPU_FLAT_MAX_INNER` elements
# after the gathered axis and at least ``inner * GPU_FLAT_BYTES_PER_INNER`` bytes of
# cotangent. H100, jax 0.11.2, float32 (., 1024, inner) gathered along the 1024 with 1024
# indices, backward time flat / JAX's (medians of 7 rounds of 10 queued calls; the 256 MiB
# column and the inner 64 row from an earlier run, 9 rounds of 20):
#
#   inner    1 MiB  4 MiB  16 MiB  32 MiB  64 MiB  128 MiB  256 MiB
#   1        0.93   0.97   0.90    0.74    0.33    0.25     0.21
#   2        0.98   1.02   0.75    0.57    0.37    0.27
#   4        0.93   0.97   1.08    0.80    0.51    0.40     0.34
#   8        0.94   0.99   1.14    0.94    0.71    0.59
#   16       1.00   1.05   1.17    1.09    0.93    0.81     0.76
#   32       0.97   0.96   1.13    1.17    1.11    1.02
#   64                     1.12                             1.04
#
# bfloat16, inner 1: 1.08 at 16 MiB, 0.75 at 64 MiB; inner 4: 0.94 and 0.89. Other numbers
# of indices, float32 along 1024: 64 indices 0.64 and 0.59 (16 and 64 MiB of cotangent; many
# data rows), 4096 (repeats) 0.88, 0.80 and 0.26 (16, 64, 256 MiB), 0.92 for inner 4 at
# 64 MiB, 16 indices 0.83 at 64 MiB.
GPU_FLAT_MAX_INNER = 32
GPU_FLAT_BYTES_PER_INNER = 2**23


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
    return axis > 0 and concrete_shape(inner) and math.prod(inner) < ROWS_MAX_INNER


def use_gpu_flat(data_shape: tuple, axis: int, out_shape: tuple, itemsize: int) -> bool:
    """Whether `gather_flat_tangent` beats JAX's own transpose on a CUDA GPU (see the constants).

    ``out_shape`` is the gather's output shape (the cotangent's), concrete (an index with a
    symbolic dimension, as in `jax.export`, keeps JAX's transpose); the flat positions need
    `use_flat`'s conditions on ``data_shape`` (one device, a concrete shape, uint32 positions).

    Examples:
      >>> use_gpu_flat((4096, 1024), 1, (4096, 1024), 4) == use_flat((4096, 1024))  # 16 MiB
      True
      >>> use_gpu_flat((1024, 1024, 4), 1, (1024, 1024, 4), 4), use_gpu_flat((64, 1024), 0, (64, 1024), 4)
      (False, False)
    """
    if not (use_flat(data_shape) and concrete_shape(out_shape)):
        return False
    inner = math.prod(data_shape[axis + 1 :])
    nbytes = math.prod(out_shape) * itemsize
    return inner < GPU_FLAT_MAX_INNER and nbytes >= inner * GPU_FLAT_BYTES_PER_INNER


def _take_leading(operand: jax.Array, index: jax.Array, mode: IndexMode) -> jax.Array:
    """``operand[index]`` along axis 0 (1-D ``index``), zero for out-of-range `FILL` reads."""
    dnums = lax.GatherDimensionNumbers(
        offset_dims=tuple(range(1, operand.ndim)), collapsed_slice_dims=(0,), start_index_map=(0,)
    )
    inner = mode if mode is IndexMode.FILL else IndexMode.PROMISE_IN_BOUNDS  # other modes: clamped already
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
