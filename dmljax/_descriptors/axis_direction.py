"""DML_AXIS_DIRECTION and the per-member support rows of the order-sensitive operators.

CUMULATIVE_SUMMATION/PRODUCT, TOP_K1 and ARGMIN/ARGMAX take an ``AxisDirection``; their
"tensor support" tables give each tensor its own data types (an index or count output
beside a data input), so their rows name the member each type list belongs to
(`MemberRow`), checked by `check_member_row`.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Any

from dmljax._core.dtypes import DataType
from dmljax._core.errors import fail
from dmljax._descriptors.feature_levels import FeatureLevel
from dmljax._descriptors.validate import Check, check_tensor, tensors_of

__all__ = ["AxisDirection", "MemberRow", "check_member_row", "direction_member", "flag_member"]


class AxisDirection(enum.IntEnum):
    """DML_AXIS_DIRECTION: the order an operator walks (or ranks) an axis in.

    INCREASING: ascending index (a cumulative tally from the first element; the smallest
    top-k; the first index on arg-max/min ties). DECREASING: the reverse.

    Examples:
      >>> AxisDirection.DECREASING, AxisDirection(0)
      (AxisDirection.DECREASING, AxisDirection.INCREASING)
    """

    INCREASING = 0
    DECREASING = 1

    def __repr__(self) -> str:
        return f"AxisDirection.{self.name}"


def direction_member(struct: str, value: Any) -> AxisDirection:
    """An `AxisDirection`, its value or its name (``"DML_AXIS_DIRECTION_"`` prefix optional)."""
    if isinstance(value, str):
        name = value.upper().removeprefix("DML_AXIS_DIRECTION_")
        if name in AxisDirection.__members__:
            return AxisDirection[name]
    elif not isinstance(value, bool) and hasattr(value, "__index__") and int(value) in (0, 1):
        return AxisDirection(int(value))
    raise TypeError(str(fail(struct, "axis_direction", "be an AxisDirection (INCREASING or DECREASING)", value)))


def flag_member(struct: str, member: str, value: Any) -> bool:
    """A BOOL member: a bool, or DirectML's 0 / 1."""
    if isinstance(value, bool) or (hasattr(value, "__index__") and int(value) in (0, 1)):
        return bool(value)
    raise TypeError(str(fail(struct, member, "be a bool (or 0 / 1)", value)))


@dataclasses.dataclass(frozen=True)
class MemberRow:
    """One feature level's row of a table whose tensors have their own data types.

    Attributes:
      level: the first feature level this row applies to.
      dims: ``(min, max)`` dimension count of every tensor.
      types: ``((member, data types), ...)``, one entry per tensor member of the struct.
    """

    level: FeatureLevel
    dims: tuple[int, int]
    types: tuple[tuple[str, tuple[DataType, ...]], ...]


def check_member_row(check: Check, row: MemberRow, desc: Any) -> dict:
    """Every tensor's dimension count and data type in the row; every tensor of the first one's count."""
    tensors = tensors_of(desc)
    counts = tuple(range(row.dims[0], row.dims[1] + 1))
    for member, types in row.types:
        check_tensor(check, member, tensors[member], counts, types)
    first = next(iter(tensors))
    for member, tensor in tensors.items():
        if tensor.dimension_count != tensors[first].dimension_count:
            rule = f"equal {first}.dimension_count ({tensors[first].dimension_count})"
            raise check.error(f"{member}.dimension_count", rule, tensor.dimension_count)
    return tensors
