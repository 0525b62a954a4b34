"""Benchmark cases for `top_k`, `argmax`, `argmin`, `one_hot` and `nonzero_coordinates`.

Each case is float32 data of about ``nbytes`` bytes, ``(rows, cols)`` with rows of up to
1024 columns (`one_hot`: its float32 output, ``(n, 64)``), labelled with that shape.
Contenders, dmljax first: the JAX function a user would call (the reference for ratios:
``lax.top_k``, ``jnp.argmax``/``jnp.argmin``, ``jax.nn.one_hot``, ``jnp.nonzero`` with a
static ``size`` and ``jnp.count_nonzero``) and ``numpy`` on the host (a stable ``argsort``,
``argmax``/``argmin``, a comparison with ``arange``, ``argwhere``). The data has no ties
and no NaN, where the libraries' orders agree; `top_k`'s ties and NaN are the checks'.
"""

from __future__ import annotations

from collections.abc import Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

import dmljax
from dmljax.bench._harness import Case, sized
from dmljax.bench.movement import op_cases, rows_cols

__all__ = ["cases"]

GROUP = "selection"
K = 8
CLASSES = 64


def _top_k_np(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    i = np.argsort(-x, axis=-1, kind="stable")[:, :K]
    return np.take_along_axis(x, i, axis=-1), i


def _nonzero_jnp(x: jax.Array) -> tuple[jax.Array, jax.Array]:
    coordinates = jnp.stack(jnp.nonzero(x, size=x.size, fill_value=0), axis=-1).astype(np.int32)
    return jnp.count_nonzero(x).astype(np.int32), coordinates


def _nonzero_np(x: np.ndarray) -> tuple[np.int32, np.ndarray]:
    found = np.argwhere(x)
    coordinates = np.zeros((x.size, x.ndim), np.int32)
    coordinates[: len(found)] = found
    return np.int32(len(found)), coordinates


def _arg_cases(x: np.ndarray) -> list[Case]:
    top = {"dmljax": lambda v: dmljax.top_k(v, K), "lax.top_k": lambda v: tuple(lax.top_k(v, K))}
    out = op_cases(GROUP, f"top_k k={K} axis=-1 {x.shape}", x.nbytes, (x,), top, _top_k_np, reference="lax.top_k")
    high = {"dmljax": lambda v: dmljax.argmax(v, -1), "jnp": lambda v: jnp.argmax(v, -1)}
    out += op_cases(GROUP, f"argmax axis=-1 {x.shape}", x.nbytes, (x,), high, lambda v: np.argmax(v, -1))
    low = {"dmljax": lambda v: dmljax.argmin(v, 0), "jnp": lambda v: jnp.argmin(v, 0)}
    return out + op_cases(GROUP, f"argmin axis=0 {x.shape}", x.nbytes, (x,), low, lambda v: np.argmin(v, 0))


def _one_hot_cases(nbytes: int) -> list[Case]:
    n = max(1, nbytes // 4 // CLASSES)
    i = np.random.default_rng(4).integers(0, CLASSES, n, dtype=np.int32)
    values = np.array([0.0, 1.0], np.float32)
    ops = {
        "dmljax": lambda i: dmljax.one_hot(i, CLASSES, values=values),
        "jax.nn.one_hot": lambda i: jax.nn.one_hot(i, CLASSES, dtype=np.float32),
    }
    numpy_fn = lambda i: (i[:, None] == np.arange(CLASSES)).astype(np.float32)  # noqa: E731
    name = f"one_hot depth={CLASSES} {(n, CLASSES)}"
    built = op_cases(GROUP, name, i.nbytes + 4 * n * CLASSES, (i,), ops, numpy_fn, reference="jax.nn.one_hot")
    return sized(built, 4 * n * CLASSES)


def cases(sizes_bytes: Sequence[int]) -> list[Case]:
    """top_k, argmax, argmin, nonzero_coordinates (half the elements zero) and one_hot at each size."""
    out: list[Case] = []
    for nbytes in sizes_bytes:
        rng = np.random.default_rng(nbytes)
        x = rng.standard_normal(rows_cols(nbytes), dtype=np.float32)
        built = _arg_cases(x)
        sparse = np.where(rng.random(x.shape) < 0.5, x, np.float32(0))
        ops = {"dmljax": dmljax.nonzero_coordinates, "jnp": _nonzero_jnp}
        moved = x.nbytes * (1 + 2)  # read x, write (size, 2) int32 coordinates
        built += op_cases(GROUP, f"nonzero_coordinates half zero {x.shape}", moved, (sparse,), ops, _nonzero_np)
        out += sized(built, x.nbytes) + _one_hot_cases(nbytes)
    return out
