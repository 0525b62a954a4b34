"""The main job (``python -m dmljax``): checks pass, options work, a failing check fails the run."""

import json
import subprocess
import sys

import pytest

from dmljax.bench import _checks, _cli


def test_checks_only_run_passes(capsys):
    assert _cli.main(["--no-bench"]) == 0
    out = capsys.readouterr().out
    assert "checks passed, 0 failed" in out and "[FAIL]" not in out


def test_a_failing_check_makes_the_exit_status_non_zero(monkeypatch, capsys):
    def broken() -> str:
        raise AssertionError("deliberately wrong")

    monkeypatch.setattr(_checks, "CHECKS", [*_checks.CHECKS, ("broken", broken)])
    assert _cli.main(["--no-bench"]) == 1
    assert "[FAIL] broken" in capsys.readouterr().out


def test_quick_benchmark_writes_json(tmp_path):
    path = tmp_path / "results.json"
    args = ["--sizes", "4K", "--rounds", "1", "--only", "read_tensor", "--json", str(path)]
    assert _cli.main(args) == 0
    results = json.loads(path.read_text())["results"]
    assert results and all(r["group"] == "read_tensor" and r["median_s"]["dmljax"] > 0 for r in results)


def test_python_m_dmljax_runs_as_a_program():
    done = subprocess.run([sys.executable, "-m", "dmljax", "--no-bench"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "checks passed, 0 failed" in done.stdout


def test_bad_size_is_a_clear_error():
    with pytest.raises(SystemExit):
        _cli.main(["--sizes", "12Q"])


def test_plot_writes_a_png(tmp_path):
    pytest.importorskip("matplotlib")
    path = tmp_path / "throughput.png"
    assert _cli.main(["--sizes", "4K,64K", "--rounds", "1", "--only", "slice1", "--plot", str(path)]) == 0
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_series_labels_drop_sizes_but_keep_direction():
    from dmljax.bench._harness import Case

    label = _cli._series_label(Case("gather", "gather axis=1 (64, 1024) bwd", 1, {"a": None}, "a"))
    assert label == "gather: gather axis=1 bwd"
    assert _cli._series_label(Case("random", "bits n=1024 (2^10)", 1, {"a": None}, "a")) == "random: bits"
