"""Eager checks of concrete device indices: a min/max program of their own, run before the operator's.

The default ``mode=None`` checks concrete indices (`dmljax._ops.common.index_checks.call_checked`): a
jitted ``[min, max]`` (`index_range`, two stages on XLA CPU for large indices) is dispatched
first, then the operator's own jitted program; the result is returned only if the two
scalars are in range, else `IndexError` names the first bad index. References here: NumPy
(`np.take`, `np.take_along_axis`, `np.put_along_axis`) for results and the host-side
check (`check_host`, NumPy's ``argwhere``) for the error text.
"""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import checkify

import dmljax
from dmljax._ops.common import index_checks
from dmljax._ops.common.index_checks import call_checked, check_host, dispatch_range, index_range

SMALL, LARGE = (3, 5), (2048, 1024)  # LARGE: 2^21 indices, the two-stage reduce on XLA CPU


def _scatter_reference(data: np.ndarray, indices: np.ndarray, updates: np.ndarray) -> np.ndarray:
    out = data.copy()
    np.put_along_axis(out, indices, updates, 1)
    return out


def _operators(data: np.ndarray, updates: np.ndarray) -> dict:
    """name -> (dmljax call on device arrays, NumPy reference), all along axis 1."""
    d, u = jnp.asarray(data), jnp.asarray(updates)
    return {
        "gather": (lambda i: dmljax.gather(d, i, axis=1), lambda i: np.take(data, i, 1)),
        "gather_elements": (lambda i: dmljax.gather_elements(d, i, axis=1), lambda i: np.take_along_axis(data, i, 1)),
        "scatter": (lambda i: dmljax.scatter(d, i, u, axis=1), lambda i: _scatter_reference(data, i, updates)),
    }


def _distinct_rows(rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    """Per row a permutation of the columns (scatter needs unique indices), half of them negative."""
    rows, cols = shape
    indices = rng.permuted(np.tile(np.arange(cols, dtype=np.int32), (rows, 1)), axis=1)
    return np.where(rng.random(shape) < 0.5, indices - cols, indices).astype(np.int32)


@pytest.mark.parametrize("shape", [SMALL, LARGE], ids=["small", "large"])
@pytest.mark.parametrize("op", ["gather", "gather_elements", "scatter"])
def test_in_range_device_indices_give_numpy_results(op, shape):
    rng = np.random.default_rng(0)
    data = rng.standard_normal(shape, dtype=np.float32)
    indices = _distinct_rows(rng, shape)
    if op == "gather":
        data = data[:2]
    call, reference = _operators(data, rng.standard_normal(shape, dtype=np.float32))[op]
    np.testing.assert_array_equal(call(jnp.asarray(indices)), reference(indices))


@pytest.mark.parametrize("shape", [SMALL, LARGE], ids=["small", "large"])
@pytest.mark.parametrize("op", ["gather", "gather_elements", "scatter"])
@pytest.mark.parametrize("where", ["first", "middle", "last"])
def test_out_of_range_device_indices_name_the_first_bad_one(op, shape, where):
    rng = np.random.default_rng(1)
    rows, cols = shape
    data = rng.standard_normal((2, cols) if op == "gather" else shape, dtype=np.float32)
    indices = _distinct_rows(rng, shape)
    first = {"first": (0, 0), "middle": (rows // 2, cols // 3), "last": (rows - 1, cols - 2)}[where]
    indices[first] = -cols - 7 if where == "middle" else cols
    indices[rows - 1, cols - 1] = 2**31 - 1  # a second bad index, after the first
    call, _ = _operators(data, rng.standard_normal(shape, dtype=np.float32))[op]
    with pytest.raises(IndexError) as host_error:
        check_host(op, indices, cols, 1)
    with pytest.raises(IndexError) as device_error:
        call(jnp.asarray(indices))
    assert str(device_error.value) == str(host_error.value)
    assert f"indices[{first[0]}, {first[1]}]" in str(device_error.value)


@pytest.mark.parametrize("dtype", ["int64", "uint64"])
def test_large_64_bit_indices_are_checked_at_full_width(x64, dtype):
    indices = np.zeros(LARGE, dtype)
    indices[1000, 17] = 2**40 + 3  # 3 after truncation to 32 bits: in range
    with pytest.raises(IndexError, match=r"gather_elements: index 1099511627779 .*\(indices\[1000, 17\];"):
        dmljax.gather_elements(jnp.zeros(LARGE), jnp.asarray(indices), axis=1)
    assert index_range(jnp.asarray(indices)).tolist() == [0, 2**40 + 3]


@pytest.mark.parametrize("shape", [(0, 32), (4, 0), (2**11, 2**10), (2**21,), (2**15, 8)])
@pytest.mark.parametrize("dtype", ["int32", "uint32"])
def test_index_range_is_min_and_max_for_one_and_two_stages(shape, dtype):
    values = np.random.default_rng(2).integers(0 if dtype == "uint32" else -(2**31), 2**31, shape, dtype=dtype)
    expected = [int(values.min()), int(values.max())] if values.size else [np.iinfo(dtype).max, np.iinfo(dtype).min]
    assert index_range(jnp.asarray(values)).tolist() == expected


def test_the_check_is_dispatched_before_the_operator_and_a_bad_call_returns_nothing(monkeypatch):
    calls = []
    real = index_checks.dispatch_range
    monkeypatch.setattr(index_checks, "dispatch_range", lambda i: calls.append("check") or real(i))

    def impl(data, indices, *, axis):
        calls.append("operator")
        return jnp.take(data, indices, axis)

    data = jnp.arange(6.0).reshape(2, 3)
    out = call_checked("gather", impl, (data, jnp.array([2, -3])), True, axis=1)
    np.testing.assert_array_equal(out, [[2.0, 0.0], [5.0, 3.0]])
    assert calls == ["check", "operator"]
    with pytest.raises(IndexError, match=r"gather: index 3 is out of bounds for axis 1 with size 3 \(indices\[1\];"):
        call_checked("gather", impl, (data, jnp.array([2, 3])), True, axis=1)


def test_the_pinned_host_check_reads_the_same_range_from_host_memory():
    # The GPU's variant, run here on the CPU device, which has pinned host memory too: the same
    # [min, max], in pinned host memory. dispatch_range takes it for GPU arrays only.
    values = np.array([[5, -7, 2], [9, 0, -1]], np.int32)
    cpu = jax.devices("cpu")[0]
    on_cpu = jax.device_put(values, cpu)
    found = index_checks._index_range_to_host(cpu)(on_cpu)
    assert found.tolist() == [-7, 9]
    assert found.sharding.memory_kind == "pinned_host"
    assert dispatch_range(on_cpu).sharding.memory_kind == cpu.default_memory().kind
    on_default = jnp.asarray(values)
    (device,) = on_default.devices()
    kind = "pinned_host" if device.platform == "gpu" else device.default_memory().kind
    assert dispatch_range(on_default).tolist() == [-7, 9]
    assert dispatch_range(on_default).sharding.memory_kind == kind


def _reduces(indices: jax.Array) -> list[str]:
    """The reduced dimensions of every reduction in the compiled `index_range` program."""
    return re.findall(r" reduce\(.*?dimensions=(\{[\d,]*\})", index_range.lower(indices).compile().as_text())


@pytest.mark.hlo
def test_cpu_program_reduces_rows_first_for_large_indices_only(cpu):
    """Two reductions on XLA CPU from 2^21 indices: each row first (2x faster at 16 MiB, see the module doc).

    XLA must neither merge them into one reduction nor split a small one.

    If this fails: docs/design/index-checks.md (the two-step reduction and its size threshold).
    """
    assert _reduces(jnp.zeros(LARGE, jnp.int32)) == ["{1}", "{0}"]
    assert _reduces(jnp.zeros((2**10, 2**10), jnp.int32)) == ["{0,1}"]
    assert _reduces(jnp.zeros((2**21,), jnp.int32)) == ["{0}"]
    assert _reduces(jnp.zeros((2**18, 8), jnp.int32)) == ["{0,1}"]  # rows too short


CHECKED_CALLS = {
    "gather": lambda x, i: dmljax.gather(x, i, axis=0, mode="checked"),
    "gather_elements": lambda x, i: dmljax.gather_elements(x, i, axis=0, mode="checked"),
    "scatter": lambda x, i: dmljax.scatter(x, i, x[:1], axis=0, mode="checked"),
    "scatter reduction": lambda x, i: dmljax.scatter(x, i, x[:1], axis=0, reduction="add", mode="checked"),
    "gather_nd": lambda x, i: dmljax.gather_nd(x, i[:, None], mode="checked"),
    "scatter_nd": lambda x, i: dmljax.scatter_nd(x, i[:, None], x[:1], reduction="mul", mode="checked"),
}


@pytest.mark.parametrize("op", CHECKED_CALLS)
def test_checked_mode_compiled_without_checkify_names_the_operator_and_the_fix(op):
    x, i = jnp.arange(3.0), jnp.array([1])
    call = CHECKED_CALLS[op]
    name = op.split()[0]
    with pytest.raises(
        dmljax.ValidationError, match=rf"^{name}: mode must run under jax.experimental.checkify.checkify"
    ):
        jax.jit(call)(x, i)
    err, out = checkify.checkify(jax.jit(call))(x, i)  # the fix the message names
    assert err.get() is None
    np.testing.assert_array_equal(out, call(x, np.asarray(i)))
    if "reduction" in op or op == "scatter_nd":  # checkify refuses the reductions' batched while-loops
        return
    err, _ = checkify.checkify(jax.jit(jax.vmap(call, in_axes=(None, 0))))(x, jnp.array([[1], [7]]))
    assert f"{name}: index 7 is out of bounds" in err.get()
