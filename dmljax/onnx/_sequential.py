"""float16/bfloat16 ``"add"``/``"mul"`` scatters as a loop over the updates, rounded after each.

dmljax folds a scatter's updates in ONNX's loop order and rounds after every update, in
the data's own type (``2048 + 1 + 1`` is 2048 in float16). onnxruntime's CPU provider has
no float16 reduction kernel for ScatterElements/ScatterND, and running the node in a
float32 stand-in rounds once at the end (2050): not the same bits. A sum of two float16
(or bfloat16) values computed in float32 and rounded to float16 is the correctly rounded
float16 sum (float32 holds at least ``2p + 2`` bits: double rounding is innocuous), and a
product of two is exact in float32 before its one rounding; so each step runs in float32
and rounds through a Cast, which is what XLA does for these types. The steps cannot be
regrouped (float addition is not associative), so the model is a ``lax.scan`` (an ONNX
Loop) over the updates in row-major order: per update one GatherND of its target, the
combine, a Cast pair and one ScatterND (no reduction) back. Cost: one loop iteration per
update, against one node for the other types; the exporter uses it only for these two
types and reductions.
"""

from __future__ import annotations

import math
from typing import Any

import jax.numpy as jnp
import numpy as np
from jax import lax

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
    columns = [index if d == axis else lax.broadcasted_iota(index.dtype, index.shape, d) for d in range(index.ndim)]
    return jnp.stack(columns, axis=-1)


def sequential_scatter(op: str, operands: list[Any], params: dict[str, Any]) -> Any:
    """The scatter as a loop over its updates in row-major order, each combined in float32 and
    rounded to the data's type, through the export-only GatherND/ScatterND primitives."""
    data, index, updates = operands
    dtype, mode, f = np.dtype(data.dtype), params["mode"], _COMBINE[params["reduction"]]
    tuples = _tuples(index, params["axis"]) if op == "scatter" else index
    k = tuples.shape[-1]
    m = math.prod(tuples.shape[:-1])
    if m == 0:
        return data
    tuples = tuples.reshape(m, 1, k)
    rows = lax.convert_element_type(updates, np.float32).reshape((m, 1) + tuple(data.shape[k:]))

    def step(out: Any, item: tuple[Any, Any]) -> tuple[Any, None]:
        where, row = item
        now = EXPORT_PRIMITIVES["gather_nd"].bind(out, where, batch_dims=0, mode=mode)
        new = lax.convert_element_type(lax.convert_element_type(f(now, row), dtype), np.float32)
        return EXPORT_PRIMITIVES["scatter_nd"].bind(out, where, new, mode=mode, reduction="none"), None

    out, _ = lax.scan(step, lax.convert_element_type(data, np.float32), (tuples, rows))
    return lax.convert_element_type(out, dtype)
