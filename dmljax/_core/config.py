"""`dmljax.config`: every per-platform formulation switch and size threshold, in one place.

dmljax picks faster formulations of some operators per platform and size (flat positions
on XLA CPU, column blocks, tiled transposes, AVX-512 twins, ...). Every choice computes
the same bits as the plain formulation; only the speed differs. Each switch and threshold
is an option here, read when an operator is traced, in the manner of `jax.config`:

* ``dmljax.config.update(name, value)`` sets one for the process,
* ``with dmljax.config.override(name=value):`` sets some for a block,
* ``DMLJAX_<NAME>`` environment variables (``DMLJAX_FLAT_FORMULATIONS=0``) set them when
  dmljax is imported,
* ``dmljax.config.<name>`` reads one; ``dmljax.config.values()`` reads all.

Setting an option clears JAX's compilation caches (`jax.clear_caches`), so that every
function traced before, yours included, is traced again with the new value on its next
call. The defaults were measured on a 2-core AVX2 CPU, a 2-core AVX-512 CPU and one H100;
the figures behind each are in the design note its help names (``docs/design/``).

Examples:
  >>> import dmljax
  >>> dmljax.config.flat_formulations
  True
  >>> with dmljax.config.override(flat_formulations=False):
  ...     dmljax.config.flat_formulations
  False
  >>> dmljax.config.update("tiled_transpose", 1)
  Traceback (most recent call last):
  ...
  TypeError: dmljax.config: tiled_transpose must be a bool; got tiled_transpose=1.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Iterator, Mapping
from typing import Any

import jax

__all__ = ["OPTIONS", "Config", "Option", "config"]


@dataclasses.dataclass(frozen=True)
class Option:
    """One switch (bool) or threshold (int >= 0) and what it decides."""

    name: str
    default: bool | int
    help: str

    @property
    def env(self) -> str:
        """The environment variable that sets it at import: ``DMLJAX_`` and the name in capitals."""
        return "DMLJAX_" + self.name.upper()

    def check(self, value: Any) -> bool | int:
        """``value`` if it fits the option's type; a clear error otherwise."""
        if isinstance(self.default, bool):
            if not isinstance(value, bool):
                raise TypeError(f"dmljax.config: {self.name} must be a bool; got {self.name}={value!r}.")
        elif isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise TypeError(f"dmljax.config: {self.name} must be an int >= 0; got {self.name}={value!r}.")
        return value

    def parse(self, text: str) -> bool | int:
        """The value of an environment variable's text (``0``/``1``/``true``/``false``; ints in any base)."""
        word = text.strip().lower()
        if isinstance(self.default, bool):
            if word in ("1", "true", "yes", "on"):
                return True
            if word in ("0", "false", "no", "off"):
                return False
        else:
            with contextlib.suppress(ValueError):
                number = int(word.replace("_", ""), 0)
                if number >= 0:
                    return number
        kind = "a bool (0, 1, true, false)" if isinstance(self.default, bool) else "an int >= 0"
        raise ValueError(f"dmljax.config: {self.env} must be {kind}; got {self.env}={text!r}.")


_NOTES = "docs/design/"
OPTIONS = (
    Option(
        "flat_formulations",
        True,
        "Element-wise gathers and scatters and their gradients index the flattened array at one-column "
        "flat positions on XLA CPU (1.5-5x faster), and gather's gradient on one CUDA GPU; off, the "
        "column blocks of blocked_gather_elements are off too. " + _NOTES + "per-platform-formulations.md",
    ),
    Option(
        "blocked_gather_elements",
        True,
        "gather_elements along a leading axis runs in column blocks. " + _NOTES + "blocked-gather.md",
    ),
    Option(
        "blocked_gather_elements_min_bytes",
        2**24,
        "Smallest data (bytes) gathered in blocks on XLA CPU (AVX2 EPYC): 0.70-0.72x at 16 MiB, 1.32x at 8 MiB.",
    ),
    Option(
        "blocked_gather_elements_forward_avx512",
        False,
        "On an AVX-512 host the CPU forward runs in blocks too (the gradient always does); off, the plain "
        "gather (a 2-core AVX-512 EPYC: blocked 1.5-4.0x slower at 16-256 MiB). " + _NOTES + "blocked-gather.md",
    ),
    Option(
        "blocked_gather_elements_gpu_gradient_min_bytes",
        2**25,
        "Off the CPU, smallest data whose gradient runs in blocks. H100 blocked / plain: 1.13 at 16 MiB, 0.73 at 32.",
    ),
    Option(
        "blocked_gather_elements_gpu_forward_min_bytes",
        2**26,
        "Off the CPU, smallest data whose forward runs in blocks. H100 blocked / plain: 1.52 at 32 MiB, 0.86 at 64.",
    ),
    Option(
        "blocked_gather_elements_min_axis",
        32,
        "Shortest gathered axis that runs in blocks: blocked / plain 1.26 at 16, 0.49 at 32 (32 MiB float32).",
    ),
    Option(
        "gather_rows_tangent",
        True,
        "On XLA CPU gather's gradient scatters whole rows along an axis with little data after it. "
        + _NOTES
        + "gather-gradient.md",
    ),
    Option(
        "gather_rows_tangent_max_inner",
        4,
        "Rows are used while fewer elements follow the axis: at 16 MiB 5.6x faster for 1, equal for 4.",
    ),
    Option(
        "gather_index_apart",
        True,
        "On XLA CPU gather normalises signed or 64-bit indices once, apart from the gather's loop, "
        "instead of once per element read (0.91-0.94x at 4-16 MiB). " + _NOTES + "gather-index-apart.md",
    ),
    Option(
        "gather_index_apart_min_reuse",
        16,
        "Fewest elements read per index for that: equal at 16, 1.02x slower at 1 (a conditional, ~0.6 us).",
    ),
    Option(
        "gather_gpu_flat_tangent",
        True,
        "On one CUDA GPU gather's gradient is one 1-D scatter-add at flat positions. " + _NOTES + "gather-gradient.md",
    ),
    Option(
        "gather_gpu_flat_tangent_max_inner",
        32,
        "The flat gradient is used while fewer elements follow the axis (H100: 1.13-1.17x slower at 32)...",
    ),
    Option(
        "gather_gpu_flat_tangent_bytes_per_inner",
        2**23,
        "...and from this many cotangent bytes per element after the axis (H100, inner 1: 0.90 at 16 MiB, 0.74 at 32).",
    ),
    Option(
        "tiled_transpose",
        True,
        "Strided reads and writes that move the last axis transpose in cache-line tiles on one device. "
        + _NOTES
        + "tiled-transpose.md",
    ),
    Option(
        "tiled_transpose_two_pass_min_bytes",
        2**25,
        "Smallest tensor whose tiles run in two passes on XLA CPU: 1.07-1.10x slower at 16 MiB, 2.1x faster at 32.",
    ),
    Option(
        "index_check_two_stage_min_size",
        2**21,
        "From this many indices the eager range check reduces in two stages on XLA CPU: 0.26-0.41 ms against "
        "0.43-0.90 ms at 2^22, 2x slower at 2^18. " + _NOTES + "index-checks.md",
    ),
    Option("index_check_two_stage_min_row", 16, "The shortest last axis that reduces in two stages."),
    Option(
        "index_check_pinned_host",
        True,
        "On a GPU the eager range check writes its two scalars to pinned host memory (H100: 396 -> 112 us). "
        + _NOTES
        + "index-checks.md",
    ),
    Option(
        "philox_flat_rows",
        True,
        "Off the CPU a multi-dimensional Philox output is one flat run of elements. " + _NOTES + "philox-layout.md",
    ),
    Option(
        "philox_short_row",
        16,
        "On XLA CPU unaligned rows shorter than this compute each element's block; from 16 words on the "
        "block grid wins (2.7x faster at 63 words). " + _NOTES + "philox-layout.md",
    ),
    Option(
        "cpu_ordered_scatter",
        True,
        "On one XLA CPU device a float scatter reduction (add; mul on real floats) is one XLA scatter, "
        "which combines duplicates in ONNX's order there (16 MiB: 60-530x faster than the rounds). "
        + _NOTES
        + "ordered-reductions.md",
    ),
    Option(
        "ordered_rounds",
        False,
        "Off one XLA CPU device float add/mul reductions run the old rounds (O(largest duplicate count x "
        "updates); kept as the sorted fold's oracle) instead of the sorted fold. " + _NOTES + "ordered-reductions.md",
    ),
    Option(
        "ordered_replicated_partitions",
        True,
        "In a process with several devices a float add/mul reduction is a custom_partitioning whose "
        "partitioned program folds replicated operands on each device; off, XLA partitions the "
        "sorted fold itself. " + _NOTES + "ordered-reductions.md",
    ),
    Option(
        "philox_pair_interleave",
        True,
        "On XLA CPU the four Philox word planes are interleaved as two uint64 word pairs, bitcast back "
        "(the stream in 0.83-0.90x the CPU time of a select on n % 4). " + _NOTES + "philox-layout.md",
    ),
    Option(
        "cpu_wide_vectors",
        True,
        "Eager Philox calls on an AVX-512 host run a twin compiled with 512-bit vectors. " + _NOTES + "vector-width.md",
    ),
)


class Config:
    """dmljax's formulation switches and thresholds, read as attributes (``dmljax.config.<name>``).

    `update` sets one for the process, `override` some for a ``with`` block, `values`
    reads all and `help` says what one decides; ``DMLJAX_<NAME>`` environment variables
    set them at import. Setting an option clears JAX's compilation caches, so functions
    traced before are traced again with the new value.

    Examples:
      >>> import dmljax
      >>> dmljax.config.tiled_transpose, dmljax.config.philox_short_row
      (True, 16)
    """

    def __init__(self, options: tuple[Option, ...], environ: Mapping[str, str] = os.environ) -> None:
        self._options = {option.name: option for option in options}
        self._values = {option.name: option.default for option in options}
        for option in options:
            if option.env in environ:
                self._values[option.name] = option.parse(environ[option.env])

    def __getattr__(self, name: str) -> Any:
        values = self.__dict__.get("_values", {})
        if name in values:
            return values[name]
        raise AttributeError(f"dmljax.config has no option {name!r}; the options: {', '.join(values)}")

    def __dir__(self) -> list[str]:
        return [*super().__dir__(), *self._values]

    def _option(self, name: str) -> Option:
        if name not in self._options:
            raise AttributeError(f"dmljax.config has no option {name!r}; the options: {', '.join(self._options)}")
        return self._options[name]

    def values(self) -> dict[str, bool | int]:
        """Every option's current value."""
        return dict(self._values)

    def help(self, name: str) -> str:
        """What option ``name`` decides, its default and its environment variable."""
        option = self._option(name)
        return f"{option.name} (default {option.default!r}, {option.env}): {option.help}"

    def update(self, name: str, value: bool | int) -> None:
        """Set option ``name`` for the process; JAX's compilation caches are cleared.

        Raises:
          AttributeError: no option is called ``name``.
          TypeError: ``value`` is not of the option's type (bool, or int >= 0).
        """
        checked = self._option(name).check(value)
        if self._values[name] != checked:
            self._values[name] = checked
            jax.clear_caches()

    @contextlib.contextmanager
    def override(self, **values: bool | int) -> Iterator[None]:
        """Set options for the ``with`` block, then restore them."""
        for name, value in values.items():
            self._option(name).check(value)
        before = {name: self._values[name] for name in values}
        try:
            for name, value in values.items():
                self.update(name, value)
            yield
        finally:
            for name, value in before.items():
                self.update(name, value)


config = Config(OPTIONS)
