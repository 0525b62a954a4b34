"""dmljax against TensorFlow's stateless Philox outputs stored as constants (no TensorFlow needed).

`tests/tf_known_answers.py` holds what TensorFlow 2.21's CPU kernels return for a few
seeds (int32, negative, extreme and int64 ones) and shapes; ``python
scripts/tf_known_answers.py`` regenerates it. The same comparisons against a live
TensorFlow run in `tests/test_tf_seed.py` when the ``tf`` extra is installed.
"""

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from jax import lax

from dmljax.random import dropout, normal, randint, random_generator, state_from_tf_seed, uniform
from tests import tf_known_answers as known

# Unsigned views of each dtype's bits (the constants are bit patterns).
BITS = {"float16": np.uint16, "bfloat16": np.uint16, "float32": np.uint32, "float64": np.uint64}
BITS |= {"uint32": np.uint32, "int32": np.uint32, "int64": np.uint64}
NUMPY = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16, "float32": np.float32, "float64": np.float64}
SEED_IDS = [f"seed={list(seed)}-shape={shape}" for seed, shape in known.CASES]

# float32 normals: dmljax forms each step of TensorFlow's Box-Muller in TensorFlow's
# precision (the angle in double, rounded once), but XLA's log, sin and cos are not the C
# library's that TensorFlow's kernel calls, so a few values differ in their last bits:
# the bounds the docs promise (about 93% exact over 500,000 values of 5 seeds).
NORMAL_FLOAT32_MAX_ULPS_OF_ONE = 4  # |dmljax - TensorFlow| <= 4 ulp of max(|x|, 1)
NORMAL_FLOAT32_MIN_EXACT_FRACTION = 0.9


def want_bits(op: str, dtype: str, seed, shape) -> np.ndarray:
    """TensorFlow's values for one case, as the unsigned bits of ``dtype``, row-major."""
    return np.array(known.values(known.OUTPUTS[op, dtype, seed, shape]), np.uint64).astype(BITS[dtype])


def bits_of(values: jax.Array, dtype: str) -> np.ndarray:
    return np.asarray(values).reshape(-1).view(BITS[dtype])


@pytest.mark.parametrize("seed", [seed for seed, _ in known.CASES], ids=str)
def test_state_is_tensorflows_key_and_counter(seed):
    key, counter_low, counter_high = known.KEY_COUNTER[seed]
    words = [int(w) for w in state_from_tf_seed(list(seed))]
    # state = (counter as four little-endian words, key as two): TensorFlow's uint64 key and counter split in halves
    halves = [v >> shift & 0xFFFFFFFF for v in (counter_low, counter_high, key) for shift in (0, 32)]
    assert words == halves


@pytest.mark.parametrize(("seed", "shape"), known.CASES, ids=SEED_IDS)
def test_full_range_ints_are_tensorflows_philox_words(seed, shape):
    state = state_from_tf_seed(list(seed))
    words, _ = random_generator(state, shape)
    np.testing.assert_array_equal(bits_of(words, "uint32"), want_bits("full_int", "uint32", seed, shape))
    as_int32 = lax.bitcast_convert_type(words, jnp.int32)
    np.testing.assert_array_equal(bits_of(as_int32, "int32"), want_bits("full_int", "int32", seed, shape))
    # int64: two words per value, the first one low (TensorFlow's UniformFullIntDistribution64)
    pairs = np.asarray(random_generator(state, (2 * int(np.prod(shape)),))[0]).astype(np.uint64)
    np.testing.assert_array_equal(
        pairs[0::2] | pairs[1::2] << np.uint64(32), want_bits("full_int", "int64", seed, shape)
    )


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize(("seed", "shape"), known.CASES, ids=SEED_IDS)
def test_uniform_is_tensorflows_bit_for_bit(seed, shape, dtype, x64):
    got, _ = uniform(state_from_tf_seed(list(seed)), shape, dtype)
    assert got.dtype == NUMPY[dtype] and got.shape == shape
    np.testing.assert_array_equal(bits_of(got, dtype), want_bits("uniform", dtype, seed, shape))


@pytest.mark.parametrize("dtype", ["int32", "int64"])
@pytest.mark.parametrize(("seed", "shape"), known.CASES, ids=SEED_IDS)
def test_randint_is_tensorflows(seed, shape, dtype, x64):
    minval, maxval = known.RANGES[dtype]
    got, _ = randint(state_from_tf_seed(list(seed)), shape, minval, maxval, dtype)
    want = np.array(known.values(known.OUTPUTS["randint", dtype, seed, shape]), dtype)
    assert got.dtype == dtype and got.shape == shape
    np.testing.assert_array_equal(np.asarray(got).reshape(-1), want)
    assert want.min() >= minval and want.max() < maxval


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float64"])
@pytest.mark.parametrize(("seed", "shape"), known.CASES, ids=SEED_IDS)
def test_normal_is_tensorflows_bit_for_bit(seed, shape, dtype, x64):
    """float16 and bfloat16 round a float32 Box-Muller value; float64 computes in doubles: all exact today."""
    got, _ = normal(state_from_tf_seed(list(seed)), shape, dtype)
    np.testing.assert_array_equal(bits_of(got, dtype), want_bits("normal", dtype, seed, shape))


def ulps_of_one(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """``|got - want|`` in float32 ulps of ``max(|want|, 1)``."""
    scale = np.maximum(np.abs(want.astype(np.float64)), 1.0)
    return np.abs(got.astype(np.float64) - want.astype(np.float64)) / 2.0 ** (np.floor(np.log2(scale)) - 23)


@pytest.mark.parametrize("op", ["normal", "normal_mean_stddev"])
def test_normal_float32_is_tensorflows_but_for_the_last_bits_of_log_sin_cos(op, cpu):
    """Within 4 ulp of max(|x|, 1) everywhere, and at least 90% exact (XLA CPU)."""
    exact = total = 0
    mean, stddev = known.NORMAL_MEAN_STDDEV if op == "normal_mean_stddev" else (0.0, 1.0)
    for seed, shape in known.CASES:
        got = np.asarray(normal(state_from_tf_seed(list(seed)), shape, jnp.float32, mean, stddev)[0]).reshape(-1)
        want = want_bits(op, "float32", seed, shape).view(np.float32)
        distance = ulps_of_one(got, want)
        assert distance.max() <= NORMAL_FLOAT32_MAX_ULPS_OF_ONE, f"seed={list(seed)}: {distance.tolist()}"
        exact, total = exact + int(np.sum(got == want)), total + got.size
    assert exact / total >= NORMAL_FLOAT32_MIN_EXACT_FRACTION, (
        f"{exact} of {total} float32 normals exactly TensorFlow's"
    )


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float64"])
@pytest.mark.parametrize(("seed", "shape"), known.CASES, ids=SEED_IDS)
def test_normal_with_mean_and_stddev_is_tensorflows_bit_for_bit(seed, shape, dtype, x64):
    """``z * stddev + mean`` rounds twice, as TensorFlow's Mul and AddV2 kernels do (no FMA)."""
    mean, stddev = known.NORMAL_MEAN_STDDEV
    got, _ = normal(state_from_tf_seed(list(seed)), shape, dtype, mean, stddev)
    np.testing.assert_array_equal(bits_of(got, dtype), want_bits("normal_mean_stddev", dtype, seed, shape))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize(("seed", "shape"), known.CASES, ids=SEED_IDS)
def test_uniform_on_a_range_is_tensorflows_bit_for_bit(seed, shape, dtype, x64):
    """``u * (maxval - minval) + minval`` rounds twice, as TensorFlow's Mul and AddV2 kernels do (no FMA)."""
    minval, maxval = known.UNIFORM_RANGE
    got, _ = uniform(state_from_tf_seed(list(seed)), shape, dtype, minval, maxval)
    np.testing.assert_array_equal(bits_of(got, dtype), want_bits("uniform_range", dtype, seed, shape))


@pytest.mark.parametrize("rate", known.DROPOUT_RATES)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize(("seed", "shape"), known.CASES, ids=SEED_IDS)
def test_dropout_is_tensorflows_bit_for_bit(seed, shape, dtype, rate, x64):
    """A Python rate: the mask ``u >= rate`` and the scale ``1 / (1 - rate)`` formed in double, rounded once."""
    x = jnp.full(shape, known.DROPOUT_X, dtype)
    got, _ = dropout(state_from_tf_seed(list(seed)), x, rate)
    np.testing.assert_array_equal(bits_of(got, dtype), want_bits(f"dropout_{rate}", dtype, seed, shape))
