"""Benchmark cases for the vision operators: `resample` and its gradient `resample_grad`.

Each case is float32 NCHW data ``(1, 16, s, s)`` of about ``nbytes`` bytes, resized by 2
along H and W (pixel centres: offsets (0.5, -0.5)), nearest neighbour and bilinear.
Contenders, dmljax first: ``jax.image.resize`` (the reference for ratios; the same
values, its bilinear ones within rounding), and torch's ``interpolate`` on the CPU
(``nearest-exact`` / ``bilinear``, ``align_corners=False``) when torch is installed.
Backward cases time ``grad(sum(resample(x) * ct))``: dmljax's ordered add in output order
against XLA's scatter-add (``jax.image.resize``'s gradient, no order) and torch's
backward.
"""

from __future__ import annotations

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


def cases(sizes_bytes: Sequence[int]) -> list[Case]:
    """Nearest and bilinear resampling by 2, forward and backward, at each size."""
    out: list[Case] = []
    for nbytes in sizes_bytes:
        x = np.random.default_rng(nbytes).standard_normal(_nchw(nbytes), dtype=np.float32)
        out += sized(_resample_cases(x, "nearest") + _resample_cases(x, "linear"), x.nbytes)
    return out
