"""`export`: a JAX function that uses dmljax -> an ONNX model with ONNX's own nodes.

No global state is touched: ``fn`` is traced with plain `jax.make_jaxpr` under the
caller's own ``jax_enable_x64`` setting, the jaxpr is rewritten (`dmljax.onnx._rewrite`:
dmljax's markers become export-only primitives) and lowered with jax2onnx's lowering
pieces and only the plugins its primitives need (`dmljax.onnx._plugin_loading`). Design note:
``docs/design/onnx-export.md``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np
import onnx
import onnx_ir as ir
from jax2onnx.converter import conversion_api as j2o
from jax2onnx.converter.ir_postprocess import postprocess_ir_model

from dmljax._core.config import config
from dmljax._core.dtypes import x64_enabled
from dmljax._core.errors import fail
from dmljax._core.platform import onnx_export_trace
from dmljax.onnx import _plugins  # noqa: F401  (registers dmljax's lowerings)
from dmljax.onnx._names import rename_io
from dmljax.onnx._plugin_loading import ensure_plugins
from dmljax.onnx._rewrite import check_exportable, primitive_names, rewrite

__all__ = ["DEFAULT_OPSET", "MIN_OPSET", "export"]

DEFAULT_OPSET = 23
"""The ONNX opset `export` uses when ``opset`` is not given: jax2onnx's default (ONNX 1.18;
onnxruntime 1.22+ runs it)."""

MIN_OPSET = 13
"""The lowest opset `export` accepts: dmljax's nodes need opset 13 (negative indices in
Gather, GatherElements and ScatterElements; Slice and Clip with tensor inputs)."""


@functools.cache
def _runtime_opset() -> int | None:
    """The newest default-domain opset the installed onnxruntime loads (None: not installed)."""
    try:
        import onnxruntime
    except ImportError:
        return None
    from onnx import helper

    def loads(opset: int) -> bool:
        node = helper.make_node("Identity", ["x"], ["y"])
        info = [helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, [1]) for n in ("x", "y")]
        graph = helper.make_graph([node], "probe", info[:1], info[1:])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=10)
        try:
            onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        except Exception:
            return False
        return True

    newest = onnx.defs.onnx_opset_version()
    while newest > MIN_OPSET and not loads(newest):
        newest -= 1
    return newest


def _check_opset(opset: Any) -> int:
    if isinstance(opset, bool) or not isinstance(opset, int) or opset < MIN_OPSET:
        raise fail("dmljax.onnx.export", "opset", f"be an integer >= {MIN_OPSET}", opset)
    newest = onnx.defs.onnx_opset_version()
    if opset > newest:
        raise fail("dmljax.onnx.export", "opset", f"be <= {newest}, the newest the installed onnx defines", opset)
    runtime = _runtime_opset()
    if runtime is not None and opset > runtime:
        raise fail("dmljax.onnx.export", "opset", f"be <= {runtime}, the newest the installed onnxruntime loads", opset)
    return opset


def _example(a: Any) -> jax.ShapeDtypeStruct:
    """An example argument as a `jax.ShapeDtypeStruct` of the example's own dtype."""
    if isinstance(a, jax.ShapeDtypeStruct):
        return a
    return jax.ShapeDtypeStruct(np.shape(a), np.result_type(a) if not hasattr(a, "dtype") else np.dtype(a.dtype))


def _bind_inputs(ctx: Any, jaxpr: Any, examples: list[jax.ShapeDtypeStruct]) -> None:
    """Graph inputs of the examples' dtypes; a Cast to the traced dtype where they differ (int64 -> int32)."""
    for index, (var, example) in enumerate(zip(jaxpr.invars, examples, strict=True)):
        traced = np.dtype(var.aval.dtype)
        if np.dtype(example.dtype) == traced or ctx.builder.enable_double_precision:
            ctx.add_input_for_invar(var, index)
            continue
        shape = j2o._to_ir_shape(tuple(var.aval.shape))
        value = ir.Value(name=f"in_{index}", type=ir.TensorType(j2o._to_ir_dtype_from_np(example.dtype)), shape=shape)
        ctx.add_graph_input_value(value)
        ctx.record_symbolic_dim_origins(tuple(var.aval.shape), value)
        if traced.kind in "iu":  # saturate, as dmljax narrows host indices: out of range stays out of range
            info = np.iinfo(traced)
            low, high = (
                ctx.builder.add_initializer_from_array(f"in_{index}_{n}", np.asarray(v, example.dtype))
                for n, v in (("min", max(info.min, np.iinfo(example.dtype).min)), ("max", info.max))
            )
            value = ctx.builder.Clip(value, low, high, _outputs=[f"in_{index}_clip"])
            value.type, value.shape = ir.TensorType(j2o._to_ir_dtype_from_np(example.dtype)), shape
        cast = ctx.builder.Cast(value, to=int(j2o._to_ir_dtype_from_np(traced)), _outputs=[f"in_{index}_cast"])
        cast.type, cast.shape = ir.TensorType(j2o._to_ir_dtype_from_np(traced)), j2o._to_ir_shape(var.aval.shape)
        ctx.bind_value_for_var_without_origins(var, cast)


def _lower(closed: Any, examples: list[jax.ShapeDtypeStruct], opset: int, double: bool) -> onnx.ModelProto:
    """jax2onnx's ``to_onnx`` from its third step on (the trace is ours), without its global switches."""
    specs = [jax.ShapeDtypeStruct(v.aval.shape, v.aval.dtype) for v in closed.jaxpr.invars]
    ctx = j2o._create_ir_context(
        opset=opset,
        enable_double_precision=double,
        input_specs=specs,
        frozen_params={},
        record_primitive_calls_file=None,
    )
    default_float = np.dtype(np.float64 if double else np.float32)
    j2o._bind_closed_jaxpr_constants(
        ctx, closed.jaxpr, closed.consts, default_float=default_float, enable_double_precision=double
    )
    _bind_inputs(ctx, closed.jaxpr, examples)
    j2o._lower_jaxpr_equations(ctx, closed.jaxpr)
    j2o._bind_jaxpr_outputs(ctx, closed.jaxpr, outputs_as_nchw=(), enable_double_precision=double)
    model = j2o._build_and_finalize_ir_model(ctx, model_name="dmljax", protective_clone=False)
    postprocess_ir_model(model, promote_to_double=double)
    return ir.to_proto(model)


def export(
    fn: Callable[..., Any],
    *example_args: Any,
    opset: int | None = None,
    input_names: Sequence[str] | None = None,
    output_names: Sequence[str] | None = None,
) -> onnx.ModelProto:
    """Export ``fn`` to an ONNX model in which dmljax's operators are ONNX's own nodes.

    ``fn`` is traced with `jax.make_jaxpr`; every dmljax operator leaves a marker in the
    trace, which becomes its node: Gather (`dmljax.gather`), GatherElements
    (`dmljax.gather_elements`), ScatterElements (`dmljax.scatter`, ``reduction`` from opset 16/18),
    GatherND and ScatterND (`dmljax.gather_nd`, `dmljax.scatter_nd`),
    Slice (`dmljax.slice`, negative steps included) and Reshape/Transpose/Slice/Concat/Expand
    (`dmljax.read_tensor`, `dmljax.write_tensor`); the rest goes through jax2onnx's
    lowerings. Any callable works (an operator itself, a partial, a closure, a jitted
    function, a `dmljax.descriptors.compile_operator` result, a Flax or Equinox module), and nothing
    global changes: other threads may call dmljax meanwhile. Index modes lower exactly: the
    default and ``"clip"`` add a Clip, ``"fill"`` a Where (a Concat and a Slice for scatter),
    constant in-range indices and ``"promise_in_bounds"`` nothing.

    Args:
      fn: a function of arrays; positional arguments become the model's inputs in order.
      *example_args: one array or `jax.ShapeDtypeStruct` per input. The model input keeps
        its dtype; where JAX traces another (int64 as int32 with 64-bit types off), the
        model casts inside (integers saturated first, so an index out of range stays out).
        Under ``jax.enable_x64(True)``, float64 inputs switch jax2onnx to its double
        precision mode, in which every float tensor is DOUBLE. A symbolic dimension
        (``jax.export.symbolic_shape("B")``) becomes a named ONNX dimension, except on an
        indexed axis or in a slice window that does not run to the input's end (refused).
      opset: the ONNX opset; default `DEFAULT_OPSET`; at least `MIN_OPSET`, at most what
        the installed onnx defines and the installed onnxruntime loads.
      input_names: the model's input names, one per example argument, unique (default
        ``in_0``, ``in_1``...).
      output_names: the model's output names, one per leaf of ``fn``'s result, unique
        (default ``out_0``...).

    Returns:
      The `onnx.ModelProto`, ready for ``onnx.checker.check_model`` and onnxruntime.

    Raises:
      ValidationError: naming the operator or argument: an opset out of range;
        ``mode="checked"``; the random operators and ``jax.random`` on `dmljax.random.prng_impl`
        keys (ONNX has no Philox 4x32-10); draws from other keys (threefry: ONNX has no
        counter-based generator); complex values; a symbolic dimension ONNX's nodes
        cannot take; names of the wrong count, empty or repeated; an NNX module in train
        mode (call ``model.eval()``).

    Examples:
      >>> import numpy as np, dmljax, dmljax.onnx
      >>> model = dmljax.onnx.export(lambda t, i: dmljax.gather(t, i), np.zeros((5, 2), np.float32), np.array([1, 4]))
      >>> [node.op_type for node in model.graph.node]  # int64 indices: cast to int32 inside, then clamped
      ['Clip', 'Cast', 'Clip', 'Gather']
      >>> named = dmljax.onnx.export(
      ...     lambda t, i: dmljax.gather(t, i), np.zeros((5, 2), np.float32), np.array([1, 4]),
      ...     input_names=["table", "ids"], output_names=["rows"])
      >>> [v.name for v in named.graph.input], [v.name for v in named.graph.output]
      (['table', 'ids'], ['rows'])
    """
    opset = _check_opset(DEFAULT_OPSET if opset is None else opset)
    examples = [_example(a) for a in example_args]
    traced = [jax.ShapeDtypeStruct(a.shape, jax.dtypes.canonicalize_dtype(a.dtype)) for a in examples]
    inputs = _check_names("input_names", input_names, len(examples), "input")
    try:
        # a model holds no Pallas kernel, and no float bits as integer keys (no BitCast below opset 26)
        with config.override(ordered_fold_kernel_interpret=False), onnx_export_trace():
            closed = jax.make_jaxpr(fn)(*traced)
    except jax.errors.InconclusiveDimensionOperation as e:
        rule = "have symbolic dimensions that fn's operators accept"
        raise fail("dmljax.onnx.export", "example_args", rule, str(e).split("\n")[0]) from e
    except Exception as e:
        if type(e).__name__ == "TraceContextError" and type(e).__module__.startswith("flax"):
            rule = (
                "not update its own state while it is traced (an NNX module in train mode updates its random "
                "counts or batch statistics): call model.eval() before exporting"
            )
            raise fail("dmljax.onnx.export", "fn", rule, str(e).split(" (https")[0]) from e
        raise
    outputs = _check_names("output_names", output_names, len(closed.jaxpr.outvars), "output")
    check_exportable(closed.jaxpr, random_impls=(_prng_name(),), opset=opset)
    closed = rewrite(closed, opset)
    ensure_plugins(primitive_names(closed.jaxpr))
    double = x64_enabled() and any(np.dtype(a.dtype) == np.float64 for a in traced)
    model = _lower(closed, examples, opset, double)
    if inputs is not None or outputs is not None:
        rename_io(model, inputs, outputs)
    return model


def _check_names(param: str, names: Any, count: int, what: str) -> list[str] | None:
    """``names`` as a list of ``count`` unique non-empty strings, or None when not given."""
    if names is None:
        return None
    if isinstance(names, str | bytes) or not isinstance(names, Sequence):
        raise fail("dmljax.onnx.export", param, f"be a sequence of strings, one per {what}", names)
    names = list(names)
    if any(not isinstance(n, str) or not n for n in names):
        raise fail("dmljax.onnx.export", param, "be non-empty strings", names)
    if len(names) != count:
        raise fail("dmljax.onnx.export", param, f"have one name per {what} ({count})", names)
    if len(set(names)) != len(names):
        raise fail("dmljax.onnx.export", param, "be unique", names)
    return names


def _prng_name() -> str:
    from dmljax._random.prng_impl import prng_impl

    return str(prng_impl)
