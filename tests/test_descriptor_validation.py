"""compile_operator's validation: every support-table row just valid and just invalid, shape rules, messages."""

import re

import pytest

from dmljax import (
    DataType,
    FeatureLevel,
    GatherElementsOperatorDesc,
    GatherOperatorDesc,
    RandomGeneratorOperatorDesc,
    RandomGeneratorType,
    ScatterElementsOperatorDesc,
    ScatterOperatorDesc,
    Slice1OperatorDesc,
    TensorDesc,
    ValidationError,
    compile_operator,
)
from dmljax._descriptors.registry import registered

LEVELS = sorted(set(FeatureLevel))
DML_TYPES = [t for t in DataType if t.name not in ("BOOL", "BFLOAT16", "COMPLEX64", "COMPLEX128")]
INDEX_TYPES = [DataType.INT64, DataType.INT32, DataType.UINT64, DataType.UINT32]


def previous(level):
    """The feature level just before ``level`` (None before the first)."""
    return max((lv for lv in LEVELS if lv < level), default=None)


def nd(n, last):
    """Sizes ``(1, ..., 1, last)`` with ``n`` dimensions."""
    return (1,) * (n - 1) + (last,)


def scatter_desc(n, dtype, index_dtype=DataType.UINT32):
    data = TensorDesc(dtype, nd(n, 3))
    return ScatterOperatorDesc(data, TensorDesc(index_dtype, nd(n, 2)), TensorDesc(dtype, nd(n, 2)), data, axis=n - 1)


def gather_desc(n, dtype, index_dtype=DataType.UINT32):
    data, out = TensorDesc(dtype, nd(n, 3)), TensorDesc(dtype, nd(n, 2))
    return GatherOperatorDesc(data, TensorDesc(index_dtype, nd(n, 2)), out, axis=n - 1, index_dimensions=1)


def gather_elements_desc(n, dtype, index_dtype=DataType.UINT32):
    data, out = TensorDesc(dtype, nd(n, 3)), TensorDesc(dtype, nd(n, 2))
    return GatherElementsOperatorDesc(data, TensorDesc(index_dtype, nd(n, 2)), out, axis=n - 1)


def slice1_desc(n, dtype, index_dtype=None):
    data, out = TensorDesc(dtype, nd(n, 4)), TensorDesc(dtype, nd(n, 2))
    return Slice1OperatorDesc(data, out, (0,) * n, nd(n, 4), nd(n, 2))


BUILDERS = {
    ScatterOperatorDesc: scatter_desc,
    GatherOperatorDesc: gather_desc,
    GatherElementsOperatorDesc: gather_elements_desc,
    Slice1OperatorDesc: slice1_desc,
}
SUPPORT_TABLES = {operator.desc: operator.support for operator in registered()}
ROWS = [(cls, i) for cls in BUILDERS for i in range(len(SUPPORT_TABLES[cls]))]
ROW_IDS = [f"{cls.__name__}-{SUPPORT_TABLES[cls][i].level}" for cls, i in ROWS]


def row_levels(cls, i):
    """The first and the last feature level a row of the table applies to."""
    table = SUPPORT_TABLES[cls]
    last = previous(table[i + 1].level) if i + 1 < len(table) else FeatureLevel.LATEST
    return table[i].level, last


def raises_at(level, *fragments):
    """Expect a ValidationError whose message holds the fragments in order, and names the level."""
    pattern = ".*".join(re.escape(f) for f in fragments)
    return pytest.raises(ValidationError, match=f"(?=.*feature level {re.escape(str(level))}){pattern}")


# --- every row of every support table -----------------------------------------------


@pytest.mark.parametrize(("cls", "i"), ROWS, ids=ROW_IDS)
def test_row_just_valid(cls, i):
    row = SUPPORT_TABLES[cls][i]
    for level in row_levels(cls, i):
        for n in row.dims:
            for dtype in row.data_types:
                compile_operator(BUILDERS[cls](n, dtype), level)
            for index_dtype in row.index_types:
                compile_operator(BUILDERS[cls](n, row.data_types[0], index_dtype), level)


@pytest.mark.parametrize(("cls", "i"), ROWS, ids=ROW_IDS)
def test_row_just_invalid_dims_and_types(cls, i):
    row = SUPPORT_TABLES[cls][i]
    first, last = row_levels(cls, i)
    low, high = row.dims
    for n in (low - 1, high + 1):
        if 1 <= n <= 8:
            with raises_at(
                last, f"{cls.__name__}: input_tensor.dimension_count must be", f"got input_tensor.dimension_count={n}"
            ):
                compile_operator(BUILDERS[cls](n, row.data_types[0]), last)
    for dtype in [t for t in DML_TYPES if t not in row.data_types][:3]:
        with raises_at(first, "input_tensor.dtype must be one of", f"got input_tensor.dtype={dtype!r}"):
            compile_operator(BUILDERS[cls](low, dtype), first)
    for index_dtype in [t for t in INDEX_TYPES if t not in row.index_types] if row.index_types else ():
        with raises_at(
            first, "indices_tensor.dtype must be one of UINT32", f"got indices_tensor.dtype={index_dtype!r}"
        ):
            compile_operator(BUILDERS[cls](low, row.data_types[0], index_dtype), first)


@pytest.mark.parametrize(("cls", "i"), ROWS, ids=ROW_IDS)
def test_row_just_invalid_one_level_earlier(cls, i):
    table = SUPPORT_TABLES[cls]
    row, level = table[i], previous(table[i].level)
    if level is None:  # available from DML_FEATURE_LEVEL_1_0: there is no earlier level
        assert i == 0 and row.level is LEVELS[0]
        return
    if i == 0:
        with pytest.raises(ValidationError, match=rf"{cls.__name__}: feature_level must be at least {row.level}"):
            compile_operator(BUILDERS[cls](row.dims[1], row.data_types[0]), level)
        return
    before = table[i - 1]
    new_types = [t for t in row.data_types if t not in before.data_types]
    new_index_types = [t for t in row.index_types if t not in before.index_types]
    new_dims = [n for n in range(row.dims[0], row.dims[1] + 1) if not before.dims[0] <= n <= before.dims[1]]
    assert new_types or new_index_types or new_dims, "each row adds something"
    for dtype in new_types:
        with raises_at(level, "input_tensor.dtype must be one of"):
            compile_operator(BUILDERS[cls](before.dims[0], dtype), level)
    for index_dtype in new_index_types:
        with raises_at(level, "indices_tensor.dtype must be one of"):
            compile_operator(BUILDERS[cls](before.dims[0], row.data_types[0], index_dtype), level)
    for n in new_dims:
        with raises_at(level, "input_tensor.dimension_count must be"):
            compile_operator(BUILDERS[cls](n, row.data_types[0]), level)


def random_desc(state_dims, output_dims, dtype=DataType.UINT32, with_state=True):
    state = TensorDesc(dtype, nd(state_dims, 6))
    return RandomGeneratorOperatorDesc(state, TensorDesc(dtype, nd(output_dims, 5)), state if with_state else None)


def test_random_generator_rows():
    at_3_0, at_4_0 = FeatureLevel.FL_3_0, FeatureLevel.FL_4_0
    with pytest.raises(ValidationError, match=r"RandomGeneratorOperatorDesc: feature_level must be at least 3.0"):
        compile_operator(random_desc(4, 4), FeatureLevel.FL_2_1)
    for level in (at_3_0, previous(at_4_0)):  # the 3.0 row: 4 dimensions only
        compile_operator(random_desc(4, 4), level)
        compile_operator(random_desc(4, 4, with_state=False), level)
        for member, dims in (("input_state_tensor", (1, 4)), ("output_tensor", (4, 3)), ("output_tensor", (4, 5))):
            with raises_at(level, f"{member}.dimension_count must be 4 at feature level"):
                compile_operator(random_desc(*dims), level)
        with raises_at(level, "output_tensor.dtype must be one of UINT32", "got output_tensor.dtype=DataType.INT32"):
            desc = RandomGeneratorOperatorDesc(TensorDesc("uint32", nd(4, 6)), TensorDesc("int32", nd(4, 2)))
            compile_operator(desc, level)
    for level in (at_4_0, FeatureLevel.LATEST):  # the 4.0 row: 1 to 8
        for dims in ((1, 1), (8, 8), (1, 8), (8, 1)):
            compile_operator(random_desc(*dims), level)
        with raises_at(level, "input_state_tensor.dtype must be one of UINT32"):
            compile_operator(random_desc(1, 1, DataType.INT32), level)


# --- shape rules between members --------------------------------------------------------

F32, U32 = DataType.FLOAT32, DataType.UINT32


def t(sizes, dtype=F32, strides=None):
    return TensorDesc(dtype, sizes, strides)


SCATTER_RULES = [
    (
        (t((3, 3)), t((2, 2), U32), t((2, 2)), t((3, 3)), 0),
        "indices_tensor.sizes[1] must equal input_tensor.sizes[1] (3)",
    ),
    (
        (t((3, 3)), t((2, 3), U32), t((2, 2)), t((3, 3)), 0),
        "updates_tensor.sizes must equal indices_tensor.sizes ((2, 3))",
    ),
    (
        (t((3, 3)), t((2, 3), U32), t((2, 3)), t((3, 4)), 0),
        "output_tensor.sizes must equal input_tensor.sizes ((3, 3))",
    ),
    (
        (t((3, 3)), t((2, 3), U32), t((2, 3), DataType.INT32), t((3, 3)), 0),
        "updates_tensor.dtype must equal input_tensor",
    ),
    ((t((3, 3)), t((2, 3), U32), t((2, 3)), t((3, 3), DataType.FLOAT16), 0), "output_tensor.dtype must equal"),
    ((t((3, 3)), t((1, 2, 3), U32), t((2, 3)), t((3, 3)), 0), "indices_tensor.dimension_count must equal input_tensor"),
    ((t((3, 3)), t((2, 3), U32), t((2, 3)), t((3, 3)), 2), "axis must be in [0, 2)"),
    ((t((3, 3)), t((2, 3), U32), t((2, 3)), t((3, 3), strides=(0, 1)), 0), "output_tensor.strides must describe each"),
]


@pytest.mark.parametrize(("members", "message"), SCATTER_RULES)
def test_scatter_rules(members, message):
    with pytest.raises(ValidationError, match=re.escape(f"ScatterOperatorDesc: {message}")):
        compile_operator(ScatterOperatorDesc(*members))


def test_error_names_struct_member_rule_level_and_value():
    desc = ScatterOperatorDesc(t((3, 3)), t((2, 2), U32), t((2, 2)), t((3, 3)), axis=0)
    with pytest.raises(ValidationError) as info:
        compile_operator(desc, "3.1")
    assert str(info.value) == (
        "ScatterOperatorDesc: indices_tensor.sizes[1] must equal input_tensor.sizes[1] (3) in every dimension but "
        "axis 0; got indices_tensor.sizes[1]=2 (input_tensor.sizes (3, 3), feature level 3.1)."
    )
    desc = scatter_desc(4, F32, DataType.INT32)
    with pytest.raises(ValidationError) as info:
        compile_operator(desc, FeatureLevel.FL_2_1)
    assert str(info.value) == (
        "ScatterOperatorDesc: indices_tensor.dtype must be one of UINT32 at feature level 2.1; "
        "got indices_tensor.dtype=DataType.INT32."
    )


def test_gather_elements_rules():
    ok = (t((3, 3)), t((2, 3), U32), t((2, 3)))
    compile_operator(GatherElementsOperatorDesc(*ok, axis=0))
    with pytest.raises(
        ValidationError, match=re.escape("output_tensor.sizes must equal indices_tensor.sizes ((2, 3))")
    ):
        compile_operator(GatherElementsOperatorDesc(ok[0], ok[1], t((3, 3)), axis=0))
    with pytest.raises(
        ValidationError, match=re.escape("indices_tensor.sizes[0] must equal input_tensor.sizes[0] (3)")
    ):
        compile_operator(GatherElementsOperatorDesc(*ok, axis=1))
    with pytest.raises(
        ValidationError, match=re.escape("GatherElementsOperatorDesc: feature_level must be at least 2.1")
    ):
        compile_operator(GatherElementsOperatorDesc(*ok, axis=0), "2.0")


@pytest.mark.parametrize(
    ("input_sizes", "indices_sizes", "axis", "index_dimensions", "output_sizes"),
    [
        ((4,), (5,), 0, 1, (5,)),  # DML_GATHER example 1
        ((3, 2), (1, 4), 0, 1, (4, 2)),  # example 2
        ((1, 3, 3), (1, 1, 2), 2, 2, (3, 1, 2)),  # example 4: a leading 1 cropped
        ((1, 3, 2), (1, 2, 2), 1, 2, (2, 2, 2)),  # example 5
        ((1, 3, 2), (1, 1, 1), 1, 0, (1, 1, 2)),  # a scalar index: a leading 1 added
    ],
)
def test_gather_output_sizes_valid(input_sizes, indices_sizes, axis, index_dimensions, output_sizes):
    desc = GatherOperatorDesc(t(input_sizes), t(indices_sizes, U32), t(output_sizes), axis, index_dimensions)
    compile_operator(desc)


@pytest.mark.parametrize(
    ("input_sizes", "indices_sizes", "axis", "index_dimensions", "output_sizes", "message"),
    [
        ((3, 2), (1, 2), 1, 2, (3, 2), "index_dimensions must leave at most 2 dimensions"),  # DML doc example 3
        ((3, 2), (1, 2), 1, 3, (3, 2), "index_dimensions must be in [0, 2]"),
        ((3, 2), (2, 2), 0, 1, (2, 2), "indices_tensor.sizes must be 1 before the last index_dimensions (1) sizes"),
        ((3, 2), (1, 4), 0, 1, (4, 3), "output_tensor.sizes must equal (4, 2)"),
        ((3, 2), (1, 4), 2, 1, (4, 2), "axis must be in [0, 2)"),
        ((3, 2), (4,), 0, 1, (4, 2), "indices_tensor.dimension_count must equal input_tensor.dimension_count (2)"),
    ],
)
def test_gather_rules(input_sizes, indices_sizes, axis, index_dimensions, output_sizes, message):
    desc = GatherOperatorDesc(t(input_sizes), t(indices_sizes, U32), t(output_sizes), axis, index_dimensions)
    with pytest.raises(ValidationError, match=re.escape(f"GatherOperatorDesc: {message}")):
        compile_operator(desc)


SLICE_INPUT = t((1, 1, 4, 4))
SLICE_RULES = [
    ((t((1, 1, 2, 2)), (0, 0, 0, 1), (1, 1, 4, 4), (1, 1, 2, 2)), "input_window_sizes[3] must keep the window inside"),
    ((t((1, 1, 2, 2)), (0, 0, 0, 1), (1, 1, 0, 3), (1, 1, 2, 2)), "input_window_sizes[2] must be >= 1"),
    ((t((1, 1, 2, 2)), (0, 0, 0, 1), (1, 1, 4, 3), (1, 1, 0, 2)), "input_window_strides[2] must be nonzero"),
    ((t((1, 1, 3, 2)), (0, 0, 0, 1), (1, 1, 4, 3), (1, 1, 2, 2)), "output_tensor.sizes[2] must be in [1, 2]"),
    (
        (t((1, 1, 2, 2)), (0, 0, 1), (1, 1, 4, 3), (1, 1, 2, 2)),
        "input_window_offsets must have one entry per dimension",
    ),
    ((t((1, 1, 2, 2)), (0, 0, -1, 1), (1, 1, 4, 3), (1, 1, 2, 2)), "input_window_offsets[2] must be >= 0"),
    (
        (t((1, 1, 2, 2), U32), (0, 0, 0, 1), (1, 1, 4, 3), (1, 1, 2, 2)),
        "output_tensor.dtype must equal input_tensor.dtype",
    ),
    ((t((1, 2, 2)), (0, 0, 0, 1), (1, 1, 4, 3), (1, 1, 2, 2)), "output_tensor.dimension_count must equal input_tensor"),
]


@pytest.mark.parametrize(("members", "message"), SLICE_RULES)
def test_slice1_rules(members, message):
    output, offsets, sizes, strides = members
    with pytest.raises(ValidationError, match=re.escape(f"Slice1OperatorDesc: {message}")):
        compile_operator(Slice1OperatorDesc(SLICE_INPUT, output, offsets, sizes, strides), FeatureLevel.FL_3_0)


def test_slice1_availability_and_largest_output():
    desc = Slice1OperatorDesc(SLICE_INPUT, t((1, 1, 2, 2)), (0, 0, 0, 1), (1, 1, 4, 3), (1, 1, -2, 2))
    compile_operator(desc, "2.1")
    with pytest.raises(
        ValidationError, match=r"Slice1OperatorDesc: feature_level must be at least 2.1.*got feature_level='2.0'"
    ):
        compile_operator(desc, "2.0")


def test_random_generator_rules():
    state = t(nd(4, 6), U32)
    with pytest.raises(ValidationError, match=re.escape("input_state_tensor.sizes must be (1, 1, 1, 6)")):
        compile_operator(RandomGeneratorOperatorDesc(t((1, 1, 2, 6), U32), t(nd(4, 8), U32)))
    with pytest.raises(
        ValidationError, match=re.escape("output_state_tensor.sizes must equal input_state_tensor.sizes")
    ):
        compile_operator(RandomGeneratorOperatorDesc(state, t(nd(4, 8), U32), t((6,), U32)))
    with pytest.raises(ValidationError, match=re.escape("output_tensor.sizes must have at most 4294967295 elements")):
        compile_operator(RandomGeneratorOperatorDesc(state, t((1, 1, 2**16, 2**16), U32, strides=(1, 1, 2**16, 1))))
    with pytest.raises(ValidationError, match=re.escape("output_tensor.strides must describe each element")):
        compile_operator(RandomGeneratorOperatorDesc(state, t((1, 1, 2, 4), U32, strides=(0, 0, 0, 1))))
    with pytest.raises(TypeError, match="type must be one of RandomGeneratorType.PHILOX_4X32_10"):
        RandomGeneratorOperatorDesc(state, state, None, type=0)


def test_buffer_size_rules():
    with pytest.raises(ValidationError, match=r"TensorDesc: total_tensor_size_in_bytes must be at least 12"):
        TensorDesc("float32", (3,), total_tensor_size_in_bytes=8)  # DMLCalcBufferTensorSize, checked on construction
    huge = TensorDesc("uint8", (2,), total_tensor_size_in_bytes=2**32)
    desc = Slice1OperatorDesc(huge, TensorDesc("uint8", (1,)), (0,), (2,), (1,))
    message = "Slice1OperatorDesc: input_tensor.total_tensor_size_in_bytes must be at most 4294967295 elements"
    with pytest.raises(ValidationError, match=re.escape(message) + ".*4294967296 elements of UINT8, feature level"):
        compile_operator(desc)


# --- the dataclasses and the entry point ----------------------------------------------------------


def test_descriptors_are_frozen_hashable_and_named_like_directml():
    desc = scatter_desc(1, F32)
    assert ScatterElementsOperatorDesc is ScatterOperatorDesc
    assert hash(desc) == hash(scatter_desc(1, F32)) and desc == scatter_desc(1, F32)
    with pytest.raises(AttributeError):
        desc.axis = 1
    slice_desc = Slice1OperatorDesc(SLICE_INPUT, t((1, 1, 2, 2)), [0, 0, 0, 1], [1, 1, 4, 3], [1, 1, 2, 2])
    assert slice_desc.input_window_offsets == (0, 0, 0, 1) and slice_desc.dimension_count == 4
    assert RandomGeneratorOperatorDesc(t(nd(4, 6), U32), t(nd(4, 8), U32)).type is RandomGeneratorType.PHILOX_4X32_10


def test_descriptor_members_are_type_checked():
    with pytest.raises(
        TypeError, match=r"ScatterOperatorDesc: indices_tensor must be a TensorDesc; got indices_tensor="
    ):
        ScatterOperatorDesc(t((3,)), (3,), t((3,)), t((3,)), 0)
    with pytest.raises(TypeError, match="ScatterOperatorDesc: axis must be an integer; got axis=True"):
        ScatterOperatorDesc(t((3,)), t((3,), U32), t((3,)), t((3,)), True)
    with pytest.raises(
        TypeError, match=r"input_window_strides\[1\] must be an integer; got input_window_strides\[1\]=1.5"
    ):
        Slice1OperatorDesc(t((4, 4)), t((2, 2)), (0, 0), (4, 4), (2, 1.5))


def test_compile_operator_arguments():
    desc = scatter_desc(1, F32)
    compile_operator(desc, 0x3000)
    compile_operator(desc, "DML_FEATURE_LEVEL_3_0")
    with pytest.raises(TypeError, match="compile_operator: feature_level must be a DirectML feature level"):
        compile_operator(desc, "9.9")
    with pytest.raises(
        TypeError,
        match="compile_operator: desc must be one of GatherElementsOperatorDesc, GatherOperatorDesc, "
        "RandomGeneratorOperatorDesc, ScatterOperatorDesc, Slice1OperatorDesc; got desc=TensorDesc",
    ):
        compile_operator(t((3,)))
