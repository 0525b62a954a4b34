"""scatter with ``reduction`` (ONNX ScatterElements 16/18): ONNX's cases, oracle, order, transforms."""

import importlib
import re
import textwrap
import warnings

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from jax.test_util import check_grads

import dmljax
from dmljax import ValidationError
from tests import onnx_node, reference
from tests._util import spec
from tests.multidevice import run_json

REDUCTIONS = ["add", "mul", "max", "min"]


def random_case(rng, dtype="float32", index_dtype="int64"):
    """Random input, indices with duplicates (negative ones when signed), updates and axis."""
    rank = int(rng.integers(1, 4))
    shape = tuple(int(s) for s in rng.integers(1, 4, rank))
    axis = int(rng.integers(-rank, rank))
    ishape = list(shape)
    ishape[axis] = int(rng.integers(1, 6))
    size = shape[axis]
    low = -size if np.dtype(index_dtype).kind == "i" else 0
    indices = rng.integers(low, size, ishape).astype(index_dtype)
    data = (rng.standard_normal(shape) * 10).astype(dtype)
    updates = (rng.standard_normal(ishape) * 10).astype(dtype)
    return data, indices, updates, axis


# ----- ONNX's own ScatterElements cases with a reduction ----------------------------------


def onnx_reduction_cases():
    import onnx.backend.test.case.node as node_cases

    node_cases._TargetOpType = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        importlib.import_module("onnx.backend.test.case.node.scatterelements")
    cases = []
    for case in node_cases._NodeTestCases:
        node = case.model.graph.node[0]
        attrs = {a.name: onnx_node.helper.get_attribute_value(a) for a in node.attribute}
        if node.op_type == "ScatterElements" and attrs.get("reduction", b"none") != b"none":
            cases.append((case, attrs))
    return cases


CASES = onnx_reduction_cases()


def test_onnx_reduction_cases_were_found():
    names = {c.name for c, _ in CASES}
    assert {"test_scatter_elements_with_duplicate_indices", "test_scatter_elements_with_reduction_mul"} <= names


@pytest.mark.parametrize(("case", "attrs"), CASES, ids=lambda c: getattr(c, "name", ""))
def test_onnx_node_case(case, attrs):
    for inputs, outputs in case.data_sets:
        data, indices, updates = (np.asarray(x) for x in inputs)
        out = dmljax.scatter(data, indices, updates, attrs.get("axis", 0), reduction=attrs["reduction"].decode())
        np.testing.assert_array_equal(np.asarray(out), outputs[0])


# ----- random cases with duplicates: loop oracle, onnx's evaluator, onnxruntime -----------


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("seed", range(5))
def test_random_against_oracle_and_onnx(seed, reduction):
    rng = np.random.default_rng(seed)
    data, indices, updates, axis = random_case(rng)
    expected = reference.scatter_elements(data, indices, updates, axis % data.ndim, reduction)
    out = dmljax.scatter(data, indices, updates, axis, reduction=reduction)
    np.testing.assert_array_equal(np.asarray(out), expected)
    attrs = {"axis": axis, "reduction": reduction}
    np.testing.assert_array_equal(onnx_node.reference("ScatterElements", [data, indices, updates], **attrs), expected)
    if seed < 2:
        ort = onnx_node.onnxruntime("ScatterElements", [data, indices, updates], **attrs)
        np.testing.assert_array_equal(ort, expected)
        f = jax.jit(dmljax.scatter, static_argnames=("axis", "reduction"))
        np.testing.assert_array_equal(np.asarray(f(data, indices, updates, axis=axis, reduction=reduction)), expected)


@pytest.mark.parametrize(("dtype", "index_dtype"), [("int32", "uint32"), ("int8", "int32"), ("float16", "uint32")])
def test_other_types_against_oracle(dtype, index_dtype):
    rng = np.random.default_rng(11)
    data, indices, updates, axis = random_case(rng, "float32", index_dtype)
    data, updates = (np.clip(np.round(x / 4), -3, 3).astype(dtype) for x in (data, updates))  # no overflow
    for reduction in REDUCTIONS:
        out = dmljax.scatter(data, indices, updates, axis, reduction=reduction)
        expected = reference.scatter_elements(data, indices, updates, axis % data.ndim, reduction)
        np.testing.assert_array_equal(np.asarray(out), expected)


def test_sum_order_is_onnx_row_major_order():
    # Row 0 receives 1e8, 1, -1e8 (sum 0 in float32); row 1 receives -1e8, 1e8, 1 (sum 1).
    updates = np.array([[1e8, 1.0, -1e8], [-1e8, 1e8, 1.0]], np.float32)
    data, indices = np.zeros((2, 1), np.float32), np.zeros((2, 3), np.int32)
    out = jax.jit(lambda *a: dmljax.scatter(*a, axis=1, reduction="add"))(data, indices, updates)
    np.testing.assert_array_equal(out, [[0.0], [1.0]])
    np.testing.assert_array_equal(out, reference.scatter_elements(data, indices, updates, 1, "add"))


def test_without_reduction_the_program_is_unchanged():
    data, indices, updates, axis = random_case(np.random.default_rng(1))
    indices = np.abs(indices) % data.shape[axis]
    f = lambda **kw: jax.make_jaxpr(lambda x, u: dmljax.scatter(x, indices, u, axis, **kw))(data, updates)  # noqa: E731
    assert str(f()) == str(f(reduction="none"))


def test_modes_with_a_reduction_under_jit():
    f = jax.jit(lambda i, mode: dmljax.scatter(jnp.ones(3), i, jnp.array([2.0, 3.0, 5.0]), reduction="mul", mode=mode),
                static_argnames="mode")  # fmt: skip
    indices = jnp.array([7, 1, 1])
    np.testing.assert_array_equal(f(indices, None), [1.0, 15.0, 1.0])  # 7 dropped
    np.testing.assert_array_equal(f(indices, "clip"), [1.0, 15.0, 2.0])  # 7 -> 2
    with pytest.raises(IndexError, match=r"scatter: index 7 is out of bounds for axis 0 with size 3"):
        dmljax.scatter(jnp.ones(3), np.array([7, 1]), jnp.ones(2), reduction="add")


# ----- transforms -----------------------------------------------------------------------


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_vmap_matches_loop(reduction):
    rng = np.random.default_rng(4)
    data = rng.standard_normal((3, 2, 4)).astype("float32")
    indices = rng.integers(-4, 4, (3, 2, 6))
    updates = rng.standard_normal((3, 2, 6)).astype("float32")
    out = jax.vmap(lambda x, i, u: dmljax.scatter(x, i, u, 1, reduction=reduction))(data, indices, updates)
    loop = [reference.scatter_elements(data[n], indices[n], updates[n], 1, reduction) for n in range(3)]
    np.testing.assert_array_equal(out, np.stack(loop))


def test_gradients_against_the_oracle():
    indices = np.array([[0, 0, 2]])
    x, u, g = jnp.array([[2.0, 3.0, 5.0]]), jnp.array([[7.0, 11.0, 13.0]]), jnp.array([[1.0, 2.0, 4.0]])

    def grads(reduction):
        return jax.grad(lambda x, u: jnp.sum(dmljax.scatter(x, indices, u, 1, reduction=reduction) * g), (0, 1))(x, u)

    d_x, d_u = grads("add")
    np.testing.assert_array_equal(d_x, g)
    np.testing.assert_array_equal(d_u, [[1.0, 1.0, 4.0]])
    d_x, d_u = grads("mul")  # out[0] = 2 * 7 * 11, out[2] = 5 * 13
    np.testing.assert_array_equal(d_x, [[77.0, 2.0, 52.0]])
    np.testing.assert_array_equal(d_u, [[22.0, 14.0, 20.0]])
    d_x, d_u = grads("min")  # 2 < 7, 11; 5 < 13: the input wins
    np.testing.assert_array_equal(d_x, g)
    np.testing.assert_array_equal(d_u, [[0.0, 0.0, 0.0]])


@pytest.mark.slow
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_check_grads(reduction):
    data, indices, updates, axis = random_case(np.random.default_rng(6))
    f = lambda x, u: dmljax.scatter(x, indices, u, axis, reduction=reduction)  # noqa: E731
    check_grads(f, (data / 10, updates / 10), order=1, modes=("fwd", "rev"), eps=1e-3, rtol=2e-2)


# ----- errors ---------------------------------------------------------------------------


def test_unknown_reduction():
    with pytest.raises(ValidationError, match=r"scatter: reduction must be one of 'none', .*; got reduction='sum'"):
        dmljax.scatter(jnp.zeros(3), np.zeros(2, int), jnp.zeros(2), reduction="sum")
    with pytest.raises(ValidationError, match=r"got reduction=None"):
        jax.jit(lambda x: dmljax.scatter(x, np.zeros(2, int), jnp.zeros(2), reduction=None))(jnp.zeros(3))


# ----- the guard of the XLA CPU formulation: one scatter combines in the loop's order -----


def order_sensitive(rng, n, dtype, reduction):
    """``n`` updates whose sums (1e8, -1e8, +-1 and spread magnitudes) or products (powers of 2
    that overflow, never underflow: XLA CPU flushes subnormals) change with the order."""
    if reduction == "add":
        values = rng.standard_normal(n) * 10.0 ** rng.uniform(-8, 8, n)
        big = rng.random(n) < 0.3
        values[big] = rng.choice([1e8, -1e8, 1.0, -1.0], int(big.sum()))
    else:
        values = 2.0 ** rng.integers(-2, 8, n) * (1 + rng.standard_normal(n) * 1e-3) * rng.choice([-1, 1], n)
    return values.astype(dtype)


@pytest.mark.parametrize("reduction", ["add", "mul"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_xla_cpu_scatter_combines_in_the_loops_order(dtype, reduction, x64):
    """2^20 updates, about 32 per target, in a random order: bit for bit NumPy's in-order
    ``ufunc.at`` (and different from the reversed order, so the order shows). With
    ``cpu_ordered_scatter`` on, one XLA scatter computes this (XLA CPU runs a scatter as one
    loop over the updates in their order); if XLA CPU ever splits that loop across threads,
    this fails: turn the switch's default off and read docs/design/ordered-reductions.md."""
    rng = np.random.default_rng(24)
    m, n = 2**20, 2**15
    targets = rng.integers(0, n, m)
    updates = order_sensitive(rng, m, dtype, reduction)
    data = order_sensitive(rng, n, dtype, reduction)
    ufunc = np.add if reduction == "add" else np.multiply
    want, reverse = data.copy(), data.copy()
    with np.errstate(over="ignore", invalid="ignore"):  # float32 products overflow to inf
        ufunc.at(want, targets, updates)
        ufunc.at(reverse, targets[::-1], updates[::-1])
    assert np.sum(want != reverse) > n // 4
    out = dmljax.scatter(data, targets, updates, reduction=reduction)
    np.testing.assert_array_equal(out, want)
    out = dmljax.scatter_nd(data, targets[:, None], updates, reduction=reduction)
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64"])
def test_xla_cpu_row_scatter_combines_in_the_loops_order(dtype, x64):
    """Whole slices (rows of 97 elements, 2^14 of them into 512 rows, a few dropped): on one
    XLA CPU device `scatter_nd`'s and `segment_sum`'s float add is one scatter of rows,
    whose loop runs over the updates in their order, each row's elements inside; bit for bit
    NumPy's in-order ``np.add.at`` and the sorted fold's result. If XLA CPU ever
    parallelises that loop, this fails: read docs/design/ordered-reductions.md."""
    rng = np.random.default_rng(25)
    m, rows, w = 2**14, 512, 97
    np_dtype = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    targets = rng.integers(0, rows + 4, m)  # ids >= rows: dropped
    big = {"float16": 2048.0, "bfloat16": 256.0, "float32": 1e8, "float64": 1e17}[dtype]

    def values(shape):  # +-big, +-1 and spread magnitudes: sums that change with the order
        v = rng.standard_normal(shape) * 10.0 ** rng.uniform(-2, 2, shape)
        pick = rng.random(shape) < 0.3
        v[pick] = rng.choice([big, -big, 1.0, -1.0], int(pick.sum()))
        return v.astype(np_dtype)

    updates, data = values((m, w)), values((rows, w))
    keep = targets < rows
    want, reverse = data.copy(), data.copy()
    np.add.at(want, targets[keep], updates[keep])
    np.add.at(reverse, targets[keep][::-1], updates[keep][::-1])
    assert want.tobytes() != reverse.tobytes()  # the order shows
    for ordered in (True, False):  # one scatter of rows; the sorted fold
        with dmljax.config.override(cpu_ordered_scatter=ordered):
            out = jax.jit(lambda d, t, u: dmljax.scatter_nd(d, t[:, None], u, reduction="add", mode="fill"))
            assert np.asarray(out(data, targets, updates)).tobytes() == want.tobytes()
            seg = jax.jit(lambda t, u: dmljax.segment_sum(u, t, rows))
            zeros = np.zeros_like(data)
            np.add.at(zeros, targets[keep], updates[keep])
            assert np.asarray(seg(targets, updates)).tobytes() == zeros.tobytes()


@pytest.mark.hlo
def test_row_add_on_one_cpu_device_is_one_scatter_of_rows(cpu):
    """The rows formulation: one scatter with a window of the slice, not one per element."""
    f = jax.jit(lambda d, t: dmljax.segment_sum(d, t, 16))
    text = f.lower(jnp.zeros((64, 32)), jnp.zeros(64, jnp.int32)).compile().as_text()
    scatters = [line for line in text.splitlines() if " scatter(" in line]
    assert len(scatters) == 1 and "= f32[16,32]{1,0} scatter(" in scatters[0], scatters
    with dmljax.config.override(cpu_ordered_scatter=False):  # then the sorted fold: 1-D element scatters
        text = f.lower(jnp.zeros((64, 32)), jnp.zeros(64, jnp.int32)).compile().as_text()
    assert "= f32[16,32]{1,0} scatter(" not in text and " scatter(" in text


SHARDED_SCRIPT = textwrap.dedent(
    """
    import json
    import jax, numpy as np
    from jax.sharding import NamedSharding, PartitionSpec as P
    import dmljax

    mesh = jax.make_mesh((8,), ("d",), axis_types=(jax.sharding.AxisType.Auto,))
    rng = np.random.default_rng(0)
    m = 8 * 4096
    updates = rng.choice(np.array([1e8, -1e8, 1.0, -1.0], np.float32), m) * rng.integers(1, 5, m).astype(np.float32)
    targets = rng.integers(0, 16, m).astype(np.int32)
    want = np.zeros(16, np.float32)
    np.add.at(want, targets, updates)
    shard = NamedSharding(mesh, P("d"))
    t, u = jax.device_put(targets, shard), jax.device_put(updates, shard)
    x = np.zeros(16, np.float32)
    plain = jax.jit(lambda x, t, u: x.at[t].add(u))(x, t, u)
    ours = jax.jit(lambda x, t, u: dmljax.scatter(x, t, u, reduction="add"))(x, t, u)
    print(json.dumps({"plain": bool(np.array_equal(plain, want)), "dmljax": bool(np.array_equal(ours, want))}))
    """
)


@pytest.mark.system
@pytest.mark.slow
def test_partitioned_programs_keep_the_order():
    """On 8 host devices with the updates sharded, XLA's partitioned scatter-add sums per
    shard and then across shards (not the loop's order); dmljax keeps the rounds there."""
    result = run_json(SHARDED_SCRIPT)
    assert result == {"plain": False, "dmljax": True}


# ----- flat positions of 2^31 and more stay unsigned (lowering only: no 2 GiB array) ----------

_BIG = jax.ShapeDtypeStruct((2**31 + 8,), jnp.int8)  # 2^31 + 8 elements: flat positions past int32
_BIG_F32 = jax.ShapeDtypeStruct((2**31 + 8,), jnp.float32)
_BIG_2D = jax.ShapeDtypeStruct((2**16, 2**15 + 1), jnp.int8)  # 2^31 + 2^16 elements
_FOUR = jax.ShapeDtypeStruct((4,), jnp.int32)


BIG_PROGRAMS = {  # name -> (function, argument specs, config overrides)
    "scatter int add": (
        lambda x, i, u: dmljax.scatter(x, i, u, reduction="add"),
        (_BIG, _FOUR, spec((4,), "int8")),
        {},
    ),
    "scatter max": (lambda x, i, u: dmljax.scatter(x, i, u, reduction="max"), (_BIG, _FOUR, spec((4,), "int8")), {}),
    "scatter float max, order-free": (
        lambda x, i, u: dmljax.scatter(x, i, u, reduction="max"),
        (_BIG_F32, _FOUR, spec((4,), "float32")),
        {},
    ),
    "scatter float add, one CPU scatter": (
        lambda x, i, u: dmljax.scatter(x, i, u, reduction="add"),
        (_BIG_F32, _FOUR, spec((4,), "float32")),
        {},
    ),
    "scatter float mul, rounds": (
        lambda x, i, u: dmljax.scatter(x, i, u, reduction="mul"),
        (_BIG_F32, _FOUR, spec((4,), "float32")),
        {"cpu_ordered_scatter": False},
    ),
    "scatter axis 1 add": (
        lambda x, i, u: dmljax.scatter(x, i, u, axis=1, reduction="add"),
        (_BIG_2D, spec((2**16, 1), "int32"), spec((2**16, 1), "int8")),
        {},
    ),
    "scatter_nd rows": (
        lambda x, i, u: dmljax.scatter_nd(x, i, u),
        (_BIG_2D, spec((4, 1), "int32"), spec((4, 2**15 + 1), "int8")),
        {},
    ),
    "scatter_nd add": (
        lambda x, i, u: dmljax.scatter_nd(x, i, u, reduction="add"),
        (_BIG_2D, spec((4, 2), "int32"), spec((4,), "int8")),
        {},
    ),
}


def _index_types(text):
    """The index operand's type of every scatter and gather in a lowered program's text."""
    # a scatter's closing line (its indices have a dimension; a reduce_window's init value has none)
    scatters = re.findall(r"\}\) : \(tensor<[^>]*>, tensor<([^>]*x[^>]*)>", text)
    gathers = re.findall(r'"stablehlo\.gather".*: \(tensor<[^>]*>, tensor<([^>]*)>', text)
    return scatters, gathers


@pytest.mark.hlo
@pytest.mark.parametrize("name", list(BIG_PROGRAMS))
def test_flat_positions_past_2_31_stay_unsigned(name):
    """If this fails: docs/design/ordered-reductions.md ("Unsigned positions"): jnp's ``.at``
    converts uint32 positions to int32 with x64 off, so a flat position >= 2^31 turns negative
    and its update is dropped; every scatter and gather of flat positions must take uint32."""
    fun, specs, overrides = BIG_PROGRAMS[name]
    # The fold's kernel (a GPU's) takes int32 positions into the updates, never flat positions
    # into the data, and only for fewer than 2^31 updates (test_sorted_fold.py checks that).
    with dmljax.config.override(ordered_fold_kernel=False, **overrides):
        text = jax.jit(fun).lower(*specs).as_text()
    scatters, gathers = _index_types(text)
    assert scatters, "no scatter found"
    assert all(t.endswith("xui32") for t in scatters + gathers), (scatters, gathers)
    assert not re.search(r"stablehlo\.convert .*xui32>\) -> tensor<[0-9x]*xi32>", text)


@pytest.mark.slow
def test_doubling_scan_equals_the_associative_scan():
    """The symbolic-length form of the mul gradient's segmented products, on exact products."""
    from dmljax._ops.ordered import sorted_fold

    def op(a, b):
        return a[0] | b[0], jnp.where(b[0], b[1], a[1] * b[1])

    rng = np.random.default_rng(0)
    for m in (1, 5, 13, 100):
        start = rng.random(m) < 0.3
        values = jnp.asarray(rng.integers(1, 4, m).astype(np.float32))
        want = jax.lax.associative_scan(op, (jnp.asarray(start), values))[1]
        np.testing.assert_array_equal(sorted_fold.doubling_scan(op, jnp.asarray(start), values), want)
