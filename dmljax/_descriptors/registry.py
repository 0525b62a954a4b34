"""One registration per DirectML operator struct: everything the descriptor layer knows of it.

Each operator module of this package (`scatter`, `gather`, `gather_elements`, `nd` (GatherND1
and ScatterND), `slice1`, `random_generator`) defines its struct, its feature-level support
table, its validator and its adapter to the array function, and registers them together with
`register`.
`dmljax.descriptors.compile_operator` and the validation look an operator up here; adding an operator
is one new module that calls `register`, and one re-export in `dmljax/__init__.py`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from dmljax._core.errors import fail

__all__ = ["Operator", "lookup", "register", "registered"]


@dataclasses.dataclass(frozen=True)
class Operator:
    """A registered operator struct.

    Attributes:
      desc: the struct's frozen dataclass (``ScatterOperatorDesc``, ...).
      support: its "tensor support" table, oldest feature level first: rows with a
        ``level`` attribute (`dmljax._descriptors.support.SupportRow` or the operator's own).
      validate: ``validate(check, row, desc)`` raises for a rule between members broken at
        the row's level (the table, the buffer sizes and the struct's types are checked
        around it).
      inputs: the struct's input tensor members, in its order: one buffer each.
      apply: ``apply(desc, *arrays)``: the logical input arrays to the logical outputs
        (a tuple, in the struct's order), through the operator's ``*_validated`` function:
        its array function without the public function's argument checks (``desc`` is
        validated once, by `dmljax._descriptors.validate.validate_operator_desc`).
    """

    desc: type
    support: tuple[Any, ...]
    validate: Callable[..., None]
    inputs: tuple[str, ...]
    apply: Callable[..., tuple[Any, ...]]

    @property
    def name(self) -> str:
        return self.desc.__name__


_REGISTRY: dict[type, Operator] = {}


def register(operator: Operator) -> Operator:
    """Add ``operator`` to the registry (once per struct) and return it."""
    if operator.desc in _REGISTRY:
        raise ValueError(f"{operator.name} is registered already")
    _REGISTRY[operator.desc] = operator
    return operator


def registered() -> tuple[Operator, ...]:
    """Every registered operator, in registration order."""
    return tuple(_REGISTRY.values())


def lookup(desc: Any, op: str = "compile_operator") -> Operator:
    """The registration of ``desc``'s struct.

    Raises:
      TypeError: ``desc`` is no registered operator descriptor.
    """
    operator = _REGISTRY.get(type(desc))
    if operator is None:
        names = ", ".join(sorted(o.name for o in _REGISTRY.values()))
        raise TypeError(str(fail(op, "desc", f"be one of {names}", desc)))
    return operator
