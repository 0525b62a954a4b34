"""Slice1 (DML_SLICE1_OPERATOR_DESC): strided windows, negative strides.

The public function validates the window (Python ints, static), then calls `_slice1_impl`,
the one array function holding the semantics: a `lax.slice` of the copied elements and a
`lax.rev` of the dimensions with negative strides. Never a gather.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import jax
from jax import lax

from dmljax._core.errors import fail
from dmljax._core.limits import INT32_MAX, UINT32_MAX
from dmljax._core.markers import mark
from dmljax._ops.common.indices import as_data, check_rank

__all__ = ["slice1", "check_window_rules", "slice1_validated"]


def slice1(
    input: jax.typing.ArrayLike,
    offsets: Sequence[int],
    sizes: Sequence[int],
    strides: Sequence[int],
    output_sizes: Sequence[int] | None = None,
) -> jax.Array:
    """Copy a strided window of ``input``: DML_SLICE1_OPERATOR_DESC.

    Per dimension ``i`` the window starts at ``offsets[i]`` and holds ``sizes[i]`` elements;
    ``strides[i]`` (nonzero) steps through it, from the window's start when positive and
    from its end when negative: ``output[c] = input[b + strides * c]`` with ``b[i] =
    offsets[i]``, or ``offsets[i] + sizes[i] - 1`` when ``strides[i] < 0``.

    Args:
      input: array of 1 to 8 dimensions, any `DataType`.
      offsets: ``InputWindowOffsets``, one int >= 0 per dimension.
      sizes: ``InputWindowSizes``, ints >= 1 with ``offsets[i] + sizes[i] <= input.shape[i]``.
      strides: ``InputWindowStrides``, nonzero ints.
      output_sizes: ``OutputTensor.Sizes``; each in ``[1, 1 + (sizes[i] - 1) // |strides[i]|]``.
        Default: the largest valid size.

    Returns:
      Array of shape ``output_sizes`` and ``input``'s type.

    Raises:
      ValidationError: an argument is traced (the window must be static Python ints), has
        the wrong length, a window leaves the input, a stride is 0, or an output size is
        out of range.
      TypeError: ``input`` has an unsupported type.

    Examples:
      >>> x = jnp.arange(1.0, 17.0).reshape(1, 1, 4, 4)
      >>> slice1(x, [0, 0, 0, 1], [1, 1, 4, 3], [1, 1, 2, 2])
      Array([[[[ 2.,  4.],
               [10., 12.]]]], dtype=float32)
      >>> slice1(x, [0, 0, 0, 1], [1, 1, 4, 3], [1, 1, -2, 2])
      Array([[[[14., 16.],
               [ 6.,  8.]]]], dtype=float32)
      >>> slice1(jnp.arange(6), [1], [5], [-1], output_sizes=[2])
      Array([5, 4], dtype=int32)
    """
    input = as_data("slice1", "input", input)
    check_rank("slice1", "input", input.shape)
    offsets, sizes, strides, output_sizes = _check_window(input.shape, offsets, sizes, strides, output_sizes)
    window = dict(offsets=offsets, sizes=sizes, strides=strides, output_sizes=tuple(output_sizes))
    return mark(_slice1_impl(input, **window), input, op="slice1", **window)


def slice1_validated(
    input: jax.Array,
    offsets: tuple[int, ...],
    sizes: tuple[int, ...],
    strides: tuple[int, ...],
    output_sizes: tuple[int, ...],
) -> jax.Array:
    """`slice1`'s trace of a window (Python ints) the descriptor layer validated: no checks."""
    window = dict(offsets=offsets, sizes=sizes, strides=strides, output_sizes=output_sizes)
    return mark(_slice1_impl(input, **window), input, op="slice1", **window)


STATIC_HINT = "mark it static: jax.jit(..., static_argnums=...), or pass Python ints"


def _int_tuple(values: Any, param: str, rank: int, context: str) -> tuple[Any, ...]:
    if isinstance(values, jax.core.Tracer):  # the window picks the output's shape: it must be known at trace time
        raise fail("slice1", param, "be static ints (not traced)", values, f"{context}; {STATIC_HINT}")
    try:
        items = tuple(values)
    except TypeError:
        raise fail("slice1", param, "be a sequence of integers", values, context) from None
    if len(items) != rank:
        raise fail("slice1", param, f"have one entry per dimension ({rank})", items, context)
    symbolic_ok = param != "strides"  # a window may span a `jax.export` symbolic dimension
    for i, item in enumerate(items):
        if symbolic_ok and jax.export.is_symbolic_dim(item):
            continue
        if isinstance(item, jax.core.Tracer):
            raise fail("slice1", f"{param}[{i}]", "be a static int (not traced)", item, f"{context}; {STATIC_HINT}")
        if isinstance(item, bool) or not hasattr(item, "__index__"):
            raise fail("slice1", f"{param}[{i}]", "be a Python integer", item, context)
    return tuple(item if jax.export.is_symbolic_dim(item) else int(item) for item in items)


def _check_window(
    shape: tuple[int, ...], offsets: Any, sizes: Any, strides: Any, output_sizes: Any
) -> tuple[tuple[int, ...], ...]:
    """Validate the window against ``shape``; fill in the default output sizes."""
    context = f"input shape {shape}"
    offsets = _int_tuple(offsets, "offsets", len(shape), context)
    sizes = _int_tuple(sizes, "sizes", len(shape), context)
    strides = _int_tuple(strides, "strides", len(shape), context)
    if output_sizes is not None:
        output_sizes = _int_tuple(output_sizes, "output_sizes", len(shape), context)

    def error(param: str, rule: str, value: Any, extra: str) -> Exception:
        return fail("slice1", param, rule, value, extra)

    max_out = check_window_rules(shape, offsets, sizes, strides, output_sizes, error)
    return offsets, sizes, strides, output_sizes if output_sizes is not None else max_out


# DML_SLICE1_OPERATOR_DESC's member types (page above): InputWindowOffsets and InputWindowSizes
# are UINT arrays, InputWindowStrides an INT array, OutputTensor sizes UINT: 32 bits each.
UINT_RANGE = (0, UINT32_MAX)
INT_RANGE = (-INT32_MAX - 1, INT32_MAX)

# The window's parameter names in `slice1`'s signature; the descriptor layer passes DirectML's.
WINDOW_NAMES = {"offsets": "offsets", "sizes": "sizes", "strides": "strides", "output_sizes": "output_sizes"}


def check_window_rules(
    shape: tuple[int, ...],
    offsets: tuple[int, ...],
    sizes: tuple[int, ...],
    strides: tuple[int, ...],
    output_sizes: tuple[int, ...] | None,
    error: Callable[[str, str, Any, str], Exception],
    names: dict[str, str] = WINDOW_NAMES,
    shape_name: str = "input shape",
) -> tuple[int, ...]:
    """DML_SLICE1's window rules (DML_SLICE1_OPERATOR_DESC's remarks), one dimension at a time; the one place they live.

    Every value fits its DirectML type (offsets, sizes and output sizes UINT, strides INT:
    32 bits). Each window is non-empty, inside the input and has a nonzero stride; each
    output size is in ``[1, 1 + (sizes[i] - 1) // |strides[i]|]``. ``error(param, rule, value, context)``
    builds the exception to raise, named with ``names`` (`slice1`'s or the descriptor's).

    Returns:
      The largest valid output sizes.
    """
    context = f"{shape_name} {shape}"
    off, size_, stride_, out_ = (names[k] for k in ("offsets", "sizes", "strides", "output_sizes"))
    ranges = ((off, offsets, UINT_RANGE), (size_, sizes, UINT_RANGE), (stride_, strides, INT_RANGE))
    for name, values, (low, high) in (*ranges, (out_, output_sizes or (), UINT_RANGE)):
        for i, value in enumerate(values):
            if not jax.export.is_symbolic_dim(value) and (value > high or value < low < 0):  # UINT < 0: below
                kind = "INT" if low else "UINT"
                raise error(f"{name}[{i}]", f"be in [{low}, {high}] (DirectML {kind}, 32 bits)", value, context)
    max_out = []
    for i, (dim, offset, size, stride) in enumerate(zip(shape, offsets, sizes, strides, strict=True)):
        if _may_be_below(offset, 0):
            raise error(f"{off}[{i}]", "be >= 0", offset, context)
        if _may_be_below(size, 1):
            raise error(f"{size_}[{i}]", "be >= 1 (a non-empty window)", size, context)
        if _may_be_below(dim, offset + size):
            rule = f"keep the window inside the input: {off}[{i}] + {size_}[{i}] <= {dim}"
            raise error(f"{size_}[{i}]", rule, size, f"{off}[{i}]={offset}, {context}")
        if stride == 0:
            raise error(f"{stride_}[{i}]", "be nonzero", stride, context)
        max_out.append(1 + (size - 1) // abs(stride))
    for i, (out, limit) in enumerate(zip(output_sizes or (), max_out, strict=False)):
        if _may_be_below(out, 1) or _may_be_below(limit, out):
            rule = f"be in [1, {limit}] (1 + ({size_}[{i}] - 1) // |{stride_}[{i}]|)"
            raise error(f"{out_}[{i}]", rule, out, context)
    return tuple(max_out)


def _may_be_below(value: Any, bound: Any) -> bool:
    """``value < bound``; with `jax.export` symbolic sizes, whether it holds for some size."""
    try:
        return bool(value < bound)
    except jax.errors.InconclusiveDimensionOperation:
        return True


@functools.partial(jax.jit, static_argnames=("offsets", "sizes", "strides", "output_sizes"))
def _slice1_impl(
    input: jax.Array,
    *,
    offsets: tuple[int, ...],
    sizes: tuple[int, ...],
    strides: tuple[int, ...],
    output_sizes: tuple[int, ...],
) -> jax.Array:
    """Slice1 on a validated window: ``lax.slice`` of the copied elements, then ``lax.rev``."""
    starts, limits = [], []
    for offset, size, stride, out in zip(offsets, sizes, strides, output_sizes, strict=True):
        first = offset if stride > 0 else offset + size - 1  # the window element copied first
        last = first + stride * (out - 1)  # the element copied last (by the stride's sign: no min/max
        starts.append(first if stride > 0 else last)  # of possibly symbolic sizes)
        limits.append((last if stride > 0 else first) + 1)
    steps = tuple(abs(s) for s in strides)
    window = lax.slice(input, tuple(starts), tuple(limits), steps if any(s != 1 for s in steps) else None)
    reversed_dims = tuple(d for d, stride in enumerate(strides) if stride < 0)
    return lax.rev(window, reversed_dims) if reversed_dims else window
