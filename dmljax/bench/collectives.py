"""Collectives per operator under the shardings a training job uses, read from compiled HLO.

``python -m dmljax.bench.collectives`` runs every case on 8 host CPU devices (it sets
``jax_num_cpu_devices`` itself when JAX's backend is not started yet) and prints a Markdown
table: for each operator, mesh and partition spec, the collectives in the compiled forward
pass and in the compiled backward pass (the VJP with a cotangent sharded like the output),
and whether the results are bit-identical to one device. The README's table is this output
(a test checks that).

Meshes: ``data`` (8 devices, 1-D) and ``data x model`` (4 x 2). "vmap" cases map the
operator over a sharded leading batch axis.
"""

from __future__ import annotations

import dataclasses
import json
import re
import sys
from collections import Counter
from collections.abc import Callable, Sequence

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

import dmljax

__all__ = ["DEVICES", "CollectiveCase", "cases", "collectives", "main", "measure", "table"]

DEVICES = 8
_KINDS = ("all-gather", "all-reduce", "all-to-all", "collective-permute", "reduce-scatter")
_COLLECTIVE = re.compile(r"\s(" + "|".join(_KINDS) + r")(?:-start)?\(")  # the opcode; operands are %names
_SHAPE = (16, 8, 32)  # (batch, time, features) float32


@dataclasses.dataclass(frozen=True)
class CollectiveCase:
    """One operator call under one sharding.

    Attributes:
      op: the public function's name and its axis, as shown in the table.
      mesh: ``"data"`` (1-D) or ``"data x model"`` (2-D).
      fun: the operator call on ``args`` (integer arguments get no cotangent).
      args: NumPy inputs.
      specs: one `PartitionSpec` per argument.
      diff: the positions of the differentiated arguments; empty: forward only.
      axis_sharded: whether the operator's own axis is sharded.
      out_spec: the output's `PartitionSpec` when it is set (random bits), else ``None``.
      ct_spec: the cotangent's `PartitionSpec`; ``None``: the first differentiated argument's.
    """

    op: str
    mesh: str
    fun: Callable
    args: tuple
    specs: tuple
    diff: tuple[int, ...]
    axis_sharded: bool
    out_spec: P | None = None
    ct_spec: P | None = None


def collectives(hlo_text: str | None) -> Counter:
    """Count the collective instructions (async ``-start`` halves once) in compiled HLO text.

    Examples:
      >>> text = "%s = f32[8]{0} all-reduce(f32[8]{0} %p)\\n%t = (f32[8]{0}) all-gather-start(%s)"
      >>> dict(collectives(text))
      {'all-reduce': 1, 'all-gather': 1}
    """
    return Counter(_COLLECTIVE.findall(hlo_text or ""))


def _fmt(counts: Counter) -> str:
    return ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items())) or "none"


def _meshes() -> dict[str, Mesh]:
    devices = np.array(jax.devices()[:DEVICES])
    return {"data": Mesh(devices, ("data",)), "data x model": Mesh(devices.reshape(4, 2), ("data", "model"))}


def cases() -> list[CollectiveCase]:
    """Every operator x sharding case of the table (data of shape (16, 8, 32), float32)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal(_SHAPE, dtype=np.float32)
    b, t, s = _SHAPE
    out: list[CollectiveCase] = []
    batch, both = P("data"), P("data", "model")
    # gather: indices replicated (a vocabulary lookup), or per batch row under vmap.
    take = rng.integers(-s, s, (5,), dtype=np.int32)
    rows = rng.integers(-b, b, (6,), dtype=np.int32)
    steps = rng.integers(-t, t, (3,), dtype=np.int32)
    for axis, spec, mesh, idx, sharded, ct in [
        (2, batch, "data", take, False, batch),
        (2, both, "data x model", take, False, both),
        (1, P("data", None, "model"), "data x model", steps, False, P("data", None, "model")),
        (0, batch, "data", rows, True, P()),
        (1, both, "data x model", steps, True, batch),
        (2, P("data", None, "model"), "data x model", take, True, batch),
    ]:
        fun = _partial(dmljax.gather, axis)
        out.append(CollectiveCase(f"gather axis={axis}", mesh, fun, (x, idx), (spec, P()), (0,), sharded, None, ct))
    # An embedding lookup: the table replicated, token ids sharded by batch; its gradient sums over the batch.
    table = rng.standard_normal((64, s), dtype=np.float32)
    tokens = rng.integers(0, 64, (b, t), dtype=np.int32)
    fun = _partial(dmljax.gather, 0)
    specs: tuple[P, ...]
    name, specs = "gather axis=0 (embedding)", (P(), batch)
    out.append(CollectiveCase(name, "data", fun, (table, tokens), specs, (0,), False, None, batch))
    per_row = rng.integers(-s, s, (b, 5), dtype=np.int32)
    vfun = jax.vmap(_partial(dmljax.gather, 1))
    out.append(CollectiveCase("vmap(gather) axis=1", "data", vfun, (x, per_row), (batch, batch), (0,), False))
    # gather_elements and scatter: indices shaped like the data (half the axis for scatter).
    for axis, spec, mesh, sharded in [
        (2, batch, "data", False),
        (2, both, "data x model", False),
        (1, P("data", None, "model"), "data x model", False),
        (0, batch, "data", True),
        (2, P("data", None, "model"), "data x model", True),
    ]:
        n = _SHAPE[axis]
        idx = rng.integers(-n, n, _SHAPE, dtype=np.int32)
        fun = _partial(dmljax.gather_elements, axis)
        out.append(CollectiveCase(f"gather_elements axis={axis}", mesh, fun, (x, idx), (spec, spec), (0,), sharded))
        perm = np.argsort(rng.random(_SHAPE), axis=axis).astype(np.int32)
        upd_shape = list(_SHAPE)
        upd_shape[axis] //= 2
        perm = np.take(perm, np.arange(upd_shape[axis]), axis=axis)  # distinct positions, half the axis
        upd = rng.standard_normal(upd_shape, dtype=np.float32)
        fun = _partial(dmljax.scatter, axis)
        specs = (spec, spec, spec)
        out.append(CollectiveCase(f"scatter axis={axis}", mesh, fun, (x, perm, upd), specs, (0, 2), sharded))
    idx = rng.integers(-s, s, _SHAPE, dtype=np.int32)
    vfun = jax.vmap(_partial(dmljax.gather_elements, 1))
    out.append(CollectiveCase("vmap(gather_elements) axis=1", "data", vfun, (x, idx), (batch, batch), (0,), False))
    perm = np.argsort(rng.random(_SHAPE), axis=2).astype(np.int32)
    vfun = jax.vmap(_partial(dmljax.scatter, 1))
    out.append(CollectiveCase("vmap(scatter) axis=1", "data", vfun, (x, perm, x), (batch,) * 3, (0, 2), False))
    # random bits (the state replicated, the bits sharded), and dropout on sharded activations.
    state = np.asarray(dmljax.random.make_state(7, counter=2**32 - 100))
    fun = _random_fun(_SHAPE)
    out.append(CollectiveCase("random_generator", "data", fun, (state,), (P(),), (), False, batch))
    out.append(CollectiveCase("random_generator", "data x model", fun, (state,), (P(),), (), False, both))
    fun = _dropout_fun
    out.append(CollectiveCase("dropout", "data x model", fun, (state, x), (P(), both), (1,), False))
    # slice1: rows reversed and every other feature.
    fun = _slice_fun((0, 1), (b, s // 2), (1, 2), axes=(0, 2))
    out.append(CollectiveCase("slice1 axis=2", "data", fun, (x,), (batch,), (0,), False))
    fun = _slice_fun((0,), (b,), (-1,), axes=(0,))
    out.append(CollectiveCase("slice1 axis=0 reversed", "data", fun, (x,), (batch,), (0,), True))
    return out


def _partial(op: Callable, axis: int) -> Callable:
    def call(*args):
        return op(*args, axis=axis, mode="clip" if op is not dmljax.scatter else "fill")

    return call


def _random_fun(shape: tuple[int, ...]) -> Callable:
    def call(state):
        return dmljax.random.random_generator(state, shape)[0]

    return call


def _dropout_fun(state, x):
    return dmljax.random.dropout(state, x, 0.5)[0]


def _slice_fun(offsets: tuple, sizes: tuple, strides: tuple, axes: tuple) -> Callable:
    def call(x):
        full_offsets, full_sizes, full_strides = [0] * x.ndim, list(x.shape), [1] * x.ndim
        for a, o, n, st in zip(axes, offsets, sizes, strides, strict=True):
            full_offsets[a], full_sizes[a], full_strides[a] = o, n, st
        return dmljax.slice(x, tuple(full_offsets), tuple(full_sizes), tuple(full_strides))

    return call


def measure(case: CollectiveCase, meshes: dict[str, Mesh]) -> dict:
    """Compile ``case`` sharded and on one device; collectives (fwd, bwd) and bit-equality."""
    mesh = meshes[case.mesh]
    shardings = tuple(NamedSharding(mesh, s) for s in case.specs)
    args = tuple(jax.device_put(a, sh) for a, sh in zip(case.args, shardings, strict=True))
    one = tuple(jax.device_put(a, jax.devices()[0]) for a in case.args)
    out_sharding = None if case.out_spec is None else NamedSharding(mesh, case.out_spec)
    fwd = jax.jit(case.fun, in_shardings=shardings, out_shardings=out_sharding)
    fwd_text = fwd.lower(*args).compile().as_text()
    same = _equal(fwd(*args), jax.jit(case.fun)(*one))
    if case.out_spec is not None:
        spec = f"output {_spec(case.out_spec)}"
    elif len(case.specs) > 1 and len(set(case.specs)) == 1:
        spec = f"all {_spec(case.specs[0])}"
    else:
        spec = ", ".join(map(_spec, case.specs))
    result = {"op": case.op, "mesh": case.mesh, "spec": spec, "axis_sharded": case.axis_sharded}
    result["fwd"] = collectives(fwd_text)
    result["bwd"] = None
    if case.diff:
        out = jax.eval_shape(case.fun, *case.args)
        ct = np.random.default_rng(1).standard_normal(out.shape, dtype=np.float32)
        ct_sharding = NamedSharding(mesh, case.specs[case.diff[0]] if case.ct_spec is None else case.ct_spec)
        bwd = jax.jit(_vjp(case.fun, case.diff), in_shardings=(*shardings, ct_sharding))
        bwd_text = bwd.lower(*args, jax.device_put(ct, ct_sharding)).compile().as_text()
        result["bwd"] = collectives(bwd_text)
        same = same and _equal(bwd(*args, ct), jax.jit(_vjp(case.fun, case.diff))(*one, ct))
    result["same"] = same
    return result


def _vjp(fun: Callable, diff: tuple[int, ...]) -> Callable:
    def backward(*args_and_ct):
        *args, ct = args_and_ct

        def of_diff(*d):
            full = list(args)
            for i, v in zip(diff, d, strict=True):
                full[i] = v
            return fun(*full)

        return jax.vjp(of_diff, *(args[i] for i in diff))[1](ct)

    return backward


def _equal(a, b) -> bool:
    leaves = zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True)
    return all(np.array_equal(np.asarray(x), np.asarray(y)) for x, y in leaves)


def _spec(spec: P) -> str:
    return "`P(" + ", ".join("None" if s is None else repr(s) for s in spec) + ")`"


def table(results: Sequence[dict]) -> str:
    """The Markdown table of `measure` results."""
    lines = [
        "| operator | mesh | input shardings | axis sharded | forward | backward | bit-identical |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in results:
        bwd = "-" if r["bwd"] is None else _fmt(r["bwd"])
        sharded = "yes" if r["axis_sharded"] else "no"
        same = "yes" if r["same"] else "NO"
        lines.append(f"| `{r['op']}` | {r['mesh']} | {r['spec']} | {sharded} | {_fmt(r['fwd'])} | {bwd} | {same} |")
    return "\n".join(lines)


def main(argv: Sequence[str] = ()) -> None:
    """Print the table; ``--json``: then one line of JSON with the raw results (for the tests)."""
    if jax.device_count() < DEVICES:
        raise SystemExit(f"needs {DEVICES} devices; got {jax.device_count()} (set jax_num_cpu_devices first)")
    meshes = _meshes()
    results = [measure(c, meshes) for c in cases()]
    print(table(results))
    if "--json" in argv:
        print(json.dumps(results))


if __name__ == "__main__":
    jax.config.update("jax_num_cpu_devices", DEVICES)
    main(sys.argv[1:])
