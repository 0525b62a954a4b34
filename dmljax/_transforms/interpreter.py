"""The evaluator behind `dmljax.deterministic`: a jaxpr bound again, its scatters ordered.

`evaluate` binds every equation of a jaxpr again on the caller's values (tracers of any
outer ``jit``, ``grad``, ``vmap`` or sharding), except:

* a float (or complex) ``scatter-add``, ``scatter-sub`` or ``scatter-mul`` without
  ``unique_indices``: `dmljax._transforms.flat_scatter.ordered_scatter`, which combines in
  the updates' row-major order;
* a float ``gather`` without ``unique_indices``: the same gather as
  `dmljax._transforms.ordered_gather.ordered_gather_p`, whose transpose is ordered, so a
  ``jax.grad`` taken outside reaches no unordered scatter either;
* nested programs that hold one of those (`has_target`): ``jit``/``closed_call``/``call``
  inlined, ``remat2`` again through `jax.checkpoint`, ``scan``/``while``/``cond`` again
  through `lax.scan`/`lax.while_loop`/`lax.switch`, ``shard_map`` rebound with its body
  evaluated here; ``custom_jvp_call`` and ``custom_vjp_call`` are always rebound with
  their function and rules (``jvp``; ``fwd``, ``bwd``) evaluated here, since a rule's
  program is seen only when it runs;
* any other primitive whose parameters hold a program with a target is refused
  (`dmljax.ValidationError` naming ``deterministic`` and the primitive): it is never
  left unordered.

A program with no target is bound equation for equation as it was: the same bits, the same
compiled program.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import jax
import jax.extend.core
import jax.numpy as jnp
import numpy as np
from jax import lax

from dmljax._core import jax_compat as internals
from dmljax._core.errors import fail
from dmljax._transforms.flat_scatter import ordered_scatter
from dmljax._transforms.ordered_gather import ordered_gather_p, set_rewriter

__all__ = ["REWRITTEN", "evaluate", "evaluate_closed", "has_target"]

OP = "deterministic"
# Scatter primitives rewritten (on inexact operands, without unique_indices) -> ordered_scatter's kind.
REWRITTEN = {"scatter-add": "add", "scatter-sub": "sub", "scatter-mul": "mul"}
_INLINED = {"jit", "pjit", "closed_call", "core_call", "call"}


def _is_target(eqn: Any) -> bool:
    name = eqn.primitive.name
    if name not in REWRITTEN and name != "gather":
        return False
    inexact = jnp.issubdtype(eqn.invars[0].aval.dtype, jnp.inexact)
    return bool(inexact and not eqn.params["unique_indices"])


def _eqns(jaxpr: Any) -> Iterator[Any]:
    for eqn in jaxpr.eqns:
        yield eqn
        for sub in jax.extend.core.jaxprs_in_params(eqn.params):
            yield from _eqns(sub)


def has_target(jaxpr: Any) -> bool:
    """Whether ``jaxpr`` (nested programs included) holds an equation `evaluate` rewrites."""
    return any(_is_target(e) or e.primitive in _CALLBACKS for e in _eqns(jaxpr))


def evaluate_closed(closed: Any, args: list[Any]) -> list[Any]:
    """`evaluate` of a ``ClosedJaxpr``."""
    return evaluate(closed.jaxpr, list(closed.consts), args)


def evaluate(jaxpr: Any, consts: list[Any], args: list[Any]) -> list[Any]:
    """``jaxpr`` evaluated on ``args`` with its scatters and gathers ordered (see the module doc)."""
    env: dict[Any, Any] = {}

    def read(v: Any) -> Any:
        return v.val if isinstance(v, jax.extend.core.Literal) else env[v]

    env.update(zip(internals.jaxpr_inputs(jaxpr), [*consts, *args], strict=True))
    for eqn in jaxpr.eqns:
        invals = [read(v) for v in eqn.invars]
        with eqn.ctx.manager:
            outs = _equation(eqn, invals)
        env.update(zip(eqn.outvars, outs, strict=True))
    return [read(v) for v in jaxpr.outvars]


def _equation(eqn: Any, invals: list[Any]) -> list[Any]:
    name, params = eqn.primitive.name, eqn.params
    if eqn.primitive in _CALLBACKS:
        return _CALLBACKS[eqn.primitive](eqn, invals)
    if not _is_target(eqn) and not any(has_target(j) for j in jax.extend.core.jaxprs_in_params(params)):
        return _bind(eqn, invals)
    if name in REWRITTEN:
        operand, indices, updates = invals
        return [
            ordered_scatter(REWRITTEN[name], operand, indices, updates, params["dimension_numbers"], params["mode"])
        ]
    if name == "gather":
        return [ordered_gather_p.bind(*invals, **params)]
    if name in _INLINED:
        sub = params.get("jaxpr", params.get("call_jaxpr"))
        if isinstance(sub, jax.extend.core.ClosedJaxpr):
            return evaluate_closed(sub, invals)
        return evaluate(sub, [], invals)
    if name in _CONTROL:
        return list(_CONTROL[name](invals, **params))
    raise fail(
        OP,
        f"the program's {name!r} equation",
        "hold no float scatter-add, scatter-mul or gather it cannot rewrite (deterministic cannot follow "
        f"{name!r}'s nested program; apply deterministic inside it instead)",
        name,
    )


def _bind(eqn: Any, invals: list[Any]) -> list[Any]:
    outs = eqn.primitive.bind(*invals, **eqn.primitive.get_bind_params(eqn.params))
    return outs if eqn.primitive.multiple_results else [outs]


def _remat(invals: list[Any], *, jaxpr: Any, prevent_cse: bool, policy: Any, **_: Any) -> list[Any]:
    return jax.checkpoint(lambda *xs: evaluate(jaxpr, [], list(xs)), prevent_cse=prevent_cse, policy=policy)(*invals)


def _scan(invals: list[Any], *, jaxpr: Any, **p: Any) -> list[Any]:
    num_consts, num_carry = internals.scan_counts(p)
    consts, init, xs = invals[:num_consts], invals[num_consts:][:num_carry], invals[num_consts + num_carry :]
    body = jaxpr if isinstance(jaxpr, jax.extend.core.ClosedJaxpr) else jax.extend.core.ClosedJaxpr(jaxpr, [])

    def step(carry: list[Any], x: list[Any]) -> tuple[list[Any], list[Any]]:
        outs = evaluate_closed(body, [*consts, *carry, *x])
        return outs[:num_carry], outs[num_carry:]

    carry, ys = lax.scan(step, init, xs, length=p["length"], reverse=p["reverse"], unroll=p["unroll"])
    return [*carry, *ys]


def _while(invals: list[Any], *, cond_jaxpr: Any, cond_nconsts: int, body_jaxpr: Any, body_nconsts: int) -> list[Any]:
    """A ``while``; a batched predicate (a loop under `jax.vmap`) as XLA runs it: until every
    member is done, a finished member's carry kept."""
    cond_consts, body_consts = invals[:cond_nconsts], invals[cond_nconsts : cond_nconsts + body_nconsts]
    batched = bool(cond_jaxpr.out_avals[0].shape)

    def cond(c: list[Any]) -> Any:
        pred = evaluate_closed(cond_jaxpr, [*cond_consts, *c])[0]
        return jnp.any(pred) if batched else pred

    def body(c: list[Any]) -> list[Any]:
        new = evaluate_closed(body_jaxpr, [*body_consts, *c])
        if not batched:
            return new
        pred = evaluate_closed(cond_jaxpr, [*cond_consts, *c])[0]
        return [
            lax.select(lax.broadcast_in_dim(pred, jnp.shape(x), range(pred.ndim)), n, x)
            for n, x in zip(new, c, strict=True)
        ]

    return lax.while_loop(cond, body, invals[cond_nconsts + body_nconsts :])


def _cond(invals: list[Any], *, branches: tuple[Any, ...], **_: Any) -> list[Any]:
    index, ops = invals[0], invals[1:]
    funs = [lambda *xs, b=b: evaluate_closed(b, list(xs)) for b in branches]
    if len(funs) == 1:
        return funs[0](*ops)
    return lax.switch(index, funs, *ops)


_CONTROL: dict[str, Callable[..., list[Any]]] = {
    "remat2": _remat,
    "checkpoint": _remat,
    "scan": _scan,
    "while": _while,
    "cond": _cond,
}


def _wrap(fun: Callable[..., Any], like: Any) -> Any:
    return internals.linear_util.wrap_init(fun, debug_info=like.debug_info)


def _custom_jvp(eqn: Any, invals: list[Any]) -> list[Any]:
    params = dict(eqn.params)
    call_jaxpr, num_consts = params.pop("call_jaxpr"), params.pop("num_consts")
    jvp_jaxpr_fun = params.pop("jvp_jaxpr_fun")

    def jvp(*xs: Any) -> list[Any]:  # jax's lift_jvp, with the rule's program evaluated here
        n = len(xs) // 2
        primals, tangents = xs[num_consts:n], xs[n + num_consts :]
        zeros = [type(t) is internals.symbolic_zero for t in tangents]
        jvp_jaxpr, jvp_consts, out_zeros = jvp_jaxpr_fun.call_wrapped(*zeros)
        nonzero = [t for t in tangents if type(t) is not internals.symbolic_zero]
        out = evaluate(jvp_jaxpr, list(jvp_consts), [*primals, *nonzero])
        out_primals, nz_out = out[: len(out_zeros)], iter(out[len(out_zeros) :])
        out_tangents = [
            internals.symbolic_zero(jax.typeof(p).to_tangent_aval()) if z else next(nz_out)
            for p, z in zip(out_primals, out_zeros, strict=True)
        ]
        return [*out_primals, *out_tangents]

    fun = _wrap(lambda *xs: evaluate_closed(call_jaxpr, list(xs)), call_jaxpr.jaxpr)
    params["subfuns"] = (fun, _wrap(jvp, jvp_jaxpr_fun))
    return eqn.primitive.bind(*invals, **params)


def _custom_vjp(eqn: Any, invals: list[Any]) -> list[Any]:
    params = dict(eqn.params)
    call_jaxpr, num_consts = params.pop("call_jaxpr"), params.pop("num_consts")
    fwd_jaxpr_thunk, bwd = params.pop("fwd_jaxpr_thunk"), params.pop("bwd")
    const_avals = call_jaxpr.in_avals[:num_consts]

    def fwd(*args: Any) -> list[Any]:  # jax's lift_fwd, with the forward program evaluated here
        vals, nonzeros = args[::2], args[1::2]
        fwd_jaxpr, fwd_consts = fwd_jaxpr_thunk.call_wrapped(*nonzeros[num_consts:])
        return evaluate(fwd_jaxpr, list(fwd_consts), list(vals[num_consts:]))

    def backward(*args: Any) -> Any:
        """jax's bwd with the constants' zero cotangents: a list of cotangents up to jax 0.11,
        from jax 0.12 a pair (cotangents, the rule's logs: None or a dict of arrays)."""
        consts_zeros = [jax.interpreters.ad.Zero(a) for a in const_avals]
        form: list[Any] = []

        def flat(*xs: Any) -> list[Any]:
            out = bwd.call_wrapped(*xs)
            cts, logs = out if isinstance(out, tuple) else (out, None)
            leaves, tree = jax.tree.flatten(logs)
            form[:] = [isinstance(out, tuple), len(cts), tree]
            return [*cts, *leaves]

        values = _traced_again(flat, list(args))
        pair, n, tree = form
        cts = consts_zeros + values[:n]
        return (cts, jax.tree.unflatten(tree, values[n:])) if pair else cts

    fun = _wrap(lambda *xs: evaluate_closed(call_jaxpr, list(xs)), call_jaxpr.jaxpr)
    params["subfuns"] = (fun, _wrap(fwd, fwd_jaxpr_thunk), _wrap(backward, bwd))
    return eqn.primitive.bind(*invals, **params)


def _traced_again(fun: Callable[..., list[Any]], args: list[Any]) -> list[Any]:
    """``fun(*args)`` (a flat list, some entries symbolic zeros or None) traced, then evaluated here."""
    shapes: list[Any] = []

    def arrays_only(*xs: Any) -> list[Any]:
        outs = list(fun(*xs))
        shapes[:] = outs
        return [o for o in outs if _is_array(o)]

    closed = jax.jit(arrays_only).trace(*args).jaxpr
    values = iter(evaluate_closed(closed, list(args)))
    return [next(values) if _is_array(o) else o for o in shapes]


def _is_array(x: Any) -> bool:
    return isinstance(x, jax.Array | np.ndarray | np.generic)


def _shard_map(eqn: Any, invals: list[Any]) -> list[Any]:
    if not has_target(eqn.params["jaxpr"]):
        return _bind(eqn, invals)
    params = dict(eqn.params)
    jaxpr, specs = params.pop("jaxpr"), params.pop("out_specs")

    def body(*xs: Any) -> Any:
        return internals.flat_tree_with_aux(evaluate(jaxpr, [], list(xs)), specs)

    params["subfuns"] = (body,)
    params["debug_info"] = jaxpr.debug_info
    return eqn.primitive.bind(*invals, **params)


_CALLBACKS: dict[Any, Callable[[Any, list[Any]], list[Any]]] = {
    primitive: rule
    for primitive, rule in (
        (internals.custom_jvp_call_p, _custom_jvp),
        (internals.custom_vjp_call_p, _custom_vjp),
        (internals.shard_map_p, _shard_map),
    )
    if primitive is not None
}
set_rewriter(evaluate_closed)
