"""The memory a benchmark run may use, read before any case allocates: `available_bytes`, `check_sizes`.

The least of: the memory the kernel says is available (``MemAvailable``, else
``os.sysconf("SC_AVPHYS_PAGES")``), what the process's cgroup still allows (v2
``memory.max - memory.current``, v1 ``memory.limit_in_bytes - memory.usage_in_bytes``) and
the address space ``RLIMIT_AS`` leaves (``ulimit -v``). Each source that cannot be read is
left out; none readable: no check.
"""

from __future__ import annotations

import os
import resource
from collections.abc import Callable

__all__ = ["CASE_COPIES", "available_bytes", "check_sizes"]

# A case holds its tensor, its indices or updates and its output at once (at least three
# tensors of the size asked for; the peers' copies come on top): a size is refused when
# three of it do not fit.
CASE_COPIES = 3

_CGROUP = "/sys/fs/cgroup"


def _read_int(path: str) -> int | None:
    try:
        with open(path) as f:
            text = f.read().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None  # "max": no limit


def _meminfo_available() -> int | None:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def _cgroup_dirs() -> list[tuple[str, str, str]]:
    """(directory, limit file, usage file) of the cgroups that may limit this process."""
    dirs = [
        (_CGROUP, "memory.max", "memory.current"),
        (f"{_CGROUP}/memory", "memory.limit_in_bytes", "memory.usage_in_bytes"),
    ]
    try:
        with open("/proc/self/cgroup") as f:
            for line in f:
                _, controllers, path = line.rstrip("\n").split(":", 2)
                if controllers == "" and path != "/":  # v2
                    dirs.append((_CGROUP + path, "memory.max", "memory.current"))
    except (OSError, ValueError):
        pass
    return dirs


def _cgroup_left() -> int | None:
    left = []
    for directory, limit_file, usage_file in _cgroup_dirs():
        limit = _read_int(os.path.join(directory, limit_file))
        usage = _read_int(os.path.join(directory, usage_file))
        if limit is not None and usage is not None and limit < 2**60:  # v1 writes "no limit" as ~2^63
            left.append(max(limit - usage, 0))
    return min(left) if left else None


def _address_space_left() -> int | None:
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY:
        return None
    try:
        with open("/proc/self/status") as f:
            used = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
    except (OSError, StopIteration, ValueError):
        used = 0
    return max(soft - used, 0)


def available_bytes() -> tuple[int, str] | None:
    """The bytes a run may still allocate and where the bound comes from; None if nothing is readable.

    Examples:
      >>> found = available_bytes()
      >>> found is None or (found[0] >= 0 and found[1] in ("available memory", "cgroup limit", "ulimit -v"))
      True
    """
    found = [
        (value, name)
        for value, name in (
            (_meminfo_available(), "available memory"),
            (_cgroup_left(), "cgroup limit"),
            (_address_space_left(), "ulimit -v"),
        )
        if value is not None
    ]
    return min(found) if found else None


def check_sizes(sizes: list[int], fmt: Callable[[int], str], available: tuple[int, str] | None = None) -> str | None:
    """One line refusing the first size whose case would not fit in memory, or None when all fit.

    Examples:
      >>> check_sizes([2**20, 2**30], lambda n: f"{n >> 20} MiB", available=(2**31, "cgroup limit"))
      'python -m dmljax: --sizes 1024 MiB needs at least 3072 MiB (3 tensors of that size), but 2048 MiB is left ...'
      >>> check_sizes([2**20], str, available=None) is None
      True
    """
    available = available_bytes() if available is None else available
    if available is None:
        return None
    left, source = available
    for size in sizes:
        if size * CASE_COPIES > left:
            return (
                f"python -m dmljax: --sizes {fmt(size)} needs at least {fmt(size * CASE_COPIES)} "
                f"({CASE_COPIES} tensors of that size), but {fmt(left)} is left ({source}); choose smaller --sizes."
            )
    return None
