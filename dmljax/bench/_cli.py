"""The main job: checks every operator on the spot, then prints the benchmark table.

Run as ``python -m dmljax [--quick] [--sizes 4K,1M,16M] [--json PATH] [--plot PATH]``.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import json
import os
import platform
import re
import sys
import time
import traceback

import jax
import numpy as np

import dmljax
from dmljax.bench._harness import Result, run_case

__all__ = ["main", "parse_size"]

# Benchmark modules, each with ``cases(sizes_bytes) -> list[Case]``.
BENCH_MODULES = [
    "dmljax.bench.strided",
    "dmljax.bench.ops",
    "dmljax.bench.random",
    "dmljax.bench.prng",
    "dmljax.bench.descriptors",
]
DEFAULT_SIZES = "4K,1M,16M,256M"
QUICK_SIZES = "4K,256K"
# Steady-state allocator settings for timings (PERF_NOTES: glibc otherwise mmaps and
# page-faults every fresh output over 32 MiB, +90 ms at 256 MiB).
MALLOC_ENV = {
    "MALLOC_ARENA_MAX": "1",
    "MALLOC_MMAP_MAX_": "0",
    "MALLOC_TRIM_THRESHOLD_": "68719476736",
    "MALLOC_TOP_PAD_": "0",
}
_UNITS = {"": 1, "B": 1, "K": 2**10, "KB": 2**10, "KIB": 2**10, "M": 2**20, "MB": 2**20, "MIB": 2**20, "G": 2**30}


def parse_size(text: str) -> int:
    """Parse ``"4K"``, ``"16MiB"``, ``"1048576"`` into bytes.

    Examples:
      >>> parse_size("4K"), parse_size("256MiB"), parse_size("100")
      (4096, 268435456, 100)
    """
    text = text.strip().upper()
    number = text.rstrip("KMGIB")
    unit = text[len(number) :]
    if not number.isdigit() or unit not in _UNITS:
        raise argparse.ArgumentTypeError(f"--sizes: cannot read size {text!r}; use e.g. 4K, 1M, 256M")
    return int(number) * _UNITS[unit]


def _parse_sizes(text: str) -> list[int]:
    return [parse_size(part) for part in text.split(",")]


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m dmljax", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=f"small sizes, few rounds (sizes {QUICK_SIZES})")
    sizes_help = f"comma-separated tensor sizes in bytes (default {DEFAULT_SIZES})"
    parser.add_argument("--sizes", type=_parse_sizes, help=sizes_help)
    parser.add_argument("--only", help="comma-separated operator groups to benchmark (e.g. gather,scatter)")
    parser.add_argument("--json", metavar="PATH", help="write machine-readable results here")
    parser.add_argument("--plot", metavar="PATH", help="write a PNG of throughput against size (needs matplotlib)")
    parser.add_argument("--no-bench", action="store_true", help="run the checks only")
    parser.add_argument("--rounds", type=int, help="timing rounds per case (default 9, quick 3)")
    parser.add_argument("--default-malloc", action="store_true", help="keep glibc's default allocator settings")
    return parser.parse_args(argv)


def _maybe_reexec(args: argparse.Namespace, argv: list[str] | None) -> None:
    """Restart once with steady-state malloc settings (they only act at process start)."""
    if args.default_malloc or args.no_bench or argv is not None or os.environ.get("DMLJAX_MALLOC_SET"):
        return
    if not sys.platform.startswith("linux"):
        return
    env = {**os.environ, **MALLOC_ENV, "DMLJAX_MALLOC_SET": "1"}
    sys.stdout.flush()
    os.execve(sys.executable, [sys.executable, "-m", "dmljax", *sys.argv[1:]], env)


def _header() -> dict:
    device = jax.devices()[0]
    info = {
        "dmljax": dmljax.__version__,
        "jax": jax.__version__,
        "jaxlib": importlib.metadata.version("jaxlib"),
        "numpy": np.__version__,
        "python": platform.python_version(),
        "device": f"{device.platform}: {getattr(device, 'device_kind', device)} x{jax.device_count()}",
        "cpu": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores",
        "malloc": "steady-state (MALLOC_* set)" if os.environ.get("DMLJAX_MALLOC_SET") else "glibc default",
        "date": time.strftime("%Y-%m-%d %H:%M"),
    }
    print("dmljax main job: every operator checked against NumPy, then benchmarked")
    for key, value in info.items():
        print(f"  {key:8s} {value}")
    return info


def _run_checks() -> list[dict]:
    from dmljax.bench._checks import CHECKS

    print("\nChecks (dmljax against NumPy on an embedded workload):")
    results = []
    for name, check in CHECKS:
        try:
            detail, ok = check(), True
        except Exception as exc:  # noqa: BLE001 - a failing check is reported, never hidden
            detail, ok = f"{type(exc).__name__}: {exc}", False
            traceback.print_exc(file=sys.stderr)
        print(f"  [{'ok' if ok else 'FAIL'}] {name:22s} {detail}")
        results.append({"name": name, "ok": ok, "detail": detail})
    return results


def _cases_at(size: int, only: set[str] | None) -> list:
    """Every module's cases at one size (built per size, so big inputs are freed early)."""
    cases = []
    for module_name in BENCH_MODULES:
        module = importlib.import_module(module_name)
        cases += [case for case in module.cases([size]) if only is None or case.group in only]
    return cases


def _progress(label: str) -> None:
    if sys.stderr.isatty():
        sys.stderr.write(f"\r  {label[:76]:76s}")
        sys.stderr.flush()
    else:
        sys.stderr.write(f"  {label}\n")


def _print_table(results: list[Result]) -> None:
    print("\nBenchmarks (median of interleaved rounds; ratio = dmljax time / reference time):")
    head = f"  {'operation':16s} {'case':44s} {'MiB':>8s} {'dmljax ms':>10s} {'reference':>22s} {'ratio':>6s}"
    print(head + f" {'GB/s':>6s} {'compile ms':>10s}  others (ms)")
    for r in results:
        case, first = r.case, next(iter(r.case.contenders))
        ref = f"{case.reference} {r.median_s[case.reference] * 1e3:.3f}"
        others = ", ".join(
            f"{name} {t * 1e3:.3f}" for name, t in r.median_s.items() if name not in (first, case.reference)
        )
        compile_ms = (r.first_call_s[first] - r.median_s[first]) * 1e3
        print(
            f"  {case.group:16s} {case.name[:44]:44s} {case.nbytes / 2**20:8.2f} {r.median_s[first] * 1e3:10.3f}"
            f" {ref:>22s} {r.ratio():6.2f} {r.gbps(first):6.2f} {compile_ms:10.1f}  {others}"
        )


def _print_random_memory(results: list[Result]) -> None:
    """Peak memory over output bytes (XLA's buffer assignment) of each generator, largest size run."""
    sizes = [r.case.nbytes // 4 for r in results if r.case.group == "random"]
    if not sizes:
        return
    from dmljax.bench.random import peak_memory

    ratios = ", ".join(f"{name} {ratio:.2f}x" for name, ratio in peak_memory(max(sizes)).items())
    print(f"\nPeak memory / output bytes for {max(sizes):,} Philox outputs (XLA buffer assignment): {ratios}")


def _result_json(r: Result) -> dict:
    return {
        "group": r.case.group,
        "name": r.case.name,
        "nbytes": r.case.nbytes,
        "reference": r.case.reference,
        "median_s": r.median_s,
        "first_call_s": r.first_call_s,
        "ratio": r.ratio(),
    }


def _series_label(case) -> str:
    """The case's operation without its size: shapes in parentheses and ``n=...`` removed."""
    name = re.sub(r"\s*\([^)]*\)|\s*n=\d+", "", case.name)
    return f"{case.group}: {' '.join(name.split())}"


def _plot(results: list[Result], path: str) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"--plot: matplotlib is not installed (pip install 'dmljax[plot]'); {path} not written")
        return
    fig, ax = plt.subplots(figsize=(10, 5.5))
    series: dict[str, list[tuple[int, float]]] = {}
    for r in results:
        series.setdefault(_series_label(r.case), []).append((r.case.nbytes, r.gbps(next(iter(r.case.contenders)))))
    colors = plt.get_cmap("tab20").colors
    for k, (label, points) in enumerate(sorted(series.items())):
        points.sort()
        style = "--" if label.endswith("bwd") else "-"
        ax.plot([p[0] for p in points], [p[1] for p in points], style, marker="o", color=colors[k % 20], label=label)
    ax.set(xscale="log", xlabel="bytes moved", ylabel="GB/s (dmljax)", title="dmljax throughput against size")
    ax.legend(fontsize=6, ncol=2, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"\nplot written to {path}")


def main(argv: list[str] | None = None) -> int:
    """Run the checks, then the benchmarks; return 1 when a check failed."""
    args = _parse_args(argv)
    _maybe_reexec(args, argv)
    info = _header()
    checks = _run_checks()
    results: list[Result] = []
    if not args.no_bench:
        sizes = args.sizes or _parse_sizes(QUICK_SIZES if args.quick else DEFAULT_SIZES)
        only = set(args.only.split(",")) if args.only else None
        rounds = args.rounds or (3 if args.quick else 9)
        print(f"\nBenchmarking at sizes {', '.join(f'{s:,} B' for s in sizes)} ...")
        for k, size in enumerate(sizes, 1):
            cases = _cases_at(size, only)
            for i, case in enumerate(cases, 1):
                _progress(f"size {k}/{len(sizes)}, case {i}/{len(cases)}: {case.group} {case.name}")
                results.append(run_case(case, rounds=rounds, min_round_s=0.005 if args.quick else 0.02))
            del cases
        if sys.stderr.isatty():
            sys.stderr.write("\r" + " " * 80 + "\r")
        _print_table(results)
        _print_random_memory(results)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"info": info, "checks": checks, "results": [_result_json(r) for r in results]}, f, indent=1)
        print(f"\nresults written to {args.json}")
    if args.plot and results:
        _plot(results, args.plot)
    failed = [c["name"] for c in checks if not c["ok"]]
    print(f"\n{len(checks) - len(failed)} checks passed, {len(failed)} failed" + (f": {failed}" if failed else ""))
    return 1 if failed else 0
