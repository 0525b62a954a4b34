"""Run a test script in a subprocess with several XLA host (CPU) devices; read its JSON answer.

The device count is fixed when JAX starts, so multi-device tests run their script in a
fresh interpreter with ``XLA_FLAGS=--xla_force_host_platform_device_count=N``. The script
prints one JSON document as its last line of output.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[1]


def host_devices_env(devices: int = 8) -> dict[str, str]:
    """The environment for a child interpreter with ``devices`` CPU devices and this checkout importable."""
    env = dict(os.environ, XLA_FLAGS=f"--xla_force_host_platform_device_count={devices}", JAX_PLATFORMS="cpu")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    return env


def run_json(script: str, *args: str, devices: int = 8, timeout: float = 300) -> Any:
    """Run ``python -c script *args`` on ``devices`` host devices; return the JSON of its last output line."""
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        env=host_devices_env(devices),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])
