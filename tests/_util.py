"""Helpers the test modules share: a free port, child-process environments, ONNX Runtime runs, shape specs.

Only what several modules need; imports of optional packages (onnxruntime) stay inside
the helpers that use them, so every test module can import this one.
"""

from __future__ import annotations

import os
import pathlib
import socket
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]


def free_port() -> int:
    """A TCP port on the loopback interface that no one listens on now (for `jax.distributed`)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def child_env() -> dict[str, str]:
    """The environment for a child interpreter on the CPU with this checkout importable.

    ``XLA_FLAGS`` is dropped (the child sets its own device count, or keeps one device).
    """
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    env.pop("XLA_FLAGS", None)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    return env


def onnx_session(model: Any) -> Any:
    """An onnxruntime CPU session of ``model`` (an ``onnx.ModelProto``)."""
    import onnxruntime as ort

    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])


def run_onnx(model: Any, *args: Any) -> list[np.ndarray]:
    """Every output of ``model`` on onnxruntime's CPU kernels, ``args`` fed to its inputs in order."""
    session = onnx_session(model)
    feeds = {spec.name: np.asarray(a) for spec, a in zip(session.get_inputs(), args, strict=True)}
    return session.run(None, feeds)


def spec(shape: tuple[Any, ...], dtype: Any) -> jax.ShapeDtypeStruct:
    """The abstract argument of ``shape`` and ``dtype`` (a name, NumPy or JAX dtype) for `jax.export` and tracing."""
    return jax.ShapeDtypeStruct(shape, jnp.dtype(dtype))
