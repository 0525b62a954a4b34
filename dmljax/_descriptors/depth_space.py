"""DML_SPACE_TO_DEPTH1_OPERATOR_DESC and DML_DEPTH_TO_SPACE1_OPERATOR_DESC: structs, table, rules, registered.

https://learn.microsoft.com/en-us/windows/win32/api/directml/ns-directml-dml_space_to_depth1_operator_desc
https://learn.microsoft.com/en-us/windows/win32/api/directml/ns-directml-dml_depth_to_space1_operator_desc
Semantics: `dmljax.space_to_depth`, `dmljax.depth_to_space`.
"""

from __future__ import annotations

import dataclasses

import jax

from dmljax._buffers.tensor_desc import TensorDesc
from dmljax._descriptors.feature_levels import FeatureLevel
from dmljax._descriptors.members import int_member, set_tensors
from dmljax._descriptors.registry import Operator, register
from dmljax._descriptors.support import FL2_1_DATA_TYPES, SupportRow
from dmljax._descriptors.validate import Check, check_output, check_row, same, tensors_of
from dmljax._ops.movement.depth_space import check_order, depth_to_space_validated, space_to_depth_validated

__all__ = ["DEPTH_SPACE_SUPPORT", "DepthToSpaceOperatorDesc", "SpaceToDepthOperatorDesc"]


@dataclasses.dataclass(frozen=True)
class SpaceToDepthOperatorDesc:
    """DML_SPACE_TO_DEPTH1_OPERATOR_DESC: blocks of ``block_size`` x ``block_size`` into channels.

    Semantics from `dmljax.space_to_depth`.

    Attributes:
      input_tensor: ``{N, C, H, W}``, H and W multiples of ``block_size``.
      output_tensor: ``{N, C * block_size ** 2, H / block_size, W / block_size}``, input's type.
      block_size: the block's width and height (>= 1).
      order: ``"DCR"`` (DML_DEPTH_SPACE_ORDER_DEPTH_COLUMN_ROW) or ``"CRD"`` (COLUMN_ROW_DEPTH).
    """

    input_tensor: TensorDesc
    output_tensor: TensorDesc
    block_size: int
    order: str = "DCR"

    def __post_init__(self) -> None:
        _members(self)


@dataclasses.dataclass(frozen=True)
class DepthToSpaceOperatorDesc:
    """DML_DEPTH_TO_SPACE1_OPERATOR_DESC: channels into blocks of ``block_size`` x ``block_size``.

    Semantics from `dmljax.depth_to_space`.

    Attributes:
      input_tensor: ``{N, C, H, W}``, C a multiple of ``block_size ** 2``.
      output_tensor: ``{N, C / block_size ** 2, H * block_size, W * block_size}``, input's type.
      block_size: the block's width and height (>= 1).
      order: ``"DCR"`` (DML_DEPTH_SPACE_ORDER_DEPTH_COLUMN_ROW) or ``"CRD"`` (COLUMN_ROW_DEPTH).
    """

    input_tensor: TensorDesc
    output_tensor: TensorDesc
    block_size: int
    order: str = "DCR"

    def __post_init__(self) -> None:
        _members(self)


def _members(desc: SpaceToDepthOperatorDesc | DepthToSpaceOperatorDesc) -> None:
    set_tensors(desc)
    struct = type(desc).__name__
    object.__setattr__(desc, "block_size", int_member(struct, "block_size", desc.block_size))
    object.__setattr__(desc, "order", check_order(struct, desc.order))


# Both pages' "tensor support" table: introduced in 2.1, 4 dimensions, 32/16/8-bit types.
DEPTH_SPACE_SUPPORT = (SupportRow(FeatureLevel.FL_2_1, (4, 4), FL2_1_DATA_TYPES),)


def _validate(check: Check, row: SupportRow, desc: SpaceToDepthOperatorDesc | DepthToSpaceOperatorDesc) -> None:
    tensors = tensors_of(desc)
    check_row(check, row, tensors)
    same(check, tensors, "output_tensor", "input_tensor", "dtype")
    b = desc.block_size
    if b < 1:
        raise check.error("block_size", "be >= 1", b)
    n, c, h, w = desc.input_tensor.sizes
    if isinstance(desc, SpaceToDepthOperatorDesc):
        if h % b or w % b:
            raise check.error("input_tensor.sizes", f"have H and W multiples of block_size ({b})", (n, c, h, w))
        expected = (n, c * b * b, h // b, w // b)
    else:
        if c % (b * b):
            raise check.error("input_tensor.sizes", f"have C a multiple of block_size ** 2 ({b * b})", (n, c, h, w))
        expected = (n, c // (b * b), h * b, w * b)
    if desc.output_tensor.sizes != expected:
        raise check.error("output_tensor.sizes", f"equal {expected}", desc.output_tensor.sizes)
    check_output(check, "output_tensor", desc.output_tensor)


def _space_to_depth(desc: SpaceToDepthOperatorDesc, data: jax.Array) -> tuple[jax.Array]:
    return (space_to_depth_validated(data, desc.block_size, desc.order),)


def _depth_to_space(desc: DepthToSpaceOperatorDesc, data: jax.Array) -> tuple[jax.Array]:
    return (depth_to_space_validated(data, desc.block_size, desc.order),)


SPACE_TO_DEPTH = register(
    Operator(SpaceToDepthOperatorDesc, DEPTH_SPACE_SUPPORT, _validate, ("input_tensor",), _space_to_depth)
)
DEPTH_TO_SPACE = register(
    Operator(DepthToSpaceOperatorDesc, DEPTH_SPACE_SUPPORT, _validate, ("input_tensor",), _depth_to_space)
)
