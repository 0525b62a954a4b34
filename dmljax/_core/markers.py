"""Markers: an identity primitive with which each operator names itself in every trace.

``mark(result, *inputs, op=..., **params)`` returns ``result``. Eagerly it does nothing;
under a trace it binds `MARK_P`, whose output is operand 0 and whose other operands are
the operator's inputs, so a jaxpr says which dmljax operator computed a value, from
what, and with which static parameters. The ONNX exporter (`dmljax.onnx`) reads the
markers instead of patching functions; everything else sees an identity:

* abstract evaluation returns operand 0's aval unchanged (sharding and ``vma`` kept);
* the MLIR lowering returns operand 0, so the compiled program is unchanged;
* JVP: the tangent of operand 0; transpose: the cotangent to operand 0;
* `jax.vmap` applies the operator's batching rule (`BATCHERS`, registered by the
  operator's module), which marks the batched result as one bigger operator (a gather
  along ``axis + 1``, a slice with one more dimension); without a rule the marker is
  dropped (operand 0 with its batch dimension), so an export uses the implementation.

Design note: ``docs/design/onnx-export.md``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.extend.core
import numpy as np
from jax.interpreters import ad, batching, mlir

__all__ = ["BATCHERS", "MARK_P", "mark", "traced"]

BATCHERS: dict[str, Callable[..., tuple[Any, int]]] = {}
"""Operator name -> ``rule(args, dims, **params) -> (marked, out_dim)``, the marker's `jax.vmap` rule."""

MARK_P = jax.extend.core.Primitive("dmljax_mark")


def traced(*values: Any) -> bool:
    """Whether any of ``values`` is a `jax.core.Tracer` (markers are bound only then).

    Examples:
      >>> seen = []
      >>> _ = jax.jit(lambda x: seen.append(traced(x)) or x)(1.0)
      >>> traced(jnp.ones(2)), seen
      (False, [True])
    """
    return any(isinstance(v, jax.core.Tracer) for v in values)


def mark(result: Any, *inputs: Any, op: str, **params: Any) -> Any:
    """``result``, marked in the trace as operator ``op`` of ``inputs`` (only when something is traced).

    Args:
      result: the operator's output (a JAX array or tracer).
      *inputs: the operator's array inputs (host values become constants of the trace).
      op: the public operator's name, e.g. ``"gather"``.
      **params: hashable static parameters (axis, resolved index mode, window, descriptor).

    Returns:
      ``result`` itself (eager), or the marker's output, equal to it (traced).

    Examples:
      >>> import jax, jax.numpy as jnp
      >>> jax.make_jaxpr(lambda x: mark(x + 1, x, op="demo", axis=0))(jnp.ones(2)).eqns[-1].primitive.name
      'dmljax_mark'
      >>> mark(jnp.ones(2), op="demo")  # eager: no marker
      Array([1., 1.], dtype=float32)
    """
    if not traced(result, *inputs):
        return result
    operands = [x if isinstance(x, jax.Array | jax.core.Tracer) else np.asarray(x) for x in inputs]
    return MARK_P.bind(result, *operands, op=op, **params)


def _impl(result: Any, *inputs: Any, **params: Any) -> Any:
    return result


def _abstract(result: Any, *inputs: Any, **params: Any) -> Any:
    return result


def _lower(ctx: Any, result: Any, *inputs: Any, **params: Any) -> list[Any]:
    return [result]


def _jvp(primals: tuple, tangents: tuple, **params: Any) -> tuple[Any, Any]:
    return MARK_P.bind(*primals, **params), tangents[0]


def _transpose(ct: Any, result: Any, *inputs: Any, **params: Any) -> list[Any]:
    return [ct] + [None] * len(inputs)


def _batch(args: tuple, dims: tuple, **params: Any) -> tuple[Any, Any]:
    rule = BATCHERS.get(params["op"])
    if rule is None or dims[0] is None:
        return args[0], dims[0]
    return rule(args, dims, **params)


MARK_P.def_impl(_impl)
MARK_P.def_abstract_eval(_abstract)
mlir.register_lowering(MARK_P, _lower)
ad.primitive_jvps[MARK_P] = _jvp
ad.primitive_transposes[MARK_P] = _transpose
batching.primitive_batchers[MARK_P] = _batch
