"""Ordered scatter-add against ``x.at[].add`` at 2^LOG2 updates, random and hot targets.

Run by scripts/gpu_check.sh: ``python scripts/gpu_ops.py LOG2 XLA_FLAGS_TEXT OUT_JSON`` (the
XLA flags are set in the environment; the text only labels the JSON). Times (medians of 7
calls) ``x.at[t].add(u)``, dmljax's fold (its Pallas kernel on a CUDA GPU, and the lax form
with config ``ordered_fold_kernel`` off) and, with random targets, the old rounds; checks
each against ``np.add.at`` (ONNX's loop order) on order-sensitive float32 updates, and
records how many sorts each lowered program holds and whether it calls the kernel.
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


def ordered_add(x, t, u):
    return dmljax.scatter(x, t, u, reduction="add", mode="promise_in_bounds")


def main(log2, flags, path):
    m = 1 << log2
    n = m // 4
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.standard_normal(n, dtype=np.float32))
    u = rng.standard_normal(m, dtype=np.float32) * np.float32(1e4) ** rng.integers(-1, 2, m)  # order-sensitive
    u = jnp.asarray(u.astype(np.float32))
    out = {"updates": m, "elements": n, "xla_flags": flags, "device": str(jax.devices()[0])}
    at_add = jax.jit(lambda x, t, u: x.at[t].add(u))
    forms = {"dmljax": {}, "dmljax lax form": {"ordered_fold_kernel": False}}
    for dist in ("random", "hot"):
        t = rng.integers(0, n, m).astype(np.int32)
        if dist == "hot":
            t[rng.choice(m, min(4096, m), replace=False)] = n // 2
        t = jnp.asarray(t)
        loop = np.asarray(x).copy()
        np.add.at(loop, np.asarray(t), np.asarray(u))  # ONNX's loop order
        out[f"{dist} at_add ms"] = median_ms(at_add, x, t, u)
        out[f"{dist} at_add equals np.add.at"] = bool(np.array_equal(np.asarray(at_add(x, t, u)), loop))
        if dist == "random":  # the previous formulation, one round per update of the busiest target
            forms["dmljax rounds"] = {"ordered_rounds": True}
        else:
            forms.pop("dmljax rounds", None)
        for name, overrides in forms.items():
            with dmljax.config.override(**overrides):  # options key the trace: time inside the block
                ours = jax.jit(ordered_add)
                out[f"{dist} {name} ms"] = median_ms(ours, x, t, u)
                out[f"{dist} {name} equals np.add.at"] = bool(np.array_equal(np.asarray(ours(x, t, u)), loop))
                text = ours.lower(x, t, u).as_text()  # the kernel path sorts once, the lax form twice
                out[f"{dist} {name} sorts"] = text.count('"stablehlo.sort"')
                out[f"{dist} {name} kernel"] = "triton" in text.lower() or "pallas" in text.lower()
        # the first keys kept for earlier runs' readers
        out[f"{dist} equal"] = bool(np.array_equal(np.asarray(at_add(x, t, u)), np.asarray(ordered_add(x, t, u))))
    print(json.dumps(out), flush=True)
    with open(path, "w") as handle:
        json.dump(out, handle, indent=1)


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2], sys.argv[3])
