"""Checks of the data-movement and selection operators against NumPy (`dmljax.bench._checks` lists them).

The references are NumPy's functions (``np.tile``, ``np.pad``, ``np.concatenate``,
``np.split``, a stable ``np.argsort``, ``np.argmax``, ``np.argwhere``) or loops written
from the DirectML pages' definitions (depth/space, reverse_subsequences,
fill_value_sequence), independent of dmljax's code.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import dmljax

__all__ = [
    "check_depth_space",
    "check_fill_value_sequence",
    "check_join_split",
    "check_one_hot_nonzero",
    "check_reverse_subsequences",
    "check_slice_grad",
    "check_tile_pad",
    "check_top_k_arg_reduce",
]


def _channel(order: str, b: int, channels: int, c: int, i: int, j: int) -> int:
    """The depth channel of (channel ``c`` of ``channels``, block offset ``i, j``): DirectML's DCR and CRD."""
    return (i * b + j) * channels + c if order == "DCR" else (c * b + i) * b + j


def _depth_to_space_loop(x: np.ndarray, b: int, order: str) -> np.ndarray:
    n, depth, h, w = x.shape
    out = np.empty((n, depth // (b * b), h * b, w * b), x.dtype)
    for p, c, y, z in np.ndindex(*out.shape):
        out[p, c, y, z] = x[p, _channel(order, b, out.shape[1], c, y % b, z % b), y // b, z // b]
    return out


def _space_to_depth_loop(x: np.ndarray, b: int, order: str) -> np.ndarray:
    n, c_in, h, w = x.shape
    out = np.empty((n, c_in * b * b, h // b, w // b), x.dtype)
    for p, c, y, z, i, j in np.ndindex(n, c_in, h // b, w // b, b, b):
        out[p, _channel(order, b, c_in, c, i, j), y, z] = x[p, c, y * b + i, z * b + j]
    return out


def check_depth_space() -> str:
    """depth_to_space and space_to_depth, DCR and CRD, equal the DirectML pages' index rules as loops."""
    x = np.random.default_rng(8).standard_normal((2, 8, 4, 6)).astype(np.float32)
    for order in ("DCR", "CRD"):
        if not np.array_equal(np.asarray(dmljax.depth_to_space(x, 2, order)), _depth_to_space_loop(x, 2, order)):
            raise AssertionError(f"depth_to_space {order} differs from the page's index rule")
        if not np.array_equal(np.asarray(dmljax.space_to_depth(x, 2, order)), _space_to_depth_loop(x, 2, order)):
            raise AssertionError(f"space_to_depth {order} differs from the page's index rule")
    return "DCR and CRD, both ways: equal the pages' index rules (NumPy loops)"


# DML_PADDING_MODE -> np.pad's mode (REFLECTION leaves the edge out, SYMMETRIC repeats it).
_NP_PAD: dict[str, Any] = {
    "constant": "constant",
    "edge": "edge",
    "reflection": "reflect",
    "symmetric": "symmetric",
    "wrap": "wrap",
}


def check_tile_pad() -> str:
    """tile equals ``np.tile``; pad in each of DirectML's five modes equals ``np.pad``."""
    x = np.random.default_rng(9).standard_normal((3, 4, 5)).astype(np.float32)
    if not np.array_equal(np.asarray(dmljax.tile(x, (2, 1, 3))), np.tile(x, (2, 1, 3))):
        raise AssertionError("tile differs from np.tile")
    start, end = (1, 0, 2), (2, 3, 1)
    widths = tuple(zip(start, end, strict=True))
    for mode, np_mode in _NP_PAD.items():
        kwargs: dict[str, Any] = {"constant_values": 1.5} if mode == "constant" else {}
        got = np.asarray(dmljax.pad(x, start, end, mode, kwargs.get("constant_values", 0)))
        if not np.array_equal(got, np.pad(x, widths, mode=np_mode, **kwargs)):
            raise AssertionError(f"pad {mode} differs from np.pad(mode={np_mode!r})")
    return f"tile = np.tile; pad {', '.join(_NP_PAD)} = np.pad"


def check_join_split() -> str:
    """concatenate equals ``np.concatenate`` and split_tensor ``np.split`` along each axis."""
    x = np.random.default_rng(10).standard_normal((6, 7)).astype(np.float32)
    for axis, sizes in ((0, (1, 2, 3)), (1, (4, 3)), (-1, (7,))):
        cuts = np.cumsum(sizes)[:-1]
        pieces = np.split(x, cuts, axis=axis)
        if not np.array_equal(np.asarray(dmljax.concatenate(pieces, axis)), np.concatenate(pieces, axis=axis)):
            raise AssertionError(f"concatenate axis={axis} differs from np.concatenate")
        got = dmljax.split_tensor(x, sizes, axis)
        if len(got) != len(pieces) or not all(np.array_equal(g, p) for g, p in zip(got, pieces, strict=True)):
            raise AssertionError(f"split_tensor axis={axis} differs from np.split")
    return "axes 0, 1, -1: concatenate = np.concatenate, split_tensor = np.split"


def check_reverse_subsequences() -> str:
    """Each line's first L elements reversed, L clamped to the axis (the page's rule, a loop); both axes."""
    x = np.random.default_rng(11).standard_normal((4, 6)).astype(np.float32)
    for axis, lengths in ((1, np.array([[0], [1], [4], [9]])), (0, np.array([[2, 0, 4, 3, 1, 7]]))):
        lines = np.moveaxis(x, axis, 0).copy()
        for k, length in enumerate(lengths.ravel()):
            n = min(int(length), x.shape[axis])
            lines[:n, k] = lines[:n, k][::-1]
        got = np.asarray(dmljax.reverse_subsequences(x, lengths.astype(np.int32), axis))
        if not np.array_equal(got, np.moveaxis(lines, 0, axis)):
            raise AssertionError(f"reverse_subsequences axis={axis} differs from the loop")
    return "axes 0 and 1, lengths 0 to past the axis: equal the page's loop"


def check_fill_value_sequence() -> str:
    """The page's loop (``value += delta`` in the output's type) in NumPy: float32 bit for bit, uint8 wraps."""
    for dtype, start, delta in ((np.float32, 0.1, 0.1), (np.int32, -7, 3), (np.uint8, 3, -2)):
        expected = np.empty(300, dtype)
        value: Any = dtype(start)
        for i in range(300):
            expected[i] = value
            value = dtype((int(value) + delta) % 256) if dtype is np.uint8 else value + dtype(delta)
        got = np.asarray(dmljax.fill_value_sequence((3, 100), dtype, start, delta)).ravel()
        if not np.array_equal(got, expected):
            raise AssertionError(f"fill_value_sequence {np.dtype(dtype)} differs from the page's loop")
    closed = np.float32(0.1) + np.float32(0.1) * np.arange(300, dtype=np.float32)
    differ = int(np.sum(np.asarray(dmljax.fill_value_sequence((300,), np.float32, 0.1, 0.1)) != closed))
    return f"page's loop bit for bit: float32, int32, uint8; {differ}/300 != start+delta*i"


def check_slice_grad() -> str:
    """slice_grad equals a zero tensor with the gradient assigned through NumPy's slice (negative stride)."""
    g = np.random.default_rng(12).standard_normal((3, 3)).astype(np.float32)
    expected = np.zeros((7, 9), np.float32)
    expected[6:0:-2, 1:9:3] = g  # slice's window: offsets (1, 1), sizes (6, 8), strides (-2, 3)
    got = np.asarray(dmljax.slice_grad(g, (7, 9), (1, 1), (6, 8), (-2, 3)))
    if not np.array_equal(got, expected):
        raise AssertionError("slice_grad differs from NumPy's slice assignment")
    return "negative stride: equals zeros with NumPy's slice assigned"


def check_top_k_arg_reduce() -> str:
    """top_k both ways equals a stable argsort; argmax/argmin (first and last on ties) equal NumPy's."""
    x = np.random.default_rng(13).integers(0, 5, (4, 9)).astype(np.float32)  # many ties
    for largest, order in (
        (True, np.argsort(-x, axis=1, kind="stable")),
        (False, np.argsort(x, axis=1, kind="stable")),
    ):
        values, indices = dmljax.top_k(x, 5, 1, largest=largest)
        if not np.array_equal(indices, order[:, :5]) or not np.array_equal(
            values, np.take_along_axis(x, order[:, :5], 1)
        ):
            raise AssertionError(f"top_k largest={largest} differs from a stable argsort")
    for axis in (0, 1):
        for name, reduce in (("argmax", np.argmax), ("argmin", np.argmin)):
            first = np.asarray(getattr(dmljax, name)(x, axis))
            last = np.asarray(getattr(dmljax, name)(x, axis, select_last_index=True))
            flipped = x.shape[axis] - 1 - reduce(np.flip(x, axis), axis)
            if not np.array_equal(first, reduce(x, axis)) or not np.array_equal(last, flipped):
                raise AssertionError(f"{name} axis={axis} differs from NumPy's on ties")
    return "stable argsort both ways; argmax/argmin = NumPy's, ties first or last"


def check_one_hot_nonzero() -> str:
    """one_hot equals a comparison with ``arange``; nonzero_coordinates equals ``np.argwhere`` and its count."""
    rng = np.random.default_rng(14)
    i = rng.integers(0, 6, (3, 4)).astype(np.int32)
    expected = np.where(i[..., None] == np.arange(6), np.float32(2), np.float32(-1))
    if not np.array_equal(np.asarray(dmljax.one_hot(i, 6, values=np.array([-1, 2], np.float32))), expected):
        raise AssertionError("one_hot differs from NumPy's comparison with arange")
    x = np.where(rng.random((3, 4, 5)) < 0.4, np.float32(0), np.float32(1.5))
    count, coordinates = dmljax.nonzero_coordinates(x)
    found = np.argwhere(x)
    if int(count) != len(found) or not np.array_equal(np.asarray(coordinates)[: len(found)], found):
        raise AssertionError("nonzero_coordinates differs from np.argwhere")
    return "one_hot = (i == arange) with (off, on); nonzero_coordinates = np.argwhere"
