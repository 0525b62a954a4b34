"""philox4x32_10: Random123 known-answer vectors, vectorisation, the 128-bit counter add."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from dmljax import ValidationError
from dmljax._random.philox import PHILOX_M4X32_0, PHILOX_M4X32_1, add_128, mulhi
from dmljax.random import philox4x32_10
from tests import reference
from tests.multidevice import run_json

# Random123 examples/kat_vectors, "philox4x32 10": counter, key, expected output.
KAT_VECTORS = {
    "zeros": ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    "ones": ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    "pi_digits": (
        (0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344),
        (0xA4093822, 0x299F31D0),
        (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1),
    ),
}


@pytest.mark.parametrize("name", sorted(KAT_VECTORS))
def test_known_answer_vectors(name):
    counter, key, expected = KAT_VECTORS[name]
    got = philox4x32_10(np.array(counter, np.uint32), np.array(key, np.uint32))
    assert got.dtype == jnp.uint32
    assert tuple(int(w) for w in got) == expected
    assert reference.philox4x32_10(counter, key) == expected


def test_vectorised_against_reference_with_broadcast_key():
    rng = np.random.default_rng(4)
    counters = rng.integers(0, 2**32, (3, 5, 4), dtype=np.uint32)
    keys = rng.integers(0, 2**32, (5, 2), dtype=np.uint32)
    got = np.asarray(jax.jit(philox4x32_10)(counters, keys))
    assert got.shape == (3, 5, 4)
    for i, j in np.ndindex(3, 5):
        assert tuple(got[i, j]) == reference.philox4x32_10(counters[i, j], keys[j])


def test_vmap_matches_batched_call():
    rng = np.random.default_rng(5)
    counters = rng.integers(0, 2**32, (7, 4), dtype=np.uint32)
    key = rng.integers(0, 2**32, 2, dtype=np.uint32)
    batched = jax.vmap(philox4x32_10, in_axes=(0, None))(counters, key)
    np.testing.assert_array_equal(batched, philox4x32_10(counters, key))


@pytest.mark.parametrize("offset", [0, 1, 2**31, 2**32 - 1])
@pytest.mark.parametrize(
    "start", [0, 2**32 - 1, 2**64 - 1, 2**96 - 1, 2**128 - 1, 0xFFFFFFFF_00000000_FFFFFFFF_FFFFFFFF]
)
def test_add_128_carries_and_wraps(start, offset):
    words = tuple(jnp.uint32(w) for w in reference.counter_words(start))
    got = add_128(words, jnp.uint32(offset))
    assert reference.counter_value(got) == (start + offset) % 2**128


@pytest.mark.parametrize("start", [2**32 - 3, 2**64 - 3, 2**128 - 3, 0xFFFFFFFF_00000007_FFFFFFFF_FFFFFFFD])
def test_add_128_array_offsets_that_wrap_word_0_in_some_elements_only(start):
    words = tuple(jnp.uint32(w) for w in reference.counter_words(start))
    offsets = np.array([[0, 1, 2], [3, 4, 2**32 - 1]], np.uint32)
    got = jax.jit(add_128)(words, jnp.asarray(offsets))
    assert all(w.shape == offsets.shape for w in got)
    for i, j in np.ndindex(offsets.shape):
        element = tuple(w[i, j] for w in got)
        assert reference.counter_value(element) == (start + int(offsets[i, j])) % 2**128, (i, j)


@pytest.mark.parametrize(
    ("counter", "key", "error", "match"),
    [
        (np.zeros(4, np.int32), np.zeros(2, np.uint32), TypeError, r"counter must be uint32; got counter.dtype=int32"),
        (np.zeros(4, np.uint32), np.zeros(2, np.float32), TypeError, r"key must be uint32; got key.dtype=float32"),
        (np.zeros(3, np.uint32), np.zeros(2, np.uint32), ValidationError, r"counter.shape must end in 4; got .*\(3,\)"),
        (
            np.zeros(4, np.uint32),
            np.zeros((2, 3), np.uint32),
            ValidationError,
            r"key.shape must end in 2; got .*\(2, 3\)",
        ),
    ],
)
def test_errors_name_the_value(counter, key, error, match):
    with pytest.raises(error, match=match):
        philox4x32_10(counter, key)


MULHI_INPUTS = np.array([0, 1, 2, 0xFFFF, 0x10000, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFE, 0xFFFFFFFF], np.uint32)


@pytest.mark.parametrize("multiplier", [PHILOX_M4X32_0, PHILOX_M4X32_1])
@pytest.mark.parametrize("x64", [False, True])
def test_mulhi_is_the_high_word_under_jit_and_vmap_whatever_x64(multiplier, x64):
    rng = np.random.default_rng(6)
    x = np.concatenate([MULHI_INPUTS, rng.integers(0, 2**32, 55, dtype=np.uint32)])
    want = ((x.astype(np.uint64) * np.uint64(multiplier)) >> np.uint64(32)).astype(np.uint32)
    before = jax.config.jax_enable_x64
    with jax.enable_x64(x64):
        high = functools.partial(mulhi, multiplier)
        results = [high(x), jax.jit(high)(x), jax.vmap(high)(x.reshape(8, 8)).ravel()]
        jaxpr = jax.make_jaxpr(high)(x).jaxpr
    assert jax.config.jax_enable_x64 == before
    for got in results:
        assert got.dtype == jnp.uint32
        np.testing.assert_array_equal(got, want)
    # No 64-bit value exists on the JAX side: the widening lives only in the lowering.
    assert {v.aval.dtype for eqn in jaxpr.eqns for v in (*eqn.invars, *eqn.outvars)} == {np.dtype(np.uint32)}


@pytest.mark.hlo
def test_philox_program_is_the_same_with_x64_on_and_off():
    """If this fails: docs/design/philox-layout.md (the mulhi as one 64-bit multiply)."""
    counter, key = np.zeros(4, np.uint32), np.zeros(2, np.uint32)
    texts = []
    for x64 in (False, True):
        with jax.enable_x64(x64):
            texts.append(jax.jit(philox4x32_10).lower(counter, key).as_text())
    assert texts[0] == texts[1]
    assert "chlo.mulhi" not in texts[0] and "ui64" in texts[0]


_MULHI_PARTITIONED = """
import json
import jax, jax.numpy as jnp, numpy as np
from jax import lax
from jax.sharding import NamedSharding, PartitionSpec as P
from dmljax._random.philox import PHILOX_M4X32_0, mulhi

sharding = NamedSharding(jax.make_mesh((8,), ("x",)), P("x"))
x = jax.device_put(jnp.arange(64, dtype=jnp.uint32) * np.uint32(0x9E3779B9), sharding)
want = ((np.asarray(x).astype(np.uint64) * int(PHILOX_M4X32_0)) >> 32).astype(np.uint32)
answer = {}
for name, fn in [
    ("lax", lambda x: lax.mulhi(x, jnp.full_like(x, PHILOX_M4X32_0))),
    ("dmljax", lambda x: mulhi(PHILOX_M4X32_0, x)),
]:
    try:
        out = jax.jit(fn, out_shardings=sharding)(x)
        answer[name] = "right" if (np.asarray(out) == want).all() else "wrong"
    except Exception as error:  # XLA's "Unable to convert MHLO to StableHLO"
        answer[name] = f"{type(error).__name__}: {str(error)[:200]}"
print(json.dumps(answer))
"""


@pytest.mark.system
def test_lax_mulhi_still_fails_to_compile_partitioned():
    """Why `mulhi` is a primitive of dmljax's own and not `lax.mulhi` (a workaround, tested).

    ``lax.mulhi`` lowers to ``chlo.mulhi``, which XLA fails to legalize once the program is
    partitioned over several devices ("failed to legalize operation 'mhlo.unknown'"; jax
    0.10.2). dmljax's primitive lowers to the same ops as JAX's own fallback and compiles.
    If this test fails because ``lax.mulhi`` now compiles: replace `mulhi`'s primitive by
    ``lax.mulhi`` and delete this test.
    """
    answer = run_json(_MULHI_PARTITIONED)
    assert answer["dmljax"] == "right"
    assert answer["lax"] != "right", "lax.mulhi compiles partitioned now: drop dmljax's mulhi primitive"
