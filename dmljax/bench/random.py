"""Benchmark cases for `random_generator`: uint32 Philox bits against JAX's and others' generators.

Contenders, dmljax first: JAX's ``philox4x32`` key (the reference for ratios: it
computes a whole block per output word), JAX's default threefry, XLA's native
``lax.rng_bit_generator`` with RNG_PHILOX, and randomgen's C Philox 4x32
(``random_raw``, one thread; skipped when randomgen is not installed), and torch's CPU
``randint`` (MT19937, a peer in work only; skipped without torch). Throughput
counts the 4 bytes written per output. `peak_memory` reads XLA's buffer assignment.

More cases at each size: rows of 1023 words (a last axis that is not a multiple of 4:
rows start inside blocks); the float32 uniform and normal distributions against
`jax.random` with the ``philox4x32`` key; on the CPU, dmljax compiled with
``xla_cpu_prefer_vector_width=512`` (the twin that the public functions pick for their
eager calls on AVX-512 hosts, `dmljax._random.vector_width`, timed on any CPU; on such hosts the
plain dmljax contenders run it too, as a user's eager call would); with 8 or
more devices, a uniform sharded over the last axis so that device slices cut blocks,
with ``out_sharding=`` (each device its own tile) against the partitioner alone.
`sharded_peak_memory` compares the two per device.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from dmljax._random import vector_width
from dmljax._random.distributions import _normal, _normal_wide, _uniform, _uniform_wide
from dmljax._random.generator import _random_generator, _random_generator_wide, make_state
from dmljax.bench import _torch
from dmljax.bench._harness import Case, sized

__all__ = ["cases", "peak_memory", "sharded_peak_memory", "DEFAULT_SIZES"]

# Output bytes: 2^16 to 2^28 uint32 words (256 KiB to 1 GiB).
DEFAULT_SIZES = tuple(4 * 2**k for k in (16, 20, 24, 26, 28))
REFERENCE = "jax philox4x32 bits"
# An unaligned last axis for the rows case: 1023 words a row, so rows start inside blocks.
ROW = 1023


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
      ['bits n=1024 (2^10)', 'bits rows of 1023 n=1023', 'uniform f32 n=1024', 'normal f32 n=1024']
      >>> list(cases([4096])[0].contenders)[:2]
      ['dmljax random_generator', 'jax philox4x32 bits']
    """
    state = make_state(0)
    philox_key = jax.random.key(0, impl="philox4x32")
    threefry_key = jax.random.key(0, impl="threefry2x32")
    rbg_key = jnp.zeros(4, jnp.uint32)
    out = []
    for n in (max(1, size // 4) for size in sizes_bytes):
        contenders: dict[str, Callable[[], Any]] = {
            "dmljax random_generator": functools.partial(
                _eager(_random_generator, _random_generator_wide, state), state, (n,)
            ),
            REFERENCE: functools.partial(_jax_bits(n), philox_key),
            "jax threefry bits": functools.partial(_jax_bits(n), threefry_key),
            "lax.rng_bit_generator PHILOX": functools.partial(_rng_bit_generator(n), rbg_key),
        }
        if vector_width.default_platform() == "cpu":
            contenders["dmljax, prefer_vector_width=512"] = functools.partial(_random_generator_wide, state, (n,))
        randomgen = _randomgen(n)
        if randomgen is not None:
            contenders["randomgen C Philox4x32"] = randomgen
        contenders.update(_torch.random_bits(n))
        name = f"bits n={n} (2^{int(np.log2(n))})" if n & (n - 1) == 0 else f"bits n={n}"
        out.append(Case("random", name, 4 * n, contenders, REFERENCE))
        out += _more_cases(state, philox_key, n)
    return sized(out)  # each case's values: its nbytes (rows of 1023 round the size down)


def _eager(plain: Callable[..., Any], wide: Callable[..., Any], state: jax.Array) -> Callable[..., Any]:
    """The twin an eager public call on ``state`` runs: the wide one on AVX-512 CPUs (`dmljax._random.vector_width`)."""
    return wide if vector_width.applies(state) else plain


@functools.cache
def _jax_sampler(name: str, shape: tuple[int, ...]):
    """``jax.random.uniform`` or ``normal`` (scaled), taking the same two float arguments as dmljax's each call.

    Python floats passed to a jitted function are copied to the device on every call (a
    device round trip on a GPU), as dmljax's ``minval``/``maxval`` and ``mean``/``stddev`` are.
    """
    if name == "uniform":
        return jax.jit(lambda key, low, high: jax.random.uniform(key, shape, jnp.float32, low, high))
    return jax.jit(lambda key, mean, stddev: mean + stddev * jax.random.normal(key, shape, jnp.float32))


def _more_cases(state: jax.Array, philox_key: jax.Array, n: int) -> list[Case]:
    """Rows of 1023 words, float32 uniform and normal, and (8+ devices) a uniform sharded across blocks."""
    rows = (max(1, n // ROW), ROW)
    jax_rows = jax.jit(lambda key: jax.random.bits(key, rows, jnp.uint32))
    out = [
        Case(
            "random",
            f"bits rows of {ROW} n={rows[0] * ROW}",
            4 * rows[0] * ROW,
            {
                "dmljax random_generator": functools.partial(
                    _eager(_random_generator, _random_generator_wide, state), state, rows
                ),
                REFERENCE: lambda: jax_rows(philox_key),
            },
            REFERENCE,
        )
    ]
    for name, impl in (
        ("uniform", _eager(_uniform, _uniform_wide, state)),
        ("normal", _eager(_normal, _normal_wide, state)),
    ):
        reference = f"jax.random.{name} philox4x32"
        contenders: dict[str, Callable[[], Any]] = {
            f"dmljax {name}": functools.partial(impl, state, (n,), np.dtype(np.float32), 0.0, 1.0),
            reference: functools.partial(_jax_sampler(name, (n,)), philox_key, 0.0, 1.0),
        }
        out.append(Case("random", f"{name} f32 n={n}", 4 * n, contenders, reference))
    devices = jax.devices()
    if len(devices) >= 8 and n >= 8 * ROW:
        shape = (max(1, n // 1000), 1000)  # 125 columns a device: device slices cut blocks
        sharding = NamedSharding(Mesh(np.array(devices[:8]), ("d",)), PartitionSpec(None, "d"))
        f32 = np.dtype(np.float32)
        tiles = jax.jit(lambda s: _uniform(s, shape, f32, 0.0, 1.0, sharding), out_shardings=(sharding, None))
        plain = jax.jit(lambda s: _uniform(s, shape, f32, 0.0, 1.0), out_shardings=(sharding, None))
        contenders = {
            "dmljax uniform out_sharding": lambda: tiles(state),
            "dmljax uniform, partitioner": lambda: plain(state),
        }
        name = f"uniform sharded 8 ways, last axis {shape}"
        out.append(Case("random", name, 4 * shape[0] * shape[1], contenders, "dmljax uniform, partitioner"))
    return out


def peak_memory(n: int) -> dict[str, float]:
    """Peak device memory (output + temporaries, from XLA's buffer assignment) over the output's bytes.

    Examples:
      >>> peak_memory(4096)["dmljax random_generator"] <= 2.5
      True
    """
    programs = {
        "dmljax random_generator": jax.jit(_random_generator, static_argnums=1).lower(make_state(0), (n,)),
        f"dmljax random_generator rows of {ROW}": jax.jit(_random_generator, static_argnums=1).lower(
            make_state(0), (max(1, n // ROW), ROW)
        ),
        REFERENCE: _jax_bits(n).lower(jax.random.key(0, impl="philox4x32")),
        "jax threefry bits": _jax_bits(n).lower(jax.random.key(0, impl="threefry2x32")),
        "lax.rng_bit_generator PHILOX": _rng_bit_generator(n).lower(jnp.zeros(4, jnp.uint32)),
    }
    ratios = {}
    for name, lowered in programs.items():
        stats = lowered.compile().memory_analysis()
        ratios[name] = (stats.output_size_in_bytes + stats.temp_size_in_bytes) / (4 * n)
    return ratios


def sharded_peak_memory(shape: tuple[int, ...], spec: tuple) -> dict[str, float]:
    """Per-device peak memory (XLA's buffer assignment) over the device's shard, float32 uniform on all devices.

    The mesh is one axis ``"d"`` over every device; ``spec`` names it where the output is
    split. Compares ``out_sharding=`` (each device computes its tile) with the partitioner
    alone under the same output sharding.

    Examples:
      >>> ratios = sharded_peak_memory((8, 1000), (None, "d"))
      >>> ratios["out_sharding"] <= ratios["partitioner"] + 1e-9
      True
    """
    devices = jax.devices()
    sharding = NamedSharding(Mesh(np.array(devices), ("d",)), PartitionSpec(*spec))
    f32, state = np.dtype(np.float32), make_state(0)
    programs = {
        "out_sharding": jax.jit(lambda s: _uniform(s, shape, f32, 0.0, 1.0, sharding), out_shardings=(sharding, None)),
        "partitioner": jax.jit(lambda s: _uniform(s, shape, f32, 0.0, 1.0), out_shardings=(sharding, None)),
    }
    shard_bytes = 4 * int(np.prod(shape)) / len(devices)
    ratios = {}
    for name, program in programs.items():
        stats = program.lower(state).compile().memory_analysis()
        if stats is None:
            raise RuntimeError(f"{name}: XLA gave no memory analysis on this backend")
        ratios[name] = (stats.output_size_in_bytes + stats.temp_size_in_bytes) / shard_bytes
    return ratios
