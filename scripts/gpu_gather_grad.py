"""The gathers' gradients on a device: equal to np.add.at in row-major order, run to run; timings.

Run by scripts/gpu_check.sh (``--dry-run``: tiny sizes, any platform); writes
``$OUT/gather_grad.json``: per case, whether dmljax's gradient equals ``np.add.at`` of the
cotangent in its row-major order and repeats over runs, how many distinct results
``jnp.take``'s gradient gave in the same runs, and medians (ms) of dmljax's gradient and
``jnp.take``'s (docs/design/gather-gradient.md).
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

OUT = os.environ.get("OUT", "/tmp")
DRY = len(sys.argv) > 1 and sys.argv[1] == "--dry-run"
RUNS, ROUNDS = (3, 3) if DRY else (10, 15)
# (name, data shape, axis, number of indices, hot): the case (2^18 rows of 16, axis 0),
# a hot row, and gather along the last axis of (4096, 1024) with 1024 indices.
CASES = (
    (("rows", (2**10, 16), 0, 2**10, False), ("rows hot", (2**10, 16), 0, 2**10, True))
    if DRY
    else (
        ("rows", (2**18, 16), 0, 2**18, False),
        ("rows hot", (2**18, 16), 0, 2**18, True),
        ("axis 1", (4096, 1024), 1, 1024, False),
    )
)


res = {"device": str(jax.devices()[0]), "jax": jax.__version__, "config": dmljax.config.values()}
rng = np.random.default_rng(0)
for name, shape, axis, k, hot in CASES:
    size = shape[axis]
    index = np.where(rng.random(k) < 0.9, 7, rng.integers(0, size, k)) if hot else rng.integers(0, size, k)
    index = index.astype(np.int32)
    out_shape = shape[:axis] + (k,) + shape[axis + 1 :]
    ct = rng.standard_normal(out_shape).astype(np.float32)
    pick = rng.random(out_shape) < 0.3
    ct[pick] = rng.choice(np.array([1e8, -1e8, 1.0, -1.0], np.float32), int(pick.sum()))
    want = np.zeros(shape, np.float32)
    moved = np.moveaxis(want, axis, 0)  # a view: np.add.at along the axis, row-major over the rest
    np.add.at(moved, index, np.moveaxis(ct, axis, 0))
    x, i, c = jnp.zeros(shape, jnp.float32), jnp.asarray(index), jnp.asarray(ct)
    ops = {
        "dmljax": lambda x, i, axis=axis: dmljax.gather(x, i, axis),
        "jnp.take": lambda x, i, axis=axis: jnp.take(x, i, axis, mode="clip"),
    }
    entry = {}
    for op_name, op in ops.items():
        grad = jax.jit(lambda x, i, c, op=op: jax.vjp(lambda x: op(x, i), x)[1](c)[0])
        seen = {np.asarray(grad(x, i, c)).tobytes() for _ in range(RUNS)}
        entry[op_name] = {
            "distinct_in_runs": len(seen),
            "equal_np_add_at": [s == want.tobytes() for s in seen],
            "median_ms": median_ms(grad, x, i, c, rounds=ROUNDS),
        }
    entry["ratio dmljax / jnp.take"] = entry["dmljax"]["median_ms"] / entry["jnp.take"]["median_ms"]
    res[name] = entry
    print(name, json.dumps(entry), flush=True)
json.dump(res, open(os.path.join(OUT, "gather_grad.json"), "w"), indent=1)
print(json.dumps({"ok": all(res[n]["dmljax"]["equal_np_add_at"] == [True] for n, *_ in CASES)}))
