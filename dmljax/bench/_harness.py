"""Side-by-side timing: contenders of one case run interleaved, medians reported.

A `Case` holds one operation at one size and the contenders that compute it: dmljax
first, then its baselines (hand-written ``jnp``/``lax``, NumPy, other PRNGs). `run_case`
calls each contender once to compile (compile time reported apart), then times them in
interleaved rounds, in a new seeded random order each round, so that the machine's noise
and the cache state one contender leaves behind hit all of them alike, and reports each
contender's spread over the rounds (min, median, max).
"""

from __future__ import annotations

import dataclasses
import itertools
import random
import statistics
import time
from collections.abc import Callable, Mapping
from typing import Any, cast

import jax

from dmljax._random.vector_width import default_platform

__all__ = ["Case", "Result", "run_case", "block", "pipelined_default", "sized"]


def block(value: Any) -> Any:
    """Wait for every array in ``value`` (NumPy results pass through)."""
    return jax.block_until_ready(value)


@dataclasses.dataclass(frozen=True)
class Case:
    """One operation at one size.

    Attributes:
      group: the operator family, e.g. ``"gather"``.
      name: what is measured, e.g. ``"take axis=0 fwd"``.
      nbytes: bytes the operation must move at least (inputs read + output written);
        throughput is reported as ``nbytes / seconds``.
      contenders: name -> zero-argument callable returning the result. The first is
        the one under test; the rest are baselines. Each callable must do its whole work
        (a jitted function applied to prepared arguments, a NumPy expression).
      reference: the baseline that ratios are quoted against (a key of contenders).
      tensor_bytes: bytes of the tensor the case was built for (the data it reads, or the
        values it generates): what the report labels it with. A module rounds the size
        asked for to its shapes, so it may differ from that size; every module's
        ``cases`` sets it (`sized`).
    """

    group: str
    name: str
    nbytes: int
    contenders: Mapping[str, Callable[[], Any]]
    reference: str
    tensor_bytes: int | None = None


def sized(cases: list[Case], tensor_bytes: int | None = None) -> list[Case]:
    """``cases`` labelled with the bytes of the tensor they were built for (default: each one's ``nbytes``).

    Examples:
      >>> case = Case("g", "op", 12, {}, "a")
      >>> sized([case], 4)[0].tensor_bytes, sized([case])[0].tensor_bytes
      (4, 12)
    """
    return [dataclasses.replace(c, tensor_bytes=c.nbytes if tensor_bytes is None else tensor_bytes) for c in cases]


@dataclasses.dataclass(frozen=True)
class Result:
    """Seconds per call of each contender in every round, plus first-call (compile + run) seconds.

    ``case.contenders`` keeps the contenders' names only (values ``None``).

    Examples:
      >>> r = Result(Case("g", "op", 10**9, {"a": None, "b": None}, "b"), {"a": [1.0, 3.0, 2.0], "b": [4.0]}, {})
      >>> r.median_s, r.min_s["a"], r.max_s["a"], r.ratio(), r.gbps("a")
      ({'a': 2.0, 'b': 4.0}, 1.0, 3.0, 0.5, 0.5)
    """

    case: Case
    samples_s: dict[str, list[float]]
    first_call_s: dict[str, float]

    @property
    def median_s(self) -> dict[str, float]:
        return {name: statistics.median(values) for name, values in self.samples_s.items()}

    @property
    def min_s(self) -> dict[str, float]:
        return {name: min(values) for name, values in self.samples_s.items()}

    @property
    def max_s(self) -> dict[str, float]:
        return {name: max(values) for name, values in self.samples_s.items()}

    def ratio(self, contender: str | None = None) -> float:
        """Time of ``contender`` (default: the one under test) over the reference's."""
        contender = contender or next(iter(self.case.contenders))
        return self.median_s[contender] / self.median_s[self.case.reference]

    def gbps(self, contender: str) -> float:
        """Bytes moved (``case.nbytes``) over the contender's median time, in GB/s."""
        return self.case.nbytes / self.median_s[contender] / 1e9


def pipelined_default() -> bool:
    """Whether `run_case` queues a round's calls by default: off the CPU (see `run_case`).

    The CPU is where the contenders' programs run: JAX's default device
    (`dmljax._random.vector_width.default_platform`, which honours ``jax.default_device``).

    Examples:
      >>> with jax.default_device(jax.devices("cpu")[0]):
      ...     pipelined_default()
      False
    """
    return default_platform() != "cpu"


def run_case(case: Case, *, rounds: int = 9, min_round_s: float = 0.02, pipelined: bool | None = None) -> Result:
    """Time every contender of ``case`` side by side and return every round's time.

    Each round calls each contender enough times to fill ``min_round_s`` (at least
    once) and records the mean per call; `Result` gives the min, median and max over rounds.
    ``pipelined`` (default `pipelined_default`): queue a round's calls and wait once, at its
    end, as a training loop does on an accelerator, where waiting for each call costs a
    device round trip (86 us for a tiny program on an H100: docs/design/index-checks.md) that would
    swamp 16 MiB operators; on the CPU each call is waited for. Eager calls that read a
    value back still wait inside each call. Pipelined, the contenders that return JAX arrays
    take their rounds first and the host ones (NumPy, torch CPU with 16 threads) theirs
    after: interleaved with them, the device contenders' medians swung up to 3x on the H100
    machine, where the same cases without them agree within 1%.
    """
    pipelined = pipelined_default() if pipelined is None else pipelined
    first: dict[str, float] = {}
    on_device: dict[str, bool] = {}
    for name, fn in case.contenders.items():
        start = time.perf_counter()
        value = block(fn())
        first[name] = time.perf_counter() - start
        on_device[name] = any(isinstance(leaf, jax.Array) for leaf in jax.tree.leaves(value))
    inner: dict[str, int] = {}
    for name, fn in case.contenders.items():
        start = time.perf_counter()
        block(fn())
        once = max(time.perf_counter() - start, 1e-7)
        inner[name] = max(1, min(1000, int(min_round_s / once)))
    samples: dict[str, list[float]] = {name: [] for name in case.contenders}
    order = random.Random(0)
    groups = [list(case.contenders)]
    if pipelined:
        groups = [[n for n in case.contenders if on_device[n]], [n for n in case.contenders if not on_device[n]]]
    for group, _ in itertools.product(groups, range(rounds)):
        # A fresh order each round: the contender that runs after another pays for the caches
        # it left cold (a 16 MiB NumPy copy costs the next one up to 2x), so none may always
        # follow the same one, as it would under a fixed order or a rotation of one.
        names = list(group)
        order.shuffle(names)
        for name in names:
            fn = case.contenders[name]
            start = time.perf_counter()
            if pipelined:
                for _ in range(inner[name]):
                    out = fn()
                block(out)
            else:
                for _ in range(inner[name]):
                    block(fn())
            samples[name].append((time.perf_counter() - start) / inner[name])
    # Keep the names, drop the callables: they hold the case's (possibly large) inputs.
    names_only = cast(dict[str, Callable[[], Any]], dict.fromkeys(case.contenders))
    return Result(dataclasses.replace(case, contenders=names_only), samples, first)
