"""compile_operator for CUMULATIVE_SUMMATION/PRODUCT, TOP_K1, ARGMAX/ARGMIN, ONE_HOT, NONZERO_COORDINATES.

The pages' examples through descriptors, packed/NHWC/padded/broadcast buffers, the feature-level
tables and the rules between members.
"""

import jax
import numpy as np
import pytest

from dmljax import TensorDesc, ValidationError, cumulative_prod, packed_strides, read_tensor, top_k
from dmljax._descriptors.cumulative import CUMULATIVE_PRODUCT_SUPPORT
from dmljax._descriptors.support import support_at
from dmljax._descriptors.validate import validate_operator_desc
from dmljax.descriptors import (
    ArgMaxOperatorDesc,
    ArgMinOperatorDesc,
    AxisDirection,
    CumulativeProductOperatorDesc,
    CumulativeSummationOperatorDesc,
    FeatureLevel,
    NonzeroCoordinatesOperatorDesc,
    OneHotOperatorDesc,
    TopKOperatorDesc,
    compile_operator,
)
from tests import reference
from tests.test_compile_operator import check_output, random_layout, to_buffer

CUM_INPUT = np.array([[[[2, 1, 3, 5], [3, 8, 7, 3], [9, 6, 2, 4]]]], np.float32)
DEC, INC = AxisDirection.DECREASING, AxisDirection.INCREASING


@pytest.mark.parametrize(
    ("axis", "direction", "exclusive", "expected"),
    [
        (3, INC, False, [[2, 3, 6, 11], [3, 11, 18, 21], [9, 15, 17, 21]]),
        (3, INC, True, [[0, 2, 3, 6], [0, 3, 11, 18], [0, 9, 15, 17]]),
        (3, DEC, False, [[11, 9, 8, 5], [21, 18, 10, 3], [21, 12, 6, 4]]),
        (2, INC, False, [[2, 1, 3, 5], [5, 9, 10, 8], [14, 15, 12, 12]]),
    ],
)
def test_cumulative_summation_page_examples(axis, direction, exclusive, expected):
    t = TensorDesc("float32", (1, 1, 3, 4))
    out = compile_operator(CumulativeSummationOperatorDesc(t, t, axis, direction, exclusive), "2.1")(CUM_INPUT.ravel())
    check_output(t, out, np.array(expected, np.float32)[None, None])


def test_cumulative_product_page_example_and_its_levels():
    t = TensorDesc("float32", (1, 1, 3, 4))
    out = compile_operator(CumulativeProductOperatorDesc(t, t, 3, DEC, False), "3.1")(CUM_INPUT.ravel())
    check_output(t, out, np.array([[30, 15, 15, 5], [504, 168, 21, 3], [432, 48, 8, 4]], np.float32)[None, None])
    flat = TensorDesc("uint16", (3, 4))
    desc = CumulativeProductOperatorDesc(flat, flat, 1, INC, True)
    with pytest.raises(ValidationError, match=r"input_tensor.dimension_count must be 4 at feature level 3.1"):
        compile_operator(desc, "3.1")
    assert support_at(CUMULATIVE_PRODUCT_SUPPORT, FeatureLevel.FL_4_0).dims == (1, 8)
    out = compile_operator(desc, "4.0")(np.arange(1, 13, dtype=np.uint16))
    check_output(flat, out, reference.cumulative(np.arange(1, 13, dtype=np.uint16).reshape(3, 4), 1, False, True, True))


def test_cumulative_summation_nhwc_in_padded_out_in_sequence():
    rng = np.random.default_rng(0)
    sizes = (1, 300, 2, 3)  # a long channel axis: the sum along it must be the loop's, bit for bit
    source = TensorDesc("float32", sizes, packed_strides(sizes, "NHWC"))
    output = TensorDesc("float32", sizes, (2400, 8, 3 + 1, 1), total_tensor_size_in_bytes=4 * 2400 + 16)  # padded rows
    x = (rng.standard_normal(sizes) * 100).astype(np.float32)
    out = compile_operator(CumulativeSummationOperatorDesc(source, output, 1, DEC, True))(to_buffer(source, x))
    check_output(output, out, reference.cumulative(x, 1, True, True))


def test_cumulative_refusals():
    t, u = TensorDesc("float32", (1, 1, 3, 4)), TensorDesc("int32", (1, 1, 3, 4))
    with pytest.raises(ValidationError, match=r"CumulativeSummationOperatorDesc: feature_level must be at least 2.1"):
        validate_operator_desc(CumulativeSummationOperatorDesc(t, t, 3), FeatureLevel.FL_2_0)
    with pytest.raises(ValidationError, match=r"input_tensor.dtype must be one of FLOAT32, FLOAT16, UINT32, UINT16"):
        compile_operator(CumulativeSummationOperatorDesc(u, u, 3))
    with pytest.raises(ValidationError, match=r"axis must be in \[0, 4\)"):
        compile_operator(CumulativeSummationOperatorDesc(t, t, 4))
    with pytest.raises(TypeError, match=r"axis_direction must be an AxisDirection"):
        CumulativeSummationOperatorDesc(t, t, 3, "sideways")
    broadcast = TensorDesc("float32", (1, 1, 3, 4), (0, 0, 0, 1))
    with pytest.raises(ValidationError, match=r"output_tensor.strides must describe each element at its own offset"):
        compile_operator(CumulativeSummationOperatorDesc(t, broadcast, 3))


TOPK_INPUT = np.array([[[[1, 2, 2, 3], [3, 4, 5, 5], [6, 6, 6, 6]]]], np.float32)


@pytest.mark.parametrize(
    ("direction", "values", "indices"),
    [
        (DEC, [[3, 2, 2], [5, 5, 4], [6, 6, 6]], [[3, 1, 2], [2, 3, 1], [0, 1, 2]]),
        (INC, [[1, 2, 2], [3, 4, 5], [6, 6, 6]], [[0, 1, 2], [0, 1, 2], [0, 1, 2]]),
    ],
)
def test_top_k1_page_examples_3_and_4(direction, values, indices):
    source, out_v, out_i = (
        TensorDesc("float32", (1, 1, 3, 4)),
        TensorDesc("float32", (1, 1, 3, 3)),
        TensorDesc("uint32", (1, 1, 3, 3)),
    )
    v, i = compile_operator(TopKOperatorDesc(source, out_v, out_i, 3, 3, direction), "2.1")(TOPK_INPUT.ravel())
    check_output(out_v, v, np.array(values, np.float32)[None, None])
    check_output(out_i, i, np.array(indices, np.uint32)[None, None])


def test_top_k1_broadcast_input_padded_outputs_and_rules():
    source = TensorDesc("int8", (3, 5), (0, 1))  # one row, three times
    out_v = TensorDesc("int8", (3, 2), (4, 1), total_tensor_size_in_bytes=12)
    out_i = TensorDesc("uint32", (3, 2), (1, 3))
    row = np.array([4, -1, 4, 7, -1], np.int8)
    v, i = compile_operator(TopKOperatorDesc(source, out_v, out_i, 1, 2, INC))(row)
    check_output(out_v, v, [[-1, -1]] * 3)
    check_output(out_i, i, [[1, 4]] * 3)
    with pytest.raises(ValidationError, match=r"input_tensor.dimension_count must be 4 at feature level 3.0"):
        compile_operator(TopKOperatorDesc(source, out_v, out_i, 1, 2), "3.0")
    with pytest.raises(ValidationError, match=r"TopKOperatorDesc: k must be in \[1, 5\].*got k=6"):
        compile_operator(TopKOperatorDesc(source, out_v, out_i, 1, 6))
    with pytest.raises(ValidationError, match=r"output_index_tensor.dtype must be one of UINT32"):
        compile_operator(TopKOperatorDesc(source, out_v, TensorDesc("int32", (3, 2)), 1, 2))
    with pytest.raises(
        ValidationError, match=r"output_value_tensor.sizes must equal input_tensor.sizes with k along axis \(\(3, 3\)\)"
    ):
        compile_operator(TopKOperatorDesc(source, out_v, out_i, 1, 3))


ARG_INPUT = np.array([[1, 2, 3], [3, 0, 4], [2, 5, 2]], np.float32)


@pytest.mark.parametrize(
    ("axes", "out_sizes", "expected"),
    [((0,), (1, 3), [[1, 2, 1]]), ((1,), (3, 1), [[2], [2], [1]]), ((0, 1), (1, 1), [[7]]), ((1, 0), (1, 1), [[7]])],
)
def test_argmax_page_examples(axes, out_sizes, expected):
    source, output = TensorDesc("float32", (3, 3)), TensorDesc("uint32", out_sizes)
    out = compile_operator(ArgMaxOperatorDesc(source, output, axes), "3.0")(ARG_INPUT.ravel())
    check_output(output, out, np.array(expected, np.uint32))


def test_argmin_last_index_nhwc_input_and_rules():
    sizes = (1, 3, 2, 2)
    source = TensorDesc("float16", sizes, packed_strides(sizes, "NHWC"))
    output = TensorDesc("int32", (1, 1, 2, 2))
    x = np.array([1, 0, 1, 1, 0, 0, 1, 0, 0, 1, 1, 1], np.float16).reshape(sizes)
    out = compile_operator(ArgMinOperatorDesc(source, output, (1,), DEC))(to_buffer(source, x))
    check_output(output, out, reference.arg_reduce(x, (1,), True, True, False).astype(np.int32))
    with pytest.raises(ValidationError, match=r"ArgMinOperatorDesc: feature_level must be at least 3.0"):
        compile_operator(ArgMinOperatorDesc(source, output, (1,)), "2.1")
    with pytest.raises(ValidationError, match=r"output_tensor.sizes must equal input_tensor.sizes with 1 on each axis"):
        compile_operator(ArgMinOperatorDesc(source, output, (2,)))
    with pytest.raises(ValidationError, match=r"axes must name at least one axis, none twice; got axes=\(1, 1\)"):
        compile_operator(ArgMinOperatorDesc(source, output, (1, 1)))
    with pytest.raises(ValidationError, match=r"output_tensor.dtype must be one of INT64, INT32, UINT64, UINT32"):
        compile_operator(ArgMinOperatorDesc(source, TensorDesc("float32", (1, 1, 2, 2)), (1,)))


def test_one_hot_page_examples():
    f01 = np.array([0, 1], np.float32)
    indices, values = TensorDesc("uint32", (1, 1, 3, 1)), TensorDesc("float32", (1, 1, 1, 2))
    output = TensorDesc("float32", (1, 1, 3, 4))
    op = compile_operator(OneHotOperatorDesc(indices, values, output, 3), "2.0")
    check_output(output, op(np.array([0, 3, 2], np.uint32), f01), np.eye(4, dtype=np.float32)[[0, 3, 2]][None, None])
    columns = compile_operator(OneHotOperatorDesc(TensorDesc("uint32", (1, 1, 1, 4)), values, output, 2), "2.0")
    expected = np.array([[1, 0, 0, 1], [0, 0, 1, 0], [0, 1, 0, 0]], np.float32)[None, None]
    check_output(output, columns(np.array([0, 2, 1, 0], np.uint32), f01), expected)
    column_values = TensorDesc("float32", (1, 1, 3, 1))  # off 4, on 2, 9 unused: the fastest dim of size > 1
    op = compile_operator(OneHotOperatorDesc(indices, column_values, output, 3), "2.0")
    expected = np.array([[2, 4, 4, 4], [4, 4, 4, 2], [4, 4, 2, 4]], np.float32)[None, None]
    check_output(output, op(np.array([0, 3, 2], np.uint32), np.array([4, 2, 9], np.float32)), expected)
    signed = OneHotOperatorDesc(TensorDesc("int32", (1, 1, 3, 1)), values, output, 3)
    expected = np.array([[0, 1, 0, 0], [0, 0, 0, 0], [0, 0, 0, 1]], np.float32)[None, None]
    check_output(output, compile_operator(signed, "3.0")(np.array([-3, 100, 3], np.int32), f01), expected)
    with pytest.raises(ValidationError, match=r"indices_tensor.dtype must be one of UINT32 at feature level 2.1"):
        compile_operator(signed, "2.1")


def test_one_hot_rules():
    indices, values, output = TensorDesc("uint32", (3, 1)), TensorDesc("int8", (2,)), TensorDesc("int8", (3, 4))
    with pytest.raises(
        ValidationError,
        match=r"values_tensor.dimension_count must equal indices_tensor.dimension_count \(2\); got values_tensor.d",
    ):
        compile_operator(OneHotOperatorDesc(indices, values, output, 1))
    values = TensorDesc("int8", (1, 2))
    with pytest.raises(
        ValidationError, match=r"indices_tensor.sizes must equal output_tensor.sizes with 1 along axis \(\(1, 4\)\)"
    ):
        compile_operator(OneHotOperatorDesc(indices, values, output, 0))
    with pytest.raises(ValidationError, match=r"values_tensor.sizes must hold at least two elements"):
        compile_operator(OneHotOperatorDesc(indices, TensorDesc("int8", (1, 1)), output, 1))
    op = compile_operator(OneHotOperatorDesc(indices, values, output, 1))
    check_output(
        output,
        op(np.array([1, 7, 3], np.uint32), np.array([5, -5], np.int8)),
        reference.one_hot(np.array([1, 7, 3]), 4, 5, -5, 1, np.int8),
    )


def test_nonzero_coordinates_page_example():
    source = TensorDesc("float32", (1, 1, 2, 4))
    count, coordinates = TensorDesc("uint32", (1, 1, 1, 1)), TensorDesc("uint32", (1, 1, 8, 3))
    x = np.array([1.0, 0.0, 0.0, 2.0, -0.0, 3.5, 0.0, -5.2], np.float32)
    c, table = compile_operator(NonzeroCoordinatesOperatorDesc(source, count, coordinates), "3.0")(x)
    check_output(count, c, [[[[4]]]])
    expected = np.zeros((1, 1, 8, 3), np.uint32)
    expected[0, 0, :4] = [[0, 0, 0], [0, 0, 3], [0, 1, 1], [0, 1, 3]]
    check_output(coordinates, table, expected)


def test_nonzero_coordinates_rules():
    source, count = TensorDesc("int8", (1, 1, 2, 4)), TensorDesc("uint32", (1, 1, 1, 1))
    for n in (1, 5):
        with pytest.raises(
            ValidationError, match=r"output_coordinates_tensor.sizes must be \{1, .., 1, 8, N\} with N in \[2, 4\]"
        ):
            compile_operator(NonzeroCoordinatesOperatorDesc(source, count, TensorDesc("uint32", (1, 1, 8, n))))
    flat = TensorDesc("int8", (8,))
    with pytest.raises(ValidationError, match=r"input_tensor.dimension_count must be 4 to 5"):
        compile_operator(NonzeroCoordinatesOperatorDesc(flat, TensorDesc("uint32", (1,)), TensorDesc("uint32", (8, 1))))
    op = compile_operator(NonzeroCoordinatesOperatorDesc(source, count, TensorDesc("uint32", (1, 1, 8, 2))))
    c, table = op(np.array([0, 5, 0, 0, 0, 0, 0, -1], np.int8))
    assert int(c[0]) == 2
    np.testing.assert_array_equal(np.asarray(table).reshape(8, 2)[:3], [[0, 1], [1, 3], [0, 0]])


@pytest.mark.parametrize("seed", range(4))
def test_random_layouts_match_the_array_api(seed):
    rng = np.random.default_rng(seed)
    sizes = tuple(int(s) for s in rng.integers(1, 5, 4))
    dtype = ["float32", "uint16", "float16", "uint32"][seed]
    source, output = random_layout(rng, dtype, sizes), random_layout(rng, dtype, sizes)
    x = rng.integers(0, 4, sizes).astype(dtype)
    axis = int(rng.integers(0, 4))
    out = compile_operator(CumulativeSummationOperatorDesc(source, output, axis, DEC, bool(seed % 2)))(
        to_buffer(source, x)
    )
    check_output(output, out, reference.cumulative(x, axis, True, bool(seed % 2)))
    k = int(rng.integers(1, sizes[axis] + 1))
    out_sizes = sizes[:axis] + (k,) + sizes[axis + 1 :]
    out_v, out_i = random_layout(rng, dtype, out_sizes), random_layout(rng, "uint32", out_sizes)
    v, i = compile_operator(TopKOperatorDesc(source, out_v, out_i, axis, k))(to_buffer(source, x))
    ev, ei = top_k(read_tensor(to_buffer(source, x), source), k, axis)
    np.testing.assert_array_equal(read_tensor(v, out_v), ev)
    np.testing.assert_array_equal(read_tensor(i, out_i), ei)


def test_compiled_operators_jit_vmap_and_grad():
    t = TensorDesc("float32", (2, 5))
    op = compile_operator(CumulativeProductOperatorDesc(t, t, 1))
    x = np.random.default_rng(0).standard_normal((3, 10)).astype(np.float32)
    np.testing.assert_array_equal(jax.vmap(op)(x), np.stack([op(r) for r in x]))
    grad = jax.grad(lambda b: op(b).sum())(x[0])
    expected = jax.grad(lambda v: cumulative_prod(v.reshape(2, 5), 1).sum())(x[0])
    np.testing.assert_array_equal(grad, expected)


# --- every row of every new support table: valid at its levels, refused one level earlier ---------


def _nd(n, size):
    return (1,) * (n - 1) + (size,)


def _build(cls, n, types):
    """A valid descriptor of ``cls`` with ``n`` dimensions and each member's type from ``types``."""
    t = lambda member, size=4: TensorDesc(types[member], _nd(n, size))  # noqa: E731
    if cls in (CumulativeSummationOperatorDesc, CumulativeProductOperatorDesc):
        return cls(t("input_tensor"), t("output_tensor"), n - 1)
    if cls is TopKOperatorDesc:
        return cls(t("input_tensor"), t("output_value_tensor", 2), t("output_index_tensor", 2), n - 1, 2)
    if cls in (ArgMaxOperatorDesc, ArgMinOperatorDesc):
        return cls(t("input_tensor"), t("output_tensor", 1), (n - 1,))
    if cls is OneHotOperatorDesc:
        return cls(t("indices_tensor", 1), t("values_tensor", 2), t("output_tensor"), n - 1)
    sizes = (1,) * (n - 1) + (4,)
    coordinates = TensorDesc(types["output_coordinates_tensor"], (1,) * (n - 2) + (4, 1))
    return cls(TensorDesc(types["input_tensor"], sizes), t("output_count_tensor", 1), coordinates)


NEW_TABLES = {
    o.desc: o.support
    for o in __import__("dmljax._descriptors.registry", fromlist=["registered"]).registered()
    if o.desc.__module__.split(".")[-1] in ("cumulative", "topk", "one_hot", "nonzero")
}
NEW_ROWS = [(cls, i) for cls, table in NEW_TABLES.items() for i in range(len(table))]


@pytest.mark.parametrize(("cls", "i"), NEW_ROWS, ids=[f"{c.__name__}-{NEW_TABLES[c][i].level}" for c, i in NEW_ROWS])
def test_every_row_valid_at_its_level_and_refused_before(cls, i):
    row = NEW_TABLES[cls][i]
    first = {member: types[0] for member, types in row.types}
    for n in range(row.dims[0], row.dims[1] + 1):
        validate_operator_desc(_build(cls, n, first), row.level)

    def with_type(member, dtype, row=row):  # members with the same type list share one type (data in and out)
        types = dict(row.types)[member]
        return {**first, **{m: dtype for m, ts in row.types if ts == types}}

    for member, types in row.types:
        for dtype in types:
            validate_operator_desc(_build(cls, row.dims[0], with_type(member, dtype)), row.level)
    before = [level for level in FeatureLevel if level < row.level][-1]
    if i == 0:
        with pytest.raises(ValidationError, match=rf"{cls.__name__}: feature_level must be at least {row.level}"):
            validate_operator_desc(_build(cls, row.dims[1], first), before)
        return
    earlier = NEW_TABLES[cls][i - 1]
    added = [
        (m, t) for (m, types), (_, old) in zip(row.types, earlier.types, strict=True) for t in types if t not in old
    ]
    new_dims = [n for n in range(row.dims[0], row.dims[1] + 1) if not earlier.dims[0] <= n <= earlier.dims[1]]
    assert added or new_dims, "each row adds something"
    for member, dtype in added:
        with pytest.raises(ValidationError, match=r"dtype must be one of"):
            validate_operator_desc(_build(cls, earlier.dims[0], with_type(member, dtype)), before)
    for n in new_dims:
        with pytest.raises(ValidationError, match=r"dimension_count must be"):
            validate_operator_desc(_build(cls, n, first), before)
