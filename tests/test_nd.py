"""gather_nd and scatter_nd (ONNX GatherND, ScatterND): ONNX's cases, oracle, modes, reductions, transforms, errors."""

import functools
import importlib
import re
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import checkify
from jax.test_util import check_grads

import dmljax
from dmljax import ValidationError
from tests import onnx_node, reference

REDUCTIONS = ["none", "add", "mul", "max", "min"]


def gather_case(rng, index_dtype="int32", dtype="float32"):
    """Random data, indices (negative ones too when signed) and batch_dims for GatherND."""
    rank = int(rng.integers(1, 5))
    shape = tuple(int(s) for s in rng.integers(1, 4, rank))
    b = int(rng.integers(0, rank))
    k = int(rng.integers(1, rank - b + 1))
    lead = shape[:b] + tuple(int(s) for s in rng.integers(1, 4, int(rng.integers(0, 3))))
    sizes = np.array(shape[b : b + k])
    indices = rng.integers(0, sizes, (*lead, k))
    if np.dtype(index_dtype).kind == "i":
        indices = np.where(rng.random(indices.shape) < 0.5, indices - sizes, indices)
    data = (rng.standard_normal(shape) * 10).astype(dtype)
    return data, indices.astype(index_dtype), b


def scatter_case(rng, duplicates=True, index_dtype="int64", dtype="float32"):
    """Random input, index tuples (duplicates when asked) and updates for ScatterND."""
    rank = int(rng.integers(1, 4))
    shape = tuple(int(s) for s in rng.integers(1, 4, rank))
    k = int(rng.integers(1, rank + 1))
    sizes = np.array(shape[:k])
    lead = tuple(int(s) for s in rng.integers(1, 5, int(rng.integers(1, 3))))
    if duplicates:
        indices = rng.integers(0, sizes, (*lead, k))
    else:
        cells = np.array(list(np.ndindex(*shape[:k])))
        lead = (min(int(np.prod(lead)), len(cells)),)
        indices = cells[rng.permutation(len(cells))[: lead[0]]]
    if np.dtype(index_dtype).kind == "i":
        indices = np.where(rng.random(indices.shape) < 0.5, indices - sizes, indices)
    data = (rng.standard_normal(shape) * 10).astype(dtype)
    updates = (rng.standard_normal(lead + shape[k:]) * 10).astype(dtype)
    return data, indices.astype(index_dtype), updates


# ----- ONNX's own node cases (onnx.backend.test.case.node) --------------------------------


def onnx_cases():
    import onnx.backend.test.case.node as node_cases

    node_cases._TargetOpType = None  # record every case of the imported modules
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in ("gathernd", "scatternd"):
            importlib.import_module(f"onnx.backend.test.case.node.{name}")
    ops = ("GatherND", "ScatterND")
    return [c for c in node_cases._NodeTestCases if c.model.graph.node[0].op_type in ops and "expanded" not in c.name]


CASES = onnx_cases()


def test_onnx_cases_were_found():
    names = {c.name for c in CASES}
    assert {"test_gathernd_example_int32_batch_dim1", "test_scatternd_multiply", "test_scatternd_min"} <= names


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_onnx_node_case(case):
    node = case.model.graph.node[0]
    attrs = {a.name: onnx_node.helper.get_attribute_value(a) for a in node.attribute}
    for inputs, outputs in case.data_sets:
        inputs = [np.asarray(x) for x in inputs]
        if node.op_type == "GatherND":
            out = dmljax.gather_nd(*inputs, attrs.get("batch_dims", 0))
        else:
            out = dmljax.scatter_nd(*inputs, reduction=attrs.get("reduction", b"none").decode())
        np.testing.assert_array_equal(np.asarray(out), outputs[0])


# ----- gather_nd: random cases against the loop oracle and onnx's evaluator ---------------


@pytest.mark.parametrize("seed", range(10))
def test_gather_nd_against_oracle_and_onnx(seed):
    rng = np.random.default_rng(seed)
    index_dtype = ["int32", "uint32", "int64"][seed % 3]
    data, indices, b = gather_case(rng, index_dtype, ["float32", "int32", "float16", "bool", "uint8"][seed % 5])
    expected = reference.gather_nd(data, indices, b)
    np.testing.assert_array_equal(np.asarray(dmljax.gather_nd(data, indices, b)), expected)
    jitted = jax.jit(dmljax.gather_nd, static_argnums=2)(data, indices, b)
    np.testing.assert_array_equal(np.asarray(jitted), expected)
    if data.dtype != np.float16 and index_dtype == "int64":  # ONNX GatherND: int64 indices only
        np.testing.assert_array_equal(onnx_node.reference("GatherND", [data, indices], batch_dims=b), expected)
        np.testing.assert_array_equal(onnx_node.onnxruntime("GatherND", [data, indices], batch_dims=b), expected)


@pytest.mark.parametrize("index_dtype", ["int64", "uint64"])
def test_gather_nd_64bit_indices_under_x64(x64, index_dtype):
    data, indices, b = gather_case(np.random.default_rng(4), index_dtype, "float64")
    out = dmljax.gather_nd(data, indices, b)
    assert out.dtype == jnp.float64
    np.testing.assert_array_equal(out, reference.gather_nd(data, indices, b))


def test_gather_nd_64bit_host_values_are_never_truncated():
    data = jnp.arange(6.0).reshape(2, 3)
    # 2^32 + 1 would be row 1 if truncated to 32 bits; it is out of range: filled.
    out = dmljax.gather_nd(data, np.array([[2**32 + 1, 0], [1, -1]], np.int64), mode="fill")
    np.testing.assert_array_equal(out, [0.0, 5.0])
    out = dmljax.gather_nd(data, np.array([[2**32 + 1, 0]], np.uint64), mode="clip")
    np.testing.assert_array_equal(out, [3.0])


@pytest.mark.parametrize("index_dtype", ["int64", "uint64"])
@pytest.mark.parametrize("reduction", ["none", "add"])
def test_scatter_nd_64bit_indices_under_x64(x64, index_dtype, reduction):
    data, indices, updates = scatter_case(np.random.default_rng(7), reduction != "none", "int64", "float64")
    indices = (indices % np.array(data.shape[: indices.shape[-1]])).astype(index_dtype)
    out = dmljax.scatter_nd(data, indices, updates, reduction=reduction)
    assert out.dtype == jnp.float64
    np.testing.assert_array_equal(out, reference.scatter_nd(data, indices, updates, reduction))


def test_scatter_nd_64bit_host_values_are_never_truncated():
    indices = np.array([[2**32 + 1, 0], [1, -1]], np.int64)  # the first tuple is out of range: dropped
    out = dmljax.scatter_nd(jnp.zeros((2, 3)), indices, jnp.array([1.0, 2.0]), reduction="add", mode="drop")
    np.testing.assert_array_equal(out, [[0.0, 0.0, 0.0], [0.0, 0.0, 2.0]])


# ----- out-of-range indices and modes ---------------------------------------------------


def test_concrete_out_of_range_raises_index_error_naming_the_axis():
    pattern = r"gather_nd: index 3 is out of bounds for axis 1 with size 3 \(indices\[1\]; valid range \[-3, 2\]\)"
    with pytest.raises(IndexError, match=pattern):
        dmljax.gather_nd(jnp.zeros((2, 3)), np.array([[0, 0], [1, 3]]))
    with pytest.raises(IndexError, match=r"gather_nd: index -3 is out of bounds for axis 0 with size 2"):
        dmljax.gather_nd(jnp.zeros((2, 3)), jnp.array([[-3, 0]]))
    with pytest.raises(IndexError, match=r"scatter_nd: index 2 is out of bounds for axis 0 with size 2"):
        dmljax.scatter_nd(jnp.zeros((2, 3)), jnp.array([[2]]), jnp.ones((1, 3)), reduction="add")


def test_concrete_indices_closed_over_under_jit_are_checked():
    indices = jnp.array([[0, 1], [5, 0]])
    with pytest.raises(IndexError, match=r"index 5 is out of bounds for axis 0"):
        jax.jit(lambda x: dmljax.gather_nd(x, indices))(jnp.zeros((3, 2)))


@pytest.mark.parametrize(
    ("mode", "expected"), [(None, [5.0, 0.0, 3.0]), ("clip", [5.0, 0.0, 3.0]), ("fill", [0.0, 0.0, 0.0])]
)
def test_gather_nd_modes_under_jit(mode, expected):
    data = jnp.arange(6.0).reshape(2, 3)
    indices = jnp.array([[1, 7], [-9, 0], [1, -5]])  # 7 -> 2, -9 -> 0, -5 -> 0 when clipped
    out = jax.jit(lambda x, i: dmljax.gather_nd(x, i, mode=mode))(data, indices)
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize(
    ("mode", "expected"), [(None, [[0, 0], [0, 1]]), ("drop", [[0, 0], [0, 1]]), ("clip", [[0, 2], [0, 1]])]
)
def test_scatter_nd_modes_under_jit(mode, expected):
    indices = jnp.array([[0, 7], [1, 1]])
    out = jax.jit(lambda i: dmljax.scatter_nd(jnp.zeros((2, 2)), i, jnp.array([2.0, 1.0]), mode=mode))(indices)
    np.testing.assert_array_equal(out, expected)


def test_checked_mode_under_jit_with_checkify():
    f = checkify.checkify(jax.jit(lambda x, i: dmljax.gather_nd(x, i, mode="checked")))
    err, _ = f(jnp.zeros((2, 3)), jnp.array([[1, 3]]))
    with pytest.raises(checkify.JaxRuntimeError, match=r"gather_nd: index 3 is out of bounds for axis 1 with size 3"):
        err.throw()
    err, _ = f(jnp.zeros((2, 3)), jnp.array([[1, -3]]))
    assert err.get() is None


def test_a_traced_batch_dims_is_refused_by_name():
    f = jax.jit(lambda x, i, b: dmljax.gather_nd(x, i, b))
    with pytest.raises(ValidationError, match=r"gather_nd: batch_dims must be a static int .*got batch_dims='a traced"):
        f(jnp.zeros((2, 2, 2)), jnp.zeros((2, 1), jnp.int32), 1)
    static = jax.jit(lambda x, i, b: dmljax.gather_nd(x, i, b), static_argnums=2)  # the fix the message names
    np.testing.assert_array_equal(static(jnp.zeros((2, 2, 2)), jnp.zeros((2, 1), jnp.int32), 1), np.zeros((2, 2)))


def test_promise_in_bounds_in_range_is_exact():
    data, indices, b = gather_case(np.random.default_rng(2))
    out = jax.jit(lambda x, i: dmljax.gather_nd(x, i, b, mode="promise_in_bounds"))(data, indices)
    np.testing.assert_array_equal(out, reference.gather_nd(data, indices, b))


# ----- scatter_nd: reductions against the loop oracle, onnx's evaluator and onnxruntime ---


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("seed", range(6))
def test_scatter_nd_against_oracle_and_onnx(seed, reduction):
    rng = np.random.default_rng(seed)
    data, indices, updates = scatter_case(rng, duplicates=reduction != "none")
    expected = reference.scatter_nd(data, indices, updates, reduction)
    out = dmljax.scatter_nd(data, indices, updates, reduction=reduction)
    np.testing.assert_array_equal(np.asarray(out), expected)
    np.testing.assert_array_equal(
        onnx_node.reference("ScatterND", [data, indices, updates], reduction=reduction), expected
    )
    jitted = jax.jit(dmljax.scatter_nd, static_argnames="reduction")(data, indices, updates, reduction=reduction)
    np.testing.assert_array_equal(np.asarray(jitted), expected)


@pytest.mark.parametrize(
    ("dtype", "big"), [("float32", 1e8), ("float16", 4096), ("bfloat16", 1024), ("complex64", 1e8)]
)
def test_float_sums_fold_in_onnx_order(dtype, big):
    """``((x + u0) + u1) + u2``: 1e8 + 1 - 1e8 is 0 in float32, -1e8 + 1e8 + 1 is 1."""
    indices = np.array([[0], [1], [0], [1], [0], [1]])
    updates = np.array([big, -big, 1.0, big, -big, 1.0]).astype(jnp.dtype(dtype))  # row 0: big, 1, -big
    data = np.zeros(2, jnp.dtype(dtype))
    out = jax.jit(lambda *a: dmljax.scatter_nd(*a, reduction="add"))(data, indices, updates)
    expected = reference.scatter_nd(data, indices, updates, "add")
    np.testing.assert_array_equal(np.asarray(out), expected)
    assert expected[0] != expected[1]  # the two orders differ: the test can tell


@pytest.mark.parametrize("reduction", ["add", "mul"])
@pytest.mark.parametrize("seed", range(3))
def test_many_duplicates_are_bit_exact_against_onnx(seed, reduction):
    rng = np.random.default_rng(seed)
    data = rng.standard_normal((3, 2)).astype("float32")
    indices = rng.integers(-3, 3, (40, 1))  # about 13 updates per row
    scale = 1e7 if reduction == "add" else 1.0
    updates = (rng.standard_normal((40, 2)) * scale).astype("float32") + np.float32(0.1)
    expected = onnx_node.reference("ScatterND", [data, indices, updates], reduction=reduction)
    np.testing.assert_array_equal(np.asarray(dmljax.scatter_nd(data, indices, updates, reduction=reduction)), expected)
    np.testing.assert_array_equal(
        onnx_node.onnxruntime("ScatterND", [data, indices, updates], reduction=reduction), expected
    )


def test_integer_and_extremal_reductions():
    data = np.array([1, 2, 3], np.int32)
    indices = np.array([[2], [0], [2], [-1]])
    updates = np.array([4, -5, 6, 1], np.int32)
    for reduction in ("add", "mul", "max", "min"):
        out = dmljax.scatter_nd(data, indices, updates, reduction=reduction)
        np.testing.assert_array_equal(out, reference.scatter_nd(data, indices, updates, reduction))


def test_dropped_updates_do_not_combine():
    f = jax.jit(lambda i: dmljax.scatter_nd(jnp.ones(2), i, jnp.array([5.0, 7.0, 3.0]), reduction="mul"))
    np.testing.assert_array_equal(f(jnp.array([[1], [9], [1]])), [1.0, 15.0])


def test_empty_updates_leave_the_input():
    out = dmljax.scatter_nd(jnp.ones(3), np.zeros((0, 1), np.int32), jnp.zeros((0,)), reduction="add")
    np.testing.assert_array_equal(out, [1.0, 1.0, 1.0])


def _scatters(f, platform, dtype=jnp.float32):
    """The stablehlo.scatter ops of ``f``'s program lowered for ``platform`` (``dtype`` data, 6 updates)."""
    data, updates = jnp.zeros(4, dtype), jnp.ones(6, dtype)
    lowered = f.trace(data, jnp.zeros(6, jnp.int32), updates).lower(lowering_platforms=(platform,))
    return re.findall(r"stablehlo\.scatter\".*?\}\) :", lowered.as_text(), flags=re.S)


def assert_no_combining_float_scatter(f, platform, dtype):
    """``f``'s program lowered for ``platform`` holds ``dtype`` scatters, none adding or multiplying."""
    scatters = _scatters(jax.jit(f), platform, jnp.dtype(dtype))
    element = {"float32": "tensor<f32>", "bfloat16": "tensor<bf16>", "float16": "tensor<f16>"}[dtype]
    assert any(element in s for s in scatters), scatters
    for scatter in scatters:
        if element in scatter:
            assert "stablehlo.add" not in scatter and "stablehlo.mul" not in scatter, scatter


REDUCING_PROGRAMS = {
    "scatter_nd add": lambda x, i, u: dmljax.scatter_nd(x, i[:, None], u, reduction="add"),
    "scatter mul": lambda x, i, u: dmljax.scatter(x, i, u, reduction="mul"),
}


@pytest.mark.hlo
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
@pytest.mark.parametrize("platform", ["cuda", "tpu"])
@pytest.mark.parametrize("program", REDUCING_PROGRAMS)
def test_float_add_lowers_to_no_combining_scatter_off_the_cpu(program, platform, dtype):
    """Off the CPU every float scatter in the ``add``/``mul`` programs overwrites (its body
    returns the update; the unsigned scatters count runs and take maxima, exact in any
    order): no float scatter adds or multiplies, so no scatter order (GPU atomics) can
    change the result.

    When it fails, read docs/design/ordered-reductions.md.
    """
    assert_no_combining_float_scatter(REDUCING_PROGRAMS[program], platform, dtype)


def _jvp_of(op):
    """``(x, i, u) -> jax.jvp`` of ``op(x, i, u)`` in ``x`` and ``u`` (tangents: the primals)."""
    return lambda x, i, u: jax.jvp(lambda x, u: op(x, i, u), (x, u), (x, u))


JVP_PROGRAMS = {
    f"jvp {name} {reduction}": _jvp_of(functools.partial(op, reduction=reduction))
    for name, op in {
        "scatter": lambda x, i, u, reduction: dmljax.scatter(x, i, u, reduction=reduction),
        "scatter_nd": lambda x, i, u, reduction: dmljax.scatter_nd(x, i[:, None], u, reduction=reduction),
        "segment": lambda x, i, u, reduction: (
            x + getattr(dmljax, {"add": "segment_sum", "mul": "segment_prod"}[reduction])(u, i, num_segments=4)
        ),
    }.items()
    for reduction in ("add", "mul")
}


@pytest.mark.hlo
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
@pytest.mark.parametrize("platform", ["cuda", "tpu"])
@pytest.mark.parametrize("program", JVP_PROGRAMS)
def test_float_add_tangents_lower_to_no_combining_scatter_off_the_cpu(program, platform, dtype):
    """Forward mode too: the JVP programs' tangents sum the updates in the loop's order (the
    ordered add is a primitive whose tangent is itself), so off the CPU no float scatter
    adds or multiplies and ``jax.jvp``/``jax.jacfwd`` repeat bit for bit on a GPU.

    When it fails, read docs/design/ordered-reductions.md ("Forward mode").
    """
    assert_no_combining_float_scatter(JVP_PROGRAMS[program], platform, dtype)


@pytest.mark.hlo
@pytest.mark.parametrize("program", REDUCING_PROGRAMS)
def test_float_add_on_one_cpu_device_is_one_combining_scatter(program):
    """On one XLA CPU device the program is one scatter that adds or multiplies (XLA CPU
    combines in order: guarded by test_scatter_reduction's order guard), and the rounds
    with the config switch off.

    When it fails, read docs/design/ordered-reductions.md.
    """
    f = REDUCING_PROGRAMS[program]
    with dmljax.config.override(cpu_ordered_scatter=True):
        scatters = _scatters(jax.jit(f), "cpu")
    assert len(scatters) == 1 and re.search(r"stablehlo\.(add|multiply)", scatters[0]), scatters
    with dmljax.config.override(cpu_ordered_scatter=False):
        scatters = [s for s in _scatters(jax.jit(f), "cpu") if "tensor<f32>" in s]
    assert len(scatters) == 1 and not re.search(r"stablehlo\.(add|multiply)", scatters[0]), scatters


# ----- transforms -----------------------------------------------------------------------


def test_gather_nd_vmap_matches_loop():
    rng = np.random.default_rng(3)
    data = rng.standard_normal((4, 2, 3, 2)).astype("float32")
    indices = rng.integers(-2, 2, (4, 2, 5, 1))
    out = jax.vmap(lambda x, i: dmljax.gather_nd(x, i, 1))(data, indices)
    np.testing.assert_array_equal(out, np.stack([reference.gather_nd(data[n], indices[n], 1) for n in range(4)]))
    out = jax.vmap(dmljax.gather_nd, in_axes=(None, 0))(data[0], indices[:, 0])
    np.testing.assert_array_equal(out, np.stack([reference.gather_nd(data[0], i) for i in indices[:, 0]]))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_scatter_nd_vmap_matches_loop(reduction):
    rng = np.random.default_rng(5)
    data = rng.standard_normal((3, 4, 2)).astype("float32")
    indices = (
        rng.integers(-4, 4, (3, 6, 1))
        if reduction != "none"
        else np.stack([rng.permutation(4)[:3, None] for _ in range(3)])
    )
    updates = rng.standard_normal(indices.shape[:2] + (2,)).astype("float32")
    out = jax.vmap(lambda x, i, u: dmljax.scatter_nd(x, i, u, reduction=reduction))(data, indices, updates)
    loop = [reference.scatter_nd(data[n], indices[n], updates[n], reduction) for n in range(3)]
    np.testing.assert_array_equal(out, np.stack(loop))


def test_gather_nd_gradient_is_a_scatter_add_at_the_tuples():
    data = jnp.arange(6.0).reshape(2, 3)
    indices = np.array([[1, 2], [0, 0], [1, -1]])
    cotangent = jnp.array([1.0, 2.0, 4.0])
    grad = jax.grad(lambda x: jnp.sum(dmljax.gather_nd(x, indices) * cotangent))(data)
    np.testing.assert_array_equal(grad, [[2.0, 0.0, 0.0], [0.0, 0.0, 5.0]])


@pytest.mark.slow
def test_check_grads_gather_nd():
    data, indices, b = gather_case(np.random.default_rng(8))
    check_grads(lambda x: dmljax.gather_nd(x, indices, b), (data,), order=2, modes=("fwd", "rev"), eps=1e-2)


@pytest.mark.slow
@pytest.mark.parametrize("reduction", ["none", "add", "mul"])
def test_check_grads_scatter_nd(reduction):
    rng = np.random.default_rng(9)
    data, indices, updates = scatter_case(rng, duplicates=reduction != "none")
    f = lambda x, u: dmljax.scatter_nd(x, indices, u, reduction=reduction)  # noqa: E731
    check_grads(f, (data / 10, updates / 10), order=1, modes=("fwd", "rev"), eps=1e-2, rtol=2e-2)


def test_scatter_nd_gradients_are_exact():
    indices = np.array([[1], [1], [3]])
    g = jnp.array([1.0, 2.0, 3.0, 4.0])
    x, u = jnp.array([2.0, 3.0, 5.0, 7.0]), jnp.array([10.0, 20.0, 30.0])

    def grads(reduction):
        return jax.grad(lambda x, u: jnp.sum(dmljax.scatter_nd(x, indices, u, reduction=reduction) * g), (0, 1))(x, u)

    d_x, d_u = grads("add")
    np.testing.assert_array_equal(d_x, g)
    np.testing.assert_array_equal(d_u, [2.0, 2.0, 4.0])
    d_x, d_u = grads("mul")  # out[1] = 3 * 10 * 20, out[3] = 7 * 30
    np.testing.assert_array_equal(d_x, [1.0, 400.0, 3.0, 120.0])
    np.testing.assert_array_equal(d_u, [2.0 * 3 * 20, 2.0 * 3 * 10, 4.0 * 7])
    d_x, d_u = jax.grad(lambda x, u: jnp.sum(dmljax.scatter_nd(x, indices[1:], u[1:]) * g), (0, 1))(x, u)
    np.testing.assert_array_equal(d_x, [1.0, 0.0, 3.0, 0.0])
    np.testing.assert_array_equal(d_u, [0.0, 2.0, 4.0])


def test_max_ties_give_the_cotangent_to_the_last_equal_update():
    d_x, d_u = jax.grad(lambda x, u: jnp.sum(dmljax.scatter_nd(x, np.array([[0], [0]]), u, reduction="max")), (0, 1))(
        jnp.array([1.0, 5.0]), jnp.array([2.0, 2.0])
    )
    np.testing.assert_array_equal(d_x, [0.0, 1.0])
    np.testing.assert_array_equal(d_u, [0.0, 1.0])  # the element the result is taken from: not shared


# ----- errors: operator, parameter, rule and value, at trace time ------------------------


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "pattern"),
    [
        (
            (jnp.zeros((2, 3)), np.zeros((1, 3), int)),
            {},
            ValidationError,
            r"gather_nd: indices.shape\[-1\] must be in \[1, 2\] .*; got indices.shape\[-1\]=3 \(data shape \(2, 3\)",
        ),
        ((jnp.zeros((2, 3)), np.zeros((1, 0), int)), {}, ValidationError, r"got indices.shape\[-1\]=0"),
        (
            (jnp.zeros((2, 3)), np.zeros((2, 1), int), 2),
            {},
            ValidationError,
            r"gather_nd: batch_dims must be in \[0, 2\) .*; got batch_dims=2",
        ),
        ((jnp.zeros((2, 3)), np.zeros((2, 1), int), -1), {}, ValidationError, r"got batch_dims=-1"),
        (
            (jnp.zeros((2, 3)), np.zeros((2, 1), int), 1.0),
            {},
            ValidationError,
            r"batch_dims must be an integer; got batch_dims=1.0",
        ),
        (
            (jnp.zeros((2, 3)), np.zeros((3, 1), int), 1),
            {},
            ValidationError,
            r"indices.shape\[0\] must equal data.shape\[0\] \(2\) \(a batch dimension\); got indices.shape\[0\]=3",
        ),
        (
            (jnp.zeros((2, 3)), np.zeros((), int)),
            {},
            ValidationError,
            r"gather_nd: indices.ndim must be >= 1; got indices.ndim=0",
        ),
        (
            (jnp.zeros(3), np.zeros((1, 1), np.float32)),
            {},
            TypeError,
            r"gather_nd: indices.dtype must be one of INT32, .*; got indices.dtype=dtype\('float32'\)",
        ),
        (
            (jnp.zeros(3), np.zeros((1, 1), int)),
            {"mode": "wrap"},
            ValidationError,
            r"gather_nd: mode must .*; got mode='wrap'",
        ),
        (
            (jnp.zeros(()), np.zeros((1, 1), int)),
            {},
            ValidationError,
            r"gather_nd: data.ndim must be in \[1, 8\]; got data.ndim=0",
        ),
    ],
)
def test_gather_nd_errors(args, kwargs, error, pattern):
    with pytest.raises(error, match=pattern):
        dmljax.gather_nd(*args, **kwargs)


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "pattern"),
    [
        (
            (jnp.zeros(3), np.zeros((2, 2), int), jnp.zeros(2)),
            {},
            ValidationError,
            r"scatter_nd: indices.shape\[-1\] must be in \[1, 1\] .*; got indices.shape\[-1\]=2",
        ),
        (
            (jnp.zeros((3, 2)), np.zeros((2, 1), int), jnp.zeros(2)),
            {},
            ValidationError,
            r"scatter_nd: updates.shape must equal indices.shape\[:-1\] \+ input.shape\[k:\] \(2, 2\); "
            r"got updates.shape=\(2,\)",
        ),
        (
            (jnp.zeros(3), np.zeros((2, 1), int), jnp.zeros(2)),
            {"reduction": "sum"},
            ValidationError,
            r"scatter_nd: reduction must be one of 'none', 'add', 'mul', 'max', 'min'; got reduction='sum'",
        ),
        (
            (jnp.zeros(3), np.zeros((2, 1), np.float64), jnp.zeros(2)),
            {},
            TypeError,
            r"scatter_nd: indices.dtype must be one of .*; got indices.dtype=dtype\('float64'\)",
        ),
        (
            (jnp.zeros(3), np.zeros((2, 1), int), jnp.zeros(2, int)),
            {},
            TypeError,
            r"scatter_nd: updates.dtype must equal input.dtype \(float32\); got updates.dtype=dtype\('int32'\)",
        ),
        ((jnp.zeros(3), np.zeros((), int), jnp.zeros(())), {}, ValidationError, r"got indices.ndim=0"),
    ],
)
def test_scatter_nd_errors(args, kwargs, error, pattern):
    with pytest.raises(error, match=pattern):
        dmljax.scatter_nd(*args, **kwargs)


def test_errors_are_raised_at_trace_time_under_jit():
    with pytest.raises(ValidationError, match="reduction='sum'"):
        jax.jit(lambda x, i, u: dmljax.scatter_nd(x, i, u, reduction="sum"))(
            jnp.zeros(3), jnp.zeros((1, 1), int), jnp.zeros(1)
        )
    with pytest.raises(ValidationError, match=r"indices.shape\[-1\]=2"):
        jax.jit(lambda x, i: dmljax.gather_nd(x, i))(jnp.zeros(3), jnp.zeros((1, 2), int))
