"""``python -m dmljax``: checks pass, options work and are refused when wrong, output fits 100 columns.

Also the torch contenders (equal to dmljax where they compute the same thing; absent
without torch) and the ``--plot`` figure's structure (one log-scaled panel per group).
"""

import dataclasses
import importlib
import importlib.util
import json
import math
import re
import subprocess
import sys
import types
import warnings

import jax
import numpy as np
import pytest

import dmljax
from dmljax.bench import _checks, _cli, _plot, _torch
from dmljax.bench._harness import Case, Result, block


@pytest.mark.slow
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


@pytest.mark.parametrize(
    ("only", "why"), [("foo", "unknown: foo"), ("gather,foo,bar", "unknown: foo, bar"), (",", "no group")]
)
def test_unknown_only_group_is_refused_with_the_valid_ones(only, why, capsys):
    with pytest.raises(SystemExit) as exit_info:
        _cli.main(["--only", only])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert f"got --only={only!r} ({why})." in err and "read_tensor, write_tensor, gather_elements" in err


def test_help_lists_the_groups_and_the_malloc_flag(capsys):
    with pytest.raises(SystemExit) as exit_info:
        _cli.main(["--help"])
    assert exit_info.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    assert all(group in out for group in _cli.GROUPS)
    assert "--default-malloc" in out and "MALLOC_MMAP_MAX_=0" in out


def test_every_group_is_built_by_its_module_and_no_module_builds_an_unlisted_one():
    built: dict[str, set[str]] = {}
    for module_name in set(_cli.GROUPS.values()):
        built[module_name] = {case.group for case in importlib.import_module(module_name).cases([4096])}
    listed = {module: {g for g, m in _cli.GROUPS.items() if m == module} for module in built}
    if importlib.util.find_spec("jax2onnx") is None:  # without the onnx extra, no export to time
        listed["dmljax.bench.onnx_export"] = set()
    assert built == listed


def test_without_the_onnx_extra_the_export_group_is_empty_and_the_rest_runs(monkeypatch, capsys):
    """README quick start command 1 installs no jax2onnx: ``python -m dmljax`` must not fail on it."""
    from dmljax.bench import onnx_export

    timed = []

    def fake_run_case(case, **_):
        timed.append(case.group)
        return Result(case, {name: [1e-3] for name in case.contenders}, {name: 1e-3 for name in case.contenders})

    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "jax2onnx" else real_find_spec(name, *a)
    )
    monkeypatch.setattr(_cli, "run_case", fake_run_case)
    assert onnx_export.cases([4096]) == []
    _cli._bench(_cli._parse_args(["--sizes", "4K", "--rounds", "1", "--only", "onnx_export,slice1"]))
    assert "onnx_export" not in timed and "slice1" in timed
    out = capsys.readouterr().out
    # Said once, with the reason, and not announced among the groups that run.
    assert out.count("onnx_export") == 1 and "Skipping onnx_export: needs the onnx extra" in out
    assert "Timing slice1 at tensor sizes 4 KiB" in out
    # Nothing left to time: the reason, and no announcement.
    assert _cli._bench(_cli._parse_args(["--sizes", "4K", "--rounds", "1", "--only", "onnx_export"])) == []
    out = capsys.readouterr().out
    assert "Skipping onnx_export" in out and "Timing" not in out


def test_size_free_groups_are_timed_once_whatever_the_sizes(monkeypatch, capsys):
    """``--sizes 4K,8K``: onnx_export (a fresh-process export, size-free) runs once, slice1 once per size."""
    pytest.importorskip("jax2onnx")  # without the onnx extra the group has no case (next test)
    timed = []

    def fake_run_case(case, **_):
        timed.append(case.group)
        return Result(case, {name: [1e-3] for name in case.contenders}, {name: 1e-3 for name in case.contenders})

    monkeypatch.setattr(_cli, "run_case", fake_run_case)
    args = _cli._parse_args(["--sizes", "4K,8K", "--rounds", "1", "--only", "onnx_export,slice1"])
    _cli._bench(args)
    assert timed.count("onnx_export") == 1 and timed.count("slice1") == 2 * len(
        [c for c in importlib.import_module("dmljax.bench.ops").cases([4096]) if c.group == "slice1"]
    ), timed
    assert len(importlib.import_module("dmljax.bench.onnx_export").cases([4096, 8192, 16384])) == 1


@pytest.mark.slow
def test_json_has_schema_version_sizes_and_spread(tmp_path, capsys):
    path = tmp_path / "results.json"
    args = ["--sizes", "4K,8K", "--rounds", "3", "--only", "read_tensor,gather", "--json", str(path)]
    assert _cli.main(args) == 0
    record = json.loads(path.read_text())
    assert record["schema_version"] == 2 and record["info"]["malloc"] == "glibc default"
    results = record["results"]
    assert {r["group"] for r in results} == {"read_tensor", "gather"}
    assert {r["tensor_bytes"] for r in results} == {4096, 8192}
    for r in results:
        assert r["rounds"] == 3 and r["bytes_moved"] >= r["tensor_bytes"] // 2 and r["baseline"] in r["contenders"]
        for stats in r["contenders"].values():
            assert 0 < stats["min_s"] <= stats["median_s"] <= stats["max_s"] < stats["first_call_s"] + 1
        assert r["contenders"][r["baseline"]]["ratio"] == 1.0
    out = capsys.readouterr().out
    assert "malloc   glibc defaults" in out and "tensor 4 KiB, bytes moved" in out


@pytest.mark.system
def test_python_m_dmljax_discloses_the_malloc_rerun_and_fits_100_columns(tmp_path):
    path = tmp_path / "results.json"
    args = ["--sizes", "4K", "--rounds", "1", "--only", "slice1,random,compile_operator", "--json", str(path)]
    cmd = [sys.executable, "-m", "dmljax", *args]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert max(len(line) for line in lines) <= 100, max(lines, key=len)
    assert "checks passed, 0 failed" in done.stdout and "Summary: " in done.stdout
    assert "malloc   steady-state: this process re-ran itself with" in done.stdout
    assert json.loads(path.read_text())["info"]["malloc_env"]["MALLOC_MMAP_MAX_"] == "0"


def test_table_rows_fit_100_columns_at_the_largest_sizes_and_labels_wrap_whole(capsys):
    from dmljax.bench._report import SizedResult, print_table

    name = "gather_elements axis=0 (262144, 1024) bwd with a name longer than any case has today, wrapped to fit"
    long_label = "jax.random.uniform philox4x32 (bits from a partitionable key, 512-bit vectors)"
    contenders = {"dmljax random_generator": [1e-6, 9e3], long_label: [3e-3], "jnp": [1e-7]}
    case = Case("gather_elements", name, 3 * 2**30, dict.fromkeys(contenders), "jnp")
    print_table([SizedResult(2**30, Result(case, contenders, {k: 120.0 for k in contenders}))], rounds=9)
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 100, max(lines, key=len)
    assert "tensor 1 GiB, bytes moved 3 GiB" in " ".join(out.split())
    # Every word of the case's name and of the long label is printed whole, in order.
    assert f"{name} |" in " ".join(out.split()) and long_label in " ".join(out.split())
    # The label's first words on a line of their own, the numbers after its last words.
    assert "  jax.random.uniform philox4x32" in lines
    assert any(line.startswith("  512-bit vectors)") and line.rstrip().endswith("120000") for line in lines)


def _fake_run(spreads: dict[str, float]):
    """A `run_case` that times nothing: the first contender's rounds spread by ``spreads[case.name]`` (max/min)."""

    def fake_run_case(case, rounds=3, **_):
        first = next(iter(case.contenders))
        wide = spreads.get(case.name, 1.0)
        samples = {name: [1e-3] * rounds for name in case.contenders}
        samples[first] = [0.5e-3, 0.5e-3 * wide, 0.5e-3][:rounds]
        return Result(case, samples, dict.fromkeys(case.contenders, 1e-2))

    return fake_run_case


@pytest.mark.parametrize("noisy", [False, True])
def test_the_report_fits_100_columns_ends_with_a_summary_and_warns_of_wide_spreads(noisy, monkeypatch, capsys):
    """A small run (slice1's cases at 4 KiB, timings faked): the summary counts them; a spread over 2x warns."""
    monkeypatch.setattr(_checks, "CHECKS", [("fake", lambda: "passes")])
    names = [c.name for c in importlib.import_module("dmljax.bench.ops").cases([4096]) if c.group == "slice1"]
    monkeypatch.setattr(_cli, "run_case", _fake_run({names[0]: 2.5} if noisy else {names[0]: 1.9}))
    assert _cli.main(["--sizes", "4K", "--rounds", "3", "--only", "slice1"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 100, max(lines, key=len)
    summary = " ".join(out[out.index("Summary: ") :].split())
    # The first contender's median is 0.5 ms against the baseline's 1 ms: ahead in every case.
    assert f"Summary: {len(names)} cases timed in " in summary
    assert f"ahead of its baseline in {len(names)}, within 10% of it in 0 and behind it in 0" in summary
    assert "Load average (1/5/15 min) at the end: " in summary
    assert ("WARNING: noisy timings: in 1 of" in summary) == noisy
    if noisy:
        assert "(max/min > 2)" in summary and f"slice1: {names[0]}" in summary


def test_a_case_behind_points_to_the_page_that_says_why(monkeypatch, capsys):
    """The first contender twice the baseline's time: behind, and the summary names the section
    of docs/performance.md that gives each such case's reason (a run with none behind does not;
    tests/test_docs.py checks that the section exists)."""

    def slow_run_case(case, rounds=3, **_):
        samples = {name: [1e-3] * rounds for name in case.contenders}
        samples[next(iter(case.contenders))] = [2e-3] * rounds
        return Result(case, samples, dict.fromkeys(case.contenders, 1e-2))

    monkeypatch.setattr(_checks, "CHECKS", [("fake", lambda: "passes")])
    monkeypatch.setattr(_cli, "run_case", slow_run_case)
    assert _cli.main(["--sizes", "4K", "--rounds", "3", "--only", "slice1"]) == 0
    summary = " ".join(capsys.readouterr().out.split("Summary: ")[1].split())
    assert "within 10% of it in 0 and behind it in " in summary and "behind it in 0 " not in summary
    assert "Why a case is behind its baseline: docs/performance.md, section 'Cases behind their baseline'." in summary
    monkeypatch.setattr(_cli, "run_case", _fake_run({}))
    assert _cli.main(["--sizes", "4K", "--rounds", "3", "--only", "slice1"]) == 0
    assert "Why a case is behind" not in capsys.readouterr().out


def test_the_json_record_holds_the_summary(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(_checks, "CHECKS", [("fake", lambda: "passes")])
    monkeypatch.setattr(_cli, "run_case", _fake_run({}))
    path = tmp_path / "results.json"
    assert _cli.main(["--sizes", "4K", "--rounds", "3", "--only", "slice1", "--json", str(path)]) == 0
    record = json.loads(path.read_text())
    summary = record["summary"]
    assert summary["cases"] == len(record["results"]) == summary["ahead"] and summary["noisy"] == []
    assert summary["noise_spread"] == 2.0 and summary["wall_s"] > 0 and len(summary["load_average"]) == 3


@pytest.mark.system
def test_default_malloc_flag_keeps_the_process():
    cmd = [sys.executable, "-m", "dmljax", "--default-malloc", "--sizes", "4K", "--rounds", "1", "--only", "slice1"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "malloc   glibc defaults (--default-malloc" in done.stdout


def test_bad_size_is_a_clear_error(capsys):
    with pytest.raises(SystemExit):
        _cli.main(["--sizes", "12Q"])
    assert "cannot read size '12Q'" in capsys.readouterr().err


def _result(group: str, name: str, ratio: float) -> Result:
    case = Case(group, name, 4096, {"dmljax": None, "jnp": None}, "jnp")
    return Result(case, {"dmljax": [ratio * 1e-3], "jnp": [1e-3]}, {"dmljax": 0.1, "jnp": 0.1})


def test_plot_is_one_log_scaled_ratio_panel_per_group(tmp_path):
    pytest.importorskip("matplotlib")
    from dmljax.bench._report import SizedResult

    results = [
        SizedResult(size, _result(group, f"{op} (4, 1024) {direction}", ratio))
        for size, ratio in ((4096, 0.5), (2**20, 1.5))
        for group, op in (("gather", "gather axis=0"), ("scatter", "scatter axis=1"), ("random", "bits n=1024"))
        for direction in ("fwd", "bwd")
    ]
    path = tmp_path / "ratios.png"
    fig = _plot.plot_ratios(results, str(path))
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert sorted(ax.get_title() for ax in panels) == ["gather", "random", "scatter"]
    for ax in panels:
        assert ax.get_yscale() == "log" and ax.get_xscale() == "log"
        assert any(list(line.get_ydata()) == [1.0, 1.0] for line in ax.get_lines())  # the baseline
        series = [line for line in ax.get_lines() if list(line.get_ydata()) != [1.0, 1.0]]
        assert sorted(line.get_linestyle() for line in series) == ["-", "--"]  # fwd solid, bwd dashed
        assert all(list(line.get_ydata()) == [0.5, 1.5] for line in series)
    assert panels[0].get_ylabel() == "dmljax time / baseline time"


def test_series_labels_drop_sizes_but_keep_direction():
    assert _plot.series_label("gather axis=1 (64, 1024) bwd") == "gather axis=1 bwd"
    assert _plot.series_label("bits n=1024 (2^10)") == "bits"


def test_without_torch_the_cases_have_no_torch_contender(monkeypatch):
    monkeypatch.setattr(_torch, "_torch", lambda: None)
    for module_name in set(_cli.GROUPS.values()):
        for case in importlib.import_module(module_name).cases([4096]):
            assert not any(name.startswith("torch") for name in case.contenders), case.name


def _host(value) -> list[np.ndarray]:
    leaves = value if isinstance(value, tuple | list) else [value]
    return [np.asarray(leaf.detach() if hasattr(leaf, "detach") else leaf) for leaf in leaves]


def _assert_computes_what_dmljax_computes(case: Case, name: str) -> None:
    """Contender ``name`` of ``case`` returns dmljax's values, leaf by leaf (torch and NumPy on the host)."""
    ours, theirs = _host(block(case.contenders["dmljax"]())), _host(block(case.contenders[name]()))
    assert len(ours) == len(theirs), (case.name, name)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(a, b, err_msg=f"{case.name}: {name}")


def test_torch_contenders_compute_what_dmljax_computes():
    pytest.importorskip("torch")
    checked, want = [], []
    for module_name in ("dmljax.bench.ops", "dmljax.bench.strided", "dmljax.bench.nd"):
        for case in importlib.import_module(module_name).cases([8192]):
            if _torch.NAME in case.contenders:
                _assert_computes_what_dmljax_computes(case, _torch.NAME)
                checked.append(case.name)
            # torch contends in every array operation, forward and backward, and every layout's forward read or write
            if module_name != "dmljax.bench.strided" or not case.name.endswith(" bwd"):
                want.append(case.name)
    assert checked == want


@pytest.mark.slow
def test_every_nd_contender_computes_what_dmljax_computes():
    """jnp, NumPy (forward) for GatherND, ScatterND and the add reductions, with few and many duplicates."""
    from dmljax.bench import nd

    names = []
    for case in nd.cases([8192]):
        for name in case.contenders:
            _assert_computes_what_dmljax_computes(case, name)
        names.append(case.name)
    assert sum("many duplicates" in name for name in names) == 4  # ScatterND and scatter, fwd and bwd
    assert {case.group for case in nd.cases([4096])} == {"gather_nd", "scatter_nd", "scatter_reduction"}


@pytest.mark.slow
@pytest.mark.parametrize("module_name", ["movement", "selection", "segment"])
def test_every_movement_selection_and_segment_contender_computes_what_dmljax_computes(module_name, monkeypatch):
    """Bit for bit, but contenders named "(other bits)" (close) or "(any order)" (float sums in another order).

    Each case's dmljax contender calls the public operator its name starts with.
    """
    called: list[str] = []
    for module, name in PUBLIC_NAMES:
        original = getattr(module, name)
        if name[0].islower() and callable(original):
            monkeypatch.setattr(module, name, lambda *a, _f=original, _n=name, **k: called.append(_n) or _f(*a, **k))
    module = importlib.import_module(f"dmljax.bench.{module_name}")
    for case in module.cases([8192]):
        called.clear()
        ours = _host(block(case.contenders["dmljax"]()))
        assert case.name.split()[0] in called, (case.name, called)
        for name, fn in case.contenders.items():
            theirs = _host(block(fn()))
            assert len(ours) == len(theirs), (case.name, name)
            for a, b in zip(ours, theirs, strict=True):
                if "(other bits)" in name:
                    assert not np.array_equal(a, b) and np.allclose(a, b, rtol=1e-3), f"{case.name}: {name}"
                elif "(any order)" in name:
                    np.testing.assert_allclose(a, b, rtol=1e-5, err_msg=f"{case.name}: {name}")
                else:
                    np.testing.assert_array_equal(a, b, err_msg=f"{case.name}: {name}")
    assert {case.group for case in module.cases([4096])} == {module_name}


def test_the_float_fill_case_is_timed_at_the_requested_size():
    """fill_value_sequence's float bits are computed in parallel now (runs per binade): no cap off the CPU."""
    from dmljax.bench import movement

    built = {case.name: case.tensor_bytes for case in movement.cases([1 << 20])}
    assert built["fill_value_sequence float32 (256, 1024) fwd"] == built["fill_value_sequence int32 (256, 1024) fwd"]
    assert built["fill_value_sequence float32 (256, 1024) fwd"] == 1 << 20


@pytest.mark.slow
def test_every_layout_contender_computes_what_dmljax_computes():
    """The baselines (hand-written ``jnp``, the fastest formulations, NumPy) of each read/write case."""
    from dmljax.bench import strided

    names = []
    for case in strided.cases([8192]):
        for name in case.contenders:
            _assert_computes_what_dmljax_computes(case, name)
        names.append(case.name)
    assert sum(name.startswith("padded rows +8") for name in names) == 4  # read, write on two buffers, write bwd


def test_torch_random_contender_gives_32_bits():
    pytest.importorskip("torch")
    from dmljax.bench import random

    name = "torch randint int32 (mt19937)"
    (case,) = [case for case in random.cases([4 * 4096]) if name in case.contenders]
    bits = case.contenders[name]().numpy().view(np.uint32)
    assert bits.shape == (4096,) and bits.min() < 2**28 and bits.max() > 2**32 - 2**28


@pytest.mark.parametrize("pipelined", [False, True])
def test_pipelined_rounds_wait_once_a_round_and_per_call_rounds_each_call(pipelined, monkeypatch):
    from dmljax.bench import _harness

    calls, waits, clock = [], [], [0.0]
    monkeypatch.setattr(_harness, "block", lambda value: waits.append(value) or value)
    # A virtual clock each call advances by 1 ms: the calibration sees 1 ms whatever the load.
    monkeypatch.setattr(_harness, "time", types.SimpleNamespace(perf_counter=lambda: clock[0]))

    def contender():
        clock[0] += 0.001
        calls.append(None)
        return len(calls)

    rounds = 3
    result = _harness.run_case(
        Case("g", "op", 8, {"a": contender}, "a"), rounds=rounds, min_round_s=0.01, pipelined=pipelined
    )
    assert result.samples_s["a"] == pytest.approx([0.001] * rounds)
    timed_calls, timed_waits = len(calls) - 2, len(waits) - 2  # after the compile and calibration calls
    assert timed_calls == rounds * 10  # 10 calls of 1 ms fill a round of 10 ms
    assert timed_waits == (rounds if pipelined else timed_calls)
    assert _harness.pipelined_default() == (jax.default_backend() != "cpu")


def test_pipelined_rounds_time_device_contenders_before_host_ones(monkeypatch):
    from dmljax.bench import _harness

    log = []
    device = jax.numpy.zeros(2)
    contenders = {"dev": lambda: log.append("dev") or device, "host": lambda: log.append("host") or np.zeros(2)}
    _harness.run_case(Case("g", "op", 8, contenders, "dev"), rounds=3, min_round_s=0.0, pipelined=True)
    timed = log[4:]  # after the compile and calibration calls
    assert timed == ["dev"] * 3 + ["host"] * 3
    log.clear()
    _harness.run_case(Case("g", "op", 8, contenders, "dev"), rounds=3, min_round_s=0.0, pipelined=False)
    assert sorted(log[4:]) == ["dev"] * 3 + ["host"] * 3 and log[4:] != ["dev"] * 3 + ["host"] * 3


@pytest.mark.slow
def test_no_peers_times_only_dmljax_and_the_jax_baselines(tmp_path, capsys):
    path = tmp_path / "r.json"
    assert _cli.main(["--quick", "--no-peers", "--only", "gather,random", "--rounds", "1", "--json", str(path)]) == 0
    results = json.loads(path.read_text())["results"]
    names = {name for r in results for name in r["contenders"]}
    assert "dmljax" in names and "jnp" in names and "jax philox4x32 bits" in names
    assert not any(name.startswith(_cli.PEERS) for name in names)


@pytest.mark.parametrize("rounds", ["0", "-1", "two"])
def test_rounds_below_one_are_refused(rounds, capsys):
    with pytest.raises(SystemExit) as exit_info:
        _cli.main(["--rounds", rounds])
    assert exit_info.value.code == 2
    assert f"argument --rounds: --rounds must be an integer >= 1; got --rounds={rounds!r}." in capsys.readouterr().err


def test_zero_size_is_refused(capsys):
    with pytest.raises(SystemExit):
        _cli.main(["--sizes", "4K,0"])
    assert "a size must be at least 1 byte; got '0'" in capsys.readouterr().err


def _no_work(monkeypatch):
    """Make any work (the header, the checks) fail the test: options must be refused before it."""

    def work(*args):
        raise AssertionError("work started before the options were checked")

    monkeypatch.setattr(_cli, "_header", work)
    monkeypatch.setattr(_cli, "_run_checks", work)


@pytest.mark.parametrize("option", ["--json", "--plot"])
def test_unwritable_output_path_is_refused_before_any_work(option, tmp_path, monkeypatch, capsys):
    _no_work(monkeypatch)
    missing = tmp_path / "no such folder" / "out"
    with pytest.raises(SystemExit) as exit_info:
        _cli.main([option, str(missing)])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert f"{option} must name a writable file; got {option}={str(missing)!r} (No such file or directory)." in err
    with pytest.raises(SystemExit):
        _cli.main([option, str(tmp_path)])
    assert f"{option} must name a file; got {option}={str(tmp_path)!r} (a directory)." in capsys.readouterr().err


def test_writable_output_paths_are_left_as_found(tmp_path):
    args = _cli._parse_args(["--json", str(tmp_path / "new.json"), "--plot", str(tmp_path / "new.png")])
    assert args.json.endswith("new.json") and list(tmp_path.iterdir()) == []


def _fake_run_case(case, rounds, min_round_s):
    names = dict.fromkeys(case.contenders)
    return Result(
        dataclasses.replace(case, contenders=names), {k: [1e-3] * rounds for k in names}, dict.fromkeys(names, 1e-2)
    )


def test_size_labels_are_the_tensor_each_case_timed(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(_cli, "run_case", _fake_run_case)
    monkeypatch.setattr(_cli, "_run_checks", lambda: [])
    path = tmp_path / "r.json"
    args = ["--sizes", "100,6K", "--rounds", "1", "--only", "gather,compile_operator", "--json", str(path)]
    assert _cli.main(args) == 0
    results = json.loads(path.read_text())["results"]
    got = {(r["group"], r["asked_bytes"], r["tensor_bytes"]) for r in results}
    # whole rows of 1024 float32 (4 KiB), whole (1, 8, h, 64) NHWC blocks (2 KiB): not the sizes asked for
    assert got == {("gather", 100, 4096), ("gather", 6144, 4096)} | {
        ("compile_operator", 100, 2048),
        ("compile_operator", 6144, 6144),
    }
    out = capsys.readouterr().out
    assert "gather: gather axis=0 (1, 1024) fwd" in out and "| tensor 4 KiB," in out and "| tensor 100 B," not in out


@pytest.mark.parametrize("module_name", sorted(set(_cli.GROUPS.values())))
def test_every_case_is_labelled_with_the_shape_it_builds(module_name):
    for case in importlib.import_module(module_name).cases([100, 5000]):
        shape = re.findall(r"\(([\d, ]+)\)", case.name) or re.findall(r"n=(\d+)", case.name)
        assert case.tensor_bytes == 4 * math.prod(int(d) for d in shape[-1].split(",")), case.name


def test_ctrl_c_exits_130_with_one_line(monkeypatch, capsys):
    def interrupted():
        raise KeyboardInterrupt

    monkeypatch.setattr(_cli, "_run_checks", interrupted)
    assert _cli.main(["--no-bench"]) == _cli.INTERRUPTED == 130
    assert capsys.readouterr().err == "python -m dmljax: interrupted (Ctrl-C); the run stopped before its end.\n"


@pytest.mark.system
def test_sigint_stops_the_process_with_status_130_and_no_traceback():
    code = (
        "import os, signal, sys, time\n"
        # Python's own Ctrl-C handler, as in a terminal: a shell's background job inherits SIGINT ignored
        "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "from dmljax.bench import _checks, _cli\n"
        "_checks.CHECKS = [('sigint', lambda: os.kill(os.getpid(), signal.SIGINT) or time.sleep(5))]\n"
        "sys.exit(_cli.main(['--no-bench']))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert done.returncode == 130, done.stderr
    assert done.stderr == "python -m dmljax: interrupted (Ctrl-C); the run stopped before its end.\n"


def test_unknown_index_dtype_is_refused_with_the_valid_ones(capsys):
    with pytest.raises(SystemExit) as exit_info:
        _cli.main(["--index-dtypes", "int32,int16"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "among int32, int64, uint32, uint64; got --index-dtypes='int32,int16'." in err


@pytest.mark.slow
def test_index_dtypes_are_a_dimension_of_the_array_cases_and_each_computes_the_same(monkeypatch):
    """Each index type's gather, gather_elements and scatter cases: named by type, run with that type.

    Every JAX contender returns what the int32 case's dmljax returns (the same positions in every type).
    """
    import dmljax
    from dmljax.bench import ops

    seen = []
    for op in ("gather", "gather_elements", "scatter"):
        original = getattr(dmljax, op)
        monkeypatch.setattr(dmljax, op, lambda *a, _f=original, **k: seen.append(str(a[1].dtype)) or _f(*a, **k))
    built = ops.cases([8192], index_dtypes=("int32", "int64", "uint32", "uint64"))
    assert set(seen) == {"int32", "int64", "uint32", "uint64"}  # traced while the cases are built
    by_name = {c.name: c for c in built}
    untyped = [c for c in built if c.group != "slice1" and "indices" not in c.name]
    # the rows-of-16 gather-gradient case (issue 38's cost figure) is timed in int32 only
    int32 = [c for c in untyped if f"{c.name} int64 indices" in by_name]
    assert len(int32) == 10 and len(untyped) == 12 and len(built) == 4 * 10 + 2 + 2
    for case in int32:
        want = _host(block(case.contenders["dmljax"]()))
        for dtype in ("int64", "uint32", "uint64"):
            typed = by_name[f"{case.name} {dtype} indices"]
            assert _torch.NAME not in typed.contenders
            seen.clear()
            for name, fn in typed.contenders.items():
                if name == "numpy":
                    continue
                with warnings.catch_warnings():  # a 64-bit call outside jax_enable_x64 retraces, narrowed
                    warnings.simplefilter("error")
                    got = _host(block(fn()))
                for a, b in zip(want, got, strict=True):
                    np.testing.assert_array_equal(a, b, err_msg=f"{typed.name}: {name}")
            assert set(seen) <= {dtype}, typed.name


def test_every_array_and_layout_case_quotes_its_ratio_against_the_hand_written_jnp():
    # A faster formulation as the baseline hid a loss against jnp: it contends instead.
    # Small arrays, with the size thresholds the cases once switched their baselines on at 0.
    contenders = set()
    with dmljax.config.override(blocked_gather_elements_min_bytes=0, tiled_transpose_two_pass_min_bytes=0):
        for module_name in ("dmljax.bench.ops", "dmljax.bench.strided", "dmljax.bench.nd"):
            for case in importlib.import_module(module_name).cases([8192]):
                assert case.reference == "jnp" and "jnp" in case.contenders, case.name
                contenders |= set(case.contenders)
    assert {"blocked", "flat", "tiles16", "two_pass", "concat"} <= contenders  # still timed beside it


def test_a_size_beyond_the_memory_left_is_refused_first_with_one_line(monkeypatch, capsys):
    from dmljax.bench import _memory

    monkeypatch.setattr(_memory, "available_bytes", lambda: (2**30, "cgroup limit"))
    monkeypatch.setattr(_cli, "_run_checks", lambda: pytest.fail("a case ran"))
    with pytest.raises(SystemExit) as exit_info:
        _cli.main(["--sizes", "4K,64G", "--only", "slice1"])
    assert exit_info.value.code == _cli.OUT_OF_MEMORY == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        "python -m dmljax: --sizes 64 GiB needs at least 192 GiB (3 tensors of that size), "
        "but 1 GiB is left (cgroup limit); choose smaller --sizes.\n"
    )
    _cli._parse_args(["--sizes", "64G", "--no-bench"])  # no benchmark: no check


def test_a_memory_error_during_the_run_ends_it_with_one_line(monkeypatch, capsys):
    def exhausted():
        raise MemoryError("Unable to allocate 64.0 GiB for an array with shape (17179869184,) and data type float32")

    monkeypatch.setattr(_cli, "_run_checks", exhausted)
    assert _cli.main(["--no-bench"]) == _cli.OUT_OF_MEMORY
    err = capsys.readouterr().err
    assert err == (
        "python -m dmljax: out of memory (Unable to allocate 64.0 GiB for an array with shape (17179869184,) "
        "and data type float32); choose smaller --sizes.\n"
    )


@pytest.mark.system
def test_python_m_dmljax_under_a_memory_limit_refuses_a_size_that_does_not_fit():
    code = (  # ulimit -v 24 GiB: enough to import jax, not for 3 tensors of 64 GiB
        "import resource, runpy, sys\n"
        "resource.setrlimit(resource.RLIMIT_AS, (24 * 2**30, 24 * 2**30))\n"
        "sys.argv = ['python -m dmljax', '--sizes', '64G', '--only', 'slice1']\n"
        "runpy.run_module('dmljax', run_name='__main__')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert done.returncode == 2, done.stderr[-3000:]
    assert done.stdout == "" and done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith("python -m dmljax: --sizes 64 GiB needs at least 192 GiB")


# (module, name) for each public name: the top level, dmljax.random and dmljax.descriptors.
PUBLIC_NAMES = [(m, name) for m in (dmljax, dmljax.random, dmljax.descriptors) for name in m.__all__]
# Public callables that are no operator: neither timed nor checked as one, with the reason.
NOT_OPERATORS = {
    "advance": "moves a Philox state's counter: a state helper",
    "calc_buffer_tensor_size": "descriptor arithmetic (DMLCalcBufferTensorSize)",
    "config": "the settings object",
    "fold_in": "derives a Philox state from data: a key helper",
    "make_state": "builds a Philox state",
    "packed_strides": "descriptor arithmetic (a layout's strides)",
    "prng_impl": "jax.random's implementation spec for dmljax keys (the prng and keys groups time it)",
    "split": "derives new Philox states: a key helper",
    "state_from_tf_seed": "converts a TensorFlow seed into a state",
}
# Operators checked but timed only through another one, with the reason.
TIMED_THROUGH = {
    "philox4x32_10": "the Random123 block function random_generator runs (random group)",
    "bernoulli": "uniform(...) < p: the random group's uniform and one comparison",
    "randint": "the random group's bits, one modulo and one addition",
    "dropout": "the random group's uniform, one comparison and one select",
}


def _public_operators() -> dict[str, set[str]]:
    """Each public operator's names (``scatter_elements`` is ``scatter``): the lower-case public names."""
    names: dict[int, set[str]] = {}
    for module, name in PUBLIC_NAMES:
        if name[0].islower() and name not in NOT_OPERATORS:
            names.setdefault(id(getattr(module, name)), set()).add(name)
    return {min(aliases): aliases for aliases in names.values()}


def test_the_exclusions_name_public_callables_and_no_operator_is_excluded_twice():
    public = {name: module for module, name in PUBLIC_NAMES}
    assert len(public) == len(PUBLIC_NAMES)  # a name means one thing across the three namespaces
    assert set(NOT_OPERATORS) | set(TIMED_THROUGH) <= set(public)
    assert not set(NOT_OPERATORS) & set(TIMED_THROUGH)
    assert all(callable(getattr(public[name], name)) for aliases in _public_operators().values() for name in aliases)


def test_every_public_operator_is_timed_by_a_group():
    """A group named for it, a case whose name starts with its name, or a contender named ``dmljax <name>``.

    The new groups' contender tests also run each case's dmljax contender and see it call the operator named.
    """
    timed = set(_cli.GROUPS)
    for module_name in set(_cli.GROUPS.values()):
        for case in importlib.import_module(module_name).cases([4096]):
            timed.add(case.name.split()[0])
            timed |= {c.split()[1] for c in case.contenders if c.startswith("dmljax ") and len(c.split()) > 1}
    untimed = {op for op, aliases in _public_operators().items() if not aliases & timed} - set(TIMED_THROUGH)
    assert not untimed, f"public operators no benchmark group times: {sorted(untimed)}"


def test_every_public_operator_is_checked(monkeypatch):
    """Each check runs with the public functions wrapped: every operator must be called by one."""
    called: set[str] = set()
    operators = _public_operators()  # before wrapping: aliases are the same function
    modules = {name: module for module, name in PUBLIC_NAMES}
    for aliases in operators.values():
        for name in aliases:
            module, original = modules[name], getattr(modules[name], name)
            monkeypatch.setattr(module, name, lambda *a, _f=original, _n=name, **k: called.add(_n) or _f(*a, **k))
    for _, check in _checks.CHECKS:
        check()
    unchecked = {op for op, aliases in operators.items() if not aliases & called}
    assert not unchecked, f"public operators no check of python -m dmljax calls: {sorted(unchecked)}"
