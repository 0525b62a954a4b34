"""What exactness costs in the data-movement operators, side by side (medians of 25 runs, microseconds).

* fill_value_sequence, float32: the page's loop (each addition rounds; `lax.scan`) against
  the closed form ``start + delta * iota`` (other bits), and the int32 sequence (parallel).
* slice_grad: its pad-and-reshape spread (exportable to ONNX) against ``jax.vjp`` of `slice1`
  (``lax.pad`` with interior padding), equal bits asserted.

Run: ``PYTHONPATH=. python scripts/bench_moveops.py`` (quote ``uptime``'s load with the figures).
"""

import os
import time

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

import dmljax
from dmljax._ops.fill_value_sequence import fill_value_sequence_validated


def median_us(fn, *args, runs=25):
    jax.block_until_ready(fn(*args))
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        jax.block_until_ready(fn(*args))
        times.append(time.perf_counter() - start)
    return float(np.median(times)) * 1e6


def main():
    print(jax.devices()[0].device_kind, "load", os.getloadavg())
    f32, i32 = np.dtype("float32"), np.dtype("int32")
    for count in (4096, 65536, 1048576):
        loop = jax.jit(lambda n=count: fill_value_sequence_validated((n,), f32, 0.1, 0.1))
        closed = jax.jit(lambda n=count: np.float32(0.1) + np.float32(0.1) * lax.iota(f32, n))
        ints = jax.jit(lambda n=count: fill_value_sequence_validated((n,), i32, 1, 3))
        a, b, c = median_us(loop), median_us(closed), median_us(ints)
        print(f"fill_value_sequence n={count}: float32 loop {a:.0f}, closed form {b:.1f}, int32 {c:.1f}; {a / b:.1f}x")
    shape, offsets, sizes, strides = (512, 1024), (0, 1), (512, 1023), (-2, 3)
    outs = tuple(1 + (s - 1) // abs(t) for s, t in zip(sizes, strides, strict=True))
    grad = jnp.asarray(np.random.default_rng(0).standard_normal(outs).astype(np.float32))
    ours = jax.jit(lambda g: dmljax.slice_grad(g, shape, offsets, sizes, strides))
    slice1 = lambda x: dmljax.slice1(x, offsets, sizes, strides, outs)  # noqa: E731
    vjp = jax.jit(lambda g: jax.vjp(slice1, jnp.zeros(shape))[1](g)[0])
    assert np.array_equal(ours(grad), vjp(grad))
    a, b = median_us(ours, grad), median_us(vjp, grad)
    print(f"slice_grad {outs} -> {shape}: pad+reshape {a:.1f}, vjp(slice1) {b:.1f}")


if __name__ == "__main__":
    main()
