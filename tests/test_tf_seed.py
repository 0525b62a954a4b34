"""state_from_tf_seed against the oracle, and dmljax's distributions against TensorFlow's stateless ops (optional)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

from dmljax import ValidationError
from dmljax.random import normal, randint, random_generator, state_from_tf_seed, uniform
from tests import reference

SEEDS = [[0, 0], [1, 2], [-1, 5], [2**31 - 1, -(2**31)], [123456789, -987654321]]
SEEDS_64 = [[2**40 + 3, -(2**50)], [-(2**63), 2**63 - 1], [2**32, 0]]


@pytest.mark.parametrize("seed", SEEDS + SEEDS_64)
def test_matches_oracle_for_lists_and_numpy_arrays(seed):
    want = reference.state_from_tf_seed(seed)
    np.testing.assert_array_equal(state_from_tf_seed(seed), want)
    np.testing.assert_array_equal(state_from_tf_seed(np.array(seed, np.int64)), want)
    if all(-(2**31) <= v < 2**31 for v in seed):
        np.testing.assert_array_equal(state_from_tf_seed(np.array(seed, np.int32)), want)


def test_traced_int32_is_sign_extended_under_jit_and_vmap():
    seeds = jnp.array(SEEDS, jnp.int32)
    want = np.stack([reference.state_from_tf_seed(s) for s in SEEDS])
    np.testing.assert_array_equal(jax.vmap(state_from_tf_seed)(seeds), want)
    np.testing.assert_array_equal(jax.jit(state_from_tf_seed)(seeds[2]), want[2])


def test_traced_int64(x64):
    seeds = jnp.array(SEEDS_64, jnp.int64)
    want = np.stack([reference.state_from_tf_seed(s) for s in SEEDS_64])
    np.testing.assert_array_equal(jax.jit(jax.vmap(state_from_tf_seed))(seeds), want)


@pytest.mark.parametrize(
    ("seed", "error", "match"),
    [
        ([1, 2, 3], ValidationError, r"state_from_tf_seed: seed must be two ints; got seed=\[1, 2, 3\]"),
        ([1.5, 2], ValidationError, r"state_from_tf_seed: seed must be two ints; got seed=\[1.5, 2\]"),
        (
            [2**63, 0],
            ValidationError,
            r"seed must be two ints in \[-2\*\*63, 2\*\*63\); got seed=\[9223372036854775808, 0\]",
        ),
        (
            np.zeros(2, np.uint32),
            TypeError,
            r"state_from_tf_seed: seed must be int32 or int64.*; got seed.dtype=uint32",
        ),
        (
            jnp.zeros(2, jnp.float32),
            TypeError,
            r"seed must be int32 or int64, as in TensorFlow; got seed.dtype=float32",
        ),
        (
            jnp.zeros(3, jnp.int32),
            ValidationError,
            r"state_from_tf_seed: seed.shape must be \(2,\); got seed.shape=\(3,\)",
        ),
        (7, ValidationError, r"state_from_tf_seed: seed must be two int32 or int64 values .*; got seed=7"),
    ],
)
def test_bad_seed(seed, error, match):
    with pytest.raises(error, match=match):
        state_from_tf_seed(seed)


# --- TensorFlow itself (skipped when it is not installed) ---------------------------------------


@pytest.fixture(scope="module")
def tf():
    return pytest.importorskip("tensorflow")


def tf_seed(tf, seed):
    dtype = tf.int64 if any(not -(2**31) <= v < 2**31 for v in seed) else tf.int32
    return tf.constant(seed, dtype)


@pytest.mark.parametrize("seed", SEEDS + SEEDS_64)
def test_key_and_counter_are_tensorflows(tf, seed):
    key, counter = tf.raw_ops.StatelessRandomGetKeyCounter(seed=tf_seed(tf, seed))
    state = np.asarray(state_from_tf_seed(seed)).astype(np.uint64)
    assert int(key.numpy()[0]) == int(state[4] | state[5] << np.uint64(32))
    assert counter.numpy().tolist() == [int(state[0] | state[1] << 32), int(state[2] | state[3] << 32)]


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("seed", SEEDS[:3] + SEEDS_64[:1])
def test_uniform_is_tensorflows_bit_for_bit(tf, seed, dtype):
    want = tf.random.stateless_uniform([7, 5], seed=tf_seed(tf, seed), dtype=getattr(tf, dtype))
    got = uniform(state_from_tf_seed(seed), (7, 5), dtype)[0]
    np.testing.assert_array_equal(
        np.asarray(got).view(np.uint16 if dtype != "float32" else np.uint32),
        want.numpy().view(np.uint16 if dtype != "float32" else np.uint32),
    )


def test_uniform_float64_and_int64_are_tensorflows(tf, x64):
    seed = SEEDS[1]
    want = tf.random.stateless_uniform([9], seed=tf_seed(tf, seed), dtype=tf.float64)
    np.testing.assert_array_equal(uniform(state_from_tf_seed(seed), (9,), jnp.float64)[0], want.numpy())
    want = tf.random.stateless_uniform([9], seed=tf_seed(tf, seed), minval=-(2**40), maxval=2**41, dtype=tf.int64)
    got = randint(state_from_tf_seed(seed), (9,), -(2**40), 2**41, jnp.int64)[0]
    np.testing.assert_array_equal(got, want.numpy())
    seed = SEEDS_64[0]  # an int64 seed splits into int64 seeds: two words each, low word first
    words = np.asarray(random_generator(state_from_tf_seed(seed), (3, 2, 2))[0]).astype(np.uint64)
    want = tf.random.experimental.stateless_split(tf_seed(tf, seed), 3).numpy()
    np.testing.assert_array_equal((words[..., 0] | words[..., 1] << np.uint64(32)).view(np.int64), want)


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_randint_is_tensorflows(tf, seed):
    want = tf.random.stateless_uniform([11], seed=tf_seed(tf, seed), minval=-3, maxval=1000, dtype=tf.int32)
    np.testing.assert_array_equal(randint(state_from_tf_seed(seed), (11,), -3, 1000)[0], want.numpy())


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_normal_is_tensorflows_to_the_last_bits(tf, seed):
    want = tf.random.stateless_normal([6, 4], seed=tf_seed(tf, seed)).numpy()
    got = np.asarray(normal(state_from_tf_seed(seed), (6, 4))[0])
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=2e-6)


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_readme_ports_of_stateless_split_and_fold_in(tf, seed):
    state = state_from_tf_seed(seed)
    words, _ = random_generator(state, (3, 2))
    want = tf.random.experimental.stateless_split(tf_seed(tf, seed), 3).numpy()
    np.testing.assert_array_equal(lax.bitcast_convert_type(words, jnp.int32), want)
    first = lax.bitcast_convert_type(random_generator(state, (1,))[0][0], jnp.int32)
    want = tf.random.experimental.stateless_fold_in(tf_seed(tf, seed), 17).numpy()
    np.testing.assert_array_equal(jnp.stack([first, jnp.int32(17)]), want)
