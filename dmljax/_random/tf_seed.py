"""`state_from_tf_seed`: the Philox key and counter that TensorFlow's stateless ops derive from a seed.

TensorFlow's ``tf.random.stateless_*(shape, seed=[a, b])`` first runs
``StatelessRandomGetKeyCounter`` (``GenerateKey`` in TensorFlow's
``core/kernels/stateless_random_ops.cc``): the two seed values as uint64 (int32 ones
sign-extended) make a counter ``(lo32(a), hi32(a), lo32(b), hi32(b))``, one Philox block
under the constant key ``kSeedKey`` scrambles it into ``mix``, and the generator starts
at key ``(mix0, mix1)`` and counter ``(0, 0, mix2, mix3)``. The stream from there is
DirectML's, and dmljax's distributions use TensorFlow's conversions, so
``dmljax.random.uniform(state_from_tf_seed(s), shape, dtype)`` is
``tf.random.stateless_uniform(shape, seed=s, dtype=dtype)`` (on TensorFlow's CPU and
GPU kernels, whose default algorithm is Philox; not under XLA, which picks ThreeFry).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from dmljax._core.errors import fail
from dmljax._random.philox import philox4x32_10

__all__ = ["state_from_tf_seed"]

# TensorFlow core/kernels/stateless_random_ops.cc, GenerateKey: kSeedKey = {0x3ec8f720, 0x02461e29}.
TF_SEED_KEY = (0x3EC8F720, 0x02461E29)
_OP = "state_from_tf_seed"


def state_from_tf_seed(seed: jax.typing.ArrayLike) -> jax.Array:
    """The state TensorFlow's stateless random ops start from for ``seed``, as ``uint32[6]``.

    Seeds are TensorFlow's: two integers, int32 or int64 (a Python list such as ``[1, 2]``
    is an int32 seed in TensorFlow, unless a value needs 64 bits). Values go through
    ``GenerateKey`` (module docstring); negative values are sign-extended to 64 bits, so
    an int32 and an int64 seed of the same values give the same state.

    Porting ``tf.random.experimental.stateless_split(seed, num)`` (full-range integers of
    the seed's dtype, shape ``[num, 2]``) and ``stateless_fold_in(seed, data)``
    (``[one full-range integer, data]``) for int32 seeds::

        words, _ = dmljax.random.random_generator(state_from_tf_seed(seed), (num, 2))
        new_seeds = lax.bitcast_convert_type(words, jnp.int32)                 # stateless_split
        bits = dmljax.random.random_generator(state_from_tf_seed(seed), (1,))[0]
        first = lax.bitcast_convert_type(bits[0], jnp.int32)
        folded = jnp.stack([first, jnp.int32(data)])                           # stateless_fold_in

    Args:
      seed: shape ``[2]``: a Python list or tuple of ints, a NumPy int32/int64 array (exact
        at 64 bits with x64 off), or a JAX int32 array (int64 with x64), traced allowed.

    Returns:
      uint32[6]: ``(0, 0, mix2, mix3, mix0, mix1)``.

    Raises:
      TypeError: ``seed`` is an array of a dtype other than int32 or int64.
      dmljax.ValidationError: ``seed`` is not two integers, or a value is outside int64.

    Examples:
      >>> # TensorFlow's StatelessRandomGetKeyCounter: key 0x908502c96d2f7fba, counter [0, 0xf7734320619cb60b]
      >>> [hex(int(w)) for w in state_from_tf_seed([1, 2])]
      ['0x0', '0x0', '0x619cb60b', '0xf7734320', '0x6d2f7fba', '0x908502c9']
      >>> bool(jnp.all(jax.jit(state_from_tf_seed)(jnp.array([1, 2])) == state_from_tf_seed([1, 2])))
      True
    """
    return _mix(_counter_words(seed))


def _counter_words(seed: Any) -> np.ndarray | jax.Array:
    """``(lo32(a), hi32(a), lo32(b), hi32(b))`` of the sign-extended seed values."""
    if isinstance(seed, list | tuple):
        if len(seed) != 2 or not all(isinstance(v, int | np.integer) and not isinstance(v, bool) for v in seed):
            raise fail(_OP, "seed", "be two ints", seed)
        if not all(-(2**63) <= v < 2**63 for v in seed):
            raise fail(_OP, "seed", "be two ints in [-2**63, 2**63)", seed)
        seed = np.array([int(v) for v in seed], np.int64)
    if not isinstance(seed, np.ndarray | jax.Array):
        raise fail(_OP, "seed", "be two int32 or int64 values (a list, or an array of shape (2,))", seed)
    if seed.dtype not in (np.int32, np.int64):
        raise TypeError(f"{_OP}: seed must be int32 or int64, as in TensorFlow; got seed.dtype={seed.dtype}.")
    if seed.shape != (2,):
        raise fail(_OP, "seed.shape", "be (2,)", seed.shape)
    if isinstance(seed, np.ndarray):
        values = [int(v) % 2**64 for v in seed]
        return np.array([(v >> shift) & 0xFFFFFFFF for v in values for shift in (0, 32)], np.uint32)
    unsigned = lax.bitcast_convert_type(seed, jnp.dtype(f"uint{8 * seed.dtype.itemsize}"))
    if seed.dtype == np.int64:
        low, high = unsigned.astype(jnp.uint32), (unsigned >> np.uint64(32)).astype(jnp.uint32)
    else:
        low, high = unsigned, jnp.where(seed < 0, jnp.uint32(0xFFFFFFFF), jnp.uint32(0))
    return jnp.stack([low, high], axis=-1).reshape(4)


@jax.jit
def _mix(counter: jax.Array) -> jax.Array:
    mix = philox4x32_10(jnp.asarray(counter, jnp.uint32), jnp.array(TF_SEED_KEY, jnp.uint32))
    zero = jnp.zeros((), jnp.uint32)
    return jnp.stack([zero, zero, mix[2], mix[3], mix[0], mix[1]])
