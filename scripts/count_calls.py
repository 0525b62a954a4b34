"""Count the dmljax functions a call runs: distinct functions, modules, total calls.

Re-run: ``PYTHONPATH=. python scripts/count_calls.py`` (each case in a fresh process,
so the first call traces and jit caches start empty). Prints, per case, the distinct
dmljax functions, the modules they live in, the total calls, and how often each
module is entered from outside itself (``indices.py`` entries, ``registry.lookup``
calls, ...). Add ``-v`` for every function with its call count. A function behind
`functools.lru_cache` is seen only when the cache misses (``has_aliasing``): count its
callers instead (``write_tensor`` checks aliasing, `write_operand` does not).
"""

from __future__ import annotations

import collections
import json
import os
import subprocess
import sys

CASES = {
    "compile_operator(ScatterOperatorDesc)(...)": """
data, index = TensorDesc("float32", (5,)), TensorDesc("uint32", (4,))
desc = ScatterOperatorDesc(data, index, TensorDesc("float32", (4,)), data, axis=0)
args = (jnp.arange(5.0), jnp.array([3, 1, 4, 0], jnp.uint32), jnp.array([5.0, 6, 7, 8]))
run = lambda: compile_operator(desc, "3.0")(*args).block_until_ready()
""",
    'scatter(..., reduction="add")': """
args = (jnp.zeros(5), jnp.array([3, 1, 3, 0]), jnp.array([5.0, 6, 7, 8]))
run = lambda: scatter(*args, reduction="add").block_until_ready()
""",
}

_CHILD = """
import collections, json, os, sys
import jax.numpy as jnp
from dmljax import TensorDesc, scatter
from dmljax.descriptors import ScatterOperatorDesc, compile_operator
{setup}
root = os.path.dirname(os.path.abspath(__import__("dmljax").__file__))
calls = collections.Counter()
entries = collections.Counter()

def profile(frame, event, arg):
    if event != "call":
        return
    code = frame.f_code
    if not code.co_filename.startswith(root):
        return
    module = os.path.relpath(code.co_filename, root)
    calls[f"{{module}}:{{code.co_qualname}}"] += 1
    caller = frame.f_back
    if caller is None or caller.f_code.co_filename != code.co_filename:
        entries[module] += 1

sys.setprofile(profile)
run()
sys.setprofile(None)
print(json.dumps({{"calls": calls, "entries": entries}}))
"""


def count(setup: str) -> dict:
    """Run ``setup``'s ``run()`` once in a fresh interpreter under `sys.setprofile`."""
    env = dict(os.environ, JAX_PLATFORMS=os.environ.get("JAX_PLATFORMS", "cpu"))
    out = subprocess.run(
        [sys.executable, "-c", _CHILD.format(setup=setup)], capture_output=True, text=True, env=env, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    verbose = "-v" in sys.argv
    for name, setup in CASES.items():
        result = count(setup)
        calls = collections.Counter(result["calls"])
        modules = {key.split(":")[0] for key in calls}
        print(f"{name}: {len(calls)} functions, {len(modules)} modules, {sum(calls.values())} calls")
        entries = result["entries"]
        for module in ("_ops/common/indices.py", "_descriptors/validate.py", "_buffers/layout.py"):
            print(f"  {module} entered {entries.get(module, 0)} times")
        for fn in ("_descriptors/registry.py:lookup", "_buffers/layout.py:has_aliasing"):
            print(f"  {fn}: {calls.get(fn, 0)} calls")
        if verbose:
            for key, n in sorted(calls.items()):
                print(f"    {n:4d} {key}")


if __name__ == "__main__":
    main()
