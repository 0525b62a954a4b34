"""Strided buffers <-> logical arrays: `read_tensor` and `write_tensor`.

DirectML's strides: https://learn.microsoft.com/en-us/windows/ai/directml/dml-strides.

Each layout lowers to the cheapest XLA ops `dmljax._buffers.layout.plan_layout` finds:
packed -> reshape; permuted packed (NHWC) -> reshape + transpose (in two passes over
64-byte tiles for large reads on XLA CPU: `dmljax._buffers.transpose`); zero strides ->
broadcast; padded rows -> reshape + slice (a pad first when the buffer stops short of
the last row's padding), written as concatenates of the value and the padding; anything
else -> `dmljax._buffers.layout.plan_offsets`: nested outer dimensions split off as array axes
(shard-local), then one gather (read) or scatter (write) of uint32 offsets within a row.
A float read whose strides overlap (elements that share an offset through nonzero strides)
keeps that program and takes its derivative from an ordered take of every element's offset
(`dmljax._core.ordered_hooks`), so its gradient adds in the cotangent's row-major order.

A packed read compiles to the same program as ``buffer.reshape(sizes)``
(`tests/test_strided.py` compares the opcodes). Measurements and alternatives:
docs/design/strided-lowering.md.
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from dmljax._buffers.layout import LayoutPlan, OffsetsPlan, has_aliasing, plan_layout, plan_offsets
from dmljax._buffers.tensor_desc import TensorDesc
from dmljax._buffers.transpose import transpose
from dmljax._core import ordered_hooks
from dmljax._core.config import config
from dmljax._core.dtypes import x64_enabled
from dmljax._core.errors import fail
from dmljax._core.markers import mark

__all__ = ["read_operand", "read_tensor", "write_operand", "write_tensor"]


def _x64_hint(desc: TensorDesc) -> str:
    if desc.dtype.is_64bit and not x64_enabled():
        return "; 64-bit types need jax.config.update('jax_enable_x64', True)"
    return ""


def as_desc_type(op: str, param: str, value: Any, desc: TensorDesc, like: str = " like the descriptor") -> Any:
    """``value`` in ``desc``'s type when it is a host value of another type that converts exactly.

    A buffer's bytes are its descriptor's type (DirectML binds them as they are), so the
    argument's own dtype decides, with ``jax_enable_x64`` on or off alike: JAX arrays are
    returned as they are (their type is checked after); host values (NumPy arrays, Python
    lists, as ``np.asarray`` types them) of another type of the same kind (float to float,
    integer to integer, ...) are converted when every value is the same number in the
    descriptor's type (``np.zeros(n)`` for float32, ``np.arange(n)`` for int32), and
    refused otherwise: value-exact, never a reinterpretation of the bits (an int32 ``-1``
    for a UINT32 descriptor is refused, not read as 4294967295; pass
    ``x.view(np.uint32)`` for those bytes).

    Raises:
      ValidationError: a host value of another kind, or one that would lose information.
    """
    if not isinstance(value, np.ndarray | np.generic | list | tuple | int | float | complex):
        return value  # JAX arrays (tracers too), ShapeDtypeStructs: their type is checked after
    target = desc.dtype.dtype
    host = np.asarray(value)
    if host.dtype == target:
        return host
    if _kind(host.dtype) == _kind(target):
        with np.errstate(all="ignore"):
            converted = host.astype(target)
            back = converted.astype(host.dtype)
        if _kind(host.dtype) == "i":  # a round trip would let a signed value wrap into an unsigned type and back
            info = np.iinfo(target)
            changed = (host < info.min) | (host > info.max)
        else:
            changed = (back != host) & ~(np.isnan(back) & np.isnan(host) if _kind(host.dtype) in "fc" else False)
        if not changed.any():
            return converted
        rule = f"be {desc.dtype.name}{like}, or hold values that convert to it exactly (the same numbers)"
        first = np.unravel_index(int(np.argmax(changed)), host.shape) if host.ndim else ()
        where = f"{param}{[int(i) for i in first] if first else ''} = {host[first].item()!r}"
        raise fail(op, f"{param}.dtype", rule, str(host.dtype), f"{where}; cast it first: .astype(np.{target.name})")
    raise fail(op, f"{param}.dtype", f"be {desc.dtype.name}{like}", str(host.dtype))


def _kind(dtype: np.dtype) -> str:
    """``"f"``, ``"c"``, ``"i"`` (signed or unsigned) or ``"b"``: what converts within a kind."""
    for kind, family in (("c", jnp.complexfloating), ("f", jnp.floating), ("i", jnp.integer)):
        if jnp.issubdtype(dtype, family):
            return kind
    return "b"


def check_buffer(op: str, param: str, buffer: jax.typing.ArrayLike, desc: TensorDesc) -> jax.Array:
    """Validate a flat buffer for ``desc`` (type, rank, length) and return it as an array.

    Host buffers of another type are converted exactly or refused (`as_desc_type`).
    """
    if not isinstance(desc, TensorDesc):
        raise TypeError(f"{op}: desc must be a TensorDesc; got desc={desc!r}.")
    buffer = jnp.asarray(as_desc_type(op, param, buffer, desc))
    if buffer.ndim != 1:
        raise fail(op, f"{param}.shape", "be 1-D (a flat buffer)", buffer.shape)
    if buffer.dtype != desc.dtype.dtype:
        rule = f"be {desc.dtype.name} like the descriptor{_x64_hint(desc)}"
        raise fail(op, f"{param}.dtype", rule, str(buffer.dtype))
    needed = desc.min_buffer_elements
    if jax.export.is_symbolic_dim(buffer.shape[0]):
        rule = "be a fixed length (the descriptor fixes the offsets; a symbolic length cannot be checked)"
        raise fail(op, f"{param} length", rule, str(buffer.shape[0]))
    if buffer.shape[0] < needed:
        context = f"sizes {desc.sizes}, strides {desc.strides}"
        raise fail(op, f"{param} length", f"be at least {needed} elements", buffer.shape[0], context)
    return buffer


def read_tensor(buffer: jax.typing.ArrayLike, desc: TensorDesc) -> jax.Array:
    """Read the logical tensor that ``desc`` describes out of a flat buffer.

    ``output[c] = buffer[dot(c, desc.strides)]``. Pure and differentiable; padding gets
    a zero gradient. Where elements share an offset, their cotangents are added into it:

    * overlapping strides (sliding windows; config ``ordered_gather_gradients``, on by
      default): in the cotangent's row-major order, broadcast dimensions included, bit
      for bit ``np.add.at`` over the cotangent, on every platform and device count, as
      the gradients of `dmljax.gather` add (the ordered add; `jax.jvp` and second order
      add in that order too). The forward program is the same;
    * broadcast (zero-stride) dimensions alone: by XLA's ``reduce_sum`` of the broadcast,
      in XLA's order (by platform and shape), not the loop's: ordering it cost 9-29x the
      gradient on one CPU device (docs/design/gather-gradient.md, "read_tensor").

    Args:
      buffer: 1-D array of ``desc.dtype`` with at least ``desc.min_buffer_elements``
        elements (a longer buffer is fine).
      desc: the `TensorDesc`; static under `jax.jit`.

    Returns:
      An array of shape ``desc.sizes`` and ``desc.dtype``.

    Raises:
      ValidationError: the buffer is not 1-D, has another type or is too short.

    Examples:
      >>> import numpy as np
      >>> padded = np.array([0, 1, 2, -1, -1, 3, 4, 5], np.float32)  # rows of 3, stride 5
      >>> read_tensor(padded, TensorDesc("float32", (2, 3), strides=(5, 1)))
      Array([[0., 1., 2.],
             [3., 4., 5.]], dtype=float32)
      >>> read_tensor(np.arange(3, dtype=np.int32), TensorDesc("int32", (2, 3), strides=(0, 1)))
      Array([[0, 1, 2],
             [0, 1, 2]], dtype=int32)
    """
    buffer = check_buffer("read_tensor", "buffer", buffer, desc)
    return mark(_read_impl(buffer, desc, True), buffer, op="read_tensor", desc=desc)


def read_operand(buffer: jax.Array, desc: TensorDesc) -> jax.Array:
    """`read_tensor` of a checked buffer for an operator's input (`compile_operator`): plain transposes.

    The tiled NHWC transpose (`dmljax._buffers.transpose`) pays off when the read array is itself
    the result. An operator that consumes it reads through XLA's fused transpose without
    materialising it, in half the time (docs/design/tiled-transpose.md).
    """
    return mark(_read_impl(buffer, desc, False), buffer, op="read_tensor", desc=desc)


def write_tensor(buffer: jax.typing.ArrayLike, desc: TensorDesc, value: jax.typing.ArrayLike) -> jax.Array:
    """Return a copy of ``buffer`` with ``value`` written at the offsets ``desc`` describes.

    ``new[dot(c, desc.strides)] = value[c]``; every other element of the buffer is kept.
    Donate ``buffer`` (``jax.jit(..., donate_argnums=...)``) to update it in place. With
    padded rows, a buffer that ends before its last row's padding (DirectML's minimum,
    ``desc.min_buffer_elements``) costs XLA one more copy of the output; a buffer of whole
    rows is written in one pass (docs/design/strided-lowering.md).

    Args:
      buffer: 1-D array of ``desc.dtype``, at least ``desc.min_buffer_elements`` long.
      desc: the `TensorDesc`; its elements must not alias (no zero stride on a
        dimension of size > 1, no overlapping strides). Static under `jax.jit`.
      value: an array of shape ``desc.sizes`` and ``desc.dtype``.

    Returns:
      The new buffer, same shape and type as ``buffer``.

    Raises:
      ValidationError: the descriptor aliases, or the buffer or value breaks a rule.

    Examples:
      >>> import numpy as np
      >>> desc = TensorDesc("int32", (2, 3), strides=(1, 2))  # column-major
      >>> write_tensor(np.zeros(6, np.int32), desc, np.array([[1, 2, 3], [4, 5, 6]], np.int32))
      Array([1, 4, 2, 5, 3, 6], dtype=int32)
    """
    op = "write_tensor"
    buffer = check_buffer(op, "buffer", buffer, desc)
    if has_aliasing(desc.sizes, desc.strides):
        rule = "describe each element at its own offset (no zero or overlapping strides)"
        raise fail(op, "desc.strides", rule, desc.strides, f"sizes {desc.sizes}")
    value = jnp.asarray(as_desc_type(op, "value", value, desc, like=""))
    if value.shape != desc.sizes:
        raise fail(op, "value.shape", f"equal desc.sizes {desc.sizes}", value.shape)
    if value.dtype != desc.dtype.dtype:
        raise fail(op, "value.dtype", f"be {desc.dtype.name}{_x64_hint(desc)}", str(value.dtype))
    return mark(_write_impl(buffer, value, desc), buffer, value, op="write_tensor", desc=desc)


def write_operand(buffer: jax.Array, desc: TensorDesc, value: jax.Array) -> jax.Array:
    """`write_tensor` of an operator's output (`compile_operator`), whose descriptor was validated.

    ``buffer`` is 1-D of ``desc.dtype`` and long enough, ``value`` of ``desc.sizes`` and
    ``desc.dtype``, and ``desc`` does not alias (the descriptor layer's ``check_output``):
    no checks, the same trace as `write_tensor`'s.
    """
    return mark(_write_impl(buffer, value, desc), buffer, value, op="write_tensor", desc=desc)


def _prefix(buffer: jax.Array, length: int) -> jax.Array:
    """The first ``length`` elements, zero-padded when the buffer is shorter."""
    have = buffer.shape[0]
    if have == length:
        return buffer
    if have > length:
        return lax.slice(buffer, (0,), (length,))
    return jnp.pad(buffer, (0, length - have))


def _core_offsets(op: str, desc: TensorDesc, plan: OffsetsPlan) -> jax.Array:
    """Offsets of the core's elements within one row, built from iotas (fused by XLA).

    uint32 covers every buffer DirectML allows (< 2**32 elements) without 64-bit types,
    and the outer levels were split off first, so the offsets stay within a row.
    """
    last = plan.core_extent - 1
    if last < 2**32:
        dtype = jnp.uint32
    elif x64_enabled():
        dtype = jnp.uint64
    else:
        rule = "keep the offsets of its interleaved dimensions below 2**32, or jax_enable_x64 must be on"
        raise fail(op, "desc.strides", rule, desc.strides, f"sizes {desc.sizes}, largest such offset {last}")
    offsets = jnp.zeros(plan.core_sizes, dtype)
    for dim, stride in enumerate(plan.core_strides):
        offsets = offsets + lax.broadcasted_iota(dtype, plan.core_sizes, dim) * np.asarray(stride, dtype)
    return offsets


def _fit_last(x: jax.Array, length: int) -> jax.Array:
    """``x`` with its last axis cut or zero-padded to ``length``."""
    have = x.shape[-1]
    if have > length:
        return lax.slice_in_dim(x, 0, length, axis=-1)
    if have < length:
        return jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, length - have)])
    return x


def _row_indices(x: jax.Array, offsets: jax.Array) -> tuple[jax.Array, tuple[int, ...]]:
    """Flat offsets broadcast over the leading (batch) axes of ``x``, as gather/scatter indices.

    The leading axes are batching dimensions (each row its own gather), which keeps a
    batch-sharded buffer local and reads rows contiguously.
    """
    batch = x.ndim - 1
    indices = lax.broadcast_in_dim(offsets.reshape(-1), x.shape[:-1] + (offsets.size, 1), (batch,))
    return indices, tuple(range(batch))


def _gather_rows(x: jax.Array, offsets: jax.Array) -> jax.Array:
    """``out[b..., c...] = x[b..., offsets[c...]]``: one gather, the leading axes as batch."""
    indices, batch = _row_indices(x, offsets)
    dnums = lax.GatherDimensionNumbers((), (len(batch),), (len(batch),), batch, batch)
    out = lax.gather(x, indices, dnums, (1,) * x.ndim, mode=lax.GatherScatterMode.PROMISE_IN_BOUNDS)
    return out.reshape(x.shape[:-1] + offsets.shape)


def _scatter_rows(x: jax.Array, offsets: jax.Array, value: jax.Array) -> jax.Array:
    """``x[b..., offsets[c...]] = value[b..., c...]``; the offsets are distinct."""
    indices, batch = _row_indices(x, offsets)
    dnums = lax.ScatterDimensionNumbers((), (len(batch),), (len(batch),), batch, batch)
    updates = value.reshape(x.shape[:-1] + (offsets.size,))
    mode = lax.GatherScatterMode.PROMISE_IN_BOUNDS
    return lax.scatter(x, indices, updates, dnums, unique_indices=True, mode=mode)


def _offsets_order(plan: OffsetsPlan) -> tuple[int, ...]:
    return tuple(dim for dim, _, _ in plan.levels) + plan.core_dims


def _plan_offsets(buffer: jax.Array, desc: TensorDesc) -> OffsetsPlan:
    """`plan_offsets`, unsplit when the buffer stops short of the outermost level's last row.

    Padding such a buffer to whole rows costs a copy; one flat gather over offsets below
    2**32 does not (docs/design/strided-lowering.md). A buffer of whole rows keeps the split (and stays
    shard-local when sharded by rows).
    """
    plan = plan_offsets(desc.sizes, desc.strides)
    if plan.levels and buffer.shape[0] < plan.levels[0][1] * plan.levels[0][2] and desc.min_buffer_elements <= 2**32:
        return plan_offsets(desc.sizes, desc.strides, split=False)
    return plan


def _read_offsets(buffer: jax.Array, desc: TensorDesc) -> jax.Array:
    """Split the outer levels off as array axes, then gather the core within each row."""
    plan = _plan_offsets(buffer, desc)
    x = buffer
    for _, size, stride in plan.levels:
        x = _fit_last(x, size * stride).reshape(x.shape[:-1] + (size, stride))
    if plan.core_dims:
        x = _gather_rows(x, _core_offsets("read_tensor", desc, plan))
    else:
        x = lax.index_in_dim(x, 0, axis=-1, keepdims=False)
    order = _offsets_order(plan)
    x = lax.transpose(x, tuple(np.argsort(order)))
    return lax.broadcast_in_dim(x, desc.sizes, tuple(sorted(order)))


def _write_levels(x: jax.Array, value: jax.Array, levels: tuple, offsets: jax.Array | None) -> jax.Array:
    """Write ``value`` (level axes, then core axes) into the rows of ``x`` level by level."""
    if not levels:
        if offsets is None:
            return lax.dynamic_update_slice_in_dim(x, value[..., None], 0, axis=-1)
        return _scatter_rows(x, offsets, value)
    (_, size, stride), have = levels[0], x.shape[-1]
    view = _fit_last(x, size * stride).reshape(x.shape[:-1] + (size, stride))
    flat = _write_levels(view, value, levels[1:], offsets).reshape(x.shape[:-1] + (size * stride,))
    if size * stride < have:
        return lax.dynamic_update_slice_in_dim(x, flat, 0, axis=-1)
    return _fit_last(flat, have)


def _write_offsets(buffer: jax.Array, value: jax.Array, desc: TensorDesc) -> jax.Array:
    plan = _plan_offsets(buffer, desc)
    order = _offsets_order(plan)
    x = value.reshape(tuple(desc.sizes[d] for d in sorted(order)))
    x = lax.transpose(x, tuple(sorted(order).index(d) for d in order))
    offsets = _core_offsets("write_tensor", desc, plan) if plan.core_dims else None
    return _write_levels(buffer, x, plan.levels, offsets)


def _read_view(buffer: jax.Array, plan: LayoutPlan) -> jax.Array:
    """The tensor's elements in physical order: reshape, then slice and split each level."""
    sizes, strides = plan.physical_sizes, plan.physical_strides
    x = _prefix(buffer, plan.extent).reshape(sizes[0], strides[0])
    for size, stride in zip(sizes[1:], strides[1:], strict=True):
        if x.shape[-1] != size * stride:
            x = lax.slice_in_dim(x, 0, size * stride, axis=-1)
        x = x.reshape(x.shape[:-1] + (size, stride))
    if x.shape[-1] != 1:
        x = lax.slice_in_dim(x, 0, 1, axis=-1)
    return x.reshape(sizes)


def overlaps(desc: TensorDesc) -> bool:
    """Whether two logical elements share an offset through nonzero strides (overlapping windows).

    Zero strides alone (broadcasts) do not count: those reads keep `lax.broadcast_in_dim`.

    Examples:
      >>> overlaps(TensorDesc("float32", (3, 3), strides=(1, 1)))  # sliding windows
      True
      >>> overlaps(TensorDesc("float32", (2, 3), strides=(0, 1)))  # a broadcast
      False
    """
    live = tuple(1 if s == 0 else n for n, s in zip(desc.sizes, desc.strides, strict=True))
    return has_aliasing(live, desc.strides)


def _targets_dtype(desc: TensorDesc) -> Any:
    """uint32, or uint64 with 64-bit types on, for the largest offset; None where neither fits."""
    last = sum((n - 1) * s for n, s in zip(desc.sizes, desc.strides, strict=True))
    if last < 2**32:
        return jnp.uint32
    return jnp.uint64 if x64_enabled() else None


def _element_targets(desc: TensorDesc, dtype: Any) -> jax.Array:
    """Buffer offset of every logical element (shape ``desc.sizes``), from iotas (fused by XLA)."""
    targets = jnp.zeros(desc.sizes, dtype)
    for dim, (size, stride) in enumerate(zip(desc.sizes, desc.strides, strict=True)):
        if size > 1 and stride:
            targets = targets + lax.broadcasted_iota(dtype, desc.sizes, dim) * np.asarray(stride, dtype)
    return targets


def _ordered_read(buffer: jax.Array, desc: TensorDesc, dtype: Any) -> jax.Array:
    """`_read_offsets` whose derivative is an ordered take of every logical element.

    The primal is the read as it was (the same compiled program); the tangent is
    ``ordered_take(buffer_dot, targets)`` at every element's offset (`dmljax._core.ordered_hooks`),
    linear, so its transpose adds the cotangent into the buffer in its row-major order,
    broadcast dimensions included, and its own JVP and transpose keep that order at every order.
    """

    @jax.custom_jvp
    def read(b: jax.Array) -> jax.Array:
        return _read_offsets(b, desc)

    @read.defjvp
    def read_jvp(primals: tuple, tangents: tuple) -> tuple[jax.Array, jax.Array]:
        return read(primals[0]), ordered_hooks.ordered_take(tangents[0], _element_targets(desc, dtype))

    return read(buffer)


def _ordered_dtype(desc: TensorDesc) -> Any:
    """The targets' type of `_ordered_read` when ``desc`` reads overlapping float elements, else None.

    Config ``ordered_gather_gradients`` off, integer types, layouts without overlapping
    strides and offsets past uint32 without 64-bit types keep the plain read (and JAX's
    transpose); the caller checked that the layout is not nested.
    """
    if not (config.ordered_gather_gradients and jnp.issubdtype(desc.dtype.dtype, jnp.inexact)):
        return None
    return _targets_dtype(desc) if overlaps(desc) else None


@functools.partial(jax.jit, static_argnums=(1, 2))
def _read_impl(buffer: jax.Array, desc: TensorDesc, tiles: bool) -> jax.Array:
    plan = plan_layout(desc.sizes, desc.strides)
    if not plan.nested:
        dtype = _ordered_dtype(desc)
        return _read_offsets(buffer, desc) if dtype is None else _ordered_read(buffer, desc, dtype)
    if plan.physical_dims:
        x = _read_view(buffer, plan)
        if not plan.is_identity:
            perm = tuple(int(d) for d in np.argsort(plan.physical_dims))
            x = transpose(x, perm) if tiles else lax.transpose(x, perm)
    else:
        x = lax.slice(buffer, (0,), (1,)).reshape(())
    if not plan.broadcast_dims:
        return x.reshape(desc.sizes)
    return lax.broadcast_in_dim(x, desc.sizes, tuple(sorted(plan.physical_dims)))


@functools.partial(jax.jit, static_argnums=2)
def _write_impl(buffer: jax.Array, value: jax.Array, desc: TensorDesc) -> jax.Array:
    plan = plan_layout(desc.sizes, desc.strides)
    if plan.nested and not plan.physical_dims:
        return lax.dynamic_update_slice(buffer, value.reshape(1), (0,))
    if not plan.nested or plan.view_shape is None:  # interleaved, or padded by uneven amounts
        return _write_offsets(buffer, value, desc)
    logical_order = tuple(sorted(plan.physical_dims))
    x = value.reshape(tuple(desc.sizes[d] for d in logical_order))
    if not plan.is_identity:
        x = lax.transpose(x, tuple(logical_order.index(d) for d in plan.physical_dims))
    x = x.reshape(plan.view_limits)
    length = buffer.shape[0]
    if plan.is_contiguous and plan.extent == length:
        return x.reshape(-1)
    if not plan.is_contiguous:
        x = _with_padding(x, _prefix(buffer, plan.extent).reshape(plan.view_shape))
    flat = x.reshape(-1)
    if plan.extent > length:
        # The buffer stops short of its last row's padding (DirectML's minimum size), so
        # this slice copies the whole output a second time (a buffer of whole rows: one
        # pass); the one-pass alternatives were slower (docs/design/strided-lowering.md).
        return lax.slice(flat, (0,), (length,))
    return lax.concatenate([flat, lax.slice(buffer, (plan.extent,), (length,))], 0)


def _with_padding(x: jax.Array, view: jax.Array) -> jax.Array:
    """``view`` with ``x`` in its leading corner, as concatenates of ``x`` and the view's padding.

    Innermost axis first: ``x`` grows by the view's padding columns until it has the
    view's shape. One concatenate per padded axis runs faster on XLA CPU than a
    dynamic_update_slice of ``x`` into the view (docs/design/strided-lowering.md).
    """
    for axis in reversed(range(x.ndim)):
        have, want = x.shape[axis], view.shape[axis]
        if have < want:
            start = (0,) * axis + (have,) + (0,) * (x.ndim - axis - 1)
            limit = x.shape[:axis] + view.shape[axis:]
            x = lax.concatenate([x, lax.slice(view, start, limit)], axis)
    return x
