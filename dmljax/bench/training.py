"""A data-parallel training step on 8 host devices: dmljax against the same model in ``jnp``.

``python -m dmljax.bench.training [--rounds N]`` builds one SGD step of a small model that
uses every array operator: an embedding lookup (`dmljax.gather` / ``jnp.take``), dropout
(`dmljax.random.dropout` / ``jax.random.bernoulli``), a scatter that overwrites half the time steps
with a learned mask vector (`dmljax.scatter` / ``jnp.put_along_axis``, i.e. ``.at[].set``)
and a per-example pick along time (`dmljax.gather_elements` / ``jnp.take_along_axis``).
The batch is sharded over a 1-D ``data`` mesh of 8 devices, the parameters replicated. It
prints, per formulation, the collectives of the compiled step and the median time per step
of interleaved rounds (one process, so the two see the same machine load).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

import dmljax
from dmljax.bench.collectives import DEVICES, collectives

__all__ = ["main", "make_step"]

BATCH, TIME, WIDTH, VOCAB, PICKS = 64, 128, 128, 4096, 16
RATE = 0.1


def _dmljax_ops(rng_state: jax.Array) -> dict[str, Callable]:
    return {
        "take": lambda table, tokens: dmljax.gather(table, tokens, axis=0, mode="clip"),
        "dropout": lambda h: dmljax.random.dropout(rng_state, h, RATE)[0],
        "set": lambda z, idx, upd: dmljax.scatter(z, idx, upd, axis=1, mode="fill"),
        "pick": lambda z, idx: dmljax.gather_elements(z, idx, axis=1, mode="clip"),
    }


def _jnp_ops(rng_state: jax.Array) -> dict[str, Callable]:
    key = jax.random.key(0)

    def dropout(h):
        keep = jax.random.bernoulli(key, 1.0 - RATE, h.shape)
        return jnp.where(keep, h / (1.0 - RATE), 0.0)

    return {
        "take": lambda table, tokens: jnp.take(table, tokens, axis=0, mode="clip"),
        "dropout": dropout,
        "set": lambda z, idx, upd: jnp.put_along_axis(z, idx, upd, 1, inplace=False, mode="drop"),
        "pick": lambda z, idx: jnp.take_along_axis(z, idx, 1, mode="clip"),
    }


def make_step(formulation: str) -> Callable:
    """``step(params, batch, rng_state) -> (params, loss)`` written with ``formulation``'s ops."""

    def step(params, batch, rng_state):
        ops = (_dmljax_ops if formulation == "dmljax" else _jnp_ops)(rng_state)

        def loss(params):
            table, w, mask = params
            tokens, slots, picks, targets = batch
            h = ops["dropout"](ops["take"](table, tokens))  # (B, T, D)
            z = jnp.einsum("btd,de->bte", h, w)
            z = ops["set"](z, slots, jnp.broadcast_to(mask, slots.shape))  # mask half the time steps
            return jnp.mean((ops["pick"](z, picks) - targets) ** 2)

        value, grads = jax.value_and_grad(loss)(params)
        return jax.tree.map(lambda p, g: p - 0.01 * g, params, grads), value

    return step


def _inputs(mesh: Mesh) -> tuple:
    rng = np.random.default_rng(0)
    rep, batch = NamedSharding(mesh, P()), NamedSharding(mesh, P("data"))
    params = (
        rng.standard_normal((VOCAB, WIDTH), dtype=np.float32),
        rng.standard_normal((WIDTH, WIDTH), dtype=np.float32) / WIDTH**0.5,
        rng.standard_normal((WIDTH,), dtype=np.float32),
    )
    slots = np.argsort(rng.random((BATCH, TIME)), axis=1)[:, : TIME // 2].astype(np.int32)
    data = (
        rng.integers(0, VOCAB, (BATCH, TIME), dtype=np.int32),
        np.broadcast_to(slots[..., None], (BATCH, TIME // 2, WIDTH)).copy(),
        rng.integers(0, TIME, (BATCH, PICKS, WIDTH), dtype=np.int32),
        rng.standard_normal((BATCH, PICKS, WIDTH), dtype=np.float32),
    )
    params = jax.device_put(params, rep)
    data = jax.device_put(data, batch)
    return params, data, jax.device_put(np.asarray(dmljax.random.make_state(1)), rep)


def main(argv: Sequence[str] = ()) -> None:
    """Print collectives and median time per step for both formulations."""
    parser = argparse.ArgumentParser(prog="python -m dmljax.bench.training")
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args(list(argv))
    mesh = Mesh(np.array(jax.devices()[:DEVICES]), ("data",))
    params, data, state = _inputs(mesh)
    steps = {name: jax.jit(make_step(name)) for name in ("dmljax", "jnp")}
    for name, step in steps.items():
        counts = collectives(step.lower(params, data, state).compile().as_text())
        print(f"{name}: collectives {dict(sorted(counts.items()))}")
        jax.block_until_ready(step(params, data, state))
    times: dict[str, list[float]] = {name: [] for name in steps}
    order = np.random.default_rng(0)
    for _ in range(args.rounds):
        for name in order.permutation(list(steps)):
            start = time.perf_counter()
            jax.block_until_ready(steps[name](params, data, state))
            times[name].append(time.perf_counter() - start)
    base = np.median(times["jnp"])
    for name, values in times.items():
        median = np.median(values)
        print(f"{name}: {median * 1e3:.2f} ms per step (median of {args.rounds}), {median / base:.2f}x jnp")


if __name__ == "__main__":
    import sys

    jax.config.update("jax_num_cpu_devices", DEVICES)
    main(sys.argv[1:])
