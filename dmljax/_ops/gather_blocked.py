"""gather_elements along a long outer axis on XLA CPU: gathered in 128-byte column blocks.

``out[p] = data[p with p[axis] = index[p]]`` with random indices along a long ``axis`` reads
one 64-byte line per element, from anywhere in ``data``. XLA CPU runs the gather as one
loop in output order, so consecutive reads fall in all the columns' rows at once, and past
the last-level cache (32 MiB on the 2-core EPYC test machine) each read is a memory access.
Split the axes after ``axis`` into blocks of ``b`` elements (128 bytes), move the block axis
outside ``axis``, and gather block by block: ``(o, r, i) -> (o, i/b, r, b)``. One block's
``r * b`` elements (8 MiB for float32 ``(65536, 1024)``) are read by ``q * b`` consecutive
outputs, and stay in cache; two transposes in and one out cost three streaming passes.
The tangent (`dmljax._ops.gather_grad.flat_tangent`, flat positions) runs in the same blocks,
so the backward pass is a serial scatter-add in blocked order, between the conditionals'
transposes: each target element gets the same additions in the same order as the flat
scatter-add (row order within its column), so the same bits. Measured, backward / JAX's
``take_along_axis`` backward: 0.39 at 256 MiB (419 vs 1086 ms; flat scatter-add unblocked
917 ms, the blocked forward with JAX's own transpose 588 ms), 0.40 at 16 MiB (16 vs 40 ms;
unblocked 31 ms).

XLA must keep the gather in blocked order, and the blocks physically blocked: fused with
the transposes around it, it is the output-order loop again (1.07-1.10x XLA's plain
gather); with the transposes inside the gather's conditional, layout assignment turns them
into bitcasts and the gather reads the original layout in blocked order (0.87-0.93x). So
two `lax.cond`s on a predicate XLA cannot know (the low bit of the first normalised index;
both branches of each are the same function): the first writes the blocks (its outputs
merge the blocked axes, so their layout is fixed), the second gathers from them
(`tests/test_gather.py` checks the compiled HLO).

Measured (float32 ``(rows, 1024)``, int32 indices in ``[-rows, rows)``, along axis 0; medians
of 5-9 interleaved rounds, malloc steady state, shared 2-core machine), time /
``take_along_axis``, 32-element blocks: 0.40-0.44 at 256 MiB (249-264 vs 610-621 ms; torch
1599 ms in the benchmark), 0.46-0.47 at 32 MiB, 0.70-0.72 at 16 MiB (one run of an earlier
variant with an extra copy: 0.97), but 1.32 at 8 MiB and 1.17 at 4 MiB (the data fits the
cache). Other block widths (one conditional, an extra copy): 16 elements 0.50-0.61 at 32-256
MiB, 64 elements 0.41-0.57, 32 elements 0.39-0.51. Hence 128-byte blocks, from
`BLOCKED_MIN_BYTES` of data on. The issue's earlier ``(C/32, R, 32)`` prototype as separate
programs ran 203-213 vs 287 ms; in one program without a conditional it is the fused loop.

**Off the CPU** (an H100, jax 0.11.2, float32 ``(65536, 1024)`` along axis 0, medians of 7
pipelined repetitions): the gradient's scatter-add in column blocks between plain
transposes (no conditionals) takes 1.17 ms against 4.71 ms (0.25x; 0.36x at 64 MiB, 0.73x
at 32 MiB, 1.13x at 16 MiB: `GPU_MIN_BYTES`); its additions land in another order than
the plain scatter-add's, as XLA GPU's atomic scatter-add orders them anyway. The forward
gather with plain transposes takes the plain gather's time (XLA fuses them back), but in
the conditionals, as on the CPU, 1.22 ms against 2.19 (0.56x; 0.64x at 128 MiB, 0.86x at
64 MiB, 1.52x at 32 MiB: `GPU_FORWARD_MIN_BYTES`); the gradient in the conditionals took
1.72 ms.

On XLA CPU (`lax.platform_dependent`; elsewhere the plain gather), with one
device (the predicate reads an index), for concrete shapes whose ``axis`` has at least
`MIN_AXIS` entries and whose axes after ``axis`` hold at least two whole blocks. Along a
short axis the plain gather's reads are a few sequential streams and blocks only add their
three passes: 2.4x the time for DirectML's GatherElements over 8 channels of an NHWC
buffer (`python -m dmljax --only compile_operator`, 16 MiB) before `MIN_AXIS` existed.
The elements gathered, the index normalisation and the out-of-range mode are the plain
gather's: the result is the same, bit for bit. Under `jax.vmap` the predicate is batched
and XLA folds the conditional away: right, not faster.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import jax
import numpy as np
from jax import lax

from dmljax._core.platform import one_device_shape, opaque_predicate

__all__ = ["BLOCKED_MIN_BYTES", "GPU_FORWARD_MIN_BYTES", "GPU_MIN_BYTES", "MIN_AXIS", "blocked", "use_blocked"]

# Smallest ``data`` (bytes) gathered in blocks: 0.70-0.72x at 16 MiB, 1.32x at 8 MiB.
BLOCKED_MIN_BYTES = 2**24
# Off the CPU, the smallest ``data`` whose gradient (the scatter-add) runs in blocks between
# plain transposes. H100, float32 (rows, 1024) along axis 0, backward time blocked / plain:
# 1.13 at 16 MiB, 0.73 at 32, 0.36 at 64, 0.28 at 128, 0.25 at 256 MiB.
GPU_MIN_BYTES = 2**25
# Off the CPU, the smallest ``data`` whose forward gather runs in blocks, inside the two
# conditionals (with plain transposes it takes the plain gather's time, 0.99-1.00). H100, as
# above, forward time blocked / plain: 1.52 at 32 MiB, 0.86 at 64, 0.64 at 128, 0.56 at 256.
GPU_FORWARD_MIN_BYTES = 2**26
# Shortest axis gathered in blocks. Along a short axis the plain gather reads a few streams
# that the prefetcher follows: float32, 32 MiB of data as (R, 8 Mi / R), blocked / plain time:
# 5.45 at R = 4, 1.78 at R = 8, 1.26 at R = 16, 0.49 at R = 32, 0.38-0.52 at R = 128-2048.
MIN_AXIS = 32
# Bytes of one column block: 32 float32 (16 and 64 measured slower, see the module doc).
_BLOCK_BYTES = 128


def _block(dtype: np.dtype) -> int:
    return max(1, _BLOCK_BYTES // np.dtype(dtype).itemsize)


def use_blocked(shape: tuple, axis: int, dtype: jax.typing.DTypeLike, min_bytes: int = BLOCKED_MIN_BYTES) -> bool:
    """Whether `blocked` applies to ``data`` of ``shape`` and ``dtype`` gathered along ``axis``.

    Examples:
      >>> use_blocked((65536, 1024), 0, np.float32) == (jax.device_count() == 1)
      True
      >>> use_blocked((2048, 1024), 0, np.float32), use_blocked((65536, 1024), 1, np.float32)
      (False, False)
      >>> use_blocked((1, 8, 8192, 64), 1, np.float32)  # 16 MiB, but an axis of 8: streams, no blocks
      False
    """
    if not one_device_shape(shape) or shape[axis] < MIN_AXIS:
        return False
    dtype = np.dtype(dtype)
    inner, block, itemsize = math.prod(shape[axis + 1 :]), _block(dtype), dtype.itemsize
    return inner % block == 0 and inner >= 2 * block and math.prod(shape) * itemsize >= min_bytes


def blocked(
    take: Callable[..., jax.Array], data: jax.Array, index: jax.Array, axis: int, *, apart: bool = True
) -> jax.Array:
    """``take(data, index, axis=axis)`` computed in column blocks (module doc).

    ``take`` is the element-wise gather (any rank, any ``axis``); ``index`` holds normalised
    unsigned indices of ``data``'s shape except along ``axis``. ``apart``: the blocks are
    written and gathered inside two conditionals (XLA CPU); otherwise plain transposes
    (XLA GPU, `GPU_MIN_BYTES`).
    """
    outer, rows, inner = math.prod(data.shape[:axis]), data.shape[axis], math.prod(data.shape[axis + 1 :])
    block = _block(data.dtype)
    count = index.shape[axis]

    def to_blocks(d: jax.Array, i: jax.Array) -> tuple[jax.Array, jax.Array]:  # merged: physically blocked
        d = d.reshape(outer, rows, inner // block, block).transpose(0, 2, 1, 3)
        i = i.reshape(outer, count, inner // block, block).transpose(0, 2, 1, 3)
        return d.reshape(outer, inner // block, rows * block), i.reshape(outer, inner // block, count * block)

    def gather(d: jax.Array, i: jax.Array) -> jax.Array:
        d = d.reshape(outer, inner // block, rows, block)
        i = i.reshape(outer, inner // block, count, block)
        return take(d, i, axis=2).reshape(outer, inner // block, count * block)

    if apart:
        pred = opaque_predicate(index)
        out = lax.cond(pred, gather, gather, *lax.cond(pred, to_blocks, to_blocks, data, index))
    else:
        out = gather(*to_blocks(data, index))
    return out.reshape(outer, inner // block, count, block).transpose(0, 2, 1, 3).reshape(index.shape)
