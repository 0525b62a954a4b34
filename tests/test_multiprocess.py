"""A 2-process JAX job on loopback (gloo collectives) gives one process's results.

Random bits, a batch-sharded gather and scatter are bit-identical; the training step's
gradients sum over the batch across processes (an all-reduce), so they equal one
process's up to float rounding only.
"""

import pathlib
import subprocess
import sys

import numpy as np
import pytest

import dmljax
from tests import multiprocess_worker as worker
from tests._util import child_env, free_port

# 2 processes.
pytestmark = pytest.mark.system

TIMEOUT_S = 240


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    out = tmp_path_factory.mktemp("multiprocess") / "results.npz"
    env = child_env()
    port = free_port()
    script = str(pathlib.Path(worker.__file__))
    procs = [
        subprocess.Popen(
            [sys.executable, script, str(port), str(i), str(out)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for i in range(worker.PROCESSES)
    ]
    logs = []
    try:
        for proc in procs:
            logs.append(proc.communicate(timeout=TIMEOUT_S)[0])
    finally:
        for proc in procs:  # every process ends, whatever happened
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    codes = [proc.returncode for proc in procs]
    assert codes == [0] * worker.PROCESSES, "\n".join(log[-3000:] for log in logs)
    with np.load(out) as results:
        return dict(results)


@pytest.fixture(scope="module")
def one_process():
    state = dmljax.random.make_state(11, counter=2**32 - 3)
    results = worker.compute(worker.inputs(), state)
    return {k: np.asarray(v) for k, v in results.items()}


def test_job_ran_on_two_processes_and_four_devices(job):
    assert int(job["processes"]) == worker.PROCESSES
    assert int(job["devices"]) == worker.PROCESSES * worker.LOCAL_DEVICES


@pytest.mark.parametrize("name", ["bits", "next_state", "gather", "scatter"])
def test_forward_results_bit_identical_to_one_process(job, one_process, name):
    assert job[name].dtype == one_process[name].dtype
    np.testing.assert_array_equal(job[name], one_process[name])


def test_forward_results_match_numpy(job):
    a = worker.inputs()
    np.testing.assert_array_equal(job["gather"], np.take(a["x"], a["take"] % a["x"].shape[2], axis=2))
    want = a["x"].copy()
    np.put_along_axis(want, a["perm"], a["updates"], axis=2)
    np.testing.assert_array_equal(job["scatter"], want)


@pytest.mark.parametrize("name", ["table", "w", "loss"])
def test_training_step_matches_one_process_up_to_cross_shard_sums(job, one_process, name):
    np.testing.assert_allclose(job[name], one_process[name], rtol=1e-5, atol=1e-6)
    assert not np.array_equal(job[name], worker.inputs().get(name, np.nan))  # the step changed the params
