"""On-the-spot checks for the main job: each operator on an embedded workload against NumPy.

The references here are NumPy's own functions (``np.lib.stride_tricks.as_strided``,
``np.take``, ``np.take_along_axis``, ``np.put_along_axis``, basic slicing), independent
of dmljax's code; the test suite goes further with loop-based oracles.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

import dmljax

__all__ = ["CHECKS"]


def _as_strided(buffer: np.ndarray, desc: dmljax.TensorDesc) -> np.ndarray:
    strides = tuple(s * buffer.itemsize for s in desc.strides)
    return np.lib.stride_tricks.as_strided(buffer, desc.sizes, strides).copy()


def check_read_tensor() -> str:
    """Every layout of seed 002 read through dmljax equals NumPy's strided view."""
    rng = np.random.default_rng(0)
    layouts = {
        "packed": dmljax.TensorDesc("float32", (2, 3, 4, 5)),
        "NHWC": dmljax.TensorDesc("float32", (2, 3, 4, 5), dmljax.packed_strides((2, 3, 4, 5), "NHWC")),
        "broadcast": dmljax.TensorDesc("float32", (2, 3, 4, 5), (0, 5, 0, 1)),
        "padded": dmljax.TensorDesc("float32", (2, 3, 4, 5), (120, 40, 8, 1)),
        "windows": dmljax.TensorDesc("float32", (6, 3), (1, 1)),
    }
    for name, desc in layouts.items():
        buffer = rng.standard_normal(desc.min_buffer_elements).astype(np.float32)
        got = np.asarray(dmljax.read_tensor(buffer, desc))
        if not np.array_equal(got, _as_strided(buffer, desc)):
            raise AssertionError(f"read_tensor {name} differs from NumPy's strided view")
    return f"{len(layouts)} layouts equal NumPy's as_strided view"


def check_write_tensor() -> str:
    """Writing through NHWC and padded descriptors lands where NumPy's strided view says."""
    rng = np.random.default_rng(1)
    for desc in (
        dmljax.TensorDesc("int32", (2, 3, 4, 5), dmljax.packed_strides((2, 3, 4, 5), "NHWC")),
        dmljax.TensorDesc("int32", (2, 3, 4, 5), (120, 40, 8, 1)),
    ):
        value = rng.integers(0, 100, desc.sizes).astype(np.int32)
        expected = np.full(desc.min_buffer_elements, -1, np.int32)
        strides = tuple(s * 4 for s in desc.strides)
        np.lib.stride_tricks.as_strided(expected, desc.sizes, strides)[...] = value
        got = np.asarray(dmljax.write_tensor(np.full(desc.min_buffer_elements, -1, np.int32), desc, value))
        if not np.array_equal(got, expected):
            raise AssertionError("write_tensor differs from NumPy's strided assignment")
    return "NHWC and padded writes equal NumPy's strided assignment"


CHECKS: list[tuple[str, Callable[[], str]]] = [
    ("read_tensor", check_read_tensor),
    ("write_tensor", check_write_tensor),
]
