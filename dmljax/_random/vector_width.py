"""XLA CPU's 512-bit vectors for dmljax's own top-level Philox calls, on AVX-512 hosts.

``xla_cpu_prefer_vector_width=512`` makes the Philox word planes faster on AVX-512 hosts,
same bits (docs/design/vector-width.md). It is a compile option, and `jax.jit` takes ``compiler_options``
only at the top level (a nested `jit` that carries them raises: ``tests/test_vector_width.py``
fails once it no longer does). So an entry
point has two jitted twins of one function, the plain one and one compiled with the option
(`wide_jit`), and `applies` picks the wide twin only where dmljax's call *is* the top level
and can only help:

- outside any trace (no `jit`, `vmap`, `grad` or `shard_map` of the caller around it:
  inside one, the caller's own `jit` compiles dmljax's ops, and its compiler options are
  the user's to set: README, Performance);
- the call runs on the CPU, as `jax.jit` places it: the devices of the committed input
  arrays and of an ``out_sharding``, else JAX's default device (GPU and TPU compiles never
  see a CPU option);
- the host has AVX-512F (``/proc/cpuinfo``); on an AVX2 host the option is no gain.

The public functions choose per call; the bits are those of the plain twin (tests run
both). Users' own `jit`s take the flag as
``jax.jit(f, compiler_options={"xla_cpu_prefer_vector_width": 512})`` on the outermost
`jit`, or ``XLA_FLAGS=--xla_cpu_prefer_vector_width=512`` for the process.
Why and what was measured: docs/design/vector-width.md.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax

from dmljax._core import jax_compat, platform
from dmljax._core.config import config

__all__ = ["WIDE_VECTORS", "applies", "call", "default_platform", "twin_jit", "wide_jit"]

# XLA CPU's DebugOptions field xla_cpu_prefer_vector_width (bits): docs/design/vector-width.md.
WIDE_VECTORS = {"xla_cpu_prefer_vector_width": 512}


def applies(*args: Any) -> bool:
    """Whether a call with ``args`` should run the wide twin: top level, an AVX-512 host, run on the CPU.

    Where the program runs: on the devices of the committed arrays and of an out_sharding
    among ``args``, else (host values, uncommitted arrays) on JAX's default device.

    Examples:
      >>> on_cpu = jax.device_put(jax.numpy.zeros(6), jax.devices("cpu")[0])  # a GPU machine's default: its GPU
      >>> applies(on_cpu) == platform.host_has_avx512()  # on the CPU, at the top level
      True
      >>> jax.jit(lambda x: jax.numpy.asarray(applies(x)))(1.0)  # inside a trace: never
      Array(False, dtype=bool)
    """
    if not config.cpu_wide_vectors or not jax_compat.trace_state_clean() or not platform.host_has_avx512():
        return False
    devices: list[Any] = []
    for leaf in jax.tree.leaves(args):
        if isinstance(leaf, jax.Array):
            if leaf.committed:  # an uncommitted array moves to where the computation runs
                devices += leaf.devices()
        elif isinstance(leaf, jax.sharding.Sharding):  # an out_sharding: where the program will run
            try:
                devices += leaf.device_set
            except ValueError:  # an abstract mesh has no device_set (tests/test_vector_width.py)
                return False
    if not devices:  # host values and uncommitted arrays: the program runs on JAX's default device
        return default_platform() == "cpu"
    return all(device.platform == "cpu" for device in devices)


def default_platform() -> str:
    """The platform of JAX's default device, where a program with no committed argument runs.

    ``jax.default_device`` (a device or a platform name) if set, else the default backend.

    Examples:
      >>> with jax.default_device(jax.devices("cpu")[0]):
      ...     default_platform()
      'cpu'
    """
    default = jax.config.jax_default_device  # type: ignore[attr-defined]  # a flag, read as an attribute
    if isinstance(default, str):
        return jax.devices(default)[0].platform
    return default.platform if default is not None else jax.default_backend()


def wide_jit(fun: Callable[..., Any], **jit_kwargs: Any) -> Callable[..., Any]:
    """``jax.jit(fun, **jit_kwargs)`` compiled with `WIDE_VECTORS`: call it only where `applies` says so."""
    return jax.jit(fun, compiler_options=WIDE_VECTORS, **jit_kwargs)


def twin_jit(fun: Callable[..., Any], **jit_kwargs: Any) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """The two jitted twins of ``fun``, plain and `wide_jit`, with the same ``jit_kwargs``: for `call`."""
    return jax.jit(fun, **jit_kwargs), wide_jit(fun, **jit_kwargs)


def call(plain: Callable[..., Any], wide: Callable[..., Any], *args: Any) -> Any:
    """``wide(*args)`` where `applies`, else ``plain(*args)``: the two jitted twins of one function."""
    return (wide if applies(*args) else plain)(*args)
