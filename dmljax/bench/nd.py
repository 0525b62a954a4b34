"""Benchmark cases for gather_nd, scatter_nd and the ordered scatter reductions (see `_harness`).

Every case is jitted float32 data of ``size`` bytes, shaped ``(size / 4096, 1024)``, with
int32 index tuples that include negative values. Contenders, the first under test:
``dmljax``; ``jnp`` (the reference for ratios), the hand-written formulation of the same
semantics: ``x[tuple(idx.T)]`` for GatherND, ``x.at[tuple(idx.T)].set(u)`` / ``.add(u)`` for
ScatterND and ``x.at[rows, i].add(u)`` for ScatterElements (NumPy's rules for negative
indices; XLA's scatter-add combines duplicates in no promised order); ``numpy`` for forward
passes (``np.add.at``: sequential, in order); ``torch`` (CPU, when installed) forward and
backward: advanced indexing, ``index_put(accumulate=...)`` and ``scatter_add``.

Duplicates: ``"few"`` draws the targets uniformly from every element (a handful of updates
per element at most); ``"many"`` draws them from 1/32 of the elements (about 32 updates per
target, more for the busiest). dmljax's ordered reduction costs one round per update of the
busiest target (`dmljax._ops.ordered.reductions`), so "many" is where exactness costs most. Updates
are small integers stored as float32, so every order of summation gives the same sums and
the contenders' results can be compared bit for bit; the time does not depend on the values.
Backward cases time ``grad(sum(op(x, u) * cotangent))`` for the data and the updates.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

import dmljax
from dmljax.bench import _torch
from dmljax.bench._harness import Case, sized

__all__ = ["DEFAULT_SIZES", "cases", "ordered_targets"]

DEFAULT_SIZES = (1 << 20, 16 << 20, 256 << 20)
_COLUMNS = 1024
# "many" duplicates: the targets are drawn from one element in this many.
_MANY = 32
# Ordered-reduction cases: updates per element of data (at most _MAX_UPDATES), and the
# updates of the one hot target.
_UPDATES_PER_ELEMENT = 4
_MAX_UPDATES = 1 << 24
_HOT = 4096
# On XLA CPU the forced formulations (slow sorts there) are timed up to this many updates.
_CPU_FORCED_MAX_UPDATES = 1 << 18
# The formulations of the ordered float reductions, each forced with config overrides.
_FORMULATIONS = {
    "sorted fold": {"cpu_ordered_scatter": False},
    # the CUDA formulation (one sort, the Pallas kernel), its kernel interpreted: its growth, not a GPU's time
    "fold kernel (interpreted)": {
        "cpu_ordered_scatter": False,
        "ordered_fold_kernel": True,
        "ordered_fold_kernel_interpret": True,
    },
    "rounds": {"cpu_ordered_scatter": False, "ordered_rounds": True},
}


def cases(sizes_bytes: Sequence[int] = DEFAULT_SIZES) -> list[Case]:
    """GatherND (rows, elements), ScatterND (rows; add with few and many duplicates), scatter add, per size."""
    out: list[Case] = []
    for size in sizes_bytes:
        rng = np.random.default_rng(size)
        x = rng.standard_normal((max(1, size // 4 // _COLUMNS), _COLUMNS), dtype=np.float32)
        built = _gather_nd_cases(rng, x) + _scatter_nd_cases(rng, x)
        for duplicates in ("few", "many"):
            built += _scatter_nd_add_cases(rng, x, duplicates)
            built += _scatter_add_cases(rng, x, duplicates)
        out += sized(built, x.nbytes)  # whole rows of _COLUMNS: the size asked for, rounded
        out += sized(_ordered_cases(rng, size), size)
    return out


def _tuples(rng: np.random.Generator, shape: tuple[int, ...], n: int, targets: int | None = None) -> np.ndarray:
    """``n`` index tuples into ``shape`` (int32, about half negative), drawn from ``targets`` elements (all if None)."""
    total = int(np.prod(shape))
    pool = rng.permutation(total)[: targets or total]
    flat = pool[rng.integers(0, len(pool), n)]
    index = np.stack(np.unravel_index(flat, shape), axis=-1)
    return (index - np.array(shape) * (rng.random(index.shape) < 0.5)).astype(np.int32)


def _integers(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.integers(-8, 8, shape).astype(np.float32)


def _fwd_bwd(
    group: str, name: str, nbytes: int, args: tuple, ops: dict[str, Callable], numpy_fn: Callable, diff: tuple
) -> list[Case]:
    """A forward case (all contenders) and a backward case (the JAX contenders) of one op; ratios against jnp."""
    dev = tuple(jnp.asarray(a) for a in args)
    ct = jnp.ones(jax.eval_shape(ops["dmljax"], *dev).shape, jnp.float32)

    def backward(f: Callable) -> Callable:
        return jax.jit(jax.grad(lambda *a: jnp.sum(f(*a) * ct), argnums=diff))

    forward: dict[str, Callable[[], Any]] = {k: functools.partial(jax.jit(f), *dev) for k, f in ops.items()}
    forward["numpy"] = lambda: numpy_fn(*args)
    return [
        Case(group, f"{name} fwd", nbytes, forward, reference="jnp"),
        Case(
            group, f"{name} bwd", 2 * nbytes, {k: functools.partial(backward(f), *dev) for k, f in ops.items()}, "jnp"
        ),
    ]


def _gather_nd_cases(rng: np.random.Generator, x: np.ndarray) -> list[Case]:
    """Rows (1-tuples: each a 4 KiB slice) and elements (2-tuples), as many values out as in."""
    built: list[Case] = []
    for k, n in ((1, x.shape[0]), (2, x.size)):
        i = _tuples(rng, x.shape[:k], n)
        ops = {"dmljax": dmljax.gather_nd, "jnp": lambda x, i: x[tuple(i.T)]}
        name = f"gather_nd k={k} {x.shape}"
        numpy_fn = lambda x, i: x[tuple(i.T)]  # noqa: E731
        cases = _fwd_bwd("gather_nd", name, 2 * x.nbytes + i.nbytes, (x, i), ops, numpy_fn, (0,))
        built += _torch.with_torch(cases, _torch_nd(lambda t, x, i: x[tuple(i.T)], x, i, diff=(0,)))
    return built


def _scatter_nd_cases(rng: np.random.Generator, x: np.ndarray) -> list[Case]:
    """Half of the rows overwritten, each once (duplicates are invalid without a reduction)."""
    rows = x.shape[0]
    i = (rng.permutation(rows)[: max(1, rows // 2)] - rows * rng.integers(0, 2, max(1, rows // 2))).astype(np.int32)
    i = i.reshape(-1, 1)
    u = rng.standard_normal((len(i), x.shape[1]), dtype=np.float32)
    ops = {"dmljax": dmljax.scatter_nd, "jnp": lambda x, i, u: x.at[tuple(i.T)].set(u)}

    def numpy_fn(x: np.ndarray, i: np.ndarray, u: np.ndarray) -> np.ndarray:
        out = x.copy()
        out[tuple(i.T)] = u
        return out

    name = f"scatter_nd rows {x.shape}"
    cases = _fwd_bwd("scatter_nd", name, 2 * x.nbytes + i.nbytes + u.nbytes, (x, i, u), ops, numpy_fn, (0, 2))
    return _torch.with_torch(cases, _torch_nd(lambda t, x, i, u: x.index_put(tuple(i.T), u), x, i, u))


def _scatter_nd_add_cases(rng: np.random.Generator, x: np.ndarray, duplicates: str) -> list[Case]:
    """``reduction="add"`` of 2-tuples (single elements): as many updates as half the elements."""
    n = max(1, x.size // 2)
    i = _tuples(rng, x.shape, n, None if duplicates == "few" else max(1, x.size // _MANY))
    u = _integers(rng, (n,))
    ops = {
        "dmljax": lambda x, i, u: dmljax.scatter_nd(x, i, u, reduction="add"),
        "jnp": lambda x, i, u: x.at[tuple(i.T)].add(u),
    }

    def numpy_fn(x: np.ndarray, i: np.ndarray, u: np.ndarray) -> np.ndarray:
        out = x.copy()
        np.add.at(out, tuple(i.T), u)
        return out

    name = f"scatter_nd add {duplicates} duplicates {x.shape}"
    cases = _fwd_bwd("scatter_nd", name, 2 * x.nbytes + i.nbytes + u.nbytes, (x, i, u), ops, numpy_fn, (0, 2))
    op = lambda t, x, i, u: x.index_put(tuple(i.T), u, accumulate=True)  # noqa: E731
    return _torch.with_torch(cases, _torch_nd(op, x, i, u))


def _scatter_add_cases(rng: np.random.Generator, x: np.ndarray, duplicates: str) -> list[Case]:
    """ScatterElements along axis 1 with ``reduction="add"``: 512 updates per row."""
    cols = x.shape[1]
    i = rng.integers(0, cols if duplicates == "few" else cols // _MANY, (x.shape[0], cols // 2))
    i = (i - cols * rng.integers(0, 2, i.shape)).astype(np.int32)
    u = _integers(rng, i.shape)
    rows = np.arange(x.shape[0])[:, None]
    ops = {
        "dmljax": lambda x, i, u: dmljax.scatter(x, i, u, 1, reduction="add"),
        "jnp": lambda x, i, u: x.at[jnp.arange(x.shape[0])[:, None], i].add(u),
    }

    def numpy_fn(x: np.ndarray, i: np.ndarray, u: np.ndarray) -> np.ndarray:
        out = x.copy()
        np.add.at(out, (rows, i), u)
        return out

    name = f"scatter add {duplicates} duplicates axis=1 {x.shape}"
    cases = _fwd_bwd("scatter_reduction", name, 2 * x.nbytes + i.nbytes + u.nbytes, (x, i, u), ops, numpy_fn, (0, 2))
    op = lambda t, x, i, u: x.scatter_add(1, t.where(i < 0, i + cols, i), u)  # noqa: E731
    return _torch.with_torch(cases, _torch_nd(op, x, i, u))


def _torch_nd(op: Callable[..., Any], x: np.ndarray, i: np.ndarray, u: np.ndarray | None = None, diff=(0, 2)):
    """torch forward and backward of ``op(torch, x, i[, u])``; int64 indices, converted outside the timed call."""
    torch = _torch._torch()
    if torch is None:
        return None
    arrays = (x, i.astype(np.int64)) if u is None else (x, i.astype(np.int64), u)
    return _torch._fwd_bwd(functools.partial(op, torch), *arrays, diff=diff)


def ordered_targets(rng: np.random.Generator, distribution: str, n: int, m: int) -> np.ndarray:
    """``m`` int32 flat targets into ``n`` elements: ``random`` (uniform), ``zipf`` (power law,
    exponent 1.3) or ``hot`` (uniform, with `_HOT` of them on one element, ``n // 2``).

    Examples:
      >>> t = ordered_targets(np.random.default_rng(0), "hot", 1 << 10, 1 << 14)
      >>> t.dtype, int((t == 512).sum()) >= 4096
      (dtype('int32'), True)
    """
    if distribution == "zipf":
        return ((rng.zipf(1.3, m) - 1) % n).astype(np.int32)
    t = rng.integers(0, n, m).astype(np.int32)
    if distribution == "hot":
        t[rng.choice(m, min(_HOT, m), replace=False)] = n // 2
    return t


def _ordered_cases(rng: np.random.Generator, size: int) -> list[Case]:
    """ONNX's ordered float ``"add"`` reduction: ``size`` bytes of float32 data (n elements),
    `_UPDATES_PER_ELEMENT` x n updates (at most `_MAX_UPDATES`) at flat targets; each
    formulation forced where it differs from ``dmljax`` (the platform's default), against
    ``x.at[t].add(u)``, ``jax.ops.segment_sum``, NumPy's ``np.add.at`` and torch's
    ``index_add_``. Random against hot targets shows how the cost grows with the largest
    duplicate count."""
    n = max(1, size // 4)
    m = min(_UPDATES_PER_ELEMENT * n, _MAX_UPDATES)
    cpu = jax.default_backend() == "cpu"
    x = rng.standard_normal(n, dtype=np.float32)
    u = _integers(rng, (m,))
    built = []
    for distribution in ("random", "zipf", "hot"):
        t = ordered_targets(rng, distribution, n, m)
        args = tuple(jnp.asarray(a) for a in (x, t, u))
        ops: dict[str, Callable[..., Any]] = {
            "dmljax": lambda x, t, u: dmljax.scatter(x, t, u, reduction="add", mode="promise_in_bounds"),
            "jnp": lambda x, t, u: x.at[t].add(u),
            "segment_sum": lambda x, t, u: x + jax.ops.segment_sum(u, t, x.shape[0]),
        }
        contenders: dict[str, Callable[[], Any]] = {k: functools.partial(jax.jit(f), *args) for k, f in ops.items()}
        for name, overrides in _FORMULATIONS.items():
            # off the CPU `dmljax` is the sorted fold; the rounds' hot case costs 4,096 rounds
            wanted = (name == "rounds" or cpu) and (name != "rounds" or distribution == "random")
            if wanted and (m <= _CPU_FORCED_MAX_UPDATES or not cpu):
                with dmljax.config.override(**overrides):
                    compiled = jax.jit(ops["dmljax"]).lower(*args).compile()
                contenders[name] = functools.partial(compiled, *args)
        contenders["numpy"] = functools.partial(_np_add_at, x, t, u)
        torch = _torch._torch()
        if torch is not None:
            xt, tt, ut = torch.from_numpy(x), torch.from_numpy(t.astype(np.int64)), torch.from_numpy(u)
            contenders[_torch.NAME] = functools.partial(_torch_index_add, xt, tt, ut)
        name = f"ordered add {distribution} targets, {m} updates into ({n})"
        built.append(Case("scatter_reduction", name, 2 * x.nbytes + t.nbytes + u.nbytes, contenders, "jnp"))
    return built


def _torch_index_add(x: Any, t: Any, u: Any) -> Any:
    return x.clone().index_add_(0, t, u)


def _np_add_at(x: np.ndarray, t: np.ndarray, u: np.ndarray) -> np.ndarray:
    out = x.copy()
    np.add.at(out, t, u)
    return out
