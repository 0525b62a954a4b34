"""Sliding-window arguments of the pooling and fold operators, checked once (static facts).

`WindowSpec` holds, per spatial axis, the window size, stride, dilation and paddings of
DML_MAX_POOLING2, DML_UNFOLD and DML_FOLD, and the number of window positions (blocks)
by ONNX's formula with dilations, ``(size + start + end - dilation * (window - 1) - 1)
// stride + 1`` (DirectML's pages give the same ``BlocksPerDimension`` for Fold/Unfold).
"""

from __future__ import annotations

import dataclasses
import itertools
import math

from dmljax._core.errors import fail

__all__ = ["WindowSpec", "check_windows"]

MAX_SPATIAL = 6  # DML_UNFOLD/DML_FOLD: up to 6 spatial dimensions (N, C, then up to 6)


@dataclasses.dataclass(frozen=True)
class WindowSpec:
    """Validated window arguments over ``spatial`` (hashable: a static argument of the jitted impls)."""

    spatial: tuple[int, ...]
    window: tuple[int, ...]
    strides: tuple[int, ...]
    dilations: tuple[int, ...]
    start_padding: tuple[int, ...]
    end_padding: tuple[int, ...]

    @property
    def blocks(self) -> tuple[int, ...]:
        """Window positions per spatial axis (ONNX's output-size formula with dilations)."""
        return tuple(
            (n + a + b - d * (k - 1) - 1) // s + 1
            for n, k, s, d, a, b in zip(
                self.spatial,
                self.window,
                self.strides,
                self.dilations,
                self.start_padding,
                self.end_padding,
                strict=True,
            )
        )

    def offsets(self) -> list[tuple[int, ...]]:
        """The window offsets in row-major order (the first spatial axis the slowest)."""
        return list(itertools.product(*(range(k) for k in self.window)))

    @property
    def window_size(self) -> int:
        return math.prod(self.window)


def _ints(op: str, name: str, value: object, rank: int, default: int, low: int) -> tuple[int, ...]:
    if value is None:
        return (default,) * rank
    if hasattr(value, "__index__") and not isinstance(value, bool):
        value = (value,) * rank
    try:
        items: tuple = tuple(value)  # type: ignore[arg-type]
    except TypeError:
        raise fail(op, name, f"be an int or {rank} ints", value) from None
    if len(items) != rank or not all(hasattr(v, "__index__") and not isinstance(v, bool) for v in items):
        raise fail(op, name, f"be an int or {rank} ints (one per spatial dimension)", value)
    out = tuple(int(v) for v in items)
    if any(v < low for v in out):
        raise fail(op, name, f"hold ints >= {low}", out)
    return out


def check_windows(
    op: str,
    spatial: tuple[int, ...],
    window: object,
    strides: object,
    dilations: object,
    start_padding: object,
    end_padding: object,
    context: str,
    *,
    every_window_reads: bool = False,
) -> WindowSpec:
    """Check the window arguments against the spatial sizes; the spec.

    Args:
      op: the operator, for messages.
      spatial: the spatial sizes (input of pooling/unfold, output of fold).
      window, strides, dilations, start_padding, end_padding: an int or one int per
        spatial axis (None: strides and dilations 1, paddings 0).
      context: extra facts for messages (the input shape).
      every_window_reads: require every window position to cover at least one element
        that is not padding (max pooling: a window of padding has no maximum).

    Raises:
      ValidationError: an argument has the wrong length or range, the dilated window is
        larger than the padded input, or (``every_window_reads``) a window holds only padding.
    """
    rank = len(spatial)
    if not 1 <= rank <= MAX_SPATIAL:
        raise fail(op, "spatial dimensions", f"be 1 to {MAX_SPATIAL}", rank, context)
    spec = WindowSpec(
        spatial,
        _ints(op, "window", window, rank, 1, 1),
        _ints(op, "strides", strides, rank, 1, 1),
        _ints(op, "dilations", dilations, rank, 1, 1),
        _ints(op, "start_padding", start_padding, rank, 0, 0),
        _ints(op, "end_padding", end_padding, rank, 0, 0),
    )
    for i, (n, k, d, a, b) in enumerate(
        zip(spatial, spec.window, spec.dilations, spec.start_padding, spec.end_padding, strict=True)
    ):
        extent = d * (k - 1) + 1
        if extent > n + a + b:
            rule = f"span at most the padded input ({n} + {a} + {b} = {n + a + b}) with dilation {d}"
            raise fail(op, f"window[{i}]", rule, k, context)
        if every_window_reads:
            s = spec.strides[i]
            count = spec.blocks[i]  # only windows starting in the padding can miss the input
            edges = sorted(set(range(min(count, a // s + 1))) | set(range(max(0, count - b // s - 1), count)))
            for o in edges:
                if not any(0 <= o * s + j * d - a < n for j in range(k)):
                    rule = "cover at least one input element at every position (not only padding)"
                    raise fail(op, f"window[{i}]", rule, k, f"{context}, block {o} of axis {i}")
    return spec
