"""Benchmark case for the first ONNX export in a fresh process (``--only onnx_export``).

Each contender is a new Python process, timed from start to exit, so imports are included:
``dmljax`` (under test): ``dmljax.onnx.export`` of a gather (``(5, 2)`` float32 table, two int64
indices); ``jax2onnx`` (the reference for ratios): ``jax2onnx.to_onnx`` of the same gather written as
``jnp.take``, which imports every jax2onnx plugin as dmljax's export did before it read
markers; ``import only`` (``import dmljax, dmljax.onnx``), the floor. The table size does
not change the work: there is one case whatever ``--sizes`` asks, timed at the first size
(`dmljax.bench._cli.SIZE_FREE_GROUPS`).
Design note: docs/design/onnx-export.md.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from collections.abc import Sequence

from dmljax.bench._harness import Case, sized

__all__ = ["cases"]

_SETUP = "import numpy as np, dmljax, dmljax.onnx\n"
_PROGRAMS = {
    "dmljax": _SETUP
    + "dmljax.onnx.export(lambda t, i: dmljax.gather(t, i), np.zeros((5, 2), np.float32), np.array([1, 4]))",
    "jax2onnx": _SETUP
    + "import jax, jax.numpy as jnp, jax2onnx\n"
    + "jax2onnx.to_onnx(lambda t, i: jnp.take(t, i, axis=0), "
    + "[jax.ShapeDtypeStruct((5, 2), np.float32), jax.ShapeDtypeStruct((2,), np.int32)])",
    "import only": _SETUP,
}


def _fresh(program: str) -> None:
    """Run ``program`` in a new interpreter with this one's path; raise if it fails."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    subprocess.run([sys.executable, "-c", program], check=True, env=env, capture_output=True)


def cases(sizes_bytes: Sequence[int] = (40,)) -> list[Case]:
    """One case whatever the sizes asked (the work does not depend on them): the three fresh-process programs.

    None without the ``onnx`` extra (jax2onnx), which ``dmljax.onnx`` needs.
    """
    if importlib.util.find_spec("jax2onnx") is None:
        return []
    contenders = {name: (lambda p=program: _fresh(p)) for name, program in _PROGRAMS.items()}
    case = Case("onnx_export", "gather (5, 2) first export, fresh process", 40, contenders, "jax2onnx")
    return sized([case], 40)


def unavailable() -> str | None:
    """Why the group cannot run here (no jax2onnx: the ``onnx`` extra), or None.

    `dmljax.bench._cli` says it once instead of announcing a group that times nothing.
    """
    if importlib.util.find_spec("jax2onnx") is None:
        return "needs the onnx extra (pip install 'dmljax[onnx]'), which is not installed"
    return None
