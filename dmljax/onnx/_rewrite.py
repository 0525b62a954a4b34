"""The exporter's jaxpr rewrite: markers become export-only primitives, the rest stays.

`rewrite` re-evaluates a closed jaxpr under `jax.make_jaxpr` with a small interpreter:

* calls (``jit``/``pjit``, ``closed_call``, ``custom_jvp_call``, ``custom_vjp_call``,
  ``checkpoint``) are inlined, so markers inside jitted functions are reached;
* each operator marker (`dmljax._core.markers`) becomes the operator's export-only
  primitive (`dmljax.onnx._primitives`) applied to the operator's inputs only, so the
  implementation that computed the marked value is dead and removed (DCE);
* the random operators, ``jax.random`` on `dmljax.prng_impl` keys, ``mode="checked"`` and
  complex data are refused with a `dmljax.ValidationError` naming the operator;
* every other equation is bound again as it was. Markers inside loop and branch bodies
  stay; the marker's plugin exports them as the identity of the implementation.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import jax
import jax.extend.core
import numpy as np
from jax._src.interpreters import partial_eval as pe

from dmljax._core.errors import fail
from dmljax._core.markers import MARK_P
from dmljax.onnx._indexing import REDUCTION_OPSET
from dmljax.onnx._layouts import slice_bounds
from dmljax.onnx._primitives import EXPORT_PRIMITIVES

__all__ = ["RANDOM_NAMES", "check_exportable", "check_marker", "primitive_names", "rewrite"]

RANDOM_NAMES = ("random_generator", "philox4x32_10", "uniform", "normal", "bernoulli", "dropout", "randint")
_RANDOM_RULE = (
    "not reach an ONNX export: ONNX's RandomUniform, RandomNormal and Bernoulli are not Philox 4x32-10 "
    "and their bits are implementation-defined, so the deployed model could not reproduce dmljax's "
    "stream; generate the values in JAX and pass them to the model as an input"
)
_CALLS = {"jit", "pjit", "closed_call", "core_call", "custom_jvp_call", "custom_vjp_call", "checkpoint", "remat"}
_INDEXED = {"gather", "gather_elements", "scatter", "gather_nd", "scatter_nd"}


def _sub(eqn: Any) -> Any:
    """The called jaxpr of an inlined call equation, or None."""
    if eqn.primitive.name not in _CALLS:
        return None
    for key in ("jaxpr", "call_jaxpr", "fun_jaxpr"):
        if key in eqn.params:
            return eqn.params[key]
    return None


def _eqns(jaxpr: Any) -> Iterator[Any]:
    """Every equation of ``jaxpr`` and of the jaxprs nested in its parameters."""
    for eqn in jaxpr.eqns:
        yield eqn
        for sub in jax.extend.core.jaxprs_in_params(eqn.params):
            yield from _eqns(sub)


def primitive_names(jaxpr: Any) -> set[str]:
    """The names of every primitive in ``jaxpr``, nested bodies included."""
    return {eqn.primitive.name for eqn in _eqns(jaxpr)}


def _key_impl(eqn: Any) -> str | None:
    """The PRNG implementation of a key the equation reads or writes, or None."""
    for var in (*eqn.invars, *eqn.outvars):
        dtype = getattr(getattr(var, "aval", None), "dtype", None)
        if dtype is not None and jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key):
            return str(dtype._impl)  # PRNGImpl.__str__: the name it was registered under
    return None


def check_marker(eqn: Any, opset: int | None = None) -> None:
    """Refuse a marked operator that an ONNX model cannot reproduce, naming it."""
    op, params = eqn.params["op"], eqn.params
    if op in RANDOM_NAMES:
        shown = eqn.invars[1].aval.str_short() if len(eqn.invars) > 1 else None
        raise fail(op, "counter" if op == "philox4x32_10" else "state", _RANDOM_RULE, shown)
    if op in _INDEXED and params.get("mode") == "checked":
        rule = (
            "not be 'checked' in an ONNX export (ONNX has no run-time index check that could raise; "
            "pass 'clip', 'fill' or 'promise_in_bounds', or check the indices before the model runs)"
        )
        raise fail(op, "mode", rule, "checked")
    if op in _INDEXED and "axis" in params:
        data = eqn.invars[1].aval
        if jax.export.is_symbolic_dim(data.shape[params["axis"]]):
            rule = "be a fixed size in an ONNX export (the index bounds of Clip/Where are constants)"
            raise fail(
                op, f"data.shape[{params['axis']}]", rule, str(data.shape[params["axis"]]), f"shape {data.shape}"
            )
    if op == "slice1":
        slice_bounds(params, tuple(eqn.invars[1].aval.shape))  # a symbolic window ONNX cannot express raises
    reduction = params.get("reduction", "none")
    if op in ("scatter", "scatter_nd") and opset is not None and opset < REDUCTION_OPSET[reduction]:
        since = REDUCTION_OPSET[reduction]
        rule = f"be exportable at opset {opset} (ONNX's scatters have {reduction!r} from opset {since})"
        raise fail(op, "reduction", rule, reduction)


def check_exportable(jaxpr: Any, *, random_impls: tuple[str, ...], opset: int) -> None:
    """Refuse, naming the operator, what an ONNX model cannot reproduce."""
    for eqn in _eqns(jaxpr):
        if eqn.primitive is MARK_P:
            check_marker(eqn, opset)
        impl = _key_impl(eqn) if eqn.primitive.name.startswith("random_") else None
        if impl in random_impls:
            raise fail(f"jax.random ({eqn.primitive.name})", f"a key of impl {impl!r}", _RANDOM_RULE, impl)
        for var in (*eqn.invars, *eqn.outvars):
            dtype = getattr(getattr(var, "aval", None), "dtype", None)
            if dtype is not None and not jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key):
                if np.issubdtype(dtype, np.complexfloating):
                    rule = "hold no complex values in an ONNX export (onnxruntime has no complex kernels)"
                    raise fail("dmljax.onnx.export", f"{eqn.primitive.name} operand", rule, str(dtype))


def _eval(jaxpr: Any, consts: list[Any], args: list[Any]) -> list[Any]:
    """Evaluate ``jaxpr`` by binding its equations again, inlining calls and replacing markers."""
    env: dict[Any, Any] = {}

    def read(v: Any) -> Any:
        return v.val if isinstance(v, jax.extend.core.Literal) else env[v]

    env.update(zip(jaxpr.constvars, consts, strict=True))
    env.update(zip(jaxpr.invars, args, strict=True))
    for eqn in jaxpr.eqns:
        invals = [read(v) for v in eqn.invars]
        sub = _sub(eqn)
        if sub is not None:
            closed = sub if isinstance(sub, jax.extend.core.ClosedJaxpr) else None
            inner = closed.jaxpr if closed is not None else sub
            outs = _eval(inner, list(closed.consts) if closed is not None else [], invals)
        elif eqn.primitive is MARK_P and eqn.params["op"] in EXPORT_PRIMITIVES:
            params = {k: v for k, v in eqn.params.items() if k != "op"}
            outs = [EXPORT_PRIMITIVES[eqn.params["op"]].bind(*invals[1:], **params)]
        else:
            with eqn.ctx.manager:
                outs = eqn.primitive.bind(*invals, **eqn.primitive.get_bind_params(eqn.params))
            outs = outs if eqn.primitive.multiple_results else [outs]
        env.update(zip(eqn.outvars, outs, strict=True))
    return [read(v) for v in jaxpr.outvars]


def rewrite(closed: Any) -> Any:
    """``closed`` with markers replaced by export-only primitives, calls inlined, dead code removed."""
    specs = [jax.ShapeDtypeStruct(v.aval.shape, v.aval.dtype) for v in closed.jaxpr.invars]
    new = jax.make_jaxpr(lambda *xs: _eval(closed.jaxpr, list(closed.consts), list(xs)))(*specs)
    jaxpr, _ = pe.dce_jaxpr(new.jaxpr, [True] * len(new.jaxpr.outvars), instantiate=True)
    return jax.extend.core.ClosedJaxpr(jaxpr, new.consts)
