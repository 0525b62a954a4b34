"""Padding (DML_PADDING1_OPERATOR_DESC): constant, edge, reflection, symmetric and wrap modes.

The public function checks the padding amounts and the mode (static), then calls
`padding_validated`, which is `jnp.pad` with DirectML's mode mapped to NumPy's: both fold
the padding over the previous padding regions when it is longer than the input
(docs/semantics.md, "Padding").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from dmljax._core.errors import fail
from dmljax._ops.common.indices import as_data, check_rank
from dmljax._ops.common.static_args import static_ints

__all__ = ["PADDING_MODES", "check_mode", "pad", "padding_validated", "padding_value"]

# DML_PADDING_MODE (directml.h) -> jnp.pad's mode. REFLECTION leaves the edge out of the
# mirror image, SYMMETRIC repeats it; WRAP (feature level 6.4) repeats the input periodically.
PADDING_MODES = {
    "constant": "constant",
    "edge": "edge",
    "reflection": "reflect",
    "symmetric": "symmetric",
    "wrap": "wrap",
}
_PREFIX = "dml_padding_mode_"
# NumPy's spelling of a mode that DirectML names otherwise (np.pad, jnp.pad).
_NUMPY_ALIASES = {"reflect": "reflection"}


def check_mode(op: str, mode: Any) -> str:
    """``mode`` as a key of `PADDING_MODES` (any case, with or without ``DML_PADDING_MODE_``;
    NumPy's ``"reflect"`` for ``"reflection"``).

    Raises:
      ValidationError: ``mode`` is none of DirectML's five.
    """
    name = mode.lower().removeprefix(_PREFIX) if isinstance(mode, str) else None
    name = _NUMPY_ALIASES.get(name, name) if name is not None else None
    if name not in PADDING_MODES:
        rule = f"be one of {', '.join(PADDING_MODES)} (or NumPy's 'reflect')"
        raise fail(op, "mode", rule, mode)
    return name


def pad(
    input: jax.typing.ArrayLike,
    start_padding: Any,
    end_padding: Sequence[int] | str | None = None,
    mode: str = "constant",
    value: jax.typing.ArrayLike = 0,
) -> jax.Array:
    """Pad ``input`` on both ends of every dimension: DML_PADDING1_OPERATOR_DESC.

    Output size ``i`` is ``start_padding[i] + input.shape[i] + end_padding[i]``; the input
    sits at offset ``start_padding``. The padding regions hold, per ``mode``:

    * ``"constant"``: ``value`` (DirectML's ``PaddingValue``), converted to the input's type:
      a float value for an integer input is truncated toward zero (10.6 becomes 10), and must fit.
    * ``"edge"``: the nearest edge element.
    * ``"reflection"``: the input mirrored at its edge, the edge itself not repeated
      (``[1, 2, 3]`` padded by 2 at the start: ``[3, 2, 1, 2, 3]``).
    * ``"symmetric"``: mirrored with the edge repeated (``[2, 1, 1, 2, 3]``).
    * ``"wrap"``: the input repeated periodically (``[2, 3, 1, 2, 3]``).

    Padding longer than the input is valid in every mode: the mirror modes fold the new
    region over the previous one, which is a periodic mirror image (period ``2 * (n - 1)``
    for reflection, ``2 * n`` for symmetric); a dimension of size 1 repeats its element.
    An empty dimension can be padded only with ``"constant"`` (the other modes read it).

    NumPy's spellings are accepted too: ``pad(x, pad_width)`` without ``end_padding`` takes
    ``np.pad``'s ``pad_width`` (an int, one ``(before, after)`` pair, or a pair per
    dimension), with the mode as the third argument (``pad(x, [(2, 1)], "reflect")``), and
    ``"reflect"`` is ``"reflection"``.

    Args:
      input: array of 1 to 8 dimensions, any `DataType`.
      start_padding: ``StartPadding``, one int >= 0 per dimension; or, without
        ``end_padding``, ``np.pad``'s ``pad_width``.
      end_padding: ``EndPadding``, one int >= 0 per dimension; None with a ``pad_width``
        (a string here is the mode, as ``np.pad``'s third argument).
      mode: ``PaddingMode``: ``"constant"``, ``"edge"``, ``"reflection"`` (or ``"reflect"``),
        ``"symmetric"`` or ``"wrap"`` (any case, ``DML_PADDING_MODE_`` prefix allowed).
      value: the constant of ``"constant"`` mode (a real scalar; complex for a complex
        input); ignored by the other modes.

    Returns:
      Array of ``input``'s type, each dimension padded.

    Raises:
      ValidationError: a padding amount is traced, negative or of the wrong length; the mode
        is unknown; an empty dimension is padded in a mode other than constant; ``value``
        is no number, no scalar, complex for a real input, or does not fit an integer
        input's type.
      TypeError: ``input`` has an unsupported type.

    Examples:
      >>> x = jnp.array([1, 2, 3])
      >>> pad(x, [2], [1], "reflection"), pad(x, [2], [1], "symmetric")
      (Array([3, 2, 1, 2, 3, 2], dtype=int32), Array([2, 1, 1, 2, 3, 3], dtype=int32))
      >>> pad(x, [2], [1], "wrap"), pad(x, [1], [1], "constant", value=-7.9)
      (Array([2, 3, 1, 2, 3, 1], dtype=int32), Array([-7,  1,  2,  3, -7], dtype=int32))
      >>> pad(x, [(2, 1)], "reflect")  # np.pad's spelling
      Array([3, 2, 1, 2, 3, 2], dtype=int32)
    """
    input = as_data("pad", "input", input)
    check_rank("pad", "input", input.shape)
    context = f"input shape {input.shape}"
    if isinstance(end_padding, str):  # np.pad(x, pad_width, mode)
        if mode != "constant":
            raise fail("pad", "end_padding", "be a sequence of ints (or the mode, when mode is not given)", end_padding)
        mode = end_padding
        end_padding = None
    if end_padding is None:
        start_padding, end_padding = _pad_width("pad", start_padding, input.ndim, context)
    start = static_ints("pad", "start_padding", start_padding, input.ndim, context)
    end = static_ints("pad", "end_padding", end_padding, input.ndim, context)
    mode = check_mode("pad", mode)
    if mode != "constant":
        for axis, size in enumerate(input.shape):
            if size == 0 and start[axis] + end[axis] > 0:
                rule = f"be >= 1 where {mode} padding reads it (padding {start[axis]}, {end[axis]})"
                raise fail("pad", f"input.shape[{axis}]", rule, size, context)
    return padding_validated(input, start, end, mode, padding_value(input.dtype, value))


def _pad_width(op: str, pad_width: Any, rank: int, context: str) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """``np.pad``'s ``pad_width`` (an int, a pair, or a pair per dimension) as start and end paddings."""
    rule = "be np.pad's pad_width (an int, a (before, after) pair, or one pair per dimension) without end_padding"
    if isinstance(pad_width, jax.core.Tracer):
        raise fail(op, "start_padding", "be static ints (not traced)", pad_width, context)
    try:
        widths = np.asarray(pad_width, dtype=object)
        pairs = np.broadcast_to(widths, (rank, 2)) if widths.ndim <= 2 else None
    except ValueError:
        pairs = None
    if pairs is None:
        raise fail(op, "start_padding", rule, pad_width, context)
    return tuple(pairs[:, 0]), tuple(pairs[:, 1])


def padding_value(dtype: np.dtype, value: Any) -> Any:
    """``value`` in ``dtype``: truncated toward zero for integer types (the page's rule), range-checked."""
    dtype = np.dtype(dtype)
    if isinstance(value, jax.core.Tracer):
        if value.shape != ():
            raise fail("pad", "value", "be a scalar", value.shape)
        if np.dtype(value.dtype).kind == "c" and dtype.kind != "c":
            raise fail("pad", "value", f"be real for input.dtype {dtype}", value)
        return value.astype(dtype)
    host = np.asarray(value) if value is not None and not isinstance(value, str | bytes) else None
    if host is None or not (host.dtype.kind in "biufc" or host.dtype == jnp.bfloat16):
        raise fail("pad", "value", "be a number (the constant of constant mode)", value)
    if host.shape != ():
        raise fail("pad", "value", "be a scalar", value)
    if host.dtype.kind == "c" and dtype.kind != "c":
        raise fail("pad", "value", f"be real for input.dtype {dtype}", value)
    if host.dtype == jnp.bfloat16:  # NumPy's float tests do not know it; float32 holds it exactly
        host = host.astype(np.float32)
    if dtype.kind in "iu":
        if host.dtype.kind == "f" and not np.isfinite(host):
            raise fail("pad", "value", f"be finite for input.dtype {np.dtype(dtype)}", value)
        whole = int(np.trunc(host)) if host.dtype.kind == "f" else int(host)
        info = np.iinfo(dtype)
        if not info.min <= whole <= info.max:
            raise fail("pad", "value", f"fit input.dtype {np.dtype(dtype)} after truncation", value)
        return np.asarray(whole).astype(dtype)
    return jnp.asarray(value).astype(dtype)


def padding_validated(
    input: jax.Array, start_padding: tuple[int, ...], end_padding: tuple[int, ...], mode: str, value: Any = 0
) -> jax.Array:
    """`pad` on checked amounts and a mode key of `PADDING_MODES`: no checks."""
    widths = tuple(zip(start_padding, end_padding, strict=True))
    if mode == "edge":
        return _edge(input, start_padding, end_padding)
    if mode == "constant":
        return jnp.pad(input, widths, mode="constant", constant_values=value)
    return jnp.pad(input, widths, mode=PADDING_MODES[mode])


def _edge(input: jax.Array, start_padding: tuple[int, ...], end_padding: tuple[int, ...]) -> jax.Array:
    """Edge padding as broadcast edge slices joined to the input, one axis at a time.

    `jnp.pad`'s edge mode concatenates zero-size pieces for an unpadded side, which
    jax2onnx's Concat lowering declares with the wrong shape; here only non-empty pieces
    are joined, so `dmljax.onnx.export` gives a model onnxruntime runs.
    """
    out = input
    for axis, (start, end) in enumerate(zip(start_padding, end_padding, strict=True)):
        size = out.shape[axis]

        def edge(position: int, count: int, out: jax.Array = out, axis: int = axis) -> jax.Array:
            line = lax.slice_in_dim(out, position, position + 1, axis=axis)
            return jnp.broadcast_to(line, out.shape[:axis] + (count,) + out.shape[axis + 1 :])

        pieces = [*([edge(0, start)] if start else []), out, *([edge(size - 1, end)] if end else [])]
        out = lax.concatenate(pieces, axis) if len(pieces) > 1 else out
    return out
