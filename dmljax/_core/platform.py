"""Platform helpers: when a one-device formulation may be traced, and the choice per platform.

dmljax has faster formulations of some operators for one device or one platform (flat
positions on XLA CPU, `dmljax._ops.common.positions.use_flat`; column blocks; tiled transposes; Philox
layouts). Each needs `one_device_shape`: a concrete shape in a process that sees one
device, since a flat position merges every axis into one and a partitioned program would
all-gather. `cpu_or_plain` picks the XLA CPU formulation or the plain one (batching
dimensions, partitionable) with `lax.platform_dependent`, so only the chosen branch is
compiled. The tiled and blocked ones keep two passes apart with a `lax.cond` whose two
branches are the same function, on `opaque_predicate` (their tests check the compiled
HLO). Alternatives: docs/design/per-platform-formulations.md.
`host_has_avx512` is the one fact about the tracing host's CPU that formulations read
(the AVX-512 vector twins; gather_elements' CPU forward): only ever for a CPU program.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
from collections.abc import Callable, Iterator
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

__all__ = [
    "concrete_shape",
    "cpu_or_plain",
    "host_has_avx512",
    "in_onnx_export",
    "one_device_shape",
    "onnx_export_trace",
    "opaque_predicate",
]

# Set while `dmljax.onnx.export` traces: formulations that need XLA-only tricks (a float's
# bits as integer keys; ONNX has no BitCast before opset 26) take their ONNX-exact form.
_ONNX_EXPORT = contextvars.ContextVar("dmljax_onnx_export", default=False)


@contextlib.contextmanager
def onnx_export_trace() -> Iterator[None]:
    """Trace as for an ONNX export (`in_onnx_export` is True inside)."""
    token = _ONNX_EXPORT.set(True)
    try:
        yield
    finally:
        _ONNX_EXPORT.reset(token)


def in_onnx_export() -> bool:
    """Whether `dmljax.onnx.export` is tracing (`onnx_export_trace`).

    Examples:
      >>> in_onnx_export()
      False
      >>> with onnx_export_trace():
      ...     in_onnx_export()
      True
    """
    return _ONNX_EXPORT.get()


def concrete_shape(shape: tuple) -> bool:
    """Whether every dimension of ``shape`` is a known integer (not symbolic, as in `jax.export`)."""
    return all(isinstance(d, int | np.integer) for d in shape)


@functools.cache
def host_has_avx512(cpuinfo: str = "/proc/cpuinfo") -> bool:
    """Whether this host's CPU has AVX-512F: a ``flags`` line of Linux's ``cpuinfo`` (False where none is read).

    Read by CPU formulations only (a GPU or TPU program must not depend on the tracing
    host's CPU). Call it through the module (``platform.host_has_avx512()``) so tests can
    pin it.

    Examples:
      >>> host_has_avx512("/no/such/cpuinfo")
      False
    """
    try:
        text = Path(cpuinfo).read_text()
    except OSError:
        return False
    return any(line.startswith("flags") and "avx512f" in line.split() for line in text.splitlines())


def one_device_shape(shape: tuple) -> bool:
    """Whether a one-device formulation may be traced for ``shape``: concrete, and one device.

    The CPU-specific formulations and the GPU's whole-output ones (Philox's flat row,
    gather_elements' gradient blocks) need it: with several devices a program may be
    partitioned (JAX's abstract values do not say how at trace time), and these
    formulations merge axes or read one element. So a one-device program on a host with
    several devices gets the plain formulations (deciding at lowering time was tried and
    reverted: docs/design/per-platform-formulations.md).

    Examples:
      >>> one_device_shape((3, 4))  # the doctests run in a process with one device
      True
      >>> import jax.export
      >>> one_device_shape(jax.export.symbolic_shape("b, 4"))
      False
    """
    return concrete_shape(shape) and jax.device_count() == 1


def opaque_predicate(x: jax.Array) -> jax.Array:
    """A bool scalar XLA cannot fold: whether the low bit of ``x``'s first element is 0.

    For a ``lax.cond`` whose two branches are the same function, so its value never matters
    (see the module doc). ``x``: integer or floating, not empty.

    Examples:
      >>> opaque_predicate(jnp.array([1.0, 2.0])), opaque_predicate(jnp.array([3, 4], jnp.uint32))
      (Array(True, dtype=bool), Array(False, dtype=bool))
    """
    first = lax.slice(x.reshape(-1), (0,), (1,))
    if not jnp.issubdtype(first.dtype, jnp.unsignedinteger):
        first = lax.bitcast_convert_type(first, jnp.dtype(f"uint{8 * first.dtype.itemsize}"))
    return (first[0] & 1) == 0


def cpu_or_plain(on_cpu: Callable, plain: Callable, *args: jax.Array) -> jax.Array:
    """``on_cpu(*args)`` in programs compiled for XLA CPU, ``plain(*args)`` on other platforms.

    ``on_cpu`` is any XLA CPU formulation (flat positions, column blocks, indices
    normalised apart, an in-order scatter); ``plain`` the partitionable one. Only the
    branch of the platform compiled for is compiled.
    """
    return lax.platform_dependent(*args, cpu=on_cpu, default=plain)
