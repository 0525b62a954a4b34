"""DML_GATHER_OPERATOR_DESC: the struct, its support table, its rules, registered once.

https://learn.microsoft.com/en-us/windows/win32/api/directml/ns-directml-dml_gather_operator_desc
Semantics: `dmljax.gather` (ONNX Gather) on the indices' last ``index_dimensions`` dimensions.
"""

from __future__ import annotations

import dataclasses

import jax

from dmljax._buffers.tensor_desc import TensorDesc
from dmljax._core.dtypes import DataType
from dmljax._core.limits import MAX_DIMENSIONS
from dmljax._descriptors.feature_levels import FeatureLevel
from dmljax._descriptors.members import int_member, set_tensors
from dmljax._descriptors.registry import Operator, register
from dmljax._descriptors.support import (
    FL1_0_DATA_TYPES,
    FL2_1_DATA_TYPES,
    FL3_0_INDEX_TYPES,
    FL4_1_DATA_TYPES,
    SupportRow,
)
from dmljax._descriptors.validate import Check, check_indexing
from dmljax._ops.index.gather import gather_validated

__all__ = ["GATHER_SUPPORT", "GatherOperatorDesc", "gather_output_sizes"]


@dataclasses.dataclass(frozen=True)
class GatherOperatorDesc:
    """DML_GATHER_OPERATOR_DESC: gather slices along ``axis``, with ``index_dimensions``.

    Every tensor has the same dimension count. Only the last ``index_dimensions`` sizes of
    ``indices_tensor`` hold indices (the leading ones are 1). The output sizes are
    ``input.sizes[:axis] + indices.sizes[-index_dimensions:] + input.sizes[axis + 1:]``,
    right-aligned to the dimension count (leading 1s cropped or added). Semantics from
    `dmljax.gather` (ONNX Gather) on the indices' last ``index_dimensions`` dimensions.

    Attributes:
      input_tensor: the tensor to read from.
      indices_tensor: the indices, same dimension count as the input.
      output_tensor: the result; input's data type.
      axis: the axis of the input to gather along, in ``[0, DimensionCount)``.
      index_dimensions: how many trailing dimensions of the indices are meaningful.

    Examples:
      >>> d = GatherOperatorDesc(
      ...     TensorDesc("float32", (4,)), TensorDesc("uint32", (5,)), TensorDesc("float32", (5,)), 0, 1)
      >>> d.index_dimensions
      1
    """

    input_tensor: TensorDesc
    indices_tensor: TensorDesc
    output_tensor: TensorDesc
    axis: int
    index_dimensions: int

    def __post_init__(self) -> None:
        set_tensors(self)
        struct = type(self).__name__
        object.__setattr__(self, "axis", int_member(struct, "axis", self.axis))
        object.__setattr__(self, "index_dimensions", int_member(struct, "index_dimensions", self.index_dimensions))


# The struct's "tensor support" tables: introduced in DML_FEATURE_LEVEL_1_0; the rows equal
# DML_SCATTER_OPERATOR_DESC's.
GATHER_SUPPORT = (
    SupportRow(FeatureLevel.FL_1_0, (4, 4), FL1_0_DATA_TYPES, (DataType.UINT32,)),
    SupportRow(FeatureLevel.FL_2_1, (4, 4), FL2_1_DATA_TYPES, (DataType.UINT32,)),
    SupportRow(FeatureLevel.FL_3_0, (1, MAX_DIMENSIONS), FL2_1_DATA_TYPES, FL3_0_INDEX_TYPES),
    SupportRow(FeatureLevel.FL_4_1, (1, MAX_DIMENSIONS), FL4_1_DATA_TYPES, FL3_0_INDEX_TYPES),
)


def gather_output_sizes(
    input_sizes: tuple[int, ...], indices_sizes: tuple[int, ...], axis: int, index_dimensions: int
) -> tuple[int, ...] | None:
    """DML_GATHER's output sizes, right-aligned to the dimension count; None if they do not fit.

    Examples:
      >>> gather_output_sizes((1, 3, 3), (1, 1, 2), axis=2, index_dimensions=2)  # leading 1 cropped
      (3, 1, 2)
      >>> gather_output_sizes((1, 3, 2), (1, 1, 1), axis=1, index_dimensions=0)  # leading 1 added
      (1, 1, 2)
      >>> gather_output_sizes((3, 2), (1, 2), axis=1, index_dimensions=2) is None  # 3 would be cropped
      True
    """
    count = len(input_sizes)
    kept = indices_sizes[count - index_dimensions :] if index_dimensions else ()
    sizes = input_sizes[:axis] + kept + input_sizes[axis + 1 :]
    excess = len(sizes) - count
    if excess > 0 and any(size != 1 for size in sizes[:excess]):
        return None
    return sizes[excess:] if excess > 0 else (1,) * -excess + sizes


def _validate(check: Check, row: SupportRow, desc: GatherOperatorDesc) -> None:
    check_indexing(check, row, desc)
    source, indices, count = desc.input_tensor, desc.indices_tensor, desc.input_tensor.dimension_count
    if not 0 <= desc.index_dimensions <= count:
        rule = f"be in [0, {count}] (indices_tensor.dimension_count)"
        raise check.error("index_dimensions", rule, desc.index_dimensions)
    if any(size != 1 for size in indices.sizes[: count - desc.index_dimensions]):
        rule = f"be 1 before the last index_dimensions ({desc.index_dimensions}) sizes"
        raise check.error("indices_tensor.sizes", rule, indices.sizes)
    expected = gather_output_sizes(source.sizes, indices.sizes, desc.axis, desc.index_dimensions)
    if expected is None:
        rule = f"leave at most {count} dimensions once leading 1s are cropped (input rank + index_dimensions - 1)"
        raise check.error("index_dimensions", rule, desc.index_dimensions, f"input_tensor.sizes {source.sizes}")
    if desc.output_tensor.sizes != expected:
        rule = f"equal {expected} (input sizes around axis {desc.axis}, the indexed sizes between, right-aligned)"
        raise check.error("output_tensor.sizes", rule, desc.output_tensor.sizes)


def _apply(desc: GatherOperatorDesc, data: jax.Array, indices: jax.Array) -> tuple[jax.Array]:
    """DML_GATHER as ONNX `gather` on the indices' last ``index_dimensions`` dimensions."""
    kept = indices.shape[indices.ndim - desc.index_dimensions :] if desc.index_dimensions else ()
    return (gather_validated(data, indices.reshape(kept), desc.axis),)


GATHER = register(Operator(GatherOperatorDesc, GATHER_SUPPORT, _validate, ("input_tensor", "indices_tensor"), _apply))
