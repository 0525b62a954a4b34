"""A small helper that writes ONNX nodes into jax2onnx's lowering context.

jax2onnx hands each plugin a lowering context (``ctx``) with an IR builder; `Emitter`
wraps the few calls dmljax's lowerings need (inputs, constants, typed nodes, outputs), so
the operator modules read as lists of ONNX nodes.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx_ir as ir
from jax2onnx.plugins._ir_shapes import _ensure_value_metadata, _stamp_type_and_shape

__all__ = ["INT64_MAX", "INT64_MIN", "Emitter"]

# The "to the beginning" end of an ONNX Slice with a negative step (onnx.ai, Slice-13:
# ends are clamped to [-1, dims - 1] for negative steps, so any value below -dims works).
INT64_MIN = np.iinfo(np.int64).min
INT64_MAX = np.iinfo(np.int64).max  # "to the end" with a positive step


class Emitter:
    """Typed ONNX node emission for one lowering.

    Args:
      ctx: jax2onnx's lowering context (``LoweringContextProtocol``).
    """

    def __init__(self, ctx: Any) -> None:
        self.ctx = ctx

    def input(self, var: Any, hint: str) -> ir.Value:
        """The ONNX value of a jaxpr input variable (graph input, constant or earlier node)."""
        return self.ctx.get_value_for_var(var, name_hint=self.ctx.fresh_name(hint))

    def const(self, array: Any, hint: str, dtype: Any = None) -> ir.Value:
        """An initializer holding ``array`` (converted to ``dtype`` when given)."""
        array = np.asarray(array, dtype=dtype)
        return self.ctx.builder.add_initializer_from_array(self.ctx.fresh_name(hint), array)

    def i64(self, values: Any, hint: str) -> ir.Value:
        """An INT64 initializer (shapes, axes, pads, scalar bounds)."""
        return self.const(values, hint, np.int64)

    def op(self, op_type: str, *inputs: ir.Value, dtype: Any, shape: tuple[int, ...], **attrs: Any) -> ir.Value:
        """Append one node with a single output of ``dtype`` and ``shape``; return the output."""
        make = getattr(self.ctx.builder, op_type)
        value = make(*inputs, _outputs=[self.ctx.fresh_name(op_type)], **attrs)
        value.type = ir.TensorType(ir.DataType.from_numpy(np.dtype(dtype)))
        _stamp_type_and_shape(value, tuple(shape))
        _ensure_value_metadata(self.ctx, value)
        return value

    def output(self, var: Any, value: ir.Value) -> None:
        """Bind the lowering's result to the jaxpr output variable."""
        self.ctx.bind_value_for_var(var, value)
