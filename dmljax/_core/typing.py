"""Type aliases of the public signatures (re-exported by ``dmljax.typing``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeAlias

import jax
import numpy as np

IndexArray: TypeAlias = jax.Array | np.ndarray | np.integer | int | Sequence[Any]
"""What an ``indices`` argument accepts: integers of type int32, int64, uint32 or uint64.

A JAX array (a tracer too), a NumPy array, a NumPy or Python integer, or nested sequences of
integers (read with `numpy.asarray`). Host values keep their full width until they are
checked, with ``jax_enable_x64`` on or off; any other element type raises `TypeError`.
"""
