"""`median_ms`: the timing every GPU script of scripts/gpu_check.sh uses (imported from this folder)."""

import time

import jax
import numpy as np


def median_ms(f, *args, rounds=7):
    """Median wall time of ``f(*args)`` in ms over ``rounds`` calls, after one untimed call (compile, warm-up)."""
    jax.block_until_ready(f(*args))
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        jax.block_until_ready(f(*args))
        times.append((time.perf_counter() - start) * 1e3)
    return float(np.median(times))
