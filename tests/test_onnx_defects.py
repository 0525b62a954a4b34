"""dmljax.onnx.export at its edges: dtypes onnxruntime's scatter kernels lack, keys, vmap and
gradients of reductions, NNX modules in train mode, input and output names.

Each case exports, checks the model (``full_check``), runs it on onnxruntime's CPU
provider and compares with ``jax.jit`` bit for bit, or expects a `dmljax.ValidationError`
naming what is refused. Skipped without the ``dmljax[onnx]`` extra.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

pytest.importorskip("jax2onnx")
onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import dmljax  # noqa: E402
import dmljax.onnx  # noqa: E402
from tests.test_onnx_export import all_node_types, check_export, node_types, run, table  # noqa: E402

F32, F16, BF16 = np.float32, np.float16, jnp.bfloat16


def check_gradient_exact(fn, *args, argnums=0):
    """Export ``jax.grad(fn)``, run it, compare with JAX to float32 rounding; return the model."""
    grad = jax.grad(fn, argnums=argnums)
    model = dmljax.onnx.export(grad, *args)
    onnx.checker.check_model(model, full_check=True)
    (got,) = run(model, *args)
    np.testing.assert_allclose(got, np.asarray(jax.jit(grad)(*args)), rtol=1e-6, atol=1e-6)
    return model


# --- float16/bfloat16 reductions ------------------------------------------------------------


@pytest.mark.parametrize("mode", [None, "clip", "promise_in_bounds"])
def test_float16_add_rounds_every_step_as_jax_does(mode):
    """2048 + 1 + 1 in float16 is 2048 step by step; a float32 stand-in would give 2050."""
    fn = lambda d, i, u: dmljax.scatter_nd(d, i, u, reduction="add", mode=mode)  # noqa: E731
    model = check_export(fn, np.zeros(1, F16), np.zeros((3, 1), np.int32), np.array([2048, 1, 1], F16))
    assert "Loop" in node_types(model) or "Scan" in node_types(model), node_types(model)


@pytest.mark.parametrize("dtype", [F16, BF16])
@pytest.mark.parametrize("reduction", ["add", "mul"])
@pytest.mark.parametrize("mode", [None, "clip"])
def test_half_precision_add_and_mul_with_duplicates_equal_jax(dtype, reduction, mode):
    rng = np.random.default_rng(60)
    data = (rng.standard_normal((4, 3)) * 2).astype(dtype)
    updates = (rng.standard_normal((6, 3)) * 2 + (1.0 if reduction == "mul" else 0.0)).astype(dtype)
    where = np.array([[1], [1], [3], [9], [1], [-1]], np.int32)  # duplicates; 9 dropped or clipped
    check_export(lambda d, i, u: dmljax.scatter_nd(d, i, u, reduction=reduction, mode=mode), data, where, updates)
    at = np.array([[0, 2, 2], [0, 1, 2], [7, 2, 0], [0, -1, 2]], np.int32)
    small = (rng.standard_normal((4, 3)) + (1.0 if reduction == "mul" else 0.0)).astype(dtype)
    fn = lambda d, i, u: dmljax.scatter(d, i, u, axis=1, reduction=reduction, mode=mode)  # noqa: E731
    check_export(fn, data, at, small)


@pytest.mark.parametrize("opset", [16, 18])
def test_half_precision_add_runs_in_rounds_from_opset_18_else_one_update_at_a_time(opset):
    """From opset 18 each Loop iteration serves every target once (a ScatterElements min of
    the update positions); below, one update per iteration. Both round after every update."""
    rng = np.random.default_rng(68)
    data, updates = table(rng, 3, 2, dtype=F16), table(rng, 7, dtype=F16)
    data[2, 1], updates[[0, 1, 3]] = 0, [2048, 1, 1]  # 2048 + 1 + 1 rounds to 2048 step by step
    where = np.array([[2, 1], [2, 1], [0, 0], [2, 1], [5, 0], [-1, -2], [0, 0]], np.int32)  # 5 dropped
    model = check_export(lambda d, i, u: dmljax.scatter_nd(d, i, u, reduction="add"), data, where, updates, opset=opset)
    body = all_node_types(model.graph)
    assert "Loop" in body and ("ScatterElements" in body) == (opset >= 18), body


@pytest.mark.parametrize("reduction", ["add", "max"])
def test_a_reduction_over_a_symbolic_number_of_updates_exports(reduction):
    """The reductions' implementation reads the symbolic size as a value (dim_as_value): traced, not folded."""
    rng = np.random.default_rng(70)
    (batch,) = jax.export.symbolic_shape("B")
    fn = lambda d, i, u: dmljax.scatter_nd(d, i, u, reduction=reduction)  # noqa: E731
    specs = jax.ShapeDtypeStruct((batch, 1), np.int32), jax.ShapeDtypeStruct((batch, 2), F32)
    model = dmljax.onnx.export(fn, np.zeros((4, 2), F32), *specs)
    for rows in (1, 5):
        args = table(rng, 4, 2), rng.integers(-5, 5, (rows, 1)).astype(np.int32), table(rng, rows, 2)
        (got,) = run(model, *args)
        assert got.tobytes() == np.asarray(jax.jit(fn)(*args)).tobytes()  # duplicates combine in loop order


def test_half_precision_add_with_a_symbolic_number_of_updates_is_refused_by_name():
    (batch,) = jax.export.symbolic_shape("B")
    indices, updates = jax.ShapeDtypeStruct((batch, 1), np.int32), jax.ShapeDtypeStruct((batch, 2), F16)
    fn = lambda d, i, u: dmljax.scatter_nd(d, i, u, reduction="add")  # noqa: E731
    with pytest.raises(dmljax.ValidationError, match=r"scatter_nd: updates.shape must be fixed for a float16"):
        dmljax.onnx.export(fn, np.zeros((4, 2), F16), indices, updates)


@pytest.mark.parametrize("dtype", [F16, BF16])
@pytest.mark.parametrize("reduction", ["max", "min"])
@pytest.mark.parametrize("mode", [None, "clip", "promise_in_bounds"])
def test_half_precision_max_and_min_run_in_every_mode(dtype, reduction, mode):
    rng = np.random.default_rng(61)
    data, updates = table(rng, 4, 3, dtype=dtype), table(rng, 5, 3, dtype=dtype)
    where = np.array([[1], [1], [3], [0], [1]], np.int32)
    check_export(lambda d, i, u: dmljax.scatter_nd(d, i, u, reduction=reduction, mode=mode), data, where, updates)
    at = np.array([[0, 2, 2], [0, 1, 2], [2, 2, 0], [0, -1, 2]], np.int32)
    fn = lambda d, i, u: dmljax.scatter(d, i, u, axis=1, reduction=reduction, mode=mode)  # noqa: E731
    check_export(fn, data, at, table(rng, 4, 3, dtype=dtype))


# --- bool and uint64 max/min ----------------------------------------------------------------


@pytest.mark.parametrize("reduction", ["max", "min", "add", "mul"])
@pytest.mark.parametrize("mode", [None, "clip"])
def test_bool_reductions_run(reduction, mode):
    data = np.array([[True, False, False], [False, True, True]])
    updates = np.array([[True, False, True], [False, False, True], [True, True, False]])
    where = np.array([[1], [0], [1]], np.int32)
    check_export(lambda d, i, u: dmljax.scatter_nd(d, i, u, reduction=reduction, mode=mode), data, where, updates)
    at = np.array([[0, 0, 1]], np.int32)
    fn = lambda d, i, u: dmljax.scatter(d, i, u, axis=0, reduction=reduction, mode=mode)  # noqa: E731
    check_export(fn, data, at, updates[:1])


@pytest.mark.parametrize("reduction", ["max", "min"])
@pytest.mark.parametrize("mode", [None, "clip", "promise_in_bounds"])
def test_uint64_max_and_min_compare_unsigned(reduction, mode):
    """2**63 is the larger: a signed int64 stand-in would call it negative."""
    with jax.enable_x64(True):
        data, big = np.array([1, 2**63 + 5, 7], np.uint64), np.array([2**63, 3, 2**64 - 1], np.uint64)
        at = np.array([0, 1, 2], np.int64)
        fn = lambda d, i, u: dmljax.scatter(d, i, u, axis=0, reduction=reduction, mode=mode)  # noqa: E731
        check_export(fn, data, at, big)
        check_export(lambda d, i, u: dmljax.scatter_nd(d, i, u, reduction=reduction, mode=mode), data, at[:, None], big)


# --- int16/uint16 (onnxruntime has no Pad for them) -------------------------------------------


@pytest.mark.parametrize("dtype", [np.int16, np.uint16])
def test_int16_and_uint16_drop_scatters_and_padded_buffers_run(dtype):
    rng = np.random.default_rng(62)
    data, updates = rng.integers(0, 100, (4, 3)).astype(dtype), rng.integers(0, 100, (2, 3)).astype(dtype)
    at = np.array([[0, -1, 7], [-2, 9, 1]], np.int32)
    model = check_export(lambda x, i, u: dmljax.scatter(x, i, u), data, at, updates)
    assert "Pad" not in node_types(model)
    model = check_export(lambda x, i, u: dmljax.scatter_nd(x, i, u), data, np.array([[1], [5]], np.int32), updates)
    assert "Pad" not in node_types(model)
    desc = dmljax.TensorDesc(np.dtype(dtype).name, (2, 3), strides=(5, 1))  # rows padded to 5: a buffer of 8
    buffer, value = rng.integers(0, 100, 8).astype(dtype), rng.integers(0, 100, (2, 3)).astype(dtype)
    for fn, args in (
        (lambda b, v: dmljax.write_tensor(b, desc, v), (buffer, value)),
        (lambda b: dmljax.read_tensor(b, desc), (buffer,)),
    ):
        assert "Pad" not in node_types(check_export(fn, *args))


# --- keys -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: x + jax.random.uniform(jax.random.key(0), x.shape),
        lambda x: x + jax.random.normal(jax.random.PRNGKey(3), x.shape),
        lambda x: x + jax.random.uniform(jax.random.split(jax.random.key(1))[0], x.shape),
    ],
)
def test_a_threefry_key_drawn_from_is_refused_by_name(fn):
    with pytest.raises(
        dmljax.ValidationError, match=r"jax\.random \(random_\w+\): a key of impl .threefry2x32. must not reach"
    ):
        dmljax.onnx.export(fn, np.ones(3, F32))


def test_key_data_of_a_threefry_key_still_exports():
    """No draw, no refusal: a key's data is plain uint32 (and is not folded at export time)."""
    model = check_export(lambda x: x + jax.random.key_data(jax.random.key(7)).astype(F32)[1], np.ones(3, F32))
    assert "Add" in node_types(model)


# --- vmap and gradients of reductions ---------------------------------------------------------


@pytest.mark.parametrize("reduction", ["add", "mul"])
def test_vmap_of_a_float_reduction_exports_one_node(reduction):
    rng = np.random.default_rng(63)
    data, updates, at = table(rng, 2, 3), table(rng, 2, 4), np.array([[0, 2, 0, 9], [1, 1, -1, 0]], np.int32)
    fn = jax.vmap(lambda d, i, u: dmljax.scatter(d, i, u, axis=0, reduction=reduction))
    model = check_export(fn, data, at, updates)
    assert node_types(model).count("ScatterElements") == 1, node_types(model)
    nd = jax.vmap(lambda d, i, u: dmljax.scatter_nd(d, i[:, None], u, reduction=reduction))
    model = check_export(nd, data, at, updates)
    assert node_types(model).count("ScatterND") == 1, node_types(model)


def test_vmap_of_a_while_loop_with_a_batched_predicate_exports():
    """The batched loop runs until every member is done; finished members keep their carry."""

    def count(x, n):
        return jax.lax.while_loop(lambda c: c[1] < n, lambda c: (c[0] * 2.0, c[1] + 1), (x, jnp.int32(0)))[0]

    check_export(jax.vmap(count), np.array([1.0, 3.0, -2.0], F32), np.array([0, 3, 1], np.int32), nodes=["Loop"])


@pytest.mark.slow
@pytest.mark.parametrize("argnums", [0, 2])
def test_gradient_of_the_mul_reduction_exports(argnums):
    rng = np.random.default_rng(64)
    data, updates = table(rng, 3, 4) / 10, table(rng, 3, 2) / 10
    at = np.array([[0, 0], [1, 3], [2, 0]], np.int32)
    check_gradient_exact(lambda d, i, u: dmljax.scatter(d, i, u, axis=1, reduction="mul").sum(), data, at, updates,
                         argnums=argnums)  # fmt: skip
    rows, tuples = table(rng, 5, 4) / 10, np.array([[1], [1], [3], [1], [0]], np.int32)
    nd = lambda d, i, u: dmljax.scatter_nd(d, i, u, reduction="mul").sum()  # noqa: E731
    check_gradient_exact(nd, data, tuples, rows, argnums=argnums)


def test_interior_padding_and_unsigned_sorts_export():
    """The mul reduction's gradient needs both: lax.pad with interior padding (an associative
    scan) and a sort of unsigned targets (onnxruntime's TopK has no unsigned kernel)."""
    x = np.arange(1, 13, dtype=F32).reshape(3, 4)
    check_export(lambda a: jax.lax.pad(a, F32(-1), [(1, -1, 2), (0, 2, 1)]), x)
    check_export(lambda a: jax.lax.pad(a, F32(-1), [(-2, 0, 1), (0, 0, 0)]), x)
    big = np.array([3, 2**31 + 1, 0, 2**32 - 1, 2**31, 7], np.uint32)
    for k in (0, 1):
        check_export(lambda a, b, k=k: jax.lax.sort((a, b), num_keys=1)[k], big, np.arange(6, dtype=np.int32))
    check_export(lambda a: jnp.sort(a), np.array([200, 3, 128, 127, 0], np.uint8))


PADDED16 = dmljax.TensorDesc("float32", (2, 3), strides=(5, 1))


@pytest.mark.slow
@pytest.mark.parametrize(
    "name",
    ["scatter_min", "scatter_nd_add", "scatter_nd_max", "scatter_nd_min", "slice1", "read_tensor", "write_tensor"],
)
def test_gradients_of_the_other_operators_and_reductions_export(name):
    """With the gradient tests of tests/test_onnx_export.py and the two above: every operator's."""
    rng = np.random.default_rng(69)
    x, rows = table(rng, 4, 3), table(rng, 3, 3)
    at, tuples = np.array([[0, 1, 3], [0, 2, 9], [1, 1, -1]], np.int32), np.array([[1], [1], [3]], np.int32)
    cases = {
        "scatter_min": (lambda d, u: dmljax.scatter(d, at, u, axis=0, reduction="min", mode="clip"), (x, rows)),
        "scatter_nd_add": (lambda d, u: dmljax.scatter_nd(d, tuples, u, reduction="add"), (x, rows)),
        "scatter_nd_max": (lambda d, u: dmljax.scatter_nd(d, tuples, u, reduction="max", mode="clip"), (x, rows)),
        "scatter_nd_min": (lambda d, u: dmljax.scatter_nd(d, tuples, u, reduction="min", mode="fill"), (x, rows)),
        "slice1": (lambda d, u: dmljax.slice(d, (0, 0), (4, 3), (-2, 1)) * u[:2], (x, rows)),
        "read_tensor": (lambda b, u: dmljax.read_tensor(b, PADDED16) * u[:2], (table(rng, 8), rows)),
        "write_tensor": (lambda b, v: dmljax.write_tensor(b, PADDED16, v * v), (table(rng, 8), table(rng, 2, 3))),
    }
    fn, args = cases[name]
    for argnums in (0, 1):
        check_gradient_exact(lambda *a: (fn(*a) ** 2).sum(), *args, argnums=argnums)


@pytest.mark.parametrize("k", [1, 2])
def test_gradient_of_gather_nd_with_batch_dims_exports(k):
    rng = np.random.default_rng(65)
    data = table(rng, 2, 3, 4)
    indices = np.array([[[1, 2], [0, 9]], [[2, 0], [-1, 3]]], np.int32)[..., :k]
    check_gradient_exact(lambda d, i: (dmljax.gather_nd(d, i, batch_dims=1) ** 2).sum(), data, indices)


def test_lax_gathers_and_scatters_with_batching_dimensions_export():
    """jax.vmap of jnp indexing: batching dimensions, which jax2onnx cannot lower, become index columns."""
    rng = np.random.default_rng(67)
    data, picks, rows = table(rng, 2, 5, 3), np.array([[4, 0, 4], [1, 2, -1]], np.int32), table(rng, 2, 3, 3)
    check_export(jax.vmap(lambda d, i: jnp.take(d, i, axis=0, mode="clip")), data, picks)
    check_export(lambda d, i: jnp.take(d, i, axis=1, mode="clip"), data, picks)  # -1 clamps to 0, not the last
    check_export(
        jax.vmap(lambda d, i, u: d.at[i].set(u, mode="drop")), data, np.array([[4, 0, 3], [1, 2, -1]], np.int32), rows
    )
    check_export(jax.vmap(lambda d, i, u: d.at[i].max(u, mode="clip")), data, picks, rows)


# --- NNX modules, input and output names --------------------------------------------------


def test_an_nnx_module_in_train_mode_is_refused_with_the_fix():
    nnx = pytest.importorskip("flax.nnx")

    class Net(nnx.Module):
        def __init__(self, rngs):
            self.table = nnx.Param(jnp.ones((5, 3)))
            self.drop = nnx.Dropout(0.5, rngs=rngs)

        def __call__(self, i):
            return self.drop(dmljax.gather(self.table[...], i, axis=0))

    net = Net(nnx.Rngs(0))
    with pytest.raises(dmljax.ValidationError, match=r"model\.eval\(\)"):
        dmljax.onnx.export(net, np.array([1, 2], np.int32))
    net.eval()
    check_export(net, np.array([1, 2], np.int32), nodes=["Gather"])


def test_input_and_output_names():
    rng = np.random.default_rng(66)
    data, picks = table(rng, 5, 2), np.array([4, -1], np.int32)

    def fn(d, i):
        return dmljax.gather(d, i, axis=0), d.sum()

    model = dmljax.onnx.export(fn, data, picks, input_names=["table", "ids"], output_names=["rows", "total"])
    onnx.checker.check_model(model, full_check=True)
    assert [v.name for v in model.graph.input] == ["table", "ids"]
    assert [v.name for v in model.graph.output] == ["rows", "total"]
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    rows, total = session.run(["rows", "total"], {"table": data, "ids": picks})
    assert rows.tobytes() == np.asarray(jax.jit(fn)(data, picks)[0]).tobytes()


def test_names_that_collide_with_inner_values_and_outputs_that_are_inputs():
    x = np.arange(6, dtype=F32).reshape(2, 3)
    model = dmljax.onnx.export(lambda a, i: (a, dmljax.gather(a, i, axis=1)), x, np.int64(2),
                               input_names=["Gather_0", "in_0"], output_names=["in_1", "out"])  # fmt: skip
    onnx.checker.check_model(model, full_check=True)
    same, picked = run(model, x, np.int64(2))
    assert np.array_equal(same, x) and np.array_equal(picked, x[:, 2])
    with jax.enable_x64(False):
        looped = lambda a, i: jax.lax.fori_loop(0, 2, lambda k, c: c + dmljax.gather(a, i, axis=1)[:, None], a)  # noqa: E731
        model = dmljax.onnx.export(looped, x, np.int32(1), input_names=["a", "b"])
        onnx.checker.check_model(model, full_check=True)
        assert "Loop" in all_node_types(model.graph)
        (got,) = run(model, x, np.int32(1))
        assert np.array_equal(got, np.asarray(jax.jit(looped)(x, np.int32(1))))


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"input_names": ["a"]}, r"input_names must have one name per input \(2\)"),
        ({"input_names": ["a", "a"]}, r"input_names must be unique"),
        ({"input_names": ["a", ""]}, r"input_names must be non-empty strings"),
        ({"input_names": "ab"}, r"input_names must be a sequence"),
        ({"output_names": ["y", "z"]}, r"output_names must have one name per output \(1\)"),
        ({"output_names": [3]}, r"output_names must be non-empty strings"),
    ],
)
def test_bad_names_are_refused_by_name(kwargs, match):
    with pytest.raises(dmljax.ValidationError, match=match):
        dmljax.onnx.export(lambda d, i: dmljax.gather(d, i), np.ones((3, 2), F32), np.array([1], np.int32), **kwargs)


def test_the_plugin_index_places_a_plugin_registered_under_a_second_name():
    """JAX's ``stack`` primitive (jnp.stack, gather_nd's gradient) is registered by jax2onnx with
    ``PLUGIN_REGISTRY.setdefault``: found, so the export imports one module, not all ~500."""
    from dmljax.onnx._plugin_loading import _index

    assert "jax2onnx.plugins.jax.numpy.stack" in _index()["stack"]
