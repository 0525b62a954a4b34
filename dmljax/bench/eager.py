"""Benchmark cases for eager calls: the default-mode call un-jitted against inside `jax.jit`.

Why the check is a program of its own: docs/design/index-checks.md.

An un-jitted call in the default index mode (``mode=None``) on concrete device arrays
checks the indices (`dmljax._ops.common.index_checks`) and raises `IndexError` for a bad one; inside
`jax.jit` the indices are traced and nothing is checked. Contenders, the first under test:
``eager`` (the call itself, on arrays already on the device) and ``jit`` (the reference for
ratios: the same call inside `jax.jit`, compiled once). ratio = eager / jit: what the
check and the Python around the call cost. The inputs are `dmljax.bench.ops`': float32
data of ``size`` bytes shaped ``(size / 4096, 1024)``, int32 indices with negative values.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np

import dmljax
from dmljax.bench._harness import Case, sized
from dmljax.bench.ops import _COLUMNS, _scatter_rows, _signed

__all__ = ["DEFAULT_SIZES", "cases"]

DEFAULT_SIZES = (1 << 20, 16 << 20, 256 << 20)


def cases(sizes_bytes: Sequence[int] = DEFAULT_SIZES) -> list[Case]:
    """Five cases per size: gather and gather_elements along axes 0 and 1, scatter along axis 1.

    Examples:
      >>> [case.name for case in cases([8192])]  # doctest: +NORMALIZE_WHITESPACE
      ['gather axis=0 (2, 1024)', 'gather axis=1 (2, 1024)', 'gather_elements axis=0 (2, 1024)',
       'gather_elements axis=1 (2, 1024)', 'scatter axis=1 (2, 1024)']
      >>> case = cases([8192])[0]
      >>> list(case.contenders), case.reference, case.group
      (['eager', 'jit'], 'jit', 'eager')
    """
    out: list[Case] = []
    for size in sizes_bytes:
        rng = np.random.default_rng(size)
        x = rng.standard_normal((max(1, size // 4 // _COLUMNS), _COLUMNS), dtype=np.float32)
        data = jnp.asarray(x)
        for axis in (0, 1):
            i = _signed(rng, x.shape[axis], (x.shape[axis],))
            call = functools.partial(dmljax.gather, axis=axis)
            out.append(_case(f"gather axis={axis} {x.shape}", 2 * x.nbytes + i.nbytes, call, data, i))
        for axis in (0, 1):
            i = _signed(rng, x.shape[axis], x.shape)
            call = functools.partial(dmljax.gather_elements, axis=axis)
            out.append(_case(f"gather_elements axis={axis} {x.shape}", 3 * x.nbytes, call, data, i))
        i, u = _scatter_rows(rng, x.shape)
        call = functools.partial(dmljax.scatter, axis=1)
        out.append(_case(f"scatter axis=1 {x.shape}", 2 * x.nbytes + i.nbytes + u.nbytes, call, data, i, u))
    return out


def _case(name: str, nbytes: int, call: Callable[..., jax.Array], data: jax.Array, *host: np.ndarray) -> Case:
    args = (data, *(jnp.asarray(a) for a in host))  # concrete device arrays: the eager check runs
    contenders = {"eager": functools.partial(call, *args), "jit": functools.partial(jax.jit(call), *args)}
    return sized([Case("eager", name, nbytes, contenders, reference="jit")], data.nbytes)[0]
