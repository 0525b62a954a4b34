"""The sorted fold's steps as one Pallas kernel: each lane folds one run, its loop inside the kernel.

`dmljax._ops.ordered.sorted_fold` folds every target's run of updates left to right. In its lax form
each step is a `lax.while_loop` iteration, several kernel launches on a GPU, so a run of
``L`` updates costs ``L`` launches (one hot target among 2^24 updates: docs/design/ordered-reductions.md).
Here one Triton program takes a block of runs, one lane each, and loops over the longest
run of its block: ``acc = f(acc, u)`` with ``u`` the lane's next update, masked once the
lane's run has ended; each iteration loads `UNROLL` updates before folding them in order.
The fold's order and rounding are the lax form's, which is its oracle
(`tests/test_sorted_fold.py`); on the CPU the kernel runs in Pallas' interpret mode.
Pallas' Triton backend is deprecated since jax 0.11: config ``ordered_fold_kernel`` is off
by default there (the lax form), and a jax without the backend (`TRITON` False) runs the
kernel interpreted only (docs/design/ordered-reductions.md).
"""

from __future__ import annotations

import functools
import types
from collections.abc import Callable

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl

from dmljax._core.limits import INT32_MAX

pallas_triton: types.ModuleType | None
try:  # deprecated since jax 0.11, to be removed: without it the kernel runs interpreted only
    from jax.experimental.pallas import triton as pallas_triton
except ImportError:  # pragma: no cover (a jax without Pallas' Triton backend)
    pallas_triton = None

__all__ = ["BLOCK", "MAX_UPDATES", "TRITON", "UNROLL", "fold_runs", "supported"]

# Whether this jax has Pallas' Triton backend (the compiled kernel; interpret mode needs none).
TRITON = pallas_triton is not None

# Lanes (runs) per program: one warp's worth of 32-bit lanes, four times over.
BLOCK = 128
# Updates each lane loads at once per loop iteration (a long run waits for memory once per
# UNROLL updates instead of once per update); they still fold one at a time, in order.
UNROLL = 8


# The kernel's positions into the updates are int32 (Triton's index type).
MAX_UPDATES = INT32_MAX


def supported(dtype: jax.typing.DTypeLike, updates: int) -> bool:
    """Whether the kernel folds ``updates`` values of ``dtype``: real floats (complex products
    stay in the lax form), at most `MAX_UPDATES` of them (a static count).

    Examples:
      >>> supported(jnp.float32, 1 << 20), supported(jnp.complex64, 8), supported(jnp.float32, 1 << 31)
      (True, False, False)
    """
    return bool(jnp.issubdtype(dtype, jnp.floating)) and isinstance(updates, int) and updates <= MAX_UPDATES


def fold_runs(
    acc: jax.Array,
    updates: jax.Array,
    run_start: jax.Array,
    run_length: jax.Array,
    f: Callable[[jax.Array, jax.Array], jax.Array],
    interpret: bool = False,
) -> jax.Array:
    """``acc[r]`` folded with ``updates[run_start[r] + k]`` for ``k < run_length[r]``, in order.

    Args:
      acc: 1-D accumulators, one per run (first ``x[target]``).
      updates: 1-D updates sorted by target, each run in loop order.
      run_start: 1-D unsigned, ``acc.shape``: where each run starts in ``updates``.
      run_length: 1-D unsigned, ``acc.shape``: each run's length (0: nothing to fold).
      f: the loop's ``f(acc, update)``, element-wise.
      interpret: run in Pallas' interpret mode (any platform; for tests on the CPU).

    Returns:
      The folded accumulators, ``acc``'s shape and type.

    Examples:
      >>> acc = jnp.zeros(2, jnp.float32)
      >>> u = jnp.array([1e8, 1.0, -1e8, 5.0], jnp.float32)
      >>> start, length = jnp.array([0, 3], jnp.uint32), jnp.array([3, 1], jnp.uint32)
      >>> fold_runs(acc, u, start, length, jnp.add, interpret=True)
      Array([0., 5.], dtype=float32)
    """
    r = acc.shape[0]
    padded = pl.cdiv(r, BLOCK) * BLOCK
    pad = lambda a: jnp.pad(a, (0, padded - r))  # noqa: E731  (length 0: the padding lanes fold nothing)
    lane = pl.BlockSpec((BLOCK,), lambda i: (i,))
    out = pl.pallas_call(
        functools.partial(_kernel, f=f),
        out_shape=jax.ShapeDtypeStruct((padded,), acc.dtype),
        grid=(padded // BLOCK,),
        in_specs=[pl.no_block_spec, lane, lane, lane],
        out_specs=lane,
        # Triton, named: jax 0.10 lowers a plain pallas_call for Mosaic GPU, whose copies take
        # at most 256 elements along a dimension (the updates here are one whole array).
        compiler_params=pallas_triton.CompilerParams() if pallas_triton is not None else None,
        interpret=interpret,
    )(updates, pad(run_start.astype(jnp.int32)), pad(run_length.astype(jnp.int32)), pad(acc))
    return out[:r]


def _kernel(updates_ref, start_ref, length_ref, acc_ref, out_ref, *, f):  # type: ignore[no-untyped-def]
    start, length = start_ref[...], length_ref[...]
    last = updates_ref.shape[0] - 1

    def step(i: jax.Array, acc: jax.Array) -> jax.Array:
        k = i * UNROLL
        # UNROLL independent gathers first (lanes past their run read a valid element), so
        # their latencies overlap; then the updates fold one by one, in order.
        us = [updates_ref[jnp.minimum(start + (k + j), last)] for j in range(UNROLL)]
        for j, u in enumerate(us):
            acc = jnp.where(k + j < length, f(acc, u), acc)
        return acc

    steps = (jnp.max(length) + (UNROLL - 1)) // UNROLL
    out_ref[...] = lax.fori_loop(0, steps, step, acc_ref[...])
