"""ONNX's sequential scatter reduction as a sort and a fold over each target's run.

One stable sort by target gathers each target's updates into a run, in loop order
(`sort_by_target`; dropped targets, ``>= n``, sort to the end and are ignored). A second,
unstable sort orders the runs by length, longest first, so the runs still going at step
``k`` are a prefix of the run table. Step ``k`` of a `lax.while_loop` gathers the ``k``-th
update of each run of that prefix and applies ``f`` to the run's accumulator (first
``x[target]``): ``((x + u0) + u1) + ...``, bit for bit the loop's fold. The prefix is
processed in a block of the next power of two (a `lax.switch` over the block sizes), so the
steps touch at most twice the M updates in all: O(M log M) for the sorts, O(M) for the
fold, and as many steps as the longest run. One overwrite scatter then writes the
accumulators to their (distinct) targets. A symbolic number of updates (`jax.export`) has
no static block sizes: there each step walks its prefix in chunks of `_CHUNK`.

On a CUDA GPU (config ``ordered_fold_kernel``: on by default before jax 0.11, which deprecates
Pallas' Triton backend; real floats; on every platform in Pallas'
interpret mode with ``ordered_fold_kernel_interpret``, for tests and CPU benchmarks) the steps
run in one Pallas kernel (`dmljax._ops.ordered.fold_kernel`), one lane per run, each lane looping to
its own run's end. The kernel needs no length order, so that path skips the second sort:
its run table comes from the sorted targets by an integer prefix count (`_fold_in_kernel`).
The lax form is its oracle (the same bits) and what every other platform runs. The kernel
path is a primitive (`_kernel_fold_p`) whose lowering takes the lax form in a program
lowered for `jax.export`, which refuses a Triton call.

`run_products` gives the ``"mul"`` gradient its factors from the same sorted runs:
each target's product and each update's product of the other updates of its run (no
division), both differentiable again (second order).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.extend
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.interpreters import batching, mlir

from dmljax._core.config import config
from dmljax._core.dtypes import x64_enabled
from dmljax._core.platform import concrete_shape, opaque_predicate
from dmljax._ops.common.indices import position_dtype, size_scalar
from dmljax._ops.common.positions import batch_rows, gather_at, scatter_at
from dmljax._ops.ordered import fold_kernel

__all__ = ["combiner", "fold", "run_products", "sort_by_target"]

# Steps of a symbolic number of updates walk the runs still going in chunks of this many.
_CHUNK = 256


def combiner(reduction: str, like: jax.Array) -> Callable[[jax.Array, jax.Array], jax.Array]:
    """The loop's ``f(output, update)`` for ``reduction`` (``"add"``, ``"mul"``) on ``like``'s type.

    A complex ``"mul"`` is ``(ar br - ai bi) + (ar bi + ai br) i`` with each product rounded
    on its own, as NumPy's scalar product (and so ``np.multiply.at`` and ONNX's reference
    ScatterElements loop) computes it. XLA contracts a product and a sum into one fused
    multiply-add, its complex product included; each product here gets ``+ (-0.0)`` added,
    ``-0.0`` times a runtime 0 or 1, a value the compiler cannot drop, so the contraction
    it makes, ``fma(a, b, -0.0)``, is the rounded product itself.

    Examples:
      >>> u = jnp.array([3 - 1j], jnp.complex64)
      >>> combiner("mul", u)(jnp.array([1 + 2j], jnp.complex64), u)
      Array([5.+5.j], dtype=complex64)
    """
    if reduction == "add":
        return lax.add
    if not jnp.iscomplexobj(like):
        return lax.mul
    real = jnp.real(like[:1])
    z = jnp.asarray(-0.0, real.dtype) * opaque_predicate(real).astype(real.dtype)  # -0.0 times 0 or 1

    def mul(a: jax.Array, b: jax.Array) -> jax.Array:
        ar, ai, br, bi = jnp.real(a), jnp.imag(a), jnp.real(b), jnp.imag(b)
        return lax.complex((ar * br + z) - (ai * bi + z), (ar * bi + z) + (ai * br + z))

    return mul


def sort_by_target(
    targets: jax.Array, indices_are_sorted: bool = False, n: int | None = None
) -> tuple[jax.Array, jax.Array]:
    """``(sorted targets, loop positions in that order)``: a stable sort, so each target's
    updates stay in loop order; ``indices_are_sorted`` (ascending, as unsigned) skips it.
    With ``n`` (the data's size), targets ``>= n`` may come back as ``n`` (all dropped).

    Examples:
      >>> sort_by_target(jnp.array([2, 0, 2, 1], jnp.uint32))
      (Array([0, 1, 2, 2], dtype=uint32), Array([1, 3, 0, 2], dtype=uint32))
    """
    m = targets.shape[0]
    iota = lax.iota(position_dtype(m), m)
    if indices_are_sorted:
        return targets, iota
    # Constant targets (NumPy indices under jit) would have XLA fold the sort at compile time
    # (2^18 of them: over 30 s); the barrier keeps it a run-time sort.
    targets = lax.optimization_barrier(targets)
    if n is not None:
        packed = _packed_sort(jnp.minimum(targets, size_scalar(n, targets.dtype)), n, iota)
        if packed is not None:
            return packed
    return tuple(lax.sort((targets, iota), num_keys=1, is_stable=True))  # type: ignore[return-value]


def _packed_sort(keys: jax.Array, largest: int, iota: jax.Array) -> tuple[jax.Array, jax.Array] | None:
    """``lax.sort((keys, iota), num_keys=1)`` (stable: ties keep their position order) as a sort
    of one key ``keys << b | iota``, where that fits 32 bits (or 64 with x64 on): XLA CPU sorts
    one operand several times faster than a key and a value. None where it does not fit.
    ``keys``: unsigned, at most ``largest``."""
    m = iota.shape[0]
    if not concrete_shape((m, largest)):
        return None
    low = max(1, (m - 1).bit_length())
    bits = low + max(1, int(largest).bit_length())
    width = 32 if bits <= 32 else 64 if bits <= 64 and x64_enabled() else None
    if width is None:
        return None
    wide = np.dtype(f"uint{width}")
    shift = np.asarray(low, wide)
    key = lax.sort((keys.astype(wide) << shift) | iota.astype(wide))
    mask = np.asarray((1 << low) - 1, wide)
    return (key >> shift).astype(keys.dtype), (key & mask).astype(iota.dtype)


def _boundaries(sorted_targets: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Per sorted position: whether it starts its run, whether it ends it."""
    change = sorted_targets[1:] != sorted_targets[:-1]
    edge = jnp.ones((1,), bool)
    return jnp.concatenate([edge, change]), jnp.concatenate([change, edge])


def fold(
    flat: jax.Array, targets: jax.Array, updates: jax.Array, reduction: str, indices_are_sorted: bool = False
) -> jax.Array:
    """``flat`` with ``updates`` folded in at ``targets`` in loop order (see the module doc).

    Args:
      flat: 1-D float or complex array.
      targets: 1-D unsigned positions; ``>= flat.size`` dropped.
      updates: 1-D, ``targets.shape``, ``flat``'s type.
      reduction: ``"add"`` or ``"mul"``.
      indices_are_sorted: ``targets`` are ascending (as unsigned): skip the sort.

    Examples:
      >>> fold(jnp.zeros(2), jnp.array([1, 0, 1, 1], jnp.uint32), jnp.array([1e8, 5.0, 1.0, -1e8]), "add")
      Array([5., 0.], dtype=float32)
    """
    m, n = targets.shape[0], flat.shape[0]
    if m == 0:  # a symbolic size (jax.export) is never 0
        return flat
    st, perm = sort_by_target(targets, indices_are_sorted, n)
    su = updates if indices_are_sorted else gather_at(updates, perm)
    f = combiner(reduction, updates)
    by_length = lambda flat, st, su: _fold_by_length(flat, st, su, f)  # noqa: E731
    kernel = config.ordered_fold_kernel and concrete_shape((m,)) and fold_kernel.supported(updates.dtype, m)
    if kernel and config.ordered_fold_kernel_interpret:  # the GPU formulation forced anywhere
        return _kernel_fold_p.bind(flat, st, su, reduction=reduction, interpret=True)
    # Pallas lowers Triton only in a process whose default backend is a GPU: a CPU host
    # exporting for cuda traces the lax form, the same bits. From jax 0.11 (Triton
    # deprecated) config ordered_fold_kernel is off by default: the lax form.
    if not (kernel and fold_kernel.TRITON and jax.default_backend() == "gpu"):
        return by_length(flat, st, su)
    in_kernel = functools.partial(_kernel_fold_p.bind, reduction=reduction, interpret=False)
    return lax.platform_dependent(flat, st, su, default=by_length, cuda=in_kernel)


def _kernel_fold_lowering(
    ctx: mlir.LoweringRuleContext, flat: Any, st: Any, su: Any, *, reduction: str, interpret: bool
) -> Sequence[Any]:
    """`_fold_in_kernel`, except in a program lowered for `jax.export`: there the lax form.

    An exported program must hold only custom calls with compatibility guarantees, which a
    Triton kernel has not (`jax.export` refuses it), so a serialized program folds in the
    lax form: the same bits, portable, slower for long runs. Only a lowering knows it is
    for an export (its lowering parameters); the trace is the same as `jit`'s."""
    f = lax.add if reduction == "add" else lax.mul
    params = getattr(ctx.module_context, "lowering_parameters", None)
    if getattr(params, "for_export", False):
        impl = functools.partial(_fold_by_length, f=f)
    else:
        impl = functools.partial(_fold_in_kernel, f=f, interpret=interpret)
    return mlir.lower_fun(impl, multiple_results=False)(ctx, flat, st, su)


def _kernel_fold_batch(args: Sequence[jax.Array], dims: Sequence[int | None], **params: Any) -> tuple[jax.Array, int]:
    """vmap: the rows as one fold of the concatenated rows (`batch_rows`), while the kernel
    takes that many updates. The folds need of the targets only that each run is contiguous."""
    bind = functools.partial(_kernel_fold_p.bind, **params)
    return batch_rows(args, dims, bind, bind, fits=lambda m: fold_kernel.supported(args[2].dtype, m))


# The fold with its steps in the Pallas kernel, the lax form in exports (`_kernel_fold_lowering`).
_kernel_fold_p = jax.extend.core.Primitive("dmljax_sorted_fold_kernel")
_kernel_fold_p.def_abstract_eval(lambda flat, st, su, **_: flat.update(weak_type=False))
_kernel_fold_p.def_impl(lambda *args, **params: jax.jit(functools.partial(_kernel_fold_p.bind, **params))(*args))
mlir.register_lowering(_kernel_fold_p, _kernel_fold_lowering)
batching.primitive_batchers[_kernel_fold_p] = _kernel_fold_batch


def _fold_in_kernel(flat: jax.Array, st: jax.Array, su: jax.Array, f: Callable, interpret: bool) -> jax.Array:
    """The fold with its steps in the Pallas kernel, one lane per run, runs in target order.

    The kernel needs no length order (each lane loops to its own run's end), so the run
    table comes from the sorted targets in O(M) without a second sort: run ``r`` is the
    ``r``-th position that starts a kept run (an integer prefix count, exact in any
    grouping), its end the position where the same count ends one; slots past the last run
    have length 0 and are dropped."""
    m, n = st.shape[0], flat.shape[0]
    pos_dtype = position_dtype(m)
    dump = size_scalar(n, st.dtype)
    r = min(m, n) if concrete_shape((n,)) else m  # at most one run per target
    if r == 0:
        return flat
    start, end = _boundaries(st)
    kept = st < dump
    first, last = start & kept, end & kept
    run_id = jnp.cumsum(first.astype(pos_dtype), dtype=pos_dtype) - np.asarray(1, pos_dtype)
    iota = lax.iota(pos_dtype, m)
    nowhere = size_scalar(r, pos_dtype)
    empty = jnp.zeros((r,), pos_dtype)
    run_start = scatter_at(empty, jnp.where(first, run_id, nowhere), iota, unique=True)
    run_end = scatter_at(empty, jnp.where(last, run_id, nowhere), iota + np.asarray(1, pos_dtype), unique=True)
    run_length = run_end - run_start  # 0 in the slots past the last run
    run_target = jnp.where(run_length > 0, gather_at(st, run_start), dump)
    acc = fold_kernel.fold_runs(gather_at(flat, run_target), su, run_start, run_length, f, interpret)
    return scatter_at(flat, run_target, acc, unique=True)


def _fold_by_length(flat: jax.Array, st: jax.Array, su: jax.Array, f: Callable) -> jax.Array:
    """The fold's lax form: runs ordered by length, longest first, the steps in `_block_step`'s
    levels (`_chunk_step`'s chunks for a symbolic number of updates)."""
    m, n = st.shape[0], flat.shape[0]
    pos_dtype = position_dtype(m)
    dump = size_scalar(n, st.dtype)
    start, _ = _boundaries(st)
    # Run lengths from a count per target (an integer scatter-add: exact in any order).
    counts = scatter_at(jnp.zeros((n,), pos_dtype), st, jnp.ones((m,), pos_dtype), "add")
    length = jnp.where(start & (st < dump), gather_at(counts, st), 0).astype(pos_dtype)
    # Runs, longest first (positions that start no run, or a dropped one, have length 0: last).
    size = size_scalar(m, pos_dtype)
    order = lax.iota(pos_dtype, m)
    by_length = _packed_sort(size - length, m, order)
    key, run_start = by_length or lax.sort((size - length, order), num_keys=1, is_stable=False)
    run_length = size - key
    going = _suffix_max(scatter_at(jnp.zeros((m,), pos_dtype), run_length - 1, lax.iota(pos_dtype, m) + 1, "max"))
    # going[k]: how many runs are longer than k (runs are sorted by length)
    if concrete_shape((m, n)) and n < m:  # at most n runs
        run_start = run_start[:n]
    run_target = gather_at(st, run_start)
    acc = gather_at(flat, run_target)
    if concrete_shape((m,)):
        acc = _block_step(acc, su, run_start, going, run_length[0], f)
    else:
        acc = _chunk_step(acc, su, run_start, going, run_length[0], f)
    run_target = jnp.where(lax.iota(pos_dtype, run_start.shape[0]) < going[0], run_target, dump)
    return scatter_at(flat, run_target, acc)


def _block_step(
    acc: jax.Array, su: jax.Array, run_start: jax.Array, going: jax.Array, longest: jax.Array, f: Callable
) -> jax.Array:
    """Steps ``k < longest``: the first ``going[k]`` accumulators take their run's ``k``-th
    update. ``going`` does not grow with ``k``, so the steps fall into levels, largest first:
    level ``s`` (a power of two, or the table's size) runs the steps whose count is at most
    ``s`` in a `lax.while_loop` over a static block of the first ``s`` accumulators."""
    r = acc.shape[0]
    sizes = sorted({min(1 << b, r) for b in range(r.bit_length() + 1)})
    k = jnp.zeros((), longest.dtype)
    for low, s in reversed(list(zip([0, *sizes[:-1]], sizes, strict=True))):
        starts, lanes = run_start[:s], lax.iota(going.dtype, s)

        def body(state: tuple[jax.Array, jax.Array], starts: jax.Array = starts, lanes: jax.Array = lanes) -> tuple:
            k, head = state
            u = gather_at(su, starts + k)
            return k + 1, jnp.where(lanes < going[k], f(head, u), head)

        def cond(state: tuple[jax.Array, jax.Array], low: int = low) -> jax.Array:
            k = state[0]
            return (k < longest) & (going[jnp.minimum(k, longest - 1)] > low)

        k, head = lax.while_loop(cond, body, (k, acc[:s]))
        acc = lax.dynamic_update_slice(acc, head, (0,))
    return acc


def _chunk_step(
    acc: jax.Array, su: jax.Array, run_start: jax.Array, going: jax.Array, longest: jax.Array, f: Callable
) -> jax.Array:
    """`_block_step` for a symbolic number of updates: each step walks its prefix in chunks."""
    pad = lambda a: jnp.concatenate([a, jnp.zeros((_CHUNK,), a.dtype)])  # noqa: E731
    acc, run_start = pad(acc), pad(run_start)
    chunk = np.asarray(_CHUNK, longest.dtype)

    def body(state: tuple[jax.Array, jax.Array]) -> tuple[jax.Array, jax.Array]:
        k, acc = state
        count = going[k]

        def inner(state: tuple[jax.Array, jax.Array]) -> tuple[jax.Array, jax.Array]:
            j, acc = state
            head = lax.dynamic_slice(acc, (j,), (_CHUNK,))
            u = gather_at(su, lax.dynamic_slice(run_start, (j,), (_CHUNK,)) + k)
            new = jnp.where(j + lax.iota(j.dtype, _CHUNK) < count, f(head, u), head)
            return j + chunk, lax.dynamic_update_slice(acc, new, (j,))

        acc = lax.while_loop(lambda s: s[0] < count, inner, (jnp.zeros((), longest.dtype), acc))[1]
        return k + 1, acc

    k0 = jnp.zeros((), longest.dtype)
    return lax.while_loop(lambda s: s[0] < longest, body, (k0, acc))[1][: going.shape[0]]


def _suffix_max(values: jax.Array) -> jax.Array:
    """``max(values[k:])`` for every ``k`` (unsigned: exact in any grouping)."""
    if concrete_shape(values.shape):
        return lax.cummax(values, reverse=True)
    m = values.shape[0]
    iota = lax.iota(values.dtype, m)
    size = size_scalar(m, values.dtype)

    def body(state: tuple[jax.Array, jax.Array]) -> tuple[jax.Array, jax.Array]:
        shift, out = state
        later = jnp.where(iota + shift < size, gather_at(out, iota + shift), 0)
        return shift + jnp.minimum(shift, size - shift), jnp.maximum(out, later)

    return lax.while_loop(lambda s: s[0] < size, body, (jnp.ones((), values.dtype), values))[1]


def run_products(
    n: int, targets: jax.Array, updates: jax.Array, indices_are_sorted: bool = False
) -> tuple[jax.Array, jax.Array]:
    """Per output element the product of its updates (1 where none); per update the product of
    the other updates of its target (exclusive prefix times exclusive suffix: no division).
    Differentiable again: sorts, gathers, unique scatters and scans, no scatter-multiply.

    Examples:
      >>> t, u = jnp.array([1, 0, 1], jnp.uint32), jnp.array([2.0, 3.0, 5.0])
      >>> run_products(3, t, u)
      (Array([ 3., 10.,  1.], dtype=float32), Array([5., 1., 2.], dtype=float32))
    """
    m = targets.shape[0]
    one = jnp.ones((1,), updates.dtype)
    if m == 0:
        return jnp.ones((n,), updates.dtype), updates
    st, perm = sort_by_target(targets, indices_are_sorted, n)
    u = gather_at(updates, perm)
    start, end = _boundaries(st)
    prefix = _segmented_product(jnp.concatenate([one, u[:-1]]), start)
    suffix = _segmented_product(jnp.concatenate([one, u[::-1][:-1]]), end[::-1])[::-1]
    others = scatter_at(jnp.zeros_like(updates), perm, prefix * suffix, unique=True)
    ends = jnp.where(end, st, size_scalar(n, st.dtype))  # each target once; dropped ones stay dropped
    product = scatter_at(jnp.ones((n,), updates.dtype), ends, prefix * u, unique=True)
    return product, others


def _segmented_product(values: jax.Array, start: jax.Array) -> jax.Array:
    """Inclusive products that restart at each ``start`` (where the value is taken as 1)."""
    values = jnp.where(start, jnp.ones_like(values), values)

    def op(a: tuple[jax.Array, jax.Array], b: tuple[jax.Array, jax.Array]) -> tuple[jax.Array, jax.Array]:
        return a[0] | b[0], jnp.where(b[0], b[1], a[1] * b[1])

    if not concrete_shape(values.shape):  # jax.export: JAX's associative_scan needs a known length
        return doubling_scan(op, start, values)
    return lax.associative_scan(op, (start, values))[1]


def doubling_scan(op: Callable, start: jax.Array, values: jax.Array) -> jax.Array:
    """The same scan for a symbolic length: log2(m) steps in a `lax.while_loop`, each
    combining every element with the one ``shift`` before it (Hillis-Steele; the products
    are grouped otherwise than `lax.associative_scan` groups them, so they may round otherwise)."""
    m = values.shape[0]
    iota = lax.iota(position_dtype(m), m)
    size = size_scalar(m, iota.dtype)

    def body(state: tuple[jax.Array, jax.Array, jax.Array]) -> tuple[jax.Array, jax.Array, jax.Array]:
        shift, flags, products = state
        source = iota - shift  # wraps below shift: masked
        has = iota >= shift
        earlier = (gather_at(flags, source), gather_at(products, source))
        new_flags, new_products = op(earlier, (flags, products))
        flags, products = jnp.where(has, new_flags, flags), jnp.where(has, new_products, products)
        return shift + jnp.minimum(shift, size - shift), flags, products  # covers min(2 shift, m): no overflow

    one = jnp.ones((), iota.dtype)
    return lax.while_loop(lambda s: s[0] < size, body, (one, start, values))[2]
