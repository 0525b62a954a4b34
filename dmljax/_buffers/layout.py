"""Static analysis of a strided layout: which cheap XLA ops read or write it.

Pure Python on sizes and strides (no JAX), cached per layout. `read_tensor` and
`write_tensor` in `dmljax._buffers.strided` turn a `LayoutPlan` into ops.
"""

from __future__ import annotations

import dataclasses
import functools
import math

import numpy as np

__all__ = ["LayoutPlan", "OffsetsPlan", "element_offsets", "has_aliasing", "plan_layout", "plan_offsets"]


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


@dataclasses.dataclass(frozen=True)
class OffsetsPlan:
    """A layout that is not nested, split into nested outer levels and a core.

    Each level ``(dim, size, stride)``, outermost first, has a stride that reaches past
    every offset of the dimensions inside it, so the buffer reshaped to ``(size, stride)``
    holds one element of that dimension per row; what is left (``core_dims``, in logical
    order) is read by offsets within a row, all below ``core_extent``. With no core left,
    the element is the first column of the innermost level's row. Batch dimensions
    stay array dimensions (shard-local), and the core's offsets stay small.
    """

    levels: tuple[tuple[int, int, int], ...]
    core_dims: tuple[int, ...]
    core_sizes: tuple[int, ...]
    core_strides: tuple[int, ...]
    broadcast_dims: tuple[int, ...]

    @property
    def core_extent(self) -> int:
        """Elements of a row the core spans: its largest offset + 1."""
        return sum((n - 1) * s for n, s in zip(self.core_sizes, self.core_strides, strict=True)) + 1


@functools.lru_cache(maxsize=1024)
def plan_offsets(sizes: tuple[int, ...], strides: tuple[int, ...], split: bool = True) -> OffsetsPlan:
    """Peel nested outer dimensions off a layout (all stay in the core if not ``split``); see `OffsetsPlan`.

    Examples:
      >>> plan_offsets((4, 3, 3), (100, 1, 1))  # a batch of overlapping windows
      OffsetsPlan(levels=((0, 4, 100),), core_dims=(1, 2), core_sizes=(3, 3), core_strides=(1, 1), broadcast_dims=())
      >>> plan = plan_offsets((2, 3, 4), (20, 6, 1))  # padded by uneven amounts: levels only, no core
      >>> plan.levels, plan.core_dims
      (((0, 2, 20), (1, 3, 6), (2, 4, 1)), ())
    """
    live = sorted((d for d, n in enumerate(sizes) if n > 1 and strides[d] > 0), key=lambda d: -strides[d])
    broadcast = tuple(d for d, n in enumerate(sizes) if n > 1 and strides[d] == 0)
    levels = []
    while split and live and strides[live[0]] >= sum((sizes[d] - 1) * strides[d] for d in live[1:]) + 1:
        levels.append((live[0], sizes[live[0]], strides[live[0]]))
        live = live[1:]
    core = tuple(sorted(live))
    return OffsetsPlan(tuple(levels), core, tuple(sizes[d] for d in core), tuple(strides[d] for d in core), broadcast)


def element_offsets(sizes: tuple[int, ...], strides: tuple[int, ...], dtype: type = np.int64) -> np.ndarray:
    """Buffer offset of every logical element, in row-major order (NumPy, ``dtype`` wide enough)."""
    offsets: np.ndarray = np.zeros((), dtype=dtype)
    for size, stride in zip(sizes, strides, strict=True):
        offsets = offsets[..., None] + np.arange(size, dtype=dtype) * dtype(stride)
    return offsets.reshape(-1)


@functools.lru_cache(maxsize=1024)
def has_aliasing(sizes: tuple[int, ...], strides: tuple[int, ...]) -> bool:
    """Whether two logical elements share a buffer offset.

    Decided from the strides where it can be (zero strides, nested layouts, dimensions
    that cannot meet the others, two interleaved dimensions, more elements than
    offsets); otherwise the offsets of what is left are sorted once: O(n log n).

    Examples:
      >>> has_aliasing((2, 3), (0, 1)), has_aliasing((2, 3), (3, 2)), has_aliasing((2, 2), (1, 1))
      (True, False, True)
    """
    plan = plan_layout(sizes, strides)
    if plan.broadcast_dims:
        return True
    if plan.nested:
        return False
    dims = _independent_core([(n, s) for n, s in zip(sizes, strides, strict=True) if n > 1])
    if len(dims) <= 1:
        return False
    if len(dims) == 2:  # c1*s1 == c2*s2 (coprime strides) first holds at c1 = s2, c2 = s1
        (n1, s1), (n2, s2) = dims
        return n1 > s2 and n2 > s1
    if math.prod(n for n, _ in dims) > _extent(dims):  # more elements than offsets
        return True
    dtype = np.uint32 if _extent(dims) <= 2**32 else np.uint64
    offsets = np.sort(element_offsets(tuple(n for n, _ in dims), tuple(s for _, s in dims), dtype))
    return bool(np.any(offsets[1:] == offsets[:-1]))


def _extent(dims: list[tuple[int, int]]) -> int:
    return sum((n - 1) * s for n, s in dims) + 1


def _independent_core(dims: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Drop (size, stride) pairs that cannot make two offsets meet; divide out the common factor.

    A dimension whose stride reaches past the extent of all the others, or whose span
    ``size * stride`` divides every other stride, separates its elements from each
    other whatever the others do; what is left aliases iff the whole does.
    """
    dims = sorted(dims, key=lambda d: -d[1])
    changed = True
    while changed and len(dims) > 1:
        changed = False
        if dims[0][1] >= _extent(dims[1:]):
            dims, changed = dims[1:], True
            continue
        for i, (n, s) in enumerate(dims):
            if all(t % (n * s) == 0 for j, (_, t) in enumerate(dims) if j != i):
                dims, changed = dims[:i] + dims[i + 1 :], True
                break
        common = math.gcd(*(s for _, s in dims))
        if common > 1:
            dims, changed = [(n, s // common) for n, s in dims], True
    return dims
