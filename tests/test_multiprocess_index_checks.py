"""Host (NumPy) indices in a 2-process call: decided together, so no process waits for another.

The operand is sharded over the devices of both processes, so the operator's program has
collectives. Before the fix, a bad index in one process raised there while the other process
waited in the operator's collectives until the coordinator aborted the job (20-45 s); now
every process raises the same error at once (`dmljax._ops.common.index_checks.check_host_agreed`).
Design: docs/design/index-checks.md, "Several processes".
"""

import json
import subprocess
import sys

import numpy as np
import pytest

from tests import multiprocess_index_worker as worker
from tests import reference
from tests._util import child_env, free_port

# 2 processes.
pytestmark = pytest.mark.system

TIMEOUT_S = 30  # the whole job; a process waiting forever fails the test here
CALL_S = 5  # one call, compiles included; the hang it replaces lasted 20 s and more


@pytest.fixture(scope="module")
def job() -> list[dict]:
    """Both processes' JSON answers (every case of the worker), in process order."""
    env = child_env()
    port = str(free_port())
    procs = [
        subprocess.Popen(
            [sys.executable, worker.__file__, port, str(i)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        for i in range(worker.PROCESSES)
    ]
    outputs = []
    try:
        for proc in procs:
            outputs.append(proc.communicate(timeout=TIMEOUT_S))
    except subprocess.TimeoutExpired:
        pytest.fail(f"a process still ran after {TIMEOUT_S} s: it waits for the other")
    finally:
        for proc in procs:  # every process ends, whatever happened, and its pipes close
            if proc.poll() is None:
                proc.kill()
            proc.communicate()
    for proc, (_, stderr) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, stderr.decode()[-3000:]
    return [json.loads(stdout.decode().strip().splitlines()[-1]) for stdout, _ in outputs]


def _oracle(op: str, indices: np.ndarray) -> np.ndarray:
    x = worker.data()
    if op == "gather":
        return reference.gather(x, indices, 0)
    if op == "scatter":
        repeated = np.repeat(indices[:, None], worker.COLUMNS, 1)
        return reference.scatter(x, repeated, np.zeros(repeated.shape, np.float32), 0)
    return reference.gather_nd(x, np.stack([indices, indices % worker.COLUMNS], axis=-1))


OPS = ("gather", "scatter", "gather_nd")


def test_job_ran_on_two_processes(job):
    assert [answer["process"] for answer in job] == [0, 1]
    assert all(answer["devices"] == worker.PROCESSES * worker.LOCAL_DEVICES for answer in job)


@pytest.mark.parametrize("op", OPS)
def test_valid_host_indices_give_the_oracle_in_every_process(job, op):
    want = _oracle(op, worker.host_indices("valid", 0))
    for answer in job:
        np.testing.assert_array_equal(np.asarray(answer["results"][f"{op}/valid"]["result"]), want)


@pytest.mark.parametrize("op", OPS)
def test_a_bad_index_in_one_process_raises_the_same_index_error_in_both(job, op):
    cases = [answer["results"][f"{op}/one_bad"] for answer in job]
    axis_rule = "index 9 is out of bounds for axis 0 with size 8"
    where = "indices[1, 0]" if op == "scatter" else "indices[1]"  # gather_nd: of the column for axis 0
    assert cases[0]["message"] == (
        f"{op}: {axis_rule} ({where}; valid range [-8, 7]) in process 1 (the host indices differ across processes)."
    )
    assert [c["error"] for c in cases] == ["IndexError"] * 2
    assert cases[0]["message"] == cases[1]["message"]
    assert max(c["seconds"] for c in cases) < CALL_S


@pytest.mark.parametrize("op", OPS)
def test_the_same_bad_index_everywhere_raises_the_one_process_message(job, op):
    with pytest.raises(IndexError) as one_process:
        _call_in_this_process(op, worker.host_indices("both_bad", 0))
    for answer in job:
        case = answer["results"][f"{op}/both_bad"]
        assert (case["error"], case["message"]) == ("IndexError", str(one_process.value))


@pytest.mark.parametrize("op", OPS)
def test_valid_but_different_host_indices_raise_a_validation_error_in_both(job, op):
    cases = [answer["results"][f"{op}/differ"] for answer in job]
    assert [c["error"] for c in cases] == ["ValidationError"] * 2
    assert cases[0]["message"] == cases[1]["message"]
    assert "must be the same host values in every process" in cases[0]["message"]
    assert max(c["seconds"] for c in cases) < CALL_S


def _call_in_this_process(op: str, indices: np.ndarray):
    import dmljax

    x = worker.data()
    if op == "gather":
        return dmljax.gather(x, indices, axis=0)
    if op == "scatter":
        return dmljax.scatter(x, np.repeat(indices[:, None], worker.COLUMNS, 1), np.zeros((4, worker.COLUMNS)))
    return dmljax.gather_nd(x, np.stack([indices, indices % worker.COLUMNS], axis=-1))
