"""NumPy-only, loop-based oracles for every dmljax operator.

No JAX and no cleverness here: each function walks every coordinate with `np.ndindex`
and applies the rule as SPEC states it, so that it is obviously correct.
"""

from __future__ import annotations

import numpy as np

# --------------------------------------------------------------------------------------
# Strided buffers (SPEC §1)
# --------------------------------------------------------------------------------------


def offset(coordinate, strides) -> int:
    """Buffer offset of a coordinate: ``dot(coordinate, strides)``."""
    return sum(int(c) * int(s) for c, s in zip(coordinate, strides, strict=True))


def read_tensor(buffer: np.ndarray, sizes, strides) -> np.ndarray:
    """``out[c] = buffer[dot(c, strides)]`` for every coordinate ``c``."""
    out = np.empty(tuple(sizes), dtype=buffer.dtype)
    for c in np.ndindex(*sizes):
        out[c] = buffer[offset(c, strides)]
    return out


def write_tensor(buffer: np.ndarray, sizes, strides, value: np.ndarray) -> np.ndarray:
    """A copy of ``buffer`` with ``new[dot(c, strides)] = value[c]``."""
    new = buffer.copy()
    for c in np.ndindex(*sizes):
        new[offset(c, strides)] = value[c]
    return new


def calc_buffer_tensor_size(itemsize: int, sizes, strides=None) -> int:
    """DMLCalcBufferTensorSize, written out as the DirectML helper does it."""
    if strides is None:
        size = itemsize
        for n in sizes:
            size *= n
    else:
        last = 0
        for n, s in zip(sizes, strides, strict=True):
            last += (n - 1) * s
        size = (last + 1) * itemsize
    return (size + 3) & ~3
