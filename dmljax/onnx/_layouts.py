"""ONNX lowerings of slice1, read_tensor and write_tensor: Slice, Reshape, Transpose, Concat.

A strided layout is analysed by `dmljax._buffers.layout.plan_layout`, as `read_tensor`
and `write_tensor` do: when it is nested and each stride divides the next outer one, the
buffer's first ``n_0 * s_0`` elements reshape to one view whose leading corner holds the
tensor: packed -> Reshape; permuted (NHWC) -> Reshape + Transpose; padded ->
Reshape + Slice (a Concat of zeros first when the buffer stops short of the last padding); zero strides
-> Expand. Writes rebuild the view with Concat of the value and the buffer's padding.
Other layouts (overlapping windows, unevenly padded) use one Gather (read) or
ScatterElements (write) of constant element offsets.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import jax
import numpy as np
import onnx_ir as ir

from dmljax._buffers.layout import element_offsets, plan_layout
from dmljax._core.errors import fail
from dmljax.onnx._emit import INT64_MAX, INT64_MIN, Emitter

__all__ = ["lower_read_tensor", "lower_slice1", "lower_write_tensor", "slice_bounds"]


def _same(a: Any, b: Any) -> bool:
    """Whether two (possibly symbolic) sizes are equal for every value of their symbols."""
    try:
        return bool(a == b)
    except jax.errors.InconclusiveDimensionOperation:
        return False


def slice_bounds(params: dict[str, Any], shape: tuple[Any, ...]) -> list[tuple[int, int, int, int]]:
    """ONNX Slice's ``(axis, start, end, step)`` per sliced dimension of a slice1 window.

    A symbolic window (``sizes[d]`` or ``output_sizes[d]`` of a symbolic batch) is exact
    when it runs from a fixed offset to the input's end with the most output elements:
    then the end is "to the end" (INT64_MAX, or INT64_MIN with a negative step) and a
    negative step starts at -1. Any other symbolic window raises a `dmljax.ValidationError`.
    """
    found = []
    windows = zip(params["offsets"], params["sizes"], params["strides"], params["output_sizes"], strict=True)
    for d, (o, s, t, n) in enumerate(windows):
        if all(not jax.export.is_symbolic_dim(v) for v in (o, s, n)):
            first = o if t > 0 else o + s - 1
            end = first + t * (n - 1) + (1 if t > 0 else -1)
            if not ((first, t) == (0, 1) and _same(end, shape[d])):  # else the whole dimension
                found.append((d, first, end if end >= 0 else INT64_MIN, t))
            continue
        whole = not jax.export.is_symbolic_dim(o) and _same(o + s, shape[d]) and _same(n, 1 + (s - 1) // abs(t))
        if not whole:
            rule = (
                "run from a fixed offset to the input's end with the most output elements when it is symbolic "
                "(ONNX Slice's bounds are constants here)"
            )
            raise fail("slice1", f"window[{d}]", rule, f"offset {o}, size {s}, stride {t}, output size {n}")
        if (o, t) != (0, 1):
            found.append((d, o, INT64_MAX, t) if t > 0 else (d, -1, o - 1 if o > 0 else INT64_MIN, t))
    return found


def lower_slice1(ctx: Any, eqn: Any) -> None:
    """dmljax_slice1 -> one ONNX Slice (starts, ends, axes, steps; negative steps included)."""
    em, (x_var,), out = Emitter(ctx), eqn.invars, eqn.outvars[0]
    bounds = slice_bounds(eqn.params, tuple(x_var.aval.shape))
    x, dtype, out_shape = em.input(x_var, "input"), out.aval.dtype, tuple(out.aval.shape)
    if not bounds:
        em.output(out, em.op("Identity", x, dtype=dtype, shape=out_shape))
        return
    axes, starts, ends, steps = zip(*bounds, strict=True)
    inputs = [em.i64(v, name) for v, name in ((starts, "starts"), (ends, "ends"), (axes, "axes"), (steps, "steps"))]
    em.output(out, em.op("Slice", x, *inputs, dtype=dtype, shape=out_shape))


@dataclasses.dataclass(frozen=True)
class _View:
    """A nested layout: logical dims in physical order, the view shape and its used corner."""

    order: tuple[int, ...]
    shape: tuple[int, ...]
    limits: tuple[int, ...]

    @property
    def extent(self) -> int:
        return math.prod(self.shape)


def _view(sizes: tuple[int, ...], strides: tuple[int, ...]) -> _View | None:
    """The one-reshape view of `dmljax._buffers.layout.plan_layout`, or None (a gather of offsets)."""
    plan = plan_layout(sizes, strides)
    if not plan.nested:
        return None
    if not plan.physical_dims:  # a single element, or every dimension broadcast
        return _View((), (1,), (1,))
    shape = plan.view_shape
    return None if shape is None else _View(plan.physical_dims, shape, plan.view_limits)


def _fit(em: Emitter, flat: ir.Value, have: int, want: int, dtype: Any) -> ir.Value:
    """A 1-D value of ``have`` elements cut (Slice) or extended to ``want`` (a Concat of zeros:
    onnxruntime has no int16/uint16 Pad). The extension is padding no element of the tensor reads."""
    if have > want:
        return em.op("Slice", flat, em.i64([0], "starts"), em.i64([want], "ends"), dtype=dtype, shape=(want,))
    if have < want:
        zeros = em.const(np.zeros(want - have, dtype), "padding", dtype)
        return em.op("Concat", flat, zeros, dtype=dtype, shape=(want,), axis=0)
    return flat


def _reshape(em: Emitter, x: ir.Value, have: tuple[int, ...], shape: tuple[int, ...], dtype: Any) -> ir.Value:
    """``x`` (of shape ``have``) reshaped to ``shape``; no node when they are equal."""
    if tuple(have) == tuple(shape):
        return x
    return em.op("Reshape", x, em.i64(shape, "shape"), dtype=dtype, shape=shape)


def lower_read_tensor(ctx: Any, eqn: Any) -> None:
    """dmljax_read_tensor -> Reshape/Slice/Concat/Transpose/Expand, or one Gather of offsets."""
    em, (buffer_var,), out = Emitter(ctx), eqn.invars, eqn.outvars[0]
    desc, dtype = eqn.params["desc"], out.aval.dtype
    sizes, strides, length = desc.sizes, desc.strides, buffer_var.aval.shape[0]
    buffer, view = em.input(buffer_var, "buffer"), _view(desc.sizes, desc.strides)
    if view is None:
        offsets = em.i64(element_offsets(sizes, strides).reshape(sizes), "offsets")
        em.output(out, em.op("Gather", buffer, offsets, dtype=dtype, shape=sizes, axis=0))
        return
    x = _reshape(em, _fit(em, buffer, length, view.extent, dtype), (view.extent,), view.shape, dtype)
    if view.limits != view.shape:
        limits = em.i64(view.limits, "ends")
        x = em.op("Slice", x, em.i64([0] * len(view.shape), "starts"), limits, dtype=dtype, shape=view.limits)
    logical = tuple(sorted(view.order))
    physical = tuple(sizes[d] for d in view.order) or (1,)
    x = _reshape(em, x, view.limits, physical, dtype)
    if view.order != logical:
        perm = [view.order.index(d) for d in logical]
        physical = tuple(sizes[d] for d in logical)
        x = em.op("Transpose", x, dtype=dtype, shape=physical, perm=perm)
    kept = tuple(n if d in logical else 1 for d, n in enumerate(sizes))
    x = _reshape(em, x, physical, kept, dtype)
    if kept != sizes:
        x = em.op("Expand", x, em.i64(sizes, "sizes"), dtype=dtype, shape=sizes)
    em.output(out, x)


def lower_write_tensor(ctx: Any, eqn: Any) -> None:
    """dmljax_write_tensor -> Transpose/Reshape/Concat/Slice, or one ScatterElements of offsets."""
    em, (buffer_var, value_var), out = Emitter(ctx), eqn.invars, eqn.outvars[0]
    desc, dtype = eqn.params["desc"], out.aval.dtype
    sizes, length = desc.sizes, buffer_var.aval.shape[0]
    buffer, value, view = em.input(buffer_var, "buffer"), em.input(value_var, "value"), _view(sizes, desc.strides)
    if view is None:
        offsets = em.i64(element_offsets(sizes, desc.strides), "offsets")
        flat = _reshape(em, value, sizes, (desc.element_count,), dtype)
        em.output(out, em.op("ScatterElements", buffer, offsets, flat, dtype=dtype, shape=(length,), axis=0))
        return
    logical = tuple(sorted(view.order))
    shape = tuple(sizes[d] for d in logical) or (1,)
    x = _reshape(em, value, sizes, shape, dtype)
    if view.order != logical:
        perm = [logical.index(d) for d in view.order]
        shape = tuple(sizes[d] for d in view.order)
        x = em.op("Transpose", x, dtype=dtype, shape=shape, perm=perm)
    x = _reshape(em, x, shape, view.limits, dtype)
    if view.limits != view.shape:
        old = _reshape(em, _fit(em, buffer, length, view.extent, dtype), (view.extent,), view.shape, dtype)
        x = _fill_view(em, x, old, view, dtype)
    flat = _reshape(em, x, view.shape, (view.extent,), dtype)
    if view.extent >= length:
        em.output(out, _fit(em, flat, view.extent, length, dtype))
        return
    starts, ends = em.i64([view.extent], "starts"), em.i64([length], "ends")
    rest = em.op("Slice", buffer, starts, ends, dtype=dtype, shape=(length - view.extent,))
    em.output(out, em.op("Concat", flat, rest, dtype=dtype, shape=(length,), axis=0))


def _fill_view(em: Emitter, x: ir.Value, old: ir.Value, view: _View, dtype: Any) -> ir.Value:
    """Complete ``x`` (the view's leading corner) with the old buffer's padding, innermost axis first."""
    current = list(view.limits)
    for a in reversed(range(len(view.shape))):
        if current[a] == view.shape[a]:
            continue
        starts = [0] * len(view.shape)
        starts[a] = current[a]
        ends = current[:a] + [view.shape[a]] + list(view.shape[a + 1 :])
        pad_shape = tuple(e - s for s, e in zip(starts, ends, strict=True))
        padding = em.op("Slice", old, em.i64(starts, "starts"), em.i64(ends, "ends"), dtype=dtype, shape=pad_shape)
        current[a] = view.shape[a]
        x = em.op("Concat", x, padding, dtype=dtype, shape=tuple(current), axis=a)
    return x
