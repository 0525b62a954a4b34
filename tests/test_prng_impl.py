"""prng_impl: jax.random keys whose data is the Philox state, against the oracle and dmljax's own functions."""

import os
import pathlib
import re
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import dmljax
from dmljax._random.prng_impl import NAME
from dmljax._random.prng_impl import _words as prng_words
from dmljax.random import fold_in, make_state, prng_impl, random_generator, split
from tests import reference

STATE = make_state(0x5EED, counter=2**64 - 2)  # a carry into word 2 after two blocks


def key(state=STATE):
    return jax.random.wrap_key_data(state, impl=prng_impl)


@pytest.mark.parametrize("seed", [0, 7, 2**31 - 1])
def test_key_data_is_make_state(seed):
    np.testing.assert_array_equal(jax.random.key_data(jax.random.key(seed, impl=prng_impl)), make_state(seed))
    np.testing.assert_array_equal(jax.random.key_data(key(make_state(seed))), make_state(seed))


def test_64_bit_seed_with_x64(x64):
    seed = 0x0123456789ABCDEF
    np.testing.assert_array_equal(jax.random.key_data(jax.random.key(seed, impl=prng_impl)), make_state(seed))


@pytest.mark.parametrize("shape", [(8,), (3, 5), (), (1,), (2, 3, 4), (1,) * 9, (2, 2, 1, 1, 1, 1, 1, 1, 3)])
def test_bits_uint32_are_random_generator(shape):
    got = jax.random.bits(key(), shape, jnp.uint32)
    n = int(np.prod(shape))
    want = reference.random_generator(STATE, (n,))[0].reshape(shape)
    np.testing.assert_array_equal(got, want)
    if 1 <= len(shape) <= 8:
        np.testing.assert_array_equal(got, random_generator(STATE, shape)[0])


def test_bits_of_zero_size():
    assert jax.random.bits(key(), (2, 0), jnp.uint32).shape == (2, 0)


@pytest.mark.parametrize("dtype", [jnp.uint8, jnp.uint16])
def test_narrow_bits_are_the_low_bits_of_one_word_each(dtype):
    want = reference.random_generator(STATE, (13,))[0].astype(dtype)
    np.testing.assert_array_equal(jax.random.bits(key(), (13,), dtype), want)


def test_64_bit_values_take_two_words_low_first(x64):
    words = reference.random_generator(STATE, (2 * 7,))[0].astype(np.uint64)
    want = (words[0::2] | words[1::2] << np.uint64(32)).reshape(7)
    np.testing.assert_array_equal(jax.random.bits(key(), (7,), jnp.uint64), want)


def test_split_and_fold_in_are_dmljax_split_and_fold_in():
    np.testing.assert_array_equal(jax.random.key_data(jax.random.split(key(), 4)), split(STATE, 4))
    np.testing.assert_array_equal(jax.random.key_data(jax.random.split(key(), 4)), reference.split(STATE, 4))
    grid = jax.random.key_data(jax.random.split(key(), (2, 3)))
    np.testing.assert_array_equal(grid, np.asarray(split(STATE, 6)).reshape(2, 3, 6))
    for data in (0, 3, 2**32 - 1):
        np.testing.assert_array_equal(jax.random.key_data(jax.random.fold_in(key(), data)), fold_in(STATE, data))


def test_jit_and_vmap_equal_eager():
    states = jnp.stack([make_state(s, 2**32 - s) for s in range(4)])
    keys = jax.random.wrap_key_data(states, impl=prng_impl)
    batched = jax.jit(jax.vmap(lambda k: jax.random.bits(k, (6,), jnp.uint32)))(keys)
    for state, row in zip(states, batched, strict=True):
        np.testing.assert_array_equal(row, random_generator(state, (6,))[0])
    folded = jax.jit(jax.vmap(jax.random.fold_in))(keys, jnp.arange(4, dtype=jnp.uint32))
    want = np.stack([fold_in(s, i) for i, s in enumerate(states)])
    np.testing.assert_array_equal(jax.random.key_data(folded), want)


@pytest.mark.parametrize("shape", [2**32 + 1, (2**16, 2**16 + 1)], ids=["2^32 + 1", "2^16 x (2^16 + 1)"])
def test_split_into_more_than_2_32_keys_is_refused_not_repeated(shape):
    n = int(np.prod(shape))
    with pytest.raises(dmljax.ValidationError, match=rf"at most 2\*\*32 keys.*{n} keys"):
        jax.random.split(key(), shape)  # eager: refused before anything is allocated
    with pytest.raises(dmljax.ValidationError, match=rf"{n} keys"):
        jax.jit(lambda k: jax.random.split(k, shape)).lower(key())


def test_split_into_2_32_keys_is_allowed():
    lowered = jax.jit(lambda k: jax.random.key_data(jax.random.split(k, 2**32))).lower(key())
    assert lowered.out_info.shape == (2**32, 6)


@pytest.mark.parametrize(
    ("dtype", "shape"),
    [(jnp.uint32, (2**32 + 8,)), (jnp.uint8, (3, 2**31 - 1)), (jnp.uint64, (2**31 + 1,))],
    ids=["uint32 2^32 + 8", "uint8 3 x (2^31 - 1)", "uint64 2^31 + 1 (x64)"],
)
def test_bits_past_2_32_words_are_generated_in_chunks(dtype, shape):
    with jax.enable_x64(dtype == jnp.uint64):
        lowered = jax.jit(lambda k: jax.random.bits(k, shape, dtype)).lower(key())
    assert lowered.out_info.shape == shape and lowered.out_info.dtype == dtype


@pytest.mark.slow
@pytest.mark.parametrize("chunk", [4, 8, 12])
@pytest.mark.parametrize("shape", [(40,), (5, 7), (3, 1, 9), (13,)])
def test_chunked_words_are_the_stream(chunk, shape):
    n = int(np.prod(shape))
    for state in (STATE, make_state(9, counter=2**32 - 2), make_state(1, counter=2**128 - 3)):
        want = reference.random_generator(state, (n,))[0].reshape(shape)
        np.testing.assert_array_equal(prng_words(state, shape, chunk=chunk), want)
        np.testing.assert_array_equal(jax.jit(prng_words, static_argnums=(1, 2))(state, shape, chunk), want)


@pytest.mark.slow
def test_jax_random_distributions_use_jax_conversions_of_the_bits():
    words = random_generator(STATE, (5,))[0]
    want = jax.lax.bitcast_convert_type(words >> 9 | np.uint32(0x3F800000), jnp.float32) - 1
    np.testing.assert_array_equal(jax.jit(lambda k: jax.random.uniform(k, (5,)))(key()), want)
    assert jax.random.normal(key(), (3, 2)).shape == (3, 2)
    assert sorted(np.asarray(jax.random.permutation(key(), 10)).tolist()) == list(range(10))
    draws = jax.vmap(lambda k: jax.random.categorical(k, jnp.log(jnp.array([0.1, 0.0, 0.9]))))(
        jax.random.split(key(), 400)
    )
    assert set(np.asarray(draws).tolist()) <= {0, 2}


def test_equinox_dropout_runs_on_the_philox_stream():
    eqx = pytest.importorskip("equinox")
    x = jnp.ones(16)
    y = eqx.nn.Dropout(p=0.5)(x, key=key())
    keep = jax.random.bernoulli(key(), 0.5, (16,))
    np.testing.assert_array_equal(y, jnp.where(keep, 2.0, 0.0))


def test_flax_nnx_dropout_runs_on_the_philox_stream():
    nnx = pytest.importorskip("flax.nnx")
    rngs = nnx.Rngs(dropout=key())
    y = nnx.Dropout(0.5, rngs=rngs)(jnp.ones(16))
    assert set(np.asarray(y).tolist()) <= {0.0, 2.0}
    again = nnx.Dropout(0.5, rngs=nnx.Rngs(dropout=key()))(jnp.ones(16))
    np.testing.assert_array_equal(y, again)
    assert dmljax.random.prng_impl is prng_impl


def test_randomness_guide_flax_and_equinox_block_runs():
    pytest.importorskip("equinox")
    pytest.importorskip("flax.nnx")
    page = pathlib.Path(__file__).resolve().parents[1] / "docs" / "guides" / "randomness.md"
    text = page.read_text()
    section = text[text.index("## `jax.random`, Flax and Equinox") :].split("\n## ", 1)[0]
    (snippet,) = [b for b in re.findall(r"```python\n(.*?)```", section, flags=re.S) if "import equinox" in b]
    exec(compile(snippet, str(page), "exec"), {"__name__": "docs_random"})


# --- the registered name: jax.random.key(impl=NAME), jax_default_prng_impl, checkpoints ---------


def test_jax_resolves_the_registered_name():
    assert jax.random.key_impl(key()) == NAME == "dmljax_philox4x32_10"  # checkpoints store this string
    np.testing.assert_array_equal(jax.random.key_data(jax.random.key(9, impl=NAME)), make_state(9))
    again = jax.random.wrap_key_data(make_state(9), impl=NAME)
    np.testing.assert_array_equal(jax.random.bits(again, (5,)), random_generator(make_state(9), (5,))[0])


def test_one_name_everywhere():
    """The registered name is the tag too: the key dtype, str(impl) and JAX's messages say it."""
    k = key()
    assert k.dtype.name == f"key<{NAME}>" and str(prng_impl) == NAME and repr(prng_impl) == f"PRNGSpec({NAME!r})"
    with pytest.raises(NotImplementedError, match=f"threefry2x32 RNG, not {NAME}$"):
        jax.random.poisson(k, 1.0)


def test_the_earlier_tag_still_resolves():
    """Checkpoints written before stored impl "dml" (the tag then): it resolves to the same implementation."""
    restored = jax.random.wrap_key_data(make_state(9), impl="dml")
    assert restored.dtype == key().dtype and jax.random.key_impl(restored) == NAME
    np.testing.assert_array_equal(jax.random.bits(restored, (5,)), random_generator(make_state(9), (5,))[0])
    with jax.default_prng_impl("dml"):
        assert jax.random.key_impl(jax.random.key(1)) == NAME


@pytest.mark.parametrize("shape", [(), (3,), (2, 2)])
def test_key_arrays_pickle(shape):
    import pickle

    keys = jax.random.split(key(), shape) if shape else key()
    again = pickle.loads(pickle.dumps(keys))
    assert again.dtype == keys.dtype and again.shape == keys.shape
    np.testing.assert_array_equal(jax.random.key_data(again), jax.random.key_data(keys))
    flat = again.reshape(-1)[0]
    np.testing.assert_array_equal(jax.random.bits(flat, (4,)), jax.random.bits(keys.reshape(-1)[0], (4,)))


def test_the_default_prng_impl_accepts_the_name_in_a_context():
    with jax.default_prng_impl(NAME):
        default_key = jax.random.key(11)
    assert jax.random.key_impl(default_key) == NAME
    np.testing.assert_array_equal(jax.random.key_data(default_key), make_state(11))
    assert jax.random.key_impl(jax.random.key(11)) == "threefry2x32"  # restored on leaving
    with pytest.raises(ValueError, match="got dmljax_other"), jax.default_prng_impl("dmljax_other"):
        pass


@pytest.mark.system
def test_jax_config_update_of_the_default_prng_impl_in_a_fresh_process():
    code = f"""
import jax, numpy as np, dmljax
jax.config.update("jax_default_prng_impl", {NAME!r})
assert jax.random.key_impl(jax.random.key(3)) == {NAME!r}
np.testing.assert_array_equal(jax.random.key_data(jax.random.key(3)), dmljax.random.make_state(3))
np.testing.assert_array_equal(jax.random.PRNGKey(3), dmljax.random.make_state(3))  # legacy raw keys: the state
np.testing.assert_array_equal(
    jax.random.bits(jax.random.PRNGKey(3), (4,)), dmljax.random.random_generator(dmljax.random.make_state(3), (4,))[0]
)
jax.config.update("jax_default_prng_impl", "threefry2x32")
assert jax.random.key_impl(jax.random.key(3)) == "threefry2x32"
print("ok")
"""
    root = pathlib.Path(__file__).resolve().parents[1]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout == "ok\n", done.stderr[-3000:]


@pytest.mark.slow
def test_orbax_checkpoint_of_an_nnx_model_with_dmljax_rngs_round_trips(tmp_path):
    ocp = pytest.importorskip("orbax.checkpoint")
    nnx = pytest.importorskip("flax.nnx")

    class Model(nnx.Module):
        def __init__(self, rngs):
            self.linear = nnx.Linear(4, 3, rngs=rngs)
            self.dropout = nnx.Dropout(0.5, rngs=rngs)

        def __call__(self, x):
            return self.dropout(self.linear(x))

    def model(seed):
        base = jax.random.key(seed, impl=prng_impl)
        return Model(nnx.Rngs(params=base, dropout=jax.random.fold_in(base, 1)))

    saved = model(0)
    saved(jnp.ones((2, 4)))  # one dropout draw: the Rngs count moves on, and must be restored with the key
    with ocp.StandardCheckpointer() as checkpointer:
        checkpointer.save(tmp_path / "model", nnx.state(saved))
    graphdef, abstract = nnx.split(nnx.eval_shape(lambda: model(1)))
    with ocp.StandardCheckpointer() as checkpointer:
        state = checkpointer.restore(tmp_path / "model", abstract)
    restored = nnx.merge(graphdef, state)
    rng_key = restored.dropout.rngs.key.get_value()
    assert jax.random.key_impl(rng_key) == NAME
    np.testing.assert_array_equal(jax.random.key_data(rng_key), jax.random.key_data(saved.dropout.rngs.key.get_value()))
    x = jnp.arange(8.0).reshape(2, 4)
    np.testing.assert_array_equal(restored(x), saved(x))  # same weights, same next dropout mask


@pytest.mark.system
def test_an_orbax_checkpoint_restores_in_a_fresh_process_that_imports_dmljax(tmp_path):
    ocp = pytest.importorskip("orbax.checkpoint")
    nnx = pytest.importorskip("flax.nnx")
    rngs = nnx.Rngs(dropout=jax.random.fold_in(key(), 5))
    with ocp.StandardCheckpointer() as checkpointer:
        checkpointer.save(tmp_path / "rngs", nnx.state(rngs))
    code = f"""
import jax, dmljax, orbax.checkpoint as ocp
from flax import nnx
abstract = nnx.state(nnx.eval_shape(lambda: nnx.Rngs(dropout=jax.random.key(0, impl=dmljax.random.prng_impl))))
with ocp.StandardCheckpointer() as checkpointer:
    state = checkpointer.restore({str(tmp_path / "rngs")!r}, abstract)
key = state["dropout"]["key"].get_value()
print(jax.random.key_impl(key), jax.random.key_data(key).tolist())
"""
    root = pathlib.Path(__file__).resolve().parents[1]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout == f"{NAME} {fold_in(STATE, 5).tolist()}\n"


# --- every jax.random function on prng_impl keys (the README and the guide say they all work) --

N = 64
DRAWS = {
    "ball": lambda k: jax.random.ball(k, 3, shape=(N,)),
    "bernoulli": lambda k: jax.random.bernoulli(k, 0.5, (N,)),
    "beta": lambda k: jax.random.beta(k, 2.0, 3.0, (N,)),
    "binomial": lambda k: jax.random.binomial(k, 10, 0.3, (N,)),
    "bits": lambda k: jax.random.bits(k, (N,)),
    "categorical": lambda k: jax.random.categorical(k, jnp.zeros(5), shape=(N,)),
    "cauchy": lambda k: jax.random.cauchy(k, (N,)),
    "chisquare": lambda k: jax.random.chisquare(k, 3.0, (N,)),
    "choice": lambda k: jax.random.choice(k, N, (8,), replace=False),
    "clone": lambda k: jax.random.key_data(jax.random.clone(k)),
    "dirichlet": lambda k: jax.random.dirichlet(k, jnp.ones(3), (N,)),
    "double_sided_maxwell": lambda k: jax.random.double_sided_maxwell(k, 0.0, 1.0, (N,)),
    "exponential": lambda k: jax.random.exponential(k, (N,)),
    "f": lambda k: jax.random.f(k, 2.0, 3.0, (N,)),
    "fold_in": lambda k: jax.random.key_data(jax.random.fold_in(k, 3)),
    "gamma": lambda k: jax.random.gamma(k, 2.0, (N,)),
    "generalized_normal": lambda k: jax.random.generalized_normal(k, 2.0, (N,)),
    "geometric": lambda k: jax.random.geometric(k, 0.3, (N,)),
    "gumbel": lambda k: jax.random.gumbel(k, (N,)),
    "laplace": lambda k: jax.random.laplace(k, (N,)),
    "loggamma": lambda k: jax.random.loggamma(k, 2.0, (N,)),
    "logistic": lambda k: jax.random.logistic(k, (N,)),
    "lognormal": lambda k: jax.random.lognormal(k, 1.0, (N,)),
    "maxwell": lambda k: jax.random.maxwell(k, (N,)),
    "multinomial": lambda k: jax.random.multinomial(k, 100, jnp.ones(3) / 3, shape=(N, 3)),
    "multivariate_normal": lambda k: jax.random.multivariate_normal(k, jnp.zeros(2), jnp.eye(2), (N,)),
    "normal": lambda k: jax.random.normal(k, (N,)),
    "orthogonal": lambda k: jax.random.orthogonal(k, 4),
    "pareto": lambda k: jax.random.pareto(k, 2.0, (N,)),
    "permutation": lambda k: jax.random.permutation(k, N),
    "rademacher": lambda k: jax.random.rademacher(k, (N,)),
    "randint": lambda k: jax.random.randint(k, (N,), 0, 1000),
    "rayleigh": lambda k: jax.random.rayleigh(k, 1.0, (N,)),
    "split": lambda k: jax.random.key_data(jax.random.split(k, 3)),
    "t": lambda k: jax.random.t(k, 3.0, (N,)),
    "triangular": lambda k: jax.random.triangular(k, 0.0, 0.5, 1.0, (N,)),
    "truncated_normal": lambda k: jax.random.truncated_normal(k, -1.0, 1.0, (N,)),
    "uniform": lambda k: jax.random.uniform(k, (N,)),
    "wald": lambda k: jax.random.wald(k, 1.0, (N,)),
    "weibull_min": lambda k: jax.random.weibull_min(k, 1.0, 2.0, (N,)),
}
# Functions that take no key to draw from (constructors, key metadata, the `Key` type newer JAX
# exports), and the one JAX refuses.
NOT_DRAWS = {"Key", "PRNGKey", "key", "key_data", "key_dtype", "key_impl", "wrap_key_data", "poisson"}


def test_the_table_names_every_jax_random_function():
    public = {n for n in dir(jax.random) if not n.startswith("_") and callable(getattr(jax.random, n))}
    assert public - NOT_DRAWS == set(DRAWS)  # a function JAX adds shows up here: add it to DRAWS


# The fast tier keeps the most used; the rest (JAX's gamma sampler, a rejection loop, compiles
# for 5-15 s on 2 loaded cores) run with --full.
FAST_DRAWS = {"bernoulli", "bits", "categorical", "normal", "permutation", "uniform"}


@pytest.mark.parametrize(
    "name", [n if n in FAST_DRAWS else pytest.param(n, marks=pytest.mark.slow) for n in sorted(DRAWS)]
)
def test_every_jax_random_function_draws_from_prng_impl_keys(name):
    """Each runs (jitted, as JAX runs most of them eagerly too), finite, and depends on the key's stream."""
    draw = jax.jit(DRAWS[name])
    value = draw(key())
    assert np.all(np.isfinite(np.asarray(value, np.float64)))
    other = key(make_state(0x5EED + 1, counter=2**64 - 2))
    assert not np.array_equal(value, draw(other)), name
    if name in ("clone", "split", "fold_in"):  # keys: the states of dmljax's functions, eagerly too
        want = {"clone": STATE, "split": split(STATE, 3), "fold_in": fold_in(STATE, 3)}[name]
        np.testing.assert_array_equal(value, want)
        np.testing.assert_array_equal(DRAWS[name](key()), want)


@pytest.mark.slow
def test_poisson_refuses_prng_impl_keys_and_the_guides_workaround_runs():
    with pytest.raises(NotImplementedError, match="only implemented for the threefry2x32"):
        jax.random.poisson(key(), 3.0, (4,))
    # The guide's workaround: a threefry key made of two words of the Philox stream.
    threefry = jax.random.wrap_key_data(jax.random.bits(key(), (2,), jnp.uint32), impl="threefry2x32")
    counts = jax.random.poisson(threefry, 3.0, (1000,))
    np.testing.assert_array_equal(jax.random.key_data(threefry), random_generator(STATE, (2,))[0])
    assert counts.dtype == jnp.int32 and 2.7 < float(counts.mean()) < 3.3
