"""The one exception family of dmljax and the helper that formats its messages."""

from __future__ import annotations

from typing import Any

__all__ = ["ValidationError", "fail"]


class ValidationError(ValueError):
    """A broken rule of a descriptor or an argument.

    The message names the operator (or struct), the parameter (or member), the rule
    and the offending value, for example::

        slice1: input_window_strides[1] must be nonzero; got 0 (input shape (4, 4)).
    """


# Shown as ``dmljax.ValidationError`` in tracebacks and reprs: the name users import.
ValidationError.__module__ = "dmljax"


def fail(op: str, param: str, rule: str, value: Any, context: str = "") -> ValidationError:
    """Return (not raise) a `ValidationError` with the house message template.

    Args:
      op: the public function or struct, e.g. ``"scatter"`` or ``"TensorDesc"``.
      param: the argument or member, e.g. ``"axis"`` or ``"sizes[2]"``.
      rule: what must hold, phrased to follow "must", e.g. ``"be in [0, 4)"``.
      value: the offending value; shown with ``repr``.
      context: optional extra facts, e.g. ``"input shape (2, 3)"``.

    Examples:
      >>> raise fail("scatter", "axis", "be in [-2, 2)", 5, "input shape (2, 3)")
      Traceback (most recent call last):
      ...
      dmljax.ValidationError: scatter: axis must be in [-2, 2); got axis=5 (input shape (2, 3)).
    """
    suffix = f" ({context})" if context else ""
    return ValidationError(f"{op}: {param} must {rule}; got {param}={value!r}{suffix}.")
