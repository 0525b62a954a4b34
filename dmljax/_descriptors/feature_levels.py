"""DirectML feature levels (DML_FEATURE_LEVEL), ordered, and how operators' support tables use them."""

from __future__ import annotations

import enum
from typing import Any

__all__ = ["FeatureLevel", "as_feature_level"]


class FeatureLevel(enum.IntEnum):
    """A DirectML feature level; values are DirectML's own (``DML_FEATURE_LEVEL_3_1 = 0x3100``).

    Levels compare in release order, so a support table can ask ``level >= FL_3_0``.
    `LATEST` is the newest level dmljax knows.

    Examples:
      >>> FeatureLevel.FL_2_1 < FeatureLevel.FL_3_0
      True
      >>> FeatureLevel.LATEST is FeatureLevel.FL_6_4
      True
      >>> str(FeatureLevel.FL_4_1)
      '4.1'
    """

    FL_1_0 = 0x1000
    FL_2_0 = 0x2000
    FL_2_1 = 0x2100
    FL_3_0 = 0x3000
    FL_3_1 = 0x3100
    FL_4_0 = 0x4000
    FL_4_1 = 0x4100
    FL_5_0 = 0x5000
    FL_5_1 = 0x5100
    FL_5_2 = 0x5200
    FL_6_0 = 0x6000
    FL_6_1 = 0x6100
    FL_6_2 = 0x6200
    FL_6_3 = 0x6300
    FL_6_4 = 0x6400
    LATEST = 0x6400  # an alias of the newest level

    def __str__(self) -> str:
        return f"{self.value >> 12}.{(self.value >> 8) & 0xF}"

    def __repr__(self) -> str:
        return f"FeatureLevel.{self.name}"


def as_feature_level(value: Any, op: str = "dmljax", param: str = "feature_level") -> FeatureLevel:
    """Accept a `FeatureLevel`, DirectML's integer value or a string such as ``"3.0"``.

    Raises:
      TypeError: ``value`` is no known feature level.
    """
    if isinstance(value, FeatureLevel):
        return value
    if isinstance(value, str):
        name = "FL_" + value.upper().removeprefix("DML_FEATURE_LEVEL_").removeprefix("FL_")
        name = name.replace(".", "_")
        if name in FeatureLevel.__members__:
            return FeatureLevel[name]
    elif isinstance(value, int) and not isinstance(value, bool):
        try:
            return FeatureLevel(value)
        except ValueError:
            pass
    known = ", ".join(str(level) for level in FeatureLevel)
    raise TypeError(f"{op}: {param} must be a DirectML feature level ({known}); got {param}={value!r}.")
