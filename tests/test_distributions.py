"""Distributions: TensorFlow's word-to-value maps, statistics with fixed states, ranges, errors."""

import math

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

from dmljax import ValidationError
from dmljax.random import bernoulli, dropout, make_state, normal, randint, random_generator, uniform

STATE = make_state(0x5EED, counter=2**32 - 9)


def words(state, n: int) -> np.ndarray:
    """The first ``n`` stream words of ``state`` (whole blocks, as the distributions draw them)."""
    bits, _ = random_generator(state, (4 * -(-n // 4),))
    return np.asarray(bits)[:n]


def unit32(w: np.ndarray) -> np.ndarray:
    return ((w & 0x7FFFFF) | 0x3F800000).view(np.float32) - np.float32(1)


def blocks_moved(before, after) -> int:
    value = lambda s: sum(int(w) << (32 * i) for i, w in enumerate(np.asarray(s)[:4]))  # noqa: E731
    return value(after) - value(before)


# --- the word maps, bit for bit ---------------------------------------------------------


@pytest.mark.parametrize(
    ("dtype", "mantissa", "exponent", "view"),
    [
        (jnp.float32, 0x7FFFFF, 0x3F800000, (np.uint32, np.float32)),
        (jnp.float16, 0x3FF, 15 << 10, (np.uint16, np.float16)),
        (jnp.bfloat16, 0x7F, 127 << 7, (np.uint16, ml_dtypes.bfloat16)),
    ],
)
def test_uniform_word_map(dtype, mantissa, exponent, view):
    got, next_state = uniform(STATE, (5, 7), dtype)
    w = words(STATE, 35)
    want = ((w & mantissa) | exponent).astype(view[0]).view(view[1]) - view[1](1)
    assert got.dtype == dtype
    np.testing.assert_array_equal(np.asarray(got).reshape(-1), want)
    assert blocks_moved(STATE, next_state) == 9


def test_uniform_float64_word_map(x64):
    got, next_state = uniform(STATE, (9,), jnp.float64)
    w = words(STATE, 18).astype(np.uint64)
    bits = (w[0::2] & 0xFFFFF) << np.uint64(32) | w[1::2] | np.uint64(1023 << 52)
    np.testing.assert_array_equal(got, bits.view(np.float64) - 1)
    assert blocks_moved(STATE, next_state) == 5


def test_uniform_minval_maxval_and_range():
    got, _ = uniform(STATE, (10_000,), jnp.float32, -3.0, 5.0)
    want = unit32(words(STATE, 10_000)) * np.float32(8) + np.float32(-3)
    np.testing.assert_array_equal(got, want)
    assert -3 <= float(got.min()) and float(got.max()) < 5


def test_normal_is_box_muller_over_word_pairs():
    got, next_state = normal(STATE, (7,))
    w = words(STATE, 8)
    u1, u2 = np.maximum(unit32(w[0::2]), np.float32(1e-7)), unit32(w[1::2])
    radius, angle = np.sqrt(-2 * np.log(u1)), (np.float64(2 * np.pi) * u2.astype(np.float64)).astype(np.float32)
    want = np.stack([np.sin(angle) * radius, np.cos(angle) * radius], axis=1).reshape(-1)[:7]
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=2e-6)
    assert blocks_moved(STATE, next_state) == 2


def test_normal_float64_uses_four_words_per_pair(x64):
    got, next_state = normal(STATE, (6,), jnp.float64)
    w = words(STATE, 12).astype(np.uint64)
    unit = ((w[0::2] & 0xFFFFF) << np.uint64(32) | w[1::2] | np.uint64(1023 << 52)).view(np.float64) - 1
    u1, u2 = np.maximum(unit[0::2], 1e-7), unit[1::2]
    want = np.stack([np.sin(2 * np.pi * u2), np.cos(2 * np.pi * u2)], 1).reshape(-1) * np.repeat(
        np.sqrt(-2 * np.log(u1)), 2
    )
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert blocks_moved(STATE, next_state) == 3


@pytest.mark.parametrize(("minval", "maxval"), [(0, 10), (-5, 3), (-(2**31), 2**31 - 1), (7, 8)])
def test_randint_int32_word_map(minval, maxval):
    got, _ = randint(STATE, (3, 11), minval, maxval)
    w = words(STATE, 33).astype(np.int64)
    np.testing.assert_array_equal(np.asarray(got).reshape(-1), minval + w % (maxval - minval))
    assert got.dtype == jnp.int32


def test_randint_int64_low_word_first(x64):
    got, next_state = randint(STATE, (5,), -(2**40), 2**50, jnp.int64)
    w = [int(v) for v in words(STATE, 10)]
    want = [-(2**40) + (w[2 * i] | w[2 * i + 1] << 32) % (2**50 + 2**40) for i in range(5)]
    assert [int(v) for v in got] == want
    assert blocks_moved(STATE, next_state) == 3


# --- statistics with fixed states ------------------------------------------------------

N = 1 << 20


@pytest.mark.parametrize(("dtype", "mantissa_bits"), [(jnp.float32, 23), (jnp.float16, 10), (jnp.bfloat16, 7)])
def test_uniform_moments_and_chi_square(dtype, mantissa_bits):
    u = np.asarray(uniform(make_state(1), (N,), dtype)[0], np.float64)
    assert 0 <= u.min() and u.max() < 1
    step = 2.0**-mantissa_bits  # u is uniform on {0, step, ..., 1 - step}
    assert abs(u.mean() - (1 - step) / 2) < 0.002 and abs(u.var() - (1 - step**2) / 12) < 0.002
    counts = np.bincount((u * 64).astype(int), minlength=64)  # 64 buckets hold whole bfloat16 steps
    chi2 = float(((counts - N / 64) ** 2 / (N / 64)).sum())
    assert chi2 < 120  # df = 63: P(chi2 > 120) ~ 2e-5


def test_normal_moments():
    z = np.asarray(normal(make_state(2), (N,))[0], np.float64)
    assert abs(z.mean()) < 0.005 and abs(z.var() - 1) < 0.01
    assert abs(np.mean(z**3)) < 0.02 and abs(np.mean(z**4) - 3) < 0.05
    scaled = np.asarray(normal(make_state(2), (N,), jnp.float32, 10.0, 2.0)[0])
    np.testing.assert_allclose(scaled, 10 + 2 * z, rtol=1e-6)


def test_normal_low_precision_rounds_the_float32_result():
    z32 = normal(STATE, (64,))[0]
    for dtype in (jnp.float16, jnp.bfloat16):
        np.testing.assert_array_equal(normal(STATE, (64,), dtype)[0], z32.astype(dtype))


@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
def test_bernoulli_frequency(p):
    b, _ = bernoulli(make_state(3), p, (N,))
    assert b.dtype == jnp.bool_
    assert abs(float(b.mean()) - p) < 4 * math.sqrt(p * (1 - p) / N)


def test_bernoulli_shape_from_p_and_rule():
    p = jnp.linspace(0, 1, 12).reshape(3, 4)
    b, _ = bernoulli(STATE, p)
    np.testing.assert_array_equal(b, uniform(STATE, (3, 4))[0] < p)


def test_randint_chi_square():
    r = np.asarray(randint(make_state(4), (N,), -3, 7)[0])
    assert r.min() == -3 and r.max() == 6
    counts = np.bincount(r + 3, minlength=10)
    assert float(((counts - N / 10) ** 2 / (N / 10)).sum()) < 40  # df = 9: P(chi2 > 40) ~ 7e-6


# --- dropout ----------------------------------------------------------------------------


def test_dropout_rule_rate_and_scale():
    x = jnp.arange(1.0, N + 1.0).reshape(1024, 1024)
    y, next_state = dropout(make_state(5), x, 0.25)
    keep = np.asarray(uniform(make_state(5), x.shape)[0]) >= 0.25
    np.testing.assert_array_equal(y, np.where(keep, np.asarray(x) * np.float32(1 / 0.75), 0))
    assert abs(keep.mean() - 0.75) < 0.003
    assert blocks_moved(make_state(5), next_state) == N // 4


@pytest.mark.slow
def test_dropout_gradient_is_the_scaled_mask():
    x = jnp.linspace(-1, 1, 64)
    grad = jax.grad(lambda v: jnp.sum(dropout(STATE, v, 0.5)[0]))(x)
    keep = np.asarray(uniform(STATE, (64,))[0]) >= 0.5
    np.testing.assert_array_equal(grad, np.where(keep, 2.0, 0.0))
    np.testing.assert_array_equal(dropout(STATE, x, 0.0)[0], x)


def test_dropout_under_jit_with_traced_rate():
    x = jnp.ones((8, 8), jnp.bfloat16)
    jitted = jax.jit(dropout)(STATE, x, 0.5)[0]
    np.testing.assert_array_equal(jitted, dropout(STATE, x, 0.5)[0])


# --- purity and errors ------------------------------------------------------------------


def test_vmap_over_states_matches_a_loop():
    states = jnp.stack([make_state(s) for s in range(4)])
    batch, _ = jax.vmap(lambda s: normal(s, (10,)))(states)
    for i in range(4):
        np.testing.assert_array_equal(batch[i], normal(states[i], (10,))[0])


def test_zero_size_and_scalar_shapes():
    empty, state = uniform(STATE, (0, 3))
    assert empty.shape == (0, 3) and blocks_moved(STATE, state) == 0
    scalar, state = uniform(STATE, ())
    assert scalar.shape == () and blocks_moved(STATE, state) == 1


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: uniform(STATE, (4,), jnp.int32), TypeError, r"uniform: dtype must be one of .*; got dtype=int32"),
        (lambda: uniform(STATE, (4,), jnp.float64), TypeError, r"uniform: dtype must be 32-bit .*; got dtype=float64"),
        (lambda: normal(STATE, (-1,)), ValidationError, r"normal: shape must be .*; got shape=\(-1,\)"),
        (lambda: uniform(STATE, 5), ValidationError, r"uniform: shape must be .*; got shape=5"),
        (lambda: randint(STATE, (4,), 5, 5), ValidationError, r"randint: maxval must exceed minval; got maxval=5"),
        (lambda: randint(STATE, (4,), 0, 9, jnp.int8), TypeError, r"randint: dtype must be one of .*; got dtype=int8"),
        (lambda: dropout(STATE, jnp.ones(3), 1.0), ValidationError, r"dropout: rate must be in \[0, 1\); got rate=1.0"),
        (lambda: dropout(STATE, jnp.ones(3, jnp.int32), 0.5), TypeError, r"dropout: dtype must be one of"),
        (lambda: bernoulli(np.zeros(6, np.int64), 0.5, (2,)), TypeError, r"bernoulli: state must be uint32"),
        (lambda: uniform(STATE, (2**32,)), ValidationError, r"at most 2\*\*32 - 1 stream words"),
    ],
)
def test_errors_name_the_value(call, error, match):
    with pytest.raises(error, match=match):
        call()
