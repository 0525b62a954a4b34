"""Run by tests/test_onnx_isolation.py in a fresh process: export every kind of callable, then check the process.

Prints one JSON line: the node types of each model, whether each model matched JAX on
onnxruntime, whether each operator still computed the same values (eager and jitted, the
same shapes) after the exports, what a thread calling dmljax during the exports got, and
whether ``jax.numpy``'s and ``jax.config``'s contents were identical before and after.
"""

import functools
import json
import sys
import threading
import types

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx

import dmljax
import dmljax.onnx
from tests._util import run_onnx
from tests.reference import gather as gather_oracle

F32 = np.float32
DATA = np.arange(15, dtype=F32).reshape(5, 3)
INDICES = np.array([4, 0, 2], np.int32)


def snapshot():
    return {k: id(v) for k, v in vars(jnp).items()}, {k: repr(v) for k, v in jax.config.values.items()}


class EqxTable(eqx.Module):
    table: jax.Array

    def __call__(self, i):
        return dmljax.gather(self.table, i)


class NnxTable(nnx.Module):
    def __init__(self):
        self.table = nnx.Param(jnp.asarray(DATA))

    def __call__(self, i):
        return dmljax.gather(self.table[...], i, axis=0)


def closure(scale):
    return lambda d, i: dmljax.gather_elements(d * scale, i, axis=0)


def main():
    before = snapshot()
    vector, index_desc = dmljax.TensorDesc("float32", (15,)), dmljax.TensorDesc("int32", (3,))
    desc = dmljax.descriptors.GatherOperatorDesc(
        vector, index_desc, dmljax.TensorDesc("float32", (3,)), axis=0, index_dimensions=1
    )
    compiled = dmljax.descriptors.compile_operator(desc, "3.0")
    other = types.ModuleType("other")  # a function of another module, holding its own binding of gather
    exec("from dmljax import gather\ndef pick(d, i):\n    return gather(d, i, axis=1, mode='clip')", vars(other))
    elements = np.array([[4, 0, 1], [2, 2, 0]], np.int32)
    cases = {
        "operator": (dmljax.gather, (DATA, INDICES)),
        "partial": (functools.partial(dmljax.gather, axis=1, mode="fill"), (DATA, np.array([2, 5], np.int32))),
        "closure": (closure(2.0), (DATA, elements)),
        "slice1": (dmljax.slice, (DATA, (1, 0), (3, 3), (-1, 2))),
        "other_module": (other.pick, (DATA, np.array([[0, 7]], np.int32))),
        "compile_operator": (compiled, (DATA.reshape(-1), INDICES)),
        "equinox": (EqxTable(jnp.asarray(DATA)), (INDICES,)),
        "nnx": (NnxTable(), (INDICES,)),
    }
    # Warm each operator's jit cache with the shapes the exports will trace.
    expected = {}
    for name, (fn, args) in cases.items():
        arrays = [a for a in args if isinstance(a, np.ndarray)]
        statics = [a for a in args if not isinstance(a, np.ndarray)]
        call = functools.partial(lambda fn, statics, *xs: fn(*xs, *statics), fn, statics)
        expected[name] = (call, arrays, np.asarray(call(*arrays)), np.asarray(jax.jit(call)(*arrays)))

    stop, seen = threading.Event(), {"calls": 0, "bad": 0, "errors": []}

    def other_thread():
        want = gather_oracle(DATA, INDICES, 0)
        while not stop.is_set():
            try:
                got = np.asarray(jax.jit(lambda d, i: dmljax.gather(d, i))(DATA, INDICES))
                got2 = np.asarray(dmljax.gather(DATA, INDICES))
                seen["calls"] += 1
                seen["bad"] += int(not (np.array_equal(got, want) and np.array_equal(got2, want)))
            except Exception as e:  # noqa: BLE001  (reported, not raised: the test asserts none happened)
                seen["errors"].append(f"{type(e).__name__}: {e}"[:200])

    worker = threading.Thread(target=other_thread)
    worker.start()
    report = {"nodes": {}, "onnx_matches": {}, "after_eager": {}, "after_jit": {}}
    try:
        for name, (call, arrays, _, jitted) in expected.items():
            model = dmljax.onnx.export(call, *arrays)
            report["nodes"][name] = [n.op_type for n in model.graph.node]
            report["onnx_matches"][name] = bool(np.array_equal(run_onnx(model, *arrays)[0], jitted))
    finally:
        stop.set()
        worker.join()
    for name, (call, arrays, eager, jitted) in expected.items():
        report["after_eager"][name] = bool(np.array_equal(np.asarray(call(*arrays)), eager))
        report["after_jit"][name] = bool(np.array_equal(np.asarray(jax.jit(call)(*arrays)), jitted))
    report["thread"] = seen
    report["state_unchanged"] = snapshot() == before
    print(json.dumps(report))


if __name__ == "__main__":
    sys.exit(main())
