"""Feature-level support tables: one small frozen row per DirectML feature level.

Each operator's table is data in its registration module (``SCATTER_SUPPORT`` in
`dmljax._descriptors.scatter`, ...). A table is a tuple of `SupportRow`, oldest level first; the
row that applies at a feature level is the newest one not newer than it (`support_at`).
The descriptor layer validates against these rows; the array functions accept more.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from dmljax._core.dtypes import DataType
from dmljax._descriptors.feature_levels import FeatureLevel

__all__ = [
    "FL1_0_DATA_TYPES",
    "FL2_1_DATA_TYPES",
    "FL3_0_INDEX_TYPES",
    "FL4_1_DATA_TYPES",
    "SupportRow",
    "support_at",
]

# The data-type groups the operators' "tensor support" tables repeat (DML_SCATTER_OPERATOR_DESC,
# DML_SLICE1_OPERATOR_DESC, ...): the floats of 1.0, what 2.1 adds (32/16/8-bit integers), what 4.1 adds (64-bit types),
# and the index types of 3.0 (signed and 64-bit indices). Listed in the tables' order.
FL1_0_DATA_TYPES = (DataType.FLOAT32, DataType.FLOAT16)
FL2_1_DATA_TYPES = (*FL1_0_DATA_TYPES, *(DataType[n] for n in "INT32 INT16 INT8 UINT32 UINT16 UINT8".split()))
FL4_1_DATA_TYPES = tuple(
    DataType[n] for n in "FLOAT64 FLOAT32 FLOAT16 INT64 INT32 INT16 INT8 UINT64 UINT32 UINT16 UINT8".split()
)
FL3_0_INDEX_TYPES = (DataType.INT64, DataType.INT32, DataType.UINT64, DataType.UINT32)


@dataclasses.dataclass(frozen=True)
class SupportRow:
    """What an operator accepts from one feature level on (a "tensor support" table).

    Attributes:
      level: the first feature level this row applies to.
      dims: ``(min, max)`` dimension count of every tensor of the operator.
      data_types: the data types of the data tensors (input, updates, output).
      index_types: the data types of the indices tensor (empty when there is none).
    """

    level: FeatureLevel
    dims: tuple[int, int]
    data_types: tuple[DataType, ...]
    index_types: tuple[DataType, ...] = ()


def support_at(table: tuple[Any, ...], level: FeatureLevel) -> Any:
    """The row of ``table`` that applies at ``level``, or ``None`` before the operator exists.

    ``table``: rows with a ``level`` attribute (`SupportRow`, or an operator's own kind of
    row), oldest first.

    Examples:
      >>> from dmljax._descriptors.scatter import SCATTER_SUPPORT
      >>> support_at(SCATTER_SUPPORT, FeatureLevel.FL_3_1).dims
      (1, 8)
      >>> support_at(SCATTER_SUPPORT, FeatureLevel.FL_2_0).dims
      (4, 4)
    """
    applicable = [row for row in table if row.level <= level]
    return applicable[-1] if applicable else None
