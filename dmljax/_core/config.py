"""`dmljax.config`: every per-platform formulation switch and size threshold, in one place.

dmljax picks faster formulations of some operators per platform and size (flat positions
on XLA CPU, column blocks, tiled transposes, AVX-512 twins, ...). Every choice computes
the same bits as the plain formulation; only the speed differs. Each switch and threshold
is an option here, read when an operator is traced, in the manner of `jax.config`:

* ``dmljax.config.update(name, value)`` sets one for the process,
* ``with dmljax.config.override(name=value):`` sets some for a block, in the calling thread,
* ``DMLJAX_<NAME>`` environment variables (``DMLJAX_FLAT_FORMULATIONS=0``) set them when
  dmljax is imported,
* ``dmljax.config.<name>`` reads one; ``dmljax.config.values()`` reads all. Assignment
  (``dmljax.config.<name> = value``) is refused.

The options are part of the key of JAX's jit caches (`jax.make_user_context`, as
``jax.config`` options are): a function traced with other values is traced again on its
next call, and nothing compiled is flushed. Each option's help says what it decides, its
deciding threshold, and the design note (``docs/design/``) that holds the measurements.

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
import threading
from collections.abc import Iterator, Mapping
from typing import Any

import jax

__all__ = ["OPTIONS", "PALLAS_TRITON_CURRENT", "Config", "Option", "config"]


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


def _jax_before(major: int, minor: int) -> bool:
    """Whether the running jax is older than ``major.minor`` (``jax.__version__``'s first two numbers)."""
    parts = jax.__version__.split(".")[:2]
    return tuple(int("".join(c for c in p if c.isdigit()) or 0) for p in parts) < (major, minor)


# Pallas' Triton backend is current before jax 0.11, which deprecates it (its Pallas changelog:
# "will be removed in a future version"); `ordered_fold_kernel`'s default.
PALLAS_TRITON_CURRENT = _jax_before(0, 11)
OPTIONS = (
    Option(
        "flat_formulations",
        True,
        "Element-wise gathers and scatters and their gradients index the flattened array at one-column "
        "flat positions on XLA CPU, and gather's gradient on one CUDA GPU; off, the column blocks of "
        "blocked_gather_elements are off too. " + _NOTES + "per-platform-formulations.md",
    ),
    Option(
        "blocked_gather_elements",
        True,
        "gather_elements along a leading axis runs in column blocks. " + _NOTES + "blocked-gather.md",
    ),
    Option(
        "blocked_gather_elements_min_bytes",
        2**24,
        "Smallest data (bytes) gathered in blocks on XLA CPU: below it the data fits the cache and the "
        "plain gather wins. " + _NOTES + "blocked-gather.md",
    ),
    Option(
        "blocked_gather_elements_forward_avx512",
        False,
        "On an AVX-512 host the CPU forward runs in blocks too (the gradient always does); off, the plain "
        "gather, which is faster there. " + _NOTES + "blocked-gather.md",
    ),
    Option(
        "blocked_gather_elements_gpu_gradient_min_bytes",
        2**25,
        "Off the CPU, smallest data whose gradient runs in blocks (from it the blocks win on an H100), with "
        "ordered_gather_gradients off. " + _NOTES + "blocked-gather.md",
    ),
    Option(
        "blocked_gather_elements_gpu_forward_min_bytes",
        2**26,
        "Off the CPU, smallest data whose forward runs in blocks (from it the blocks win on an H100). "
        + _NOTES
        + "blocked-gather.md",
    ),
    Option(
        "blocked_gather_elements_min_axis",
        32,
        "Shortest gathered axis that runs in blocks (shorter, the plain gather wins). " + _NOTES + "blocked-gather.md",
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
        "Rows are used while fewer elements follow the axis (at this many, rows and elements are equal). "
        + _NOTES
        + "gather-gradient.md",
    ),
    Option(
        "gather_index_apart",
        True,
        "On XLA CPU gather normalises signed or 64-bit indices once, apart from the gather's loop, "
        "instead of once per element read. " + _NOTES + "gather-index-apart.md",
    ),
    Option(
        "gather_index_apart_min_reuse",
        16,
        "Fewest elements read per index for that (below it the extra conditional costs more than it saves). "
        + _NOTES
        + "gather-index-apart.md",
    ),
    Option(
        "ordered_gather_gradients",
        True,
        "The gradients of gather, gather_elements and gather_nd add their cotangent into the data in "
        "its row-major order, as scatter's add reduction does, on every platform and device count (one "
        "XLA CPU device: JAX's in-order scatter); off, JAX's transposes, in no fixed order off one CPU "
        "device. " + _NOTES + "gather-gradient.md",
    ),
    Option(
        "gather_gpu_flat_tangent",
        True,
        "With ordered_gather_gradients off, on one CUDA GPU gather's gradient is one 1-D scatter-add at flat "
        "positions. " + _NOTES + "gather-gradient.md",
    ),
    Option(
        "gather_gpu_flat_tangent_max_inner",
        32,
        "The flat gradient is used while fewer elements follow the axis... " + _NOTES + "gather-gradient.md",
    ),
    Option(
        "gather_gpu_flat_tangent_bytes_per_inner",
        2**23,
        "...and from this many cotangent bytes per element after the axis. " + _NOTES + "gather-gradient.md",
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
        "Smallest tensor whose tiles run in two passes on XLA CPU (the crossover lies between 16 and 32 MiB). "
        + _NOTES
        + "tiled-transpose.md",
    ),
    Option(
        "index_check_two_stage_min_size",
        2**21,
        "From this many indices the eager range check reduces in two stages on XLA CPU (below it one stage "
        "wins). " + _NOTES + "index-checks.md",
    ),
    Option(
        "index_check_two_stage_min_row",
        16,
        "The shortest last axis that reduces in two stages. " + _NOTES + "index-checks.md",
    ),
    Option(
        "index_check_pinned_host",
        True,
        "On a GPU the eager range check writes its two scalars to pinned host memory. " + _NOTES + "index-checks.md",
    ),
    Option(
        "philox_flat_rows",
        True,
        "Off the CPU a multi-dimensional Philox output is one flat run of elements. " + _NOTES + "philox-layout.md",
    ),
    Option(
        "philox_short_row",
        16,
        "On XLA CPU unaligned rows shorter than this compute each element's block; from it on the block "
        "grid wins. " + _NOTES + "philox-layout.md",
    ),
    Option(
        "cpu_ordered_scatter",
        True,
        "On one XLA CPU device a float scatter reduction (add; mul on real floats) is one XLA scatter, "
        "which combines duplicates in ONNX's order there (far faster than the rounds). "
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
        "ordered_fold_kernel",
        PALLAS_TRITON_CURRENT,
        "On a CUDA GPU the sorted fold's steps run in one Pallas (Triton) kernel, one lane per run, instead "
        "of one while-loop iteration per step. Default: on with jax < 0.11, off from 0.11, which deprecates "
        "Pallas' Triton backend (the lax form, the same bits). " + _NOTES + "ordered-reductions.md",
    ),
    Option(
        "ordered_fold_kernel_interpret",
        False,
        "With ordered_fold_kernel, the sorted fold runs its CUDA formulation (one sort, the Pallas kernel) on "
        "every platform, the kernel in Pallas' interpret mode: slow, the same bits; for tests and for timing the GPU "
        "formulation's growth on a CPU. " + _NOTES + "ordered-reductions.md",
    ),
    Option(
        "cpu_float_top_k",
        True,
        "On XLA CPU top_k of float32 (and of the types float32 holds exactly) runs on float32 keys of the "
        "same order, which XLA CPU's fast TopK takes; integer keys make it sort whole rows. "
        + _NOTES
        + "top-k-keys.md",
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
        "(faster than a select on n % 4). " + _NOTES + "philox-layout.md",
    ),
    Option(
        "cpu_wide_vectors",
        True,
        "Eager Philox calls on an AVX-512 host run a twin compiled with 512-bit vectors. " + _NOTES + "vector-width.md",
    ),
)


class _Fallback:
    """A stand-in for `jax.make_user_context` on a jax without it: thread-local values over a global one.

    Without JAX's user contexts the options are not part of the jit key: a function compiled
    before an option changed keeps the formulation it was traced with (see `Config`).
    """

    def __init__(self, default: Any) -> None:
        self._global = default
        self._local = threading.local()

    @property
    def value(self) -> Any:
        return getattr(self._local, "value", self._global)

    def set_global(self, value: Any) -> None:
        self._global = value

    @contextlib.contextmanager
    def __call__(self, value: Any) -> Iterator[None]:
        missing = object()
        before = getattr(self._local, "value", missing)
        self._local.value = value
        try:
            yield
        finally:
            if before is missing:
                del self._local.value
            else:
                self._local.value = before


def _jit_keyed(default: Any) -> Any:
    """A value that is part of every `jax.jit` cache key: set for the process or, in a block, for one thread.

    JAX's own options work so (``include_in_jit_key``); `jax.make_user_context` makes one for a
    library. Where this jax lacks it, `_Fallback` keeps the thread-local semantics only.
    """
    make = getattr(jax, "make_user_context", None)
    return make(default_value=default) if make is not None else _Fallback(default)


class Config:
    """dmljax's formulation switches and thresholds, read as attributes (``dmljax.config.<name>``).

    `update` sets one for the process, `override` some for a ``with`` block in the calling
    thread, `values` reads all and `help` says what one decides; ``DMLJAX_<NAME>``
    environment variables set them at import. The options are part of the key of every
    `jax.jit` cache, as ``jax.config`` options are: a function traced before an option
    changed is traced again when called with the new value, and traced functions of your
    program are not flushed. Assigning an attribute is refused: use `update` or `override`.

    Examples:
      >>> import dmljax
      >>> dmljax.config.tiled_transpose, dmljax.config.philox_short_row
      (True, 16)
      >>> dmljax.config.tiled_transpose = False
      Traceback (most recent call last):
      ...
      AttributeError: dmljax.config options are not set by assignment; use dmljax.config.update(...) ...
    """

    def __init__(self, options: tuple[Option, ...], environ: Mapping[str, str] = os.environ) -> None:
        values = {option.name: option.default for option in options}
        for option in options:
            if option.env in environ:
                values[option.name] = option.parse(environ[option.env])
        object.__setattr__(self, "_options", {option.name: option for option in options})
        object.__setattr__(self, "_position", {option.name: i for i, option in enumerate(options)})
        # The process-wide values, and one thread's overrides in `override` blocks (name, value) pairs.
        object.__setattr__(self, "_global", _jit_keyed(tuple(values.items())))
        object.__setattr__(self, "_local", _jit_keyed(()))

    def __getattr__(self, name: str) -> Any:
        options = self.__dict__.get("_options", {})
        if name in options:
            for key, value in self._local.value:  # the calling thread's override blocks first
                if key == name:
                    return value
            return self._global.value[self._position[name]][1]  # (name, value) pairs in OPTIONS' order
        raise AttributeError(f"dmljax.config has no option {name!r}; the options: {', '.join(options)}")

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in self._options:
            self._option(name)  # the error naming the options
        raise AttributeError(
            f"dmljax.config options are not set by assignment; use dmljax.config.update({name!r}, {value!r}) "
            f"or, for a block, with dmljax.config.override({name}={value!r})."
        )

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"dmljax.config options cannot be deleted; got del dmljax.config.{name}.")

    def __dir__(self) -> list[str]:
        return [*super().__dir__(), *self._options]

    def _option(self, name: str) -> Option:
        if name not in self._options:
            raise AttributeError(f"dmljax.config has no option {name!r}; the options: {', '.join(self._options)}")
        return self._options[name]

    def values(self) -> dict[str, bool | int]:
        """Every option's current value in this thread: its `override` blocks over the process-wide values."""
        return {**dict(self._global.value), **dict(self._local.value)}

    def help(self, name: str) -> str:
        """What option ``name`` decides, its default and its environment variable."""
        option = self._option(name)
        return f"{option.name} (default {option.default!r}, {option.env}): {option.help}"

    def update(self, name: str, value: bool | int) -> None:
        """Set option ``name`` for the process (every thread outside its `override` blocks).

        Functions traced with the old value are traced again on their next call (the options
        are part of JAX's jit cache key); nothing compiled before is flushed.

        Raises:
          AttributeError: no option is called ``name``.
          TypeError: ``value`` is not of the option's type (bool, or int >= 0).
        """
        checked = self._option(name).check(value)
        values = dict(self._global.value)
        values[name] = checked
        self._global.set_global(tuple(values.items()))

    @contextlib.contextmanager
    def override(self, **values: bool | int) -> Iterator[None]:
        """Set options for the ``with`` block in the calling thread, then restore them.

        Other threads keep their own values; `update` inside the block changes the process-wide
        value of the options not overridden here.

        Raises:
          AttributeError: no option is called so.
          TypeError: a value is not of its option's type.
        """
        checked = {name: self._option(name).check(value) for name, value in values.items()}
        with self._local(tuple({**dict(self._local.value), **checked}.items())):
            yield


config = Config(OPTIONS)
