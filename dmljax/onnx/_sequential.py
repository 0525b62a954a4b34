"""float16/bfloat16 ``"add"``/``"mul"`` scatters as a loop over the updates, rounded after each.

dmljax folds a scatter's updates in ONNX's loop order and rounds after every update, in
the data's own type (``2048 + 1 + 1`` is 2048 in float16). onnxruntime's CPU provider has
no float16 reduction kernel for ScatterElements/ScatterND, and running the node in a
float32 stand-in rounds once at the end (2050): not the same bits. A sum of two float16
(or bfloat16) values computed in float32 and rounded to float16 is the correctly rounded
float16 sum (float32 holds at least ``2p + 2`` bits: double rounding is innocuous), and a
product of two is exact in float32 before its one rounding; so each step runs in float32
and rounds through a Cast, which is what XLA does for these types. The steps cannot be
regrouped (float addition is not associative), so the model loops: from opset 18 in
dmljax's own rounds (`_rounds`: one Loop iteration per duplicate round), below one Loop
iteration per update (`_one_by_one`). The exporter uses this only for these two types
and reductions; figures in ``docs/design/onnx-export.md``.
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from dmljax._core.errors import fail
from dmljax.onnx._primitives import EXPORT_PRIMITIVES

__all__ = ["needs_sequential", "sequential_scatter"]

_HALF = (np.dtype(np.float16), np.dtype(jnp.bfloat16))
_COMBINE = {"add": lax.add, "mul": lax.mul}


def needs_sequential(op: str, operands: list[Any], params: dict[str, Any]) -> bool:
    """Whether a marked scatter is a float16/bfloat16 add/mul (``operands``: input, indices, updates)."""
    return (
        op in ("scatter", "scatter_nd") and params.get("reduction") in _COMBINE and np.dtype(operands[0].dtype) in _HALF
    )


def _tuples(index: Any, axis: int) -> Any:
    """ScatterElements' indices as ScatterND's coordinate tuples: each element's own position,
    ``index`` on ``axis`` (the other coordinates are in range, so the modes act on ``axis`` only)."""
    shape, r = index.shape + (1,), index.ndim
    columns = [
        index.reshape(shape) if d == axis else lax.broadcasted_iota(index.dtype, shape, d) for d in range(r)
    ]  # lax.concatenate, not jnp.stack: jax2onnx's plugin index does not place the stack primitive
    return lax.concatenate(columns, r)


def sequential_scatter(op: str, operands: list[Any], params: dict[str, Any], opset: int) -> Any:
    """The scatter with every update combined in float32 and rounded to the data's type, in
    row-major order: `_rounds` from opset 18 (ScatterElements ``min``), else `_one_by_one`."""
    data, index, updates = operands
    if any(jax.export.is_symbolic_dim(d) for d in (*data.shape, *index.shape)):
        rule = "be fixed for a float16/bfloat16 add/mul reduction in an ONNX export (a Loop over the updates)"
        raise fail(op, "updates.shape", rule, str(updates.shape))
    tuples = _tuples(index, params["axis"]) if op == "scatter" else index
    k = tuples.shape[-1]
    m, n, w = math.prod(tuples.shape[:-1]), math.prod(data.shape[:k]), math.prod(data.shape[k:])
    if m == 0 or n == 0 or w == 0:
        return data
    tuples = tuples.reshape(m, k)
    rows = lax.convert_element_type(updates, np.float32).reshape((m,) + tuple(data.shape[k:]))
    f, dtype = _COMBINE[params["reduction"]], np.dtype(data.dtype)

    def combine(now: Any, row: Any) -> Any:  # rounded to the data's type, held in float32
        return lax.convert_element_type(lax.convert_element_type(f(now, row), dtype), np.float32)

    if opset >= 18 and n < np.iinfo(np.int32).max and m < np.iinfo(np.int32).max:
        out = _rounds(lax.convert_element_type(data, np.float32), tuples, rows, params["mode"], combine)
    else:
        out = _one_by_one(lax.convert_element_type(data, np.float32), tuples, rows, params["mode"], combine)
    return lax.convert_element_type(out, dtype)


def _one_by_one(data: Any, tuples: Any, rows: Any, mode: str, combine: Any) -> Any:
    """One Loop iteration per update: GatherND of its target, the combine, ScatterND back."""

    def step(out: Any, item: tuple[Any, Any]) -> tuple[Any, None]:
        where, row = item
        now = EXPORT_PRIMITIVES["gather_nd"].bind(out, where[None], batch_dims=0, mode=mode)
        new = combine(now, row[None])
        return EXPORT_PRIMITIVES["scatter_nd"].bind(out, where[None], new, mode=mode, reduction="none"), None

    return lax.scan(step, data, (tuples, rows))[0]


def _targets(tuples: Any, sizes: tuple[int, ...], mode: str) -> tuple[Any, Any]:
    """Each tuple's row-major int32 position among ``sizes`` after the index mode, and
    whether it is valid (fill drops the others): negatives count from the end."""
    dtype = np.dtype(tuples.dtype)
    position, valid = None, None
    stride = math.prod(sizes)
    for j, size in enumerate(sizes):
        stride //= size
        t = tuples[:, j]
        if mode == "clip":
            t = jnp.clip(t, -size if dtype.kind == "i" else 0, size - 1)
        if dtype.kind == "i":
            t = jnp.where(t < 0, t + np.asarray(size, dtype), t)
        if mode == "fill":
            ok = (t >= 0) & (t < size) if dtype.kind == "i" else t < size
            valid = ok if valid is None else valid & ok
            t = jnp.where(ok, t, jnp.zeros((), dtype))
        term = lax.convert_element_type(t, np.int32) * np.int32(stride)
        position = term if position is None else position + term
    return position, valid


def _rounds(data: Any, tuples: Any, rows: Any, mode: str, combine: Any) -> Any:
    """dmljax's own rounds (`dmljax._ops.ordered.reductions`): each round, every target takes its
    first pending update (a ScatterElements ``min`` of the updates' positions), gathers,
    combines and writes back with targets that are unique but for a dump row; R rounds, R
    the largest number of updates of one element."""
    m, k = tuples.shape
    n, window = math.prod(data.shape[:k]), tuple(data.shape[k:])
    position, valid = _targets(tuples, tuple(data.shape[:k]), mode)
    dump = np.int32(n)
    target = position if valid is None else jnp.where(valid, position, dump)
    order = lax.iota(np.int32, m)
    flat = lax.concatenate([data.reshape((n,) + window), jnp.zeros((1,) + window, data.dtype)], 0)
    gather, scatter, scatter_nd = (EXPORT_PRIMITIVES[p] for p in ("gather", "scatter", "scatter_nd"))

    def body(state: tuple[Any, Any]) -> tuple[Any, Any]:
        out, pending = state
        first = jnp.full((n + 1,), np.int32(m))
        first = scatter.bind(
            first, jnp.where(pending, target, dump), order, axis=0, mode="promise_in_bounds", reduction="min"
        )
        now = pending & (gather.bind(first, target, axis=0, mode="promise_in_bounds") == order)
        where = jnp.where(now, target, dump)
        new = combine(gather.bind(out, where, axis=0, mode="promise_in_bounds"), rows)
        out = scatter_nd.bind(out, where[:, None], new, mode="promise_in_bounds", reduction="none")
        return out, pending & ~now

    pending = target < dump
    out, _ = lax.while_loop(lambda state: jnp.any(state[1]), body, (flat, pending))
    return out[:n].reshape(data.shape)
