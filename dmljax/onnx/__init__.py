"""Export JAX functions that use dmljax to ONNX (the ``dmljax[onnx]`` extra).

``dmljax.onnx.export(fn, *example_args)`` returns an `onnx.ModelProto` in which dmljax's
operators are ONNX's own nodes (Gather, GatherElements, ScatterElements, Slice, and
Reshape/Transpose/Slice/Concat for strided buffers), ready for ONNX Runtime and its DirectML
execution provider. The export patches nothing: it reads the markers dmljax's operators
leave in every trace (``docs/design/onnx-export.md``).
"""

from dmljax.onnx._export import DEFAULT_OPSET as DEFAULT_OPSET
from dmljax.onnx._export import MIN_OPSET as MIN_OPSET
from dmljax.onnx._export import export as export

__all__ = ["DEFAULT_OPSET", "MIN_OPSET", "export"]
