"""Range checks of index values, exact at every width: on the host, on the device, under checkify.

Where the values of an indices argument are known, `prepare_indices` decides what to check:

* **Host values** (NumPy arrays, Python ints and lists) are checked with NumPy on their
  full-width values, and, when ``jax_enable_x64`` is off, 64-bit values outside the 32-bit
  range are mapped on the host to uint32 positions that mean the same (`narrow_on_host`)
  before JAX would truncate them. On an operand that spans processes every process of it
  takes part (`check_host_agreed`: one all-gather of each one's verdict and CRC-32), so all
  raise the same error and none waits for the others in the operator's collectives.
* **Concrete JAX arrays** (sharded ones too, across processes) are never copied to the host:
  `call_checked` dispatches a small jitted program of its own (`dispatch_range`,
  `index_range`) that reduces the indices to their min and max, two replicated scalars that
  every process can read, then the operator's program, which is the very program a jitted
  call runs. Only a failing call locates the first bad index, on the device
  (`raise_out_of_range`). On a GPU the two scalars are written to pinned host memory; on
  XLA CPU large indices reduce in two stages.
* **Traced indices** are not checked eagerly; `IndexMode.CHECKED` adds a checkify check
  (`dmljax._ops.common.checked.checkify_in_bounds`).

Every check names the first bad index with one routine (`first_bad`) and one message
(`out_of_bounds`, NumPy's wording): host values, device values, checkify and the segment ids.

In the operator's own program the min/max made XLA CPU transpose and copy gather's axis-1
output, several times the jitted call's time; apart, the check costs a few percent.
Measurements and the alternatives: docs/design/index-checks.md.
"""

from __future__ import annotations

import functools
import zlib
from collections.abc import Callable
from typing import Any

import jax
import jax.extend
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.sharding import SingleDeviceSharding

from dmljax._core.config import config
from dmljax._core.dtypes import x64_enabled
from dmljax._core.errors import fail
from dmljax._core.limits import UINT32_MAX
from dmljax._ops.common.indices import IndexMode, IndexPolicy
from dmljax._ops.common.processes import exchange, spans_processes

__all__ = [
    "call_checked",
    "check_host",
    "check_host_agreed",
    "dispatch_range",
    "first_bad",
    "index_low",
    "index_range",
    "narrow_on_host",
    "out_of_bounds",
    "prepare_indices",
    "raise_first_bad",
    "valid_bounds",
    "raise_out_of_range",
]


def prepare_indices(
    op: str, indices: jax.Array | np.ndarray, data: jax.Array, axis: int, policy: IndexPolicy
) -> tuple[jax.Array, bool]:
    """Indices into axis ``axis`` of ``data``, ready for an operator's array function, and
    whether a device range check is due.

    Host values are checked now (``policy.eager_check``; with every process of ``data`` when
    it spans processes, `check_host_agreed`) and narrowed exactly; concrete JAX arrays that
    need a check return ``True``: the caller runs its array function through `call_checked`.
    """
    axis_size = data.shape[axis]
    if isinstance(indices, np.ndarray):
        if policy.eager_check:
            if spans_processes(data):
                check_host_agreed(op, indices, axis_size, axis, frozenset(data.sharding.device_set))
            else:
                check_host(op, indices, axis_size, axis)
        if indices.dtype.itemsize == 8 and not x64_enabled():
            indices = narrow_on_host(indices, axis_size, policy.mode)
        return jnp.asarray(indices), False
    return indices, policy.eager_check and not isinstance(indices, jax.core.Tracer)


def index_low(dtype: Any, size: int) -> int:
    """The lowest valid index of an axis of ``size``: ``-size`` for a signed type (counted
    from the end), else 0."""
    return -size if np.dtype(dtype).kind == "i" else 0


def out_of_bounds(op: str, param: str, value: Any, position: str, axis: int, size: Any, low: Any) -> str:
    """The one message of an index out of range: NumPy's words, then where and the valid range.

    Examples:
      >>> out_of_bounds("gather", "indices", 5, "1, 0", 0, 3, -3)
      'gather: index 5 is out of bounds for axis 0 with size 3 (indices[1, 0]; valid range [-3, 2]).'
    """
    return (
        f"{op}: index {value} is out of bounds for axis {axis} with size {size} "
        f"({param}[{position}]; valid range [{low}, {size - 1}])."
    )


def valid_bounds(dtype: Any, size: Any, low: int) -> tuple[int, Any]:
    """The valid range ``[low, size - 1]`` clipped to what ``dtype`` holds (``size`` may be symbolic)."""
    info = np.iinfo(dtype)
    high = min(size - 1, int(info.max)) if isinstance(size, int) else size - 1
    return max(low, int(info.min)), high


def first_bad(values: Any, low: int, high: Any) -> tuple[Any, Any, Any]:
    """Whether any of ``values`` lies outside ``[low, high]``, and the flat position and the value
    of the first that does, compared in the values' own type: NumPy values with NumPy, JAX
    arrays (traced too) with JAX.

    Examples:
      >>> first_bad(np.array([[0, 2], [-4, 7]]), -3, 2)
      (np.True_, np.int64(2), np.int64(-4))
    """
    xp: Any = np if isinstance(values, np.ndarray) else jnp
    dtype = np.dtype(values.dtype)
    flat = values.reshape(-1)
    bound = (lambda v: np.asarray(v, dtype)) if isinstance(high, int) else (lambda v: jnp.asarray(v, dtype))
    bad = (flat < bound(low)) | (flat > bound(high))
    first = xp.argmax(bad)
    return xp.any(bad), first, flat[first]


_first_bad_on_device = jax.jit(first_bad, static_argnums=(1, 2))


def raise_first_bad(op: str, values: Any, axis: int, size: Any, param: str = "indices", low: int | None = None) -> None:
    """Raise `IndexError` (`out_of_bounds`) for the first of concrete ``values`` (host or JAX)
    outside ``[low, size)``; ``low`` defaults to `index_low`.

    Examples:
      >>> raise_first_bad("gather", np.array([[0, 2], [-4, 1]]), 0, 3)
      Traceback (most recent call last):
      ...
      IndexError: gather: index -4 is out of bounds for axis 0 with size 3 (indices[1, 0]; valid range [-3, 2]).
    """
    low = index_low(values.dtype, size) if low is None else low
    bounds = valid_bounds(values.dtype, size, low)
    if isinstance(values, np.ndarray) or not isinstance(size, int):
        found, position, value = first_bad(values, *bounds)
    else:
        with jax.ensure_compile_time_eval():  # concrete values under a trace too
            found, position, value = _first_bad_on_device(values, *bounds)
    if not bool(found):
        return
    where = ", ".join(str(int(p)) for p in np.unravel_index(int(position), values.shape))
    raise IndexError(out_of_bounds(op, param, np.asarray(value).item(), where, axis, size, low))


def check_host(op: str, values: np.ndarray, axis_size: int, axis: int) -> None:
    """Raise `IndexError` for the first host value outside the valid range of the axis
    (`raise_first_bad`, after one min and max).

    Examples:
      >>> check_host("gather", np.array([[0, 2], [-4, 1]]), 3, 0)
      Traceback (most recent call last):
      ...
      IndexError: gather: index -4 is out of bounds for axis 0 with size 3 (indices[1, 0]; valid range [-3, 2]).
    """
    if values.size == 0:
        return
    low, high = valid_bounds(values.dtype, axis_size, index_low(values.dtype, axis_size))
    if int(values.min()) >= low and int(values.max()) <= high:
        return
    raise_first_bad(op, values, axis, axis_size)


# Bytes of an IndexError message in `check_host_agreed`'s exchange (longer ones are cut).
_MESSAGE_BYTES = 500


def check_host_agreed(op: str, values: np.ndarray, axis_size: int, axis: int, devices: frozenset) -> None:
    """`check_host`, decided together by every process holding one of ``devices``.

    Each process checks its own values, then one all-gather (`exchange`) gives every process
    each one's error message and a CRC-32 of its indices. If any process found a bad index,
    all raise the `IndexError` of the first such process (the very message of one process
    when the indices agree); if all are in range but the indices differ, all raise
    `ValidationError`: a call on an array that spans processes needs the same host values in
    every process (JAX's rule for host arguments of such calls). Every process of ``devices``
    must make the call; with one process it is `check_host` plus the exchange.

    Examples:
      >>> check_host_agreed("gather", np.array([0, 3]), 3, 0, {jax.devices()[0]})
      Traceback (most recent call last):
      ...
      IndexError: gather: index 3 is out of bounds for axis 0 with size 3 (indices[1]; valid range [-3, 2]).
    """
    try:
        check_host(op, values, axis_size, axis)
        message = b""
    except IndexError as error:
        message = str(error).encode()[:_MESSAGE_BYTES]
    digest = zlib.crc32(np.ascontiguousarray(values).tobytes(), zlib.crc32(f"{values.dtype}{values.shape}".encode()))
    row = np.zeros(4 + _MESSAGE_BYTES, np.uint8)
    row[:4] = np.frombuffer(digest.to_bytes(4, "little"), np.uint8)
    row[4 : 4 + len(message)] = np.frombuffer(message, np.uint8)
    rows = exchange(row, devices)
    same = len({bytes(r[:4]) for r in rows}) == 1
    for process, r in enumerate(rows):
        if r[4:].any():
            text = bytes(r[4:]).rstrip(b"\0").decode(errors="replace")
            where = "" if same else f" in process {process} (the host indices differ across processes)"
            raise IndexError(f"{text.removesuffix('.')}{where}.")
    if not same:
        rule = "be the same host values in every process of a call on an array that spans processes"
        raise fail(op, "indices", rule, f"{len(rows)} processes, CRC-32s differ", f"axis {axis}")


def narrow_on_host(values: np.ndarray, axis_size: int, mode: IndexMode) -> np.ndarray:
    """64-bit host indices as 32-bit ones with the same meaning along an axis of ``axis_size``.

    Values that fit the 32-bit type of their kind are cast (what JAX does with x64 off).
    Otherwise the decision is taken at full width and the result is uint32 positions:
    in-range values wrapped into ``[0, n)``; out-of-range ones ``2^32 - 1`` (``>= n``:
    clamped to ``n - 1`` or filled/dropped), or ``0`` below ``-n`` under `IndexMode.CLIP`.

    Examples:
      >>> narrow_on_host(np.array([2**32 + 1, -1, -(2**40)]), 3, IndexMode.CLIP)
      array([4294967295,          2,          0], dtype=uint32)
      >>> narrow_on_host(np.array([-1, 2]), 3, IndexMode.CLIP)
      array([-1,  2], dtype=int32)
    """
    narrow = np.dtype("int32") if values.dtype.kind == "i" else np.dtype("uint32")
    info = np.iinfo(narrow)
    if values.size == 0 or (int(values.min()) >= info.min and int(values.max()) <= info.max):
        return values.astype(narrow)
    wide = values.astype(np.int64) if values.dtype.kind == "i" else values
    signed = values.dtype.kind == "i"
    low = -axis_size if signed else 0
    inside = (wide >= low) & (wide < axis_size) if signed else wide < np.uint64(axis_size)
    positions = np.full(values.shape, UINT32_MAX, np.uint32)
    if signed:
        wrapped = np.where(wide < 0, wide + axis_size, wide)
        positions[inside] = wrapped[inside].astype(np.uint32)
        if mode is IndexMode.CLIP:
            positions[wide < low] = 0
    else:
        positions[inside] = wide[inside].astype(np.uint32)
    return positions


def _index_range(indices: jax.Array) -> jax.Array:
    """``[min, max]`` of the indices in their own type (identity values when empty).

    One variadic reduction (min and max in one pass: on XLA CPU 4-5x faster than ``jnp.min``
    and ``jnp.max``). On XLA CPU, large indices (``dmljax.config.index_check_two_stage_min_size``) reduce in two stages:
    along the last axis first (in parallel over the rows), then across the rows.

    Examples:
      >>> index_range(jnp.array([[3, -2], [0, 7]]))
      Array([-2,  7], dtype=int32)
      >>> index_range(jnp.zeros((0,), jnp.uint32))
      Array([4294967295,          0], dtype=uint32)
    """
    two_stage = indices.size >= config.index_check_two_stage_min_size and indices.ndim >= 2
    if two_stage and indices.shape[-1] >= config.index_check_two_stage_min_row:
        found = lax.platform_dependent(indices, cpu=_two_stage, default=_one_stage)
    else:
        found = _one_stage(indices)
    return jnp.stack(found)


def _min_max(low: jax.Array, high: jax.Array, dims: tuple[int, ...]) -> tuple[jax.Array, jax.Array]:
    dtype = np.dtype(low.dtype)
    info = np.iinfo(dtype)
    init = (np.asarray(info.max, dtype), np.asarray(info.min, dtype))
    return lax.reduce((low, high), init, lambda a, b: (lax.min(a[0], b[0]), lax.max(a[1], b[1])), dims)


def _one_stage(indices: jax.Array) -> tuple[jax.Array, jax.Array]:
    return _min_max(indices, indices, tuple(range(indices.ndim)))


def _two_stage(indices: jax.Array) -> tuple[jax.Array, jax.Array]:
    rows = _min_max(indices, indices, (indices.ndim - 1,))
    return _min_max(*rows, tuple(range(indices.ndim - 1)))


index_range = jax.jit(_index_range)


@functools.lru_cache(maxsize=64)
def _index_range_to_host(device: jax.Device) -> Callable[[jax.Array], jax.Array]:
    """`index_range` writing its two scalars to ``device``'s pinned host memory."""
    return jax.jit(_index_range, out_shardings=SingleDeviceSharding(device, memory_kind="pinned_host"))


def dispatch_range(indices: jax.Array) -> jax.Array:
    """Dispatch `index_range` of concrete ``indices``; on a GPU its result is written to host memory.

    Reading two scalars from a GPU's memory is a device-to-host copy; from pinned host memory
    the host waits only for the program (docs/design/index-checks.md).

    Examples:
      >>> dispatch_range(jnp.array([3, -2, 7])).tolist()
      [-2, 7]
    """
    sharding = indices.sharding
    if isinstance(sharding, SingleDeviceSharding):
        device: jax.Device = next(iter(sharding.device_set))
        if device.platform == "gpu" and config.index_check_pinned_host:
            return _index_range_to_host(device)(indices)
    return index_range(indices)


def raise_out_of_range(op: str, indices: jax.Array, found: jax.Array, axis_size: int, axis: int) -> None:
    """Raise `IndexError` naming the first bad index (`raise_first_bad`, on the device) if
    ``found`` (``[min, max]``) leaves the axis."""
    low, high = valid_bounds(indices.dtype, axis_size, index_low(indices.dtype, axis_size))
    found_low, found_high = np.asarray(found).tolist()  # two replicated scalars
    if found_low < low or found_high > high:
        raise_first_bad(op, indices, axis, axis_size)


def call_checked(op: str, impl: Callable[..., jax.Array], args: tuple, due: bool, **static: Any) -> jax.Array:
    """``impl(*args, **static)``; if a device range check is ``due``, check ``args[1]`` (the indices)
    against axis ``static["axis"]`` of ``args[0]``.

    The check is its own small program (`index_range`), dispatched before the operator's:
    the operator's program is the one a jitted call runs, queued while the check runs, and
    its result is returned only once the two scalars the check reads are in range. If
    another argument is traced (concrete indices closed over under `jax.jit`), the check
    runs at trace time.
    """
    if not due:
        return impl(*args, **static)
    indices, axis = args[1], static["axis"]
    axis_size = args[0].shape[axis]
    if any(isinstance(a, jax.core.Tracer) for a in args):
        with jax.ensure_compile_time_eval():  # concrete indices under a trace: check them now
            raise_out_of_range(op, indices, index_range(indices), axis_size, axis)
        return impl(*args, **static)
    found = dispatch_range(indices)
    out = impl(*args, **static)
    raise_out_of_range(op, indices, found, axis_size, axis)
    return out


def marked_mode(policy: IndexPolicy, indices: Any, axis_size: int) -> str:
    """The index mode an operator's marker records (`dmljax._core.markers`): what the trace computes.

    ``"checked"`` when a run-time check was asked for; ``"promise_in_bounds"`` when the
    indices are constants that were checked, or that all lie in ``[-s, s)``; else the
    mode the array function applies (``"clip"``, ``"fill"``, ``"promise_in_bounds"``).
    """
    if policy.checkify:
        return "checked"
    if not isinstance(indices, jax.core.Tracer):
        if policy.eager_check:
            return "promise_in_bounds"
        values = np.asarray(indices)
        low = -axis_size if values.dtype.kind == "i" else 0
        if bool(((values >= low) & (values < axis_size)).all()):
            return "promise_in_bounds"
    return policy.mode.value
