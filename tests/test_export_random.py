"""jax.export of the Philox functions: symbolic batch sizes, serialisation round trips.

Each function is exported (with a symbolic leading size where the shape comes from an
argument), serialised, deserialised and called: the result must equal the direct call.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import export

from dmljax.random import dropout, normal, prng_impl, randint, random_generator, split, uniform
from tests import reference

STATE = np.array([2**32 - 3, 0, 0, 0, 0xDEADBEEF, 0x0BADF00D], np.uint32)
STATE_SPEC = jax.ShapeDtypeStruct((6,), jnp.uint32)


def round_trip(fn, *specs):
    exported = export.export(jax.jit(fn))(*specs)
    return export.deserialize(exported.serialize())


def assert_same(got, want):
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)


@pytest.mark.slow
@pytest.mark.parametrize("row", [1000, 7, 130], ids=["whole blocks", "short rows", "shifted rows"])
def test_dropout_with_a_symbolic_batch(row):
    (batch,) = export.symbolic_shape("b")
    spec = jax.ShapeDtypeStruct((batch, row), jnp.float32)
    restored = round_trip(lambda s, x: dropout(s, x, 0.25), STATE_SPEC, spec)
    for n in (1, 3, 8):
        x = jnp.arange(n * row, dtype=jnp.float32).reshape(n, row)
        assert_same(restored.call(STATE, x), dropout(STATE, x, 0.25))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["uniform", "normal", "randint"])
def test_distributions_shaped_like_a_symbolic_argument(name):
    calls = {
        "uniform": lambda s, x: uniform(s, x.shape, jnp.float32, -1.0, 1.0),
        "normal": lambda s, x: normal(s, x.shape),
        "randint": lambda s, x: randint(s, x.shape, -5, 17),
    }
    (batch,) = export.symbolic_shape("b")
    restored = round_trip(calls[name], STATE_SPEC, jax.ShapeDtypeStruct((batch, 3, 33), jnp.float32))
    for n in (1, 5):
        x = jnp.zeros((n, 3, 33))
        assert_same(restored.call(STATE, x), calls[name](STATE, x))


@pytest.mark.slow
def test_one_symbolic_row():
    (length,) = export.symbolic_shape("n")
    fn = lambda s, x: uniform(s, x.shape)  # noqa: E731
    restored = round_trip(fn, STATE_SPEC, jax.ShapeDtypeStruct((length,), jnp.float32))
    for n in (1, 6, 1001):
        assert_same(restored.call(STATE, jnp.zeros(n)), fn(STATE, jnp.zeros(n)))


@pytest.mark.parametrize("shape", [(64, 1000), (3, 67), (5,), (2, 3, 5)])
def test_random_generator_with_fixed_shapes(shape):
    restored = round_trip(lambda s: random_generator(s, shape), STATE_SPEC)
    assert_same(restored.call(STATE), random_generator(STATE, shape))


@pytest.mark.slow
@pytest.mark.parametrize("row", [(), (5,), (3, 2)], ids=["(b,)", "(b, 5)", "(b, 3, 2)"])
def test_random_generator_with_a_symbolic_batch(row):
    (batch,) = export.symbolic_shape("b")
    fn = lambda s, x: random_generator(s, x.shape)  # noqa: E731
    restored = round_trip(fn, STATE_SPEC, jax.ShapeDtypeStruct((batch, *row), jnp.float32))
    for n in (1, 3, 8):
        x = jnp.zeros((n, *row))
        bits, next_state = restored.call(STATE, x)
        assert_same((bits, next_state), reference.random_generator(STATE, x.shape))  # counter carries into word 1
        assert_same((bits, next_state), fn(STATE, x))


# jax.random on dmljax.random.prng_impl keys. An exported function takes and returns key data
# (uint32[6]) and wraps it inside: JAX serialises key-typed inputs and outputs of its own
# implementations only (`test_serialising_a_dmljax_key_argument_is_refused_by_jax`).
KEY_CALLS = {
    "bits": lambda k, x: jax.random.bits(k, x.shape),
    "bits uint8": lambda k, x: jax.random.bits(k, x.shape, jnp.uint8),
    "uniform": lambda k, x: jax.random.uniform(k, x.shape),
    "normal": lambda k, x: jax.random.normal(k, x.shape),
    "split": lambda k, x: jax.random.key_data(jax.random.split(k, x.shape)),
    "fold_in per row": lambda k, x: jax.random.key_data(jax.vmap(jax.random.fold_in, (None, 0))(k, x[:, 0])),
}


def on_key_data(call):
    return lambda s, x: call(jax.random.wrap_key_data(s, impl=prng_impl), x)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(KEY_CALLS))
def test_jax_random_on_prng_impl_keys_with_a_symbolic_batch(name):
    (batch,) = export.symbolic_shape("b")
    fn = on_key_data(KEY_CALLS[name])
    restored = round_trip(fn, STATE_SPEC, jax.ShapeDtypeStruct((batch, 3), jnp.int32))
    for n in (1, 4, 9):
        x = jnp.arange(3 * n, dtype=jnp.int32).reshape(n, 3)
        got = restored.call(STATE, x)
        np.testing.assert_array_equal(got, fn(STATE, x))
        if name == "bits":
            np.testing.assert_array_equal(got, reference.random_generator(STATE, (n, 3))[0])
        if name == "split":
            np.testing.assert_array_equal(got, split(STATE, 3 * n).reshape(n, 3, 6))


def test_serialising_a_dmljax_key_argument_is_refused_by_jax():
    """JAX's serialisation knows the key types of its own implementations only; pass key data instead."""
    (batch,) = export.symbolic_shape("b")
    key = jax.random.key(0, impl=prng_impl)
    exported = export.export(jax.jit(KEY_CALLS["uniform"]))(key, jax.ShapeDtypeStruct((batch,), jnp.float32))
    np.testing.assert_array_equal(exported.call(key, jnp.zeros(4)), jax.random.uniform(key, (4,)))  # in-process
    with pytest.raises(KeyError, match="key<dmljax_philox4x32_10>"):  # one name everywhere
        exported.serialize()
