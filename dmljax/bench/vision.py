"""Benchmark cases for the vision operators: `resample` and its gradient `resample_grad`,
`max_pool_with_indices` (and its gradient), `max_unpool`, `unfold` and `fold`.

Each case is float32 NCHW data ``(1, 16, s, s)`` of about ``nbytes`` bytes, resized by 2
along H and W (pixel centres: offsets (0.5, -0.5)), nearest neighbour and bilinear.
Contenders, dmljax first: ``jax.image.resize`` (the reference for ratios; the same
values, its bilinear ones within rounding), and torch's ``interpolate`` on the CPU
(``nearest-exact`` / ``bilinear``, ``align_corners=False``) when torch is installed.
Backward cases time ``grad(sum(resample(x) * ct))``: dmljax's ordered add in output order
against XLA's scatter-add (``jax.image.resize``'s gradient, no order) and torch's
backward.

Pooling and folds, on the same NCHW data, 3x3 windows, stride 2, padding 1:
`max_pool_with_indices` against ``lax.reduce_window`` (values only; its gradient is XLA's
select-and-scatter, no order) and torch's ``max_pool2d(return_indices=True)``;
`max_unpool` against an XLA scatter (``.at[].set``) and torch's ``max_unpool2d``;
`unfold` against ``lax.conv_general_dilated_patches`` (HIGHEST precision: exact) and
torch's ``unfold``; `fold` against the patches' transpose (XLA's convolution, sums in its
own order) and torch's ``fold``. The generators `diagonal_matrix` (EyeLike) and
`fill_value_constant` against ``jnp.eye`` and ``jnp.full``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

import dmljax
from dmljax.bench import _torch
from dmljax.bench._harness import Case, sized

__all__ = ["cases"]

GROUP = "vision"
_MODES = {"nearest": ("nearest", "nearest-exact"), "linear": ("linear", "bilinear")}


def _nchw(nbytes: int) -> tuple[int, int, int, int]:
    """``(1, 16, s, s)``: about ``nbytes`` of float32 (``s >= 2``).

    Examples:
      >>> _nchw(4096), _nchw(1 << 20)
      ((1, 16, 8, 8), (1, 16, 128, 128))
    """
    side = max(2, math.isqrt(max(nbytes // 4, 64) // 16))
    return 1, 16, side, side


def _torch_pair(x: np.ndarray, mode: str) -> _torch.Pair:
    torch = _torch._torch()
    if torch is None:
        return None

    def op(t: Any) -> Any:
        return torch.nn.functional.interpolate(t, scale_factor=2.0, mode=_MODES[mode][1])

    return _torch._fwd_bwd(op, x)


def _resample_cases(x: np.ndarray, mode: str) -> list[Case]:
    n, c, h, w = x.shape
    out_shape = (n, c, 2 * h, 2 * w)
    scales = (1.0, 1.0, 2.0, 2.0)
    ops: dict[str, Callable] = {
        "dmljax": lambda v: dmljax.resample(v, scales, mode=mode),
        "jax.image.resize": lambda v: jax.image.resize(v, out_shape, _MODES[mode][0]),
    }
    dev = jnp.asarray(x)
    ct = jnp.asarray(np.random.default_rng(1).standard_normal(out_shape).astype(np.float32))
    nbytes = x.nbytes * 5  # read x, write 4x
    fwd = {k: _bound(jax.jit(f), dev) for k, f in ops.items()}
    bwd = {k: _bound(jax.jit(jax.grad(lambda v, _f=f: jnp.sum(_f(v) * ct))), dev) for k, f in ops.items()}
    built = [
        Case(GROUP, f"resample {mode} x2 {x.shape} fwd", nbytes, fwd, "jax.image.resize"),
        Case(GROUP, f"resample_grad {mode} x2 {x.shape} bwd", 2 * nbytes, bwd, "jax.image.resize"),
    ]
    return _torch.with_torch(built, _torch_pair(x, mode))


def _bound(fn: Callable, arg: Any) -> Callable[[], Any]:
    return lambda: fn(arg)


_WINDOW = dict(window=(3, 3), strides=(2, 2), start_padding=(1, 1), end_padding=(1, 1))


def _torch_pool(x: np.ndarray) -> dict[str, Callable]:
    """torch's max pooling (values and indices), its backward, max_unpool2d, unfold and fold."""
    torch = _torch._torch()
    if torch is None:
        return {}
    f = torch.nn.functional
    t = torch.from_numpy(x)
    values, indices = f.max_pool2d(t, 3, 2, 1, return_indices=True)
    leaf = t.detach().clone().requires_grad_(True)
    cols = f.unfold(t, 3, 1, 1, 2)
    return {
        "fwd": lambda: f.max_pool2d(t, 3, 2, 1, return_indices=True),
        "bwd": lambda: torch.autograd.grad(f.max_pool2d(leaf, 3, 2, 1), [leaf], torch.ones_like(values)),
        "unpool": lambda: f.max_unpool2d(values, indices, 3, 2, 1, output_size=x.shape[2:]),
        "unfold": lambda: f.unfold(t, 3, 1, 1, 2),
        "fold": lambda: f.fold(cols, x.shape[2:], 3, 1, 1, 2),
    }


def _patches(v: jax.Array) -> jax.Array:
    p = jax.lax.conv_general_dilated_patches(v, (3, 3), (2, 2), ((1, 1), (1, 1)), precision=jax.lax.Precision.HIGHEST)
    return p.reshape(p.shape[0], p.shape[1], -1)


def _pool_cases(x: np.ndarray) -> list[Case]:
    w = _WINDOW
    dev = jnp.asarray(x)
    pool = lambda v: dmljax.max_pool_with_indices(v, w["window"], w["strides"], w["start_padding"], w["end_padding"])  # noqa: E731

    def window_max(v: jax.Array) -> jax.Array:
        pads = ((0, 0), (0, 0), (1, 1), (1, 1))
        return jax.lax.reduce_window(v, -jnp.inf, jax.lax.max, (1, 1, 3, 3), (1, 1, 2, 2), pads)

    values, indices = pool(dev)
    ct = jnp.asarray(np.random.default_rng(2).standard_normal(values.shape).astype(np.float32))
    cols = jax.jit(_patches)(dev)
    spatial = x.shape[2:]
    unfold = lambda v: dmljax.unfold(v, (3, 3), (2, 2), (1, 1), (1, 1), (1, 1))  # noqa: E731
    fold = lambda c: dmljax.fold(c, spatial, (3, 3), (2, 2), (1, 1), (1, 1), (1, 1))  # noqa: E731
    patches_t = jax.linear_transpose(_patches, dev)
    unpool_xla = lambda v, i: jnp.zeros(x.size, v.dtype).at[i.reshape(-1)].set(v.reshape(-1)).reshape(x.shape)  # noqa: E731
    torch_ops = _torch_pool(x)
    shape = x.shape

    def with_torch(case: Case, key: str) -> Case:
        if key not in torch_ops:
            return case
        return dataclasses.replace(case, contenders={**case.contenders, "torch": torch_ops[key]})

    fwd = {"dmljax": _bound(jax.jit(pool), dev), "lax.reduce_window": _bound(jax.jit(window_max), dev)}
    grad = lambda f: jax.jit(jax.grad(lambda v: jnp.sum(f(v) * ct)))  # noqa: E731
    bwd = {
        "dmljax": _bound(grad(lambda v: pool(v)[0]), dev),
        "lax.reduce_window": _bound(grad(window_max), dev),
    }
    unpool = {
        "dmljax": lambda: jax.jit(dmljax.max_unpool, static_argnums=2)(values, indices, shape),
        "XLA scatter": lambda: jax.jit(unpool_xla)(values, indices),
    }
    unfolds = {
        "dmljax": _bound(jax.jit(unfold), dev),
        "lax.conv_general_dilated_patches": _bound(jax.jit(_patches), dev),
    }
    folds = {
        "dmljax": _bound(jax.jit(fold), cols),
        "conv patches transposed": _bound(jax.jit(lambda c: patches_t(c)[0]), cols),
    }
    k = 9
    return [
        with_torch(
            Case(GROUP, f"max_pool_with_indices 3x3/2 {shape} fwd", x.nbytes * 2, fwd, "lax.reduce_window"), "fwd"
        ),
        with_torch(
            Case(GROUP, f"max_pool_with_indices 3x3/2 {shape} bwd", x.nbytes * 2, bwd, "lax.reduce_window"), "bwd"
        ),
        with_torch(Case(GROUP, f"max_unpool 3x3/2 {shape} fwd", x.nbytes * 2, unpool, "XLA scatter"), "unpool"),
        with_torch(
            Case(
                GROUP, f"unfold 3x3/2 {shape} fwd", x.nbytes * (1 + k // 4), unfolds, "lax.conv_general_dilated_patches"
            ),
            "unfold",
        ),
        with_torch(
            Case(GROUP, f"fold 3x3/2 {shape} fwd", x.nbytes * (1 + k // 4), folds, "conv patches transposed"), "fold"
        ),
    ]


def _generator_cases(shape: tuple[int, ...]) -> list[Case]:
    nbytes = 4 * math.prod(shape)
    eye = {
        "dmljax": lambda: jax.jit(dmljax.diagonal_matrix, static_argnums=(0, 1, 2))(shape, "float32", 1),
        "jnp.eye": lambda: jax.jit(lambda: jnp.broadcast_to(jnp.eye(shape[-2], shape[-1], 1), shape))(),
    }
    full = {
        "dmljax": lambda: jax.jit(dmljax.fill_value_constant, static_argnums=(0, 1, 2))(shape, "float32", 0.5),
        "jnp.full": lambda: jax.jit(lambda: jnp.full(shape, 0.5, jnp.float32))(),
    }
    return [
        Case(GROUP, f"diagonal_matrix {shape}", nbytes, eye, "jnp.eye"),
        Case(GROUP, f"fill_value_constant {shape}", nbytes, full, "jnp.full"),
    ]


def cases(sizes_bytes: Sequence[int]) -> list[Case]:
    """Nearest and bilinear resampling by 2, forward and backward; pooling, unpooling and folds; at each size."""
    out: list[Case] = []
    for nbytes in sizes_bytes:
        x = np.random.default_rng(nbytes).standard_normal(_nchw(nbytes), dtype=np.float32)
        built = _resample_cases(x, "nearest") + _resample_cases(x, "linear") + _pool_cases(x)
        out += sized(built + _generator_cases(x.shape), x.nbytes)
    return out
