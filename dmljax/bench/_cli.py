"""``python -m dmljax``: checks every operator against NumPy, then times it beside its baselines.

Run as ``python -m dmljax [--quick] [--sizes 4K,1M,16M] [--only GROUPS] [--index-dtypes int32,int64]
[--json PATH] [--plot PATH]``.
Options are checked before any work (``--json`` and ``--plot`` paths must be writable);
Ctrl-C stops the run with one line and exit status 130.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import importlib.metadata
import json
import os
import platform
import sys
import time
import traceback
from collections.abc import Iterator

import jax
import numpy as np

import dmljax
from dmljax.bench._harness import Case, pipelined_default, run_case
from dmljax.bench._memory import check_sizes
from dmljax.bench._report import (
    SCHEMA_VERSION,
    WIDTH,
    SizedResult,
    fmt_bytes,
    print_summary,
    print_table,
    result_json,
    summarize,
    wrap,
)

__all__ = ["main", "parse_size"]

# Operator groups -> the benchmark module whose ``cases(sizes_bytes) -> list[Case]`` builds them.
GROUPS = {
    "read_tensor": "dmljax.bench.strided",
    "write_tensor": "dmljax.bench.strided",
    "gather_elements": "dmljax.bench.ops",
    "gather": "dmljax.bench.ops",
    "scatter": "dmljax.bench.ops",
    "slice1": "dmljax.bench.ops",
    "gather_nd": "dmljax.bench.nd",
    "scatter_nd": "dmljax.bench.nd",
    "scatter_reduction": "dmljax.bench.nd",
    "cumulative": "dmljax.bench.cumulative",
    "movement": "dmljax.bench.movement",
    "selection": "dmljax.bench.selection",
    "segment": "dmljax.bench.segment",
    "vision": "dmljax.bench.vision",
    "deterministic": "dmljax.bench.deterministic",
    "random": "dmljax.bench.random",
    "prng": "dmljax.bench.prng",
    "keys": "dmljax.bench.keys",
    "compile_operator": "dmljax.bench.descriptors",
    "eager": "dmljax.bench.eager",
    "onnx_export": "dmljax.bench.onnx_export",
}
# Groups whose work does not depend on the size asked: timed once, at the first size.
SIZE_FREE_GROUPS = frozenset({"onnx_export"})
DEFAULT_SIZES = "4K,1M,16M,256M"
QUICK_SIZES = "4K,256K"
# Index types of the gather, gather_elements and scatter cases (uint64 on request: as int64 on the device).
DEFAULT_INDEX_DTYPES = "int32,int64,uint32"
QUICK_INDEX_DTYPES = "int32,uint32"
INDEX_DTYPES = ("int32", "int64", "uint32", "uint64")
# Steady-state allocator settings for timings: glibc otherwise mmaps and page-faults
# every fresh output over 32 MiB (+90 ms at 256 MiB).
MALLOC_ENV = {
    "MALLOC_ARENA_MAX": "1",
    "MALLOC_MMAP_MAX_": "0",
    "MALLOC_TRIM_THRESHOLD_": "68719476736",
    "MALLOC_TOP_PAD_": "0",
}
_UNITS = {"": 1, "B": 1, "K": 2**10, "KB": 2**10, "KIB": 2**10, "M": 2**20, "MB": 2**20, "MIB": 2**20}
_UNITS |= {"G": 2**30, "GB": 2**30, "GIB": 2**30}
# The exit status of a run stopped with Ctrl-C (128 + SIGINT), as shells report it.
INTERRUPTED = 130
# The exit status of a run whose sizes do not fit in memory (checked first, or MemoryError).
OUT_OF_MEMORY = 2


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
    if int(number) == 0:
        raise argparse.ArgumentTypeError(f"--sizes: a size must be at least 1 byte; got {text!r}")
    return int(number) * _UNITS[unit]


def _positive_int(text: str) -> int:
    """``--rounds``: an integer >= 1.

    Examples:
      >>> _positive_int("3")
      3
      >>> _positive_int("0")
      Traceback (most recent call last):
      ...
      argparse.ArgumentTypeError: --rounds must be an integer >= 1; got --rounds='0'.
    """
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"--rounds must be an integer >= 1; got --rounds={text!r}.")
    return value


def _check_writable(parser: argparse.ArgumentParser, option: str, path: str | None) -> None:
    """Refuse an output path that cannot be written, before any work (a probe: opened to append, then left as found)."""
    if path is None:
        return
    if os.path.isdir(path):
        parser.error(f"{option} must name a file; got {option}={path!r} (a directory).")
    existed = os.path.exists(path)
    try:
        with open(path, "a"):
            pass
    except OSError as exc:
        parser.error(f"{option} must name a writable file; got {option}={path!r} ({exc.strerror}).")
    if not existed:
        os.remove(path)


def _parse_sizes(text: str) -> list[int]:
    return [parse_size(part) for part in text.split(",")]


def _parse_index_dtypes(text: str) -> list[str]:
    """``--index-dtypes``: index types among `INDEX_DTYPES`, in the order given.

    Examples:
      >>> _parse_index_dtypes("int64, uint32")
      ['int64', 'uint32']
      >>> _parse_index_dtypes("int16")  # doctest: +ELLIPSIS
      Traceback (most recent call last):
      ...
      argparse.ArgumentTypeError: --index-dtypes must name index types among int32, ...; got --index-dtypes='int16'.
    """
    dtypes = list(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))
    if not dtypes or any(d not in INDEX_DTYPES for d in dtypes):
        allowed = ", ".join(INDEX_DTYPES)
        raise argparse.ArgumentTypeError(
            f"--index-dtypes must name index types among {allowed}; got --index-dtypes={text!r}."
        )
    return dtypes


def _parse_groups(text: str) -> list[str]:
    groups = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [g for g in groups if g not in GROUPS]
    if unknown or not groups:
        raise argparse.ArgumentTypeError(
            f"--only must name operator groups among {', '.join(GROUPS)}; got --only={text!r}"
            f" ({'unknown: ' + ', '.join(unknown) if unknown else 'no group'})."
        )
    return groups


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m dmljax", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=f"small sizes, 3 rounds (sizes {QUICK_SIZES})")
    sizes_help = f"comma-separated tensor sizes in bytes (default {DEFAULT_SIZES})"
    parser.add_argument("--sizes", type=_parse_sizes, help=sizes_help)
    only_help = f"comma-separated operator groups to time (default all): {', '.join(GROUPS)}"
    parser.add_argument("--only", type=_parse_groups, metavar="GROUPS", help=only_help)
    dtypes_help = (
        "comma-separated index types of the gather, gather_elements and scatter cases among "
        f"{', '.join(INDEX_DTYPES)} (default {DEFAULT_INDEX_DTYPES}; quick {QUICK_INDEX_DTYPES})"
    )
    parser.add_argument("--index-dtypes", type=_parse_index_dtypes, metavar="TYPES", help=dtypes_help)
    parser.add_argument("--json", metavar="PATH", help=f"write the results here (JSON, schema {SCHEMA_VERSION})")
    plot_help = "write a PNG of dmljax/baseline time ratios, one panel per group (needs matplotlib)"
    parser.add_argument("--plot", metavar="PATH", help=plot_help)
    parser.add_argument("--no-bench", action="store_true", help="run the checks only")
    parser.add_argument("--rounds", type=_positive_int, help="timing rounds per case, >= 1 (default 9, quick 3)")
    peers_help = "time dmljax and its JAX baselines only, without the NumPy, torch and randomgen peers"
    parser.add_argument("--no-peers", action="store_true", help=peers_help)
    malloc_help = "time with glibc's default allocator settings (default: re-run with " + _malloc_text() + ")"
    parser.add_argument("--default-malloc", action="store_true", help=malloc_help)
    args = parser.parse_args(argv)
    _check_writable(parser, "--json", args.json)
    _check_writable(parser, "--plot", args.plot)
    if not args.no_bench:  # every size against the memory left, before any case allocates
        refused = check_sizes(args.sizes or _parse_sizes(QUICK_SIZES if args.quick else DEFAULT_SIZES), fmt_bytes)
        if refused:
            print(refused, file=sys.stderr)
            sys.exit(OUT_OF_MEMORY)
    return args


def _malloc_text() -> str:
    return " ".join(f"{k}={v}" for k, v in MALLOC_ENV.items())


def _maybe_reexec(args: argparse.Namespace, argv: list[str] | None) -> None:
    """Restart once with steady-state malloc settings (they only act at process start)."""
    if args.default_malloc or args.no_bench or argv is not None or os.environ.get("DMLJAX_MALLOC_SET"):
        return
    if not sys.platform.startswith("linux"):
        return
    env = {**os.environ, **MALLOC_ENV, "DMLJAX_MALLOC_SET": "1"}
    sys.stdout.flush()
    os.execve(sys.executable, [sys.executable, "-m", "dmljax", *sys.argv[1:]], env)


def _malloc_lines() -> tuple[str, str]:
    """The allocator regime's name and the header text that discloses it."""
    if os.environ.get("DMLJAX_MALLOC_SET"):
        return "steady-state", (
            f"steady-state: this process re-ran itself with {_malloc_text()} so fresh outputs are not"
            " mmap'ed and page-faulted on every call; with glibc's defaults your program may see up to ~2x"
            " these times at 16 MiB and more. --default-malloc times without the settings."
        )
    return "glibc default", (
        "glibc defaults (--default-malloc, called as a function, or not Linux): fresh outputs over 32 MiB"
        " are mmap'ed and page-faulted on every call, as in most programs."
    )


def _torch_version() -> str:
    from dmljax.bench._torch import _torch

    torch = _torch()
    if torch is None:
        return "not installed (pip install 'dmljax[torch]' adds it as a contender)"
    return f"{torch.__version__}, {torch.get_num_threads()} threads"


def _header(run_bench: bool) -> dict:
    device = jax.devices()[0]
    malloc, malloc_lines = _malloc_lines()
    versions = f"dmljax {dmljax.__version__}, jax {jax.__version__}, jaxlib {importlib.metadata.version('jaxlib')}"
    info = {
        "versions": f"{versions}, numpy {np.__version__}, python {platform.python_version()}",
        "torch": _torch_version() if run_bench else "not used (checks only)",
        "device": f"{device.platform}: {getattr(device, 'device_kind', device)} x{jax.device_count()}",
        "cpu": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores",
        "date": time.strftime("%Y-%m-%d %H:%M %Z"),
        "timing": (
            "pipelined: a round's calls queued, waited for once at its end (off the CPU)"
            if pipelined_default()
            else "each call waited for"
        ),
    }
    print("python -m dmljax: every operator checked against NumPy" + (", then timed beside its baselines" * run_bench))
    for key, value in [*info.items(), *([("malloc", malloc_lines)] if run_bench else [])]:
        print("\n".join(wrap(value, indent=f"  {key:8s} ", subsequent=" " * 11)))
    return {**info, "malloc": malloc, "malloc_env": {k: os.environ.get(k) for k in MALLOC_ENV}}


def _run_checks() -> list[dict]:
    from dmljax.bench._checks import CHECKS

    print("\nChecks (dmljax against NumPy on small fixed inputs):")
    results = []
    for name, check in CHECKS:
        try:
            detail, ok = check(), True
        except Exception as exc:  # noqa: BLE001 - a failing check is reported, never hidden
            detail, ok = f"{type(exc).__name__}: {exc}", False
            traceback.print_exc(file=sys.stderr)
        head = f"  [{'ok' if ok else 'FAIL'}] {name:18s} "
        print("\n".join(wrap(f"{head}{detail}", indent="", subsequent=" " * len(head))))
        results.append({"name": name, "ok": ok, "detail": detail})
    return results


def _case_batches(size: int, only: list[str], index_dtypes: list[str]) -> Iterator[list[Case]]:
    """The cases of the groups in ``only`` at one size, one module's at a time.

    Only one module's inputs are alive at once (at 256 MiB all modules' together exceed 24 GiB).
    The array operators' module builds its cases for each of ``index_dtypes``.
    """
    for module_name in dict.fromkeys(GROUPS[g] for g in only):
        module = importlib.import_module(module_name)
        typed = {"index_dtypes": index_dtypes} if module_name == "dmljax.bench.ops" else {}
        yield [case for case in module.cases([size], **typed) if case.group in only]


def _progress(label: str) -> None:
    if sys.stderr.isatty():
        sys.stderr.write(f"\r  {label[:76]:76s}")
        sys.stderr.flush()
    else:
        sys.stderr.write("\n".join(wrap(label, indent="  ", subsequent="    ")) + "\n")


def _print_random_memory(results: list[SizedResult]) -> None:
    """Peak memory over output bytes (XLA's buffer assignment) of each generator, largest size run."""
    sizes = [s.result.case.nbytes // 4 for s in results if s.result.case.group == "random"]
    if not sizes:
        return
    from dmljax.bench.random import peak_memory

    print(f"\nPeak memory / output bytes for {max(sizes):,} Philox outputs (XLA buffer assignment):")
    for name, ratio in peak_memory(max(sizes)).items():
        print(f"  {name:34s} {ratio:.2f}x")


def _bench(args: argparse.Namespace) -> list[SizedResult]:
    sizes = args.sizes or _parse_sizes(QUICK_SIZES if args.quick else DEFAULT_SIZES)
    only = args.only or list(GROUPS)
    rounds = args.rounds or (3 if args.quick else 9)
    index_dtypes = args.index_dtypes or _parse_index_dtypes(QUICK_INDEX_DTYPES if args.quick else DEFAULT_INDEX_DTYPES)
    asked = ", ".join(fmt_bytes(s) for s in sizes)
    skipped = {g: why for g in only if (why := _unavailable(g))}
    only = [g for g in only if g not in skipped]
    print()
    for group, why in skipped.items():
        print("\n".join(wrap(f"Skipping {group}: {why}.", subsequent="  ")))
    if not only:
        return []
    announce = f"Timing {', '.join(only)} at tensor sizes {asked} (each case's own, rounded to its shapes, below) ..."
    print("\n".join(wrap(announce, subsequent="  ")))
    results = []
    for k, size in enumerate(sizes, 1):
        groups = only if k == 1 else [g for g in only if g not in SIZE_FREE_GROUPS]
        for cases in _case_batches(size, groups, index_dtypes):
            while cases:  # each case's inputs are freed once it has run
                case = cases.pop(0)
                if args.no_peers:
                    case = without_peers(case)
                _progress(f"size {k}/{len(sizes)}: {case.group} {case.name}")
                result = run_case(case, rounds=rounds, min_round_s=0.005 if args.quick else 0.02)
                tensor_bytes = size if case.tensor_bytes is None else case.tensor_bytes  # what it timed
                results.append(SizedResult(tensor_bytes, result, asked_bytes=size))
                del case
    if sys.stderr.isatty():
        sys.stderr.write("\r" + " " * 80 + "\r")
    if results:
        print_table(results, rounds)
    _print_random_memory(results)
    return results


def _unavailable(group: str) -> str | None:
    """Why ``group`` cannot run here (its module's ``unavailable()``, e.g. a missing extra), or None."""
    check = getattr(importlib.import_module(GROUPS[group]), "unavailable", None)
    return None if check is None else check()


# Contender names of the other libraries' implementations (NumPy, torch CPU, randomgen's C Philox).
PEERS = ("numpy", "torch", "randomgen")


def without_peers(case: Case) -> Case:
    """``case`` without its peers from other libraries (`PEERS`): dmljax and the JAX baselines.

    Examples:
      >>> case = Case("g", "op", 8, {"dmljax": 1, "jnp": 2, "numpy": 3, "torch": 4, "torch randint": 5}, "jnp")
      >>> list(without_peers(case).contenders)
      ['dmljax', 'jnp']
    """
    kept = {name: fn for name, fn in case.contenders.items() if not name.startswith(PEERS)}
    return dataclasses.replace(case, contenders=kept)


def _plot(results: list[SizedResult], path: str) -> None:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print(f"--plot: matplotlib is not installed (pip install 'dmljax[plot]'); {path} not written")
        return
    from dmljax.bench._plot import plot_ratios

    plot_ratios(results, path)
    print(f"\nplot written to {path}")


def main(argv: list[str] | None = None) -> int:
    """Run the checks, then the benchmarks; return 1 when a check failed, `INTERRUPTED` (130) on Ctrl-C.

    Sizes that do not fit in memory (`dmljax.bench._memory.check_sizes`) end the run before
    anything runs, and a `MemoryError` during it ends it, each with one line and exit status
    `OUT_OF_MEMORY` (2).
    """
    args = _parse_args(argv)
    _maybe_reexec(args, argv)
    try:
        return _run(args)
    except KeyboardInterrupt:
        if sys.stderr.isatty():
            sys.stderr.write("\r" + " " * 80 + "\r")  # the progress line
        sys.stdout.flush()
        print("python -m dmljax: interrupted (Ctrl-C); the run stopped before its end.", file=sys.stderr)
        return INTERRUPTED
    except MemoryError as exc:
        if sys.stderr.isatty():
            sys.stderr.write("\r" + " " * 80 + "\r")
        sys.stdout.flush()
        what = f" ({exc})" if str(exc) else ""
        print(f"python -m dmljax: out of memory{what}; choose smaller --sizes.", file=sys.stderr)
        return OUT_OF_MEMORY


def _run(args: argparse.Namespace) -> int:
    """The checks, the benchmarks, the JSON record and plot, the summary; 1 when a check failed."""
    start = time.perf_counter()
    info = _header(not args.no_bench)
    checks = _run_checks()
    results = [] if args.no_bench else _bench(args)
    summary = summarize(results, time.perf_counter() - start, _load_average(), os.cpu_count())
    if args.json:
        record = {
            "schema_version": SCHEMA_VERSION,
            "info": info,
            "checks": checks,
            "results": [result_json(r) for r in results],
            "summary": summary,
        }
        with open(args.json, "w") as f:
            json.dump(record, f, indent=1)
        print(f"\nresults written to\n  {args.json}")  # a long path on its own line
    if args.plot and results:
        _plot(results, args.plot)
    failed = [c["name"] for c in checks if not c["ok"]]
    verdict = f"{len(checks) - len(failed)} checks passed, {len(failed)} failed" + (f": {failed}" if failed else "")
    print("\n" + "\n".join(wrap(verdict, width=WIDTH)))
    if results:
        print_summary(summary)
    return 1 if failed else 0


def _load_average() -> tuple[float, float, float] | None:
    """The machine's 1/5/15-minute load average (None where the platform has none)."""
    try:
        return os.getloadavg()
    except (AttributeError, OSError):
        return None
