"""Static integer arguments of the data-movement operators: checked once, named in every error.

Padding amounts, repeats, split sizes, block sizes and windows pick an output's shape, so
they must be Python ints at trace time; a traced value is refused with a hint, never a
JAX concretisation error.
"""

from __future__ import annotations

import contextlib
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from dmljax._core.errors import fail
from dmljax._core.limits import UINT32_MAX

__all__ = ["STATIC_HINT", "static_int", "static_ints", "static_number", "static_real"]

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


def static_number(op: str, param: str, value: Any, context: str, complex_ok: bool = False) -> int | float | complex:
    """``value`` as a Python int, float (or complex, with ``complex_ok``): a static scalar member
    such as DirectML's ``DML_SCALAR_UNION`` values.

    Python and NumPy numbers and 0-d NumPy arrays of a number type pass; bools, strings,
    None, sequences and traced values do not (``"1"`` is not silently 1).

    Raises:
      ValidationError: ``value`` is traced, or no real (or complex) number.

    Examples:
      >>> static_number("fill_value_sequence", "start", np.float32(1.5), "dtype float32")
      1.5
      >>> static_number("fill", "start", "1", "dtype float32")
      Traceback (most recent call last):
      ...
      dmljax.ValidationError: fill: start must be a real number (int or float); got start='1' (dtype float32).
    """
    if isinstance(value, jax.core.Tracer):
        raise fail(op, param, "be a static Python number (not traced)", value, f"{context}; {STATIC_HINT}")
    if isinstance(value, int) and not isinstance(value, bool):
        return value  # any size: the caller checks the range
    host = None
    if not isinstance(value, bool | np.bool_ | str | bytes) and value is not None:
        with contextlib.suppress(TypeError, ValueError):
            host = np.asarray(value)
    kind = "" if host is None or host.ndim != 0 else "f" if host.dtype == jnp.bfloat16 else host.dtype.kind
    if host is None or not kind or kind not in ("iufc" if complex_ok else "iuf"):
        rule = "be a number (int, float or complex)" if complex_ok else "be a real number (int or float)"
        raise fail(op, param, rule, value, context)
    return float(host) if host.dtype == jnp.bfloat16 else host.item()


def static_real(op: str, param: str, value: Any, context: str) -> int | float:
    """`static_number` of a real number: a Python int or float.

    Raises:
      ValidationError: ``value`` is traced, or no real number.
    """
    number = static_number(op, param, value, context)
    if isinstance(number, complex):  # static_number refuses complex values already
        raise fail(op, param, "be a real number (int or float)", value, context)
    return number
