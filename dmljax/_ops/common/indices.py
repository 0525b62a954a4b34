"""Index arguments and the argument checks the index operators share: types, modes, bounds.

One place for every rule about an indices argument, and for the checks of the other
arguments that every operator makes alike (`as_data`, `check_rank`, `check_axis`,
`check_axis_size`, `check_elements_shape`, `check_sizes_except_axis`):

* **Types.** INT32, INT64, UINT32, UINT64 (`INDEX_TYPES`), exact at every width and every
  ``jax_enable_x64`` setting: NumPy's and ONNX's default int64 arrays just work, and with
  x64 off a 64-bit host value outside the 32-bit range is decided on the host before
  narrowing (`dmljax._ops.common.index_checks.narrow_on_host`) instead of being truncated by JAX.
* **Negative values** of a signed type count from the end of the axis (DirectML from
  feature level 3.0, ONNX Gather 11+): along an axis of size ``n`` the valid range is
  ``[-n, n)`` for signed types and ``[0, n)`` for unsigned ones.
* **Out-of-range values.** With the default ``mode=None``, concrete (untraced) indices are
  checked and the first bad value raises `IndexError`; traced indices (under `jax.jit`,
  `jax.vmap`, ...) never crash and follow the operator's DirectML-faithful default:
  gathers read clamped (DML_GATHER: "all reads are safely clamped"), scatter drops the
  update. An explicit ``mode`` (`IndexMode`) chooses the behaviour everywhere, eager or not.
* **Axis lengths** up to DirectML's 2^32 - 1 elements (beyond with x64 on).

Indices are normalised once, cheaply (`normalize`): negative values are wrapped with one
fused select in unsigned arithmetic of the index's width, and the result is uint32
positions, so XLA's gather needs only a one-sided clamp (faster than int32 on CPU:
docs/design/gather-index-apart.md) and no bound is ever computed in a type too small for it.
"""

from __future__ import annotations

import dataclasses
import enum
import operator
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from dmljax._core.dtypes import DataType, as_data_type, x64_enabled
from dmljax._core.errors import fail
from dmljax._core.limits import INT32_MAX, MAX_DIMENSIONS, UINT32_MAX

__all__ = [
    "INDEX_TYPES",
    "IndexMode",
    "IndexPolicy",
    "as_data",
    "as_indices",
    "as_updates",
    "check_axis",
    "check_axis_size",
    "gather_in_mode",
    "check_elements_shape",
    "check_rank",
    "check_sizes_except_axis",
    "lax_mode",
    "normalize",
    "position_dtype",
    "resolve_mode",
    "size_scalar",
    "type_fail",
]

# Index types of DML_SCATTER / DML_GATHER_ELEMENTS from feature level 3.0
# (https://learn.microsoft.com/en-us/windows/win32/api/directml/ns-directml-dml_scatter_operator_desc);
# ONNX Gather allows the signed two (https://onnx.ai/onnx/operators/onnx__Gather.html);
# dmljax accepts all four for every operator.
INDEX_TYPES = (DataType.INT32, DataType.INT64, DataType.UINT32, DataType.UINT64)


class IndexMode(enum.Enum):
    """What `gather`, `gather_elements` and `scatter` do with an out-of-range index.

    Along an axis of ``n`` elements the valid indices are ``[-n, n)`` for signed types
    (int32, int64: negative values count from the end, ``-1`` is the last element, as in
    DirectML from feature level 3.0 and ONNX Gather 11+) and ``[0, n)`` for unsigned ones
    (uint32, uint64). Every mode decides on the index's full value: a 64-bit index is never
    truncated to 32 bits first, and axes of up to 2^32 - 1 elements are exact.

    The default of every operator, ``mode=None``, checks concrete (untraced) indices
    eagerly and raises `IndexError` naming the first bad value and its position (ONNX
    calls such an index an error). Traced indices cannot be checked; they get DirectML's
    behaviour: `CLIP` for the gathers (DML_GATHER: "all reads are safely clamped") and
    `FILL` (drop) for scatter. Pass a mode, as a member or its string, to choose one
    behaviour everywhere, eager or traced.

    Attributes:
      CLIP: ``"clip"``. The index is clamped into the axis: below ``-n`` means ``0``, at or
        above ``n`` means ``n - 1``. Gathers read there, scatter writes there. Gradients
        follow the same clamped positions.
      FILL: ``"fill"`` (alias ``"drop"``). Gathers return zero (``False`` for bool) for the
        element; scatter drops the update (the input value stays). Gradients are zero for
        the dropped elements.
      PROMISE_IN_BOUNDS: ``"promise_in_bounds"``. The caller promises every index is in
        range; nothing is checked or clamped beyond what XLA does anyway (gathers read
        clamped, scatters drop). Fastest; gradients are unspecified for bad indices.
      CHECKED: ``"checked"``. As the default (clip for gathers, drop for scatter), plus a
        check that works under `jax.jit`: concrete indices raise `IndexError`, traced
        ones add a `jax.experimental.checkify.check`, so the function must be wrapped in
        `jax.experimental.checkify.checkify` (its error names the first bad value).

    Examples:
      >>> import dmljax
      >>> x = jnp.array([10.0, 20.0, 30.0])
      >>> dmljax.gather(x, np.array([-1, 5]), mode="clip")  # -1: the last; 5: clamped
      Array([30., 30.], dtype=float32)
      >>> dmljax.gather(x, np.array([-1, 5]), mode=dmljax.IndexMode.FILL)
      Array([30.,  0.], dtype=float32)
      >>> dmljax.scatter(x, np.array([5]), jnp.array([1.0]), mode="drop")
      Array([10., 20., 30.], dtype=float32)
      >>> dmljax.gather(x, np.array([2**32 + 1]), mode="fill")  # not row 1: 64 bits decide
      Array([0.], dtype=float32)
      >>> IndexMode.from_any("drop")
      IndexMode.FILL
    """

    CLIP = "clip"
    FILL = "fill"
    PROMISE_IN_BOUNDS = "promise_in_bounds"
    CHECKED = "checked"

    def __repr__(self) -> str:
        return f"IndexMode.{self.name}"

    @staticmethod
    def from_any(mode: Any, op: str = "dmljax") -> IndexMode:
        """Accept an `IndexMode` or its string value (``"drop"`` means `FILL`).

        Raises:
          ValidationError: ``mode`` is no known mode.
        """
        if isinstance(mode, IndexMode):
            return mode
        if mode == "drop":
            return IndexMode.FILL
        for member in IndexMode:
            if mode == member.value:
                return member
        names = ", ".join(repr(m.value) for m in IndexMode)
        raise fail(op, "mode", f"be None, 'drop' or one of {names}", mode)


@dataclasses.dataclass(frozen=True)
class IndexPolicy:
    """A resolved mode: what the computation does, and which checks run.

    Attributes:
      mode: `CLIP`, `FILL` or `PROMISE_IN_BOUNDS`: what the array function does.
      eager_check: check concrete indices and raise `IndexError`.
      checkify: add a checkify check when the indices are traced.
    """

    mode: IndexMode
    eager_check: bool
    checkify: bool


def resolve_mode(op: str, mode: Any, default: IndexMode) -> IndexPolicy:
    """Resolve a user ``mode`` (None or `IndexMode` or string) for operator ``op``."""
    if mode is None:
        return IndexPolicy(default, eager_check=True, checkify=False)
    mode = IndexMode.from_any(mode, op)
    if mode is IndexMode.CHECKED:
        return IndexPolicy(default, eager_check=True, checkify=True)
    return IndexPolicy(mode, eager_check=False, checkify=False)


def lax_mode(mode: IndexMode) -> lax.GatherScatterMode:
    """The `lax.GatherScatterMode` that implements a resolved mode on normalised indices."""
    return {
        IndexMode.CLIP: lax.GatherScatterMode.CLIP,
        IndexMode.FILL: lax.GatherScatterMode.FILL_OR_DROP,
        IndexMode.PROMISE_IN_BOUNDS: lax.GatherScatterMode.PROMISE_IN_BOUNDS,
    }[mode]


def type_fail(op: str, param: str, rule: str, value: Any, context: str = "") -> TypeError:
    """Return (not raise) a `TypeError` worded with the house message template."""
    return TypeError(str(fail(op, param, rule, value, context)))


def as_data(op: str, param: str, value: Any) -> jax.Array:
    """``value`` as a JAX array (tracers pass through) of a supported `DataType`.

    Raises:
      TypeError: the data type is none of `DataType`.
    """
    if not isinstance(value, jax.Array):
        value = np.asarray(value)
    as_data_type(value.dtype, op, f"{param}.dtype")
    return value if isinstance(value, jax.Array) else jnp.asarray(value)


def as_indices(op: str, indices: Any, param: str = "indices") -> jax.Array | np.ndarray:
    """Check the index type; return JAX arrays (tracers too) as they are, host values as NumPy.

    ``param`` names the argument in the error (``segment_ids``).

    Host values stay on the host until their full-width values are checked and, with
    ``jax_enable_x64`` off, narrowed exactly (`dmljax._ops.common.index_checks.prepare_indices`).

    Raises:
      TypeError: the indices are not INT32, INT64, UINT32 or UINT64.
    """
    if not isinstance(indices, jax.Array):
        indices = np.asarray(indices)
    dtype = np.dtype(indices.dtype)
    if dtype.kind not in "iu" or as_data_type(dtype) not in INDEX_TYPES:
        names = ", ".join(t.name for t in INDEX_TYPES)
        raise type_fail(op, f"{param}.dtype", f"be one of {names}", dtype)
    return indices


# The type JAX gives a host array with ``jax_enable_x64`` off: 64-bit host updates for a
# 32-bit input are converted as JAX converts them without x64, whatever the setting.
_X64_OFF = {np.dtype(k): np.dtype(v) for k, v in [("float64", "float32"), ("int64", "int32"), ("uint64", "uint32")]}
_X64_OFF[np.dtype("complex128")] = np.dtype("complex64")


def as_updates(op: str, updates: Any, dtype: np.dtype) -> jax.Array:
    """``updates`` as a JAX array of the input's ``dtype`` (DirectML: the same data type).

    JAX arrays must have ``dtype``. Host values (NumPy arrays, Python numbers) of the 64-bit
    type of a 32-bit ``dtype`` are converted to it with x64 on or off alike, as JAX converts
    them with x64 off; integers must fit.

    Raises:
      TypeError: the types differ otherwise.
      ValidationError: a 64-bit integer value does not fit ``dtype``.
    """
    if not isinstance(updates, jax.Array):
        host = np.asarray(updates)
        if host.dtype != dtype and _X64_OFF.get(host.dtype) == dtype:
            if dtype.kind in "iu" and host.size:
                info = np.iinfo(dtype)
                low, high = int(host.min()), int(host.max())
                if low < info.min or high > info.max:
                    value = low if low < info.min else high
                    raise fail(op, "updates", f"hold values that fit input.dtype {dtype}", value, "64-bit host values")
            updates = host.astype(dtype)
    updates = as_data(op, "updates", updates)
    if updates.dtype != dtype:
        raise type_fail(op, "updates.dtype", f"equal input.dtype ({dtype})", updates.dtype)
    return updates


def check_axis(op: str, axis: Any, rank: int, context: str) -> int:
    """Validate ``axis`` in ``[-rank, rank)`` and return it in ``[0, rank)``.

    Raises:
      ValidationError: ``axis`` is traced (it picks the output's shape), no integer or
        out of range.
    """
    if isinstance(axis, jax.core.Tracer):
        hint = f"{context}; mark it static: jax.jit(..., static_argnames='axis')"
        raise fail(op, "axis", "be a static int (not traced)", axis, hint)
    if isinstance(axis, bool) or not hasattr(axis, "__index__") or np.ndim(axis) != 0:
        raise fail(op, "axis", "be an integer", axis, context)
    try:  # a float array's __index__ raises TypeError
        axis = operator.index(axis)
    except TypeError:
        raise fail(op, "axis", "be an integer", axis, context) from None
    if not -rank <= axis < rank:
        raise fail(op, "axis", f"be in [{-rank}, {rank})", axis, context)
    return axis % rank


def check_rank(op: str, param: str, shape: tuple[int, ...]) -> None:
    """DirectML tensors have 1 to 8 dimensions."""
    if not 1 <= len(shape) <= MAX_DIMENSIONS:
        raise fail(op, f"{param}.ndim", f"be in [1, {MAX_DIMENSIONS}]", len(shape), f"{param} shape {shape}")


def check_axis_size(op: str, param: str, shape: tuple[int, ...], axis: int) -> None:
    """An indexed axis must not be empty (every DirectML size is >= 1), nor, with
    ``jax_enable_x64`` off, longer than DirectML's 2^32 - 1 elements (positions are uint32)."""
    size = shape[axis]
    if size < 1:
        raise fail(op, f"{param}.shape[{axis}]", "be >= 1 (the indexed axis)", size, f"{param} shape {shape}")
    if position_dtype(size).itemsize == 8 and not x64_enabled():
        rule = f"be at most {UINT32_MAX} (2^32 - 1) unless jax_enable_x64 is on (positions need uint64)"
        raise fail(op, f"{param}.shape[{axis}]", rule, size, f"{param} shape {shape}")


def check_elements_shape(op: str, shape: tuple[int, ...], index_shape: tuple[int, ...], axis: int, param: str) -> None:
    """DirectML's rule for GATHER_ELEMENTS and SCATTER: same rank, same sizes except ``axis``.

    Raises:
      ValidationError: the ranks or sizes differ.
    """
    context = f"{param} shape {shape}, axis {axis}"
    if len(index_shape) != len(shape):
        raise fail(op, "indices.ndim", f"equal {param}.ndim ({len(shape)})", len(index_shape), context)

    def error(name: str, rule: str, value: Any, extra: str) -> Exception:
        return fail(op, name, rule, value, extra)

    check_sizes_except_axis(shape, index_shape, axis, error, "indices.shape", f"{param}.shape", context)


def check_sizes_except_axis(
    shape: tuple[int, ...],
    index_shape: tuple[int, ...],
    axis: int,
    error: Callable[[str, str, Any, str], Exception],
    index_name: str,
    shape_name: str,
    context: str,
    rule_suffix: str = "",
) -> None:
    """The sizes rule of DML_SCATTER and DML_GATHER_ELEMENTS, the one place it lives.

    ``index_shape[d] == shape[d]`` for every ``d != axis``; ``error(param, rule, value,
    context)`` builds the exception, named with ``index_name``/``shape_name`` (the array
    API's or the descriptor's members), the rule ending in ``rule_suffix``.
    """
    for d, (size, index_size) in enumerate(zip(shape, index_shape, strict=True)):
        if d != axis and size != index_size:
            raise error(f"{index_name}[{d}]", f"equal {shape_name}[{d}] ({size}){rule_suffix}", index_size, context)


def position_dtype(axis_size: int) -> np.dtype:
    """The unsigned type of normalised positions along an axis of ``axis_size`` elements.

    uint32 up to DirectML's limit of 2^32 - 1 elements (symbolic sizes included), uint64
    beyond (which needs ``jax_enable_x64``).

    Examples:
      >>> position_dtype(2**32 - 1), position_dtype(2**32)
      (dtype('uint32'), dtype('uint64'))
    """
    if _constant(axis_size) and axis_size > UINT32_MAX:
        return np.dtype(np.uint64)
    return np.dtype(np.uint32)


def _constant(size: Any) -> bool:
    """Whether a dimension size is a known integer (not a `jax.export` symbolic dimension)."""
    return not jax.export.is_symbolic_dim(size)


def size_scalar(value: Any, dtype: np.dtype) -> Any:
    """``value`` (an int or a `jax.export` symbolic dimension) as a scalar of ``dtype``.

    Examples:
      >>> size_scalar(7, np.dtype(np.uint32))
      array(7, dtype=uint32)
    """
    if _constant(value):
        return np.asarray(value, dtype)
    return jnp.asarray(value).astype(dtype)


def normalize(indices: jax.Array, axis_size: int, mode: IndexMode) -> jax.Array:
    """Map indices to unsigned positions, exactly for every index type and axis length.

    In-range indices (``[-n, n)`` signed, ``[0, n)`` unsigned) map to ``[0, n)``: negative
    ones count from the end. Out-of-range ones map to values ``>= n``, except under
    `IndexMode.CLIP`, where values below ``-n`` map to ``0``; XLA's gather then clamps
    (`CLIP`) or masks (`FILL`) with a one-sided compare. The decision is taken on the
    full-width value: ``index + n`` is computed for negative indices only, in the signed
    type when it holds ``n`` (no overflow), else (int32 indices on an axis of 2^31 elements
    or more) in uint32 two's complement; 64-bit values are saturated before they are
    narrowed to `position_dtype` (uint32 up to 2^32 - 1 elements). For int32 indices on
    shorter axes this is the same four element-wise ops as before any width was considered.

    Examples:
      >>> normalize(jnp.array([-1, 0, 3, -4], jnp.int32), 3, IndexMode.CLIP)
      Array([2, 0, 3, 0], dtype=uint32)
      >>> normalize(jnp.array([-1, 2**31 - 1], jnp.int32), 2**32 - 1, IndexMode.FILL)
      Array([4294967294, 2147483647], dtype=uint32)
    """
    out = position_dtype(axis_size)
    dtype = np.dtype(indices.dtype)
    width = max(dtype.itemsize, out.itemsize)
    unsigned = np.dtype(f"uint{8 * width}")
    if dtype.kind == "u":
        position = lax.convert_element_type(indices, unsigned)
    else:
        signed = lax.convert_element_type(indices, np.dtype(f"int{8 * width}"))
        if _fits(axis_size, signed.dtype):  # index + n cannot overflow: wrap in the signed type
            position = jnp.where(signed < 0, signed + size_scalar(axis_size, signed.dtype), signed)
            if mode is IndexMode.CLIP:
                position = jnp.maximum(position, np.zeros((), signed.dtype))
            position = lax.convert_element_type(position, unsigned)  # below -n: -k -> 2^w - k >= n
        else:  # int32 on an axis of 2^31 elements or more: two's complement in uint32
            position = lax.convert_element_type(signed, unsigned)  # -k -> 2^w - k
            position = jnp.where(signed < 0, position + size_scalar(axis_size, unsigned), position)
    if unsigned.itemsize > out.itemsize:  # saturate, then narrow: out of range stays out of range
        position = jnp.minimum(position, np.asarray(np.iinfo(out).max, unsigned))
    return lax.convert_element_type(position, out)


def _fits(axis_size: Any, dtype: np.dtype) -> bool:
    """Whether signed ``dtype`` holds ``axis_size`` (symbolic sizes: JAX's default int does)."""
    return not _constant(axis_size) or axis_size <= np.iinfo(dtype).max


def gather_in_mode(
    operand: jax.Array,
    index: jax.Array,
    dimension_numbers: lax.GatherDimensionNumbers,
    slice_sizes: tuple[int, ...],
    mode: IndexMode,
) -> jax.Array:
    """`lax.gather` of normalised one-column indices (``index[..., 0]``) in a resolved mode.

    The same as ``lax.gather(..., mode=lax_mode(mode), fill_value=0)``, except on operands
    with a dimension of 2^31 elements or more under `IndexMode.FILL`: JAX's fill mask is
    computed in int32 there when ``jax_enable_x64`` is off (every read is filled), so the
    mask is computed here, on the unsigned positions, around a clamped gather.
    """
    dims = dimension_numbers
    if mode is not IndexMode.FILL or not any(_constant(d) and d > INT32_MAX for d in operand.shape):
        fill = 0 if mode is IndexMode.FILL else None
        return lax.gather(operand, index, dims, slice_sizes, mode=lax_mode(mode), fill_value=fill)
    out = lax.gather(operand, index, dims, slice_sizes, mode=lax.GatherScatterMode.CLIP)
    (axis,) = dims.start_index_map
    keep = index[..., 0] < size_scalar(operand.shape[axis], index.dtype)
    batch = tuple(d for d in range(out.ndim) if d not in dims.offset_dims)
    keep = lax.broadcast_in_dim(keep, out.shape, batch)
    return lax.select(keep, out, lax.full_like(out, 0))
