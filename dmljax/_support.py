"""Feature-level support tables: one small frozen row per DirectML feature level.

Each operator module keeps its table as data next to the operator (``SCATTER_SUPPORT``
in `dmljax._scatter`, ...). A table is a tuple of `SupportRow`, oldest level first; the
row that applies at a feature level is the newest one not newer than it (`support_at`).
The descriptor layer validates against these rows; the array functions accept more.
"""

from __future__ import annotations

import dataclasses

from dmljax._dtypes import DataType
from dmljax._feature_levels import FeatureLevel

__all__ = ["SupportRow", "support_at"]


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


def support_at(table: tuple[SupportRow, ...], level: FeatureLevel) -> SupportRow | None:
    """The row of ``table`` that applies at ``level``, or ``None`` before the operator exists.

    Examples:
      >>> from dmljax._scatter import SCATTER_SUPPORT
      >>> support_at(SCATTER_SUPPORT, FeatureLevel.FL_3_1).dims
      (1, 8)
      >>> support_at(SCATTER_SUPPORT, FeatureLevel.FL_2_0).dims
      (4, 4)
    """
    applicable = [row for row in table if row.level <= level]
    return applicable[-1] if applicable else None
