"""Benchmark cases for scatter, gather, gather_elements and slice (DML_SLICE1; see `_harness`).

Every case is jitted float32 data of ``size`` bytes, shaped ``(size / 4096, 1024)``, with
indices of each type asked for (``index_dtypes``; the CLI's ``--index-dtypes``): signed ones
include negative values (so both the wrapping and the clamp are paid), unsigned ones the
same positions wrapped. Cases of another type than int32 say so in their names
(``... int64 indices``) and run with ``jax_enable_x64`` where the type is 64-bit; torch
contends in the int32 cases only (it converts every index to int64 itself).
Contenders, the first under test: ``dmljax``; ``jnp`` (the reference for ratios), the
idiomatic hand-written formulation of the same semantics (``take_along_axis``, and ``take``
after wrapping negative indices, with ``mode="clip"``; ``put_along_axis`` with
``mode="drop"``; basic slicing + ``flip``);
``numpy`` for forward passes; ``flat`` for scatter (a contender: the fastest
formulation measured, one 1-D scatter at flat positions); ``blocked`` for gather_elements along
axis 0 (a contender: `dmljax._ops.index.gather_blocked` written with ``jnp``, the fastest forward
found on an AVX2 host, not on an AVX-512 one); ``torch`` (CPU, when installed:
`dmljax.bench._torch`) forward and backward. Backward cases time ``grad(sum(op(x) * cotangent))``.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

import dmljax
from dmljax.bench import _torch
from dmljax.bench._harness import Case, sized

__all__ = ["DEFAULT_SIZES", "INDEX_DTYPES", "cases"]

DEFAULT_SIZES = (1 << 20, 16 << 20, 256 << 20)
INDEX_DTYPES = ("int32", "int64", "uint32", "uint64")
_COLUMNS = 1024


def cases(sizes_bytes: Sequence[int] = DEFAULT_SIZES, index_dtypes: Sequence[str] = ("int32",)) -> list[Case]:
    """One forward and one backward case per operator (gathers along both axes) per size and index type."""
    out: list[Case] = []
    for size in sizes_bytes:
        x = np.random.default_rng(size).standard_normal((max(1, size // 4 // _COLUMNS), _COLUMNS), dtype=np.float32)
        built: list[Case] = []
        for dtype in index_dtypes:
            rng = np.random.default_rng(size)  # the same positions for every index type
            typed: list[Case] = []
            with jax.enable_x64(np.dtype(dtype).itemsize == 8):  # 64-bit indices stay 64-bit on the device
                for axis in (0, 1):
                    typed += _gather_elements_cases(rng, x, axis, dtype)
                    typed += _gather_cases(rng, x, axis, dtype)
                if dtype == "int32":  # rows of 16 (embeddings; issue 38/40's gradient case), a generator
                    # of its own: the cases after it draw the same positions for every index type
                    own = np.random.default_rng(size + 16)
                    typed += _gather_cases(own, x.reshape(-1, 16), 0, dtype, forced=True)
                typed += _scatter_cases(rng, x, dtype)
            built += typed if dtype == "int32" else [_typed(case, dtype) for case in typed]
        built += _slice1_cases(x)
        out += sized(built, x.nbytes)  # whole rows of _COLUMNS: the size asked for, rounded
    return out


def _signed(rng: np.random.Generator, low_high: int, shape: tuple[int, ...]) -> np.ndarray:
    return rng.integers(-low_high, low_high, shape, dtype=np.int32)


def _as_index(i: np.ndarray, size: int, dtype: str) -> np.ndarray:
    """``i`` (int32, negative values counting from the end of an axis of ``size``) as ``dtype``, wrapped if unsigned."""
    return (np.where(i < 0, i + size, i) if np.dtype(dtype).kind == "u" else i).astype(dtype)


def _typed(case: Case, dtype: str) -> Case:
    """``case`` of ``dtype`` indices: named so, without torch, its calls under ``jax_enable_x64`` when 64-bit."""
    wide = np.dtype(dtype).itemsize == 8

    def x64(fn: Callable[[], Any]) -> Callable[[], Any]:
        def call() -> Any:
            with jax.enable_x64(True):
                return fn()

        return call

    contenders = {k: x64(f) if wide else f for k, f in case.contenders.items() if k != _torch.NAME}
    return dataclasses.replace(case, name=f"{case.name} {dtype} indices", contenders=contenders)


def _fwd_bwd(
    group: str,
    name: str,
    nbytes: int,
    args: tuple,
    ops: dict[str, Callable],
    numpy_fn: Callable,
    diff: tuple,
) -> list[Case]:
    """A forward case (all contenders) and a backward case (JAX contenders) of one op; ratios against ``jnp``."""
    dev = tuple(jnp.asarray(a) for a in args)
    fwd = {k: jax.jit(f) for k, f in ops.items()}
    ct = jnp.ones(jax.eval_shape(ops["dmljax"], *dev).shape, jnp.float32)  # x64 or not: float32

    def backward(f: Callable) -> Callable:
        return jax.jit(jax.grad(lambda *a: jnp.sum(f(*a) * ct), argnums=diff))

    bwd = {k: backward(f) for k, f in ops.items()}
    contenders: dict[str, Callable[[], Any]] = {k: functools.partial(f, *dev) for k, f in fwd.items()}
    contenders["numpy"] = lambda: numpy_fn(*args)
    return [
        Case(group, f"{name} fwd", nbytes, contenders, reference="jnp"),
        Case(
            group, f"{name} bwd", 2 * nbytes, {k: functools.partial(f, *dev) for k, f in bwd.items()}, reference="jnp"
        ),
    ]


def _gather_elements_cases(rng: np.random.Generator, x: np.ndarray, axis: int, dtype: str) -> list[Case]:
    i = _as_index(_signed(rng, x.shape[axis], x.shape), x.shape[axis], dtype)
    ops = {
        "dmljax": lambda x, i: dmljax.gather_elements(x, i, axis),
        "jnp": lambda x, i: jnp.take_along_axis(x, i, axis, mode="clip"),
    }
    if axis == 0 and x.shape[1] % 32 == 0:
        ops["blocked"] = _blocked_take_rows
    name = f"gather_elements axis={axis} {x.shape}"
    numpy_fn = lambda x, i: np.take_along_axis(x, i, axis)  # noqa: E731
    cases = _fwd_bwd("gather_elements", name, 2 * x.nbytes + i.nbytes, (x, i), ops, numpy_fn, (0,))
    return _torch.with_torch(cases, _torch.gather_elements(x, i, axis))


def _blocked_take_rows(x: jax.Array, i: jax.Array) -> jax.Array:
    """Contender (the fastest forward measured on an AVX2 host): take_along_axis(axis=0) in 32-column blocks.

    Each ``lax.cond`` has a predicate XLA cannot fold and two equal branches: the first
    writes the data and indices as ``(C/32, R * 32)`` blocks, the second gathers within them.
    """
    rows, cols = x.shape
    i = jnp.clip(jnp.where(i < 0, i + rows, i), 0, rows - 1)

    def to_blocks(x, i):
        x = x.reshape(rows, cols // 32, 32).transpose(1, 0, 2).reshape(cols // 32, rows * 32)
        return x, i.reshape(rows, cols // 32, 32).transpose(1, 0, 2).reshape(cols // 32, rows * 32)

    def take(x, i):
        x, i = x.reshape(cols // 32, rows, 32), i.reshape(cols // 32, rows, 32)
        return jnp.take_along_axis(x, i, 1, mode="promise_in_bounds").reshape(cols // 32, rows * 32)

    odd = (i[0, 0] & 1) == 0
    out = jax.lax.cond(odd, take, take, *jax.lax.cond(odd, to_blocks, to_blocks, x, i))
    return out.reshape(cols // 32, rows, 32).transpose(1, 0, 2).reshape(rows, cols)


def _gather_cases(rng: np.random.Generator, x: np.ndarray, axis: int, dtype: str, forced: bool = False) -> list[Case]:
    """gather's forward and backward; ``forced``: also ``sorted fold``, dmljax with the off-CPU
    formulation of its ordered gradient forced (config ``cpu_ordered_scatter`` off)."""
    i = _as_index(_signed(rng, x.shape[axis], (x.shape[axis],)), x.shape[axis], dtype)
    ops = {
        "dmljax": lambda x, i: dmljax.gather(x, i, axis),
        # jnp.take's "clip" does not wrap negative indices: wrap them first (same semantics).
        "jnp": lambda x, i: jnp.take(x, jnp.where(i < 0, i + x.shape[axis], i), axis, mode="clip"),
    }
    if forced:
        ops["sorted fold"] = _forced_off_cpu(ops["dmljax"])
    name = f"gather axis={axis} {x.shape}"
    cases = _fwd_bwd("gather", name, 2 * x.nbytes + i.nbytes, (x, i), ops, lambda x, i: np.take(x, i, axis), (0,))
    return _torch.with_torch(cases, _torch.gather(x, i, axis))


def _forced_off_cpu(f: Callable) -> Callable:
    """``f`` traced with the off-CPU formulations of the ordered reductions (the sorted fold)."""

    def forced(*args: Any) -> Any:
        with dmljax.config.override(cpu_ordered_scatter=False):
            return f(*args)

    return forced


def _scatter_rows(rng: np.random.Generator, shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """Indices and updates writing half of every row, at distinct rotated positions, half as negative indices."""
    rows, cols = shape
    i = (np.arange(cols // 2, dtype=np.int32) + rng.integers(0, cols, (rows, 1), dtype=np.int32)) % cols
    i = np.where(rng.random(i.shape) < 0.5, i - cols, i).astype(np.int32)
    return i, rng.standard_normal(i.shape, dtype=np.float32)


def _scatter_cases(rng: np.random.Generator, x: np.ndarray, dtype: str) -> list[Case]:
    i, u = _scatter_rows(rng, x.shape)
    i = _as_index(i, x.shape[1], dtype)
    ops = {
        "dmljax": lambda x, i, u: dmljax.scatter(x, i, u, 1),
        "jnp": lambda x, i, u: jnp.put_along_axis(x, i, u, 1, inplace=False, mode="drop"),
        "flat": _flat_scatter_rows,
    }

    def numpy_fn(x: np.ndarray, i: np.ndarray, u: np.ndarray) -> np.ndarray:
        out = x.copy()
        np.put_along_axis(out, i, u, 1)
        return out

    name = f"scatter axis=1 {x.shape}"
    cases = _fwd_bwd("scatter", name, 2 * x.nbytes + i.nbytes + u.nbytes, (x, i, u), ops, numpy_fn, (0, 2))
    return _torch.with_torch(cases, _torch.scatter(x, i, u, 1))


def _flat_scatter_rows(x: jax.Array, i: jax.Array, u: jax.Array) -> jax.Array:
    """Contender (the fastest formulation measured): one 1-D scatter at uint32 ``r * C + i``.

    Negative indices wrapped; out of range mapped to ``R * C`` and dropped. Single device only
    (the flat positions merge the axes: under sharding they all-gather).
    """
    rows, cols = x.shape
    i = jnp.where(i < 0, i + cols, i).astype(jnp.uint32)
    pos = i + jax.lax.broadcasted_iota(jnp.uint32, i.shape, 0) * np.uint32(cols)
    pos = jnp.where(i < cols, pos, np.uint32(rows * cols))
    dnums = jax.lax.ScatterDimensionNumbers((), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
    mode = jax.lax.GatherScatterMode.FILL_OR_DROP
    out = jax.lax.scatter(x.reshape(-1), pos.reshape(-1, 1), u.reshape(-1), dnums, unique_indices=True, mode=mode)
    return out.reshape(rows, cols)


def _slice1_cases(x: np.ndarray) -> list[Case]:
    rows, cols = x.shape
    offsets, sizes, strides = (0, 1), (rows, cols - 1), (-1, 2)  # rows reversed, every other column
    ops = {
        "dmljax": lambda x: dmljax.slice(x, offsets, sizes, strides),
        "jnp": lambda x: jnp.flip(x[:, 1:cols:2], 0),
    }
    name = f"slice rev+stride2 {x.shape}"
    numpy_fn = lambda x: np.ascontiguousarray(x[::-1, 1:cols:2])  # noqa: E731
    cases = _fwd_bwd("slice1", name, x.nbytes, (x,), ops, numpy_fn, (0,))
    return _torch.with_torch(cases, _torch.slice1(x, (slice(None), slice(1, cols, 2)), (0,)))
