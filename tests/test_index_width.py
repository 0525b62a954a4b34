"""Index arithmetic exact at every width: index types x x64 x modes x axis lengths up to 2^32 - 1.

Axes of 2^31 elements and more cost no memory here: the data is a `lax.iota` built inside
`jax.jit`, and only a gather of it is returned, so XLA fuses the two. The data is
``iota + 1``, so a filled read (0) differs from a read of element 0 (1). Every expected
value comes from the loop oracle's `reference.source` (Python integers: exact).
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jax import lax

import dmljax
from dmljax import TensorDesc
from dmljax.descriptors import FeatureLevel, GatherOperatorDesc
from tests import reference

LONG = [2**31 - 1, 2**31, 2**31 + 1, 2**32 - 2, 2**32 - 1]
SHORT = [1, 2, 3, 5]
INDEX_DTYPES = ["int32", "int64", "uint32", "uint64"]
PROPERTY = settings(max_examples=25, deadline=None, derandomize=True, database=None)


def _values(dtype: str, n: int) -> st.SearchStrategy:
    """Index values of ``dtype`` that probe every boundary of an axis of ``n`` and of the types."""
    info = np.iinfo(dtype)
    special = [0, 1, -1, n - 1, n, n + 1, -n, -n - 1, 2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**32 + 1]
    special += [2**63 - 1, 2**63 + 1, -(2**31) - 1, -(2**63), int(info.min), int(info.max)]
    special = sorted({v for v in special if info.min <= v <= info.max})
    values = st.one_of(st.sampled_from(special), st.integers(int(info.min), int(info.max)))
    return st.lists(values, min_size=6, max_size=6).map(lambda v: np.array(v, dtype))


def _expected(values: np.ndarray, n: int, mode: str) -> list[int]:
    """``iota + 1`` read at each index: the oracle's position + 1, or 0 where filled."""
    positions = [reference.source(v, n, mode) for v in values.tolist()]
    return [0 if p is None else p + 1 for p in positions]


def _in_range(values: np.ndarray, n: int) -> bool:
    low = -n if values.dtype.kind == "i" else 0
    return all(low <= v < n for v in values.tolist())


@functools.cache
def _long_gathers(n: int, mode: str | None):
    """gather and gather_elements of ``iota(n) + 1`` (uint32) at traced indices, one jitted program."""

    def run(indices):
        data = lax.iota(jnp.uint32, n) + np.uint32(1)
        return dmljax.gather(data, indices, mode=mode), dmljax.gather_elements(data, indices, mode=mode)

    return jax.jit(run)


# ----- properties against the loop oracle ------------------------------------------------------


@pytest.mark.slow
@PROPERTY
@given(st.data())
def test_traced_indices_on_long_axes(data):
    x64 = data.draw(st.booleans(), "x64")
    dtype = data.draw(st.sampled_from(INDEX_DTYPES if x64 else ["int32", "uint32"]), "dtype")
    n = data.draw(st.sampled_from(LONG), "n")
    mode = data.draw(st.sampled_from(["clip", "fill", None]), "mode")
    values = data.draw(_values(dtype, n), "values")
    with jax.enable_x64(x64):
        gathered, elements = _long_gathers(n, mode)(values)
    expected = _expected(values, n, mode or "clip")  # traced indices: the gathers' default clamps
    assert gathered.tolist() == expected and elements.tolist() == expected


@PROPERTY
@given(st.data())
def test_host_indices_on_long_axes_are_decided_before_narrowing(data):
    x64 = data.draw(st.booleans(), "x64")
    dtype = data.draw(st.sampled_from(INDEX_DTYPES), "dtype")  # int64/uint64 host arrays with x64 off too
    n = data.draw(st.sampled_from(LONG), "n")
    mode = data.draw(st.sampled_from(["clip", "fill", None]), "mode")
    values = data.draw(_values(dtype, n), "values")

    def run():
        data = lax.iota(jnp.uint32, n) + np.uint32(1)
        return dmljax.gather(data, values, mode=mode), dmljax.gather_elements(data, values, mode=mode)

    with jax.enable_x64(x64):
        if mode is None and not _in_range(values, n):
            with pytest.raises(IndexError, match=f"is out of bounds for axis 0 with size {n}"):
                jax.jit(run)()
            return
        gathered, elements = jax.jit(run)()
    expected = _expected(values, n, mode or "clip")
    assert gathered.tolist() == expected and elements.tolist() == expected


@pytest.mark.slow
@PROPERTY
@given(st.data())
def test_short_axes_every_operator_eager_and_jitted(data):
    x64 = data.draw(st.booleans(), "x64")
    dtype = data.draw(st.sampled_from(INDEX_DTYPES), "dtype")
    n = data.draw(st.sampled_from(SHORT), "n")
    mode = data.draw(st.sampled_from(["clip", "fill"]), "mode")
    host = data.draw(st.booleans(), "host")
    values = data.draw(_values(dtype, n), "values")
    rows = values.reshape(6, 1)  # one index per row: no duplicate scatter targets
    x = np.arange(1, 6 * n + 1, dtype=np.float32).reshape(6, n)
    updates = -np.arange(1, 7, dtype=np.float32).reshape(6, 1)
    with jax.enable_x64(x64):
        if not host and np.dtype(dtype).itemsize == 8 and not x64:
            return  # no 64-bit JAX array exists with x64 off
        indices = rows if host else jnp.asarray(rows)
        ops = {
            "gather": (
                lambda i: dmljax.gather(x, i[:, 0], axis=1, mode=mode),
                reference.gather(x, rows[:, 0], 1, mode),
            ),
            "gather_elements": (
                lambda i: dmljax.gather_elements(x, i, axis=1, mode=mode),
                reference.gather_elements(x, rows, 1, mode),
            ),
            "scatter": (
                lambda i: dmljax.scatter(x, i, updates, axis=1, mode=mode),
                reference.scatter(x, rows, updates, 1, mode),
            ),
        }
        for name, (fun, expected) in ops.items():
            np.testing.assert_array_equal(fun(indices), expected, err_msg=f"{name} eager")
            if not host:
                np.testing.assert_array_equal(jax.jit(fun)(indices), expected, err_msg=f"{name} jitted")


# ----- the reported cases, one by one ------------------------------------------------------------


@pytest.mark.slow
def test_64_bit_values_beyond_32_bits_with_x64(x64):
    x = jnp.arange(6.0).reshape(3, 2)
    for value in (np.int64(2**32 + 1), np.uint64(2**63 + 1)):
        index = np.array([value])
        np.testing.assert_array_equal(dmljax.gather(x, index, mode="fill"), [[0.0, 0.0]])
        np.testing.assert_array_equal(dmljax.gather(x, index, mode="clip"), [[4.0, 5.0]])
        np.testing.assert_array_equal(dmljax.gather(x, jnp.asarray(index), mode="fill"), [[0.0, 0.0]])
        elements = dmljax.gather_elements(
            jnp.array([[1.0, 2.0]]), np.array([[value, 0]], value.dtype), axis=1, mode="fill"
        )
        np.testing.assert_array_equal(elements, [[0.0, 1.0]])
        grad = jax.grad(lambda d, i=index: jnp.sum(dmljax.gather_elements(d, i[None], axis=0, mode="fill")))
        np.testing.assert_array_equal(grad(jnp.ones((3, 1))), [[0.0], [0.0], [0.0]])


def test_64_bit_host_values_with_x64_off():
    x = jnp.arange(6.0).reshape(3, 2)
    for value in (2**31, 2**32):
        np.testing.assert_array_equal(dmljax.gather(x, np.array([value]), mode="clip"), [[4.0, 5.0]])
    out = dmljax.scatter(jnp.zeros(3), np.array([2**32 + 1], np.uint64), jnp.ones(1), mode="fill")
    np.testing.assert_array_equal(out, [0.0, 0.0, 0.0])
    with pytest.raises(IndexError, match=r"index 4294967297 is out of bounds for axis 0 with size 3"):
        dmljax.scatter(jnp.zeros(3), np.array([2**32 + 1], np.uint64), jnp.ones(1))


@pytest.mark.parametrize("x64_on", [False, True])
def test_signed_indices_on_an_axis_of_2_31_elements_and_more(x64_on):
    n = 2**31 + 5
    with jax.enable_x64(x64_on):
        for mode in (None, "clip", "fill"):
            out = _long_gathers(n, mode)(np.array([-1, 0, 2**31 - 1, -(2**31), 7, 0], np.int32))
            assert out[0].tolist() == [n, 1, 2**31, 6, 8, 1]
        struct = jax.ShapeDtypeStruct((n,), jnp.float32)
        index = jax.ShapeDtypeStruct((4,), jnp.int32)
        assert jax.eval_shape(dmljax.gather, struct, index).shape == (4,)
        assert jax.eval_shape(dmljax.scatter, struct, index, jax.ShapeDtypeStruct((4,), jnp.float32)).shape == (n,)


def test_compile_operator_int32_gather_on_an_axis_of_2_31_elements():
    n = 2**31 + 5
    desc = GatherOperatorDesc(TensorDesc("uint32", (n,)), TensorDesc("int32", (3,)), TensorDesc("uint32", (3,)), 0, 1)
    op = dmljax.descriptors.compile_operator(desc, FeatureLevel.FL_3_0)
    assert jax.eval_shape(op, jax.ShapeDtypeStruct((n,), jnp.uint32), jax.ShapeDtypeStruct((3,), jnp.int32)).shape == (
        3,
    )
    run = jax.jit(lambda i: op(lax.iota(jnp.uint32, n), i))
    assert run(np.array([-1, 2**31 - 1, 0], np.int32)).tolist() == [n - 1, 2**31 - 1, 0]


def test_checked_mode_on_a_long_axis():
    from jax.experimental import checkify

    n = 2**32 - 1
    run = checkify.checkify(jax.jit(lambda i: dmljax.gather(lax.iota(jnp.uint32, n), i, mode="checked")))
    error, out = run(np.array([n - 1, 0], np.uint32))
    assert error.get() is None and out.tolist() == [n - 1, 0]
    error, _ = run(np.array([3, n], np.uint32))
    assert f"index {n} is out of bounds for axis 0 with size {n} (indices[1]; valid range [0, {n - 1}])" in error.get()


def test_device_indices_are_checked_on_the_device_and_name_the_first_bad_one(x64):
    x = jnp.zeros((2, 4))
    for indices, value in [
        (jnp.array([[0, 2**40], [2**41, 1]], jnp.int64), 2**40),
        (jnp.array([[0, 3], [2**32 - 1, -5]], jnp.int64), 2**32 - 1),
        (jnp.array([[0, 3], [1, 2**63 + 3]], jnp.uint64), 2**63 + 3),
    ]:
        with pytest.raises(IndexError, match=rf"gather_elements: index {value} is out of bounds .*indices\[\d, \d\]"):
            dmljax.gather_elements(x, indices, axis=1)


def test_axes_beyond_2_32_elements_need_x64():
    struct = jax.ShapeDtypeStruct((2**32,), jnp.uint8)
    with pytest.raises(dmljax.ValidationError, match=r"gather: data.shape\[0\] must be at most 4294967295"):
        jax.eval_shape(dmljax.gather, struct, jax.ShapeDtypeStruct((1,), jnp.int32))


def test_concrete_device_indices_closed_over_under_jit(x64):
    ids = jnp.array([[0, 2], [1, -3]], jnp.int64)
    run = jax.jit(lambda table: dmljax.gather(table, ids, axis=0))
    np.testing.assert_array_equal(run(jnp.arange(3.0)), [[0.0, 2.0], [1.0, 0.0]])
    bad = jnp.array([[0, 2], [2**33, 1]], jnp.int64)
    with pytest.raises(IndexError, match=r"gather: index 8589934592 is out of bounds .*\(indices\[1, 0\]"):
        jax.jit(lambda table: dmljax.gather(table, bad, axis=0))(jnp.arange(3.0))
