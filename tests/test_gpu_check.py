"""scripts/gpu_check.sh in its CPU dry run: every part runs and the summary JSON is written."""

import json
import os
import subprocess
import sys

import pytest

from tests.multidevice import ROOT


@pytest.mark.system
@pytest.mark.slow
def test_gpu_check_dry_run(tmp_path):
    env = dict(os.environ, OUT=str(tmp_path), PYTHONPATH=str(ROOT), PYTHON=sys.executable)
    done = subprocess.run(
        [str(ROOT / "scripts" / "gpu_check.sh"), "--dry-run"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads((tmp_path / "gpu_check.json").read_text())
    assert summary["dry_run"] is True
    parts = {"environment", "tests", "bench_4K", "ops_default", "ops_deterministic", "segments", "gather_grad"}
    parts |= {"deterministic_default", "deterministic_xla_flag", "groups"}
    assert set(summary["parts"]) == parts
    assert summary["ok"], summary["parts"]
    ops = summary["figures"]["ops_deterministic"]
    assert ops["xla_flags"] == "--xla_gpu_deterministic_ops=true" and ops["random equal"] and ops["hot equal"]
    assert all(v for k, v in ops.items() if k.endswith("dmljax equals np.add.at") or "dmljax lax form equals" in k)
    assert ops["random dmljax rounds equals np.add.at"] and ops["hot dmljax equals np.add.at"]
    segments = summary["figures"]["segment_gpu"]
    assert all(v["equal_loop"] and v["run_to_run"] for k, v in segments.items() if "sorted=" in k), segments
    gathers = summary["figures"]["gather_grad"]
    assert all(gathers[case]["dmljax"]["equal_np_add_at"] == [True] for case in ("rows", "rows hot")), gathers
    for run in ("default", "xla_flag"):
        steps = summary["figures"][f"deterministic_{run}"]
        for program in ("message passing, 10 SGD steps", "embedding gradient"):
            assert steps[program]["deterministic"]["distinct_in_runs"] == 1, steps
            assert steps[program]["deterministic"]["equals_host_cpu"], steps  # the dry run is on the CPU
    groups = {r["group"] for r in summary["figures"]["groups_4K"]["results"]}
    assert groups == {"deterministic", "segment", "cumulative", "selection"}, groups
    assert (tmp_path / "gpu_check.log").stat().st_size > 0


@pytest.mark.system
def test_gpu_check_writes_its_json_when_a_part_fails(tmp_path):
    """A broken interpreter: every part fails, the summary still says so."""
    env = dict(os.environ, OUT=str(tmp_path), PYTHON="false")
    subprocess.run([str(ROOT / "scripts" / "gpu_check.sh"), "--dry-run"], cwd=ROOT, env=env, capture_output=True)
    summary = json.loads((tmp_path / "gpu_check.json").read_text())
    assert summary == {"summary": "failed"}


@pytest.mark.system
def test_gpu_check_runs_only_the_parts_named(tmp_path):
    """PARTS (name prefixes) splits the check over two commands; the others are recorded as skipped."""
    env = dict(os.environ, OUT=str(tmp_path), PYTHONPATH=str(ROOT), PYTHON=sys.executable, PARTS="environment")
    done = subprocess.run(
        [str(ROOT / "scripts" / "gpu_check.sh"), "--dry-run"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-2000:]
    parts = json.loads((tmp_path / "gpu_check.json").read_text())["parts"]
    assert parts.pop("environment")["exit"] == "0"
    assert parts and {p["exit"] for p in parts.values()} == {"skipped"}, parts
