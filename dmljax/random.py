"""DirectML's Philox stream as JAX keys: states, key functions, distributions, dropout.

As `jax.random` holds JAX's keys and draws, this module holds dmljax's: a state is the
uint32[6] that DML_RANDOM_GENERATOR reads (counter words 0..3, key words 4..5), built by
`make_state` or `state_from_tf_seed`, moved on by `advance`, split and folded by `split` and
`fold_in` (the names and meanings of `jax.random`'s), and drawn from by `random_generator`
(the operator: raw bits and the next state) or the distributions `uniform`, `normal`,
`bernoulli`, `randint` and `dropout` (TensorFlow's conversions of those bits; each returns
the values and the next state). `prng_impl`
makes the same stream a `jax.random` key implementation; `philox4x32_10` is the Random123
block function underneath.

Examples:
  >>> import dmljax
  >>> state = dmljax.random.make_state(0)
  >>> left, right = dmljax.random.split(state)
  >>> bits, state = dmljax.random.random_generator(left, (2,))
  >>> bits.dtype, state.shape
  (dtype('uint32'), (6,))
  >>> values, right = dmljax.random.uniform(right, (3,))
  >>> values.shape, values.dtype
  ((3,), dtype('float32'))
"""

from dmljax._random.distributions import bernoulli as bernoulli
from dmljax._random.distributions import normal as normal
from dmljax._random.distributions import randint as randint
from dmljax._random.distributions import uniform as uniform
from dmljax._random.dropout import dropout as dropout
from dmljax._random.generator import make_state as make_state
from dmljax._random.generator import random_generator as random_generator
from dmljax._random.keys import advance as advance
from dmljax._random.keys import fold_in as fold_in
from dmljax._random.keys import split as split
from dmljax._random.philox import philox4x32_10 as philox4x32_10
from dmljax._random.prng_impl import prng_impl as prng_impl
from dmljax._random.tf_seed import state_from_tf_seed as state_from_tf_seed

__all__ = [
    "advance",
    "bernoulli",
    "dropout",
    "fold_in",
    "make_state",
    "normal",
    "philox4x32_10",
    "prng_impl",
    "randint",
    "random_generator",
    "split",
    "state_from_tf_seed",
    "uniform",
]
