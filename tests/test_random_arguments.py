"""Argument validation of the Philox functions: every rule, the function, the argument, the value."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from dmljax import (
    ValidationError,
    bernoulli,
    dropout,
    make_state,
    normal,
    philox4x32_10,
    randint,
    random_generator,
    uniform,
)

STATE = make_state(3)


@pytest.mark.parametrize(
    ("dtype", "minval", "maxval", "match"),
    [
        (jnp.uint32, -5, 10, r"randint: minval must be in \[0, 4294967295\] for uint32; got minval=-5"),
        (jnp.uint32, 0, 2**32, r"randint: maxval must be in \[0, 4294967295\] for uint32; got maxval=4294967296"),
        (
            jnp.int32,
            -(2**31) - 1,
            0,
            r"minval must be in \[-2147483648, .*\] for int32; got minval=-2147483649",
        ),
        (jnp.int32, 0, 2**40, r"maxval must be in \[-2147483648, 2147483647\] for int32; got maxval=1099511627776"),
        (jnp.int32, 0, 2**70, r"maxval must be in .* for int32; got maxval=1180591620717411303424"),
        (jnp.int32, np.array([0, -(2**33)]), 5, r"minval must be in .* for int32; got minval=-8589934592"),
        (jnp.int32, 0.5, 4, r"randint: minval must be an integer scalar or integer array; got minval=0.5"),
        (jnp.int32, 0, True, r"randint: maxval must be an integer scalar or integer array; got maxval=True"),
        (jnp.int32, 0, np.float32(3), r"maxval must be an integer .*; got maxval=np.float32\(3.0\)"),
        (jnp.int32, 3, 3, r"randint: maxval must exceed minval; got maxval=3 \(minval=3\)"),
        (jnp.int32, np.array([0, 5]), np.array([1, 5]), r"maxval must exceed minval; got maxval=array\(\[1, 5\]\)"),
        (jnp.int32, np.zeros(3, np.int32), 5, r"randint: minval.shape must broadcast to the output shape \(2,\)"),
    ],
)
def test_randint_bounds(dtype, minval, maxval, match):
    with pytest.raises(ValidationError, match=match):
        randint(STATE, (2,), minval, maxval, dtype)


def test_randint_uint64_bounds_in_range(x64):
    got, _ = randint(STATE, (4,), 2**63, 2**64 - 1, jnp.uint64)
    assert got.dtype == jnp.uint64 and all(2**63 <= int(v) < 2**64 - 1 for v in got)
    with pytest.raises(ValidationError, match=r"minval must be in \[0, 18446744073709551615\] for uint64"):
        randint(STATE, (4,), -1, 3, jnp.uint64)


def test_randint_traced_bounds_are_checked_by_dtype_only():
    got = jax.jit(lambda lo, hi: randint(STATE, (8,), lo, hi)[0])(jnp.int32(-3), jnp.int32(4))
    np.testing.assert_array_equal(got, randint(STATE, (8,), -3, 4)[0])
    with pytest.raises(ValidationError, match=r"maxval must be an integer scalar or .*; got maxval=.*Tracer"):
        jax.jit(lambda hi: randint(STATE, (8,), 0, hi)[0])(jnp.float32(4))


def test_array_valued_rate_and_probability():
    x = jnp.ones((2, 3))
    rate = np.array([0.0, 0.5, 0.9], np.float32)
    y, _ = dropout(STATE, x, rate)
    u = np.asarray(uniform(STATE, (2, 3))[0])
    np.testing.assert_array_equal(y, np.where(u >= rate, np.float32(1) / (1 - rate), 0))
    with pytest.raises(ValidationError, match=r"dropout: rate must be in \[0, 1\); got rate=np.float32\(1.0\)"):
        dropout(STATE, x, np.array([0.5, 1.0, 0.2], np.float32))
    with pytest.raises(ValidationError, match=r"dropout: rate.shape must broadcast to the output shape \(2, 3\); got"):
        dropout(STATE, x, np.zeros(2))


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: uniform(STATE, (2, 3), jnp.float32, np.zeros(4)), r"uniform: minval.shape must broadcast .*\(4,\)"),
        (lambda: uniform(STATE, (2, 3), jnp.float32, 0.0, np.ones((3, 1))), r"uniform: maxval.shape must .*\(3, 1\)"),
        (lambda: normal(STATE, (2,), jnp.float32, np.zeros(3)), r"normal: mean.shape must .*; got mean.shape=\(3,\)"),
        (lambda: bernoulli(STATE, np.full(3, 0.5), (2,)), r"bernoulli: p.shape must broadcast .*; got p.shape=\(3,\)"),
    ],
)
def test_parameters_must_broadcast_to_the_shape(call, match):
    with pytest.raises(ValidationError, match=match):
        call()


def test_philox_batch_dimensions_must_broadcast():
    match = r"philox4x32_10: key.shape must have batch dimensions that broadcast .*; got key.shape=\(3, 2\)"
    with pytest.raises(ValidationError, match=match):
        philox4x32_10(np.zeros((5, 4), np.uint32), np.zeros((3, 2), np.uint32))


def test_out_sharding_must_be_a_named_sharding_of_the_rank():
    mesh = Mesh(np.array(jax.devices()[:1]), ("x",))
    with pytest.raises(ValidationError, match=r"uniform: out_sharding must be a jax.sharding.NamedSharding, a Part"):
        uniform(STATE, (4,), out_sharding=PartitionSpec("x"))  # no mesh set
    with pytest.raises(ValidationError, match=r"normal: out_sharding must be .*; got out_sharding='x'"):
        normal(STATE, (4,), out_sharding="x")
    too_long = NamedSharding(mesh, PartitionSpec("x", None))
    with pytest.raises(ValidationError, match=r"random_generator: out_sharding.spec must have at most 1 entries"):
        random_generator(STATE, (4,), out_sharding=too_long)
    bits, _ = random_generator(STATE, (4, 5), out_sharding=NamedSharding(mesh, PartitionSpec("x")))
    np.testing.assert_array_equal(bits, random_generator(STATE, (4, 5))[0])


def test_out_sharding_as_a_partition_spec_under_set_mesh():
    with jax.set_mesh(Mesh(np.array(jax.devices()[:1]), ("x",))):
        got, _ = uniform(STATE, (4, 5), out_sharding=PartitionSpec("x"))
    np.testing.assert_array_equal(got, uniform(STATE, (4, 5))[0])


@pytest.mark.parametrize("name", ["uniform", "normal", "randint", "bernoulli"])
def test_traced_shape_says_mark_it_static(name):
    draw = {
        "uniform": lambda n: uniform(STATE, (n,)),
        "normal": lambda n: normal(STATE, (n,)),
        "randint": lambda n: randint(STATE, (n,), 0, 10),
        "bernoulli": lambda n: bernoulli(STATE, 0.5, (n,)),
    }[name]
    with pytest.raises(ValidationError, match=rf"^{name}: shape must be static \(mark it static: jax.jit"):
        jax.jit(draw)(3)
