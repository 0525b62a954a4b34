"""One process of `test_multiprocess`: ``python multiprocess_worker.py PORT PROCESS_ID OUT.npz``.

Joins a 2-process JAX job on 127.0.0.1 (2 CPU devices each, gloo collectives), runs the
operators on batch-sharded inputs inside `jax.jit`, and process 0 writes the gathered
results to ``OUT.npz``. The inputs come from `inputs` so that the test can recompute the
same results in one process.
"""

from __future__ import annotations

import sys

import numpy as np

PROCESSES = 2
LOCAL_DEVICES = 2
TIMEOUT_S = 60


def inputs() -> dict[str, np.ndarray]:
    """The job's inputs, the same in every process (and in the test's single process)."""
    rng = np.random.default_rng(3)
    b, t, s, vocab = 8, 16, 32, 64
    return {
        "x": rng.standard_normal((b, t, s), dtype=np.float32),
        "take": rng.integers(-s, s, (5,), dtype=np.int32),
        "perm": np.argsort(rng.random((b, t, s)), axis=2)[..., : s // 2].astype(np.int32),
        "updates": rng.standard_normal((b, t, s // 2), dtype=np.float32),
        "table": rng.standard_normal((vocab, s), dtype=np.float32),
        "w": rng.standard_normal((s,), dtype=np.float32),
        "tokens": rng.integers(0, vocab, (b, t), dtype=np.int32),
        "pick": rng.integers(-t, t, (b, 4), dtype=np.int32),
        "targets": rng.standard_normal((b, 4), dtype=np.float32),
    }


def step(params: tuple, batch: tuple, state):
    """One SGD step of a tiny model: embedding gather, dropout, gather_elements; new params and loss."""
    import jax
    import jax.numpy as jnp

    import dmljax

    def loss(params):
        table, w = params
        tokens, pick, targets = batch
        emb = dmljax.gather(table, tokens, axis=0, mode="clip")  # (b, t, s)
        emb, _ = dmljax.random.dropout(state, emb, 0.25)
        scores = jnp.einsum("bts,s->bt", emb, w)
        chosen = dmljax.gather_elements(scores, pick, axis=1, mode="clip")
        return jnp.mean((chosen - targets) ** 2)

    value, grads = jax.value_and_grad(loss)(params)
    return jax.tree.map(lambda p, g: p - 0.1 * g, params, grads), value


def compute(arrays: dict, state) -> dict:
    """Every result of the job, from (possibly sharded) arrays, each under `jax.jit`."""
    import jax

    import dmljax

    def ops(a, state):
        bits, next_state = dmljax.random.random_generator(state, (8, 64))
        gathered = dmljax.gather(a["x"], a["take"], axis=2, mode="clip")
        scattered = dmljax.scatter(a["x"], a["perm"], a["updates"], axis=2, mode="fill")
        (table, w), value = step((a["table"], a["w"]), (a["tokens"], a["pick"], a["targets"]), state)
        return {
            "bits": bits,
            "next_state": next_state,
            "gather": gathered,
            "scatter": scattered,
            "table": table,
            "w": w,
            "loss": value,
        }

    return jax.jit(ops)(arrays, state)


def join(port: int, process_id: int, timeout_s: int = TIMEOUT_S) -> None:
    """Join the job of `PROCESSES` processes on 127.0.0.1:``port``, `LOCAL_DEVICES` CPU devices each (gloo)."""
    import jax

    jax.config.update("jax_num_cpu_devices", LOCAL_DEVICES)
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(
        coordinator_address=f"127.0.0.1:{port}",
        coordinator_bind_address=f"127.0.0.1:{port}",
        num_processes=PROCESSES,
        process_id=process_id,
        initialization_timeout=timeout_s,
        heartbeat_timeout_seconds=timeout_s,
        shutdown_timeout_seconds=timeout_s,
    )


def main(port: int, process_id: int, out: str) -> None:
    import jax

    join(port, process_id)
    from jax.experimental import multihost_utils
    from jax.sharding import Mesh, NamedSharding
    from jax.sharding import PartitionSpec as P

    import dmljax

    mesh = Mesh(np.array(jax.devices()), ("data",))
    batch_sharded = {"x", "perm", "updates", "tokens", "pick", "targets"}
    arrays = {}
    for name, value in inputs().items():
        sharding = NamedSharding(mesh, P("data") if name in batch_sharded else P())
        arrays[name] = jax.make_array_from_callback(value.shape, sharding, lambda index, v=value: v[index])
    state = np.asarray(dmljax.random.make_state(11, counter=2**32 - 3))
    state = jax.make_array_from_callback(state.shape, NamedSharding(mesh, P()), lambda index: state[index])
    results = compute(arrays, state)
    gathered = {k: np.asarray(multihost_utils.process_allgather(v, tiled=True)) for k, v in results.items()}
    if process_id == 0:
        np.savez(out, devices=jax.device_count(), processes=jax.process_count(), **gathered)
    jax.distributed.shutdown()


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3])
