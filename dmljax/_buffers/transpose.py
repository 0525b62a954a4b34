"""A transpose that moves the innermost axis outwards (NHWC -> NCHW), in two passes on XLA CPU.

XLA CPU emits ``transpose(x.reshape(a, p, c), (0, 2, 1))`` as one loop in output order:
each output row reads one element per 64-byte line of the input, so past the last-level
cache (32 MiB on the 2-core EPYC test machine) every input line is fetched ``c`` times.
Two passes over 64-byte tiles do better there: (1) transpose each ``(t, c)`` tile of ``t``
pixels (``t * itemsize = 64`` bytes) to ``(c, t)`` -- a 1-4 KiB tile, read and written in
cache; (2) move the resulting 64-byte rows to their channel's plane: whole lines, streamed.

XLA must not fuse the two passes (fused, the loop is the one-pass loop again), and it must
keep the tiles' physical order. `lax.optimization_barrier` does neither on XLA CPU (it is
expanded away before fusion), and a `lax.cond` on a constant predicate is folded. What
holds in jax/jaxlib 0.10.2: a `lax.cond` on a predicate XLA cannot know (the low bit of
the buffer's first element; both branches are the same function, so the value never
matters) whose branches end in a reshape that merges the transposed tile axes (else layout
assignment makes pass 1 a bitcast and moves its work into pass 2). `tests/test_strided.py`
checks the compiled CPU HLO for the conditional and the two transposing fusions.

Measured (float32 NHWC -> NCHW, 16 channels, ``(1, 16, h, 256)``; medians of 9 interleaved
rounds, malloc steady state, shared and noisy 2-core machine), time / XLA's transpose:

* two passes: 0.35-0.52 at 256 MiB (68 vs 130 ms quiet; torch 132 ms), 0.39-0.48 at
  32-64 MiB; 1.07-1.10 at 4-16 MiB in three runs of four (the tensor and its copy fit the
  cache, and pass 1's output is one more pass over memory); 0.65-0.75 at 1 MiB, 1.1 at
  256 KiB (the conditional's dispatch, ~50 us).
* the same tiles without the conditional (XLA fuses them into one loop over the tiled
  output, 16-pixel runs): 0.70-0.89 at 16 MiB, 0.84-0.97 at 1-8 MiB (1.10 once at 2 MiB),
  but 0.96-1.13 at 32-256 MiB.

So below `TWO_PASS_MIN_BYTES` the tiles run fused, from there on in two passes. Rejected:
32-element tiles (128-byte rows), 1.0-1.3x the 16-element ones below 32 MiB, equal above;
64-element tiles, equal to 16 at 256 MiB in one run, 1.15x in another.

The tiles are used on XLA CPU only (`lax.platform_dependent`; GPUs have a tiled transpose
emitter of their own and get `lax.transpose`), in a JAX process with one device (the
predicate reads element 0, which under sharding would be a collective), when the
moved-over axes hold whole tiles; in two passes from `TWO_PASS_MIN_BYTES` on. Its derivative is the plain
transpose's (`jax.custom_jvp`), so gradients and `jax.linearize` see no conditional: the
backward pass (NCHW -> NHWC) reads ``c`` planes in order, which XLA's loop does well; the
tiles' own transpose measured 1.13-1.14x slower at 16 and 256 MiB, 0.96 at 64 MiB (15 rounds).
Under `jax.vmap` the predicate is batched, the conditional becomes a select of two equal
values, and XLA simplifies it back to the fused one-pass loop: right, not faster.
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
from jax import lax

from dmljax._core.platform import one_device_shape, opaque_predicate

__all__ = ["TWO_PASS_MIN_BYTES", "inner_axis_target", "transpose"]

# Smallest tensor (bytes) that takes two passes on XLA CPU: measured crossover between
# 16 MiB (two passes 1.07-1.10x slower) and 32 MiB (2.1x faster); see the module doc.
TWO_PASS_MIN_BYTES = 2**25
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
    if not one_device_shape(x.shape) or dtype == jnp.bool_ or jnp.iscomplexobj(x):
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


def _tiled(x: jax.Array, k: int, min_bytes: int = TWO_PASS_MIN_BYTES) -> jax.Array:
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

    if x.size * x.dtype.itemsize >= min_bytes:
        tiled = lax.cond(opaque_predicate(x), tiles, tiles, x)
    else:
        tiled = tiles(x)
    rows = tiled.reshape(outer, blocks, channels, tile).transpose(0, 2, 1, 3)
    return rows.reshape(x.shape[:k] + (channels,) + x.shape[k:-1])
