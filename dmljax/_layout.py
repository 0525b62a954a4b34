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

    A ``nested`` layout is packed, permuted (NHWC), padded or broadcast: after dropping
    size-1 and zero-stride dimensions and sorting the rest by stride, outermost first
    (``physical_dims``), each stride covers the whole extent of the next dimension,
    ``strides[d_i] >= sizes[d_j] * strides[d_j]``. Its elements are then read by
    reshaping the buffer's first ``extent`` elements to ``(n_0, s_0)`` and alternately
    slicing the last axis to ``n_j * s_j`` and splitting it into ``(n_j, s_j)``.
    Anything else (overlapping windows) is ``nested=False`` and goes through a gather of
    `element_offsets`.
    """

    nested: bool
    physical_dims: tuple[int, ...] = ()
    physical_sizes: tuple[int, ...] = ()
    physical_strides: tuple[int, ...] = ()
    broadcast_dims: tuple[int, ...] = ()

    @property
    def extent(self) -> int:
        """Buffer elements the view spans: ``n_0 * s_0``."""
        return self.physical_sizes[0] * self.physical_strides[0] if self.physical_dims else 1

    @property
    def is_contiguous(self) -> bool:
        """True for a packed (maybe permuted) tensor: no gaps, nothing to slice."""
        inner = self.physical_strides[1:] + (1,)
        return all(
            s == n * t for s, n, t in zip(self.physical_strides, self.physical_sizes[1:] + (1,), inner, strict=True)
        )

    @property
    def is_identity(self) -> bool:
        """True when the view is already in logical order (no transpose)."""
        return list(self.physical_dims) == sorted(self.physical_dims)

    @property
    def view_shape(self) -> tuple[int, ...] | None:
        """One reshape that exposes every element, when each stride divides the next outer one.

        Then the view sliced to `view_limits` is the tensor in physical order (padded
        layouts get updated in place through it); ``None`` when some stride does not divide.
        """
        strides = self.physical_strides + ((1,) if self.physical_strides[-1] > 1 else ())
        if any(outer % inner for outer, inner in zip(strides, strides[1:], strict=False)):
            return None
        return (self.physical_sizes[0],) + tuple(
            outer // inner for outer, inner in zip(strides, strides[1:], strict=False)
        )

    @property
    def view_limits(self) -> tuple[int, ...]:
        """The slice of `view_shape` that holds the elements (a trailing 1 when the innermost stride is > 1)."""
        return self.physical_sizes + ((1,) if self.physical_strides[-1] > 1 else ())


@functools.lru_cache(maxsize=1024)
def plan_layout(sizes: tuple[int, ...], strides: tuple[int, ...]) -> LayoutPlan:
    """Classify a layout; see `LayoutPlan`.

    Examples:
      >>> plan_layout((1, 1, 3, 5), (15, 1, 5, 1))  # NHWC, one channel: just packed
      LayoutPlan(nested=True, physical_dims=(2, 3), physical_sizes=(3, 5), physical_strides=(5, 1), broadcast_dims=())
      >>> plan_layout((2, 3), (5, 1)).view_shape  # rows of 3 padded to 5
      (2, 5)
      >>> plan_layout((2, 3, 4), (20, 6, 1)).view_shape is None  # padded twice, 6 does not divide 20
      True
      >>> plan_layout((3, 3), (1, 1)).nested  # overlapping windows
      False
    """
    live = [d for d, (n, s) in enumerate(zip(sizes, strides, strict=True)) if n > 1 and s > 0]
    broadcast = tuple(d for d, (n, s) in enumerate(zip(sizes, strides, strict=True)) if n > 1 and s == 0)
    order = tuple(sorted(live, key=lambda d: -strides[d]))
    for outer, inner in zip(order, order[1:], strict=False):
        if strides[outer] < sizes[inner] * strides[inner]:
            return LayoutPlan(nested=False, broadcast_dims=broadcast)
    physical_sizes = tuple(sizes[d] for d in order)
    physical_strides = tuple(strides[d] for d in order)
    return LayoutPlan(True, order, physical_sizes, physical_strides, broadcast)


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
