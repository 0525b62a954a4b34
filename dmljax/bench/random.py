"""Benchmark cases for `random_generator`: uint32 Philox bits against JAX's and others' generators.

Contenders, dmljax first: JAX's ``philox4x32`` key (the reference for ratios: it
computes a whole block per output word), JAX's default threefry, XLA's native
``lax.rng_bit_generator`` with RNG_PHILOX, and randomgen's C Philox 4x32
(``random_raw``, one thread; skipped when randomgen is not installed), and torch's CPU
``randint`` (MT19937, a peer in work only; skipped without torch). Throughput
counts the 4 bytes written per output. `peak_memory` reads XLA's buffer assignment.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from dmljax._random import _random_generator, make_state
from dmljax.bench import _torch
from dmljax.bench._harness import Case

__all__ = ["cases", "peak_memory", "DEFAULT_SIZES"]

# Output bytes: 2^16 to 2^28 uint32 words (256 KiB to 1 GiB).
DEFAULT_SIZES = tuple(4 * 2**k for k in (16, 20, 24, 26, 28))
REFERENCE = "jax philox4x32 bits"


@functools.cache
def _jax_bits(n: int):
    return jax.jit(lambda key: jax.random.bits(key, (n,), jnp.uint32))


@functools.cache
def _rng_bit_generator(n: int):
    philox = lax.RandomAlgorithm.RNG_PHILOX
    return jax.jit(lambda key: lax.rng_bit_generator(key, (n,), jnp.uint32, algorithm=philox)[1])


def _randomgen(n: int):
    try:
        import randomgen
    except ImportError:
        return None
    generator = randomgen.Philox(counter=0, key=0, number=4, width=32)
    return lambda: generator.random_raw(n)


def cases(sizes_bytes: Sequence[int] = DEFAULT_SIZES) -> list[Case]:
    """One `Case` per output size in bytes (``bytes // 4`` uint32 words), contenders as in the module docstring.

    Examples:
      >>> [case.name for case in cases([4096])]
      ['bits n=1024 (2^10)']
      >>> list(cases([4096])[0].contenders)[:2]
      ['dmljax random_generator', 'jax philox4x32 bits']
    """
    state = make_state(0)
    philox_key = jax.random.key(0, impl="philox4x32")
    threefry_key = jax.random.key(0, impl="threefry2x32")
    rbg_key = jnp.zeros(4, jnp.uint32)
    out = []
    for n in (max(1, size // 4) for size in sizes_bytes):
        contenders = {
            "dmljax random_generator": functools.partial(_random_generator, state, (n,)),
            REFERENCE: functools.partial(_jax_bits(n), philox_key),
            "jax threefry bits": functools.partial(_jax_bits(n), threefry_key),
            "lax.rng_bit_generator PHILOX": functools.partial(_rng_bit_generator(n), rbg_key),
        }
        randomgen = _randomgen(n)
        if randomgen is not None:
            contenders["randomgen C Philox4x32"] = randomgen
        contenders.update(_torch.random_bits(n))
        name = f"bits n={n} (2^{int(np.log2(n))})" if n & (n - 1) == 0 else f"bits n={n}"
        out.append(Case("random", name, 4 * n, contenders, REFERENCE))
    return out


def peak_memory(n: int) -> dict[str, float]:
    """Peak device memory (output + temporaries, from XLA's buffer assignment) over the output's bytes.

    Examples:
      >>> peak_memory(4096)["dmljax random_generator"] <= 2.5
      True
    """
    programs = {
        "dmljax random_generator": jax.jit(_random_generator, static_argnums=1).lower(make_state(0), (n,)),
        REFERENCE: _jax_bits(n).lower(jax.random.key(0, impl="philox4x32")),
        "jax threefry bits": _jax_bits(n).lower(jax.random.key(0, impl="threefry2x32")),
        "lax.rng_bit_generator PHILOX": _rng_bit_generator(n).lower(jnp.zeros(4, jnp.uint32)),
    }
    ratios = {}
    for name, lowered in programs.items():
        stats = lowered.compile().memory_analysis()
        ratios[name] = (stats.output_size_in_bytes + stats.temp_size_in_bytes) / (4 * n)
    return ratios
