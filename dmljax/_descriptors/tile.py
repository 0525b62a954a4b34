"""DML_TILE_OPERATOR_DESC: the struct, its support table, its rules, registered once.

https://learn.microsoft.com/en-us/windows/win32/api/directml/ns-directml-dml_tile_operator_desc
Semantics: `dmljax.tile`.
"""

from __future__ import annotations

import dataclasses

import jax

from dmljax._buffers.tensor_desc import TensorDesc
from dmljax._core.dtypes import DataType
from dmljax._core.limits import MAX_DIMENSIONS
from dmljax._descriptors.feature_levels import FeatureLevel
from dmljax._descriptors.members import ints_member, set_tensors
from dmljax._descriptors.registry import Operator, register
from dmljax._descriptors.support import FL1_0_DATA_TYPES, FL2_1_DATA_TYPES, SupportRow
from dmljax._descriptors.validate import Check, check_output, check_row, same, tensors_of
from dmljax._ops.movement.tile import tile_validated

__all__ = ["TILE_SUPPORT", "TileOperatorDesc"]


@dataclasses.dataclass(frozen=True)
class TileOperatorDesc:
    """DML_TILE_OPERATOR_DESC: the input repeated along every dimension.

    DirectML's ``RepeatsCount`` is ``len(repeats)``. Semantics from `dmljax.tile`.

    Attributes:
      input_tensor: the tensor to tile.
      output_tensor: ``input_tensor.sizes[i] * repeats[i]`` per dimension, input's type.
      repeats: copies per dimension, each > 0, one per input dimension.
    """

    input_tensor: TensorDesc
    output_tensor: TensorDesc
    repeats: tuple[int, ...]

    def __post_init__(self) -> None:
        set_tensors(self)
        object.__setattr__(self, "repeats", ints_member(type(self).__name__, "repeats", self.repeats))


# The page's "tensor support" tables list 3.1 (1 to 8 dimensions, 32/16/8-bit types) and 4.1
# (+ INT64, UINT64; no FLOAT64). Before 3.1 (the operator is 1.0's) the rows are the 1.0
# operators' usual 4 dimensions, floats, and 2.1's integers; not on the current page.
TILE_SUPPORT = (
    SupportRow(FeatureLevel.FL_1_0, (4, 4), FL1_0_DATA_TYPES),
    SupportRow(FeatureLevel.FL_2_1, (4, 4), FL2_1_DATA_TYPES),
    SupportRow(FeatureLevel.FL_3_1, (1, MAX_DIMENSIONS), FL2_1_DATA_TYPES),
    SupportRow(FeatureLevel.FL_4_1, (1, MAX_DIMENSIONS), (*FL2_1_DATA_TYPES, DataType.INT64, DataType.UINT64)),
)


def _validate(check: Check, row: SupportRow, desc: TileOperatorDesc) -> None:
    tensors = tensors_of(desc)
    check_row(check, row, tensors)
    same(check, tensors, "output_tensor", "input_tensor", "dtype")
    same(check, tensors, "output_tensor", "input_tensor", "dimension_count")
    count = desc.input_tensor.dimension_count
    if len(desc.repeats) != count:
        raise check.error("repeats", f"have one entry per dimension ({count})", desc.repeats)
    for i, value in enumerate(desc.repeats):
        if not 1 <= value <= 2**32 - 1:
            raise check.error(f"repeats[{i}]", "be in [1, 4294967295] (larger than 0, DirectML UINT)", value)
    expected = tuple(s * r for s, r in zip(desc.input_tensor.sizes, desc.repeats, strict=True))
    if desc.output_tensor.sizes != expected:
        rule = f"equal input_tensor.sizes * repeats ({expected})"
        raise check.error("output_tensor.sizes", rule, desc.output_tensor.sizes)
    check_output(check, "output_tensor", desc.output_tensor)


def _apply(desc: TileOperatorDesc, data: jax.Array) -> tuple[jax.Array]:
    return (tile_validated(data, desc.repeats),)


TILE = register(Operator(TileOperatorDesc, TILE_SUPPORT, _validate, ("input_tensor",), _apply))
