"""Checks of the vision operators for `python -m dmljax`, against NumPy on small fixed inputs.

`resample` by 2 at pixel centres: nearest neighbour is ``np.repeat`` along each axis,
bilinear on a ramp reproduces the ramp's known values (interior points at quarter pixels,
the ends clamped); `resample_grad` of nearest neighbour is ``np.add.at`` at the repeated
positions.
"""

from __future__ import annotations

import numpy as np

import dmljax

__all__ = ["check_resample"]


def check_resample() -> str:
    """resample (nearest, linear) and resample_grad against np.repeat, a ramp and np.add.at."""
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    near = np.asarray(dmljax.resample(x, (2.0, 2.0)))
    if not np.array_equal(near, np.repeat(np.repeat(x, 2, 0), 2, 1)):
        raise AssertionError("resample nearest x2 differs from np.repeat")
    ramp = np.arange(4, dtype=np.float32)
    lin = np.asarray(dmljax.resample(ramp, 2.0, mode="linear"))
    want = np.clip((np.arange(8, dtype=np.float32) + 0.5) / 2 - 0.5, 0, 3)
    if not np.array_equal(lin, want):
        raise AssertionError(f"resample linear x2 of a ramp gives {lin}, not {want}")
    g = np.random.default_rng(0).standard_normal((6, 8)).astype(np.float32)
    grad = np.asarray(dmljax.resample_grad(g, (3, 4), (2.0, 2.0), mode="nearest"))
    rows, cols = np.meshgrid(np.arange(6) // 2, np.arange(8) // 2, indexing="ij")
    expected = np.zeros((3, 4), np.float32)
    np.add.at(expected, (rows.ravel(), cols.ravel()), g.ravel())
    if not np.array_equal(grad, expected):
        raise AssertionError("resample_grad nearest differs from np.add.at")
    return "nearest = np.repeat, linear ramp exact, resample_grad = np.add.at"
