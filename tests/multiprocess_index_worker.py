"""One process of `test_multiprocess_index_checks`: ``python multiprocess_index_worker.py PORT PROCESS_ID``.

Joins a 2-process JAX job on 127.0.0.1 (2 CPU devices each, gloo collectives) and calls the
operators eagerly on arrays sharded over all 4 devices, with NumPy (host) indices that are
the same in both processes or differ (`host_indices`). After each call, one collective
proves that both processes are still in step. Prints one JSON line: per case, the result
(gathered to every process) or the error, and the seconds the call took.
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np

if __package__:  # imported by the test module
    from tests.multiprocess_worker import LOCAL_DEVICES, PROCESSES, join
else:  # run as a script: its folder is on sys.path
    from multiprocess_worker import LOCAL_DEVICES, PROCESSES, join  # type: ignore[no-redef]  # noqa: F401

TIMEOUT_S = 30
ROWS, COLUMNS = 8, 6


def data() -> np.ndarray:
    """The operand, the same in every process."""
    return np.arange(ROWS * COLUMNS, dtype=np.float32).reshape(ROWS, COLUMNS)


def host_indices(case: str, process_id: int) -> np.ndarray:
    """The host indices of ``case`` in process ``process_id`` (gathers along axis 0, size 8).

    "valid": the same valid indices everywhere; "one_bad": process 1 holds 9 at position 1;
    "both_bad": the same bad index everywhere; "differ": valid, but not the same values.
    """
    valid = np.array([0, 7, -1, 3], np.int64)
    if case == "one_bad" and process_id == 1 or case == "both_bad":
        return np.array([0, 9, -1, 3], np.int64)
    if case == "differ" and process_id == 1:
        return np.array([1, 7, -1, 3], np.int64)
    return valid


CASES = ("valid", "one_bad", "both_bad", "differ")


def run(case: str, process_id: int, sharded, call) -> dict:
    """``call`` on the case's host indices: its result on every process, or its error; the seconds it took."""
    from jax.experimental import multihost_utils

    start = time.perf_counter()
    try:
        out = call(sharded, host_indices(case, process_id))
        result = {"result": np.asarray(multihost_utils.process_allgather(out, tiled=True)).tolist()}
    except (IndexError, ValueError) as error:
        result = {"error": type(error).__name__, "message": str(error)}
    result["seconds"] = time.perf_counter() - start
    multihost_utils.sync_global_devices(case)  # both processes reach this point
    return result


def main(port: int, process_id: int) -> None:
    import jax

    join(port, process_id, TIMEOUT_S)
    from jax.sharding import Mesh, NamedSharding
    from jax.sharding import PartitionSpec as P

    import dmljax

    x = data()
    sharding = NamedSharding(Mesh(np.array(jax.devices()), ("rows",)), P("rows"))
    sharded = jax.make_array_from_callback(x.shape, sharding, lambda index: x[index])
    calls = {
        "gather": lambda d, i: dmljax.gather(d, i, axis=0),  # the rows of other processes: collectives
        "scatter": lambda d, i: dmljax.scatter(d, np.repeat(i[:, None], COLUMNS, 1), np.zeros((4, COLUMNS))),
        "gather_nd": lambda d, i: dmljax.gather_nd(d, np.stack([i, i % COLUMNS], axis=-1)),
    }
    results = {f"{op}/{case}": run(case, process_id, sharded, call) for op, call in calls.items() for case in CASES}
    print(json.dumps({"process": jax.process_index(), "devices": jax.device_count(), "results": results}), flush=True)
    jax.distributed.shutdown()


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))
