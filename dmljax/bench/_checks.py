"""Checks that `python -m dmljax` runs first: each operator on small fixed inputs against NumPy.

The references here are NumPy's own functions (``np.lib.stride_tricks.as_strided``,
``np.take``, ``np.take_along_axis``, ``np.put_along_axis``, advanced indexing, the
sequential ``np.add.at`` and its siblings, basic slicing; `dmljax.bench._checks_movement`
for the data-movement and selection operators), independent
of dmljax's code; the test suite goes further with loop-based oracles.
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

import dmljax
from dmljax.bench import _checks_movement as movement
from dmljax.bench import _checks_vision as vision

__all__ = ["CHECKS"]


def _as_strided(buffer: np.ndarray, desc: dmljax.TensorDesc) -> np.ndarray:
    strides = tuple(s * buffer.itemsize for s in desc.strides)
    return np.lib.stride_tricks.as_strided(buffer, desc.sizes, strides).copy()


def check_read_tensor() -> str:
    """Every layout of DirectML's strides page read through dmljax equals NumPy's strided view.

    https://learn.microsoft.com/en-us/windows/ai/directml/dml-strides
    """
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


def check_gather() -> str:
    """ONNX Gather along each axis, negative indices included, equals ``np.take``."""
    rng = np.random.default_rng(2)
    data = rng.standard_normal((5, 6, 7)).astype(np.float32)
    for axis in range(3):
        size = data.shape[axis]
        indices = rng.integers(-size, size, (3, 4))
        expected = np.take(data, np.where(indices < 0, indices + size, indices), axis=axis)
        if not np.array_equal(np.asarray(dmljax.gather(data, indices, axis=axis)), expected):
            raise AssertionError(f"gather axis={axis} differs from np.take")
    return "axes 0-2, negative indices: equals np.take"


def check_gather_elements() -> str:
    """GatherElements along each axis equals ``np.take_along_axis``."""
    rng = np.random.default_rng(3)
    data = rng.standard_normal((4, 5, 6)).astype(np.float32)
    for axis in range(3):
        indices = rng.integers(0, data.shape[axis], data.shape)
        expected = np.take_along_axis(data, indices, axis=axis)
        if not np.array_equal(np.asarray(dmljax.gather_elements(data, indices, axis=axis)), expected):
            raise AssertionError(f"gather_elements axis={axis} differs from np.take_along_axis")
    return "axes 0-2: equals np.take_along_axis"


def check_scatter() -> str:
    """Scatter with unique indices along each axis equals ``np.put_along_axis``; DML_SCATTER's example 1."""
    rng = np.random.default_rng(4)
    data = rng.standard_normal((4, 5, 6)).astype(np.float32)
    for axis in range(3):
        indices = np.argsort(rng.random(data.shape), axis=axis)  # a permutation: unique per line
        updates = rng.standard_normal(data.shape).astype(np.float32)
        expected = data.copy()
        np.put_along_axis(expected, indices, updates, axis=axis)
        if not np.array_equal(np.asarray(dmljax.scatter(data, indices, updates, axis=axis)), expected):
            raise AssertionError(f"scatter axis={axis} differs from np.put_along_axis")
    seed = dmljax.scatter(
        np.arange(5.0, dtype=np.float32), np.array([3, 1, 3, 0]), np.array([5.0, 6, 7, 8], np.float32)
    )
    if np.asarray(seed)[[0, 1, 2, 4]].tolist() != [8, 6, 2, 4]:
        raise AssertionError(f"DML_SCATTER example 1 gave {seed}")
    return "axes 0-2: equals np.put_along_axis; DML_SCATTER example"


def check_gather_nd() -> str:
    """GatherND with 1- to 3-tuples, negative indices included, equals ``data[tuple(indices.T)]``; batch_dims=1."""
    rng = np.random.default_rng(6)
    data = rng.standard_normal((4, 5, 6)).astype(np.float32)
    for k in (1, 2, 3):
        indices = np.stack([rng.integers(-s, s, (3, 2)) for s in data.shape[:k]], axis=-1)
        expected = data[tuple(np.moveaxis(indices, -1, 0))]
        if not np.array_equal(np.asarray(dmljax.gather_nd(data, indices)), expected):
            raise AssertionError(f"gather_nd with {k}-tuples differs from NumPy indexing")
    rows = rng.integers(0, 5, (4, 3, 1))
    expected = np.stack([data[b][rows[b, :, 0]] for b in range(4)])
    if not np.array_equal(np.asarray(dmljax.gather_nd(data, rows, batch_dims=1)), expected):
        raise AssertionError("gather_nd batch_dims=1 differs from NumPy indexing per batch")
    return "1- to 3-tuples, negative: equals NumPy indexing; batch_dims=1"


def check_scatter_nd() -> str:
    """ScatterND with unique tuples equals NumPy's assignment; ``reduction="add"`` equals ``np.add.at`` bit for bit."""
    rng = np.random.default_rng(7)
    data = rng.standard_normal((6, 5, 4)).astype(np.float32)
    flat = rng.permutation(30)[:12]
    indices = np.stack(np.unravel_index(flat, (6, 5)), axis=-1) - np.array([6, 0])  # first index negative
    updates = rng.standard_normal((12, 4)).astype(np.float32)
    expected = data.copy()
    expected[tuple(indices.T)] = updates
    if not np.array_equal(np.asarray(dmljax.scatter_nd(data, indices, updates)), expected):
        raise AssertionError("scatter_nd differs from NumPy's assignment")
    duplicates = rng.integers(0, 3, (200, 2))  # 200 updates of 6 rows' elements: order-sensitive float sums
    values = (rng.standard_normal((200, 4)) * 10.0 ** rng.integers(-4, 8, (200, 1))).astype(np.float32)
    expected = data.copy()
    np.add.at(expected, tuple(duplicates.T), values)  # unbuffered: one update after the other, in order
    got = np.asarray(dmljax.scatter_nd(data, duplicates, values, reduction="add"))
    if not np.array_equal(got, expected):
        raise AssertionError("scatter_nd reduction='add' differs from np.add.at (the sequential loop)")
    return "unique tuples equal NumPy; add with duplicates equals np.add.at bit for bit"


def check_slice1() -> str:
    """DML_SLICE1_OPERATOR_DESC's two examples, and random windows with negative strides against slicing."""
    x = np.arange(1, 17, dtype=np.float32).reshape(1, 1, 4, 4)
    first = dmljax.slice(x, (0, 0, 0, 1), (1, 1, 4, 3), (1, 1, 2, 2))
    second = dmljax.slice(x, (0, 0, 0, 1), (1, 1, 4, 3), (1, 1, -2, 2))
    if np.asarray(first).ravel().tolist() != [2, 4, 10, 12] or np.asarray(second).ravel().tolist() != [14, 16, 6, 8]:
        raise AssertionError(f"DML_SLICE1 examples gave {first.ravel()} and {second.ravel()}")
    data = np.arange(9 * 10, dtype=np.float32).reshape(9, 10)
    got = dmljax.slice(data, (1, 2), (7, 8), (-3, 2))
    if not np.array_equal(np.asarray(got), data[7:0:-3, 2:10:2]):
        raise AssertionError("slice with a negative stride differs from NumPy slicing")
    return "DML_SLICE1 examples; negative strides equal NumPy slicing"


def check_cumulative() -> str:
    """cumulative_sum/product equal NumPy's sequential cumsum/cumprod bit for bit (jnp's need not); top_k's NaN."""
    row = (np.random.default_rng(0).standard_normal((4, 257)) * 100).astype(np.float32)
    if not np.array_equal(np.asarray(dmljax.cumulative_sum(row, 1)), np.cumsum(row, axis=1)):
        raise AssertionError("cumulative_sum differs from NumPy's sequential cumsum")
    factors = (1 + row / 1e4).astype(np.float32)
    if not np.array_equal(np.asarray(dmljax.cumulative_prod(factors, 1)), np.cumprod(factors, axis=1)):
        raise AssertionError("cumulative_prod differs from NumPy's sequential cumprod")
    values, indices = dmljax.top_k(np.array([1.0, np.nan, 3.0, 3.0, -0.0, 0.0], np.float32), 6)
    if np.asarray(indices).tolist() != [1, 2, 3, 0, 4, 5]:
        raise AssertionError(f"top_k order {np.asarray(indices).tolist()}, expected NaN first, ties by index")
    return "cumsum, cumprod = NumPy's (sequential) bit for bit; top_k ties, NaN first"


def check_segment() -> str:
    """segment_sum/prod/max/min/mean equal ``np.add.at`` & co. bit for bit; an id outside the segments is dropped."""
    rng = np.random.default_rng(15)
    data = (rng.standard_normal((40, 3)) * 10.0 ** rng.integers(-4, 6, (40, 1))).astype(np.float32)
    ids = rng.integers(-1, 6, 40).astype(np.int32)  # -1: dropped (JAX's segment convention)
    kept, rows = ids[ids >= 0], data[ids >= 0]
    near_one = (1 + data / 1e6).astype(np.float32)
    for name, ufunc, identity, values in (
        ("segment_sum", np.add, 0.0, data),
        ("segment_prod", np.multiply, 1.0, near_one),
        ("segment_max", np.maximum, -np.inf, data),
        ("segment_min", np.minimum, np.inf, data),
    ):
        expected = np.full((6, 3), identity, np.float32)
        ufunc.at(expected, kept, values[ids >= 0])  # unbuffered: in index order
        if not np.array_equal(np.asarray(getattr(dmljax, name)(values, ids, 6)), expected):
            raise AssertionError(f"{name} differs from np.{ufunc.__name__}.at")
    sums = np.zeros((6, 3), np.float32)
    np.add.at(sums, kept, rows)
    mean = sums / np.maximum(np.bincount(kept, minlength=6), 1).astype(np.float32)[:, None]
    if not np.array_equal(np.asarray(dmljax.segment_mean(data, ids, 6)), mean):
        raise AssertionError("segment_mean differs from np.add.at / counts")
    return "sum, prod, max, min = np.add.at & co. bit for bit; mean; id -1 dropped"


def check_deterministic() -> str:
    """deterministic: x.at[t].add and a gather's gradient equal ``np.add.at``, also with the sorted fold."""
    rng = np.random.default_rng(16)
    t = ((rng.zipf(1.5, 300) - 1) % 7).astype(np.int32)
    u = (rng.standard_normal(300) * 10.0 ** rng.integers(-4, 8, 300)).astype(np.float32)
    expected = np.zeros(7, np.float32)
    np.add.at(expected, t, u)
    at_add = jax.jit(dmljax.deterministic(lambda x, u: x.at[t].add(u)))
    grad = jax.jit(jax.grad(dmljax.deterministic(lambda x: jnp.vdot(x[t], u))))
    for options in ({}, {"cpu_ordered_scatter": False}):
        with dmljax.config.override(**options):
            if not np.array_equal(np.asarray(at_add(np.zeros(7, np.float32), u)), expected):
                raise AssertionError(f"deterministic x.at[t].add differs from np.add.at ({options})")
            if not np.array_equal(np.asarray(grad(np.zeros(7, np.float32))), expected):
                raise AssertionError(f"deterministic grad of x[t] differs from np.add.at ({options})")
    return "x.at[t].add, grad of x[t] = np.add.at bit for bit (in-order scatter, sorted fold)"


# Random123 kat_vectors: philox4x32_10 with counter 0 and key 0.
_KAT_ZERO = [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]


def check_random_generator() -> str:
    """Random123's known answer, the stream layout, chaining, and randomgen's C Philox when installed."""
    zero = np.asarray(dmljax.random.philox4x32_10(np.zeros(4, np.uint32), np.zeros(2, np.uint32)))
    if zero.tolist() != _KAT_ZERO:
        raise AssertionError(f"philox4x32_10(0, 0) = {[hex(w) for w in zero]}")
    state = dmljax.random.make_state(0x0123456789ABCDEF, counter=2**64 - 3)  # a carry into word 2 on the way
    bits, _ = dmljax.random.random_generator(state, (3, 5, 8))
    first, middle = dmljax.random.random_generator(state, (50,))
    rest, _ = dmljax.random.random_generator(middle, (70,))
    whole = np.asarray(bits).reshape(-1)
    if not (np.array_equal(whole[:50], first) and np.array_equal(whole[52:], rest[:68])):
        raise AssertionError("chained calls differ from one long call")
    try:
        import randomgen
    except ImportError:
        return "Random123 known answer; chaining equals one call (randomgen not installed: skipped)"
    key = int(np.asarray(state)[4]) | int(np.asarray(state)[5]) << 32
    generator = randomgen.Philox(counter=2**64 - 4, key=key, number=4, width=32)  # it increments first
    expected = generator.random_raw(whole.size).astype(np.uint32)
    if not np.array_equal(whole, expected):
        raise AssertionError("random_generator differs from randomgen's Philox4x32")
    return "Random123 known answer; chaining equals one call; equals randomgen's C Philox"


def check_distributions() -> str:
    """Uniform floats are TensorFlow's mantissa mapping of the bits; normal moments; dropout, bernoulli, randint."""
    state = dmljax.random.make_state(42)
    bits, _ = dmljax.random.random_generator(state, (100_000,))
    values, _ = dmljax.random.uniform(state, (100_000,))
    mantissa = (np.asarray(bits) & np.uint32(0x7FFFFF)) | np.uint32(0x3F800000)
    if not np.array_equal(np.asarray(values), mantissa.view(np.float32) - np.float32(1)):
        raise AssertionError("uniform float32 is not bitcast(0x3F800000 | bits & 0x7FFFFF) - 1")
    z, _ = dmljax.random.normal(state, (200_000,))
    mean, std = float(np.mean(z)), float(np.std(z))
    if abs(mean) > 0.01 or abs(std - 1) > 0.01:
        raise AssertionError(f"normal mean {mean:.4f}, std {std:.4f}")
    kept, _ = dmljax.random.dropout(state, np.ones(100_000, np.float32), 0.25)
    kept_np = np.asarray(kept)
    if not set(np.unique(kept_np).tolist()) <= {0.0, np.float32(1 / 0.75)} or abs((kept_np == 0).mean() - 0.25) > 0.01:
        raise AssertionError("dropout does not zero a quarter and scale the rest by 1/0.75")
    coins, _ = dmljax.random.bernoulli(state, 0.3, (100_000,))
    if not np.array_equal(np.asarray(coins), np.asarray(values) < np.float32(0.3)):
        raise AssertionError("bernoulli(p=0.3) is not uniform < 0.3 on the same state")
    ints, _ = dmljax.random.randint(state, (100_000,), -3, 7)
    if not np.array_equal(np.asarray(ints), (np.asarray(bits) % np.uint32(10)).astype(np.int32) - 3):
        raise AssertionError("randint(-3, 7) is not -3 + bits % 10 (TensorFlow's rule)")
    return (
        f"uniform = TF mapping of the bits; normal mean {mean:+.4f}, std {std:.4f}; dropout rate 0.25;"
        " bernoulli = uniform < p; randint = min + bits % range"
    )


def check_compile_operator() -> str:
    """GatherElements through descriptors: NHWC input, padded output, against NumPy."""
    rng = np.random.default_rng(5)
    sizes = (2, 3, 4, 5)
    nhwc = dmljax.TensorDesc("float32", sizes, dmljax.packed_strides(sizes, "NHWC"))
    indices = dmljax.TensorDesc("uint32", sizes)
    padded = dmljax.TensorDesc("float32", sizes, (3 * 4 * 8, 4 * 8, 8, 1), total_tensor_size_in_bytes=2 * 96 * 4)
    op = dmljax.descriptors.compile_operator(
        dmljax.descriptors.GatherElementsOperatorDesc(nhwc, indices, padded, axis=1), "3.0"
    )
    data = rng.standard_normal(sizes).astype(np.float32)
    index = rng.integers(0, 3, sizes).astype(np.uint32)
    out = np.asarray(op(data.transpose(0, 2, 3, 1).reshape(-1), index.reshape(-1)))
    expected = np.zeros((2, 3, 4, 8), np.float32)
    expected[..., :5] = np.take_along_axis(data, index.astype(np.int64), axis=1)
    if not np.array_equal(out, expected.reshape(-1)):
        raise AssertionError("compile_operator(GatherElementsOperatorDesc) differs from NumPy")
    try:
        dmljax.descriptors.compile_operator(
            dmljax.descriptors.GatherElementsOperatorDesc(nhwc, indices, padded, axis=1), "2.0"
        )
    except dmljax.ValidationError:
        return "GatherElements, NHWC in, padded out, equals NumPy; refused at feature level 2.0"
    raise AssertionError("GatherElements was accepted at feature level 2.0")


CHECKS: list[tuple[str, Callable[[], str]]] = [
    ("read_tensor", check_read_tensor),
    ("write_tensor", check_write_tensor),
    ("gather", check_gather),
    ("gather_elements", check_gather_elements),
    ("scatter", check_scatter),
    ("gather_nd", check_gather_nd),
    ("scatter_nd", check_scatter_nd),
    ("slice", check_slice1),
    ("cumulative", check_cumulative),
    ("segment", check_segment),
    ("deterministic", check_deterministic),
    ("depth_space", movement.check_depth_space),
    ("tile, pad", movement.check_tile_pad),
    ("concatenate, split_tensor", movement.check_join_split),
    ("reverse_subseq", movement.check_reverse_subsequences),
    ("fill_value_seq", movement.check_fill_value_sequence),
    ("slice_grad", movement.check_slice_grad),
    ("top_k, arg_reduce", movement.check_top_k_arg_reduce),
    ("one_hot, nonzero", movement.check_one_hot_nonzero),
    ("resample", vision.check_resample),
    ("random_generator", check_random_generator),
    ("distributions", check_distributions),
    ("compile_operator", check_compile_operator),
]
