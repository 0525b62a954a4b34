"""Ordered scatter reductions on 8 sharded host devices: dmljax against ``x.at[t].add/max/min``.

``python -m dmljax.bench.sharded_reductions [--rounds N] [--updates M] [--json PATH]``
folds ``M`` (default 2^18) float32 updates into ``2^16`` float32 elements on a 1-D ``data``
mesh of 8 host devices: the data replicated, the int32 targets and the updates sharded along
``data``. Per reduction (``add``, ``max``, ``min``) and target distribution (``random``:
uniform; ``zipf``: a power law; ``hot``: uniform with 4,096 of the updates on one target,
`dmljax.bench.nd`'s), two contenders, jitted with those shardings:
``dmljax.scatter(x, t, u, reduction=..., mode="promise_in_bounds")`` and the baseline of the
ratio, ``x.at[t].add(u)`` / ``.max(u)`` / ``.min(u)``.

On several devices dmljax's ordered ``add`` runs the one-device program on the replicated
operands (`dmljax._ops.ordered.ordered_partition`); its ``max``/``min`` are order-free
(`dmljax._ops.ordered.extremal`). XLA's partitioner splits ``jnp``'s scatter by its updates and
combines the shards' partial results.

Each contender's result is compared bit for bit with NumPy's ``ufunc.at`` loop on the same
operands (`oracle`): ``np.add.at`` for ``add`` (order-sensitive values: standard normals);
for ``max``/``min`` ``ufunc.at`` of onnxruntime's fold ``a if a > b else b`` (``<`` for min),
the rule of docs/semantics.md ("Scatter max and min") and of the tests' loop oracle, on data
with a NaN and signed zeros (``np.maximum.at`` propagates NaN instead). The timings are
medians of interleaved rounds in one process, so both contenders see the same machine load.
The header line gives the device count and the load average; ``--json`` writes the same.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import time
from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

import dmljax
from dmljax.bench.collectives import DEVICES
from dmljax.bench.nd import ordered_targets

__all__ = ["ELEMENTS", "main", "operands", "oracle", "run"]

ELEMENTS = 1 << 16
UPDATES = 1 << 18
DISTRIBUTIONS = ("random", "zipf", "hot")
REDUCTIONS = ("add", "max", "min")
_FOLDS = {  # onnxruntime's Func_Max / Func_Min: the current value stays only where strictly better
    "max": np.frompyfunc(lambda a, b: a if a > b else b, 2, 1),
    "min": np.frompyfunc(lambda a, b: a if a < b else b, 2, 1),
}
ORACLES = {"add": "np.add.at", "max": "onnxruntime's max fold, ufunc.at", "min": "onnxruntime's min fold, ufunc.at"}


def operands(seed: int, reduction: str, distribution: str, n: int, m: int) -> tuple[np.ndarray, ...]:
    """``(x, t, u)``: float32 data of ``n`` elements, ``m`` int32 targets and float32 updates.

    Standard normal values (sums depend on their order). For ``max``/``min`` the data holds a
    NaN, ``-0.0`` and ``+0.0`` at elements 0-2, and only four updates reach them: ``1.0``
    (after the NaN), ``+0.0``, ``-0.0`` (the later of equal values wins), and a NaN update
    elsewhere. ``m`` must be at least 4.

    Examples:
      >>> x, t, u = operands(0, "max", "random", 8, 6)
      >>> x[:3], t[t < 3].tolist(), u[t < 3].tolist()
      (array([nan, -0.,  0.], dtype=float32), [0, 1, 2], [1.0, 0.0, -0.0])
    """
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n, dtype=np.float32)
    t = ordered_targets(rng, distribution, n, m)
    u = rng.standard_normal(m, dtype=np.float32)
    if reduction != "add":
        x[:3] = (np.nan, -0.0, 0.0)
        t = np.where(t < 3, t + 3, t).astype(np.int32)
        picked = np.sort(rng.choice(m, 4, replace=False))
        t[picked] = (0, 1, 2, n - 1)
        u[picked] = (1.0, 0.0, -0.0, np.nan)
    return x, t, u


def oracle(x: np.ndarray, t: np.ndarray, u: np.ndarray, reduction: str) -> np.ndarray:
    """NumPy's ``ufunc.at`` loop: ``out[t[i]] = f(out[t[i]], u[i])`` for ``i`` in order.

    ``f``: ``+`` (``np.add.at``) or onnxruntime's max/min fold, which differs from
    ``np.maximum``/``np.minimum`` on NaN and signed zeros.

    Examples:
      >>> x = np.array([np.nan, -0.0], np.float32)
      >>> oracle(x, np.array([0, 0, 1]), np.array([np.nan, 2.0, 0.0], np.float32), "max")
      array([2., 0.], dtype=float32)
    """
    if reduction == "add":
        out = x.copy()
        np.add.at(out, t, u)
        return out
    folded = x.astype(object)  # Python floats: exact, NaN payloads and zero signs kept
    with np.errstate(invalid="ignore"):
        _FOLDS[reduction].at(folded, t, u.astype(object))
    return folded.astype(x.dtype)


def _contenders(reduction: str) -> dict[str, Callable[..., jax.Array]]:
    def ours(x: jax.Array, t: jax.Array, u: jax.Array) -> jax.Array:
        return dmljax.scatter(x, t, u, reduction=reduction, mode="promise_in_bounds")

    def theirs(x: jax.Array, t: jax.Array, u: jax.Array) -> jax.Array:
        return getattr(x.at[t], reduction)(u)

    return {"dmljax": ours, "jnp": theirs}


def run(rounds: int, updates: int, n: int = ELEMENTS) -> dict[str, Any]:
    """Every case on the first `DEVICES` devices: medians in ms, ratios, bit-equality to `oracle`."""
    mesh = Mesh(np.array(jax.devices()[:DEVICES]), ("data",))
    whole, split = NamedSharding(mesh, P()), NamedSharding(mesh, P("data"))
    calls: dict[tuple[str, str, str], Callable[[], jax.Array]] = {}
    cases = []
    for seed, (reduction, distribution) in enumerate((r, d) for r in REDUCTIONS for d in DISTRIBUTIONS):
        x, t, u = operands(seed, reduction, distribution, n, updates)
        want = oracle(x, t, u, reduction).tobytes()
        args = jax.device_put((x, t, u), (whole, split, split))
        case: dict[str, Any] = {"reduction": reduction, "targets": distribution, "oracle": ORACLES[reduction]}
        for name, fun in _contenders(reduction).items():
            compiled = jax.jit(fun, in_shardings=(whole, split, split), out_shardings=whole).lower(*args).compile()
            calls[reduction, distribution, name] = functools.partial(compiled, *args)
            case[f"{name}_exact"] = np.asarray(calls[reduction, distribution, name]()).tobytes() == want
        cases.append(case)
    times: dict[tuple[str, str, str], list[float]] = {key: [] for key in calls}
    order = np.random.default_rng(0)
    keys = list(calls)
    for _ in range(rounds):
        for i in order.permutation(len(keys)):
            start = time.perf_counter()
            jax.block_until_ready(calls[keys[i]]())
            times[keys[i]].append(time.perf_counter() - start)
    for case in cases:
        for name in ("dmljax", "jnp"):
            case[f"{name}_ms"] = float(np.median(times[case["reduction"], case["targets"], name])) * 1e3
        case["ratio"] = case["dmljax_ms"] / case["jnp_ms"]
    return {"devices": mesh.devices.size, "elements": n, "updates": updates, "rounds": rounds, "cases": cases}


def _load() -> list[float] | None:
    try:
        return [round(v, 2) for v in os.getloadavg()]
    except (AttributeError, OSError):
        return None


def _yes(flag: bool) -> str:
    return "yes" if flag else "NO"


def main(argv: Sequence[str] = ()) -> None:
    """Print a header line, then per case the medians, the ratio and the bit-equality to the oracle."""
    parser = argparse.ArgumentParser(prog="python -m dmljax.bench.sharded_reductions")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument(
        "--updates", type=int, default=UPDATES, help=f"float32 updates, a multiple of {DEVICES} (default 2^18)"
    )
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    args = parser.parse_args(list(argv))
    if jax.device_count() < DEVICES:
        raise SystemExit(f"needs {DEVICES} devices; got {jax.device_count()} (set jax_num_cpu_devices first)")
    if args.updates < DEVICES or args.updates % DEVICES or args.rounds < 1:
        rule = f"--updates must be a positive multiple of {DEVICES} (sharded) and --rounds at least 1"
        parser.error(f"{rule}; got --updates={args.updates}, --rounds={args.rounds}")
    load = _load()
    print(
        f"sharded reductions: {DEVICES} {jax.default_backend()} devices, {args.updates} float32 updates (sharded) "
        f"into {ELEMENTS} (replicated), medians of {args.rounds} rounds, jax {jax.__version__}, load average {load}"
    )
    result = run(args.rounds, args.updates)
    result.update(platform=jax.default_backend(), jax=jax.__version__, load=load, load_end=_load())
    for c in result["cases"]:
        print(
            f"{c['reduction']} {c['targets']}: dmljax {c['dmljax_ms']:.2f} ms, jnp {c['jnp_ms']:.2f} ms, "
            f"{c['ratio']:.2f}x jnp; bit-equal to {c['oracle']}: dmljax {_yes(c['dmljax_exact'])}, "
            f"jnp {_yes(c['jnp_exact'])}"
        )
    print(f"load average at the end {result['load_end']}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    import sys

    jax.config.update("jax_num_cpu_devices", DEVICES)
    main(sys.argv[1:])
