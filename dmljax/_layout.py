"""Static analysis of a strided layout: which cheap XLA ops read or write it.

Pure Python on sizes and strides (no JAX), cached per layout. `read_tensor` and
`write_tensor` in `dmljax._strided` turn a `LayoutPlan` into ops.
"""

from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np

__all__ = ["LayoutPlan", "plan_layout", "has_aliasing", "element_offsets"]


@dataclasses.dataclass(frozen=True)
class LayoutPlan:
    """How the logical tensor sits in the buffer.

    ``nested`` layouts are packed, permuted (NHWC), padded or broadcast: after dropping
    size-1 and zero-stride dimensions and sorting the rest by stride, each stride is a
    multiple of the next and covers its extent. Then the buffer's first ``extent``
    elements reshaped to ``view_shape`` and sliced to ``view_limits`` hold the tensor's
    ``physical_dims`` in physical order. Anything else (overlapping windows, strides
    that do not nest) is ``nested=False`` and goes through a gather of `element_offsets`.
    """

    nested: bool
    physical_dims: tuple[int, ...] = ()
    view_shape: tuple[int, ...] = ()
    view_limits: tuple[int, ...] = ()
    extent: int = 1
    broadcast_dims: tuple[int, ...] = ()

    @property
    def is_contiguous(self) -> bool:
        """True when the view needs no slicing: a packed (maybe permuted) tensor."""
        return self.view_shape == self.view_limits

    @property
    def is_identity(self) -> bool:
        """True when the view is already in logical order (no transpose)."""
        return list(self.physical_dims) == sorted(self.physical_dims)


@functools.lru_cache(maxsize=1024)
def plan_layout(sizes: tuple[int, ...], strides: tuple[int, ...]) -> LayoutPlan:
    """Classify a layout; see `LayoutPlan`.

    Examples:
      >>> plan_layout((1, 1, 3, 5), (15, 1, 5, 1))  # NHWC, one channel: just packed
      LayoutPlan(nested=True, physical_dims=(2, 3), view_shape=(3, 5), view_limits=(3, 5), extent=15, broadcast_dims=())
      >>> plan_layout((2, 3), (5, 1)).view_shape  # rows of 3 padded to 5
      (2, 5)
      >>> plan_layout((3, 3), (1, 1)).nested  # overlapping windows
      False
    """
    live = [d for d, (n, s) in enumerate(zip(sizes, strides, strict=True)) if n > 1 and s > 0]
    broadcast = tuple(d for d, (n, s) in enumerate(zip(sizes, strides, strict=True)) if n > 1 and s == 0)
    order = sorted(live, key=lambda d: -strides[d])
    view_shape, view_limits = [], []
    for outer, inner in zip(order, order[1:], strict=False):
        ratio, remainder = divmod(strides[outer], strides[inner])
        if remainder or ratio < sizes[inner]:
            return LayoutPlan(nested=False, broadcast_dims=broadcast)
        view_shape.append(ratio)
        view_limits.append(sizes[inner])
    if not order:
        return LayoutPlan(nested=True, broadcast_dims=broadcast)
    view_shape.insert(0, sizes[order[0]])
    view_limits.insert(0, sizes[order[0]])
    innermost = strides[order[-1]]
    if innermost > 1:
        view_shape.append(innermost)
        view_limits.append(1)
    extent = sizes[order[0]] * strides[order[0]]
    return LayoutPlan(True, tuple(order), tuple(view_shape), tuple(view_limits), extent, broadcast)


def element_offsets(sizes: tuple[int, ...], strides: tuple[int, ...]) -> np.ndarray:
    """Buffer offset of every logical element, in row-major order (NumPy, int64)."""
    offsets = np.zeros((), dtype=np.int64)
    for size, stride in zip(sizes, strides, strict=True):
        offsets = offsets[..., None] + np.arange(size, dtype=np.int64) * stride
    return offsets.reshape(-1)


@functools.lru_cache(maxsize=1024)
def has_aliasing(sizes: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    """Whether two logical elements share a buffer offset.

    Examples:
      >>> has_aliasing((2, 3), (0, 1)), has_aliasing((2, 3), (3, 2)), has_aliasing((2, 2), (1, 1))
      (True, False, True)
    """
    plan = plan_layout(sizes, strides)
    if plan.broadcast_dims:
        return True
    if plan.nested:
        return False
    offsets = element_offsets(sizes, strides)
    return len(np.unique(offsets)) != math.prod(sizes)
