"""Benchmark cases for `cumulative_sum` / `cumulative_prod`: what adding in sequence costs.

Each case is a float32 ``(rows, cols)`` tensor of about ``nbytes`` bytes, summed (or
multiplied) along the last axis (long rows) or the first (many columns at once).
Contenders: dmljax (the in-order `lax.scan`), ``jnp.cumsum``/``jnp.cumprod`` (XLA's parallel
scan, not in order: the reference for ratios) and NumPy's sequential ``cumsum``/``cumprod``.
The sum also runs backward (the gradient of the sum of squares of the tally).
"""

from __future__ import annotations

from collections.abc import Sequence

import jax
import jax.numpy as jnp
import numpy as np

from dmljax._ops.ordered.cumulative import cumulative_product, cumulative_sum
from dmljax.bench._harness import Case, sized

__all__ = ["cases"]


def _shape(nbytes: int) -> tuple[int, int]:
    elements = max(nbytes // 4, 4)
    cols = min(1024, elements)
    return max(1, elements // cols), cols


def _forward(name: str, ours, theirs, numpy_fn, shape: tuple[int, int], axis: int) -> Case:
    host = (np.random.default_rng(0).standard_normal(shape) * (1 if numpy_fn is np.cumsum else 0.01) + 1).astype(
        np.float32
    )
    x = jnp.asarray(host)
    mine = jax.jit(lambda v: ours(v, axis))
    jnps = jax.jit(lambda v: theirs(v, axis=axis))
    contenders = {"dmljax": lambda: mine(x), "jnp": lambda: jnps(x), "numpy": lambda: numpy_fn(host, axis=axis)}
    return Case("cumulative", f"{name} axis={axis} {shape} fwd", 2 * host.nbytes, contenders, "jnp")


def _backward(shape: tuple[int, int], axis: int) -> Case:
    x = jnp.asarray(np.random.default_rng(1).standard_normal(shape).astype(np.float32))
    mine = jax.jit(jax.grad(lambda v: jnp.sum(cumulative_sum(v, axis) ** 2)))
    jnps = jax.jit(jax.grad(lambda v: jnp.sum(jnp.cumsum(v, axis=axis) ** 2)))
    contenders = {"dmljax": lambda: mine(x), "jnp": lambda: jnps(x)}
    return Case("cumulative", f"cumulative_sum axis={axis} {shape} bwd", 4 * x.nbytes, contenders, "jnp")


def cases(sizes_bytes: Sequence[int]) -> list[Case]:
    """Sum along each axis forward and backward, product along the last axis, at each size."""
    out: list[Case] = []
    for nbytes in sizes_bytes:
        shape = _shape(nbytes)
        start = len(out)
        out += [
            _forward("cumulative_sum", cumulative_sum, jnp.cumsum, np.cumsum, shape, -1),
            _forward("cumulative_sum", cumulative_sum, jnp.cumsum, np.cumsum, shape, 0),
            _backward(shape, -1),
            _forward("cumulative_prod", cumulative_product, jnp.cumprod, np.cumprod, shape, -1),
        ]
        out[start:] = sized(out[start:], 4 * shape[0] * shape[1])
    return out
