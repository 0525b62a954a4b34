"""dmljax.onnx.export: dmljax's operators reach ONNX as ONNX's own nodes and compute what JAX does.

Every case exports, runs ``onnx.checker.check_model``, checks the node types, runs the model
with onnxruntime's CPUExecutionProvider and compares with the jitted JAX result bit for bit
(these operators only move data). Skipped without the ``dmljax[onnx]`` extra.
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
from dmljax import gather as imported_gather  # noqa: E402  (a name bound before any export)
from tests._util import onnx_session  # noqa: E402

F32 = np.float32


def run(model, *args):
    session = onnx_session(model)
    if any(spec.type == BF16_TYPE for spec in (*session.get_inputs(), *session.get_outputs())):
        return run_bfloat16(session, *args)
    feeds = {spec.name: np.asarray(a) for spec, a in zip(session.get_inputs(), args, strict=True)}
    return session.run(None, feeds)


BF16_TYPE = "tensor(bfloat16)"


def run_bfloat16(session, *args):
    """Run with bfloat16 inputs or outputs: onnxruntime's NumPy feeds reject ml_dtypes' bfloat16
    ("Numpy_type 256 can't be converted") and ``OrtValue.numpy()`` cannot return one, so the
    bfloat16 tensors are OrtValues over uint16 views (ONNX type 16), outputs preallocated (static shapes)."""
    binding, outs = session.io_binding(), []
    for spec, a in zip(session.get_inputs(), args, strict=True):
        a = np.asarray(a)
        if spec.type == BF16_TYPE:
            binding.bind_ortvalue_input(
                spec.name, ort.OrtValue.ortvalue_from_numpy_with_onnx_type(a.view(np.uint16), 16)
            )
        else:
            binding.bind_cpu_input(spec.name, a)
    for spec in session.get_outputs():
        if spec.type == BF16_TYPE:
            outs.append(np.zeros(spec.shape, np.uint16))
            binding.bind_ortvalue_output(spec.name, ort.OrtValue.ortvalue_from_numpy_with_onnx_type(outs[-1], 16))
        else:
            outs.append(None)
            binding.bind_output(spec.name, "cpu")
    session.run_with_iobinding(binding)
    got = binding.get_outputs()
    return [got[k].numpy() if out is None else out.view(jnp.bfloat16) for k, out in enumerate(outs)]


def node_types(model) -> list[str]:
    return [node.op_type for node in model.graph.node]


def check_export(fn, *args, nodes=(), exact_nodes=None, opset=None):
    """Export, check, run, compare bit for bit with ``jax.jit(fn)``; return the model."""
    model = dmljax.onnx.export(fn, *args, opset=opset)
    onnx.checker.check_model(model, full_check=True)
    types = node_types(model)
    assert set(nodes) <= set(types), types
    if exact_nodes is not None:
        assert types == list(exact_nodes)
    want = jax.jit(fn)(*args)
    (got,) = run(model, *args)
    want = np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes(), (got, want)
    return model


def table(rng, *shape, dtype=F32):
    """Values of ``shape`` from the test's own generator (no generator is shared across tests)."""
    return (rng.standard_normal(shape) * 10).astype(dtype)


# --- gather -------------------------------------------------------------------------------


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_gather_traced_indices_default_mode_is_clip_then_gather(axis):
    rng = np.random.default_rng(1)
    data, indices = table(rng, 4, 5, 3), np.array([[0, -1, 9], [-9, 2, 3]], np.int32)
    check_export(lambda d, i: dmljax.gather(d, i, axis=axis), data, indices, exact_nodes=["Clip", "Gather"])


@pytest.mark.slow
def test_gather_constant_in_range_indices_are_one_plain_gather():
    rng = np.random.default_rng(2)
    data = table(rng, 6, 2)
    check_export(lambda d: dmljax.gather(d, np.array([5, -6, 0])), data, exact_nodes=["Gather"])


def test_gather_scalar_index_and_promise_in_bounds():
    rng = np.random.default_rng(3)
    data = table(rng, 3, 4)
    check_export(lambda d, i: dmljax.gather(d, i, 1, mode="promise_in_bounds"), data, np.int32(-2))  # axis by position
    check_export(
        lambda d, i: dmljax.gather(d, i, axis=1, mode="promise_in_bounds"),
        data,
        np.array([3, -4], np.int32),
        exact_nodes=["Gather"],
    )


@pytest.mark.parametrize("axis", [0, 1])
def test_gather_fill_zeroes_out_of_range_reads(axis):
    rng = np.random.default_rng(4)
    data, indices = table(rng, 3, 4, dtype=np.int32), np.array([[7, -1], [-5, 2]], np.int32)
    check_export(lambda d, i: dmljax.gather(d, i, axis=axis, mode="fill"), data, indices, nodes=["Gather", "Where"])


def test_gather_bool_data_unsigned_indices():
    rng = np.random.default_rng(5)
    data, indices = rng.random((5, 2)) > 0.5, np.array([4, 0, 9], np.uint32)
    check_export(lambda d, i: dmljax.gather(d, i), data, indices, nodes=["Cast", "Clip", "Gather"])
    check_export(lambda d, i: dmljax.gather(d, i, mode="fill"), data, indices, nodes=["Gather", "And"])


# --- gather_elements ----------------------------------------------------------------------


@pytest.mark.parametrize("mode", [None, "clip", "fill", "promise_in_bounds"])
def test_gather_elements_modes(mode):
    rng = np.random.default_rng(6)
    data = table(rng, 3, 4)
    indices = np.array([[0, -1, 3, 2], [1, 1, -4, 0], [2, 0, 0, -1]], np.int32)
    if mode in (None, "clip", "fill"):
        indices[0, 0], indices[2, 1] = 9, -7
    fn = lambda d, i: dmljax.gather_elements(d, i, axis=1, mode=mode)  # noqa: E731
    check_export(fn, data, indices, nodes=["GatherElements"])


def test_gather_elements_axis0_uint32():
    rng = np.random.default_rng(7)
    data, indices = table(rng, 3, 2, dtype=np.int32), np.array([[2, 0], [1, 7]], np.uint32)
    check_export(lambda d, i: dmljax.gather_elements(d, i, axis=0), data, indices, nodes=["GatherElements", "Clip"])


# --- scatter --------------------------------------------------------------------------------


def test_scatter_default_drops_out_of_range_updates():
    rng = np.random.default_rng(8)
    data, updates = table(rng, 4, 3), table(rng, 2, 3)
    indices = np.array([[0, -1, 7], [-2, 9, 1]], np.int32)  # 7 and 9 dropped; targets unique
    model = check_export(lambda x, i, u: dmljax.scatter(x, i, u), data, indices, updates)
    assert {"Concat", "ScatterElements", "Slice"} <= set(node_types(model))
    assert all(a.name != "reduction" or a.s == b"none" for n in model.graph.node for a in n.attribute)


def test_scatter_clip_and_promise_are_scatter_elements():
    rng = np.random.default_rng(9)
    data, updates = table(rng, 3, 5), table(rng, 3, 2)
    indices = np.array([[9, 0], [-1, 2], [-7, 3]], np.int32)
    check_export(lambda x, i, u: dmljax.scatter(x, i, u, axis=1, mode="clip"), data, indices, updates,
                 exact_nodes=["Clip", "ScatterElements"])  # fmt: skip
    indices = np.array([[4, 0], [-1, 2], [-5, 3]], np.int32)
    check_export(lambda x, i, u: dmljax.scatter(x, i, u, axis=1, mode="promise_in_bounds"), data, indices, updates,
                 exact_nodes=["ScatterElements"])  # fmt: skip


def test_scatter_3d_unsigned_and_fill():
    rng = np.random.default_rng(10)
    data, updates = table(rng, 2, 3, 4, dtype=np.int32), table(rng, 2, 2, 4, dtype=np.int32)
    indices = np.array([[[0, 1, 2, 5], [2, 0, 1, 0]], [[1, 2, 0, 1], [0, 1, 9, 2]]], np.uint32)
    check_export(lambda x, i, u: dmljax.scatter_elements(x, i, u, 1, mode="drop"), data, indices, updates,
                 nodes=["ScatterElements", "Concat", "Slice"])  # fmt: skip


# --- slice1 ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "offsets, sizes, strides, output_sizes",
    [
        ((0, 0, 0, 1), (1, 1, 4, 3), (1, 1, 2, 2), None),
        ((0, 0, 0, 1), (1, 1, 4, 3), (1, 1, -2, 2), None),
        ((0, 0, 0, 0), (1, 1, 4, 4), (1, 1, -1, -3), None),  # a negative step down to index 0
        ((0, 0, 1, 0), (1, 1, 3, 4), (1, 1, -1, 1), (1, 1, 2, 4)),  # a shorter output
    ],
)
def test_slice1_is_one_slice(offsets, sizes, strides, output_sizes):
    rng = np.random.default_rng(11)
    x = table(rng, 1, 1, 4, 4)
    check_export(lambda v: dmljax.slice(v, offsets, sizes, strides, output_sizes), x, exact_nodes=["Slice"])


def test_slice1_whole_input_is_identity():
    rng = np.random.default_rng(12)
    x = table(rng, 2, 3)
    model = dmljax.onnx.export(lambda v: dmljax.slice(v, (0, 0), (2, 3), (1, 1)), x)
    (got,) = run(model, x)
    assert node_types(model) in ([], ["Identity"]) and np.array_equal(got, x)


# --- read_tensor / write_tensor -------------------------------------------------------------

NHWC = dmljax.TensorDesc("float32", (2, 3, 2, 2), strides=dmljax.packed_strides((2, 3, 2, 2), "NHWC"))
PADDED = dmljax.TensorDesc("float32", (2, 3), strides=(5, 1))  # rows of 3 padded to 5: buffer of 8
UNEVEN = dmljax.TensorDesc("float32", (2, 3, 4), strides=(20, 6, 1))  # 6 does not divide 20


@pytest.mark.parametrize(
    "desc, length, nodes",
    [
        (dmljax.TensorDesc("float32", (2, 3)), 6, ["Reshape"]),
        (dmljax.TensorDesc("float32", (2, 3)), 9, ["Slice", "Reshape"]),
        (NHWC, 24, ["Reshape", "Transpose"]),
        (PADDED, 8, ["Concat", "Reshape", "Slice"]),
        (dmljax.TensorDesc("float32", (2, 3), strides=(1, 2)), 6, ["Reshape", "Transpose"]),  # column-major
        (dmljax.TensorDesc("float32", (2, 3), strides=(0, 1)), 3, ["Expand"]),  # broadcast rows
        (dmljax.TensorDesc("float32", (3, 3), strides=(1, 1)), 5, ["Gather"]),  # sliding windows
        (UNEVEN, 40, ["Gather"]),
    ],
)
def test_read_tensor(desc, length, nodes):
    rng = np.random.default_rng(13)
    buffer = table(rng, length)
    check_export(lambda b: dmljax.read_tensor(b, desc), buffer, nodes=nodes)


@pytest.mark.parametrize(
    "desc, length, nodes",
    [
        (dmljax.TensorDesc("int32", (2, 3)), 6, []),
        (dmljax.TensorDesc("int32", (2, 3)), 9, ["Concat"]),
        (dmljax.TensorDesc("int32", NHWC.sizes, NHWC.strides), 24, ["Transpose"]),
        (dmljax.TensorDesc("int32", PADDED.sizes, PADDED.strides), 8, ["Concat", "Slice"]),
        (dmljax.TensorDesc("int32", PADDED.sizes, PADDED.strides), 12, ["Concat", "Slice"]),
        (dmljax.TensorDesc("int32", (2, 2, 3), strides=(16, 1, 4)), 32, ["Transpose", "Concat"]),  # padded NHWC
        (dmljax.TensorDesc("int32", UNEVEN.sizes, UNEVEN.strides), 40, ["ScatterElements"]),
    ],
)
def test_write_tensor_keeps_the_rest_of_the_buffer(desc, length, nodes):
    rng = np.random.default_rng(14)
    buffer, value = table(rng, length, dtype=np.int32), table(rng, *desc.sizes, dtype=np.int32)
    check_export(lambda b, v: dmljax.write_tensor(b, desc, v), buffer, value, nodes=nodes)


# --- a model, vmap, jax2onnx ----------------------------------------------------------------


def model_fn(embeddings, tokens, scores, picks, positions, rows, image_buffer):
    """Embedding gather summed over tokens, gather_elements, a scatter update, a reversed window, an NHWC read."""
    pooled = dmljax.gather(embeddings, tokens, axis=0).sum(axis=1)  # (batch, features)
    chosen = dmljax.gather_elements(scores, picks, axis=1)  # (batch, 2)
    updated = dmljax.scatter(pooled, positions, chosen, axis=1)  # (batch, features)
    window = dmljax.slice(updated, (0, 1), (2, 6), (1, -2))  # (2, 3), last column first
    image = dmljax.read_tensor(image_buffer, NHWC)  # (2, 3, 2, 2) from NHWC
    return window + rows + image.sum(axis=(1, 3))[:, :1]


def model_args():
    """The model's arguments, the same in every test that calls it."""
    rng = np.random.default_rng(0)
    return (
        table(rng, 10, 7),
        np.array([[1, 4, -1], [0, 9, 3]], np.int32),
        table(rng, 2, 5),
        np.array([[4, 0], [-1, 2]], np.int32),
        np.array([[6, 2], [0, -3]], np.int32),
        table(rng, 2, 3),
        table(rng, 24),
    )


def test_model_combining_the_operators():
    nodes = ["Gather", "GatherElements", "ScatterElements", "Slice", "Transpose"]
    args = model_args()
    model = dmljax.onnx.export(model_fn, *args)
    onnx.checker.check_model(model, full_check=True)
    assert set(nodes) <= set(node_types(model))
    (got,) = run(model, *args)
    want = np.asarray(jax.jit(model_fn)(*args))
    # Data movement is exact; the float sums around it may associate differently.
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-5)


def test_model_data_movement_is_bit_exact():
    def movement(embeddings, tokens, picks, positions, image_buffer):
        rows = dmljax.gather(embeddings, tokens, axis=0)[:, 0]  # (2, 7)
        chosen = dmljax.gather_elements(rows, picks, axis=1)
        updated = dmljax.scatter(rows, positions, chosen, axis=1)
        return dmljax.slice(updated, (0, 1), (2, 6), (1, -2)) + dmljax.read_tensor(image_buffer, NHWC)[:, :, 0, 0]

    embeddings, tokens, _, picks, positions, _, image_buffer = model_args()
    args = embeddings, tokens, picks, positions, image_buffer
    check_export(movement, *args, nodes=["Gather", "GatherElements", "ScatterElements", "Slice", "Transpose"])


def test_vmap_of_elementwise_operators_stays_one_node():
    rng = np.random.default_rng(15)
    data, indices = table(rng, 4, 3, 5), rng.integers(-5, 5, (4, 3, 2)).astype(np.int32)
    fn = jax.vmap(lambda d, i: dmljax.gather_elements(d, i, axis=1, mode="promise_in_bounds"))
    check_export(fn, data, indices, exact_nodes=["GatherElements"])
    check_export(jax.vmap(lambda d: dmljax.slice(d, (0, 1), (3, 4), (-1, 2))), data, exact_nodes=["Slice"])


def test_vmap_of_gather_over_the_table_or_the_indices_stays_one_gather():
    rng = np.random.default_rng(16)
    tables, indices = table(rng, 3, 6, 2), np.array([[5, -6], [0, 1]], np.int32)
    over_tables = jax.vmap(lambda t, i: dmljax.gather(t, i, axis=0, mode="promise_in_bounds"), in_axes=(0, None))
    check_export(over_tables, tables, indices, exact_nodes=["Gather"])
    over_indices = jax.vmap(lambda t, i: dmljax.gather(t, i, axis=0, mode="promise_in_bounds"), in_axes=(None, 0))
    check_export(over_indices, tables[0], indices, exact_nodes=["Gather"])
    both_indices = np.array([[5, -6], [0, 9], [1, -8]], np.int32)
    for mode in (None, "fill"):  # tables and indices batched: one Gather from the merged tables
        both = jax.vmap(lambda t, i, mode=mode: dmljax.gather(t, i, axis=1, mode=mode))
        model = check_export(both, table(rng, 3, 2, 6), both_indices, nodes=["Gather"])
        assert node_types(model).count("Gather") == 1
    scatters = jax.vmap(lambda x, i, u: dmljax.scatter(x, i, u, axis=0, mode="clip"), in_axes=(0, None, 0))
    model = check_export(
        scatters, table(rng, 2, 4, 3), np.array([[0, 3, -9]], np.int32), table(rng, 2, 1, 3), nodes=["Clip"]
    )
    assert node_types(model).count("ScatterElements") == 1


def test_module_level_import_is_exported_too():
    rng = np.random.default_rng(17)
    data, indices = table(rng, 5, 2), np.array([1, 3], np.int32)
    check_export(lambda d, i: imported_gather(d, i), data, indices, exact_nodes=["Clip", "Gather"])


def test_dmljax_plugins_patch_nothing_in_a_plain_jax2onnx_export():
    """jax2onnx's ``to_onnx`` enters every leaf plugin's bindings: dmljax's must be empty (no swapped functions)."""
    from jax2onnx.plugins.plugin_system import PLUGIN_REGISTRY

    ours = [p for name, p in PLUGIN_REGISTRY.items() if name.startswith("dmljax_")]
    assert {type(p).__name__ for p in ours} >= {"DmljaxGatherPlugin", "DmljaxMarkPlugin"}
    assert all(type(p).binding_specs() == [] for p in ours)


def test_opset_13_and_a_jitted_inner_function():
    rng = np.random.default_rng(19)
    data, indices = table(rng, 4, 3), np.array([2, -1], np.int32)
    inner = jax.jit(lambda d, i: dmljax.gather(d, i, axis=1))
    check_export(lambda d, i: inner(d, i) * 2, data, indices, nodes=["Gather", "Clip"], opset=13)


def test_jax_still_works_after_an_export():
    """jax2onnx's patches of jax.numpy must not end up in dmljax's jit caches (an export once left them there)."""
    rng = np.random.default_rng(20)
    data, indices = table(rng, 3, 4), np.array([[0, 2, 1, 0]], np.int32)
    dmljax.onnx.export(lambda d, i: dmljax.gather(d, i, axis=0), data, indices)
    for fn in (dmljax.gather, dmljax.gather_elements):
        got = fn(jnp.asarray(data), jnp.asarray(indices), axis=0)
        assert got.shape[-1] == 4
    assert dmljax.gather is not None and dmljax.gather.__module__ == "dmljax._ops.index.gather"


# --- bfloat16 (fed through OrtValues) --------------------------------------------------------


@pytest.mark.parametrize("mode", ["fill", "clip"])
def test_bfloat16_fill_and_drop_run_in_float32_between_casts(mode):
    rng = np.random.default_rng(46)
    data, indices = table(rng, 5, 2, dtype=jnp.bfloat16), np.array([1, -1, 7, -9], np.int32)
    casts = ["Cast"] if mode == "fill" else []
    check_export(lambda d, i: dmljax.gather(d, i, axis=0, mode=mode), data, indices, nodes=["Gather", *casts])
    elements = np.array([[1, 0], [4, -8], [9, 0]], np.int32)
    check_export(lambda d, i: dmljax.gather_elements(d, i, axis=0, mode=mode), data, elements, nodes=casts)
    where, updates = np.array([[0, 1], [9, -1]], np.int32), table(rng, 2, 2, dtype=jnp.bfloat16)
    check_export(lambda x, i, u: dmljax.scatter(x, i, u, axis=0, mode=mode), data, where, updates, nodes=casts)


# --- control flow, vmap of the ND operators, gradients -------------------------------------


def all_node_types(graph) -> list[str]:
    """The node types of ``graph`` and of its subgraphs (Loop and If bodies), depth first."""
    types = []
    for node in graph.node:
        types.append(node.op_type)
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                types += all_node_types(attr.g)
    return types


def check_body(model, present, absent=("GatherND", "ScatterND")):
    """The bodies hold dmljax's nodes (``present``) and not jax2onnx's lowerings of the implementation."""
    types = all_node_types(model.graph)
    assert set(present) <= set(types) and not set(absent) & set(types), types


def scan_steps(t, steps):
    def step(carry, i):
        rows = dmljax.gather(t, i, axis=0)
        where = i[:, None] * jnp.ones((1, t.shape[1]), i.dtype)
        return dmljax.scatter(carry, where, rows + carry[: i.shape[0]], axis=0, mode="fill"), None

    return jax.lax.scan(step, jnp.zeros_like(t), steps)[0]


def test_scan_over_gather_and_scatter_steps():
    rng = np.random.default_rng(40)
    steps = np.array([[1, 4], [0, 2], [3, -1], [9, 2]], np.int32)  # -1 wraps, 9 is dropped by fill
    model = check_export(scan_steps, table(rng, 5, 2), steps, nodes=["Loop"])
    check_body(model, ["Gather", "ScatterElements"])


def test_fori_loop_with_constant_and_traced_bounds():
    rng = np.random.default_rng(41)
    data, indices = table(rng, 4, 3), np.array([3, 0, -2, 1], np.int32)
    body = lambda k, c, i: dmljax.gather(c, i, axis=0) + dmljax.slice(c, (0, 0), (4, 3), (-1, 1))  # noqa: E731
    fixed = lambda d, i: jax.lax.fori_loop(0, 3, lambda k, c: body(k, c, i), d)  # noqa: E731  (a scan)
    check_body(check_export(fixed, data, indices, nodes=["Loop"]), ["Gather", "Slice"])
    for n in (0, 3):  # a while loop
        traced = lambda d, i, n: jax.lax.fori_loop(0, n, lambda k, c: body(k, c, i), d)  # noqa: E731
        model = check_export(traced, data, indices, np.int32(n), nodes=["Loop"])
        check_body(model, ["Gather", "Slice"])


@pytest.mark.parametrize("pick", [0, 1, 2])
def test_cond_and_switch_with_dmljax_operators_in_the_branches(pick):
    rng = np.random.default_rng(42)
    data, indices = table(rng, 5, 2), np.array([4, -5, 7], np.int32)
    branches = [
        lambda d, i: dmljax.gather(d, i, axis=0, mode="fill"),
        lambda d, i: dmljax.slice(d, (2, 0), (3, 2), (-1, 1)),
        lambda d, i: dmljax.gather_nd(d, i[:, None] % 5),
    ]
    model = check_export(lambda d, i, p: jax.lax.switch(p, branches, d, i), data, indices, np.int32(pick))
    check_body(model, ["If", "Gather", "Slice", "GatherND"], absent=())
    two = lambda d, i, p: jax.lax.cond(p > 0, branches[0], branches[1], d, i)  # noqa: E731
    check_body(check_export(two, data, indices, np.int32(pick)), ["If", "Gather", "Slice"])


def test_vmap_of_gather_nd_and_scatter_nd_stays_one_node():
    rng = np.random.default_rng(43)
    data, updates = table(rng, 3, 4, 5), table(rng, 3, 2)
    indices = np.array([[[1, 2], [0, 9]], [[3, 0], [-2, 2]], [[0, 0], [1, 1]]], np.int32)
    check_export(
        jax.vmap(lambda d, i: dmljax.gather_nd(d, i)), data, indices, exact_nodes=["Cast", "Max", "Min", "GatherND"]
    )
    over_indices = jax.vmap(lambda d, i: dmljax.gather_nd(d, i, mode="fill"), in_axes=(None, 0))
    model = check_export(over_indices, data[0], indices, nodes=["GatherND"])
    assert node_types(model).count("GatherND") == 1
    for in_axes in ((0, 0, 0), (None, 0, 0), (0, None, None)):
        fn = jax.vmap(lambda x, i, u: dmljax.scatter_nd(x, i, u), in_axes=in_axes)
        args = [a if axis == 0 else a[0] for a, axis in zip((data, indices, updates), in_axes, strict=True)]
        model = check_export(fn, *args, nodes=["ScatterND"])
        assert node_types(model).count("ScatterND") == 1


def check_gradient(fn, *args, argnums=0, opset=None):
    """Export ``jax.grad(fn)``, run it on onnxruntime, compare with JAX (sums may differ in order)."""
    grad = jax.grad(fn, argnums=argnums)
    model = dmljax.onnx.export(grad, *args, opset=opset)
    onnx.checker.check_model(model, full_check=True)
    (got,) = run(model, *args)
    np.testing.assert_allclose(got, np.asarray(jax.jit(grad)(*args)), rtol=1e-6, atol=1e-6)
    return model


@pytest.mark.slow
def test_gradients_of_gather_gather_nd_and_scatter_nd():
    rng = np.random.default_rng(44)
    data, indices = table(rng, 5, 2), np.array([4, 0, 4, -1, 9], np.int32)  # repeats; 9 clipped
    check_gradient(lambda t, i: (dmljax.gather(t, i, axis=0) ** 2).sum(), data, indices)
    fill = lambda t, i: (dmljax.gather(t, i, axis=0, mode="fill") ** 3).sum()  # noqa: E731
    check_gradient(fill, data, indices)
    along_1 = lambda t, i: (dmljax.gather(t, i, axis=1) ** 2).sum()  # noqa: E731  (a lax.platform_dependent tangent)
    check_gradient(along_1, table(rng, 3, 6), indices)
    nd = np.array([[1, 2], [0, 4], [1, 2], [-1, 0]], np.int32)  # 4 clipped to 3
    check_gradient(lambda d, i: (dmljax.gather_nd(d, i) ** 2).sum(), table(rng, 3, 4, 5), nd)
    updates, at = table(rng, 3, 2), np.array([[1], [3], [1]], np.int32)  # a repeated row: the last write wins
    check_gradient(lambda x, u: (dmljax.scatter_nd(x, at, u) ** 2).sum(), data, updates)


@pytest.mark.slow
@pytest.mark.parametrize("mode", [None, "clip", "fill"])
def test_gradients_of_gather_elements_and_scatter_are_elements_nodes(mode):
    """Their gradients are elementwise lax gathers/scatters (batching dimensions), exported as
    GatherElements/ScatterElements (jax2onnx alone: 'scatter pattern not supported')."""
    rng = np.random.default_rng(45)
    data, picks = table(rng, 5, 3), np.array([[1, 0, -1], [2, 9, 0], [-4, 1, 1], [0, 0, 2], [2, 1, -3]], np.int32)
    gather = lambda d, i: (dmljax.gather_elements(d, i, axis=1, mode=mode) ** 2).sum()  # noqa: E731
    model = check_gradient(gather, data, picks)
    assert {"GatherElements", "ScatterElements"} & set(node_types(model)), node_types(model)
    at, updates = np.array([[1, 0, 4], [1, 3, -1], [7 if mode else -2, 2, 0]], np.int32), table(rng, 3, 3)
    for reduction in ("none", "add", "max"):
        scatter = lambda x, u, r=reduction: (dmljax.scatter(x, at, u, axis=0, mode=mode, reduction=r) ** 2).sum()  # noqa: E731
        for argnums in (0, 1):
            model = check_gradient(scatter, data, updates, argnums=argnums)
            assert "ScatterND" not in node_types(model), node_types(model)


def test_a_gradient_that_needs_a_scatter_reduction_names_the_opset():
    fn = jax.grad(lambda d, i: (dmljax.gather_elements(d, i, axis=1) ** 2).sum())
    with pytest.raises(dmljax.ValidationError, match=r"opset must be >= 16 .*'add'.*got opset=13"):
        dmljax.onnx.export(fn, np.ones((2, 3), F32), np.zeros((2, 2), np.int32), opset=13)
    model = dmljax.onnx.export(fn, np.ones((2, 3), F32), np.zeros((2, 2), np.int32), opset=16)
    assert "ScatterElements" in node_types(model)


@pytest.mark.parametrize("reduction", ["add", "mul"])
def test_forward_mode_tangents_of_add_and_mul_reductions_export(reduction):
    """``jax.jvp`` of a scatter add/mul: its tangent sums the updates with dmljax's ordered-add
    primitive (outside any operator marker), exported as a ScatterElements ``add``, which ONNX
    defines in the updates' order: the add's tangent is ``np.add.at`` of the tangents, bit for bit."""
    x, dx = np.array([0.5, 2.0, -1.0, 3.0], F32), np.array([1.0, -2.0, 0.5, 0.25], F32)
    u, du = np.array([1.5, 2.0, -0.5, 1.25, 3.0], F32), np.array([1e8, 1.0, -1e8, 7.0, 0.5], F32)
    at = np.array([1, 3, 1, 1, 0], np.int32)

    def tangent(x, u, dx, du):
        return jax.jvp(lambda x, u: dmljax.scatter(x, at, u, reduction=reduction), (x, u), (dx, du))[1]

    model = dmljax.onnx.export(tangent, x, u, dx, du, opset=18)
    assert "ScatterElements" in node_types(model), node_types(model)
    (got,) = run(model, x, u, dx, du)
    if reduction == "add":
        want = dx.copy()
        np.add.at(want, at, du)
        np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(got, np.asarray(jax.jit(tangent)(x, u, dx, du)), rtol=1e-6)


@pytest.mark.parametrize("mode", ["clip", "fill", "promise_in_bounds"])
def test_elementwise_lax_gather_and_scatter_keep_lax_index_semantics(mode):
    """A negative index is out of range for lax (not counted from the end); under promise_in_bounds
    XLA clamps a gather's index and skips a scatter's update: the model does the same."""
    rng = np.random.default_rng(48)
    data, picks, updates = table(rng, 4, 3), np.array([[2, -1], [1, 5], [3, 0], [0, -4]], np.int32), table(rng, 4, 2)
    gnums = jax.lax.GatherDimensionNumbers((), (1,), (1,), operand_batching_dims=(0,), start_indices_batching_dims=(0,))
    snums = jax.lax.ScatterDimensionNumbers(
        (), (1,), (1,), operand_batching_dims=(0,), scatter_indices_batching_dims=(0,)
    )
    gather = lambda d, i: jax.lax.gather(d, i[..., None], gnums, (1, 1), mode=mode)  # noqa: E731
    check_export(gather, data, picks, nodes=["GatherElements"])
    scatter = lambda d, i, u: jax.lax.scatter_add(d, i[..., None], u, snums, mode=mode)  # noqa: E731
    check_export(scatter, data, picks, updates, nodes=["ScatterElements"])


def test_a_threefry_key_made_inside_is_not_folded():
    """The export folds known integer scalars only (a platform's branch index), never a key
    (a draw from one is refused: tests/test_onnx_defects.py)."""
    fn = lambda x: x + jax.random.key_data(jax.random.key(0)).astype(F32).sum()  # noqa: E731
    assert "Add" in node_types(check_export(fn, np.ones(3, F32)))


def test_take_along_axis_is_one_gather_elements():
    rng = np.random.default_rng(47)
    data, picks = table(rng, 4, 3), np.array([[2, 0], [1, 5], [-1, 0], [0, -9]], np.int32)
    for mode in ("clip", "fill", None):
        fn = lambda d, i, mode=mode: jnp.take_along_axis(d, i, axis=1, mode=mode)  # noqa: E731
        check_export(fn, data, picks, nodes=["GatherElements"])


# --- refused ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fn",
    [
        lambda d, i: dmljax.gather(d, i, mode="checked"),
        lambda d, i: dmljax.gather_elements(d, i, axis=1, mode="checked"),
        lambda d, i: dmljax.scatter(d, i, d[:, :2], axis=1, mode=dmljax._ops.common.indices.IndexMode.CHECKED),
    ],
    ids=["gather", "gather_elements", "scatter"],
)
def test_checked_mode_is_refused(fn):
    rng = np.random.default_rng(21)
    data, indices = table(rng, 2, 3), np.zeros((2, 2), np.int32)
    with pytest.raises(
        dmljax.ValidationError, match=r"(gather|gather_elements|scatter): mode must not be 'checked'.*got mode="
    ):
        dmljax.onnx.export(fn, data, indices)


@pytest.mark.parametrize(
    "name, fn",
    [
        ("random_generator", lambda s: dmljax.random.random_generator(s, (4,))[0]),
        ("uniform", lambda s: dmljax.random.uniform(s, (4,))[0]),
        ("dropout", lambda s: dmljax.random.dropout(s, jnp.ones(4), 0.5)[0]),
        ("philox4x32_10", lambda s: dmljax.random.philox4x32_10(s[:4], s[4:])),
    ],
)
def test_random_operators_are_refused(name, fn):
    state = np.asarray(dmljax.random.make_state(seed=1))
    match = rf"{name}: \w+ must not reach an ONNX export: ONNX's RandomUniform.*not Philox 4x32-10.*got \w+='uint32\["
    with pytest.raises(dmljax.ValidationError, match=match):
        dmljax.onnx.export(fn, state)


def test_random_refusal_through_compile_operator():
    desc = dmljax.descriptors.RandomGeneratorOperatorDesc(
        dmljax.TensorDesc("uint32", (1, 1, 1, 6)), dmljax.TensorDesc("uint32", (1, 1, 1, 8))
    )
    op = dmljax.descriptors.compile_operator(desc, "3.0")
    with pytest.raises(dmljax.ValidationError, match="random_generator: .* must not reach an ONNX export"):
        dmljax.onnx.export(lambda s: op(s)[0], np.asarray(dmljax.random.make_state(seed=1)))


def test_validation_errors_are_dmljax_own():
    rng = np.random.default_rng(22)
    data = table(rng, 2, 3)
    with pytest.raises(dmljax.ValidationError, match=r"gather: axis must be in \[-2, 2\); got axis=5"):
        dmljax.onnx.export(lambda d, i: dmljax.gather(d, i, axis=5), data, np.zeros(2, np.int32))
    with pytest.raises(IndexError, match="gather: index 4 is out of bounds for axis 0 with size 2"):
        dmljax.onnx.export(lambda d: dmljax.gather(d, np.array([4])), data)


@pytest.mark.parametrize("opset", [12, "23", True])
def test_opset_must_be_13_or_more(opset):
    rng = np.random.default_rng(23)
    with pytest.raises(
        dmljax.ValidationError, match=rf"dmljax.onnx.export: opset must be an integer >= 13; got opset={opset!r}"
    ):
        dmljax.onnx.export(lambda d: d, table(rng, 2), opset=opset)


# --- a symbolic batch dimension --------------------------------------------------------------


@pytest.mark.parametrize("mode", [None, "fill"])
def test_symbolic_batch_dimension_gather(mode):
    rng = np.random.default_rng(24)
    (batch,) = jax.export.symbolic_shape("B")
    embeddings = table(rng, 5, 4)
    fn = lambda t, i: dmljax.gather(t, i, mode=mode)  # noqa: E731
    model = dmljax.onnx.export(fn, embeddings, jax.ShapeDtypeStruct((batch, 3), np.int32))
    onnx.checker.check_model(model, full_check=True)
    assert model.graph.input[1].type.tensor_type.shape.dim[0].dim_param == "B"
    for rows in (1, 4):
        tokens = rng.integers(-7, 7, (rows, 3)).astype(np.int32)
        (got,) = run(model, embeddings, tokens)
        assert got.tobytes() == np.asarray(jax.jit(fn)(embeddings, tokens)).tobytes()


def test_symbolic_batch_dimension_scatter():
    rng = np.random.default_rng(25)
    (batch,) = jax.export.symbolic_shape("B")
    fn = lambda x, i, u: dmljax.scatter(x, i, u, axis=1)  # noqa: E731
    specs = [jax.ShapeDtypeStruct((batch, 4), F32), jax.ShapeDtypeStruct((batch, 1), np.int32)]
    model = dmljax.onnx.export(fn, *specs, jax.ShapeDtypeStruct((batch, 1), F32))
    for rows in (1, 3):
        args = table(rng, rows, 4), rng.integers(-5, 5, (rows, 1)).astype(np.int32), table(rng, rows, 1)
        (got,) = run(model, *args)
        assert got.tobytes() == np.asarray(jax.jit(fn)(*args)).tobytes()


# --- the ONNX guide's example (docs/guides/onnx.md) ------------------------------------------


def test_onnx_guide_snippet_runs_and_prints_the_documented_output():
    import contextlib
    import io
    import pathlib
    import re

    page = pathlib.Path(__file__).resolve().parents[1] / "docs" / "guides" / "onnx.md"
    text = page.read_text()
    section = text[text.index("# Deploying to ONNX Runtime / DirectML") :].split("\n## ", 1)[0]
    (snippet,) = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    (expected,) = re.findall(r"```text\n(.*?)```", section, flags=re.S)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(snippet, str(page), "exec"), {"__name__": "docs_onnx"})
    assert printed.getvalue() == expected


@pytest.mark.usefixtures("x64")
def test_64_bit_types_under_enable_x64():
    rng = np.random.default_rng(26)
    data, indices = table(rng, 5, 2, dtype=np.float64), np.array([[1, -1, 7]], np.int64)
    model = check_export(lambda d, i: dmljax.gather(d, i, axis=0, mode="fill"), data, indices, nodes=["Gather"])
    assert [i.type.tensor_type.elem_type for i in model.graph.input] == [
        onnx.TensorProto.DOUBLE,
        onnx.TensorProto.INT64,
    ]
    args = table(rng, 4, 3, dtype=np.float64), np.array([[0, 2, 5]], np.uint64), table(rng, 1, 3, dtype=np.float64)
    check_export(lambda x, i, u: dmljax.scatter(x, i, u, axis=0), *args, nodes=["Min", "Cast", "ScatterElements"])
