"""The segment reductions' arguments besides ``data``, validated once a call.

`validate_segments` checks ``segment_ids`` (type, shape), the two promises, ``mode`` and
``num_segments`` (or derives it from concrete ids), checks the ids under ``mode="checked"``
(`dmljax._ops.common.index_checks.raise_first_bad`, or a checkify check for traced ones:
the index checks' one routine and message), and returns them as `Segments`: unsigned
``(m, 1)`` tuples ready for ScatterND (`dmljax._ops.index.segment`).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from dmljax._core.dtypes import x64_enabled
from dmljax._core.errors import fail
from dmljax._core.limits import UINT32_MAX
from dmljax._ops.common.checked import checkify_in_bounds
from dmljax._ops.common.index_checks import raise_first_bad
from dmljax._ops.common.indices import IndexMode, IndexPolicy, as_indices

__all__ = ["Segments", "validate_segments"]


class Segments(NamedTuple):
    """Validated segment arguments: the ids as ``(m, 1)`` unsigned tuples, ``num_segments``, the promises."""

    tuples: Any
    n: Any
    indices_are_sorted: bool
    unique_indices: bool
    mode: IndexMode
    ids: Any = None  # as given (validated), for XLA CPU's row scatter (`scatter_nd_with_policy`'s row_ids)


def validate_segments(
    op: str,
    shape: tuple[int, ...],
    segment_ids: Any,
    num_segments: Any,
    indices_are_sorted: Any,
    unique_indices: Any,
    mode: Any,
) -> Segments:
    """Validate the arguments besides ``data`` (of ``shape``), check the ids as ``mode`` asks: once a call."""
    ids = _as_ids(op, segment_ids, shape)
    sorted_ = _flag(op, "indices_are_sorted", indices_are_sorted)
    unique = _flag(op, "unique_indices", unique_indices)
    policy = _policy(op, mode)
    n = _num_segments(op, num_segments, ids)
    if isinstance(n, int) and n == 0:  # no segment: nothing lands (scatter_nd needs a non-empty axis)
        return Segments(None, 0, sorted_, unique, policy.mode)
    if policy.checkify or policy.eager_check:
        _check_ids(op, ids, n)
    return Segments(_unsigned(ids, policy.mode)[:, None], n, sorted_, unique, policy.mode, ids)


def _as_ids(op: str, segment_ids: Any, shape: tuple[int, ...]) -> jax.Array | np.ndarray:
    """The ids as given (JAX arrays, tracers) or as NumPy (host values), type and shape checked."""
    segment_ids = as_indices(op, segment_ids, "segment_ids")
    context = f"data shape {shape}"
    if segment_ids.ndim != 1:
        raise fail(op, "segment_ids.ndim", "be 1 (one id per row of data)", segment_ids.ndim, context)
    if segment_ids.shape[0] != shape[0]:
        raise fail(op, "segment_ids.shape", f"equal (data.shape[0],) ({shape[0]},)", segment_ids.shape, context)
    return segment_ids


def _flag(op: str, param: str, value: Any) -> bool:
    if isinstance(value, jax.core.Tracer) or not isinstance(value, bool | np.bool_):
        raise fail(op, param, "be a static bool (a promise about segment_ids)", value)
    return bool(value)


def _policy(op: str, mode: Any) -> IndexPolicy:
    """JAX's convention: drop by default, concrete ids too; ``"checked"`` checks, then drops."""
    if mode is None:
        return IndexPolicy(IndexMode.FILL, eager_check=False, checkify=False)
    mode = IndexMode.from_any(mode, op)
    if mode is IndexMode.CHECKED:
        return IndexPolicy(IndexMode.FILL, eager_check=True, checkify=True)
    return IndexPolicy(mode, eager_check=False, checkify=False)


def _num_segments(op: str, num_segments: Any, ids: jax.Array | np.ndarray) -> Any:
    """``num_segments`` validated, or ``max(ids) + 1`` (at least 0) from concrete ids."""
    if num_segments is None:
        if isinstance(ids, jax.core.Tracer):
            rule = "be given (a static int) when segment_ids are traced: it fixes the output's shape"
            raise fail(op, "num_segments", rule, None, "under jax.jit, jax.vmap or jax.grad of the ids")
        if ids.shape[0] == 0:
            return 0
        with jax.ensure_compile_time_eval():
            top = int(np.max(ids)) if isinstance(ids, np.ndarray) else int(jnp.max(ids))
        return _in_range(op, max(top + 1, 0))
    if jax.export.is_symbolic_dim(num_segments):
        return num_segments
    if isinstance(num_segments, jax.core.Tracer):
        raise fail(op, "num_segments", "be a static int (not traced): it fixes the output's shape", num_segments)
    if isinstance(num_segments, bool) or not hasattr(num_segments, "__index__"):
        raise fail(op, "num_segments", "be an int or None", num_segments)
    return _in_range(op, int(num_segments))


def _in_range(op: str, n: int) -> int:
    """DirectML's sizes: ``0 <= n``, and below 2^32 unless ``jax_enable_x64`` is on (uint32 positions)."""
    if n < 0:
        raise fail(op, "num_segments", "be >= 0", n)
    if n > UINT32_MAX and not x64_enabled():
        raise fail(op, "num_segments", f"be at most {UINT32_MAX} (2^32 - 1) unless jax_enable_x64 is on", n)
    return n


def _check_ids(op: str, ids: jax.Array | np.ndarray, n: Any) -> None:
    """``mode="checked"``: concrete ids raise `IndexError` for the first outside ``[0, n)`` (the
    output's axis 0); traced ones get a `checkify.check` (the index checks' routine and message)."""
    if isinstance(ids, jax.core.Tracer):
        checkify_in_bounds(op, ids, n, 0, param="segment_ids", low=0)
    else:
        raise_first_bad(op, ids, 0, n, param="segment_ids", low=0)


def _unsigned(ids: jax.Array | np.ndarray, mode: IndexMode) -> jax.Array | np.ndarray:
    """Signed ids as unsigned ones of their width, so that a negative id is never counted from
    the end: two's complement puts it at ``2^w - k >= num_segments`` (dropped), or under
    `IndexMode.CLIP` it is first raised to 0 (JAX clamps it to segment 0)."""
    dtype = np.dtype(ids.dtype)
    if dtype.kind == "u":
        return ids
    unsigned = np.dtype(f"uint{8 * dtype.itemsize}")
    if isinstance(ids, np.ndarray):
        return (np.maximum(ids, 0) if mode is IndexMode.CLIP else ids).astype(unsigned)
    if mode is IndexMode.CLIP:
        ids = jnp.maximum(ids, np.zeros((), dtype))
    return lax.convert_element_type(ids, unsigned)
