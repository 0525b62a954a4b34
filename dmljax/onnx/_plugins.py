"""dmljax's operators as jax2onnx leaf plugins: one per export-only primitive, one for the marker.

Importing this module registers them in jax2onnx's plugin registry (a dict keyed by
primitive name; nothing is patched). `dmljax.onnx.export` lowers its rewritten jaxpr
with them. The marker's plugin lowers a marker left in place (inside a loop body, or in
a plain ``jax2onnx.to_onnx`` trace) as the operator's own node, the implementation that
computed the marked value becoming dead (jax2onnx's optimiser removes it); a marker of
an operator without a node is an Identity of the marked value.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from jax2onnx.plugins.plugin_system import PrimitiveLeafPlugin, register_primitive

from dmljax._core.markers import MARK_P
from dmljax.onnx._emit import Emitter
from dmljax.onnx._indexing import lower_gather, lower_gather_elements, lower_scatter
from dmljax.onnx._layouts import lower_read_tensor, lower_slice1, lower_write_tensor
from dmljax.onnx._nd import lower_gather_nd, lower_scatter_nd
from dmljax.onnx._ordered import (
    lower_arg_reduce,
    lower_cumulative_sum,
    lower_one_hot,
    lower_top_k_indices,
    lower_top_k_values,
)
from dmljax.onnx._primitives import EXPORT_PRIMITIVES
from dmljax.onnx._rewrite import check_marker
from dmljax.onnx._vision import lower_fold, lower_max_pool_indices, lower_max_pool_values, lower_resample

__all__ = ["PLUGINS"]

_LOWERINGS = {
    "gather": lower_gather,
    "gather_elements": lower_gather_elements,
    "scatter": lower_scatter,
    "gather_nd": lower_gather_nd,
    "scatter_nd": lower_scatter_nd,
    "slice1": lower_slice1,
    "cumulative_sum": lower_cumulative_sum,
    "top_k_values": lower_top_k_values,
    "top_k_indices": lower_top_k_indices,
    "arg_reduce": lower_arg_reduce,
    "one_hot": lower_one_hot,
    "resample": lower_resample,
    "max_pool_values": lower_max_pool_values,
    "max_pool_indices": lower_max_pool_indices,
    "fold": lower_fold,
    "read_tensor": lower_read_tensor,
    "write_tensor": lower_write_tensor,
}


def _lower_mark(ctx: Any, eqn: Any) -> None:
    """A marker left in a jaxpr: the operator's own node, else an Identity of the marked value."""
    lower = _LOWERINGS.get(eqn.params["op"])
    check_marker(eqn, getattr(ctx.builder, "opset", None))
    if lower is not None:
        params = {k: int(v) if isinstance(v, np.integer) else v for k, v in eqn.params.items() if k != "op"}
        lower(ctx, eqn.replace(invars=eqn.invars[1:], params=params))
        return
    em, out = Emitter(ctx), eqn.outvars[0]
    value = em.input(eqn.invars[0], "marked")
    em.output(out, em.op("Identity", value, dtype=out.aval.dtype, shape=tuple(out.aval.shape)))


def _plugin(prim, lower, component: str, onnx_ops: tuple[str, ...]):
    """Register one leaf plugin that lowers ``prim`` with ``lower``."""

    class Plugin(PrimitiveLeafPlugin):
        _PRIM: ClassVar = prim

        def lower(self, ctx: Any, eqn: Any) -> None:
            lower(ctx, eqn)

    Plugin.__name__ = Plugin.__qualname__ = f"Dmljax{component.title().replace('_', '')}Plugin"
    register_primitive(
        jaxpr_primitive=prim.name,
        jax_doc=f"dmljax.{component}",
        onnx=[{"component": op, "doc": f"https://onnx.ai/onnx/operators/onnx__{op}.html"} for op in onnx_ops],
        since="dmljax 0.1.0",
        context="primitives.dmljax",
        component=component,
        testcases=[],
    )(Plugin)
    return Plugin


_P = EXPORT_PRIMITIVES
# MaxPool, and the NaN subgraph that returns the first NaN of a window (dmljax.onnx._vision).
_MAX_POOL_OPS = ("MaxPool", "Cast", "IsNaN", "Range", "Reshape", "Where", "Greater", "Gather")
PLUGINS = (
    _plugin(_P["gather"], lower_gather, "gather", ("Gather", "Clip", "Where")),
    _plugin(_P["gather_elements"], lower_gather_elements, "gather_elements", ("GatherElements", "Clip", "Where")),
    _plugin(_P["scatter"], lower_scatter, "scatter", ("ScatterElements", "Clip", "Concat", "Slice")),
    _plugin(_P["gather_nd"], lower_gather_nd, "gather_nd", ("GatherND", "Max", "Min", "Where")),
    _plugin(_P["scatter_nd"], lower_scatter_nd, "scatter_nd", ("ScatterND", "Max", "Min", "Concat", "Slice")),
    _plugin(_P["slice1"], lower_slice1, "slice1", ("Slice",)),
    _plugin(_P["cumulative_sum"], lower_cumulative_sum, "cumulative_sum", ("CumSum",)),
    _plugin(_P["top_k_values"], lower_top_k_values, "top_k_values", ("TopK",)),
    _plugin(_P["top_k_indices"], lower_top_k_indices, "top_k_indices", ("TopK", "Cast")),
    _plugin(_P["arg_reduce"], lower_arg_reduce, "arg_reduce", ("TopK", "Transpose", "Reshape", "Slice")),
    _plugin(_P["one_hot"], lower_one_hot, "one_hot", ("Equal", "Where")),
    _plugin(_P["resample"], lower_resample, "resample", ("Resize", "Cast")),
    _plugin(_P["max_pool_values"], lower_max_pool_values, "max_pool_values", _MAX_POOL_OPS),
    _plugin(_P["max_pool_indices"], lower_max_pool_indices, "max_pool_indices", _MAX_POOL_OPS),
    _plugin(_P["fold"], lower_fold, "fold", ("Col2Im",)),
    _plugin(_P["read_tensor"], lower_read_tensor, "read_tensor", ("Reshape", "Transpose", "Slice", "Concat", "Expand")),
    _plugin(_P["write_tensor"], lower_write_tensor, "write_tensor", ("Reshape", "Transpose", "Concat", "Slice")),
    _plugin(MARK_P, _lower_mark, "mark", ("Identity",)),
)
