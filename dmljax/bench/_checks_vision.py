"""Checks of the vision operators for `python -m dmljax`, against NumPy on small fixed inputs.

`resample` by 2 at pixel centres: nearest neighbour is ``np.repeat`` along each axis,
bilinear on a ramp reproduces the ramp's known values (interior points at quarter pixels,
the ends clamped); `resample_grad` of nearest neighbour is ``np.add.at`` at the repeated
positions. `max_pool_with_indices` 2x2/2 is a reshape's max and argmax (first of ties);
`max_unpool` puts them back; `unfold` of non-overlapping 2x2 windows is a reshape and
`fold` undoes it; overlapping windows of ones fold into the count of windows per element.
"""

from __future__ import annotations

import numpy as np

import dmljax

__all__ = ["check_folds", "check_generators", "check_pooling", "check_resample"]


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


def check_pooling() -> str:
    """max_pool_with_indices 2x2/2 against a reshape's max/argmax; max_unpool puts the maxima back."""
    x = np.round(np.random.default_rng(0).standard_normal((2, 3, 4, 6)) * 2).astype(np.float32)  # ties
    values, indices = (np.asarray(a) for a in dmljax.max_pool_with_indices(x, (2, 2), (2, 2)))
    blocks = x.reshape(2, 3, 2, 2, 3, 2).transpose(0, 1, 2, 4, 3, 5).reshape(2, 3, 2, 3, 4)
    if not np.array_equal(values, blocks.max(-1)):
        raise AssertionError("max_pool_with_indices values differ from the blocks' max")
    first = blocks.argmax(-1)  # the first of equal maxima
    n, c, i, j = np.indices(first.shape)
    want = ((n * 3 + c) * 4 + 2 * i + first // 2) * 6 + 2 * j + first % 2
    if not np.array_equal(indices, want):
        raise AssertionError("max_pool_with_indices indices are not the first maxima's flat positions")
    back = np.asarray(dmljax.max_unpool(values, indices, x.shape))
    expected = np.zeros(x.size, np.float32)
    expected[want.reshape(-1)] = values.reshape(-1)
    if not np.array_equal(back, expected.reshape(x.shape)):
        raise AssertionError("max_unpool does not put the maxima back at their indices")
    return "values, first-max indices and unpooling match NumPy"


def check_folds() -> str:
    """unfold of 2x2/2 windows is a reshape, fold undoes it; ones over 3x3/1 windows count them."""
    x = np.arange(2 * 3 * 4 * 6, dtype=np.float32).reshape(2, 3, 4, 6)
    cols = np.asarray(dmljax.unfold(x, (2, 2), (2, 2)))
    want = x.reshape(2, 3, 2, 2, 3, 2).transpose(0, 1, 3, 5, 2, 4).reshape(2, 12, 6)
    if not np.array_equal(cols, want):
        raise AssertionError("unfold of non-overlapping windows differs from a reshape")
    if not np.array_equal(np.asarray(dmljax.fold(cols, (4, 6), (2, 2), (2, 2))), x):
        raise AssertionError("fold does not undo unfold of non-overlapping windows")
    counts = np.asarray(dmljax.fold(np.ones((1, 9, 8), np.float32), (4, 6), (3, 3)))[0, 0]
    rows = np.minimum(np.minimum(np.arange(4) + 1, 4 - np.arange(4)), 2)  # 2 blocks of 3 over 4
    columns = np.minimum(np.minimum(np.arange(6) + 1, 6 - np.arange(6)), 3)  # 4 blocks of 3 over 6
    if not np.array_equal(counts, np.outer(rows, columns).astype(np.float32)):
        raise AssertionError(f"fold of ones gives {counts}, not the windows' counts")
    return "unfold = reshape, fold = its inverse, fold of ones counts the windows"


def check_generators() -> str:
    """diagonal_matrix = np.eye (offsets -1, 0, 2; a batch); fill_value_constant = np.full."""
    for k in (-1, 0, 2):
        got = np.asarray(dmljax.diagonal_matrix((2, 3, 4), "float32", k, 2.5))
        if not np.array_equal(got, np.broadcast_to(np.eye(3, 4, k, np.float32) * 2.5, (2, 3, 4))):
            raise AssertionError(f"diagonal_matrix offset {k} differs from np.eye")
    if not np.array_equal(np.asarray(dmljax.fill_value_constant((2, 3), "int16", -7)), np.full((2, 3), -7, np.int16)):
        raise AssertionError("fill_value_constant differs from np.full")
    return "diagonal_matrix = np.eye (offsets -1, 0, 2), fill_value_constant = np.full"
