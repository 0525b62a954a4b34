"""The 512-bit-vector twins of the Philox entry points: picked only at the top level, same values as the plain ones.

This host may lack AVX-512, so the tests force `host_has_avx512` either way; the wide twin
compiles with ``xla_cpu_prefer_vector_width=512`` on any x86 CPU (LLVM splits the vectors).
The twin is for arrays on the CPU: the tests put theirs there (the `cpu` fixture), so that
they check the same calls on a GPU machine, whose default device is a GPU; one test checks
that arrays on another device (where there is one) take the plain twin.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import dmljax
from dmljax._core import platform
from dmljax._random import distributions, dropout, generator, vector_width

STATE = dmljax.random.make_state(0xC0FFEE, counter=2**32 - 3)
SHAPE = (5, 1023)

CALLS = {
    "random_generator": (lambda s: dmljax.random.random_generator(s, SHAPE), generator._random_generator_wide),
    "uniform": (lambda s: dmljax.random.uniform(s, SHAPE), distributions._uniform_wide),
    "normal": (lambda s: dmljax.random.normal(s, SHAPE), distributions._normal_wide),
    "randint": (lambda s: dmljax.random.randint(s, SHAPE, -3, 1000), distributions._randint_wide),
    "bernoulli": (lambda s: dmljax.random.bernoulli(s, 0.25, SHAPE), distributions._uniform_wide),
    "dropout": (lambda s: dmljax.random.dropout(s, jnp.ones(SHAPE), 0.5), dropout._dropout_scaled_wide),
}


@pytest.fixture
def avx512(monkeypatch):
    monkeypatch.setattr(platform, "host_has_avx512", lambda: True)


@pytest.mark.slow
@pytest.mark.parametrize("name", CALLS)
def test_eager_call_on_an_avx512_host_runs_the_wide_twin_with_the_same_values(name, avx512, cpu):
    call, wide = CALLS[name]
    wide.clear_cache()
    state = jax.device_put(STATE, cpu)
    value, next_state = call(state)
    assert wide._cache_size() == 1
    plain_value, plain_state = jax.jit(call)(state)  # inside a trace: the plain ops
    np.testing.assert_array_equal(value, plain_value)
    np.testing.assert_array_equal(next_state, plain_state)


@pytest.mark.slow
@pytest.mark.parametrize("name", CALLS)
def test_calls_inside_a_trace_never_take_the_wide_twin(name, avx512):
    # A nested jit with compiler_options raises in JAX: jit, vmap and grad-free traces must run the plain twin.
    call, _ = CALLS[name]
    states = jnp.stack([STATE, dmljax.random.advance(STATE, 7)])
    batched, _ = jax.vmap(call)(states)
    np.testing.assert_array_equal(batched[0], call(STATE)[0])


def test_without_avx512_eager_calls_run_the_plain_twin(monkeypatch):
    monkeypatch.setattr(platform, "host_has_avx512", lambda: False)
    wide = generator._random_generator_wide
    wide.clear_cache()
    dmljax.random.random_generator(STATE, (3, 17))
    assert wide._cache_size() == 0


def test_applies_only_at_the_top_level_to_cpu_arrays(avx512, cpu):
    state = jax.device_put(STATE, cpu)
    assert vector_width.applies(state, (3, 4), None)
    assert not jax.jit(lambda s: jnp.asarray(vector_width.applies(s)))(state)


def test_applies_to_host_values_only_on_a_cpu_default_backend(avx512, monkeypatch):
    host_state = np.asarray(STATE)
    monkeypatch.setattr(jax, "default_backend", lambda: "cpu")
    assert vector_width.applies(host_state, (3, 4), None)
    monkeypatch.setattr(jax, "default_backend", lambda: "gpu")
    assert not vector_width.applies(host_state, (3, 4), None)


def test_uncommitted_arrays_follow_the_default_device_committed_ones_their_own(avx512, monkeypatch):
    # jit runs uncommitted arrays on JAX's default device: a CPU array made under
    # `jax.default_device(cpu)` and passed on a GPU machine runs on the GPU.
    uncommitted = jnp.asarray(STATE)
    committed = jax.device_put(STATE, jax.devices("cpu")[0])
    assert not uncommitted.committed and committed.committed
    monkeypatch.setattr(jax, "default_backend", lambda: "gpu")  # a GPU machine, as far as `applies` can tell
    assert not vector_width.applies(uncommitted, (3, 4), None)
    assert vector_width.applies(committed, (3, 4), None)
    with jax.default_device("cpu"):  # a platform name, or a device
        assert vector_width.default_platform() == "cpu" and vector_width.applies(uncommitted, (3, 4), None)
    with jax.default_device(jax.devices("cpu")[0]):
        assert vector_width.applies(uncommitted, (3, 4), None)


@pytest.mark.parametrize(("flags", "want"), [("fpu sse2 avx2 avx512f avx512bw", True), ("fpu sse2 avx2 fma", False)])
def test_host_has_avx512_reads_the_cpuinfo_flags(tmp_path, flags, want):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(f"processor\t: 0\nmodel name\t: test\nflags\t\t: {flags}\n\n")
    assert platform.host_has_avx512(str(cpuinfo)) is want


def test_host_has_avx512_is_false_without_cpuinfo(tmp_path):
    assert platform.host_has_avx512(str(tmp_path / "missing")) is False


def test_applies_checks_the_devices_of_an_out_sharding(avx512, cpu):
    state = jax.device_put(STATE, cpu)
    mesh = jax.sharding.Mesh(np.array([cpu]), ("d",))
    sharding = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("d"))
    assert vector_width.applies(state, (4,), sharding)
    abstract = jax.sharding.NamedSharding(mesh.abstract_mesh, jax.sharding.PartitionSpec("d"))
    assert not vector_width.applies(state, (4,), abstract)


OTHER_DEVICES = [device for device in jax.devices() if device.platform != "cpu"]  # a GPU machine's GPUs


@pytest.mark.skipif(not OTHER_DEVICES, reason="needs a device other than the CPU (a GPU)")
def test_arrays_and_out_shardings_on_another_device_take_the_plain_twin(avx512):
    call, wide = CALLS["random_generator"]
    wide.clear_cache()
    state = jax.device_put(STATE, OTHER_DEVICES[0])
    assert not vector_width.applies(state, (4,), None)
    value, _ = call(state)
    assert wide._cache_size() == 0 and value.devices() == {OTHER_DEVICES[0]}
    cpu_state = jax.device_put(STATE, jax.devices("cpu")[0])
    sharding = jax.sharding.NamedSharding(
        jax.sharding.Mesh(np.array(OTHER_DEVICES[:1]), ("d",)), jax.sharding.PartitionSpec()
    )
    assert not vector_width.applies(cpu_state, (4,), sharding)
    assert not vector_width.applies(np.asarray(STATE), (4,), None)  # host values: the default backend, not the CPU


def test_nested_jit_still_refuses_compiler_options():
    """Why `vector_width` keeps two jitted twins of each entry point (jax 0.10.2).

    `jax.jit` takes ``compiler_options`` only at the top level: a nested `jit` that carries
    them raises, so dmljax cannot compile its own ops with 512-bit vectors inside a user's
    `jit`, and picks the wide twin only for top-level calls (`vector_width.applies`). If this
    test fails, nested options work now: the twins could become one function.
    """
    inner = jax.jit(lambda x: x + 1, compiler_options=vector_width.WIDE_VECTORS)
    with pytest.raises(ValueError, match="compiler_options"):
        jax.jit(inner)(1.0)


def test_abstract_mesh_sharding_still_has_no_device_set(monkeypatch):
    """Why `vector_width.applies` catches ValueError from ``device_set`` (jax 0.10.2).

    An ``out_sharding`` on an abstract mesh names no devices (the program's place is
    unknown); `applies` then takes the plain twin. If this test fails, ``device_set`` of such
    a sharding no longer raises: `applies` can drop its ``except ValueError``.
    """
    sharding = jax.sharding.NamedSharding(jax.sharding.AbstractMesh((1,), ("x",)), jax.sharding.PartitionSpec("x"))
    with pytest.raises(ValueError, match="device_set"):
        _ = sharding.device_set
    monkeypatch.setattr(platform, "host_has_avx512", lambda: True)
    assert not vector_width.applies(np.zeros(6, np.uint32), (4,), sharding)
