"""Argument validation of the Philox functions: every rule, the function, the argument, the value."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from dmljax import ValidationError
from dmljax.random import bernoulli, dropout, make_state, normal, philox4x32_10, randint, random_generator, uniform

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


def _jit_randint(dtype=jnp.int32, shape=(8,)):
    return jax.jit(lambda lo, hi: randint(STATE, shape, lo, hi, dtype)[0])


@pytest.mark.parametrize(("minval", "maxval"), [(5, 5), (7, 2), (-3, -4)])
def test_traced_empty_randint_range_gives_minval_as_jax_random_randint(minval, maxval):
    got = _jit_randint()(jnp.int32(minval), jnp.int32(maxval))
    np.testing.assert_array_equal(got, np.full(8, minval, np.int32))
    jax_says = jax.jit(lambda lo, hi: jax.random.randint(jax.random.key(0), (8,), lo, hi))(minval, maxval)
    np.testing.assert_array_equal(got, jax_says)
    with pytest.raises(ValidationError, match=rf"randint: maxval must exceed minval; got maxval=.*{maxval}"):
        randint(STATE, (8,), jnp.int32(minval), jnp.int32(maxval))  # eager: concrete, refused


def test_traced_empty_and_non_empty_bounds_per_element():
    lo, hi = np.array([0, 5, 9, -2], np.int32), np.array([4, 5, 3, 1], np.int32)
    got = np.asarray(_jit_randint(shape=(4,))(lo, hi))
    assert 0 <= got[0] < 4 and got[1] == 5 and got[2] == 9 and -2 <= got[3] < 1


def test_traced_bounds_clamp_to_the_dtype_as_jax_random_randint():
    # int32 -5 below uint32's range: clamped to 0, the same values as the concrete range [0, 3)
    got = _jit_randint(jnp.uint32, (64,))(jnp.int32(-5), jnp.int32(3))
    np.testing.assert_array_equal(got, randint(STATE, (64,), 0, 3, jnp.uint32)[0])
    jax_says = jax.random.randint(jax.random.key(0), (64,), jnp.int32(-5), jnp.int32(3), jnp.uint32)
    assert set(np.asarray(got).tolist()) == set(np.asarray(jax_says).tolist()) == {0, 1, 2}
    # both uint32 bounds above int32's range: both clamp to its maximum, an empty range
    big = jnp.uint32(3_000_000_000), jnp.uint32(4_000_000_000)
    got = _jit_randint(jnp.int32)(*big)
    jax_says = jax.jit(lambda lo, hi: jax.random.randint(jax.random.key(0), (8,), lo, hi, jnp.int32))(*big)
    np.testing.assert_array_equal(got, np.full(8, 2**31 - 1, np.int32))
    np.testing.assert_array_equal(got, jax_says)
    # maxval above the range is the range's end (exclusive): [5, 2**31 - 1)
    got = _jit_randint(jnp.int32, (64,))(jnp.uint32(5), jnp.uint32(4_000_000_000))
    np.testing.assert_array_equal(got, randint(STATE, (64,), 5, 2**31 - 1, jnp.int32)[0])


def test_traced_64_bit_bounds_clamp_to_int32(x64):
    got = _jit_randint(jnp.int32, (64,))(jnp.int64(-(2**40)), jnp.int64(2**40))
    np.testing.assert_array_equal(got, randint(STATE, (64,), -(2**31), 2**31 - 1, jnp.int32)[0])


@pytest.mark.parametrize(
    ("p", "shown"),
    [
        (float("nan"), "nan"),
        (-0.5, "-0.5"),
        (1.5, "1.5"),
        (np.array([0.5, 1.0, 1.25], np.float32), r"np.float32\(1.25\)"),
        (np.array([0.0, -1e-3, 0.5]), r"np.float64\(-0.001\)"),
        (jnp.float32(np.nan), r"Array\(nan, dtype=float32\)"),
    ],
)
def test_concrete_probability_outside_0_1_is_refused_eager_and_under_jit(p, shown):
    match = rf"^bernoulli: p must be in \[0, 1\]; got p={shown} \(shape \(3,\)\)\."
    with pytest.raises(ValidationError, match=match):
        bernoulli(STATE, p, (3,))
    with pytest.raises(ValidationError, match=match):
        jax.jit(lambda s: bernoulli(s, p, (3,))[0])(STATE)  # p closed over: concrete at trace time


def test_probability_bounds_0_and_1_are_accepted():
    np.testing.assert_array_equal(bernoulli(STATE, 0.0, (64,))[0], np.zeros(64, bool))
    np.testing.assert_array_equal(bernoulli(STATE, 1, (64,))[0], np.ones(64, bool))


@pytest.mark.parametrize(("p", "value"), [(-0.5, False), (float("nan"), False), (1.5, True), (1.0, True)])
def test_traced_probability_outside_0_1_compares_as_is(p, value):
    got = jax.jit(lambda q: bernoulli(STATE, q, (64,))[0])(jnp.float32(p))
    np.testing.assert_array_equal(got, np.full(64, value))


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (
            lambda: uniform(STATE, (2,), jnp.float32, "0"),
            r"uniform: minval must be a real number .*; got minval='0' \(type str\)",
        ),
        (
            lambda: uniform(STATE, (2,), jnp.float32, 0.0, None),
            r"uniform: maxval must .*; got maxval=None \(type NoneType\)",
        ),
        (lambda: normal(STATE, (2,), jnp.float32, "a"), r"normal: mean must be a real number .*; got mean='a'"),
        (lambda: normal(STATE, (2,), jnp.float32, 0.0, None), r"normal: stddev must .*; got stddev=None"),
        (lambda: bernoulli(STATE, None, (2,)), r"bernoulli: p must be a real number .*; got p=None \(type NoneType\)"),
        (lambda: bernoulli(STATE, 0.5j, (2,)), r"bernoulli: p must be a real number .*; got p=0.5j \(type complex\)"),
        (lambda: bernoulli(STATE, np.full(2, 0.5j)), r"bernoulli: p must .*; got p=array\(.*\) \(dtype complex128\)"),
        (
            lambda: randint(STATE, (2,), "a", 5),
            r"randint: minval must be a real number .*; got minval='a' \(type str\)",
        ),
        (lambda: randint(STATE, (2,), 0, None), r"randint: maxval must be a real number .*; got maxval=None"),
        (lambda: dropout(STATE, jnp.ones(2), "0.5"), r"dropout: rate must be a real number .*; got rate='0.5'"),
    ],
)
def test_wrong_typed_parameters_are_named_type_errors(call, match):
    with pytest.raises(TypeError, match=match):
        call()
    with pytest.raises(TypeError, match=match):
        jax.jit(lambda: call()[0])()
