"""compile_operator for the data-movement structs: strided buffers, feature levels, rules between members."""

import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

import dmljax
from dmljax import TensorDesc, ValidationError, read_tensor
from dmljax.descriptors import (
    DepthToSpaceOperatorDesc,
    FillValueSequenceOperatorDesc,
    PaddingOperatorDesc,
    ReverseSubsequencesOperatorDesc,
    SliceGradOperatorDesc,
    SpaceToDepthOperatorDesc,
    TileOperatorDesc,
    compile_operator,
)
from tests import reference
from tests.test_compile_operator import check_output, random_layout, to_buffer


def broadcast_rows(dtype, sizes):
    """``sizes`` over one row: stride 0 everywhere but the last dimension."""
    return TensorDesc(dtype, sizes, (0,) * (len(sizes) - 1) + (1,))


@pytest.mark.parametrize("mode", ["constant", "edge", "reflection", "symmetric", "wrap"])
@pytest.mark.parametrize("seed", range(2))
def test_padding_random_layouts(mode, seed):
    rng = np.random.default_rng(seed)
    dtype = ["float32", "int16"][seed]
    sizes = tuple(int(s) for s in rng.integers(1, 4, 4))
    start, end = [int(v) for v in rng.integers(0, 5, 4)], [int(v) for v in rng.integers(0, 5, 4)]
    out_sizes = tuple(s + a + b for s, a, b in zip(sizes, start, end, strict=True))
    source, output = random_layout(rng, dtype, sizes), random_layout(rng, dtype, out_sizes)
    x = rng.integers(-50, 50, sizes).astype(dtype)
    desc = PaddingOperatorDesc(source, output, mode, "float32", -7.5, start, end)
    out = compile_operator(desc, "6.4")(to_buffer(source, x))
    value = -7.5 if dtype == "float32" else -7
    check_output(output, out, reference.pad(x, start, end, mode, value))


def test_padding_broadcast_input_and_levels():
    source = broadcast_rows("uint8", (1, 1, 3, 4))
    output = TensorDesc("uint8", (1, 1, 5, 7))
    desc = PaddingOperatorDesc(source, output, "DML_PADDING_MODE_SYMMETRIC", "uint8", 0, (0, 0, 1, 1), (0, 0, 1, 2))
    row = np.array([1, 2, 3, 4], np.uint8)
    check_output(output, compile_operator(desc, "5.0")(row), reference.pad(np.tile(row, (1, 1, 3, 1)), *_pads(desc)))
    with pytest.raises(ValidationError, match=r"PaddingOperatorDesc: feature_level must be at least 5.0"):
        compile_operator(desc, "4.1")
    wrap = PaddingOperatorDesc(source, output, "wrap", "uint8", 0, (0, 0, 1, 1), (0, 0, 1, 2))
    with pytest.raises(ValidationError, match=r"padding_mode must be constant, edge, reflection or symmetric before"):
        compile_operator(wrap, "6.3")
    bad = PaddingOperatorDesc(source, output, "constant", "int32", 300, (0, 0, 1, 1), (0, 0, 1, 2))
    with pytest.raises(ValidationError, match=r"padding_value must fit input_tensor.dtype; got padding_value=300"):
        compile_operator(bad, "5.0")
    short = PaddingOperatorDesc(source, output, "edge", "uint8", 0, (0, 0, 1, 1), (0, 0, 1, 1))
    with pytest.raises(ValidationError, match=r"output_tensor.sizes must equal .*\(1, 1, 5, 6\)"):
        compile_operator(short, "5.0")


def _pads(desc):
    return desc.start_padding, desc.end_padding, desc.padding_mode


@pytest.mark.parametrize("seed", range(3))
def test_tile_random_layouts(seed):
    rng = np.random.default_rng(seed)
    dtype = ["float16", "int8", "uint32"][seed]
    n = int(rng.integers(1, 6))
    sizes = tuple(int(s) for s in rng.integers(1, 4, n))
    repeats = tuple(int(r) for r in rng.integers(1, 3, n))
    source = random_layout(rng, dtype, sizes)
    output = random_layout(rng, dtype, tuple(s * r for s, r in zip(sizes, repeats, strict=True)))
    x = rng.integers(0, 50, sizes).astype(dtype)
    out = compile_operator(TileOperatorDesc(source, output, repeats), "4.1")(to_buffer(source, x))
    check_output(output, out, reference.tile(x, repeats))
    np.testing.assert_array_equal(read_tensor(out, output), dmljax.tile(x, repeats))


def test_tile_levels_and_rules():
    desc = TileOperatorDesc(TensorDesc("float32", (2, 3)), TensorDesc("float32", (4, 3)), (2, 1))
    with pytest.raises(ValidationError, match=r"input_tensor.dimension_count must be 4 at feature level 3.0"):
        compile_operator(desc, "3.0")
    compile_operator(desc, "3.1")
    with pytest.raises(ValidationError, match=r"dtype must be one of FLOAT32, FLOAT16, .*UINT64 at feature level"):
        compile_operator(TileOperatorDesc(TensorDesc("float64", (2,)), TensorDesc("float64", (2,)), (1,)))
    with pytest.raises(ValidationError, match=r"repeats\[1\] must be in \[1, .*got repeats\[1\]=0"):
        compile_operator(TileOperatorDesc(TensorDesc("float32", (2, 3)), TensorDesc("float32", (4, 3)), (2, 0)))


@pytest.mark.parametrize("order", ["DCR", "CRD"])
def test_space_depth_nhwc_buffers_round_trip(order):
    rng = np.random.default_rng(0)
    sizes, deep_sizes = (2, 3, 4, 6), (2, 12, 2, 3)
    nchw = TensorDesc("int32", sizes, dmljax.packed_strides(sizes, "NHWC"))
    deep = TensorDesc("int32", deep_sizes, dmljax.packed_strides(deep_sizes, "NHWC"))
    x = rng.integers(0, 1000, sizes).astype(np.int32)
    out = compile_operator(SpaceToDepthOperatorDesc(nchw, deep, 2, order), "2.1")(to_buffer(nchw, x))
    check_output(deep, out, reference.space_to_depth(x, 2, order))
    back = compile_operator(DepthToSpaceOperatorDesc(deep, nchw, 2, order), "2.1")(out)
    check_output(nchw, back, x)


def test_space_depth_rules():
    a, b = TensorDesc("float32", (1, 1, 4, 6)), TensorDesc("float32", (1, 4, 2, 3))
    with pytest.raises(ValidationError, match=r"SpaceToDepthOperatorDesc: feature_level must be at least 2.1"):
        compile_operator(SpaceToDepthOperatorDesc(a, b, 2), "2.0")
    with pytest.raises(ValidationError, match=r"output_tensor.sizes must equal \(1, 4, 2, 3\); got .*\(1, 1, 4, 6\)"):
        compile_operator(SpaceToDepthOperatorDesc(a, a, 2), "2.1")
    with pytest.raises(ValidationError, match=r"input_tensor.sizes must have C a multiple of block_size \*\* 2 \(9\)"):
        compile_operator(DepthToSpaceOperatorDesc(b, a, 3), "2.1")
    with pytest.raises(ValidationError, match=r"order must be 'DCR'"):
        SpaceToDepthOperatorDesc(a, b, 2, "DRC")


def test_reverse_subsequences_padded_and_broadcast():
    source = TensorDesc("float32", (1, 1, 3, 4), (12, 12, 5, 1))  # rows padded to 5
    lengths = TensorDesc("uint32", (1, 1, 3, 1), (0, 0, 1, 0))
    output = TensorDesc("float32", (1, 1, 3, 4), (12, 12, 1, 3))  # column-major
    x = np.arange(1, 13, dtype=np.float32).reshape(1, 1, 3, 4)
    n = np.array([2, 4, 3], np.uint32).reshape(1, 1, 3, 1)
    op = compile_operator(ReverseSubsequencesOperatorDesc(source, lengths, output, 3), "2.1")
    check_output(output, op(to_buffer(source, x), to_buffer(lengths, n)), reference.reverse_subsequences(x, n, 3))
    int_lengths = TensorDesc("int32", (1, 1, 3, 1))
    with pytest.raises(ValidationError, match=r"sequence_lengths_tensor.dtype must be one of UINT32 at"):
        compile_operator(ReverseSubsequencesOperatorDesc(source, int_lengths, output, 3), "4.0")
    with pytest.raises(ValidationError, match=r"sequence_lengths_tensor.sizes must equal .*\(1, 1, 1, 4\)"):
        compile_operator(ReverseSubsequencesOperatorDesc(source, lengths, output, 2), "4.0")
    flat = ReverseSubsequencesOperatorDesc(
        TensorDesc("int8", (5,)), TensorDesc("uint32", (1,)), TensorDesc("int8", (5,)), 0
    )
    with pytest.raises(ValidationError, match=r"dimension_count must be 4 to 5 at feature level 3.0"):
        compile_operator(flat, "3.0")
    out = compile_operator(flat, "4.0")(jnp.arange(5, dtype=jnp.int8), jnp.array([3], jnp.uint32))
    np.testing.assert_array_equal(out, [2, 1, 0, 3, 4, 0, 0, 0])  # 5 bytes rounded up to 8


def test_fill_value_sequence_padded_output():
    output = TensorDesc("uint8", (1, 1, 2, 2), (4, 4, 3, 1), total_tensor_size_in_bytes=8)
    op = compile_operator(FillValueSequenceOperatorDesc(output, "uint8", 10, -2), "2.1")
    check_output(output, op(), [[[[10, 8], [6, 4]]]])  # the page's example 2
    floats = TensorDesc("float16", (1, 1, 1, 40))
    out = compile_operator(FillValueSequenceOperatorDesc(floats, "float16", 0.1, 0.1), "2.1")()
    check_output(floats, out, reference.fill_value_sequence((1, 1, 1, 40), "float16", 0.1, 0.1))
    with pytest.raises(ValidationError, match=r"value_data_type must equal output_tensor.dtype"):
        compile_operator(FillValueSequenceOperatorDesc(output, "int8", 1, 1))
    with pytest.raises(ValidationError, match=r"value_start must fit value_data_type; got value_start=256"):
        compile_operator(FillValueSequenceOperatorDesc(output, "uint8", 256, 1))
    with pytest.raises(ValidationError, match=r"output_tensor.dimension_count must be 4"):
        compile_operator(FillValueSequenceOperatorDesc(TensorDesc("int32", (3,)), "int32", 1, 1))


@pytest.mark.parametrize("seed", range(3))
def test_slice_grad_random_layouts_and_gradient(seed):
    from tests.test_slice import random_window

    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 5))
    shape = tuple(int(s) for s in rng.integers(1, 6, n))
    offsets, sizes, strides, outs = random_window(rng, shape)
    grad_desc, out_desc = random_layout(rng, "float32", tuple(outs)), random_layout(rng, "float32", shape)
    g = rng.standard_normal(outs).astype(np.float32)
    desc = SliceGradOperatorDesc(grad_desc, out_desc, offsets, sizes, strides)
    op = compile_operator(desc, "3.0")
    out = op(to_buffer(grad_desc, g))
    check_output(out_desc, out, reference.slice_grad(g, shape, offsets, sizes, strides))
    check_grads(op, (jnp.asarray(to_buffer(grad_desc, g)),), order=1, modes=["rev"])


def test_slice_grad_levels_and_rules():
    g, o = TensorDesc("float32", (1, 2)), TensorDesc("float32", (2, 5))
    with pytest.raises(ValidationError, match=r"SliceGradOperatorDesc: feature_level must be at least 3.0"):
        compile_operator(SliceGradOperatorDesc(g, o, (1, 0), (1, 4), (1, -2)), "2.1")
    with pytest.raises(ValidationError, match=r"input_window_strides\[1\] must be nonzero"):
        compile_operator(SliceGradOperatorDesc(g, o, (1, 0), (1, 4), (1, 0)))
    with pytest.raises(ValidationError, match=r"input_gradient_tensor.sizes\[1\] must be in \[1, 1\]"):
        compile_operator(SliceGradOperatorDesc(g, o, (1, 0), (1, 2), (1, 2)))
    out = compile_operator(SliceGradOperatorDesc(g, o, (1, 0), (1, 4), (1, -2)))(jnp.array([1.0, 2.0]))
    np.testing.assert_array_equal(out.reshape(2, 5), [[0, 0, 0, 0, 0], [0, 2, 0, 1, 0]])


def test_join_page_example_1_and_split_back_with_strided_buffers():
    a, b = TensorDesc("float32", (1, 1, 2, 3)), TensorDesc("float32", (1, 1, 2, 4), (8, 8, 1, 2))  # column-major
    out = TensorDesc("float32", (1, 1, 2, 7), (16, 16, 8, 1), total_tensor_size_in_bytes=64)  # rows padded to 8
    x = np.array([[1, 2, 3], [4, 5, 6]], np.float32).reshape(1, 1, 2, 3)
    y = np.array([[7, 8, 9, 10], [11, 12, 13, 14]], np.float32).reshape(1, 1, 2, 4)
    joined = compile_operator(dmljax.descriptors.JoinOperatorDesc((a, b), out, 3), "1.0")(
        to_buffer(a, x), to_buffer(b, y)
    )
    expected = [[[[1, 2, 3, 7, 8, 9, 10], [4, 5, 6, 11, 12, 13, 14]]]]
    check_output(out, joined, expected)
    pieces = compile_operator(dmljax.descriptors.SplitOperatorDesc(out, (a, b), 3), "1.0")(joined)
    check_output(a, pieces[0], x)
    check_output(b, pieces[1], y)


def test_join_split_rules_and_levels():
    a, b = TensorDesc("int8", (1, 1, 2, 3)), TensorDesc("int8", (1, 1, 2, 4))
    out = TensorDesc("int8", (1, 1, 2, 7))
    with pytest.raises(ValidationError, match=r"input_tensors\[0\].dtype must be one of .* at feature level 1.0"):
        compile_operator(dmljax.descriptors.JoinOperatorDesc((a, b), out, 3), "1.0")
    with pytest.raises(
        ValidationError, match=r"input_tensors\[0\].sizes\[3\] must equal output_tensor.sizes\[3\] \(7\); got .*=3"
    ):
        compile_operator(dmljax.descriptors.JoinOperatorDesc((a, b), out, 2), "2.1")
    short = TensorDesc("int8", (1, 1, 2, 6))
    with pytest.raises(ValidationError, match=r"output_tensors.sizes must add up to input_tensor.sizes\[3\] \(6\)"):
        compile_operator(dmljax.descriptors.SplitOperatorDesc(short, (a, b), 3), "2.1")
    with pytest.raises(TypeError, match=r"JoinOperatorDesc: input_tensors must be a non-empty sequence of TensorDesc"):
        dmljax.descriptors.JoinOperatorDesc((), out, 3)
    op = compile_operator(dmljax.descriptors.JoinOperatorDesc((a, b), out, 3), "2.1")
    with pytest.raises(TypeError, match=r"takes 2 buffers \(input_buffers\[0\], input_buffers\[1\]\); got 1"):
        op(jnp.zeros(8, jnp.int8))


@pytest.mark.parametrize(
    ("value_type", "value", "match"),
    [
        ("int32", float("nan"), r"padding_value must be finite for an integer type; got padding_value=nan"),
        ("int32", float("inf"), r"padding_value must be finite for an integer type; got padding_value=inf"),
        ("int32", None, r"padding_value must be a real number \(int or float\); got padding_value=None"),
        ("int32", 1 + 2j, r"padding_value must be a real number .*got padding_value=\(1\+2j\)"),
        ("float32", "3", r"padding_value must be a real number .*got padding_value='3'"),
        ("float32", None, r"padding_value must be a real number .*got padding_value=None"),
    ],
)
def test_padding_value_of_the_wrong_kind_is_refused_by_name(value_type, value, match):
    """Issue 39 class 12: int()'s raw ValueError / OverflowError / TypeError before ("3" was read as 3)."""
    desc = PaddingOperatorDesc(
        TensorDesc("int32", (4,)), TensorDesc("int32", (6,)), "constant", value_type, value, (1,), (1,)
    )
    with pytest.raises(ValidationError, match=r"PaddingOperatorDesc: padding_value must be a number that .*" + match):
        compile_operator(desc)


@pytest.mark.parametrize(("member", "value"), [("value_start", None), ("value_delta", 1 + 2j), ("value_start", "1")])
def test_fill_value_sequence_scalar_of_the_wrong_kind_is_refused_by_name(member, value):
    """Issue 39 class 12: float()'s raw TypeError before ("1" was read as 1)."""
    values = {"value_start": 1, "value_delta": 1, member: value}
    desc = FillValueSequenceOperatorDesc(TensorDesc("float32", (1, 1, 1, 4)), "float32", **values)
    with pytest.raises(ValidationError, match=rf"FillValueSequenceOperatorDesc: {member} must fit .*must be a real"):
        compile_operator(desc)
