"""compile_operator's validation: every support-table row just valid and just invalid, shape rules, messages."""

import re

import pytest

from dmljax import DataType, TensorDesc, ValidationError
from dmljax._descriptors.registry import registered
from dmljax.descriptors import (
    FeatureLevel,
    GatherElementsOperatorDesc,
    GatherNDOperatorDesc,
    GatherOperatorDesc,
    RandomGeneratorOperatorDesc,
    RandomGeneratorType,
    ScatterElementsOperatorDesc,
    ScatterNDOperatorDesc,
    ScatterOperatorDesc,
    Slice1OperatorDesc,
    compile_operator,
)

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


def gather_nd_desc(n, dtype, index_dtype=DataType.UINT32):
    """Two 1-tuples into 3 values: ``n``-D input (3), indices (2, 1), output (2)."""
    index_sizes = (2, 1) if n > 1 else (1,)
    data, out = TensorDesc(dtype, nd(n, 3)), TensorDesc(dtype, nd(n, index_sizes[0]))
    index = TensorDesc(index_dtype, (1,) * (n - len(index_sizes)) + index_sizes)
    return GatherNDOperatorDesc(data, index, out, 1, len(index_sizes), 0)


def scatter_nd_desc(n, dtype, index_dtype=DataType.UINT32):
    """Two 1-tuples into 3 values: ``n``-D input (3), indices (2, 1), updates (2)."""
    index_sizes = (2, 1) if n > 1 else (1,)
    data, updates = TensorDesc(dtype, nd(n, 3)), TensorDesc(dtype, nd(n, index_sizes[0]))
    index = TensorDesc(index_dtype, (1,) * (n - len(index_sizes)) + index_sizes)
    return ScatterNDOperatorDesc(data, index, updates, data, 1, len(index_sizes))


def slice1_desc(n, dtype, index_dtype=None):
    data, out = TensorDesc(dtype, nd(n, 4)), TensorDesc(dtype, nd(n, 2))
    return Slice1OperatorDesc(data, out, (0,) * n, nd(n, 4), nd(n, 2))


BUILDERS = {
    ScatterOperatorDesc: scatter_desc,
    GatherOperatorDesc: gather_desc,
    GatherElementsOperatorDesc: gather_elements_desc,
    GatherNDOperatorDesc: gather_nd_desc,
    ScatterNDOperatorDesc: scatter_nd_desc,
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


def gnd(input_sizes, indices_sizes, output_sizes, counts, dtypes=(F32, U32, F32), output_strides=None):
    tensors = (t(input_sizes, dtypes[0]), t(indices_sizes, dtypes[1]), t(output_sizes, dtypes[2], output_strides))
    return GatherNDOperatorDesc(*tensors, *counts)


@pytest.mark.parametrize(
    ("input_sizes", "indices_sizes", "output_sizes", "counts"),
    [
        ((2, 2), (2, 1), (2, 2), (2, 2, 0)),  # DML_GATHER_ND1 example 1
        ((1, 3, 2, 2), (1, 3, 2, 2), (1, 1, 3, 2), (3, 3, 1)),  # example 2: 3 batches
        ((3, 4, 5, 6, 7), (1, 1, 1, 2, 3), (1, 1, 2, 6, 7), (5, 3, 0)),  # the member page's sizes
        ((1, 3, 4), (1, 1, 1), (1, 1, 4), (2, 1, 0)),  # output (4,): leading 1s added
        ((2, 3, 4), (1, 1, 1), (1, 3, 4), (3, 3, 0)),  # output (1, 1, 3, 4): a leading 1 cropped
    ],
)
def test_gather_nd_sizes_valid(input_sizes, indices_sizes, output_sizes, counts):
    compile_operator(gnd(input_sizes, indices_sizes, output_sizes, counts))


GATHER_ND_RULES = [
    ((2, 2), (2, 1), (2, 2), (3, 2, 0), "input_dimension_count must be in [1, 2] (input_tensor.dimension_count)"),
    ((2, 2), (2, 1), (2, 2), (2, 0, 0), "indices_dimension_count must be in [1, 2]"),
    ((2, 2), (2, 1), (2, 2), (1, 2, 0), "input_tensor.sizes must be 1 before the last input_dimension_count (1)"),
    ((2, 2), (2, 1), (1, 2), (2, 1, 0), "indices_tensor.sizes must be 1 before the last indices_dimension_count (1)"),
    ((2, 2), (2, 1), (2, 2), (2, 2, 2), "batch_dimension_count must be in [0, 2) (min of input_dimension_count"),
    ((2, 2), (3, 1), (1, 3), (2, 2, 1), "indices_tensor.sizes must equal the input's batch sizes (2,)"),
    ((2, 2), (1, 3), (1, 1), (2, 2, 0), "indices_tensor.sizes[-1] must be in [1, 2] (input_dimension_count - batch"),
    ((2, 2), (2, 1), (2, 3), (2, 2, 0), "output_tensor.sizes must equal (2, 2) (the indices' sizes but the last"),
    ((2, 3, 4), (5, 6, 1), (6, 3, 4), (3, 3, 0), "output_tensor.dimension_count must hold (5, 6, 3, 4) once leading"),
]


@pytest.mark.parametrize(("input_sizes", "indices_sizes", "output_sizes", "counts", "message"), GATHER_ND_RULES)
def test_gather_nd_rules(input_sizes, indices_sizes, output_sizes, counts, message):
    with pytest.raises(ValidationError, match=re.escape(f"GatherNDOperatorDesc: {message}")):
        compile_operator(gnd(input_sizes, indices_sizes, output_sizes, counts))


def test_gather_nd_member_rules():
    with pytest.raises(ValidationError, match=re.escape("output_tensor.dtype must equal input_tensor.dtype")):
        compile_operator(gnd((2, 2), (2, 1), (2, 2), (2, 2), (F32, U32, DataType.FLOAT16)))
    with pytest.raises(ValidationError, match=re.escape("indices_tensor.dimension_count must equal input_tensor")):
        compile_operator(gnd((2, 2), (1, 2, 1), (2, 2), (2, 2)))
    with pytest.raises(ValidationError, match=re.escape("output_tensor.strides must describe each element")):
        compile_operator(gnd((2, 2), (2, 1), (2, 2), (2, 2), output_strides=(0, 1)))
    with pytest.raises(TypeError, match="GatherNDOperatorDesc: batch_dimension_count must be an integer; got batch_"):
        gnd((2, 2), (2, 1), (2, 2), (2, 2, 0.0))


def snd(input_sizes, indices_sizes, updates_sizes, counts, output_sizes=None, updates_dtype=F32):
    data = t(input_sizes)
    output = data if output_sizes is None else t(output_sizes)
    return ScatterNDOperatorDesc(data, t(indices_sizes, U32), t(updates_sizes, updates_dtype), output, *counts)


SCATTER_ND_RULES = [
    ((1, 8), (4, 1), (1, 4), (3, 2), "input_dimension_count must be in [1, 2]"),
    ((1, 8), (4, 1), (1, 4), (1, 3), "indices_dimension_count must be in [1, 2]"),
    ((2, 8), (4, 1), (1, 4), (1, 2), "input_tensor.sizes must be 1 before the last input_dimension_count (1) sizes"),
    ((1, 8), (4, 1), (1, 4), (1, 1), "indices_tensor.sizes must be 1 before the last indices_dimension_count (1)"),
    ((1, 8), (1, 2), (1, 1), (1, 2), "indices_tensor.sizes[-1] must be in [1, 1] (input_dimension_count: one"),
    ((1, 8), (4, 1), (4, 1), (1, 2), "updates_tensor.sizes must equal (1, 4) (the indices' sizes but the last"),
    ((3, 4), (2, 1), (2, 4), (2, 2), None),  # valid: rows
    ((3, 4), (5, 2, 1), (5, 2, 4), (2, 3), "indices_tensor.dimension_count must equal input_tensor.dimension_count"),
]


@pytest.mark.parametrize(("input_sizes", "indices_sizes", "updates_sizes", "counts", "message"), SCATTER_ND_RULES)
def test_scatter_nd_rules(input_sizes, indices_sizes, updates_sizes, counts, message):
    desc = snd(input_sizes, indices_sizes, updates_sizes, counts)
    if message is None:
        compile_operator(desc)
        return
    with pytest.raises(ValidationError, match=re.escape(f"ScatterNDOperatorDesc: {message}")):
        compile_operator(desc)


def test_scatter_nd_member_rules():
    with pytest.raises(ValidationError, match=re.escape("output_tensor.sizes must equal input_tensor.sizes ((3, 4))")):
        compile_operator(snd((3, 4), (2, 1), (2, 4), (2, 2), output_sizes=(4, 4)))
    with pytest.raises(ValidationError, match=re.escape("updates_tensor.dtype must equal input_tensor.dtype")):
        compile_operator(snd((3, 4), (2, 1), (2, 4), (2, 2), updates_dtype=DataType.INT32))
    with pytest.raises(
        ValidationError, match=re.escape("updates_tensor.dimension_count must hold (5, 6, 3, 4) once leading 1s")
    ):
        compile_operator(snd((2, 3, 4), (5, 6, 1), (6, 3, 4), (3, 3)))
    with pytest.raises(ValidationError) as info:
        compile_operator(snd((1, 1, 1, 8), (1, 1, 4, 2), (1, 1, 1, 4), (1, 2)), "2.1")
    assert str(info.value) == (
        "ScatterNDOperatorDesc: indices_tensor.sizes[-1] must be in [1, 1] (input_dimension_count: one index per "
        "dimension); got indices_tensor.sizes[-1]=2 (meaningful input sizes (8,), feature level 2.1)."
    )


def test_nd_feature_levels_as_the_pages_state_them():
    """GatherND1 from 3.0 (1 to 8 dimensions); ScatterND from 2.1 (4-D, UINT32 indices), 1 to 8 from 3.0; 64-bit 4.1."""
    with pytest.raises(ValidationError, match=r"GatherNDOperatorDesc: feature_level must be at least 3.0 .*'2.1'"):
        compile_operator(gather_nd_desc(4, F32), "2.1")
    with pytest.raises(ValidationError, match=r"ScatterNDOperatorDesc: feature_level must be at least 2.1 .*'2.0'"):
        compile_operator(scatter_nd_desc(4, F32), "2.0")
    compile_operator(scatter_nd_desc(4, DataType.INT8), "2.1")
    with raises_at("2.1", "ScatterNDOperatorDesc: input_tensor.dimension_count must be 4", "=2"):
        compile_operator(scatter_nd_desc(2, F32), "2.1")
    with raises_at("2.1", "indices_tensor.dtype must be one of UINT32", "DataType.INT32"):
        compile_operator(scatter_nd_desc(4, F32, DataType.INT32), "2.1")
    for build in (gather_nd_desc, scatter_nd_desc):
        compile_operator(build(1, F32, DataType.INT64), "3.0")
        compile_operator(build(8, DataType.UINT64), "4.1")
        with raises_at("4.0", "input_tensor.dtype must be one of", "DataType.FLOAT64"):
            compile_operator(build(2, DataType.FLOAT64), "4.0")


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
        match="compile_operator: desc must be one of .*GatherElementsOperatorDesc, GatherNDOperatorDesc, "
        "GatherOperatorDesc, .*RandomGeneratorOperatorDesc, .*ScatterNDOperatorDesc, ScatterOperatorDesc, "
        "Slice1OperatorDesc, .*; got desc=TensorDesc",
    ):
        compile_operator(t((3,)))
