"""`prng_impl`: a `jax.random` PRNG implementation whose key data is the uint32[6] Philox state.

Every ``jax.random`` function but ``poisson`` (``uniform``, ``normal``, ``permutation``,
``categorical``...; JAX keeps ``poisson`` to threefry) and everything built on them (Flax
``nnx.Rngs``/``nnx.Dropout``, Equinox ``eqx.nn.Dropout``) then draws from DirectML's
Philox stream. Importing dmljax registers the implementation with JAX under `NAME`
(`register`; docs/design/prng-registration.md), so names resolve too:

=========================================  ============================================
``jax.random``                             dmljax
=========================================  ============================================
``key(seed, impl=prng_impl)``              key data ``make_state(seed)``; ``impl=NAME`` too
``wrap_key_data(state, impl=prng_impl)``   the key whose data is ``state``
``bits(key, shape, uint32)``               ``random_generator(state, shape)[0]``
``bits(key, shape, uint8 / uint16)``       the low 8 / 16 bits of those words (one word each)
``bits(key, shape, uint64)`` (x64)         ``w[2i] | w[2i+1] << 32`` (low word first, as TensorFlow)
``split(key, num)`` / ``fold_in(key, d)``  ``dmljax.random.split(state, num)`` / ``dmljax.random.fold_in(state, d)``
=========================================  ============================================

A key does not advance: like every JAX key, drawing twice from it gives the same bits;
split or fold in to get new ones. The values of ``jax.random.uniform`` and kin are
JAX's conversions of these bits, not TensorFlow's; dmljax's own distributions
(`dmljax.random.uniform`, ...) are TensorFlow's. With x64 off JAX narrows a Python seed to 32
bits before the implementation sees it; for a 64-bit seed, wrap ``make_state(seed)``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import jax
import jax.extend
import jax.numpy as jnp
import numpy as np
from jax import lax

from dmljax._core import jax_compat
from dmljax._core.errors import fail
from dmljax._core.limits import MAX_DIMENSIONS, MAX_TENSOR_ELEMENTS
from dmljax._random import vector_width
from dmljax._random.generator import STATE_WORDS, advance_state, make_state, random_generator, to_words
from dmljax._random.keys import FOLD_IN_TAG, SPLIT_TAG, derive

__all__ = ["prng_impl"]

_UINT = {8: jnp.uint8, 16: jnp.uint16, 32: jnp.uint32, 64: jnp.uint64}
# A child's index is one 32-bit word of its derivation (`dmljax.random.split`): at most 2^32 children.
MAX_SPLIT_KEYS = 2**32
# Words per `random_generator` call when one ``jax.random`` output needs more than DirectML's
# 2^32 - 1: a multiple of 4, so that chunk j starts at block ``counter + j * CHUNK_WORDS / 4``.
CHUNK_WORDS = 2**31

# JAX calls the callbacks below eagerly outside `jax.jit` (jax/_src/random/prng.py: the
# primitives' impl rules call ``impl.split(key, shape)`` and kin on concrete arrays), so each
# calls a jitted function with static shapes, as JAX's threefry's do: one cached dispatch per
# call. The callbacks themselves are plain module-level functions: a pickled key array holds
# its implementation, whose functions pickle by their module and name.


def _seed(seed: jax.Array) -> jax.Array:
    return _seed_jit(seed)


_seed_jit = jax.jit(make_state)


def _split(state: jax.Array, shape: tuple[int, ...]) -> jax.Array:
    shape = _dims(shape)
    if not isinstance(math.prod(shape), int):  # a `jax.export` symbolic count: checked by nobody (guide)
        return _split_jit.__wrapped__(state, shape)  # type: ignore[attr-defined]
    if math.prod(shape) > MAX_SPLIT_KEYS:
        rule = "ask for at most 2**32 keys (a child's index is one 32-bit word)"
        raise fail("jax.random.split with dmljax.random.prng_impl", "shape", rule, shape, f"{math.prod(shape)} keys")
    return _split_jit(state, shape)


@functools.partial(jax.jit, static_argnums=1)
def _split_jit(state: jax.Array, shape: tuple[int, ...]) -> jax.Array:
    children = derive(state, lax.broadcasted_iota(jnp.uint32, (math.prod(shape),), 0), SPLIT_TAG)
    return children.reshape(*shape, STATE_WORDS)


def _fold_in(state: jax.Array, data: int) -> jax.Array:
    return _fold_in_jit(state, data)


@jax.jit
def _fold_in_jit(state: jax.Array, data: jax.Array) -> jax.Array:
    return derive(state, jnp.asarray(data).astype(jnp.uint32), FOLD_IN_TAG)


def _dims(shape: tuple[Any, ...]) -> tuple[Any, ...]:
    """``shape`` with ints as Python ints; `jax.export` symbolic sizes kept as they are."""
    return tuple(d if jax.export.is_symbolic_dim(d) else int(d) for d in shape)


def _random_bits(state: jax.Array, bit_width: int, shape: tuple[int, ...]) -> jax.Array:
    shape = _dims(shape)
    return vector_width.call(_random_bits_plain, _random_bits_wide, state, bit_width, shape)


def _random_bits_fn(state: jax.Array, bit_width: int, shape: tuple[int, ...]) -> jax.Array:
    if bit_width == 64:
        pairs = _words(state, (*shape, 2)).astype(jnp.uint64)
        return pairs[..., 0] | pairs[..., 1] << np.uint64(32)
    return _words(state, shape).astype(_UINT[bit_width])


# The plain twin, and the one compiled with 512-bit vectors for eager calls on AVX-512 CPUs (`vector_width`).
_random_bits_plain, _random_bits_wide = vector_width.twin_jit(_random_bits_fn, static_argnums=(1, 2))


def _words(state: jax.Array, shape: tuple[int, ...], chunk: int = CHUNK_WORDS) -> jax.Array:
    """The first ``prod(shape)`` words of the state's stream in ``shape`` (any rank and size, zero included).

    Up to 2^32 - 1 words this is `random_generator`; past DirectML's limit, ``chunk``-word
    calls from the states ``advance(state, j * chunk / 4)``, concatenated: the same words,
    since word ``n`` is word ``n % 4`` of block ``counter + n // 4`` (128-bit counter).
    """
    n = math.prod(shape)
    if not isinstance(n, int):  # a `jax.export` symbolic size: one call, unchecked (guide)
        return random_generator(state, shape)[0] if len(shape) <= MAX_DIMENSIONS else _flat_words(state, shape)
    if n == 0:
        return jnp.zeros(shape, jnp.uint32)
    if n > min(chunk, MAX_TENSOR_ELEMENTS):
        return _chunked_words(state, n, chunk).reshape(shape)
    if 1 <= len(shape) <= MAX_DIMENSIONS:
        return random_generator(state, shape)[0]
    return _flat_words(state, shape)


def _flat_words(state: jax.Array, shape: tuple[int, ...]) -> jax.Array:
    return random_generator(state, (math.prod(shape),))[0].reshape(shape)


def _chunked_words(state: jax.Array, n: int, chunk: int) -> jax.Array:
    """``n`` words of the stream as ``ceil(n / chunk)`` calls of ``chunk`` words (a multiple of 4) each."""
    whole, rest = divmod(n, chunk)
    offsets = np.stack([to_words("jax.random.bits", "offset", j * chunk // 4, 4) for j in range(whole + 1)])
    states = jax.vmap(advance_state, in_axes=(None, 0))(state, jnp.asarray(offsets))
    parts = [jax.vmap(lambda s: random_generator(s, (chunk,))[0])(states[:whole]).reshape(whole * chunk)]
    if rest:
        parts.append(random_generator(states[whole], (rest,))[0])
    return jnp.concatenate(parts) if len(parts) > 1 else parts[0]


# The name JAX knows the implementation by (`register`), and its tag (``str(impl)``, the key
# dtype's ``key<...>``): checkpoints store it (orbax writes ``str(jax.random.key_impl(key))``),
# so it must never change.
NAME = "dmljax_philox4x32_10"
# The tag of releases before NAME was the tag too: registered as an alias, so that
# checkpoints which stored it (``impl="dml"``) still restore.
OLD_NAMES = ("dml",)

# The PRNG implementation; pass it as ``impl=`` to ``jax.random.key`` or ``wrap_key_data``.
# JAX accepts only its own PRNGSpec type here (``type(spec) is PRNGSpec``), so the
# documentation is this attribute docstring (the API reference shows it), not a class's.
prng_impl = jax.extend.random.define_prng_impl(
    key_shape=(STATE_WORDS,),
    seed=_seed,
    split=_split,
    random_bits=_random_bits,
    fold_in=_fold_in,
    name=NAME,
    tag=NAME,
)
"""A `jax.random` PRNG implementation on DirectML's Philox 4x32-10 stream; key data is the state.

Pass it as ``impl=`` to `jax.random.key` or `jax.random.wrap_key_data`. A key's data is
the uint32[6] state of `make_state` (128-bit counter, 64-bit key), so every
``jax.random`` function, and every library built on them (Flax ``nnx.Rngs`` and
``nnx.Dropout``, Equinox ``eqx.nn.Dropout``), draws from the bits of DML_RANDOM_GENERATOR
(https://learn.microsoft.com/en-us/windows/win32/api/directml/ns-directml-dml_random_generator_operator_desc):

- ``jax.random.key(seed, impl=prng_impl)``: the key whose data is ``make_state(seed)``
  (with x64 off JAX narrows a Python seed to 32 bits first; for a 64-bit seed wrap
  ``make_state(seed)``).
- ``jax.random.bits(key, shape, jnp.uint32)`` is ``random_generator(state, shape)[0]``;
  uint8 / uint16 bits are the low 8 / 16 bits of one word each; uint64 bits (x64) two
  words each, ``w[2i] | w[2i+1] << 32`` (low word first, as TensorFlow).
- ``jax.random.split(key, num)`` and ``jax.random.fold_in(key, data)`` are the keys of
  `split` and `fold_in` on the state; a split into more than 2^32 keys (``num`` or the
  product of a shape) raises `dmljax.ValidationError` (a child's index is one 32-bit word).
- Outputs of any size: past DirectML's 2^32 - 1 words per tensor, the words go on along
  the same stream (word ``n`` of block ``counter + n // 4``, 128-bit counter).
- Registered with JAX under the name ``"dmljax_philox4x32_10"`` when dmljax is imported,
  which is its tag too (key dtype ``key<dmljax_philox4x32_10>``):
  ``jax.random.key(seed, impl="dmljax_philox4x32_10")``, the ``jax_default_prng_impl``
  option, and checkpoints that store the name (Orbax) resolve it; so does the earlier tag
  ``"dml"``, which older checkpoints stored. Key arrays pickle.
- ``jax.export`` with symbolic shapes works (sizes unchecked: at most 2^32 - 1 words and
  2^32 keys at call time); serialise functions that take key data, not keys
  (``Exported.serialize`` knows the key types of JAX's own implementations only).
- ``jax.random.poisson`` raises ``NotImplementedError``: JAX allows only threefry2x32 keys.

A key does not advance: drawing twice from it gives the same bits; split or fold in.
``jax.random.uniform``, ``normal`` and kin are JAX's conversions of these bits, not
TensorFlow's; dmljax's own distributions (`uniform`, `normal`, ...) are TensorFlow's.

Examples:
  >>> key = jax.random.key(42, impl=dmljax.random.prng_impl)
  >>> bits = jax.random.bits(key, (4,), jnp.uint32)
  >>> bool(jnp.all(bits == dmljax.random.random_generator(dmljax.random.make_state(42), (4,))[0]))
  True
  >>> jax.random.key_data(jax.random.key(7, impl=dmljax.random.prng_impl)).tolist()
  [0, 0, 0, 0, 7, 0]
  >>> jax.random.key_impl(key)
  'dmljax_philox4x32_10'
"""


def register(spec: object = prng_impl) -> bool:
    """Make JAX resolve `NAME` (and `OLD_NAMES`) to ``spec``, and accept it as ``jax_default_prng_impl``.

    Returns whether it could.

    JAX has no public registry for implementations of other libraries, so this takes the
    least private route (docs/design/prng-registration.md): the ``prngs`` table its own
    implementations register in (then ``key(0, impl=NAME)``, ``wrap_key_data`` and
    checkpoints that stored the name resolve it), and the config parser, widened by this
    one name. Additive only: every name JAX accepted before still means what it meant.
    Returns False, changing nothing, where this JAX has moved either.
    """
    if not (jax_compat.available("prng_table") and jax_compat.available("default_prng_impl_holder")):
        return False
    try:
        impl = spec._impl  # type: ignore[attr-defined]
        holder = jax_compat.default_prng_impl_holder
        jax_parser: Callable[[object], object] | None = holder._parser
    except AttributeError:
        return False
    if jax_parser is None:
        return False
    names = (impl.name, *OLD_NAMES)
    if any(jax_compat.prng_table.setdefault(name, impl) is not impl for name in names):
        return False
    if getattr(jax_parser, "accepts", None) != names:

        def parser(value: object) -> object:
            return value if value in names else jax_parser(value)

        parser.accepts = names  # type: ignore[attr-defined]
        holder._parser = parser
    return True


register()
