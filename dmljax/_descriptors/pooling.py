"""DML_MAX_POOLING2, DML_MAX_UNPOOLING, DML_UNFOLD and DML_FOLD: the structs, their tables, their rules.

https://learn.microsoft.com/en-us/windows/win32/api/directml/ns-directml-dml_max_pooling2_operator_desc
https://learn.microsoft.com/en-us/windows/win32/api/directml/ns-directml-dml_max_unpooling_operator_desc
https://learn.microsoft.com/en-us/windows/ai/directml/api/ns-directml-dml_unfold_operator_desc
https://learn.microsoft.com/en-us/windows/ai/directml/api/ns-directml-dml_fold_operator_desc
Semantics: `dmljax.max_pool_with_indices`, `dmljax.max_unpool`, `dmljax.unfold`,
`dmljax.fold`. The window arrays (``strides``, ``window_size``, ``start_padding``,
``end_padding``, ``dilations``) have one value per spatial dimension (DirectML's
``DimensionCount`` is their length). MAX_POOLING2's page computes the output sizes
without the dilations; dmljax uses ONNX's formula with them (the pages of UNFOLD/FOLD
give it as ``BlocksPerDimension``), the same when every dilation is 1.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import jax

from dmljax._buffers.tensor_desc import TensorDesc
from dmljax._core.dtypes import DataType
from dmljax._descriptors.feature_levels import FeatureLevel
from dmljax._descriptors.members import ints_member, set_tensors
from dmljax._descriptors.registry import Operator, register
from dmljax._descriptors.support import FL2_1_DATA_TYPES, SupportRow
from dmljax._descriptors.validate import Check, check_output, check_tensor, same, tensors_of
from dmljax._ops.vision.fold import fold_spec, fold_validated, unfold_spec, unfold_validated
from dmljax._ops.vision.pooling import max_pool_validated, max_unpool_validated, pool_spec

__all__ = [
    "FOLD_SUPPORT",
    "MAX_POOLING2_SUPPORT",
    "MAX_UNPOOLING_SUPPORT",
    "UNFOLD_SUPPORT",
    "FoldOperatorDesc",
    "MaxPooling2OperatorDesc",
    "MaxUnpoolingOperatorDesc",
    "UnfoldOperatorDesc",
]

_FLOATS = (DataType.FLOAT32, DataType.FLOAT16)
# The 64/32/16/8-bit integer types join the floats at 5.0 on both pooling pages (no FLOAT64).
_FL5_0_TYPES = tuple(DataType[n] for n in "FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8".split())
_FL5_0_INDICES = (DataType.UINT64, DataType.UINT32)
# The pages' "Tensor support" tables (their Markdown source, github.com/MicrosoftDocs/sdk-api,
# checked against learn.microsoft.com). DML_MAX_POOLING2: introduced in 2.1, 4 to 5
# dimensions, FLOAT32/FLOAT16 with UINT32 indices; INT8/UINT8 from 3.0; from 5.0 the 64/32/16/8-
# bit integers and UINT64 indices too.
MAX_POOLING2_SUPPORT = (
    SupportRow(FeatureLevel.FL_2_1, (4, 5), _FLOATS, (DataType.UINT32,)),
    SupportRow(FeatureLevel.FL_3_0, (4, 5), (*_FLOATS, DataType.INT8, DataType.UINT8), (DataType.UINT32,)),
    SupportRow(FeatureLevel.FL_5_0, (4, 5), _FL5_0_TYPES, _FL5_0_INDICES),
)
# DML_MAX_UNPOOLING: introduced in 3.0 (not 2.1) with 4 dimensions, FLOAT32/FLOAT16 data and
# UINT32 indices; from 5.0 the 64/32/16/8-bit integers and UINT64 indices too.
MAX_UNPOOLING_SUPPORT = (
    SupportRow(FeatureLevel.FL_3_0, (4, 4), _FLOATS, (DataType.UINT32,)),
    SupportRow(FeatureLevel.FL_5_0, (4, 4), _FL5_0_TYPES, _FL5_0_INDICES),
)
# DML_UNFOLD / DML_FOLD: introduced in 6.4 (DirectML 1.15.1), 3 to 8 dimensions (the pages'
# tables, MicrosoftDocs/windows-ai-docs docs/directml/api/). Their "Supported data types"
# cells are empty: the 32/16/8-bit types of 2.1 here are unverified.
UNFOLD_SUPPORT = (SupportRow(FeatureLevel.FL_6_4, (3, 8), FL2_1_DATA_TYPES),)
FOLD_SUPPORT = (SupportRow(FeatureLevel.FL_6_4, (3, 8), FL2_1_DATA_TYPES),)

_WINDOW_MEMBERS = ("strides", "window_size", "start_padding", "end_padding", "dilations", "window_sizes")


def _members(desc: Any) -> None:
    set_tensors(desc, "output_indices_tensor")
    struct = type(desc).__name__
    for member in _WINDOW_MEMBERS:
        if hasattr(desc, member):
            object.__setattr__(desc, member, ints_member(struct, member, getattr(desc, member)))


@dataclasses.dataclass(frozen=True)
class MaxPooling2OperatorDesc:
    """DML_MAX_POOLING2_OPERATOR_DESC: the maximum of each window and, optionally, its flat index.

    Attributes:
      input_tensor: ``{N, C, H, W}`` or ``{N, C, D, H, W}``.
      output_tensor: ``{N, C, blocks...}``, the input's type.
      output_indices_tensor: None, or UINT32 of the output's sizes: flat indices into the
        input (the first of equal values).
      strides, window_size, start_padding, end_padding, dilations: one int per spatial
        dimension.
    """

    input_tensor: TensorDesc
    output_tensor: TensorDesc
    output_indices_tensor: TensorDesc | None
    strides: tuple[int, ...]
    window_size: tuple[int, ...]
    start_padding: tuple[int, ...]
    end_padding: tuple[int, ...]
    dilations: tuple[int, ...]

    def __post_init__(self) -> None:
        _members(self)


@dataclasses.dataclass(frozen=True)
class MaxUnpoolingOperatorDesc:
    """DML_MAX_UNPOOLING_OPERATOR_DESC: ``output.flat[indices[p]] = input[p]``, zeros elsewhere.

    Attributes:
      input_tensor: the pooled values.
      indices_tensor: UINT32 or UINT64 of the input's sizes, flat offsets into the output.
      output_tensor: the input's type and dimension count. Out-of-range indices write
        nothing (the page); duplicates: the last in row-major order (the page: undefined).
    """

    input_tensor: TensorDesc
    indices_tensor: TensorDesc
    output_tensor: TensorDesc

    def __post_init__(self) -> None:
        set_tensors(self)


@dataclasses.dataclass(frozen=True)
class UnfoldOperatorDesc:
    """DML_UNFOLD_OPERATOR_DESC: every window as a column, ``{N, C * prod(window_sizes), blocks}``.

    Attributes:
      input_tensor: ``{N, C, spatial...}`` (1 to 6 spatial dimensions).
      output_tensor: ``{N, C * prod(window_sizes), blocks}``, the input's type.
      window_sizes, strides, dilations, start_padding, end_padding: one int per spatial dimension.
    """

    input_tensor: TensorDesc
    output_tensor: TensorDesc
    window_sizes: tuple[int, ...]
    strides: tuple[int, ...]
    dilations: tuple[int, ...]
    start_padding: tuple[int, ...]
    end_padding: tuple[int, ...]

    def __post_init__(self) -> None:
        _members(self)


@dataclasses.dataclass(frozen=True)
class FoldOperatorDesc:
    """DML_FOLD_OPERATOR_DESC: columns summed into ``{N, C, output spatial...}`` (window offsets outer).

    Attributes:
      input_tensor: ``{N, C * prod(window_sizes), blocks}``.
      output_tensor: ``{N, C, spatial...}``, the input's type; its sizes give the spatial shape.
      window_sizes, strides, dilations, start_padding, end_padding: one int per spatial dimension.
    """

    input_tensor: TensorDesc
    output_tensor: TensorDesc
    window_sizes: tuple[int, ...]
    strides: tuple[int, ...]
    dilations: tuple[int, ...]
    start_padding: tuple[int, ...]
    end_padding: tuple[int, ...]

    def __post_init__(self) -> None:
        _members(self)


def _counts(row: SupportRow) -> tuple[int, ...]:
    return tuple(range(row.dims[0], row.dims[1] + 1))


def _same_window_lengths(check: Check, desc: Any, window: str, count: int) -> None:
    for member in (window, *(m for m in _WINDOW_MEMBERS if m != "window_size" and hasattr(desc, m))):
        if len(getattr(desc, member)) != count:
            raise check.error(member, f"have one value per spatial dimension ({count})", getattr(desc, member))


def _pool_args(desc: MaxPooling2OperatorDesc) -> tuple[Any, ...]:
    return desc.window_size, desc.strides, desc.start_padding, desc.end_padding, desc.dilations


def _validate_pool(check: Check, row: SupportRow, desc: MaxPooling2OperatorDesc) -> None:
    tensors = tensors_of(desc)
    for member in ("input_tensor", "output_tensor"):
        check_tensor(check, member, tensors[member], _counts(row), row.data_types)
    same(check, tensors, "output_tensor", "input_tensor", "dtype")
    same(check, tensors, "output_tensor", "input_tensor", "dimension_count")
    sizes = desc.input_tensor.sizes
    _same_window_lengths(check, desc, "window_size", len(sizes) - 2)
    spec = pool_spec(check.struct, sizes, *_pool_args(desc))  # the window rules, named for the struct
    expected = sizes[:2] + spec.blocks
    if desc.output_tensor.sizes != expected:
        raise check.error("output_tensor.sizes", f"equal {expected}", desc.output_tensor.sizes)
    if desc.output_indices_tensor is not None:
        check_tensor(check, "output_indices_tensor", desc.output_indices_tensor, _counts(row), row.index_types)
        same(check, tensors, "output_indices_tensor", "output_tensor", "sizes")
        check_output(check, "output_indices_tensor", desc.output_indices_tensor)
    check_output(check, "output_tensor", desc.output_tensor)


def _validate_unpool(check: Check, row: SupportRow, desc: MaxUnpoolingOperatorDesc) -> None:
    tensors = tensors_of(desc)
    for member in ("input_tensor", "output_tensor"):
        check_tensor(check, member, tensors[member], _counts(row), row.data_types)
    check_tensor(check, "indices_tensor", desc.indices_tensor, _counts(row), row.index_types)
    same(check, tensors, "output_tensor", "input_tensor", "dtype")
    same(check, tensors, "indices_tensor", "input_tensor", "sizes")
    check_output(check, "output_tensor", desc.output_tensor)


def _fold_args(desc: Any) -> tuple[Any, ...]:
    return desc.window_sizes, desc.strides, desc.dilations, desc.start_padding, desc.end_padding


def _validate_unfold(check: Check, row: SupportRow, desc: UnfoldOperatorDesc) -> None:
    tensors = tensors_of(desc)
    check_tensor(check, "input_tensor", desc.input_tensor, _counts(row), row.data_types)
    check_tensor(check, "output_tensor", desc.output_tensor, (3,), row.data_types)
    same(check, tensors, "output_tensor", "input_tensor", "dtype")
    sizes = desc.input_tensor.sizes
    _same_window_lengths(check, desc, "window_sizes", len(sizes) - 2)
    spec = unfold_spec(
        check.struct, sizes, *_fold_args(desc)
    )  # window rules: the array layer's errors, named for the struct
    expected = (sizes[0], sizes[1] * spec.window_size, math.prod(spec.blocks))
    if desc.output_tensor.sizes != expected:
        raise check.error("output_tensor.sizes", f"equal {expected}", desc.output_tensor.sizes)
    check_output(check, "output_tensor", desc.output_tensor)


def _validate_fold(check: Check, row: SupportRow, desc: FoldOperatorDesc) -> None:
    tensors = tensors_of(desc)
    check_tensor(check, "input_tensor", desc.input_tensor, (3,), row.data_types)
    check_tensor(check, "output_tensor", desc.output_tensor, _counts(row), row.data_types)
    same(check, tensors, "output_tensor", "input_tensor", "dtype")
    out = desc.output_tensor.sizes
    _same_window_lengths(check, desc, "window_sizes", len(out) - 2)
    spec = fold_spec(
        check.struct, desc.input_tensor.sizes, out[2:], *_fold_args(desc)
    )  # window rules: the array layer's errors, named for the struct
    channels = desc.input_tensor.sizes[1] // spec.window_size
    if out[:2] != (desc.input_tensor.sizes[0], channels):
        rule = f"start with (N, C) = {(desc.input_tensor.sizes[0], channels)}"
        raise check.error("output_tensor.sizes", rule, out)
    check_output(check, "output_tensor", desc.output_tensor)


def _apply_pool(desc: MaxPooling2OperatorDesc, x: jax.Array) -> tuple[jax.Array, ...]:
    spec = pool_spec("MaxPooling2OperatorDesc", x.shape, *_pool_args(desc))
    values, indices = max_pool_validated(x, spec)
    if desc.output_indices_tensor is None:
        return (values,)
    return values, indices.astype(desc.output_indices_tensor.dtype.dtype)


def _apply_unpool(desc: MaxUnpoolingOperatorDesc, x: jax.Array, indices: jax.Array) -> tuple[jax.Array]:
    return (max_unpool_validated(x, indices, desc.output_tensor.sizes),)


def _apply_unfold(desc: UnfoldOperatorDesc, x: jax.Array) -> tuple[jax.Array]:
    return (unfold_validated(x, unfold_spec("UnfoldOperatorDesc", x.shape, *_fold_args(desc))),)


def _apply_fold(desc: FoldOperatorDesc, cols: jax.Array) -> tuple[jax.Array]:
    spatial = desc.output_tensor.sizes[2:]
    return (fold_validated(cols, fold_spec("FoldOperatorDesc", cols.shape, spatial, *_fold_args(desc))),)


register(Operator(MaxPooling2OperatorDesc, MAX_POOLING2_SUPPORT, _validate_pool, ("input_tensor",), _apply_pool))
register(
    Operator(
        MaxUnpoolingOperatorDesc,
        MAX_UNPOOLING_SUPPORT,
        _validate_unpool,
        ("input_tensor", "indices_tensor"),
        _apply_unpool,
    )
)
register(Operator(UnfoldOperatorDesc, UNFOLD_SUPPORT, _validate_unfold, ("input_tensor",), _apply_unfold))
register(Operator(FoldOperatorDesc, FOLD_SUPPORT, _validate_fold, ("input_tensor",), _apply_fold))
