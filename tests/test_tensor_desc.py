"""TensorDesc, calc_buffer_tensor_size, packed_strides, DataType, FeatureLevel (the strides page).

Worked examples: https://learn.microsoft.com/en-us/windows/ai/directml/dml-strides
"""

import jax.numpy as jnp
import numpy as np
import pytest

import dmljax
from dmljax import DataType, TensorDesc, ValidationError, calc_buffer_tensor_size, packed_strides
from dmljax.descriptors import FeatureLevel
from tests import reference

# --- the strides page's worked examples ----------------------------------------------


def test_strides_page_dhw_offset_of_h_is_7():
    # 2x2x3 "DHW": strides {6, 3, 1}; element H at (d=1, h=0, w=1) is at offset 7.
    desc = TensorDesc("uint8", (2, 2, 3))
    assert desc.strides == (6, 3, 1)
    assert reference.offset((1, 0, 1), desc.strides) == 7


def test_strides_page_nchw_explicit_and_nhwc_strides():
    assert packed_strides((1, 1, 3, 5)) == (15, 15, 5, 1)
    assert packed_strides((1, 1, 3, 5), layout="NCHW") == (15, 15, 5, 1)
    assert packed_strides((1, 1, 3, 5), layout="NHWC") == (15, 1, 5, 1)


def test_strides_page_column_major_wh():
    assert packed_strides((2, 3), layout="WH") == (1, 2)
    assert packed_strides((2, 3), layout="HW") == (3, 1)


@pytest.mark.parametrize(
    ("sizes", "layout", "expected"),
    [
        ((2, 3, 4, 5), "NHWC", (60, 1, 15, 3)),
        ((2, 3, 4, 5, 6), "NDHWC", (360, 1, 90, 18, 3)),
        ((2, 3, 4, 5, 6), "NCDHW", (360, 120, 30, 6, 1)),
        ((2, 3, 4), "WHD", (1, 2, 6)),
        ((2, 3, 4, 5), "CNHW", (20, 40, 5, 1)),
    ],
)
def test_packed_strides_layouts(sizes, layout, expected):
    assert packed_strides(sizes, layout=layout) == expected
    desc = TensorDesc("float32", sizes, strides=expected)
    assert desc.is_packed


def test_strides_page_broadcast_and_padding_are_not_packed():
    broadcast = TensorDesc("float32", (2, 3), strides=(0, 1))
    padded = TensorDesc("float32", (2, 3), strides=(5, 1))
    assert not broadcast.is_packed and broadcast.has_aliasing
    assert not padded.is_packed and not padded.has_aliasing
    assert broadcast.min_buffer_elements == 3
    assert padded.min_buffer_elements == 8


# --- DMLCalcBufferTensorSize ----------------------------------------------------------


@pytest.mark.parametrize(
    ("dtype", "sizes", "strides", "expected"),
    [
        ("float32", (1, 1, 3, 5), None, 60),
        ("float16", (1, 1, 3, 5), None, 32),  # 30 bytes rounded up to 4
        ("float16", (1,), None, 4),
        ("uint8", (3,), None, 4),
        ("int8", (2, 3), (0, 1), 4),  # 3 bytes
        ("float32", (2, 3), (0, 1), 12),
        ("float32", (2, 3), (5, 1), 32),
        ("float64", (2, 3), None, 48),
        ("int64", (2, 3), (1, 2), 48),
        ("uint64", (7,), (3,), 152),
        ("float32", (5, 5), (0, 0), 4),  # one element broadcast everywhere
        ("float32", (2**31, 4), None, 2**35),  # past 32 bits
        ("float64", (2**20, 2**20), (2**20, 1), 2**43),
    ],
)
def test_calc_buffer_tensor_size(dtype, sizes, strides, expected):
    assert calc_buffer_tensor_size(dtype, sizes, strides) == expected
    itemsize = DataType[dtype.upper()].itemsize
    assert reference.calc_buffer_tensor_size(itemsize, sizes, strides) == expected


def test_calc_buffer_tensor_size_random_against_reference():
    rng = np.random.default_rng(0)
    for _ in range(200):
        rank = int(rng.integers(1, 9))
        sizes = tuple(int(n) for n in rng.integers(1, 6, rank))
        strides = tuple(int(s) for s in rng.integers(0, 40, rank)) if rng.random() < 0.7 else None
        dtype = rng.choice([m for m in DataType])
        expected = reference.calc_buffer_tensor_size(dtype.itemsize, sizes, strides)
        assert calc_buffer_tensor_size(dtype, sizes, strides) == expected


# --- TensorDesc -----------------------------------------------------------------------


def test_tensor_desc_is_hashable_frozen_and_normalised():
    a = TensorDesc(np.float32, [2, 3])
    b = TensorDesc(DataType.FLOAT32, (2, 3), strides=(3, 1))
    assert a == b and hash(a) == hash(b)
    assert a.dtype is DataType.FLOAT32 and a.sizes == (2, 3) and a.element_count == 6
    with pytest.raises(AttributeError):
        a.sizes = (1,)  # type: ignore[misc]


def test_tensor_desc_total_size_given_or_minimum():
    assert TensorDesc("float16", (3,)).total_tensor_size_in_bytes == 8
    desc = TensorDesc("float16", (3,), total_tensor_size_in_bytes=64)
    assert desc.total_tensor_size_in_bytes == 64 and desc.buffer_elements == 32


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"sizes": ()}, r"TensorDesc: sizes must have 1 to 8 dimensions; got sizes=\(\)"),
        ({"sizes": (1,) * 9}, r"sizes must have 1 to 8 dimensions; got sizes=\(1, 1, 1, 1, 1, 1, 1, 1, 1\)"),
        ({"sizes": (2, 0)}, r"TensorDesc: sizes\[1\] must be in \[1, 2\*\*32 - 1\]; got sizes\[1\]=0"),
        ({"sizes": (2, -3)}, r"sizes\[1\]=-3"),
        ({"sizes": (2**32,)}, r"sizes\[0\]=4294967296"),
        ({"sizes": (2, 2.5)}, r"sizes\[1\] must be an integer; got sizes\[1\]=2.5"),
        ({"sizes": 5}, r"sizes must be a sequence of integers; got sizes=5"),
        ({"sizes": (2, 3), "strides": (1,)}, r"strides must have one stride per dimension \(2\); got strides=\(1,\)"),
        ({"sizes": (2, 3), "strides": (3, -1)}, r"strides\[1\] must be in \[0, 2\*\*32 - 1\]; got strides\[1\]=-1"),
        (
            {"sizes": (2, 3), "total_tensor_size_in_bytes": 20},
            r"total_tensor_size_in_bytes must be at least 24; got total_tensor_size_in_bytes=20",
        ),
    ],
)
def test_tensor_desc_errors(kwargs, match):
    with pytest.raises(ValidationError, match=match):
        TensorDesc("float32", **kwargs)


def test_tensor_desc_rejects_unknown_dtype_with_type_error():
    with pytest.raises(TypeError, match=r"TensorDesc: dtype must be one of .*; got dtype='float8'"):
        TensorDesc("float8", (2,))


def test_packed_strides_errors():
    with pytest.raises(ValidationError, match=r"packed_strides: layout must have one letter per dimension"):
        packed_strides((2, 3), layout="NCHW")
    with pytest.raises(ValidationError, match=r"layout must be distinct letters from 'NCDHW'; got layout='NHHW'"):
        packed_strides((1, 2, 3, 4), layout="NHHW")


# --- DataType and FeatureLevel --------------------------------------------------------


@pytest.mark.parametrize("member", list(DataType))
def test_data_type_accepts_member_dtype_and_names(member):
    assert dmljax.DataType(member.value) is member
    assert dmljax._core.dtypes.as_data_type(member.dtype) is member
    assert dmljax._core.dtypes.as_data_type(member.name.lower()) is member
    assert dmljax._core.dtypes.as_data_type("DML_TENSOR_DATA_TYPE_" + member.name) is member


def test_data_type_accepts_jax_scalar_types():
    assert dmljax._core.dtypes.as_data_type(jnp.bfloat16) is DataType.BFLOAT16
    assert dmljax._core.dtypes.as_data_type(jnp.uint32) is DataType.UINT32


def test_feature_levels_are_ordered_with_latest():
    levels = [level for level in FeatureLevel]
    assert levels == sorted(levels)
    assert str(levels[0]) == "1.0" and FeatureLevel.LATEST == levels[-1] == FeatureLevel.FL_6_4
    names = {level.name for level in levels}
    assert {"FL_1_0", "FL_2_0", "FL_2_1", "FL_3_0", "FL_3_1", "FL_4_0", "FL_4_1", "FL_5_0", "FL_6_4"} <= names
