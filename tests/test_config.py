"""dmljax.config: the options' API, and every formulation forced on and off against the loop oracle.

The per-platform formulations normally switch on from 16-64 MiB; with their thresholds at 0
they run on the small arrays here, and with their switches off the plain formulations run.
Either way each operator must compute what `tests/reference.py` computes, bit for bit
(gradient cotangents are small integers, so sums are exact in any order).
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import dmljax
from dmljax import TensorDesc, config, packed_strides
from dmljax._core import platform
from dmljax._core.config import OPTIONS, Config
from tests import reference

SWITCHES = [o.name for o in OPTIONS if isinstance(o.default, bool)]
THRESHOLDS = [o.name for o in OPTIONS if not isinstance(o.default, bool)]
SETTINGS = {
    "defaults": {},
    "every switch off": dict.fromkeys(SWITCHES, False),
    # Every formulation at every size: minimums at 0, maximums beyond any array here.
    "every formulation forced on": {
        **dict.fromkeys(SWITCHES, True),
        **{name: 2**40 if "max" in name else 0 for name in THRESHOLDS},
    },
    # Each switch off alone.
    **{f"{name} off": {name: False} for name in SWITCHES},
}


@pytest.mark.parametrize("option", OPTIONS, ids=lambda option: option.name)
def test_every_option_is_set_by_its_environment_variable_and_has_help(option):
    """A switch reads ``0``, a threshold ``7`` from ``DMLJAX_<NAME>``; each refuses the other kind's text."""
    switch = isinstance(option.default, bool)
    text, value, wrong = ("0", False, "7") if switch else ("7", 7, "true")
    got = getattr(Config(OPTIONS, {option.env: text}), option.name)
    assert got == value and isinstance(got, bool) == switch
    with pytest.raises(ValueError, match=f"{option.env} must be"):
        Config(OPTIONS, {option.env: wrong})
    assert config.help(option.name).startswith(f"{option.name} (default {option.default!r}")


def test_update_and_override_set_and_restore():
    before = config.values()
    with config.override(flat_formulations=False, philox_short_row=3):
        assert (config.flat_formulations, config.philox_short_row) == (False, 3)
    assert config.values() == before
    config.update("philox_short_row", 5)
    try:
        assert config.philox_short_row == 5
    finally:
        config.update("philox_short_row", before["philox_short_row"])


def test_functions_traced_before_are_traced_again_under_other_values():
    traced = []

    @jax.jit
    def f(x):
        traced.append(config.flat_formulations)
        return x + 1

    f(1.0)
    f(2.0)
    with config.override(flat_formulations=False):
        f(3.0)
    f(4.0)  # the first trace, still cached
    assert traced == [True, False]


@pytest.mark.parametrize(
    ("name", "value", "error", "match"),
    [
        ("tiled_transpose", 1, TypeError, "tiled_transpose must be a bool; got tiled_transpose=1"),
        ("philox_short_row", -1, TypeError, "philox_short_row must be an int >= 0; got philox_short_row=-1"),
        ("philox_short_row", True, TypeError, "philox_short_row must be an int >= 0; got philox_short_row=True"),
        ("no_such_option", True, AttributeError, "dmljax.config has no option 'no_such_option'"),
    ],
)
def test_bad_updates_name_the_option_and_the_value(name, value, error, match):
    with pytest.raises(error, match=match):
        config.update(name, value)
    with pytest.raises(error, match=match):
        with config.override(**{name: value}):
            pass


def test_environment_variables_set_options_at_import():
    environ = {"DMLJAX_FLAT_FORMULATIONS": "0", "DMLJAX_PHILOX_SHORT_ROW": "0x20", "OTHER": "x"}
    values = Config(OPTIONS, environ).values()
    assert values["flat_formulations"] is False and values["philox_short_row"] == 32
    assert Config(OPTIONS, {"DMLJAX_TILED_TRANSPOSE": "true"}).tiled_transpose is True
    with pytest.raises(ValueError, match="DMLJAX_TILED_TRANSPOSE must be a bool .*; got DMLJAX_TILED_TRANSPOSE='2'"):
        Config(OPTIONS, {"DMLJAX_TILED_TRANSPOSE": "2"})
    with pytest.raises(ValueError, match="DMLJAX_PHILOX_SHORT_ROW must be an int >= 0; got .*='-1'"):
        Config(OPTIONS, {"DMLJAX_PHILOX_SHORT_ROW": "-1"})


def test_a_switch_changes_the_compiled_program(cpu):
    x, i = jnp.zeros((8, 16)), jnp.zeros((8, 16), jnp.int32)
    lower = lambda: jax.jit(lambda x, i: dmljax.scatter(x, i, x, axis=1, mode="clip")).lower(x, i).as_text()  # noqa: E731
    flat = lower()
    with config.override(flat_formulations=False):
        plain = lower()
    assert flat != plain


def cotangent_like(shape, rng):
    return rng.integers(-4, 5, shape).astype(np.float32)


# Every switch off, and every formulation forced on, in the fast tier; each switch off alone in --full.
SETTING_PARAMS = [
    pytest.param(
        name, id=name, marks=[pytest.mark.slow] if name.endswith(" off") and name != "every switch off" else []
    )
    for name in SETTINGS
]


@pytest.mark.parametrize("setting", SETTING_PARAMS)
def test_every_formulation_computes_what_the_oracle_computes(setting, cpu):
    rng = np.random.default_rng(sorted(SETTINGS).index(setting))
    with config.override(**SETTINGS[setting]):
        # scatter along both axes, unique rows of indices
        data = rng.standard_normal((6, 64)).astype(np.float32)
        for axis in (0, 1):
            index = np.argsort(rng.random(data.shape), axis=axis)[:4] if axis == 0 else rng.permutation(64)[None, :32]
            index = np.broadcast_to(index, (4, 64) if axis == 0 else (6, 32)).copy()
            updates = rng.standard_normal(index.shape).astype(np.float32)
            got = dmljax.scatter(data, index, updates, axis=axis)
            np.testing.assert_array_equal(got, reference.scatter(data, index, updates, axis))

        # gather along axis 1 with little data after it (rows and flat gradients), and its gradient
        data = rng.standard_normal((5, 40, 2)).astype(np.float32)
        index = rng.integers(-40, 40, (7,))
        got, vjp = jax.vjp(lambda d: dmljax.gather(d, index, axis=1), data)
        np.testing.assert_array_equal(got, reference.gather(data, index, 1))
        cot = cotangent_like(got.shape, rng)
        np.testing.assert_array_equal(vjp(cot)[0], reference.gather_grad(data.shape, index, cot, 1))

        # gather_elements along a leading axis whose columns fill whole blocks, and its gradient
        data = rng.standard_normal((40, 64)).astype(np.float32)
        index = rng.integers(0, 40, (40, 64))
        got, vjp = jax.vjp(lambda d: dmljax.gather_elements(d, index, axis=0), data)
        np.testing.assert_array_equal(got, reference.gather_elements(data, index, 0))
        cot = cotangent_like(got.shape, rng)
        np.testing.assert_array_equal(vjp(cot)[0], reference.gather_elements_grad(data.shape, index, cot, 0))

        # an NHWC buffer read and written (the tiled transpose)
        sizes = (2, 3, 4, 8)
        strides = packed_strides(sizes, "NHWC")
        desc = TensorDesc("float32", sizes, strides)
        buffer = rng.standard_normal(desc.buffer_elements).astype(np.float32)
        np.testing.assert_array_equal(dmljax.read_tensor(buffer, desc), reference.read_tensor(buffer, sizes, strides))
        value = rng.standard_normal(sizes).astype(np.float32)
        want = reference.write_tensor(buffer, sizes, strides, value)
        np.testing.assert_array_equal(dmljax.write_tensor(buffer, desc, value), want)

        # Philox rows that start inside a block, short and long
        state = dmljax.random.make_state(7, counter=2**32 - 3)
        for shape in ((3, 5), (2, 3, 7), (2, 21)):
            bits, next_state = dmljax.random.random_generator(state, shape)
            want_bits, want_state = reference.random_generator(np.asarray(state), shape)
            np.testing.assert_array_equal(bits, want_bits)
            np.testing.assert_array_equal(next_state, want_state)

        # scatter reductions with duplicates whose float32 sums and products show the order
        data = rng.standard_normal((3, 4)).astype(np.float32)
        index = rng.integers(-4, 4, (3, 40))
        for reduction, values in (("add", [1e8, -1e8, 1.0, 3.0]), ("mul", [1.1, -0.7, 3.3, 1.3])):
            updates = rng.choice(np.array(values, np.float32), index.shape)
            got = dmljax.scatter(data, index, updates, axis=1, reduction=reduction)
            np.testing.assert_array_equal(got, reference.scatter_elements(data, index, updates, 1, reduction))
        tuples = rng.integers(0, 3, (50, 1))
        rows = rng.choice(np.array([1e8, -1e8, 1.0], np.float32), (50, 4))
        got = dmljax.scatter_nd(data, tuples, rows, reduction="add")
        np.testing.assert_array_equal(got, reference.scatter_nd(data, tuples, rows, "add"))

        # the eager range check, two stages or one
        index = np.zeros((4, 32), np.int32)
        index[2, 17] = 40
        with pytest.raises(IndexError, match="40"):
            dmljax.gather_elements(jnp.zeros((40, 32)), jnp.asarray(index), axis=0)


@pytest.mark.hlo
@pytest.mark.parametrize("avx512", [False, True], ids=["avx2", "avx512"])
def test_forcing_every_formulation_on_runs_the_blocked_forward_on_every_host(cpu, monkeypatch, avx512):
    """If this fails: docs/design/blocked-gather.md (the CPU forward per host class)."""
    # The oracle test above runs the blocked forward only if the setting forces it on this host too.
    monkeypatch.setattr(platform, "host_has_avx512", lambda: avx512)
    jax.clear_caches()
    spec = (jax.ShapeDtypeStruct((40, 64), jnp.float32), jax.ShapeDtypeStruct((40, 64), jnp.int32))
    with config.override(**SETTINGS["every formulation forced on"]):
        text = jax.jit(lambda d, i: dmljax.gather_elements(d, i, axis=0)).lower(*spec).compile().as_text()
    jax.clear_caches()
    assert text.split("ENTRY")[1].count(" conditional(") == 2


def test_assignment_and_misspelled_names_are_refused():
    before = config.values()
    with pytest.raises(AttributeError, match=r"not set by assignment; use dmljax.config.update\('cpu_ordered_scatter'"):
        config.cpu_ordered_scatter = False
    with pytest.raises(AttributeError, match="has no option 'cpu_ordred_scatter'"):
        config.cpu_ordred_scatter = False
    with pytest.raises(AttributeError, match="has no option 'cpu_ordred_scatter'"):
        config.cpu_ordred_scatter  # noqa: B018
    assert config.values() == before and "cpu_ordered_scatter" not in vars(config)


def test_a_users_jit_is_keyed_on_the_options(cpu):
    """One jitted function, the same shapes: each option value traces its own formulation."""
    traced = []

    @jax.jit
    def f(x, i, u):
        traced.append(config.cpu_ordered_scatter)
        return dmljax.scatter(x, i, u, axis=0, reduction="add")

    args = (jnp.zeros((4,)), jnp.array([1, 1, 2]), jnp.array([1.0, 2.0, 3.0]))
    on = f.lower(*args).as_text()
    want = f(*args)
    with config.override(cpu_ordered_scatter=False):
        off = f.lower(*args).as_text()
        np.testing.assert_array_equal(f(*args), want)
    f(*args)
    assert traced == [True, False]  # lower and call share the trace cache: one trace per value
    assert on != off


def test_update_flushes_nothing():
    traced = []

    @jax.jit
    def f(x):
        traced.append(config.philox_short_row)
        return x + 1

    f(1.0)
    before = config.philox_short_row
    config.update("philox_short_row", before + 1)
    try:
        f(1.0)
    finally:
        config.update("philox_short_row", before)
    f(1.0)  # the first trace is still cached: nothing was flushed
    assert traced == [before, before + 1]


def test_overrides_are_thread_local():
    import threading

    barrier, seen, errors = threading.Barrier(2), {}, []

    def worker(value):
        try:
            with config.override(philox_short_row=value):
                barrier.wait()  # both threads inside their blocks at once
                seen[value] = config.philox_short_row
                barrier.wait()
            seen[-value] = config.philox_short_row
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    default = config.philox_short_row
    threads = [threading.Thread(target=worker, args=(v,)) for v in (3, 5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and seen == {3: 3, 5: 5, -3: default, -5: default}
    assert config.philox_short_row == default


def test_update_inside_an_override_changes_the_other_options():
    before = config.values()
    with config.override(flat_formulations=False):
        config.update("philox_short_row", 7)
        try:
            assert (config.flat_formulations, config.philox_short_row) == (False, 7)
        finally:
            config.update("philox_short_row", before["philox_short_row"])
    assert config.values() == before


def test_without_jax_user_contexts_the_options_still_set_and_override(monkeypatch):
    """A jax without `jax.make_user_context`: the fallback keeps update/override semantics (no jit key)."""
    monkeypatch.delattr(jax, "make_user_context")
    fallback = Config(OPTIONS, {})
    assert type(fallback._global).__name__ == "_Fallback"
    fallback.update("philox_short_row", 4)
    with fallback.override(philox_short_row=5, tiled_transpose=False):
        assert (fallback.philox_short_row, fallback.tiled_transpose) == (5, False)
        seen = []
        import threading

        thread = threading.Thread(target=lambda: seen.append(fallback.philox_short_row))
        thread.start()
        thread.join()
        assert seen == [4]  # another thread: the process-wide value
    assert (fallback.philox_short_row, fallback.tiled_transpose) == (4, True)
