"""jax.export of the Philox functions: symbolic batch sizes, serialisation round trips.

Each function is exported (with a symbolic leading size where the shape comes from an
argument), serialised, deserialised and called: the result must equal the direct call.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import export

from dmljax import dropout, normal, randint, random_generator, uniform

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
