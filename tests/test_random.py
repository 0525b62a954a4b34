"""random_generator: DirectML's Philox stream layout, state chaining, its page's example, purity, errors."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from dmljax import DataType, ValidationError
from dmljax._descriptors.random_generator import RANDOM_GENERATOR_SUPPORT
from dmljax.descriptors import FeatureLevel
from dmljax.random import make_state, random_generator
from tests import reference


def state_of(counter: int, key=(0x12345678, 0x9ABCDEF0), ndim: int = 1) -> jax.Array:
    words = np.array([*reference.counter_words(counter), *key], np.uint32)
    return jnp.asarray(words.reshape((1,) * (ndim - 1) + (6,)))


# --- layout against the loop oracle ----------------------------------------------------


@pytest.mark.parametrize(
    "shape",
    [(1,), (3,), (4,), (10,), (3, 4), (2, 3, 5), (2, 1, 3, 8), (5, 7), (1, 1, 1, 1, 1, 1, 2, 12), (2,) * 8],
)
def test_layout_matches_reference(shape):
    state = state_of(2**32 - 3)
    bits, next_state = random_generator(state, shape)
    want_bits, want_state = reference.random_generator(np.asarray(state), shape)
    assert bits.dtype == jnp.uint32 and bits.shape == shape
    np.testing.assert_array_equal(bits, want_bits)
    np.testing.assert_array_equal(next_state, want_state)


@pytest.mark.parametrize("word", [1, 2, 3])
def test_carries_at_every_word_boundary(word):
    start = 2 ** (32 * word) - 5  # the stream's blocks cross into word `word`
    bits, next_state = random_generator(state_of(start), (6, 8))
    want_bits, want_state = reference.random_generator(np.asarray(state_of(start)), (6, 8))
    np.testing.assert_array_equal(bits, want_bits)
    assert reference.counter_value(np.asarray(next_state)[:4]) == start + 12
    np.testing.assert_array_equal(next_state, want_state)


def test_counter_wraps_at_2_to_128():
    state = state_of(2**128 - 2)
    bits, next_state = random_generator(state, (13,))
    np.testing.assert_array_equal(bits, reference.random_generator(np.asarray(state), (13,))[0])
    assert reference.counter_value(np.asarray(next_state)[:4]) == 2  # 2^128 - 2 + 4 blocks
    np.testing.assert_array_equal(bits[8:12], reference.philox4x32_10((0, 0, 0, 0), np.asarray(state)[4:]))


@pytest.mark.parametrize(("n", "m"), [(8, 12), (5, 7), (1, 1), (4096, 3)])
def test_chaining_equals_one_long_call(n, m):
    state = state_of(2**64 - 2)
    first, middle = random_generator(state, (n,))
    second, last = random_generator(middle, (m,))
    skipped = -n % 4  # the rest of a partly used block is never reused
    long, long_state = random_generator(state, (n + skipped + m,))
    np.testing.assert_array_equal(np.concatenate([first, second]), np.concatenate([long[:n], long[n + skipped :]]))
    np.testing.assert_array_equal(last, long_state)


def test_state_shape_is_kept_and_key_unchanged():
    state = make_state(99, counter=7, ndim=4)
    bits, next_state = random_generator(state, (1, 2, 3, 4))
    assert next_state.shape == (1, 1, 1, 6)
    np.testing.assert_array_equal(next_state.reshape(-1), [13, 0, 0, 0, 99, 0])
    np.testing.assert_array_equal(bits, random_generator(state.reshape(6), (1, 2, 3, 4))[0])


# --- the example of https://learn.microsoft.com/en-us/windows/win32/api/directml/ns-directml-dml_random_generator_operator_desc

PAGE_COUNTER = 0x48656C6C_6F46726F_6D536561_74746C65
PAGE_SHAPE = (3, 3, 20, 7219)


def test_page_example_follows_the_rule_not_its_printed_result():
    # The page: ceil(3*3*20*7219 / 4) = 324,855 blocks, so the counter becomes ...'7479615c.
    # It prints ...'746f776e, which is the counter *minus* 324,855: a misprint.
    n = math.prod(PAGE_SHAPE)
    assert -(-n // 4) == 324_855
    _, next_state = random_generator(state_of(PAGE_COUNTER, ndim=4), PAGE_SHAPE)
    got = reference.counter_value(np.asarray(next_state).reshape(-1)[:4])
    assert got == 0x48656C6C_6F46726F_6D536561_7479615C == PAGE_COUNTER + 324_855
    assert 0x48656C6C_6F46726F_6D536561_746F776E == PAGE_COUNTER - 324_855


# --- an independent implementation: randomgen's C Philox -------------------------------


@pytest.mark.parametrize(("shape", "start"), [((1024, 4096), 2**32 - 1000), ((1398101, 3), 2**96 - 7)])
def test_agrees_with_randomgen_over_millions_of_values(shape, start):
    randomgen = pytest.importorskip("randomgen")
    key = (0xDEADBEEF, 0x0BADF00D)
    bits, _ = random_generator(state_of(start, key), shape)
    # randomgen increments its counter before the first block: start one block earlier.
    gen = randomgen.Philox(counter=start - 1, key=key[0] | key[1] << 32, number=4, width=32)
    want = gen.random_raw(math.prod(shape)).astype(np.uint32)
    np.testing.assert_array_equal(np.asarray(bits).reshape(-1), want)


def test_make_state_matches_randomgen_key_order():
    randomgen = pytest.importorskip("randomgen")
    bits, _ = random_generator(make_state(2**40 + 3, counter=10), (8,))
    gen = randomgen.Philox(counter=9, key=2**40 + 3, number=4, width=32)
    np.testing.assert_array_equal(bits, gen.random_raw(8).astype(np.uint32))


# --- purity: jit, vmap, inside differentiation ------------------------------------------


def test_jit_and_eager_agree():
    state = make_state(5)
    eager = random_generator(state, (7, 9))
    jitted = jax.jit(random_generator, static_argnums=1)(state, (7, 9))
    for a, b in zip(eager, jitted, strict=True):
        np.testing.assert_array_equal(a, b)


def test_vmap_over_a_batch_of_states_matches_a_loop():
    states = jnp.stack([make_state(s, counter=2**32 - s) for s in range(5)])
    bits, next_states = jax.vmap(lambda s: random_generator(s, (3, 8)))(states)
    for i in range(5):
        want_bits, want_state = random_generator(states[i], (3, 8))
        np.testing.assert_array_equal(bits[i], want_bits)
        np.testing.assert_array_equal(next_states[i], want_state)


def test_inside_a_differentiated_function():
    state = make_state(11)
    seen = []

    def loss(x):
        bits, _ = random_generator(state, (16,))
        seen.append(bits)
        return jnp.sum(x * (bits >> 28).astype(jnp.float32))

    grad = jax.grad(loss)(jnp.ones(16))
    bits, _ = random_generator(state, (16,))
    np.testing.assert_array_equal(grad, (bits >> 28).astype(np.float32))
    np.testing.assert_array_equal(jax.jit(jax.grad(loss))(jnp.ones(16)), grad)


# --- errors ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("state", "error", "match"),
    [
        (np.zeros(6, np.int32), TypeError, r"state must be uint32; got state.dtype=int32"),
        ([0, 0, 0, 0, 1, 2], TypeError, r"state must be a uint32 array of 6 words; got state=\[0, 0, 0, 0, 1, 2\]"),
        (np.zeros(5, np.uint32), ValidationError, r"state.shape must have shape .*; got state.shape=\(5,\)"),
        (np.zeros((2, 6), np.uint32), ValidationError, r"got state.shape=\(2, 6\)"),
        (np.zeros((1,) * 8 + (6,), np.uint32), ValidationError, r"got state.shape=\(1, 1, 1, 1, 1, 1, 1, 1, 6\)"),
        (np.zeros((6, 1), np.uint32), ValidationError, r"got state.shape=\(6, 1\)"),
    ],
)
def test_bad_state(state, error, match):
    with pytest.raises(error, match=match):
        random_generator(state, (4,))


@pytest.mark.parametrize(
    ("shape", "match"),
    [
        ((), r"shape must have 1 to 8 dimensions; got shape=\(\)"),
        ((0,), r"shape must have positive sizes; got shape=\(0,\)"),
        ((3, -1), r"shape must have positive sizes; got shape=\(3, -1\)"),
        ((1,) * 9, r"shape must have 1 to 8 dimensions; got shape=\(1, 1, 1, 1, 1, 1, 1, 1, 1\)"),
        ((2**16, 2**16), r"at most 2\*\*32 - 1 elements; got shape=\(65536, 65536\) \(4294967296 elements\)"),
        ((2.0,), r"shape must be a tuple of ints; got shape=\(2.0,\)"),
        (None, r"shape must be a tuple of ints; got shape=None"),
    ],
)
def test_bad_shape(shape, match):
    with pytest.raises(ValidationError, match=match):
        random_generator(make_state(0), shape)


@pytest.mark.parametrize(("seed", "counter"), [(-1, 0), (2**64, 0), (0, 2**128), (0, -1), (1.5, 0)])
def test_make_state_rejects_out_of_range(seed, counter):
    with pytest.raises(ValidationError, match=r"make_state: (seed|counter) must be an int in \[0, 2\*\*(64|128)\)"):
        make_state(seed, counter)


def test_support_table_is_the_pages():
    fl3, fl4 = RANDOM_GENERATOR_SUPPORT
    assert fl3.state_dimension_counts == fl3.output_dimension_counts == (4,)
    assert fl4.state_dimension_counts == fl4.output_dimension_counts == tuple(range(1, 9))
    assert fl3.data_types == fl4.data_types == (DataType.UINT32,)
    assert (fl3.level, fl4.level) == (FeatureLevel.FL_3_0, FeatureLevel.FL_4_0)


# --- TensorFlow's stateless Philox (optional) ------------------------------------------


def test_same_bits_as_tensorflow_stateless_philox():
    tf = pytest.importorskip("tensorflow")
    counter, key = 2**64 + 5, 0x0BADF00D_DEADBEEF
    bits, _ = random_generator(make_state(key, counter), (3, 7))
    want = tf.raw_ops.StatelessRandomUniformFullIntV2(
        shape=[3, 7],
        key=tf.constant([key], tf.uint64),
        counter=tf.constant([counter % 2**64, counter >> 64], tf.uint64),
        alg=tf.constant(1, tf.int32),
        dtype=tf.uint32,
    )
    np.testing.assert_array_equal(bits, want.numpy())
