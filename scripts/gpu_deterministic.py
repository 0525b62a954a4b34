"""`dmljax.deterministic` on a device: a message-passing training step and an embedding gradient.

Run by scripts/gpu_check.sh (``--dry-run``: tiny sizes, any platform) once plainly and once
under ``XLA_FLAGS=--xla_gpu_deterministic_ops=true`` (the flag is read at start: one process
each; the second argument names the run). Writes ``$OUT/deterministic_<run>.json``: per
program, how many distinct results the wrapped and the plain program gave over the runs
(parameters after ten SGD steps; the table's gradient), whether the wrapped one equals the
same program's result on the host CPU (one device: XLA CPU's in-order scatter, `np.add.at`'s
order; equal where the device's own arithmetic, matmuls included, is too), and medians (ms)
of both. The programs are `dmljax.bench.deterministic`'s, as users write them.
"""

import json
import os
import sys

import jax
import numpy as np

sys.path.insert(0, os.getcwd())
from gpu_timing import median_ms  # noqa: E402  (this script's folder is on sys.path)

import dmljax  # noqa: E402
from dmljax.bench.deterministic import embedding_gradient, message_passing_step  # noqa: E402

OUT = os.environ.get("OUT", "/tmp")
DRY = "--dry-run" in sys.argv
RUN = next((a for a in sys.argv[1:] if a != "--dry-run"), "default")
RUNS, ROUNDS, STEPS = (2, 3, 2) if DRY else (5, 15, 10)
NODES, EDGES, FEATURES = (64, 512, 16) if DRY else (2**15, 2**18, 16)


def training(step):
    def train(params, *graph):
        for _ in range(STEPS):
            params, _ = step(params, *graph)
        return params

    return train


rng = np.random.default_rng(0)
x = rng.standard_normal((NODES, FEATURES), dtype=np.float32)
params = tuple(rng.standard_normal((FEATURES, FEATURES), dtype=np.float32) / 4 for _ in range(2))
senders = ((rng.zipf(1.5, EDGES) - 1) % NODES).astype(np.int32)
receivers = rng.integers(0, NODES, EDGES, dtype=np.int32)
target = rng.standard_normal((NODES, FEATURES), dtype=np.float32)
vocab = max(1, EDGES // 16)
ids = ((rng.zipf(1.3, EDGES) - 1) % vocab).astype(np.int32)
table = rng.standard_normal((vocab, FEATURES), dtype=np.float32)
w = rng.standard_normal((EDGES, FEATURES), dtype=np.float32)
programs = {
    "message passing, 10 SGD steps": (training(message_passing_step(NODES)), (params, x, senders, receivers, target)),
    "embedding gradient": (embedding_gradient, (table, ids, w)),
}
cpu = jax.devices("cpu")[0]
res = {"run": RUN, "device": str(jax.devices()[0]), "jax": jax.__version__, "xla_flags": os.environ.get("XLA_FLAGS")}
for name, (fun, args) in programs.items():
    device_args = jax.device_put(args)
    entry = {}
    for label, f in (("deterministic", jax.jit(dmljax.deterministic(fun))), ("plain", jax.jit(fun))):
        seen = {b"".join(np.asarray(a).tobytes() for a in jax.tree.leaves(f(*device_args))) for _ in range(RUNS)}
        entry[label] = {"distinct_in_runs": len(seen), "median_ms": median_ms(f, *device_args, rounds=ROUNDS)}
        if label == "deterministic":
            host = f(*jax.device_put(args, cpu))  # committed to the host CPU: compiled and run there
            entry[label]["equals_host_cpu"] = b"".join(np.asarray(a).tobytes() for a in jax.tree.leaves(host)) in seen
    entry["ratio deterministic / plain"] = entry["deterministic"]["median_ms"] / entry["plain"]["median_ms"]
    res[name] = entry
    print(name, json.dumps(entry), flush=True)
json.dump(res, open(os.path.join(OUT, f"deterministic_{RUN}.json"), "w"), indent=1)
print(json.dumps({"ok": all(res[n]["deterministic"]["distinct_in_runs"] == 1 for n in programs)}))
