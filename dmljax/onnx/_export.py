"""`export`: a JAX function that uses dmljax -> an ONNX model with ONNX's own nodes."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import jax
import numpy as np
import onnx
from jax2onnx import to_onnx

from dmljax._core.dtypes import x64_enabled
from dmljax._core.errors import fail
from dmljax.onnx._calls import EXPORT_CALLS
from dmljax.onnx._plugins import patch_targets

__all__ = ["DEFAULT_OPSET", "MIN_OPSET", "export"]

DEFAULT_OPSET = 23
"""The ONNX opset `export` uses when ``opset`` is not given: jax2onnx's default (ONNX 1.18;
onnxruntime 1.22+ runs it)."""

MIN_OPSET = 13
"""The lowest opset `export` accepts: dmljax's nodes need opset 13 (negative indices in
Gather, GatherElements and ScatterElements; Slice, Pad and Clip with tensor inputs)."""


@contextlib.contextmanager
def _patched_namespace(namespace: dict[str, Any]) -> Iterator[None]:
    """Swap names bound with ``from dmljax import gather`` in the exported function's module."""
    found = [(attr, name) for holder, attr, name in patch_targets(namespace) if holder is namespace]
    saved = {attr: namespace[attr] for attr, _ in found}
    for attr, name in found:
        namespace[attr] = EXPORT_CALLS[name]
    try:
        yield
    finally:
        namespace.update(saved)


def _double_precision(inputs: list[jax.ShapeDtypeStruct]) -> bool:
    """jax2onnx's double mode (64-bit types while tracing; every float tensor DOUBLE): float64 inputs under x64."""
    return x64_enabled() and any(np.dtype(a.dtype) == np.float64 for a in inputs)


def export(fn: Callable[..., Any], *example_args: Any, opset: int | None = None) -> onnx.ModelProto:
    """Export ``fn`` to an ONNX model in which dmljax's operators are ONNX's own nodes.

    Built on jax2onnx: ordinary `jax.numpy`/`jax.lax` code goes through its lowerings;
    dmljax's operators become Gather (`dmljax.gather`), GatherElements
    (`dmljax.gather_elements`), ScatterElements without reduction (`dmljax.scatter`),
    Slice (`dmljax.slice1`, negative steps included) and Reshape/Transpose/Slice/Pad/Expand
    (`dmljax.read_tensor`, `dmljax.write_tensor`). Index modes lower exactly: the default
    and ``"clip"`` add a Clip, ``"fill"`` a Where (a Pad and a Slice for scatter), constant
    in-range indices and ``"promise_in_bounds"`` nothing. Refused, with a
    `dmljax.ValidationError` naming the operator: ``mode="checked"`` and the random
    operators (ONNX has no Philox 4x32-10).

    Args:
      fn: a function of arrays; positional arguments become the model's inputs in order.
      *example_args: one array or `jax.ShapeDtypeStruct` per input, fixing its shape and
        dtype, canonicalised as JAX does (int64 becomes int32 unless 64-bit types are
        enabled). Under ``jax.enable_x64(True)``, float64 inputs switch jax2onnx to its
        double precision mode, in which every float tensor is DOUBLE. A symbolic batch
        dimension (``jax.export.symbolic_shape("B")``) becomes a named ONNX dimension
        where jax2onnx and the operator's implementation accept it (gather and scatter do).
      opset: the ONNX opset; default `DEFAULT_OPSET`, at least `MIN_OPSET`.

    Returns:
      The `onnx.ModelProto`, ready for ``onnx.checker.check_model`` and onnxruntime.

    Raises:
      ValidationError: ``opset`` is below 13, or ``fn`` uses a refused mode or operator.

    Examples:
      >>> import numpy as np, dmljax, dmljax.onnx
      >>> model = dmljax.onnx.export(lambda t, i: dmljax.gather(t, i), np.zeros((5, 2), np.float32), np.array([1, 4]))
      >>> [node.op_type for node in model.graph.node]
      ['Clip', 'Gather']
    """
    opset = DEFAULT_OPSET if opset is None else opset
    if isinstance(opset, bool) or not isinstance(opset, int) or opset < MIN_OPSET:
        raise fail("dmljax.onnx.export", "opset", f"be an integer >= {MIN_OPSET}", opset)
    inputs = [
        a if isinstance(a, jax.ShapeDtypeStruct) else jax.ShapeDtypeStruct(jax.numpy.shape(a), jax.numpy.result_type(a))
        for a in example_args
    ]
    namespace = getattr(fn, "__globals__", None)
    with _patched_namespace(namespace) if isinstance(namespace, dict) else contextlib.nullcontext():
        return to_onnx(fn, inputs, opset=opset, enable_double_precision=_double_precision(inputs))
