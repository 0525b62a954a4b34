"""Static integer arguments of the data-movement operators: checked once, named in every error.

Padding amounts, repeats, split sizes, block sizes and windows pick an output's shape, so
they must be Python ints at trace time; a traced value is refused with a hint, never a
JAX concretisation error.
"""

from __future__ import annotations

from typing import Any

import jax

from dmljax._core.errors import fail
from dmljax._core.limits import UINT32_MAX

__all__ = ["STATIC_HINT", "static_int", "static_ints"]

STATIC_HINT = "mark it static: jax.jit(..., static_argnums=...), or pass Python ints"


def static_int(op: str, param: str, value: Any, context: str, minimum: int = 0, maximum: int = UINT32_MAX) -> int:
    """``value`` as a Python int in ``[minimum, maximum]`` (default: DirectML ``UINT`` members).

    Raises:
      ValidationError: ``value`` is traced, no integer, or out of range.
    """
    if isinstance(value, jax.core.Tracer):
        raise fail(op, param, "be a static int (not traced)", value, f"{context}; {STATIC_HINT}")
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise fail(op, param, "be a Python integer", value, context)
    value = int(value)
    if not minimum <= value <= maximum:
        raise fail(op, param, f"be in [{minimum}, {maximum}]", value, context)
    return value


def static_ints(
    op: str, param: str, values: Any, length: int | None, context: str, minimum: int = 0, maximum: int = UINT32_MAX
) -> tuple[int, ...]:
    """``values`` as a tuple of Python ints, each as `static_int` checks it, ``length`` long when given.

    Raises:
      ValidationError: ``values`` is traced, no sequence, of the wrong length, or an entry is bad.
    """
    if isinstance(values, jax.core.Tracer):
        raise fail(op, param, "be static ints (not traced)", values, f"{context}; {STATIC_HINT}")
    try:
        items = tuple(values)
    except TypeError:
        raise fail(op, param, "be a sequence of integers", values, context) from None
    if length is not None and len(items) != length:
        raise fail(op, param, f"have one entry per dimension ({length})", items, context)
    return tuple(static_int(op, f"{param}[{i}]", item, context, minimum, maximum) for i, item in enumerate(items))
