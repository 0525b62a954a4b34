"""Benchmark cases for eager key handling: ``jax.random`` calls on dmljax keys outside `jax.jit`.

What a JAX user's Python loop pays per call: ``jax.random.key``, ``split``, ``fold_in``
and ``bits`` called eagerly (not inside `jax.jit`), a 100-step ``key, sub = split(key)``
loop as Equinox training loops write it, and, with Flax installed, building an NNX model
of 12 ``nnx.Linear`` + ``nnx.Dropout`` layers (every parameter draws from ``nnx.Rngs``,
one eager ``fold_in`` and one sampler call each). Contenders: dmljax's `prng_impl` and
JAX's default ``threefry2x32`` (the reference for ratios: what a JAX user switches from).

Only ``bits`` depends on the size asked for (``bytes // 4`` words); the other cases are
the same at every size, so each size measures them again.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp

from dmljax._random.prng_impl import prng_impl
from dmljax.bench._harness import Case

__all__ = ["cases", "DEFAULT_SIZES", "LOOP_STEPS", "NNX_LAYERS"]

DEFAULT_SIZES = (4 * 2**10,)
_KEY_WORDS = 6  # a dmljax key's data: the uint32[6] state
REFERENCE = "jax threefry"
_IMPLS: dict[str, Any] = {"dmljax prng_impl": prng_impl, REFERENCE: "threefry2x32"}
# Steps of the split loop, and layers (Linear + Dropout each) of the NNX model.
LOOP_STEPS = 100
NNX_LAYERS = 12
_NNX_WIDTH = 64


def _split_loop(key: jax.Array, steps: int = LOOP_STEPS) -> jax.Array:
    for _ in range(steps):
        key, sub = jax.random.split(key)
    return sub


def _nnx_model(impl: Any) -> Any:
    """Build the NNX model from ``nnx.Rngs`` of ``impl``'s key 0 (raises ImportError without Flax)."""
    from flax import nnx

    rngs = nnx.Rngs(jax.random.key(0, impl=impl))
    layers = []
    for _ in range(NNX_LAYERS):
        layers += [nnx.Linear(_NNX_WIDTH, _NNX_WIDTH, rngs=rngs), nnx.Dropout(0.1, rngs=rngs)]
    return nnx.Sequential(*layers)


def _nnx_available() -> bool:
    try:
        import flax.nnx  # noqa: F401
    except ImportError:
        return False
    return True


def cases(sizes_bytes: Sequence[int] = DEFAULT_SIZES) -> list[Case]:
    """Per size: eager key, split, fold_in (labelled with the key data they work on: 6 words),
    bits of ``bytes // 4`` words, the split loop, and the NNX model if Flax is there.

    Examples:
      >>> [case.name for case in cases([4096])][:5]  # doctest: +NORMALIZE_WHITESPACE
      ['eager jax.random.key, key data (6)', 'eager jax.random.split, key data (6)',
       'eager jax.random.fold_in, key data (6)', 'eager jax.random.bits n=1024',
       'eager 100-step key, sub = split(key), key data (6)']
      >>> list(cases([4096])[0].contenders), cases([4096])[0].group, cases([4096])[0].tensor_bytes
      (['dmljax prng_impl', 'jax threefry'], 'keys', 24)
    """
    out = []
    for size in sizes_bytes:
        n = max(1, size // 4)
        for what, nbytes, make in _calls(n):
            sized_by_n = what.endswith(f"n={n}")
            contenders = {name: make(impl) for name, impl in _IMPLS.items()}
            name = what if sized_by_n else f"{what}, key data ({_KEY_WORDS})"
            tensor = 4 * n if sized_by_n else 4 * _KEY_WORDS
            out.append(Case("keys", name, nbytes, contenders, REFERENCE, tensor_bytes=tensor))
    return out


Make = Callable[[Any], Callable[[], Any]]


def _calls(n: int) -> list[tuple[str, int, Make]]:
    """(case name, bytes moved, impl -> zero-argument call) of each case; ``n`` words for ``bits``."""
    data = jnp.uint32(12345)  # a device scalar, as a loop's step counter is
    key_bytes = 4 * _KEY_WORDS  # dmljax's key data (threefry's is 8 bytes)

    def key_of(impl: Any) -> jax.Array:
        return jax.random.key(0, impl=impl)

    calls: list[tuple[str, int, Make]] = [
        ("eager jax.random.key", key_bytes, lambda impl: functools.partial(jax.random.key, 7, impl=impl)),
        ("eager jax.random.split", 3 * key_bytes, lambda impl: functools.partial(jax.random.split, key_of(impl))),
        (
            "eager jax.random.fold_in",
            2 * key_bytes,
            lambda impl: functools.partial(jax.random.fold_in, key_of(impl), data),
        ),
        (
            f"eager jax.random.bits n={n}",
            4 * n,
            lambda impl: functools.partial(jax.random.bits, key_of(impl), (n,), jnp.uint32),
        ),
        (
            f"eager {LOOP_STEPS}-step key, sub = split(key)",
            LOOP_STEPS * 3 * key_bytes,
            lambda impl: functools.partial(_split_loop, key_of(impl)),
        ),
    ]
    if _nnx_available():
        name = f"nnx {NNX_LAYERS} x (Linear {_NNX_WIDTH} + Dropout)"
        calls.append((name, NNX_LAYERS * 4 * (_NNX_WIDTH + 1) * _NNX_WIDTH, _nnx_params))
    return calls


def _nnx_params(impl: Any) -> Callable[[], Any]:
    """Build the model; return its parameters (arrays, so that the harness waits for them)."""

    def build() -> Any:
        from flax import nnx

        return nnx.state(_nnx_model(impl), nnx.Param)

    return build
