"""The exporter's jaxpr rewrite: markers become export-only primitives, the rest stays.

`rewrite` re-evaluates a closed jaxpr under `jax.make_jaxpr` with a small interpreter:

* calls (``jit``/``pjit``, ``closed_call``, ``custom_jvp_call``, ``custom_vjp_call``,
  ``checkpoint``) are inlined, so markers inside jitted functions are reached;
* the ordered float add's primitive (`dmljax._ops.ordered.ordered_add`; outside a marker in a
  ``jax.jvp``) becomes a lax scatter-add, so a ScatterElements ``add``, which ONNX defines
  in the updates' order (`dmljax.deterministic` writes its scatters as that primitive); its
  dual ``ordered_take`` (the tangent of dmljax's gathers) a plain gather, and the gather with
  an ordered transpose of `dmljax.deterministic` (`dmljax._transforms.ordered_gather`) the
  lax gather;
* each operator marker (`dmljax._core.markers`) becomes the operator's export-only
  primitive (`dmljax.onnx._primitives`) applied to the operator's inputs only, so the
  implementation that computed the marked value is dead and removed (DCE); a float16/
  bfloat16 add/mul scatter becomes a loop over its updates (`dmljax.onnx._sequential`);
* the random operators, ``jax.random`` on `dmljax.random.prng_impl` keys, draws, splits and
  fold-ins of every other key (threefry's included), ``mode="checked"`` and complex data
  are refused with a `dmljax.ValidationError` naming the operator;
* ``scan``, ``while`` and ``cond`` are traced again (`jax.lax.scan`, `jax.lax.while_loop`,
  `jax.lax.cond`; a ``switch`` as nested two-way conds, since jax2onnx lowers two
  branches only) with bodies this interpreter evaluates, so their markers become
  export-only primitives too and their bodies' dead implementations are removed;
* ``lax.platform_dependent`` takes its default branch (`_platform_index`); elementwise lax
  gathers and scatters (gradients of gather_elements and scatter) become GatherElements/
  ScatterElements (`dmljax.onnx._elementwise`); other clip-mode lax scatters (gradients
  of clip-mode gathers) get their indices clamped (`_clip_scatter`);
* a marked ``cumulative_product`` becomes `dmljax.onnx._products`' formulation; the
  ``lax.top_k`` inside a marked ``top_k``'s implementation becomes the TopK node's indices
  (`dmljax.onnx._marked`: the gradient reads them); a reverse ``scan`` runs forward over
  the reversed sequence; equations onnxruntime has no kernel for, or the opset no node for,
  are re-formulated with the same bits (`dmljax.onnx._kernels`); ``checkify`` checks and a
  float bitcast below opset 26 are refused by name;
* every other equation is bound again as it was (a marker in another construct's body
  stays; the marker's plugin exports it as the identity of the implementation).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
from collections.abc import Callable, Iterator
from typing import Any

import jax
import jax.extend.core
import jax.numpy as jnp
import numpy as np
from jax import lax

from dmljax._core import jax_compat
from dmljax._core.errors import fail
from dmljax._core.markers import MARK_P
from dmljax._ops.common.positions import scatter_at
from dmljax._ops.ordered.ordered_add import PRIMITIVES as ORDERED_ADDS
from dmljax._ops.ordered.ordered_add import ordered_take_p, take_formulation
from dmljax._transforms.ordered_gather import ordered_gather_p
from dmljax.onnx._elementwise import (
    elementwise_gather,
    elementwise_scatter,
    is_elementwise_scatter,
    refuse_low_opset,
)
from dmljax.onnx._indexing import REDUCTION_OPSET
from dmljax.onnx._kernels import check_name, reformulate, refuse_bitcasts
from dmljax.onnx._layouts import slice_bounds
from dmljax.onnx._marked import TOP_K_OPS, export_marker, hinted_top_k, is_exported, top_k_hints, top_k_nodes

__all__ = ["RANDOM_NAMES", "check_exportable", "check_marker", "primitive_names", "rewrite"]

RANDOM_NAMES = ("random_generator", "philox4x32_10", "uniform", "normal", "bernoulli", "dropout", "randint")
_RANDOM_RULE = (
    "not reach an ONNX export: ONNX's RandomUniform, RandomNormal and Bernoulli are not Philox 4x32-10 "
    "and their bits are implementation-defined, so the deployed model could not reproduce dmljax's "
    "stream; generate the values in JAX and pass them to the model as an input"
)
# jax.random primitives that compute with a key's implementation (a hash of its words).
_DRAWS = ("random_bits", "random_split", "random_fold_in", "threefry2x32")
_DRAW_RULE = (
    "not reach an ONNX export: ONNX has no counter-based generator (jax2onnx lowers the draw to "
    "RandomUniform, whose bits are implementation-defined, or to a BitCast onnxruntime lacks), so the "
    "deployed model could not reproduce JAX's stream; draw the values in JAX and pass them to the model "
    "as an input"
)
_CALLS = {"jit", "pjit", "closed_call", "core_call", "custom_jvp_call", "custom_vjp_call", "checkpoint", "remat"}
# The types of onnxruntime's CPU CumSum checked to add in sequence, bit for bit (tests/test_onnx_export_newops.py).
_CUMSUM_TYPES = {np.dtype(t) for t in ("float32", "float64", "int32", "int64")}
_HALF = (np.dtype(np.float16), np.dtype(jnp.bfloat16))
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


def _key_impl(eqn: Any, full: bool = False) -> str | None:
    """The PRNG implementation of a key the equation reads or writes (its tag, or with ``full``
    its full name, e.g. ``threefry2x32``), or None."""
    for var in (*eqn.invars, *eqn.outvars):
        dtype = getattr(getattr(var, "aval", None), "dtype", None)
        if dtype is not None and jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key):
            impl = dtype._impl
            return str(getattr(impl, "name", impl)) if full else str(impl)  # __str__: the tag it was registered under
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
    if op == "nonzero_coordinates":
        rule = (
            "not reach an ONNX export: ONNX's NonZero returns a shape that depends on the data, "
            "dmljax's static (x.size, x.ndim) table with a count has no ONNX node"
        )
        raise fail(op, "x", rule, eqn.invars[1].aval.str_short())
    if op == "cumulative_sum" and np.dtype(eqn.invars[1].aval.dtype) not in _CUMSUM_TYPES:
        rule = "be float32, float64, int32 or int64 in an ONNX export (onnxruntime's CumSum kernels, in sequence)"
        raise fail(op, "x.dtype", rule, str(eqn.invars[1].aval.dtype))
    ordered = op in ("top_k_values", "top_k_indices", "arg_reduce")
    if ordered and np.dtype(eqn.invars[1].aval.dtype) == np.uint64 and opset is not None and opset < 18:
        rule = "be exportable below opset 18 (onnxruntime's TopK has no uint64 kernel; its INT64 keys need BitwiseXor)"
        raise fail(op, "x.dtype", rule, "uint64", f"opset {opset}")
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
        name = eqn.primitive.name
        if name == "check":  # checkify's run-time check (mode="checked" on traced indices)
            rule = (
                "not be 'checked' in an ONNX export (ONNX has no run-time check that could raise; "
                "pass 'clip', 'fill' or 'promise_in_bounds', or check the indices before the model runs)"
            )
            raise fail(check_name(eqn), "mode", rule, "checked")
        impl = _key_impl(eqn) if name.startswith("random_") else None
        if impl in random_impls:
            raise fail(f"jax.random ({name})", f"a key of impl {impl!r}", _RANDOM_RULE, impl)
        if name in _DRAWS:  # any other implementation (threefry2x32, rbg...): no ONNX equivalent either
            impl = _key_impl(eqn, full=True) or "threefry2x32"
            raise fail(f"jax.random ({name})", f"a key of impl {impl!r}", _DRAW_RULE, impl)
        for var in (*eqn.invars, *eqn.outvars):
            dtype = getattr(getattr(var, "aval", None), "dtype", None)
            if dtype is not None and not jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key):
                if np.issubdtype(dtype, np.complexfloating):
                    rule = "hold no complex values in an ONNX export (onnxruntime has no complex kernels)"
                    raise fail("dmljax.onnx.export", f"{eqn.primitive.name} operand", rule, str(dtype))


def _eval_closed(closed: Any, args: list[Any]) -> list[Any]:
    """`_eval` of a `ClosedJaxpr` (a control-flow body)."""
    return _eval(closed.jaxpr, list(closed.consts), args)


def _scan(invals: list[Any], *, jaxpr: Any, num_consts: int, num_carry: int, **p: Any) -> list[Any]:
    """A ``scan``; a reverse one as a forward scan of the reversed ``xs`` (jax2onnx lowers forward
    scans only), its ``ys`` reversed back: the same steps in the same order. float16/bfloat16
    ``xs`` enter the loop as float32 and are rounded back inside (exact both ways): jax2onnx
    types a float step value DOUBLE or FLOAT, never FLOAT16."""
    consts, init, xs = invals[:num_consts], invals[num_consts:][:num_carry], invals[num_consts + num_carry :]
    types = [np.dtype(x.dtype) for x in xs]

    def step(carry: list[Any], x: list[Any]) -> tuple[list[Any], list[Any]]:
        x = [lax.convert_element_type(v, t) for v, t in zip(x, types, strict=True)]
        outs = _eval_closed(jaxpr, [*consts, *carry, *x])
        return outs[:num_carry], outs[num_carry:]

    def enter(v: Any) -> Any:
        v = lax.rev(v, (0,)) if p["reverse"] else v
        return lax.convert_element_type(v, np.float32) if np.dtype(v.dtype) in _HALF else v

    flip = (lambda v: lax.rev(v, (0,))) if p["reverse"] else (lambda v: v)
    carry, ys = jax.lax.scan(step, init, [enter(x) for x in xs], length=p["length"], unroll=p["unroll"])
    return [*carry, *(flip(y) for y in ys)]


def _while(invals: list[Any], *, cond_jaxpr: Any, cond_nconsts: int, body_jaxpr: Any, body_nconsts: int) -> list[Any]:
    """A ``while``, with a batched predicate (`jax.vmap` of a loop whose condition depends on
    the batch) as XLA runs it: until every member is done, a finished member's carry kept."""
    cond_consts, body_consts = invals[:cond_nconsts], invals[cond_nconsts : cond_nconsts + body_nconsts]
    batched = bool(cond_jaxpr.out_avals[0].shape)

    def cond(c: list[Any]) -> Any:
        pred = _eval_closed(cond_jaxpr, [*cond_consts, *c])[0]
        return jnp.any(pred) if batched else pred

    def body(c: list[Any]) -> list[Any]:
        new = _eval_closed(body_jaxpr, [*body_consts, *c])
        if not batched:
            return new
        pred = _eval_closed(cond_jaxpr, [*cond_consts, *c])[0]  # a prefix of every carry's shape
        return [
            lax.select(lax.broadcast_in_dim(pred, jnp.shape(x), range(pred.ndim)), n, x)
            for n, x in zip(new, c, strict=True)
        ]

    return jax.lax.while_loop(cond, body, invals[cond_nconsts + body_nconsts :])


def _cond(invals: list[Any], *, branches: tuple[Any, ...], **_: Any) -> list[Any]:
    """A ``cond``/``switch`` as nested two-way ``lax.cond`` (jax2onnx lowers two branches only, to If)."""
    index, ops = invals[0], invals[1:]
    if not isinstance(index, jax.core.Tracer):  # a platform's branch (`_platform_index`): that one only
        return _eval_closed(branches[int(index)], ops)

    def pick(k: int, *xs: Any) -> list[Any]:
        if k == len(branches) - 1:
            return _eval_closed(branches[k], list(xs))
        chosen = functools.partial(lambda b, *ys: _eval_closed(b, list(ys)), branches[k])
        return jax.lax.cond(index == k, chosen, functools.partial(pick, k + 1), *xs)

    return pick(0, *ops)


def _platform_index(platforms: tuple[tuple[str, ...] | None, ...]) -> np.int32:
    """The branch of `lax.platform_dependent` an export takes: the default (the plain formulation), else CPU's.

    An ONNX model is not compiled by XLA, so the XLA CPU formulations (flat positions,
    tiled transposes) buy nothing; the plain one is the portable formulation.
    """
    if None in platforms:
        return np.int32(platforms.index(None))
    return np.int32(next(i for i, names in enumerate(platforms) if names is not None and "cpu" in names))


def _clip_scatter(invals: list[Any], params: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    """A ``mode=CLIP`` lax scatter's operands with the indices clamped, and ``PROMISE_IN_BOUNDS``.

    jax2onnx lowers some clip-mode scatters (the transpose of a clip-mode gather, as in
    `jax.grad`) to a ScatterND without clamping, which onnxruntime rejects; XLA clamps the
    same way (`_clamp_scatter_indices`).
    """
    operand, indices, updates = invals[:3]
    clamped = jax_compat.clamp_scatter_indices(operand, indices, updates, dnums=params["dimension_numbers"])
    return [operand, clamped, *invals[2:]], params | {"mode": lax.GatherScatterMode.PROMISE_IN_BOUNDS}


def _clip_gather(invals: list[Any], params: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    """A ``mode=CLIP`` lax gather's indices clamped as XLA clamps them (each start to
    ``[0, size - slice size]``), and ``PROMISE_IN_BOUNDS``: jax2onnx's GatherND would count
    a negative index from the end."""
    operand, indices = invals
    d, sizes = params["dimension_numbers"], params["slice_sizes"]
    upper = np.array([operand.shape[a] - sizes[a] for a in d.start_index_map], np.int64)
    upper = np.minimum(upper, np.iinfo(indices.dtype).max).astype(indices.dtype)
    clamped = lax.clamp(
        np.zeros((), indices.dtype), indices, lax.broadcast_in_dim(upper, indices.shape, (indices.ndim - 1,))
    )
    return [operand, clamped], params | {"mode": lax.GatherScatterMode.PROMISE_IN_BOUNDS}


def _batch_columns(indices: Any, index_dims: tuple[int, ...]) -> Any:
    """``indices`` (index vector last) with one more column per batching dimension: its position there."""
    shape = indices.shape[:-1] + (1,)
    columns = [lax.broadcasted_iota(indices.dtype, shape, d) for d in index_dims]
    return lax.concatenate([indices, *columns], indices.ndim - 1)


def _unbatched_scatter(invals: list[Any], params: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    """A lax scatter with batching dimensions (the transpose of `dmljax.gather_nd` with
    ``batch_dims``, which jax2onnx cannot lower) as one without: each batching dimension
    becomes an inserted window dimension indexed by a column of batch positions (in range)."""
    d = params["dimension_numbers"]
    dnums = lax.ScatterDimensionNumbers(
        update_window_dims=d.update_window_dims,
        inserted_window_dims=tuple(sorted(d.inserted_window_dims + d.operand_batching_dims)),
        scatter_dims_to_operand_dims=d.scatter_dims_to_operand_dims + d.operand_batching_dims,
    )
    indices = _batch_columns(invals[1], d.scatter_indices_batching_dims)
    return [invals[0], indices, *invals[2:]], params | {"dimension_numbers": dnums}


def _unbatched_gather(invals: list[Any], params: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    """A lax gather with batching dimensions as one without (`_unbatched_scatter`'s rule)."""
    d = params["dimension_numbers"]
    dnums = lax.GatherDimensionNumbers(
        offset_dims=d.offset_dims,
        collapsed_slice_dims=tuple(sorted(d.collapsed_slice_dims + d.operand_batching_dims)),
        start_index_map=d.start_index_map + d.operand_batching_dims,
    )
    indices = _batch_columns(invals[1], d.start_indices_batching_dims)
    return [invals[0], indices], params | {"dimension_numbers": dnums}


def _interior_pad(x: Any, value: Any, padding_config: tuple[tuple[int, int, int], ...]) -> Any:
    """``lax.pad`` with interior padding as ONNX can run it (jax2onnx's Pad has no interior):
    each element followed by ``interior`` copies of ``value`` (Concat, Reshape), the last
    ones sliced off, then the edges as a plain pad. Used by `lax.associative_scan` (the
    ``"mul"`` reduction's gradient)."""
    for axis, (_, _, interior) in enumerate(padding_config):
        n = x.shape[axis]
        if interior == 0 or n == 0:
            continue
        shape = x.shape[: axis + 1] + (interior,) + x.shape[axis + 1 :]
        fill = lax.broadcast_in_dim(value, shape, ())
        spread = lax.concatenate([lax.expand_dims(x, (axis + 1,)), fill], axis + 1)
        spread = spread.reshape(x.shape[:axis] + (n * (1 + interior),) + x.shape[axis + 1 :])
        x = lax.slice_in_dim(spread, 0, n + (n - 1) * interior, axis=axis)
    return lax.pad(x, value, [(low, high, 0) for low, high, _ in padding_config])


def _signed_sort(invals: list[Any], params: dict[str, Any]) -> list[Any]:
    """``lax.sort`` with unsigned operands sorted as signed ones of the same order (onnxruntime's
    TopK, jax2onnx's sort, has no unsigned kernels): the top bit flipped, then a wrapping cast
    to the signed type of the same width (``u - 2**(w-1)``), and back after."""

    def top(dtype: np.dtype) -> np.ndarray:
        return np.array(1 << (8 * dtype.itemsize - 1), dtype)

    def there(x: Any) -> Any:
        dtype = np.dtype(x.dtype)
        if dtype.kind != "u":
            return x
        return lax.convert_element_type(lax.bitwise_xor(x, top(dtype)), np.dtype(f"int{8 * dtype.itemsize}"))

    def back(y: Any, x: Any) -> Any:
        dtype = np.dtype(x.dtype)
        return y if dtype.kind != "u" else lax.bitwise_xor(lax.convert_element_type(y, dtype), top(dtype))

    outs = lax.sort_p.bind(*map(there, invals), **params)
    return [back(y, x) for y, x in zip(outs, invals, strict=True)]


# The opset of the export in progress (read by `_bind`; `rewrite` sets it).
_OPSET: contextvars.ContextVar[int] = contextvars.ContextVar("opset")
_SCATTERS = {"scatter", "scatter-add", "scatter-sub", "scatter-mul", "scatter-min", "scatter-max"}

# Control-flow primitives traced again with bodies `_eval` evaluates: name -> (invals, **params) -> outs.
_CONTROL: dict[str, Callable[..., list[Any]]] = {"scan": _scan, "while": _while, "cond": _cond}


def _folding(eqn: Any, invals: list[Any]) -> Any:
    """Evaluate now an equation of known integer scalars (the platform's branch index, clamped), else trace it."""
    # a symbolic dimension's value (dim_as_value) is known only to jax.export: traced, not folded
    known = eqn.primitive.name != "dim_as_value" and not any(isinstance(x, jax.core.Tracer) for x in invals)
    scalar = not eqn.effects and all(
        getattr(v.aval, "shape", None) == () and jax.dtypes.issubdtype(v.aval.dtype, np.integer) for v in eqn.outvars
    )
    return jax.ensure_compile_time_eval() if known and scalar else contextlib.nullcontext()


def _bind(eqn: Any, invals: list[Any]) -> list[Any]:
    """``eqn``'s primitive bound again (an elementwise lax gather/scatter as GatherElements/ScatterElements)."""
    params, name = eqn.primitive.get_bind_params(eqn.params), eqn.primitive.name
    with eqn.ctx.manager:
        outs = reformulate(name, invals, params)
    if outs is not None:
        return outs
    out = None
    if name == "pad" and any(interior for _, _, interior in params["padding_config"]):
        out = _interior_pad(invals[0], invals[1], params["padding_config"])
    elif name == "gather":
        out = elementwise_gather(invals, params)
        if out is None and params["dimension_numbers"].operand_batching_dims:
            invals, params = _unbatched_gather(invals, params)
        if out is None and params["mode"] == lax.GatherScatterMode.CLIP:
            invals, params = _clip_gather(invals, params)
    elif name in _SCATTERS:
        out = elementwise_scatter(name, invals, params, _OPSET.get())
        batched = params["dimension_numbers"].operand_batching_dims
        if out is None and batched and not is_elementwise_scatter(name, invals, params):  # else: opset, refused
            invals, params = _unbatched_scatter(invals, params)
        if out is None and params.get("mode") == lax.GatherScatterMode.CLIP:
            invals, params = _clip_scatter(invals, params)
    if name == "top_k":
        hinted = hinted_top_k(eqn, invals, params)
        if hinted is not None:
            return hinted
    if name == "sort" and any(np.dtype(x.dtype).kind == "u" for x in invals):
        return _signed_sort(invals, params)
    if out is not None:
        return [out]
    with eqn.ctx.manager, _folding(eqn, invals):
        outs = eqn.primitive.bind(*invals, **params)
    return outs if eqn.primitive.multiple_results else [outs]


def _eval(jaxpr: Any, consts: list[Any], args: list[Any]) -> list[Any]:
    """Evaluate ``jaxpr`` by binding its equations again, inlining calls and replacing markers."""
    env: dict[Any, Any] = {}
    marks = {e.invars[0]: e for e in jaxpr.eqns if e.primitive is MARK_P and e.params["op"] in TOP_K_OPS}

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
            with top_k_hints(eqn, marks, read):
                outs = _eval(inner, list(closed.consts) if closed is not None else [], invals)
        elif eqn.primitive in ORDERED_ADDS:  # a scatter-add: ScatterElements "add", in the updates' order
            specs = [jax.ShapeDtypeStruct(v.aval.shape, v.aval.dtype) for v in eqn.invars]
            closed = jax.make_jaxpr(lambda x, t, u: scatter_at(x, t, u, "add"))(*specs)
            outs = _eval(closed.jaxpr, list(closed.consts), invals)
        elif eqn.primitive is ordered_take_p:  # its transpose's dual: a gather, 0 where dropped
            specs = [jax.ShapeDtypeStruct(v.aval.shape, v.aval.dtype) for v in eqn.invars]
            closed = jax.make_jaxpr(take_formulation)(*specs)
            outs = _eval(closed.jaxpr, list(closed.consts), invals)
        elif eqn.primitive is ordered_gather_p:  # `dmljax.deterministic`'s gather: the lax gather it lowers to
            outs = _bind(eqn.replace(primitive=lax.gather_p), invals)
        elif eqn.primitive.name == "platform_index":
            outs = [_platform_index(eqn.params["platforms"])]
        elif eqn.primitive.name in _CONTROL:
            with eqn.ctx.manager:
                outs = list(_CONTROL[eqn.primitive.name](invals, **eqn.params))
        elif is_exported(eqn):
            value = export_marker(eqn, invals[1:], _OPSET.get())
            outs = [invals[0] if value is None else value]  # None: the implementation's value
        else:
            outs = _bind(eqn, invals)
        env.update(zip(eqn.outvars, outs, strict=True))
    return [read(v) for v in jaxpr.outvars]


def _dce(jaxpr: Any) -> Any:
    """``jaxpr`` without dead equations, its invars kept, control-flow bodies included."""
    jaxpr, _ = jax_compat.dce_jaxpr(jaxpr, [True] * len(jaxpr.outvars), instantiate=True)
    eqns = []
    for eqn in jaxpr.eqns:
        if eqn.primitive.name in _CONTROL:
            params = {
                k: (tuple(map(_dce_closed, v)) if k == "branches" else _dce_closed(v))
                if k in ("jaxpr", "cond_jaxpr", "body_jaxpr", "branches")
                else v
                for k, v in eqn.params.items()
            }
            eqn = eqn.replace(params=params)
        eqns.append(eqn)
    return jaxpr.replace(eqns=eqns)


def _dce_closed(closed: Any) -> Any:
    return jax.extend.core.ClosedJaxpr(_dce(closed.jaxpr), closed.consts)


def rewrite(closed: Any, opset: int = REDUCTION_OPSET["min"]) -> Any:
    """``closed`` with markers replaced by export-only primitives, calls inlined, dead code removed.

    ``opset``: the model's; ScatterElements' reductions are used only from their opsets.
    """
    specs = [jax.ShapeDtypeStruct(v.aval.shape, v.aval.dtype) for v in closed.jaxpr.invars]
    token = _OPSET.set(opset)
    try:
        with top_k_nodes():
            new = jax.make_jaxpr(lambda *xs: _eval(closed.jaxpr, list(closed.consts), list(xs)))(*specs)
    finally:
        _OPSET.reset(token)
    jaxpr = _dce(new.jaxpr)
    refuse_low_opset(_eqns(jaxpr), opset)
    refuse_bitcasts(_eqns(jaxpr), opset)
    return jax.extend.core.ClosedJaxpr(jaxpr, new.consts)
