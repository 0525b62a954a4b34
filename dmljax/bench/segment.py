"""Benchmark cases for `segment_sum`, `segment_prod`, `segment_max`, `segment_min` and `segment_mean`.

Each case reduces float32 rows ``(n, 16)`` of about ``nbytes`` bytes into ``n / 8``
segments at random ids (eight rows a segment on average), labelled with the data's shape;
and, forward only, narrow rows ``(n, 4)`` into ``n / 64`` segments (at 4 MiB issue 40's
case: 2^18 rows of 4, 4,096 segments).
Contenders, dmljax first (the rows combined in index order, bit for bit on every
platform: `dmljax._ops.ordered.reductions`): ``jax.ops`` (``jax.ops.segment_*``, XLA's scatter
reductions, the reference for ratios; the mean as ``segment_sum / counts``; sums and
products in no defined order, hence "any order" in their names) and ``numpy`` on the host
(``np.add.at``, ``np.multiply.at``, ``np.maximum.at``, ``np.minimum.at``: unbuffered, in
index order, dmljax's bits). `segment_sum` also runs backward.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np

import dmljax
from dmljax.bench._harness import Case, sized
from dmljax.bench.movement import op_cases

__all__ = ["cases"]

GROUP = "segment"
FEATURES = 16
ROWS_PER_SEGMENT = 8
NARROW_FEATURES = 4  # issue 40's case: 2^18 rows of 4 into 4,096 segments at 4 MiB
NARROW_ROWS_PER_SEGMENT = 64


def _at(ufunc: np.ufunc, identity: float, segments: int) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    def reduce(data: np.ndarray, ids: np.ndarray) -> np.ndarray:
        out = np.full((segments, data.shape[1]), identity, data.dtype)
        ufunc.at(out, ids, data)
        return out

    return reduce


def _mean_jax(segments: int) -> Callable[[jax.Array, jax.Array], jax.Array]:
    def mean(data: jax.Array, ids: jax.Array) -> jax.Array:
        total = jax.ops.segment_sum(data, ids, segments)
        count = jax.ops.segment_sum(jnp.ones(data.shape, np.uint32), ids, segments)
        return total / jnp.maximum(count, np.uint32(1)).astype(data.dtype)

    return mean


def _mean_np(segments: int) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    def mean(data: np.ndarray, ids: np.ndarray) -> np.ndarray:
        count = np.maximum(np.bincount(ids, minlength=segments), 1).astype(data.dtype)
        return _at(np.add, 0.0, segments)(data, ids) / count[:, None]

    return mean


def cases(sizes_bytes: Sequence[int]) -> list[Case]:
    """Each segment reduction forward at each size on wide and narrow rows, the sum backward too (wide)."""
    out: list[Case] = []
    for nbytes in sizes_bytes:
        out += _sized_cases(nbytes, FEATURES, ROWS_PER_SEGMENT, backward=True)
        out += _sized_cases(nbytes, NARROW_FEATURES, NARROW_ROWS_PER_SEGMENT, backward=False)
    return out


def _sized_cases(nbytes: int, features: int, per_segment: int, *, backward: bool) -> list[Case]:
    rows = max(per_segment, nbytes // 4 // features)
    s = rows // per_segment
    rng = np.random.default_rng(nbytes + features)
    ids = rng.integers(0, s, rows, dtype=np.int32)
    data = rng.standard_normal((rows, features), dtype=np.float32)
    near_one = (1 + 0.01 * data).astype(np.float32)  # products of a segment's rows stay in range
    moved = data.nbytes + ids.nbytes + 2 * data.nbytes // per_segment
    table = [  # name, jax.ops' (None: the mean's formula), its label, NumPy's, the data
        ("segment_sum", jax.ops.segment_sum, "jax.ops (any order)", _at(np.add, 0.0, s), data),
        ("segment_prod", jax.ops.segment_prod, "jax.ops (any order)", _at(np.multiply, 1.0, s), near_one),
        ("segment_max", jax.ops.segment_max, "jax.ops", _at(np.maximum, -np.inf, s), data),
        ("segment_min", jax.ops.segment_min, "jax.ops", _at(np.minimum, np.inf, s), data),
        ("segment_mean", None, "jax.ops sum / counts (any order)", _mean_np(s), data),
    ]
    built: list[Case] = []
    for name, theirs, label, numpy_fn, values in table:
        baseline = _mean_jax(s) if theirs is None else (lambda d, i, f=theirs: f(d, i, s))
        ops = {"dmljax": lambda d, i, n=name: getattr(dmljax, n)(d, i, s), label: baseline}
        title = f"{name} {s} segments {values.shape}"
        grad = backward and name == "segment_sum"
        built += op_cases(GROUP, title, moved, (values, ids), ops, numpy_fn, reference=label, backward=grad)
    return sized(built, data.nbytes)
