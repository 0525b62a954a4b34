"""The segment reductions on a device: exact against the loop, run to run, beside jax.ops; timings.

Run by scripts/gpu_check.sh (``--dry-run``: tiny sizes, any platform); writes
``$OUT/segment_gpu.json``.
"""

import json
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, os.getcwd())
from gpu_timing import median_ms  # noqa: E402  (this script's folder is on sys.path)

import dmljax  # noqa: E402
from tests import reference  # noqa: E402

OUT = os.environ.get("OUT", "/tmp")
SIZES = (
    ((2**16, 2**12, 0.0), (2**16, 2**12, 1 / 64), (2**20, 2**16, 0.0)) if len(sys.argv) < 2 else ((2**10, 2**6, 0.0),)
)
res = {"device": str(jax.devices()[0]), "jax": jax.__version__}
rng = np.random.default_rng(0)
m, n = 4096, 64
big = (rng.choice(np.array([1e8, -1e8, 1.0, -1.0]), (m, 4)) * rng.integers(1, 5, (m, 4))).astype(np.float32)
small = rng.uniform(0.95, 1.05, (m, 4)).astype(np.float32)
ids = np.where(rng.random(m) < 0.5, 0, rng.integers(-1, n + 1, m)).astype(np.int32)
for name in ("sum", "prod", "max", "min", "mean"):
    data = small if name == "prod" else big
    f = getattr(dmljax, "segment_" + name)
    for sort in (False, True):
        i = np.sort(ids) if sort else ids
        w = reference.segment(name, data, i, n)
        g = jax.jit(lambda d, i, f=f, sort=sort: f(d, i, n, indices_are_sorted=sort))
        a, b = np.asarray(g(data, i)), np.asarray(g(data, i))
        res[f"{name} sorted={sort}"] = {
            "equal_loop": bool(np.array_equal(a, w)),
            "run_to_run": a.tobytes() == b.tobytes(),
        }
seen = set()
g = jax.jit(lambda d, i: jax.ops.segment_sum(d, i, n))
for _ in range(20):
    seen.add(np.asarray(g(big, ids)).tobytes())
want = reference.segment("sum", big, ids, n)
res["jax.ops.segment_sum"] = {
    "distinct_in_20_runs": len(seen),
    "equal_loop": [bool(np.array_equal(np.frombuffer(s, np.float32).reshape(n, 4), want)) for s in seen],
}
print(json.dumps(res), flush=True)

num_nodes, num_edges, width = 32, 512, 8
senders = rng.integers(0, num_nodes, num_edges).astype(np.int32)
receivers = np.where(rng.random(num_edges) < 0.25, 0, rng.integers(0, num_nodes, num_edges)).astype(np.int32)
nodes = rng.standard_normal((num_nodes, width)).astype(np.float32)
edges = rng.standard_normal((num_edges, width)).astype(np.float32)
params = {k: rng.standard_normal((width, width)).astype(np.float32) / 3 for k in ("self", "neighbours")}


def loss(p, h, e, s, r):
    inc = jax.ops.segment_sum(h[s] * e, r, num_nodes)
    return (jnp.tanh(h @ p["self"] + inc @ p["neighbours"]) ** 2).mean()


for ours in (True, False):
    gr = jax.grad(loss, argnums=(0, 1, 2))
    gr = jax.jit(dmljax.deterministic(gr) if ours else gr)  # the guide's model, wrapped once
    seen = set()
    for _ in range(20):
        seen.add(
            b"".join(np.asarray(x).tobytes() for x in jax.tree.leaves(gr(params, nodes, edges, senders, receivers)))
        )
    res[f"guide grads distinct in 20 runs, {'dmljax' if ours else 'jax.ops'}"] = len(seen)
print(json.dumps({k: v for k, v in res.items() if k.startswith("guide")}), flush=True)


def timed(fn, *args):
    """Seconds: the median of 7 calls (`gpu_timing.median_ms`)."""
    return median_ms(fn, *args) / 1e3


for rows, segs, hub in SIZES:
    d = jnp.asarray(rng.standard_normal(rows).astype(np.float32))
    i = rng.integers(0, segs, rows).astype(np.int32)
    i = np.where(rng.random(rows) < hub, 0, i).astype(np.int32)
    largest = int(np.bincount(i).max())
    i = jnp.asarray(i)
    t_ours = timed(jax.jit(lambda d, i, segs=segs: dmljax.segment_sum(d, i, segs)), d, i)
    t_jax = timed(jax.jit(lambda d, i, segs=segs: jax.ops.segment_sum(d, i, segs)), d, i)
    ours_sorted = jax.jit(lambda d, i, segs=segs: dmljax.segment_sum(d, i, segs, indices_are_sorted=True))
    t_sorted = timed(ours_sorted, d, jnp.sort(i))
    res[f"time rows={rows} segs={segs} largest={largest}"] = {
        "dmljax_ms": t_ours * 1e3,
        "dmljax_sorted_ms": t_sorted * 1e3,
        "jax_ops_ms": t_jax * 1e3,
    }
    print(json.dumps({k: v for k, v in res.items() if k.startswith("time")}), flush=True)
with open(os.path.join(OUT, "segment_gpu.json"), "w") as fh:
    json.dump(res, fh, indent=1)
