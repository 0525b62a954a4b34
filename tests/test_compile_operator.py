"""compile_operator execution: seed examples through descriptors, strided buffers, jit, vmap, grad."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

import dmljax
from dmljax import (
    TensorDesc,
    ValidationError,
    gather_elements,
    gather_nd,
    packed_strides,
    read_tensor,
    scatter,
    scatter_nd,
)
from dmljax.descriptors import (
    ArgMaxOperatorDesc,
    FeatureLevel,
    GatherElementsOperatorDesc,
    GatherNDOperatorDesc,
    GatherOperatorDesc,
    RandomGeneratorOperatorDesc,
    ScatterNDOperatorDesc,
    ScatterOperatorDesc,
    Slice1OperatorDesc,
    compile_operator,
)
from dmljax.random import random_generator
from tests import reference


def to_buffer(desc: TensorDesc, value) -> np.ndarray:
    """``total_tensor_size_in_bytes // itemsize`` elements: ``value`` at ``desc``'s offsets, garbage elsewhere."""
    value = np.asarray(value, desc.dtype.dtype)
    garbage = np.full(desc.buffer_elements, 77, desc.dtype.dtype)
    return reference.write_tensor(garbage, desc.sizes, desc.strides, value)


def covered(desc: TensorDesc) -> np.ndarray:
    """Which buffer elements the descriptor covers."""
    mask = np.zeros(desc.buffer_elements, bool)
    for c in np.ndindex(*desc.sizes):
        mask[reference.offset(c, desc.strides)] = True
    return mask


def check_output(desc: TensorDesc, buffer, expected) -> None:
    """The buffer's length and type, ``expected`` at the descriptor's offsets, zero everywhere else."""
    buffer = np.asarray(buffer)
    assert buffer.shape == (desc.buffer_elements,) and buffer.dtype == desc.dtype.dtype
    np.testing.assert_array_equal(reference.read_tensor(buffer, desc.sizes, desc.strides), expected)
    assert not buffer[~covered(desc)].any()


# --- the operator pages' examples through descriptors--------------------------------------------------


def test_scatter_page_1d():
    data, index = TensorDesc("float32", (5,)), TensorDesc("uint32", (4,))
    op = compile_operator(ScatterOperatorDesc(data, index, TensorDesc("float32", (4,)), data, axis=0), "3.0")
    out = op(np.arange(5, dtype=np.float32), np.array([3, 1, 3, 0], np.uint32), np.array([5, 6, 7, 8], np.float32))
    # Indices 3 appears twice: DirectML leaves the winner unspecified (the page's example shows 7).
    assert np.asarray(out)[[0, 1, 2, 4]].tolist() == [8, 6, 2, 4] and out[3] in (5, 7)


def test_scatter_page_2d_input_is_3x3():
    data, index = TensorDesc("float32", (3, 3)), TensorDesc("uint32", (2, 3))
    op = compile_operator(ScatterOperatorDesc(data, index, TensorDesc("float32", (2, 3)), data, axis=0), "3.0")
    indices = np.array([1, 0, 2, 0, 2, 1], np.uint32)
    out = op(np.zeros(9, np.float32), indices, np.array([10, 11, 12, 20, 21, 22], np.float32))
    np.testing.assert_array_equal(out.reshape(3, 3), [[20, 11, 0], [10, 0, 22], [0, 21, 12]])


def test_scatter_page_at_feature_level_1_0_in_four_dimensions():
    data, index = TensorDesc("float16", (1, 1, 3, 3)), TensorDesc("uint32", (1, 1, 2, 3))
    desc = ScatterOperatorDesc(data, index, TensorDesc("float16", (1, 1, 2, 3)), data, axis=2)
    op = compile_operator(desc, FeatureLevel.FL_1_0)
    out = op(np.zeros(10, np.float16), np.array([1, 0, 2, 0, 2, 1], np.uint32), np.arange(6, dtype=np.float16))
    # 9 float16 elements are 18 bytes, rounded up to 20: the output buffer has 10 elements, the last zero.
    check_output(data, out, [[[[3, 1, 0], [0, 0, 5], [0, 4, 2]]]])


@pytest.mark.parametrize(
    ("strides", "expected"), [((1, 1, 2, 2), [[2, 4], [10, 12]]), ((1, 1, -2, 2), [[14, 16], [6, 8]])]
)
def test_slice1_page_examples(strides, expected):
    source, output = TensorDesc("float32", (1, 1, 4, 4)), TensorDesc("float32", (1, 1, 2, 2))
    desc = Slice1OperatorDesc(source, output, (0, 0, 0, 1), (1, 1, 4, 3), strides)
    out = compile_operator(desc, "2.1")(np.arange(1, 17, dtype=np.float32))
    np.testing.assert_array_equal(out.reshape(2, 2), expected)


ONNX_GATHER_DATA = [[1.0, 1.2, 1.9], [2.3, 3.4, 3.9], [4.5, 5.7, 5.9]]
GATHER_CASES = {
    # ONNX Gather's examples as DML_GATHER: ranks padded with leading 1s, index_dimensions = q.
    "onnx-gather-axis0": ((1, 3, 2), (1, 2, 2), 1, 2, (2, 2, 2), np.array(ONNX_GATHER_DATA)[:, :2], [[0, 1], [1, 2]]),
    "onnx-gather-axis1": ((1, 3, 3), (1, 1, 2), 2, 2, (3, 1, 2), ONNX_GATHER_DATA, [[0, 2]]),
    # DML_GATHER_OPERATOR_DESC's own examples 1, 2 and 4.
    "dml-example-1": ((4,), (5,), 0, 1, (5,), [11, 12, 13, 14], [3, 1, 3, 0, 2]),
    "dml-example-2": ((3, 2), (1, 4), 0, 1, (4, 2), [[1, 2], [3, 4], [5, 6]], [[0, 1, 1, 2]]),
    "dml-example-4": ((1, 3, 3), (1, 1, 2), 2, 2, (3, 1, 2), [[1, 2, 3], [4, 5, 6], [7, 8, 9]], [[0, 2]]),
    "scalar-index": ((1, 3, 2), (1, 1, 1), 1, 0, (1, 1, 2), [[1, 2], [3, 4], [5, 6]], [[2]]),
    "negative-index": ((3, 2), (1, 2), 0, 1, (2, 2), [[1, 2], [3, 4], [5, 6]], [[-1, -3]]),
}


@pytest.mark.parametrize("case", GATHER_CASES.values(), ids=GATHER_CASES.keys())
def test_dml_gather_examples(case):
    input_sizes, indices_sizes, axis, index_dimensions, output_sizes, data, indices = case
    data, indices = np.asarray(data, np.float32), np.asarray(indices, np.int32)
    tensors = (
        TensorDesc("float32", input_sizes),
        TensorDesc("int32", indices_sizes),
        TensorDesc("float32", output_sizes),
    )
    out = compile_operator(GatherOperatorDesc(*tensors, axis, index_dimensions))(data.ravel(), indices.ravel())
    kept = indices_sizes[len(indices_sizes) - index_dimensions :] if index_dimensions else ()
    expected = reference.gather(data.reshape(input_sizes), indices.reshape(kept), axis)
    np.testing.assert_array_equal(out.reshape(output_sizes), expected.reshape(output_sizes))


def test_gather_elements_example():
    data, index = TensorDesc("uint32", (3, 3)), TensorDesc("uint32", (2, 3))
    op = compile_operator(GatherElementsOperatorDesc(data, index, index, axis=0), "3.0")
    out = op(np.arange(1, 10, dtype=np.uint32), np.array([1, 2, 0, 2, 0, 0], np.uint32))
    np.testing.assert_array_equal(out.reshape(2, 3), [[4, 8, 3], [7, 2, 3]])


# --- the random generator and its state -------------------------------------------------

RANDOM_STATE = TensorDesc("uint32", (1, 1, 1, 6))


def test_random_generator_known_answer_and_single_output():
    op = compile_operator(RandomGeneratorOperatorDesc(RANDOM_STATE, TensorDesc("uint32", (1, 1, 1, 4))), "3.0")
    out = op(np.zeros(6, np.uint32))
    assert [hex(int(w)) for w in out] == ["0x6627e8d5", "0xe169c58d", "0xbc57ac4c", "0x9b00dbd8"]


def test_random_generator_page_state_advance():
    """The random generator page's example: +324,855 blocks.

    Counter 0x48656c6c'6f46726f'6d536561'74746c65, output sizes {3,3,20,7219}.
    """
    desc = RandomGeneratorOperatorDesc(RANDOM_STATE, TensorDesc("uint32", (3, 3, 20, 7219)), RANDOM_STATE)
    state = np.array([0x74746C65, 0x6D536561, 0x6F46726F, 0x48656C6C, 0xDEADBEEF, 0x12345678], np.uint32)
    out, next_state = compile_operator(desc, "3.0")(state)
    assert out.shape == (3 * 3 * 20 * 7219,)
    # The rule, not the page's misprint: ...'74746c65 + 324,855 = ...'7479615c.
    assert [hex(int(w)) for w in next_state] == [
        "0x7479615c",
        "0x6d536561",
        "0x6f46726f",
        "0x48656c6c",
        *map(hex, state[4:]),
    ]
    bits, _ = random_generator(state.reshape(1, 1, 1, 6), (3, 3, 20, 7219))
    np.testing.assert_array_equal(out, np.asarray(bits).ravel())


def test_random_generator_padded_outputs_and_chaining():
    state_desc = TensorDesc("uint32", (6,), strides=(2,))  # every other word
    output = TensorDesc("uint32", (2, 3), strides=(4, 1), total_tensor_size_in_bytes=64)
    op = compile_operator(RandomGeneratorOperatorDesc(state_desc, output, state_desc), "4.0")
    state = to_buffer(state_desc, [5, 0, 0, 0, 7, 9])
    first, next_state = op(state)
    second, _ = op(next_state)
    stream, _ = random_generator(np.array([5, 0, 0, 0, 7, 9], np.uint32), (16,))  # blocks 5 to 8
    check_output(output, first, np.asarray(stream)[:6].reshape(2, 3))  # 6 words use blocks 5 and 6
    check_output(output, second, np.asarray(stream)[8:14].reshape(2, 3))
    check_output(state_desc, next_state, [7, 0, 0, 0, 7, 9])


# --- strided buffers: NHWC, padded and broadcast inputs; padded outputs ------------------------


def unique_positions(rng, axis_size, sizes, axis):
    """Indices along ``axis`` without duplicates per line (scatter's result is then defined)."""
    lines = np.moveaxis(np.zeros(sizes, np.int64), axis, -1)
    for pos in np.ndindex(*lines.shape[:-1]):
        lines[pos] = rng.permutation(axis_size)[: lines.shape[-1]]
    return np.moveaxis(lines, -1, axis)


def test_scatter_nhwc_buffers():
    rng = np.random.default_rng(0)
    sizes, index_sizes = (2, 3, 2, 4), (2, 2, 2, 4)  # logical NCHW, scatter along C
    data = TensorDesc("float32", sizes, packed_strides(sizes, "NHWC"))
    index = TensorDesc("int32", index_sizes, packed_strides(index_sizes, "NHWC"))
    updates = TensorDesc("float32", index_sizes, packed_strides(index_sizes, "NHWC"))
    x, u = rng.normal(size=sizes), rng.normal(size=index_sizes)
    i = unique_positions(rng, 3, index_sizes, 1)
    out = compile_operator(ScatterOperatorDesc(data, index, updates, data, axis=1))(
        to_buffer(data, x), to_buffer(index, i), to_buffer(updates, u)
    )
    check_output(data, out, reference.scatter(x.astype(np.float32), i, u.astype(np.float32), 1))


def test_gather_elements_padded_and_broadcast_inputs_padded_output():
    rng = np.random.default_rng(1)
    data = TensorDesc("float32", (3, 4), strides=(6, 1), total_tensor_size_in_bytes=80)  # padded rows
    index = TensorDesc("uint32", (5, 4), strides=(0, 1))  # one row of indices, broadcast
    output = TensorDesc("float32", (5, 4), strides=(1, 7), total_tensor_size_in_bytes=128)  # padded columns
    x, row = rng.normal(size=(3, 4)).astype(np.float32), np.array([2, 0, 1, 2], np.uint32)
    op = compile_operator(GatherElementsOperatorDesc(data, index, output, axis=0), "3.0")
    out = op(to_buffer(data, x), row)
    expected = reference.gather_elements(x, np.broadcast_to(row, (5, 4)), 0)
    check_output(output, out, expected)
    through_api = gather_elements(read_tensor(to_buffer(data, x), data), read_tensor(row, index), 0)
    np.testing.assert_array_equal(read_tensor(out, output), through_api)


def test_slice1_broadcast_input_padded_output():
    source = TensorDesc("int8", (1, 1, 4, 4), strides=(0, 0, 0, 1))  # four values, every row the same
    output = TensorDesc("int8", (1, 1, 2, 2), strides=(4, 4, 3, 1), total_tensor_size_in_bytes=12)
    desc = Slice1OperatorDesc(source, output, (0, 0, 0, 1), (1, 1, 4, 3), (1, 1, -2, 2))
    out = compile_operator(desc, "2.1")(np.array([10, 20, 30, 40], np.int8))
    check_output(output, out, [[[[20, 40], [20, 40]]]])


def random_layout(rng, dtype, sizes):
    """A permuted (NHWC-like), padded layout of ``sizes`` with some spare bytes at the end."""
    strides, step = [0] * len(sizes), 1
    for d in rng.permutation(len(sizes)):
        strides[d] = step
        step *= sizes[d] + int(rng.integers(0, 2))
    desc = TensorDesc(dtype, sizes, strides)
    return TensorDesc(dtype, sizes, strides, desc.total_tensor_size_in_bytes + 4 * int(rng.integers(0, 3)))


@pytest.mark.parametrize("seed", range(4))
def test_random_layouts_match_the_array_api(seed):
    rng = np.random.default_rng(seed)
    dtype = ["float32", "int16", "uint8", "float16"][seed]
    n = int(rng.integers(1, 5))
    sizes = tuple(int(s) for s in rng.integers(1, 4, size=n))
    axis = int(rng.integers(0, n))
    index_sizes = sizes[:axis] + (int(rng.integers(1, sizes[axis] + 1)),) + sizes[axis + 1 :]
    data, index = random_layout(rng, dtype, sizes), random_layout(rng, "int32", index_sizes)
    updates, output = random_layout(rng, dtype, index_sizes), random_layout(rng, dtype, sizes)
    x = rng.integers(0, 100, size=sizes).astype(dtype)
    u = rng.integers(0, 100, size=index_sizes).astype(dtype)
    i = unique_positions(rng, sizes[axis], index_sizes, axis) - sizes[axis] * rng.integers(0, 2, size=index_sizes)
    buffers = (to_buffer(data, x), to_buffer(index, i), to_buffer(updates, u.reshape(updates.sizes)))
    out = compile_operator(ScatterOperatorDesc(data, index, updates, output, axis), "3.0")(*buffers)
    check_output(output, out, reference.scatter(x, i, u, axis))
    logical = [read_tensor(b, d) for b, d in zip(buffers, (data, index, updates), strict=True)]
    np.testing.assert_array_equal(read_tensor(out, output), scatter(*logical, axis))


# --- GatherND1 and ScatterND: the pages' examples, strided buffers, the array API -----------------


def test_gather_nd1_page_examples():
    data, index = TensorDesc("float32", (2, 2)), TensorDesc("uint32", (2, 1))
    out = compile_operator(GatherNDOperatorDesc(data, index, data, 2, 2, 0), "3.0")(
        np.arange(4, dtype=np.float32), np.array([1, 0], np.uint32)
    )
    np.testing.assert_array_equal(out, [2, 3, 0, 1])  # example 1: output[y, x] = input[indices[y], x]
    data, output = TensorDesc("float32", (1, 3, 2, 2)), TensorDesc("float32", (1, 1, 3, 2))
    desc = GatherNDOperatorDesc(data, TensorDesc("uint32", (1, 3, 2, 2)), output, 3, 3, 1)  # example 2: 3 batches
    indices = np.array([0, 0, 1, 1, 1, 1, 0, 0, 0, 1, 1, 0], np.uint32)
    out = compile_operator(desc, "3.0")(np.arange(12, dtype=np.float32), indices)
    np.testing.assert_array_equal(out, [0, 3, 7, 4, 9, 10])


def test_scatter_nd_page_example_at_feature_levels_2_1_and_3_0():
    x, u = np.arange(1, 9, dtype=np.float32), np.array([9, 10, 11, 12], np.float32)
    i = np.array([4, 3, 1, 7], np.uint32)
    for level, n in (("2.1", 4), ("3.0", 2)):  # the page's {8}, {4,1}, {4} in one dimension count
        data = TensorDesc("float32", (1,) * (n - 1) + (8,))
        index = TensorDesc("uint32", (1,) * (n - 2) + (4, 1))
        updates = TensorDesc("float32", (1,) * (n - 1) + (4,))
        out = compile_operator(ScatterNDOperatorDesc(data, index, updates, data, 1, 2), level)(x, i, u)
        np.testing.assert_array_equal(out, [1, 11, 3, 10, 9, 6, 7, 12])


def test_gather_nd_padded_and_broadcast_inputs_padded_output():
    rng = np.random.default_rng(2)
    data = TensorDesc("float32", (1, 3, 4, 2), strides=(24, 8, 2, 1), total_tensor_size_in_bytes=100)  # padded rows
    index = TensorDesc("int32", (1, 3, 5, 1), strides=(0, 0, 1, 1))  # one column of 5 tuples, broadcast over batches
    output = TensorDesc("float32", (1, 3, 5, 2), strides=(40, 1, 8, 4))  # padded, columns apart
    x = rng.normal(size=(1, 3, 4, 2)).astype(np.float32)
    rows = np.array([3, -1, 0, 2, -4], np.int32)
    out = compile_operator(GatherNDOperatorDesc(data, index, output, 3, 3, 1), "3.0")(to_buffer(data, x), rows)
    expected = reference.gather_nd(x[0], np.broadcast_to(rows.reshape(1, 5, 1), (3, 5, 1)), batch_dims=1)
    check_output(output, out, expected.reshape(1, 3, 5, 2))
    through_api = gather_nd(read_tensor(to_buffer(data, x), data)[0], read_tensor(rows, index)[0], 1)
    np.testing.assert_array_equal(read_tensor(out, output)[0], through_api)


def test_scatter_nd_nhwc_input_broadcast_updates_padded_output(x64):
    rng = np.random.default_rng(3)
    sizes = (2, 3, 4, 2)
    data = TensorDesc("float32", sizes, packed_strides(sizes, "NHWC"))
    index = TensorDesc("int64", (1, 1, 3, 2), strides=(0, 0, 1, 3))  # column-major tuples
    updates = TensorDesc("float32", (1, 3, 4, 2), strides=(0, 0, 2, 1))  # one (4, 2) slice for every tuple
    output = TensorDesc("float32", sizes, strides=(30, 10, 2, 1), total_tensor_size_in_bytes=260)
    x, u = rng.normal(size=sizes).astype(np.float32), rng.normal(size=(4, 2)).astype(np.float32)
    tuples = np.array([[1, 2], [0, -3], [-1, 1]])  # three distinct (n, c) pairs, two of them negative
    buffers = (to_buffer(data, x), to_buffer(index, tuples[None, None]), u.ravel())
    out = compile_operator(ScatterNDOperatorDesc(data, index, updates, output, 4, 2), "4.1")(*buffers)
    check_output(output, out, reference.scatter_nd(x, tuples, np.broadcast_to(u, (3, 4, 2))))
    logical = [read_tensor(b, d) for b, d in zip(buffers, (data, index, updates), strict=True)]
    np.testing.assert_array_equal(read_tensor(out, output), scatter_nd(logical[0], logical[1][0, 0], logical[2][0]))


@pytest.mark.parametrize("seed", [0, 1, 5, 7, 8, 10, 11])  # batches 0 to 2, tuples of 1 to 3, a scalar tuple
def test_nd_random_layouts_match_the_array_api(seed):
    rng = np.random.default_rng(10 + seed)
    dtype = ["float32", "int8", "uint16", "float16"][seed % 4]
    count, r = 4, int(rng.integers(2, 5))  # r meaningful input dimensions of 4
    shape = tuple(int(s) for s in rng.integers(2, 4, size=r))
    b = int(rng.integers(0, r - 1))
    k = int(rng.integers(1, r - b + 1))
    tuples = (2,) if count - 1 - b >= 1 + r - b - k else ()
    index_shape = shape[:b] + tuples + (k,)
    out_shape = index_shape[:-1] + shape[b + k :]
    full = (1,) * (count - r) + shape
    data = random_layout(rng, dtype, full)
    index = random_layout(rng, "int32", (1,) * (count - len(index_shape)) + index_shape)
    output = random_layout(rng, dtype, (1,) * (count - len(out_shape)) + out_shape)
    x = rng.integers(0, 100, size=shape).astype(dtype)
    indexed = np.array(shape[b : b + k])
    if b == 0:  # distinct tuples, so that ScatterND below is defined
        flat = rng.permutation(int(np.prod(indexed)))[: int(np.prod(index_shape[:-1]))]
        i = np.stack(np.unravel_index(flat, indexed), axis=-1).reshape(index_shape)
    else:
        i = rng.integers(0, indexed, size=index_shape)
    i = i - indexed * rng.integers(0, 2, size=index_shape)  # some negative
    op = compile_operator(GatherNDOperatorDesc(data, index, output, r, len(index_shape), b), "3.0")
    out = op(to_buffer(data, x.reshape(full)), to_buffer(index, i.reshape(index.sizes)))
    check_output(output, out, reference.gather_nd(x, i, b).reshape(output.sizes))
    # ScatterND back into the same input, with the gathered values doubled (b = 0: unique tuples).
    if b == 0:
        u = (reference.gather_nd(x, i) * 2).astype(dtype)
        updates = random_layout(rng, dtype, (1,) * (count - len(out_shape)) + out_shape)
        sop = compile_operator(ScatterNDOperatorDesc(data, index, updates, data, r, len(index_shape)), "3.0")
        got = sop(
            to_buffer(data, x.reshape(full)),
            to_buffer(index, i.reshape(index.sizes)),
            to_buffer(updates, u.reshape(updates.sizes)),
        )
        check_output(data, got, reference.scatter_nd(x, i, u).reshape(full))


def test_nd_out_of_range_tuples_gather_clamps_scatter_drops():
    data, index = TensorDesc("float32", (3, 2)), TensorDesc("int32", (2, 2))
    gather_op = compile_operator(GatherNDOperatorDesc(data, index, TensorDesc("float32", (1, 2)), 2, 2))
    updates = TensorDesc("float32", (1, 2))
    scatter_op = compile_operator(ScatterNDOperatorDesc(data, index, updates, data, 2, 2))
    x, i = np.arange(6, dtype=np.float32), np.array([7, 0, -1, 5], np.int32)  # (7, 0) and (-1, 5)
    assert gather_op(x, i).tolist() == [4.0, 5.0]  # (2, 0) and (2, 1): each index clamped on its own axis
    assert scatter_op(x, i, np.array([9.0, 8.0], np.float32)).tolist() == x.tolist()  # both tuples dropped


def test_nd_gradients_flow_through_buffers():
    data = TensorDesc("float32", (3, 2), strides=(3, 1))  # padded: the gap gets a zero gradient
    index = TensorDesc("int32", (2, 1))
    op = compile_operator(GatherNDOperatorDesc(data, index, TensorDesc("float32", (2, 2)), 2, 2))
    i = np.array([2, 2], np.int32)  # row 2 twice: its gradient sums both
    grad = jax.grad(lambda x: jnp.sum(op(x, i) * np.arange(1.0, 5.0)))(np.zeros(8, np.float32))
    np.testing.assert_array_equal(grad, [0, 0, 0, 0, 0, 0, 4, 6])
    updates = TensorDesc("float32", (1, 2))
    sop = compile_operator(ScatterNDOperatorDesc(data, TensorDesc("int32", (1, 1)), updates, data, 2, 2))
    weights = np.arange(1.0, 9.0, dtype=np.float32)
    grad_x, grad_u = jax.grad(lambda x, u: jnp.sum(sop(x, np.array([1], np.int32), u[:2]) * weights), (0, 1))(
        np.zeros(8, np.float32), np.zeros(4, np.float32)
    )
    np.testing.assert_array_equal(grad_x, [1, 2, 0, 0, 0, 0, 7, 8])  # row 1 (offsets 3, 4) overwritten, gaps 0
    np.testing.assert_array_equal(grad_u, [4, 5, 0, 0])


# --- jit, vmap, grad, 64-bit, index behaviour, errors ------------------------------------------


@pytest.mark.hlo
def test_compiled_operator_is_jitted_and_vmaps():
    """If this fails: docs/design/strided-lowering.md (slice1 is slices and a reverse, never a gather)."""
    source, output = TensorDesc("float32", (4, 4)), TensorDesc("float32", (2, 2))
    op = compile_operator(Slice1OperatorDesc(source, output, (0, 1), (4, 3), (-2, 2)))
    assert op.__name__ == "Slice1OperatorDesc"
    x = np.arange(48, dtype=np.float32).reshape(3, 16)
    assert "slice" in op.lower(x[0]).as_text()
    batched = jax.vmap(op)(x)
    for b in range(3):
        expected = dmljax.slice(x[b].reshape(4, 4), (0, 1), (4, 3), (-2, 2))
        np.testing.assert_array_equal(batched[b], np.asarray(expected).ravel())


@pytest.mark.slow
def test_gradients_flow_through_buffers(x64):
    data = TensorDesc("float64", (2, 3), strides=(4, 1))  # padded: the gap gets a zero gradient
    index, updates = TensorDesc("int64", (1, 3)), TensorDesc("float64", (1, 3), strides=(0, 1))
    op = compile_operator(ScatterOperatorDesc(data, index, updates, TensorDesc("float64", (2, 3)), 0), "4.1")
    x, u, i = np.arange(8.0), np.array([1.0, 2.0, 3.0]), np.array([1, -2, 0], np.int64)
    check_grads(lambda x, u: op(x, i, u), (x, u), order=2, modes=["fwd", "rev"])
    grad_x = jax.grad(lambda x: jnp.sum(op(x, i, u) * np.arange(1.0, 7.0)))(x)
    np.testing.assert_array_equal(grad_x, [1, 0, 0, 0, 0, 5, 6, 0])  # overwritten and padding elements: 0


def test_64_bit_types(x64):
    data, index = TensorDesc("int64", (2, 2)), TensorDesc("uint64", (2, 1))
    op = compile_operator(GatherElementsOperatorDesc(data, index, TensorDesc("int64", (2, 1)), axis=1), "4.1")
    out = op(np.array([2**40, 1, 2, -(2**50)], np.int64), np.array([0, 1], np.uint64))
    assert out.dtype == np.int64 and out.tolist() == [2**40, -(2**50)]


def test_64_bit_buffer_without_x64_names_the_flag():
    data, index = TensorDesc("int64", (2,)), TensorDesc("int32", (2,))
    op = compile_operator(GatherElementsOperatorDesc(data, index, data, axis=0))
    with pytest.raises(ValidationError, match="input_buffer.dtype must be INT64.*jax_enable_x64"):
        op(np.array([1, 2], np.int64), np.array([1, 0], np.int32))


def test_out_of_range_indices_gathers_clamp_scatter_drops():
    data, index = TensorDesc("float32", (3,)), TensorDesc("int32", (2,))
    gather_op = compile_operator(GatherElementsOperatorDesc(data, index, TensorDesc("float32", (2,)), 0))
    scatter_op = compile_operator(ScatterOperatorDesc(data, index, TensorDesc("float32", (2,)), data, 0))
    x, i = np.array([1.0, 2.0, 3.0], np.float32), np.array([7, -1], np.int32)
    assert gather_op(x, i).tolist() == [3.0, 3.0]
    assert scatter_op(x, i, np.array([9.0, 8.0], np.float32)).tolist() == [1.0, 2.0, 8.0]


def test_call_errors_name_the_struct_and_buffer():
    data, index = TensorDesc("float32", (5,)), TensorDesc("uint32", (4,))
    op = compile_operator(ScatterOperatorDesc(data, index, TensorDesc("float32", (4,)), data, axis=0))
    x, i, u = np.zeros(5, np.float32), np.zeros(4, np.uint32), np.zeros(4, np.float32)
    with pytest.raises(ValidationError, match=r"ScatterOperatorDesc: input_buffer.dtype must be FLOAT32"):
        op(x.astype(np.int32), i, u)
    with pytest.raises(ValidationError, match=r"ScatterOperatorDesc: updates_buffer length must be at least 4"):
        op(x, i, u[:3])
    with pytest.raises(ValidationError, match=r"ScatterOperatorDesc: indices_buffer.shape must be 1-D"):
        op(x, i.reshape(2, 2), u)
    with pytest.raises(TypeError, match=r"ScatterOperatorDesc: takes 3 buffers \(input_buffer, indices_buffer, upd"):
        op(x, i)


@pytest.mark.hlo
def test_operator_inputs_read_with_the_fused_transpose_not_the_read_tensor_tiles(cpu):
    """If this fails: docs/design/tiled-transpose.md (when the tiled passes pay, when the fused transpose does)."""
    # 32 MiB of NHWC data with 8 channels: read_tensor alone transposes it in two tiled passes
    # (a conditional); GatherElements reads through XLA's fused transpose instead (2x faster).
    sizes = (1, 8, 16384, 64)
    nhwc = TensorDesc("float32", sizes, packed_strides(sizes, "NHWC"))
    indices = TensorDesc("uint32", sizes)
    op = compile_operator(GatherElementsOperatorDesc(nhwc, indices, TensorDesc("float32", sizes), axis=1))
    buffer = jax.ShapeDtypeStruct((nhwc.min_buffer_elements,), jnp.float32)
    index_buffer = jax.ShapeDtypeStruct((indices.element_count,), jnp.uint32)
    fused = jax.jit(op).lower(buffer, index_buffer).compile().as_text()
    assert "conditional(" not in fused and "transpose(" not in fused.split("ENTRY")[1]
    alone = jax.jit(lambda b: read_tensor(b, nhwc)).lower(buffer).compile().as_text()
    assert alone.count(" conditional(") == (1 if jax.device_count() == 1 else 0)


@pytest.mark.parametrize("dtype", ["int64", "uint64"])
def test_64_bit_output_descriptor_without_x64_is_refused_by_name(dtype):
    """Issue 39 class 13: the output buffer was int32/uint32 (24 bytes, not 48) with x64 off."""
    desc = ArgMaxOperatorDesc(TensorDesc("float32", (4, 6)), TensorDesc(dtype, (1, 6)), (0,))
    op = compile_operator(desc)
    buffer = np.arange(24, dtype=np.float32)
    pattern = rf"ArgMaxOperatorDesc: output_tensor.dtype must be 32-bit .*jax_enable_x64.*='{dtype.upper()}'"
    with pytest.raises(ValidationError, match=pattern):
        op(buffer)
    with jax.enable_x64(True):
        out = op(buffer)
        assert out.dtype == np.dtype(dtype) and out.nbytes == 48
        np.testing.assert_array_equal(out, [3] * 6)
