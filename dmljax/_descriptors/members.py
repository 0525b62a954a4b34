"""Converting and checking the members of the operator structs on construction.

Each DirectML struct (DML_*_OPERATOR_DESC) is a frozen, hashable dataclass in its
operator's module, its members in snake_case and in the struct's order. Construction
checks only static, level-independent facts (every tensor is a `TensorDesc`, ``axis`` is
an integer, window arrays are integer tuples); everything that depends on a feature level
or on several members at once is checked by `dmljax.descriptors.compile_operator`
(`dmljax._descriptors.validate`), as DirectML's ``IDMLDevice::CompileOperator`` does.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from dmljax._buffers.tensor_desc import TensorDesc
from dmljax._core.errors import fail

__all__ = ["int_member", "ints_member", "set_tensors"]


def _tensor(struct: str, member: str, value: Any, optional: bool = False) -> TensorDesc | None:
    if value is None and optional:
        return None
    if not isinstance(value, TensorDesc):
        rule = "be a TensorDesc or None" if optional else "be a TensorDesc"
        raise TypeError(str(fail(struct, member, rule, value)))
    return value


def int_member(struct: str, member: str, value: Any) -> int:
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise TypeError(str(fail(struct, member, "be an integer", value)))
    return int(value)


def ints_member(struct: str, member: str, values: Any) -> tuple[int, ...]:
    try:
        items = tuple(values)
    except TypeError:
        raise TypeError(str(fail(struct, member, "be a sequence of integers", values))) from None
    return tuple(int_member(struct, f"{member}[{i}]", item) for i, item in enumerate(items))


def set_tensors(desc: Any, *optional: str) -> None:
    """Check every ``*_tensor`` member of a descriptor (the named ones may be None); a
    ``*_tensors`` member becomes a non-empty tuple of tensors (DML_JOIN's and DML_SPLIT's arrays)."""
    struct = type(desc).__name__
    for field in dataclasses.fields(desc):
        if field.name.endswith("_tensor"):
            _tensor(struct, field.name, getattr(desc, field.name), field.name in optional)
        elif field.name.endswith("_tensors"):
            value = getattr(desc, field.name)
            if isinstance(value, TensorDesc) or not isinstance(value, list | tuple) or not value:
                raise TypeError(str(fail(struct, field.name, "be a non-empty sequence of TensorDesc", value)))
            items = tuple(_tensor(struct, f"{field.name}[{i}]", t) for i, t in enumerate(value))
            object.__setattr__(desc, field.name, items)
