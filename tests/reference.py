"""NumPy-only, loop-based oracles for every dmljax operator.

No JAX and no cleverness here: each function walks every coordinate with `np.ndindex`
and applies the rule as SPEC states it, so that it is obviously correct.
"""

from __future__ import annotations

import numpy as np

# --------------------------------------------------------------------------------------
# Scatter, gather_elements, gather, slice1 (SPEC §2, §3, §5)
# --------------------------------------------------------------------------------------


def _wrap(index, size: int) -> int:
    """A negative index counts from the end of the axis; in-range indices only."""
    index = int(index)
    if index < 0:
        index += size
    if not 0 <= index < size:
        raise IndexError(f"index {index} out of range for size {size}")
    return index


def scatter(data: np.ndarray, indices: np.ndarray, updates: np.ndarray, axis: int) -> np.ndarray:
    """``output = data``; ``output[p with p[axis] = indices[p]] = updates[p]`` for every ``p``."""
    out = data.copy()
    for p in np.ndindex(*indices.shape):
        target = list(p)
        target[axis] = _wrap(indices[p], data.shape[axis])
        out[tuple(target)] = updates[p]
    return out


def gather_elements(data: np.ndarray, indices: np.ndarray, axis: int) -> np.ndarray:
    """``output[p] = data[p with p[axis] = indices[p]]``."""
    out = np.empty(indices.shape, dtype=data.dtype)
    for p in np.ndindex(*indices.shape):
        source = list(p)
        source[axis] = _wrap(indices[p], data.shape[axis])
        out[p] = data[tuple(source)]
    return out


def gather(data: np.ndarray, indices: np.ndarray, axis: int) -> np.ndarray:
    """ONNX Gather: ``output[j.., i.., k..] = data[j.., indices[i..], k..]``."""
    q = indices.ndim
    out_shape = data.shape[:axis] + indices.shape + data.shape[axis + 1 :]
    out = np.empty(out_shape, dtype=data.dtype)
    for c in np.ndindex(*out_shape):
        i = c[axis : axis + q]
        source = c[:axis] + (_wrap(indices[i], data.shape[axis]),) + c[axis + q :]
        out[c] = data[source]
    return out


def slice1(data: np.ndarray, offsets, sizes, strides, output_sizes=None) -> np.ndarray:
    """DML_SLICE1: ``output[c] = data[b + strides * c]``, ``b`` the window's start or end."""
    if output_sizes is None:
        output_sizes = [1 + (s - 1) // abs(t) for s, t in zip(sizes, strides, strict=True)]
    begin = [o + s - 1 if t < 0 else o for o, s, t in zip(offsets, sizes, strides, strict=True)]
    out = np.empty(tuple(output_sizes), dtype=data.dtype)
    for c in np.ndindex(*output_sizes):
        out[c] = data[tuple(b + t * ci for b, t, ci in zip(begin, strides, c, strict=True))]
    return out
