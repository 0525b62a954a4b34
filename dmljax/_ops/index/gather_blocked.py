"""gather_elements along a long outer axis on XLA CPU: gathered in 128-byte column blocks.

``out[p] = data[p with p[axis] = index[p]]`` with random indices along a long ``axis`` reads
one 64-byte line per element, and XLA CPU's gather loop runs in output order, so past the
last-level cache each read is a memory access. Split the axes after ``axis`` into blocks of
``b`` elements (128 bytes), move the block axis outside ``axis``, and gather block by
block: ``(o, r, i) -> (o, i/b, r, b)``; one block's ``r * b`` elements stay in cache. Two
`lax.cond`s on a predicate XLA cannot know (both branches the same function) keep the
blocks physically blocked: the first writes them, the second gathers from them
(`tests/test_gather.py` checks the compiled HLO). The tangent
(`dmljax._ops.index.gather_grad.flat_tangent`) runs in the same blocks: same additions in the
same order, the same bits.

On XLA CPU (`lax.platform_dependent`; elsewhere the plain gather), with one device, for
concrete shapes whose ``axis`` has at least ``blocked_gather_elements_min_axis`` entries
and whose axes after ``axis`` hold at least two whole blocks, from
``blocked_gather_elements_min_bytes`` of data (options of `dmljax.config`; faster than
``take_along_axis`` there on an AVX2 host: docs/design/blocked-gather.md); on an AVX-512 host only the
gradient runs in blocks (`blocked_forward_on_cpu`: there the plain forward wins). Off
the CPU the gradient's scatter-add runs in blocks between plain transposes from
``blocked_gather_elements_gpu_gradient_min_bytes``, the forward gather in the
conditionals from ``blocked_gather_elements_gpu_forward_min_bytes``. The result is the plain gather's, bit
for bit.
Under `jax.vmap` XLA folds the conditional away: right, not faster.
Measurements and alternatives: docs/design/blocked-gather.md.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import jax
import numpy as np
from jax import lax

from dmljax._core import platform
from dmljax._core.config import config
from dmljax._core.platform import one_device_shape, opaque_predicate

__all__ = ["blocked", "blocked_forward_on_cpu", "use_blocked"]

# Bytes of one column block: 32 float32 (16 and 64 measured slower: docs/design/blocked-gather.md).
_BLOCK_BYTES = 128


def _block(dtype: np.dtype) -> int:
    return max(1, _BLOCK_BYTES // np.dtype(dtype).itemsize)


def use_blocked(shape: tuple, axis: int, dtype: jax.typing.DTypeLike, min_bytes: int | None = None) -> bool:
    """Whether `blocked` applies to ``data`` of ``shape`` and ``dtype`` gathered along ``axis``.

    Examples:
      >>> use_blocked((65536, 1024), 0, np.float32)  # 256 MiB along a long axis, one device
      True
      >>> use_blocked((2048, 1024), 0, np.float32), use_blocked((65536, 1024), 1, np.float32)
      (False, False)
      >>> use_blocked((1, 8, 8192, 64), 1, np.float32)  # 16 MiB, but an axis of 8: streams, no blocks
      False
    """
    if not config.blocked_gather_elements or not one_device_shape(shape):
        return False
    if shape[axis] < config.blocked_gather_elements_min_axis:
        return False
    if min_bytes is None:
        min_bytes = config.blocked_gather_elements_min_bytes
    dtype = np.dtype(dtype)
    inner, block, itemsize = math.prod(shape[axis + 1 :]), _block(dtype), dtype.itemsize
    return inner % block == 0 and inner >= 2 * block and math.prod(shape) * itemsize >= min_bytes


def blocked_forward_on_cpu() -> bool:
    """Whether XLA CPU programs gather forward in blocks where `use_blocked`: not on AVX-512 hosts, by default.

    A heuristic on the tracing host's class (``blocked_gather_elements_forward_avx512``):
    the AVX-512 host measured serves random reads fast enough that the plain gather wins
    (docs/design/blocked-gather.md). The gradient runs in blocks on every host; programs
    for other platforms never read this.

    Examples:
      >>> blocked_forward_on_cpu() == (not platform.host_has_avx512())
      True
    """
    return config.blocked_gather_elements_forward_avx512 or not platform.host_has_avx512()


def blocked(
    take: Callable[..., jax.Array], data: jax.Array, index: jax.Array, axis: int, *, apart: bool = True
) -> jax.Array:
    """``take(data, index, axis=axis)`` computed in column blocks (module doc).

    ``take`` is the element-wise gather (any rank, any ``axis``); ``index`` holds normalised
    unsigned indices of ``data``'s shape except along ``axis``. ``apart``: the blocks are
    written and gathered inside two conditionals (XLA CPU); otherwise plain transposes
    (XLA GPU, ``dmljax.config.blocked_gather_elements_gpu_gradient_min_bytes``).
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
