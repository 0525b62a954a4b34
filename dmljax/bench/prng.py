"""Benchmark cases for `prng_impl`: ``jax.random.bits`` and ``uniform`` on dmljax keys against JAX's own impls.

The same jitted ``jax.random`` call on a key of each implementation: dmljax's
`prng_impl` (DirectML's Philox stream), JAX's default ``threefry2x32`` (the reference for
ratios: what a JAX user switches from) and JAX's ``philox4x32``. The call sits inside the
user's `jax.jit`, whose compiler options are the user's: on the CPU a fourth contender is
the same call jitted with ``xla_cpu_prefer_vector_width=512`` (what README, Performance,
tells users of AVX-512 hosts to pass; `dmljax._random.vector_width`). Throughput counts the
4 bytes written per uint32 or float32 output.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from dmljax._random import vector_width
from dmljax._random.prng_impl import prng_impl
from dmljax.bench._harness import Case, sized

__all__ = ["cases", "DEFAULT_SIZES"]

# Output bytes: 2^22, 2^24 and 2^26 four-byte elements (16, 64 and 256 MiB): the range the Philox speed goal is set for.
DEFAULT_SIZES = tuple(4 * 2**k for k in (22, 24, 26))
REFERENCE = "jax threefry"
WIDE = "dmljax, prefer_vector_width=512"
_IMPLS = {"dmljax prng_impl": prng_impl, REFERENCE: "threefry2x32", "jax philox4x32": "philox4x32"}


@functools.cache
def _draw(what: str, n: int, wide: bool = False):
    options: dict[str, Any] = {"compiler_options": vector_width.WIDE_VECTORS} if wide else {}
    if what == "bits":
        return jax.jit(lambda key: jax.random.bits(key, (n,), jnp.uint32), **options)
    return jax.jit(lambda key: jax.random.uniform(key, (n,), jnp.float32), **options)


def cases(sizes_bytes: Sequence[int] = DEFAULT_SIZES) -> list[Case]:
    """Two `Case`s (bits, uniform) per output size in bytes (``bytes // 4`` elements).

    Examples:
      >>> [case.name for case in cases([4096])]
      ['jax.random.bits n=1024 (2^10)', 'jax.random.uniform n=1024 (2^10)']
      >>> list(cases([4096])[0].contenders)[:3]
      ['dmljax prng_impl', 'jax threefry', 'jax philox4x32']
    """
    keys = {name: jax.random.key(0, impl=impl) for name, impl in _IMPLS.items()}
    out = []
    for n in (max(1, size // 4) for size in sizes_bytes):
        size = f"n={n} (2^{int(np.log2(n))})" if n & (n - 1) == 0 else f"n={n}"
        for what in ("bits", "uniform"):
            contenders = {name: functools.partial(_draw(what, n), key) for name, key in keys.items()}
            if vector_width.default_platform() == "cpu":
                contenders[WIDE] = functools.partial(_draw(what, n, wide=True), keys["dmljax prng_impl"])
            out += sized([Case("prng", f"jax.random.{what} {size}", 4 * n, contenders, REFERENCE)])
    return out
