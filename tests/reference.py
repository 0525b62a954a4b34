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
