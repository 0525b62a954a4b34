"""make_state with traced seeds, advance, split and fold_in against the loop oracle in tests/reference.py."""

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from dmljax import ValidationError
from dmljax.random import advance, fold_in, make_state, random_generator, split, uniform
from tests import reference

# Counters near every carry and the wrap, and one of arbitrary bits across the top three words.
COUNTERS = [0, 5, 2**32 - 1, 2**64 - 2, 2**96 - 1, 2**128 - 3, 0x37B229B79AFAA1C8 << 60]
KEYS = [0, 1, 2**64 - 1, 0x0123456789ABCDEF]


def words(value: int, n: int) -> np.ndarray:
    return np.array([(value >> (32 * i)) & 0xFFFFFFFF for i in range(n)], np.uint32)


# --- make_state: traced seeds and counters -----------------------------------------------


@pytest.mark.parametrize("seed", [0, 7, 2**32 - 1])
def test_make_state_traced_seed_matches_concrete(seed):
    want = np.asarray(make_state(seed))
    np.testing.assert_array_equal(jax.jit(make_state)(jnp.uint32(seed)), want)
    np.testing.assert_array_equal(jax.jit(make_state)(jnp.asarray(words(seed, 2))), want)


def test_make_state_int32_seed_is_its_bits_and_k1_is_zero():
    np.testing.assert_array_equal(jax.jit(make_state)(jnp.int32(-1)), [0, 0, 0, 0, 0xFFFFFFFF, 0])
    np.testing.assert_array_equal(jax.jit(make_state)(jnp.int32(12)), make_state(12))


def test_make_state_64_bit_traced_seed(x64):
    seed = 0x0123456789ABCDEF
    np.testing.assert_array_equal(jax.jit(make_state)(jnp.uint64(seed)), make_state(seed))
    np.testing.assert_array_equal(jax.jit(make_state)(jnp.int64(-1)), make_state(2**64 - 1))


@pytest.mark.parametrize(("seed", "counter"), list(itertools.product(KEYS, COUNTERS))[::3])
def test_make_state_traced_words_and_ndim(seed, counter):
    make = jax.jit(make_state, static_argnames="ndim")
    got = make(jnp.asarray(words(seed, 2)), jnp.asarray(words(counter, 4)), ndim=4)
    np.testing.assert_array_equal(got, make_state(seed, counter, ndim=4))
    assert got.shape == (1, 1, 1, 6)


def test_make_state_host_integers_are_exact_whatever_x64():
    np.testing.assert_array_equal(make_state(np.uint64(2**64 - 1)), [0, 0, 0, 0, 2**32 - 1, 2**32 - 1])
    np.testing.assert_array_equal(make_state(np.array(2**40, np.int64)), [0, 0, 0, 0, 0, 2**8])
    np.testing.assert_array_equal(make_state(3, np.array(words(2**100, 4))), [0, 0, 0, 16, 3, 0])


def test_make_state_vmap_equals_loop():
    seeds = np.array([0, 1, 99, 2**31 + 5], np.uint32)
    counters = np.stack([words(c, 4) for c in (0, 2**32 - 1, 7, 2**127)])
    got = jax.vmap(make_state)(jnp.asarray(seeds), jnp.asarray(counters))
    want = np.stack([make_state(int(s), reference.counter_value(c)) for s, c in zip(seeds, counters, strict=True)])
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(
    ("seed", "error", "match"),
    [
        (jnp.float32(1.0), TypeError, r"make_state: seed must have an integer dtype; got seed.dtype=float32"),
        (np.float64(2.5), ValidationError, r"make_state: seed must be an int in \[0, 2\*\*64\).*; got seed=.*2.5"),
        (jnp.zeros(3, jnp.uint32), ValidationError, r"make_state: seed.shape must be \(\) .*; got seed.shape=\(3,\)"),
        (jnp.zeros(2, jnp.int32), TypeError, r"make_state: seed words must be uint32; got seed.dtype=int32"),
        ([1, 2], ValidationError, r"make_state: seed must be an int .*; got seed=\[1, 2\]"),
        (jnp.bool_(True), TypeError, r"seed must have an integer dtype; got seed.dtype=bool"),
        (jax.random.key(0), TypeError, r"seed must have an integer dtype; got seed.dtype=key<fry>"),
    ],
)
def test_make_state_bad_seed(seed, error, match):
    with pytest.raises(error, match=match):
        make_state(seed)


def test_make_state_bad_counter_shape():
    with pytest.raises(ValidationError, match=r"make_state: counter.shape must be .*; got counter.shape=\(2,\)"):
        make_state(0, jnp.zeros(2, jnp.uint32))


# --- advance --------------------------------------------------------------------------------


@pytest.mark.parametrize(("counter", "blocks"), [(c, b) for c in COUNTERS for b in (0, 1, 3, 2**32, 2**127 + 9)])
def test_advance_matches_oracle(counter, blocks):
    state = make_state(0xBEEF, counter)
    np.testing.assert_array_equal(advance(state, blocks), reference.advance(state, blocks))


@pytest.mark.parametrize("counter", COUNTERS)
def test_advance_traced_uint32_equals_eager(counter):
    state = make_state(3, counter)
    for blocks in (0, 1, 2**32 - 1):
        np.testing.assert_array_equal(jax.jit(advance)(state, jnp.uint32(blocks)), reference.advance(state, blocks))


def test_advance_traced_uint64(x64):
    state = make_state(3, 2**64 - 5)
    blocks = 2**63 + 11
    np.testing.assert_array_equal(jax.jit(advance)(state, jnp.uint64(blocks)), reference.advance(state, blocks))


def test_advance_vmap_and_shape():
    states = jnp.stack([make_state(k, c) for k, c in zip(KEYS, COUNTERS, strict=False)])
    blocks = jnp.array([1, 2**32 - 1, 7, 0], jnp.uint32)
    got = jax.vmap(advance)(states, blocks)
    want = np.stack([reference.advance(s, int(b)) for s, b in zip(states, blocks, strict=True)])
    np.testing.assert_array_equal(got, want)
    assert advance(make_state(0, ndim=4), 1).shape == (1, 1, 1, 6)


@pytest.mark.parametrize("n", [1, 4, 5, 4 * 2**10 + 3])
def test_random_generator_next_state_is_advance(n):
    state = make_state(11, 2**64 - 1)
    _, next_state = random_generator(state, (n,))
    np.testing.assert_array_equal(next_state, advance(state, -(-n // 4)))


def test_advance_chains():
    state = make_state(2, 2**128 - 2)
    np.testing.assert_array_equal(advance(advance(state, 5), 2**70), advance(state, 5 + 2**70))


@pytest.mark.parametrize(
    ("blocks", "error", "match"),
    [
        (-1, ValidationError, r"advance: blocks must be an int in \[0, 2\*\*128\).*; got blocks=-1"),
        (2**128, ValidationError, r"advance: blocks must be an int in \[0, 2\*\*128\).*; got blocks=3402"),
        (jnp.int32(3), TypeError, r"advance: blocks must be a Python int or an unsigned .*; got blocks.dtype=int32"),
        (jnp.float32(3), TypeError, r"advance: blocks must have an integer dtype; got blocks.dtype=float32"),
        (1.0, ValidationError, r"advance: blocks must be an int .*; got blocks=1.0"),
        (jnp.ones(2, jnp.uint32), ValidationError, r"advance: blocks.shape must be \(\).*; got blocks.shape=\(2,\)"),
    ],
)
def test_advance_bad_blocks(blocks, error, match):
    with pytest.raises(error, match=match):
        advance(make_state(0), blocks)


# --- split and fold_in ------------------------------------------------------------------------


@pytest.mark.parametrize(("seed", "counter"), list(itertools.product(KEYS, COUNTERS))[::2])
def test_split_and_fold_in_match_oracle(seed, counter):
    state = make_state(seed, counter)
    np.testing.assert_array_equal(split(state, 5), reference.split(state, 5))
    for data in (0, 1, 2**32 - 1):
        np.testing.assert_array_equal(fold_in(state, data), reference.fold_in(state, data))


@pytest.mark.slow
def test_split_and_fold_in_jit_vmap_equal_eager():
    states = jnp.stack([make_state(k, c) for k, c in zip(KEYS, COUNTERS, strict=False)])
    eager = np.stack([np.asarray(split(s, 3)) for s in states])
    np.testing.assert_array_equal(jax.vmap(lambda s: split(s, 3))(states), eager)
    np.testing.assert_array_equal(jax.jit(lambda s: split(s, 3))(states[1]), eager[1])
    data = jnp.array([0, 5, 2**31, 2**32 - 1], jnp.uint32)
    want = np.stack([reference.fold_in(s, int(d)) for s, d in zip(states, data, strict=True)])
    np.testing.assert_array_equal(jax.vmap(fold_in)(states, data), want)
    np.testing.assert_array_equal(jax.jit(fold_in)(states[2], data[2]), want[2])


def test_fold_in_takes_integers_modulo_2_32_and_keeps_shape():
    state = make_state(5, ndim=4)
    np.testing.assert_array_equal(fold_in(state, jnp.int32(-1)), fold_in(state, 2**32 - 1))
    np.testing.assert_array_equal(fold_in(state, np.int64(7)), reference.fold_in(state, 7).reshape(1, 1, 1, 6))
    assert fold_in(state, 1).shape == (1, 1, 1, 6)


@pytest.mark.parametrize("scalar", [np.int64(-1), np.int32(-1), np.int8(-1), np.uint64(2**32 - 1)], ids=repr)
def test_numpy_integer_scalars_follow_the_rule_of_0d_arrays(scalar):
    """np.int64(-1) and np.array(-1) are one value: both are taken modulo 2^32."""
    state = make_state(5)
    want = fold_in(state, 2**32 - 1)
    np.testing.assert_array_equal(fold_in(state, np.asarray(scalar)), want)
    np.testing.assert_array_equal(fold_in(state, scalar), want)


def test_children_share_no_block():
    """Children, grandchildren, the parent and the children of nearby states use disjoint blocks."""
    window = 256
    parent = make_state(0x5EED, 2**64 - 3)
    relatives = [parent, *(advance(parent, j) for j in (1, 2, 3))]
    streams = [(("parent", 0), parent)]
    for r, state in enumerate(relatives):
        streams += [(("split", r, i), child) for i, child in enumerate(split(state, 8))]
        streams += [(("fold_in", r, d), fold_in(state, d)) for d in (0, 1, 2, 7)]
    streams += [(("grandchild", i), child) for i, child in enumerate(split(split(parent, 2)[0], 4))]
    seen: dict[tuple[int, int], tuple] = {}
    for name, state in streams:
        for block in reference.blocks_used(state, window):
            assert block not in seen, f"{name} shares block {block} with {seen[block]}"
            seen[block] = name
    assert len(seen) == window * len(streams)


def test_counter_offsets_do_overlap():
    """Why split exists: per-example states made by offsetting the counter share blocks."""
    base = make_state(1)
    example0, example1 = base.at[0].set(0), base.at[0].set(1)
    shared = reference.blocks_used(example0, 4) & reference.blocks_used(example1, 4)
    assert shared == reference.blocks_used(example1, 3)  # all but one of the four blocks each draws
    masks = [np.asarray(uniform(s, (16,))[0]) < 0.5 for s in (example0, example1)]
    np.testing.assert_array_equal(masks[0][4:], masks[1][:12])


@pytest.mark.parametrize(
    ("num", "match"),
    [
        (0, r"split: num must be an int in \[1, 4294967295\]; got num=0"),
        (-2, r"split: num must be an int in \[1, 4294967295\]; got num=-2"),
        (2.0, r"split: num must be an int .*; got num=2.0"),
        (True, r"split: num must be an int .*; got num=True"),
    ],
)
def test_split_bad_num(num, match):
    with pytest.raises(ValidationError, match=match):
        split(make_state(0), num)


def test_split_traced_num_says_mark_it_static():
    with pytest.raises(ValidationError, match=r"split: num must be static \(mark it static: jax.jit"):
        jax.jit(split)(make_state(0), 2)


def test_fold_in_bad_data():
    with pytest.raises(ValidationError, match=r"fold_in: data must be an int in \[0, 2\*\*32\).*; got data=-1"):
        fold_in(make_state(0), -1)
    with pytest.raises(TypeError, match=r"fold_in: data must have an integer dtype; got data.dtype=float32"):
        fold_in(make_state(0), jnp.float32(1))


# --- the shared state check -----------------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda s: random_generator(s, (4,)),
        lambda s: uniform(s, (4,)),
        lambda s: split(s),
        lambda s: fold_in(s, 1),
        lambda s: advance(s, 1),
    ],
)
def test_a_jax_key_is_no_state(call):
    with pytest.raises(TypeError, match=r"state must be a uint32\[6\] Philox state, not a jax.random key; .*key_data"):
        call(jax.random.key(0))


def test_a_raw_jax_key_is_no_state():
    with pytest.raises(ValidationError, match=r"got state.shape=\(2,\) .*a raw jax.random key is no state"):
        random_generator(jax.random.PRNGKey(0), (4,))


def test_traced_shape_says_mark_it_static():
    with pytest.raises(ValidationError, match=r"random_generator: shape must be static \(mark it static"):
        jax.jit(lambda s, n: random_generator(s, (n,)))(make_state(0), 4)
