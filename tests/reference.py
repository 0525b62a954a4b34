"""NumPy-only, loop-based oracles for every dmljax operator.

No JAX and no cleverness here: each function walks every coordinate with `np.ndindex`
and applies the rule as the operator's DirectML (or ONNX) page states it, so that it is
obviously correct.
"""

from __future__ import annotations

import itertools

import numpy as np

# --------------------------------------------------------------------------------------
# Strided buffers: https://learn.microsoft.com/en-us/windows/ai/directml/dml-strides
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
# Scatter, gather_elements, gather, slice1: DirectML's pages, and ONNX's for Gather:
# https://learn.microsoft.com/en-us/windows/win32/api/directml/ns-directml-dml_scatter_operator_desc
# (likewise ..._gather_elements_operator_desc, ..._gather_operator_desc, ..._slice1_operator_desc)
# https://onnx.ai/onnx/operators/onnx__Gather.html
# --------------------------------------------------------------------------------------


def _wrap(index, size: int) -> int:
    """A negative index counts from the end of the axis; in-range indices only."""
    index = int(index)
    if index < 0:
        index += size
    if not 0 <= index < size:
        raise IndexError(f"index {index} out of range for size {size}")
    return index


def _position(index, size: int, mode) -> int | None:
    """Where an index lands: ``mode=None`` demands an in-range index; else as `source`."""
    return _wrap(index, size) if mode is None else source(index, size, mode)


def scatter(data: np.ndarray, indices: np.ndarray, updates: np.ndarray, axis: int, mode=None) -> np.ndarray:
    """``output = data``; ``output[p with p[axis] = indices[p]] = updates[p]`` for every ``p``.

    ``mode`` "clip" writes at the clamped position, "fill" drops the update (see `source`).
    """
    out = data.copy()
    for p in np.ndindex(*indices.shape):
        target = list(p)
        target[axis] = _position(indices[p], data.shape[axis], mode)
        if target[axis] is not None:
            out[tuple(target)] = updates[p]
    return out


def gather_elements(data: np.ndarray, indices: np.ndarray, axis: int, mode=None) -> np.ndarray:
    """``output[p] = data[p with p[axis] = indices[p]]``; "fill" reads 0 for a bad index."""
    out = np.empty(indices.shape, dtype=data.dtype)
    for p in np.ndindex(*indices.shape):
        source_ = list(p)
        source_[axis] = _position(indices[p], data.shape[axis], mode)
        out[p] = 0 if source_[axis] is None else data[tuple(source_)]
    return out


def gather(data: np.ndarray, indices: np.ndarray, axis: int, mode=None) -> np.ndarray:
    """ONNX Gather: ``output[j.., i.., k..] = data[j.., indices[i..], k..]``; modes as `gather_elements`."""
    q = indices.ndim
    out_shape = data.shape[:axis] + indices.shape + data.shape[axis + 1 :]
    out = np.empty(out_shape, dtype=data.dtype)
    for c in np.ndindex(*out_shape):
        i = c[axis : axis + q]
        position = _position(indices[i], data.shape[axis], mode)
        out[c] = 0 if position is None else data[c[:axis] + (position,) + c[axis + q :]]
    return out


def source(index, size: int, mode: str) -> int | None:
    """Where an index reads under ``mode``: "clip" clamps into the axis, "fill" reads nothing.

    Python integers: exact for every index type and axis length.
    """
    index = int(index)
    if index < 0:
        index += size
    if 0 <= index < size:
        return index
    return None if mode == "fill" else min(max(index, 0), size - 1)


def gather_grad(shape, indices: np.ndarray, cotangent: np.ndarray, axis: int, mode: str = "clip") -> np.ndarray:
    """Gradient of ``sum(gather(data, indices, axis) * cotangent)`` in ``data`` of ``shape``."""
    q = indices.ndim
    grad = np.zeros(shape, cotangent.dtype)
    for c in np.ndindex(*cotangent.shape):
        position = source(indices[c[axis : axis + q]], shape[axis], mode)
        if position is not None:
            grad[c[:axis] + (position,) + c[axis + q :]] += cotangent[c]
    return grad


def gather_elements_grad(shape, indices: np.ndarray, cotangent: np.ndarray, axis: int, mode: str = "clip"):
    """Gradient of ``sum(gather_elements(data, indices, axis) * cotangent)`` in ``data``."""
    grad = np.zeros(shape, cotangent.dtype)
    for p in np.ndindex(*indices.shape):
        position = source(indices[p], shape[axis], mode)
        if position is not None:
            grad[p[:axis] + (position,) + p[axis + 1 :]] += cotangent[p]
    return grad


# ONNX GatherND, ScatterND and ScatterElements with reduction, as ONNX's loops:
# https://onnx.ai/onnx/operators/onnx__GatherND.html
# https://onnx.ai/onnx/operators/onnx__ScatterND.html
# https://onnx.ai/onnx/operators/onnx__ScatterElements.html

# max/min as onnxruntime's CPU kernels fold them (Func_Max/Func_Min in
# onnxruntime/core/providers/cpu/tensor/scatter.cc): the current value stays only where it is
# strictly better, so a NaN update replaces it, a NaN current value gives way to the next
# update, and of equal values (+0.0, -0.0) the later one wins. (Python's max(a, b) keeps a
# on ties and a NaN a.)
REDUCE = {
    "add": lambda a, b: a + b,
    "mul": lambda a, b: a * b,
    "max": lambda a, b: a if a > b else b,
    "min": lambda a, b: a if a < b else b,
}


def extremal_winner(sequence, reduction: str) -> int:
    """The position in ``sequence`` (the input's value, then its updates in loop order) whose
    value ``REDUCE[reduction]`` folds them to: the element a max/min scatter's result is taken from."""
    winner = 0
    for k in range(1, len(sequence)):
        kept = sequence[winner] > sequence[k] if reduction == "max" else sequence[winner] < sequence[k]
        if not kept:
            winner = k
    return winner


def _tuple(index_tuple, shape, mode) -> tuple | None:
    """Positions of an index tuple along the leading axes of ``shape``; None if any is dropped."""
    out = tuple(_position(i, s, mode) for i, s in zip(index_tuple, shape, strict=False))
    return None if any(p is None for p in out) else out


def gather_nd(data: np.ndarray, indices: np.ndarray, batch_dims: int = 0, mode=None) -> np.ndarray:
    """``output[i..] = data[i[:b] + indices[i] + ...]``; "fill" reads 0 for a tuple with a bad index."""
    b, k = batch_dims, indices.shape[-1]
    out = np.empty(indices.shape[:-1] + data.shape[b + k :], dtype=data.dtype)
    for i in np.ndindex(*indices.shape[:-1]):
        position = _tuple(indices[i], data.shape[b : b + k], mode)
        out[i] = 0 if position is None else data[i[:b] + position]
    return out


def scatter_nd(data: np.ndarray, indices: np.ndarray, updates: np.ndarray, reduction="none", mode=None) -> np.ndarray:
    """``output = data``; for every ``i`` in row-major order ``output[indices[i]] = f(output[indices[i]], updates[i])``.

    Element by element, one after the other, in the data's own type (NumPy scalars).
    """
    out = data.copy()
    k = indices.shape[-1]
    for i in np.ndindex(*indices.shape[:-1]):
        position = _tuple(indices[i], data.shape[:k], mode)
        if position is None:
            continue
        for s in np.ndindex(*data.shape[k:]):
            if reduction == "none":
                out[position + s] = updates[i + s]
            else:
                out[position + s] = REDUCE[reduction](out[position + s], updates[i + s])
    return out


def scatter_elements(
    data: np.ndarray, indices: np.ndarray, updates: np.ndarray, axis: int, reduction="none", mode=None
):
    """`scatter` with ONNX's reduction: ``output[t] = f(output[t], updates[p])`` for every ``p`` in row-major order."""
    out = data.copy()
    for p in np.ndindex(*indices.shape):
        target = list(p)
        target[axis] = _position(indices[p], data.shape[axis], mode)
        if target[axis] is None:
            continue
        t = tuple(target)
        out[t] = updates[p] if reduction == "none" else REDUCE[reduction](out[t], updates[p])
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


# --------------------------------------------------------------------------------------
# Philox 4x32-10 and DML_RANDOM_GENERATOR, Python ints, one block at a time:
# https://learn.microsoft.com/en-us/windows/win32/api/directml/ns-directml-dml_random_generator_operator_desc
# --------------------------------------------------------------------------------------

_MASK32 = 0xFFFFFFFF
# Random123 philox.h: PHILOX_M4x32_0/1 (multipliers) and PHILOX_W32_0/1 (key bumps).
_PHILOX_M = (0xD2511F53, 0xCD9E8D57)
_PHILOX_W = (0x9E3779B9, 0xBB67AE85)


def philox4x32_10(counter, key) -> tuple[int, int, int, int]:
    """One Philox 4x32-10 block, exactly as Random123's philox4x32_R(10, ctr, key)."""
    x = [int(c) & _MASK32 for c in counter]
    k = [int(c) & _MASK32 for c in key]
    for r in range(10):
        if r:
            k = [(k[0] + _PHILOX_W[0]) & _MASK32, (k[1] + _PHILOX_W[1]) & _MASK32]
        p0 = _PHILOX_M[0] * x[0]
        p1 = _PHILOX_M[1] * x[2]
        x = [(p1 >> 32) ^ x[1] ^ k[0], p1 & _MASK32, (p0 >> 32) ^ x[3] ^ k[1], p0 & _MASK32]
    return tuple(x)


def counter_words(counter: int) -> tuple[int, int, int, int]:
    """A 128-bit counter (taken modulo 2^128) as four 32-bit words, least significant first."""
    counter %= 2**128
    return tuple((counter >> (32 * i)) & _MASK32 for i in range(4))


def counter_value(words) -> int:
    """Four 32-bit words (least significant first) as one 128-bit integer."""
    return sum(int(w) << (32 * i) for i, w in enumerate(words))


def random_generator(state, shape) -> tuple[np.ndarray, np.ndarray]:
    """DML_RANDOM_GENERATOR: element n (row-major) is word n % 4 of block counter + n // 4; counter += ceil(n / 4)."""
    state = np.asarray(state, np.uint32).reshape(-1)
    counter, key = counter_value(state[:4]), state[4:]
    out = np.empty(tuple(shape), np.uint32)
    for n, c in enumerate(np.ndindex(*shape)):
        out[c] = philox4x32_10(counter_words(counter + n // 4), key)[n % 4]
    blocks = -(-out.size // 4)
    next_state = np.array([*counter_words(counter + blocks), *key], np.uint32)
    return out, next_state


# --------------------------------------------------------------------------------------
# Keys: advance, split, fold_in, TensorFlow seeds (dmljax/_random/keys.py, dmljax/_random/tf_seed.py)
# --------------------------------------------------------------------------------------

_DERIVE_KEY_TWEAK = (0x646D6C6A, 0x61786B79)  # ASCII "dmlj", "axky"
_TF_SEED_KEY = (0x3EC8F720, 0x02461E29)  # TensorFlow's kSeedKey


def advance(state, blocks: int) -> np.ndarray:
    """The state whose 128-bit counter is counter + blocks (mod 2^128), key unchanged."""
    state = np.asarray(state, np.uint32).reshape(-1)
    return np.array([*counter_words(counter_value(state[:4]) + blocks), *state[4:]], np.uint32)


def derive(state, data: int, tag: int) -> np.ndarray:
    """One child: h = philox(counter, key ^ tweak); g = philox((data, tag, h2, h3), (h0, h1))."""
    state = [int(w) for w in np.asarray(state, np.uint32).reshape(-1)]
    h = philox4x32_10(state[:4], [state[4] ^ _DERIVE_KEY_TWEAK[0], state[5] ^ _DERIVE_KEY_TWEAK[1]])
    g = philox4x32_10([data & _MASK32, tag, h[2], h[3]], h[:2])
    return np.array([0, 0, g[2], g[3], g[0], g[1]], np.uint32)


def split(state, num: int) -> np.ndarray:
    return np.stack([derive(state, i, 1) for i in range(num)])


def fold_in(state, data: int) -> np.ndarray:
    return derive(state, data, 2)


def state_from_tf_seed(seed) -> np.ndarray:
    """TensorFlow's GenerateKey: sign-extended seeds as a counter, one block under kSeedKey."""
    a, b = (int(v) % 2**64 for v in seed)
    mix = philox4x32_10([a & _MASK32, a >> 32, b & _MASK32, b >> 32], _TF_SEED_KEY)
    return np.array([0, 0, mix[2], mix[3], mix[0], mix[1]], np.uint32)


def blocks_used(state, n_blocks: int) -> set[tuple[int, int]]:
    """The (counter, key) Philox inputs of the first n_blocks blocks of a state's stream."""
    state = np.asarray(state, np.uint32).reshape(-1)
    counter, key = counter_value(state[:4]), counter_value(state[4:])
    return {((counter + i) % 2**128, key) for i in range(n_blocks)}


# --------------------------------------------------------------------------------------
# Segment reductions: jax.ops.segment_* in ONNX ScatterND's loop order
# --------------------------------------------------------------------------------------

SEGMENT_RULES = {
    "sum": lambda out, u: out + u,
    "prod": lambda out, u: out * u,
    "max": lambda out, u: u if not (out > u) else out,  # ONNX's loop as onnxruntime runs it
    "min": lambda out, u: u if not (out < u) else out,
}


def segment_identity(name: str, dtype) -> object:
    """JAX's initial value of a segment: 0, 1, the lowest value (max), the highest (min)."""
    dtype = np.dtype(dtype)
    if name in ("sum", "mean"):
        return dtype.type(0)
    if name == "prod":
        return dtype.type(1)
    if dtype == np.dtype(bool):
        return np.bool_(name == "min")
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return dtype.type(info.min if name == "max" else info.max)
    return dtype.type(-np.inf if name == "max" else np.inf)


def segment(name: str, data: np.ndarray, segment_ids: np.ndarray, num_segments: int, mode: str = "drop") -> np.ndarray:
    """``out[s] = identity``; then ``out[ids[i]] = f(out[ids[i]], data[i])`` for i = 0, 1, ... in order.

    Ids outside ``[0, num_segments)`` are dropped (``mode="drop"``) or clamped into it
    (``"clip"``: negative ones to 0). ``"mean"``: the ordered sum over ``max(count, 1)``.
    bool sum and prod: or and and.
    """
    rule = "sum" if name == "mean" else name
    out = np.empty((num_segments,) + data.shape[1:], data.dtype)
    count = np.zeros(num_segments, np.int64)
    for s in np.ndindex(*out.shape):
        out[s] = segment_identity(name, data.dtype)
    for i in range(data.shape[0]):
        target = int(segment_ids[i])
        if mode == "clip":
            target = min(max(target, 0), num_segments - 1)
        elif not 0 <= target < num_segments:
            continue
        count[target] += 1
        for s in np.ndindex(*data.shape[1:]):
            here, u = out[(target,) + s], data[(i,) + s]
            if data.dtype == np.dtype(bool):
                out[(target,) + s] = (here or u) if rule in ("sum", "max") else (here and u)
            else:
                out[(target,) + s] = SEGMENT_RULES[rule](here, u)
    if name == "mean":
        for t in range(num_segments):
            for s in np.ndindex(*data.shape[1:]):
                out[(t,) + s] = out[(t,) + s] / data.dtype.type(max(count[t], 1))
    return out


# --------------------------------------------------------------------------------------
# Cumulative sum/product, top-k, arg-max/min, one-hot, non-zero coordinates: DirectML's pages
# https://learn.microsoft.com/en-us/windows/win32/api/directml/ns-directml-dml_cumulative_summation_operator_desc
# (likewise ..._cumulative_product_..., ..._top_k1_..., ..._argmax_..., ..._argmin_...,
# ..._one_hot_..., ..._nonzero_coordinates_operator_desc) and ONNX's CumSum, TopK,
# ArgMax/ArgMin, OneHot, NonZero.
# --------------------------------------------------------------------------------------


def cumulative(x: np.ndarray, axis: int, reverse=False, exclusive=False, product=False) -> np.ndarray:
    """The running tally, one element after the other, rounded to ``x``'s type at every step."""
    out = np.empty_like(x)
    n = x.shape[axis]
    order = range(n - 1, -1, -1) if reverse else range(n)
    identity = x.dtype.type(1 if product else 0)
    with np.errstate(over="ignore"):
        for p in np.ndindex(*(x.shape[:axis] + x.shape[axis + 1 :])):
            tally = None
            for i in order:
                c = p[:axis] + (i,) + p[axis:]
                if exclusive:
                    out[c] = identity if tally is None else tally
                if tally is None:
                    tally = x[c]
                else:
                    tally = x.dtype.type(tally * x[c] if product else tally + x[c])
                if not exclusive:
                    out[c] = tally
    return out


def order_key(value) -> tuple:
    """The order of top-k and arg-max/min: numbers by value (-0 equals +0), NaN above every number."""
    if np.asarray(value).dtype.kind in "iub":
        return (0, int(value))
    v = float(value)  # floats, bfloat16 included
    return (1, 0.0) if v != v else (0, v)


def top_k(x: np.ndarray, k: int, axis: int, largest=True) -> tuple[np.ndarray, np.ndarray]:
    """Sort each sequence by value (largest or smallest first), ties by ascending index; keep k."""
    n = x.shape[axis]
    shape = x.shape[:axis] + (k,) + x.shape[axis + 1 :]
    values, indices = np.empty(shape, x.dtype), np.empty(shape, np.int64)
    for p in np.ndindex(*(x.shape[:axis] + x.shape[axis + 1 :])):
        seq = [x[p[:axis] + (i,) + p[axis:]] for i in range(n)]

        def rank(i, seq=seq):
            flag, v = order_key(seq[i])
            return ((-flag, -v) if largest else (flag, v)), i

        for j, i in enumerate(sorted(range(n), key=rank)[:k]):
            values[p[:axis] + (j,) + p[axis:]] = seq[i]
            indices[p[:axis] + (j,) + p[axis:]] = i
    return values, indices


def arg_reduce(x: np.ndarray, axes, keepdims=False, select_last_index=False, largest=True) -> np.ndarray:
    """ArgMax (``largest``) / ArgMin: the row-major index, within the reduced axes, of the winner.

    The winner is the first (or, with ``select_last_index``, the last) element of the
    greatest (least) `order_key`.
    """
    axes = sorted(a % x.ndim for a in axes)
    kept = [d for d in range(x.ndim) if d not in axes]
    reduced = [x.shape[a] for a in axes]
    out = np.empty([x.shape[d] for d in kept], np.int64)
    for p in np.ndindex(*out.shape):
        best, where = None, 0
        for flat, r in enumerate(np.ndindex(*reduced)):
            c = [0] * x.ndim
            for d, v in zip(kept, p, strict=True):
                c[d] = v
            for d, v in zip(axes, r, strict=True):
                c[d] = v
            key = order_key(x[tuple(c)])
            if best is None:
                best, where = key, flat
                continue
            better = key > best if largest else key < best
            if better or (select_last_index and key == best):
                best, where = key, flat
        out[p] = where
    if keepdims:
        out = np.expand_dims(out, tuple(axes))
    return out


def one_hot(indices: np.ndarray, depth: int, off, on, axis: int = -1, dtype=None) -> np.ndarray:
    """ONNX OneHot: a new axis of ``depth``; ``on`` where the (negative: from the end) index is."""
    rank = indices.ndim + 1
    axis %= rank
    shape = indices.shape[:axis] + (depth,) + indices.shape[axis:]
    out = np.empty(shape, dtype if dtype is not None else np.asarray(off).dtype)
    for c in np.ndindex(*shape):
        index = int(indices[c[:axis] + c[axis + 1 :]])
        if index < 0:
            index += depth
        out[c] = on if index == c[axis] else off
    return out


def nonzero_coordinates(x: np.ndarray) -> tuple[int, np.ndarray]:
    """Count and row-major coordinates of the non-zero elements; rows past the count hold 0."""
    coordinates = np.zeros((x.size, x.ndim), np.int64)
    count = 0
    for c in np.ndindex(*x.shape):
        if x[c] != 0:
            coordinates[count] = c
            count += 1
    return count, coordinates


# Data movement: DML_PADDING1, DML_TILE, DML_JOIN, DML_SPLIT, DML_SPACE_TO_DEPTH1,
# DML_DEPTH_TO_SPACE1, DML_REVERSE_SUBSEQUENCES, DML_FILL_VALUE_SEQUENCE, DML_SLICE_GRAD:
# https://learn.microsoft.com/en-us/windows/win32/api/directml/ (each struct's page)
# --------------------------------------------------------------------------------------


def _pad_source(i: int, n: int, mode: str) -> int | None:
    """The input position that padded position ``i`` (``< 0`` or ``>= n``) reads; None: the constant."""
    if 0 <= i < n:
        return i
    if mode == "constant":
        return None
    if mode == "edge" or n == 1:
        return min(max(i, 0), n - 1)
    if mode == "wrap":
        return i % n
    if mode == "reflection":  # mirrored at the edge, the edge not repeated: period 2 (n - 1)
        m = i % (2 * (n - 1))
        return m if m < n else 2 * (n - 1) - m
    m = i % (2 * n)  # symmetric: the edge repeated, period 2 n
    return m if m < n else 2 * n - 1 - m


def pad(data: np.ndarray, start, end, mode: str = "constant", value=0) -> np.ndarray:
    """DML_PADDING1: output size ``start + n + end``; each padded position reads per ``mode``."""
    shape = tuple(s + n + e for s, n, e in zip(start, data.shape, end, strict=True))
    out = np.empty(shape, dtype=data.dtype)
    for c in np.ndindex(*shape):
        source = [_pad_source(ci - s, n, mode) for ci, s, n in zip(c, start, data.shape, strict=True)]
        out[c] = value if None in source else data[tuple(source)]
    return out


def tile(data: np.ndarray, repeats) -> np.ndarray:
    """DML_TILE: ``output[c] = data[c % data.shape]``."""
    shape = tuple(n * r for n, r in zip(data.shape, repeats, strict=True))
    out = np.empty(shape, dtype=data.dtype)
    for c in np.ndindex(*shape):
        out[c] = data[tuple(ci % n for ci, n in zip(c, data.shape, strict=True))]
    return out


def join(inputs, axis: int) -> np.ndarray:
    """DML_JOIN: the inputs one after the other along ``axis``."""
    shape = list(inputs[0].shape)
    shape[axis] = sum(x.shape[axis] for x in inputs)
    out = np.empty(tuple(shape), dtype=inputs[0].dtype)
    for c in np.ndindex(*shape):
        k, position = 0, c[axis]
        while position >= inputs[k].shape[axis]:
            position -= inputs[k].shape[axis]
            k += 1
        out[c] = inputs[k][c[:axis] + (position,) + c[axis + 1 :]]
    return out


def split_tensor(data: np.ndarray, sizes, axis: int) -> list[np.ndarray]:
    """DML_SPLIT: output ``k`` holds ``sizes[k]`` elements along ``axis``, from where output ``k - 1`` ended."""
    outs, start = [], 0
    for size in sizes:
        shape = data.shape[:axis] + (size,) + data.shape[axis + 1 :]
        out = np.empty(shape, dtype=data.dtype)
        for c in np.ndindex(*shape):
            out[c] = data[c[:axis] + (start + c[axis],) + c[axis + 1 :]]
        outs.append(out)
        start += size
    return outs


def _depth(c: int, i: int, j: int, channels: int, b: int, order: str) -> int:
    """The depth index of channel ``c`` at block offset ``(i, j)``: DCR puts the offset first, CRD last."""
    return (i * b + j) * channels + c if order == "DCR" else (c * b + i) * b + j


def space_to_depth(data: np.ndarray, b: int, order: str = "DCR") -> np.ndarray:
    """DML_SPACE_TO_DEPTH1: ``output[n, depth(c, i, j), h, w] = data[n, c, h * b + i, w * b + j]``."""
    n_, c_, h_, w_ = data.shape
    out = np.empty((n_, c_ * b * b, h_ // b, w_ // b), dtype=data.dtype)
    for n, c, y, x in np.ndindex(*data.shape):
        out[n, _depth(c, y % b, x % b, c_, b, order), y // b, x // b] = data[n, c, y, x]
    return out


def depth_to_space(data: np.ndarray, b: int, order: str = "DCR") -> np.ndarray:
    """DML_DEPTH_TO_SPACE1: ``output[n, c, h * b + i, w * b + j] = data[n, depth(c, i, j), h, w]``."""
    n_, d_, h_, w_ = data.shape
    c_ = d_ // (b * b)
    out = np.empty((n_, c_, h_ * b, w_ * b), dtype=data.dtype)
    for n, c, y, x in np.ndindex(*out.shape):
        out[n, c, y, x] = data[n, _depth(c, y % b, x % b, c_, b, order), y // b, x // b]
    return out


def reverse_subsequences(data: np.ndarray, lengths: np.ndarray, axis: int) -> np.ndarray:
    """DML_REVERSE_SUBSEQUENCES: the first ``L`` elements of each sequence reversed, ``L`` clamped to the axis."""
    out = np.empty_like(data)
    size = data.shape[axis]
    for c in np.ndindex(*data.shape):
        length = min(max(int(lengths[c[:axis] + (0,) + c[axis + 1 :]]), 0), size)
        j = c[axis]
        source = length - 1 - j if j < length else j
        out[c] = data[c[:axis] + (source,) + c[axis + 1 :]]
    return out


def fill_value_sequence(shape, dtype, start, delta) -> np.ndarray:
    """DML_FILL_VALUE_SEQUENCE, the page's loop: ``out[c] = value; value += delta`` in the output's type."""
    dtype = np.dtype(dtype)
    out = np.empty(int(np.prod(shape)), dtype=dtype)
    if dtype.kind in "iu":  # Python ints, reduced modulo 2^bits into the type
        bits = dtype.itemsize * 8
        value = start
        for i in range(out.size):
            wrapped = value % 2**bits
            out[i] = wrapped - 2**bits if dtype.kind == "i" and wrapped >= 2 ** (bits - 1) else wrapped
            value += delta
    else:
        value, step = dtype.type(start), dtype.type(delta)
        for i in range(out.size):
            out[i] = value
            value = dtype.type(value + step)
    return out.reshape(tuple(shape))


def slice_grad(gradient: np.ndarray, shape, offsets, sizes, strides) -> np.ndarray:
    """DML_SLICE_GRAD: zeros of ``shape``, ``out[b + strides * c] = gradient[c]`` (Slice1's window)."""
    begin = [o + s - 1 if t < 0 else o for o, s, t in zip(offsets, sizes, strides, strict=True)]
    out = np.zeros(tuple(shape), dtype=gradient.dtype)
    for c in np.ndindex(*gradient.shape):
        out[tuple(b + t * ci for b, t, ci in zip(begin, strides, c, strict=True))] = gradient[c]
    return out


def _resample_taps(o: int, size: int, scale, offset_in, offset_out, mode: str, rounding, antialias=False) -> list:
    """One axis of Resample: ``[(input index, float32 weight or None), ...]`` for output position ``o``."""
    f32 = np.float32
    c = (f32(o) - f32(offset_out)) / f32(scale) - f32(offset_in)
    if antialias and mode == "linear" and scale < 1:  # ONNX's reference: a triangle 1/scale wide, edges repeated
        start = int(np.floor(f32(-1) / f32(scale))) + 1
        left = np.floor(c) - 1 if np.floor(c) == c else np.floor(c)
        ratio = f32(c - left)
        raw = [np.clip(f32(1) - abs(f32(f32(k - ratio) * f32(scale))), f32(0), f32(1)) for k in range(start, 2 - start)]
        total = f32(0)
        for w in raw:
            total = f32(total + w)
        return [
            (min(max(int(left) + k, 0), size - 1), f32(w / total))
            for k, w in zip(range(start, 2 - start), raw, strict=True)
        ]
    if mode == "nearest":
        r = {None: np.floor(c + f32(0.5)), "decreasing": np.floor(c), "increasing": np.ceil(c)}[rounding]
        return [(int(min(max(float(r), 0), size - 1)), None)]
    c = min(max(c, f32(0)), f32(size - 1))
    low = int(np.floor(c))
    frac = f32(c - f32(low))
    return [(low, f32(1) - frac), (min(low + 1, size - 1), frac)]


def resample_output_shape(shape, scales) -> tuple:
    return tuple(int(np.floor(np.float32(n) * np.float32(s))) for n, s in zip(shape, scales, strict=True))


def _resample_corners(out_index, shape, scales, offsets_in, offsets_out, mode, rounding, antialias=False):
    """Every (input index tuple, float32 weight) an output element reads, corners in row-major order."""
    per_axis = [
        _resample_taps(o, n, s, a, b, mode, rounding, antialias)
        for o, n, s, a, b in zip(out_index, shape, scales, offsets_in, offsets_out, strict=True)
    ]
    for corner in itertools.product(*per_axis):
        weight = None
        for _, w in corner:
            if w is not None:
                weight = w if weight is None else np.float32(weight * w)
        yield tuple(i for i, _ in corner), weight


def resample(
    x: np.ndarray, scales, mode="nearest", offsets_in=0.5, offsets_out=-0.5, rounding=None, antialias=False
) -> np.ndarray:
    """DML_RESAMPLE1/2: each output element's corners summed in row-major order, float32."""
    rank = x.ndim
    offsets_in = (offsets_in,) * rank if np.isscalar(offsets_in) else tuple(offsets_in)
    offsets_out = (offsets_out,) * rank if np.isscalar(offsets_out) else tuple(offsets_out)
    out = np.zeros(resample_output_shape(x.shape, scales), x.dtype)
    for o in np.ndindex(*out.shape):
        total = None
        for index, weight in _resample_corners(o, x.shape, scales, offsets_in, offsets_out, mode, rounding, antialias):
            value = x[index] if weight is None else np.float32(weight * np.float32(x[index]))
            total = value if total is None else np.float32(total + value)
        out[o] = total
    return out


def resample_grad(
    g: np.ndarray, shape, scales, mode="nearest", offsets_in=0.5, offsets_out=-0.5, rounding=None, antialias=False
):
    """DML_RESAMPLE_GRAD: weight * g[o] added into a zero input, outputs row-major, corners in order."""
    rank = len(shape)
    offsets_in = (offsets_in,) * rank if np.isscalar(offsets_in) else tuple(offsets_in)
    offsets_out = (offsets_out,) * rank if np.isscalar(offsets_out) else tuple(offsets_out)
    out = np.zeros(shape, np.float32)
    for o in np.ndindex(*g.shape):
        for index, weight in _resample_corners(o, shape, scales, offsets_in, offsets_out, mode, rounding, antialias):
            update = np.float32(g[o]) if weight is None else np.float32(weight * np.float32(g[o]))
            out[index] = np.float32(out[index] + update)
    return out.astype(g.dtype)


# --------------------------------------------------------------------------------------
# XLA's scatter, one update element after the other: https://openxla.org/xla/operation_semantics#scatter
# --------------------------------------------------------------------------------------


def xla_scatter_in_order(operand, indices, updates, dnums, mode: str, combine=np.add) -> np.ndarray:
    """``operand`` with every element ``U`` of ``updates`` combined into the operand element
    XLA's scatter semantics assign it (index vector last in ``indices``), one after the other:
    scatter index after scatter index (row-major), each window in row-major order.

    ``dnums``: an object with ``update_window_dims``, ``inserted_window_dims``,
    ``scatter_dims_to_operand_dims``, ``operand_batching_dims``, ``scatter_indices_batching_dims``.
    ``mode``: ``"clip"`` (each start clamped so the window fits) or ``"drop"`` (a window that
    does not fit is skipped). ``combine``: the binary ufunc, applied in the operand's type.
    """
    out = np.array(operand, copy=True)
    rank = out.ndim
    skipped = set(dnums.inserted_window_dims) | set(dnums.operand_batching_dims)
    window_dims = [d for d in range(rank) if d not in skipped]
    update_scatter_dims = [d for d in range(updates.ndim) if d not in dnums.update_window_dims]
    size = [1] * rank
    for d, u in zip(window_dims, dnums.update_window_dims, strict=True):
        size[d] = updates.shape[u]
    scatter_shape = [updates.shape[d] for d in update_scatter_dims]
    window_shape = [updates.shape[d] for d in dnums.update_window_dims]
    for g, w in ((g, w) for g in np.ndindex(*scatter_shape) for w in np.ndindex(*window_shape)):
        u_index = [0] * updates.ndim
        for d, i in zip(update_scatter_dims, g, strict=True):
            u_index[d] = i
        for d, i in zip(dnums.update_window_dims, w, strict=True):
            u_index[d] = i
        u_index = tuple(u_index)
        start = [0] * rank
        fits = True
        for k, d in enumerate(dnums.scatter_dims_to_operand_dims):
            s = int(indices[(*g, k)])
            high = out.shape[d] - size[d]
            if mode == "clip":
                s = min(max(s, 0), high)
            elif not 0 <= s <= high:
                fits = False
            start[d] = s
        for d, b in zip(dnums.operand_batching_dims, dnums.scatter_indices_batching_dims, strict=True):
            start[d] = g[b]
        if not fits:
            continue
        target = list(start)
        for d, u in zip(window_dims, dnums.update_window_dims, strict=True):
            target[d] += u_index[u]
        out[tuple(target)] = combine(out[tuple(target)], updates[u_index])
    return out
