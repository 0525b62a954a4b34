"""Eager index checks on sharded indices: 8 host devices, in one process and across two processes.

The default ``mode=None`` checks concrete indices. On sharded arrays the check must work when
the indices span devices of other processes, and must never copy the whole array to one host:
it is a min/max program of its own (two stages for 2^21 indices and more), two replicated
scalars every process reads, dispatched before the operator's program.
"""

import json
import subprocess
import sys
import textwrap

import pytest

from tests._util import free_port
from tests.multidevice import host_devices_env, run_json

# 8 host devices, and 2 processes, in subprocesses.
pytestmark = pytest.mark.system

# Shared by both scripts: `PID` (the process index) and `ROWS_PER_PROCESS` are set before it runs.
OPERATORS = textwrap.dedent(
    """
    import json
    import jax, numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
    import dmljax

    sharding = NamedSharding(Mesh(np.array(jax.devices()), ("x",)), P("x"))
    rows = ROWS_PER_PROCESS * jax.process_count()
    x = np.arange(rows * 8, dtype=np.float32).reshape(rows, 8)
    index = (np.arange(rows * 8).reshape(rows, 8) * 5 % 8).astype(np.int32)
    updates = -x

    def spread(a):  # each process holds its own rows
        mine = a[PID * ROWS_PER_PROCESS : (PID + 1) * ROWS_PER_PROCESS]
        return jax.make_array_from_process_local_data(sharding, mine, a.shape)

    def local(a):  # the rows this process holds
        shards = sorted(a.addressable_shards, key=lambda s: s.index[0].start)
        return np.concatenate([np.asarray(s.data) for s in shards])

    mine = slice(PID * ROWS_PER_PROCESS, (PID + 1) * ROWS_PER_PROCESS)
    data, indices = spread(x), spread(index)
    result = {"addressable": indices.is_fully_addressable, "devices": len(jax.devices())}
    # Witness of every device-to-host fetch (jax.transfer_guard does not act on CPU): JAX's
    # private ArrayImpl._value, through which np.asarray, int(), .tolist() and jax.device_get all go.
    from jax._src import array as _array
    fetched, _fetch = [], _array.ArrayImpl._value.fget
    _array.ArrayImpl._value = property(lambda self: fetched.append(self.size) or _fetch(self))
    gathered = dmljax.gather_elements(data, indices, axis=1)
    scattered = dmljax.scatter(data, spread(index[:, :1]), spread(updates[:, :1]), axis=1)
    # 2^21 indices: the check reduces each row first, then across rows (XLA CPU, large indices).
    big_rows = 2048
    def spread_big(a):
        per = big_rows // jax.process_count()
        return jax.make_array_from_process_local_data(sharding, a[PID * per : (PID + 1) * per], a.shape)
    big_index = np.tile(np.arange(1024, dtype=np.int32)[::-1], (big_rows, 1))
    big_x = np.arange(big_rows * 1024, dtype=np.float32).reshape(big_rows, 1024)
    big_data = spread_big(big_x)
    big_gathered = dmljax.gather_elements(big_data, spread_big(big_index), axis=1)
    result["largest_fetch"] = max(fetched, default=0)
    big_expected = np.take_along_axis(big_x, big_index, 1)
    result["big"] = all(np.array_equal(s.data, big_expected[s.index]) for s in big_gathered.addressable_shards)
    expected = np.take_along_axis(x, index, 1)
    scatter_expected = x.copy()
    scatter_expected[np.arange(rows), index[:, 0]] = updates[:, 0]
    result["gather_elements"] = bool(np.array_equal(local(gathered), expected[mine]))
    result["scatter"] = bool(np.array_equal(local(scattered), scatter_expected[mine]))
    bad = index.copy()
    bad[rows - 3, 5] = 9
    bad[rows - 1, 0] = -20
    result["errors"] = []
    for name, call in [
        ("gather_elements", lambda i: dmljax.gather_elements(data, i, axis=1)),
        ("scatter", lambda i: dmljax.scatter(data, i, spread(updates), axis=1)),
    ]:
        try:
            call(spread(bad))
            result["errors"].append(None)
        except IndexError as error:
            result["errors"].append(str(error))
    big_index[1500, 1000] = 1024
    big_index[2000, 3] = -1025
    try:
        dmljax.gather_elements(big_data, spread_big(big_index), axis=1)
        result["big_error"] = None
    except IndexError as error:
        result["big_error"] = str(error)
    print(json.dumps(result))
    """
)


def _check(result: dict, rows: int) -> None:
    assert result["devices"] == 8
    assert result["largest_fetch"] <= 2  # [min, max] of the indices, never the indices
    assert result["gather_elements"] and result["scatter"] and result["big"]
    assert result["big_error"] == (
        "gather_elements: index 1024 is out of bounds for axis 1 with size 1024 "
        "(indices[1500, 1000]; valid range [-1024, 1023])."
    )
    for op, message in zip(("gather_elements", "scatter"), result["errors"], strict=True):
        assert message == (
            f"{op}: index 9 is out of bounds for axis 1 with size 8 (indices[{rows - 3}, 5]; valid range [-8, 7])."
        )


def test_one_process_eight_devices():
    script = f"PID, ROWS_PER_PROCESS = 0, 16\n{OPERATORS}"
    result = run_json(script)
    assert result["addressable"]
    _check(result, 16)


def test_two_processes_four_devices_each():
    port = free_port()
    setup = textwrap.dedent(
        f"""
        import sys
        import jax
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
        PID, ROWS_PER_PROCESS = int(sys.argv[1]), 8
        jax.distributed.initialize(coordinator_address="127.0.0.1:{port}", num_processes=2, process_id=PID)
        """
    )
    run = [sys.executable, "-c", setup + OPERATORS]
    workers = [
        subprocess.Popen(
            [*run, str(pid)], env=host_devices_env(4), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for pid in (0, 1)
    ]
    outputs = []
    for worker in workers:
        try:
            stdout, stderr = worker.communicate(timeout=300)
        except subprocess.TimeoutExpired:
            for w in workers:
                w.kill()
            pytest.fail("a worker process timed out")
        assert worker.returncode == 0, stderr[-3000:]
        outputs.append(json.loads(stdout.strip().splitlines()[-1]))
    for result in outputs:
        assert not result["addressable"]  # the indices span the other process's devices
        _check(result, 16)
