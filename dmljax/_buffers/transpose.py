"""A transpose that moves the innermost axis outwards (NHWC -> NCHW), in two passes on XLA CPU.

XLA CPU emits ``transpose(x.reshape(a, p, c), (0, 2, 1))`` as one loop in output order, so
past the last-level cache every input line is fetched ``c`` times. Here: (1) transpose
each ``(t, c)`` tile of ``t`` pixels (``t * itemsize = 64`` bytes) to ``(c, t)``, in cache;
(2) move the resulting 64-byte rows to their channel's plane, streamed. Below
``dmljax.config.tiled_transpose_two_pass_min_bytes`` XLA fuses both into one loop over the
tiled output; from there on pass 1 runs in a `lax.cond` on a predicate XLA cannot know (both branches the same function)
whose branches end in a reshape that merges the tile axes, which keeps the passes apart
(`tests/test_strided.py` checks the compiled CPU HLO). Faster than XLA's transpose from
the threshold on: docs/design/tiled-transpose.md.

XLA CPU only (`lax.platform_dependent`; GPUs get `lax.transpose`), in a JAX process with
one device, when the moved-over axes hold whole tiles. Its derivative is the plain
transpose's (`jax.custom_jvp`). Under `jax.vmap` XLA simplifies the conditional back to
the fused loop: right, not faster. Measurements and alternatives: docs/design/tiled-transpose.md.
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
from jax import lax

from dmljax._core.config import config
from dmljax._core.platform import one_device_shape, opaque_predicate

__all__ = ["inner_axis_target", "transpose"]

# Tile rows are one cache line: 64 bytes on x86-64 and most AArch64 cores.
_LINE_BYTES = 64


def inner_axis_target(perm: tuple[int, ...]) -> int | None:
    """``k`` when ``perm`` moves the last axis to position ``k`` and keeps the others in order, else None.

    Examples:
      >>> inner_axis_target((2, 0, 1)), inner_axis_target((0, 3, 1, 2)), inner_axis_target((1, 0, 2))
      (0, 1, None)
    """
    n = len(perm)
    return next((k for k in range(n - 1) if perm == _inner_axis_perm(n, k)), None)


def _inner_axis_perm(n: int, k: int) -> tuple[int, ...]:
    """The permutation of ``n`` axes that moves the last one to position ``k``."""
    return tuple(range(k)) + (n - 1,) + tuple(range(k, n - 1))


def transpose(x: jax.Array, perm: tuple[int, ...]) -> jax.Array:
    """``lax.transpose(x, perm)``, bit for bit; large NHWC -> NCHW moves in two passes on XLA CPU.

    Examples:
      >>> x = jnp.arange(24.0).reshape(2, 3, 4)
      >>> bool((transpose(x, (0, 2, 1)) == x.transpose(0, 2, 1)).all())
      True
    """
    k = inner_axis_target(perm)
    if k is None or not _tiles_apply(x, k):
        return lax.transpose(x, perm)
    return _inner_axis_out(x, k)


def _tiles_apply(x: jax.Array, k: int) -> bool:
    dtype = x.dtype
    if not config.tiled_transpose or not one_device_shape(x.shape) or dtype == jnp.bool_ or jnp.iscomplexobj(x):
        return False
    tile = _LINE_BYTES // dtype.itemsize
    return x.shape[-1] > 1 and math.prod(x.shape[k:-1]) % tile == 0


@functools.partial(jax.custom_jvp, nondiff_argnums=(1,))
def _inner_axis_out(x: jax.Array, k: int) -> jax.Array:
    """Move the last axis of ``x`` to position ``k``: two passes on XLA CPU, plain elsewhere."""
    return lax.platform_dependent(x, cpu=functools.partial(_tiled, k=k), default=functools.partial(_plain, k=k))


@_inner_axis_out.defjvp
def _inner_axis_out_jvp(k: int, primals: tuple, tangents: tuple) -> tuple[jax.Array, jax.Array]:
    return _inner_axis_out(primals[0], k), _plain(tangents[0], k)


def _plain(x: jax.Array, k: int) -> jax.Array:
    return lax.transpose(x, _inner_axis_perm(x.ndim, k))


def _tiled(x: jax.Array, k: int, min_bytes: int | None = None) -> jax.Array:
    """Pass 1: ``(t, c)`` tiles -> ``(c, t)``; pass 2: 64-byte rows to their planes.

    From ``min_bytes`` on, pass 1 runs in a conditional XLA cannot fold; below, XLA fuses
    both passes into one loop over the tiled output.
    """
    outer, pixels, channels = math.prod(x.shape[:k]), math.prod(x.shape[k:-1]), x.shape[-1]
    tile = _LINE_BYTES // x.dtype.itemsize
    blocks = pixels // tile

    def tiles(v: jax.Array) -> jax.Array:  # the reshape keeps the tiles' physical order
        v = v.reshape(outer, blocks, tile, channels).transpose(0, 1, 3, 2)
        return v.reshape(outer, blocks, channels * tile)

    if min_bytes is None:
        min_bytes = config.tiled_transpose_two_pass_min_bytes
    if x.size * x.dtype.itemsize >= min_bytes:
        tiled = lax.cond(opaque_predicate(x), tiles, tiles, x)
    else:
        tiled = tiles(x)
    rows = tiled.reshape(outer, blocks, channels, tile).transpose(0, 2, 1, 3)
    return rows.reshape(x.shape[:k] + (channels,) + x.shape[k:-1])
