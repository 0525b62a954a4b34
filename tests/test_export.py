"""`jax.export`: symbolic batch dimensions, serialisation round trips, every platform, no custom calls."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import export

import dmljax
from tests import reference
from tests._util import spec

PLATFORMS = ("cpu", "cuda", "rocm", "tpu")
(B,) = export.symbolic_shape("b")  # one symbolic scope for every argument


def _spec(shape, dtype):
    """`spec`, with a shape written as text too (``"b, 16"``: ``b`` the symbolic batch)."""
    if isinstance(shape, str):
        shape = tuple(B if d.strip() == "b" else int(d) for d in shape.split(","))
    return spec(shape, dtype)


def _indices(rng, shape, size, dtype="int32"):
    return rng.integers(-size if dtype.startswith("int") else 0, size, shape).astype(dtype)


def _slice_batch(x):
    return dmljax.slice(x, (0, 2), (x.shape[0], 13), (1, -3))


def _slice_batch_reversed(x):
    return dmljax.slice(x, (0, 1), (x.shape[0], 8), (-1, 2))


# name -> (function, argument specs with a symbolic batch "b", concrete arguments for a batch)
CASES = {
    "gather axis 1": (
        lambda x, i: dmljax.gather(x, i, axis=1),
        ("b, 16", "float32"),
        ((3, 5), "int32"),
    ),
    "gather axis 0 (the symbolic axis)": (
        lambda x, i: dmljax.gather(x, i, axis=0),
        ("b, 16", "float32"),
        ((4,), "uint32"),
    ),
    "gather fill": (
        lambda x, i: dmljax.gather(x, i, axis=1, mode="fill"),
        ("b, 16", "float32"),
        ((6,), "int32"),
    ),
    "scatter": (
        lambda x, i, u: dmljax.scatter(x, i, u, axis=1),
        ("b, 16", "float32"),
        (("b, 1", (1,)), "int32"),
    ),
    "scatter clip": (
        lambda x, i, u: dmljax.scatter(x, i, u, axis=1, mode="clip"),
        ("b, 16", "float32"),
        (("b, 1", (1,)), "int32"),
    ),
    "slice1": (_slice_batch, ("b, 16", "float32"), None),
    "slice1 reversed batch": (_slice_batch_reversed, ("b, 16", "float32"), None),
    "gather_elements": (
        lambda x, i: dmljax.gather_elements(x, i, axis=1),
        ("b, 16", "float32"),
        (("b, 16", (16,)), "int32"),
    ),
}


def _specs_and_args(name, batch, rng):
    """The symbolic argument specs of a case, and concrete arguments for a batch of ``batch``."""
    fun, (data_shape, data_dtype), index = CASES[name]
    data = rng.standard_normal((batch, 16)).astype(data_dtype)
    specs, args = [_spec(data_shape, data_dtype)], [data]
    if index is not None:
        shape, dtype = index
        symbolic, concrete = shape if isinstance(shape[0], str) else (shape, shape)
        concrete = (batch, *concrete) if isinstance(shape[0], str) else concrete
        specs.append(_spec(symbolic, dtype))
        args.append(_indices(rng, concrete, batch if "axis 0" in name else 16, dtype))
    if name.startswith("scatter"):
        specs.append(_spec(specs[1].shape, data_dtype))
        args.append(rng.standard_normal(args[1].shape).astype(data_dtype))
    return fun, specs, args


@pytest.mark.parametrize("name", list(CASES))
def test_symbolic_batch_exports_serialises_and_runs(name):
    rng = np.random.default_rng(0)
    fun, specs, _ = _specs_and_args(name, 3, rng)
    exported = export.export(jax.jit(fun))(*specs)
    restored = export.deserialize(exported.serialize())
    assert "b" in str(restored.in_avals[0].shape)
    for batch in (3, 5):
        _, _, args = _specs_and_args(name, batch, np.random.default_rng(batch))
        np.testing.assert_array_equal(restored.call(*args), jax.jit(fun)(*args))


@pytest.mark.hlo
@pytest.mark.parametrize("name", list(CASES))
def test_fixed_shapes_export_for_every_platform_without_custom_calls(name):
    """If this fails: docs/design/per-platform-formulations.md (each platform's branch is plain StableHLO)."""
    rng = np.random.default_rng(1)
    fun, _, args = _specs_and_args(name, 4, rng)
    specs = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in args]
    exported = export.export(jax.jit(fun), platforms=PLATFORMS)(*specs)
    assert exported.platforms == PLATFORMS
    assert "stablehlo.custom_call" not in exported.mlir_module()
    restored = export.deserialize(exported.serialize())
    np.testing.assert_array_equal(restored.call(*args), jax.jit(fun)(*args))


def test_exported_gather_keeps_64_bit_semantics_with_x64():
    with jax.enable_x64(True):
        fun = jax.jit(lambda x, i: dmljax.gather(x, i, axis=1, mode="fill"))
        exported = export.export(fun)(_spec("b, 16", "float32"), _spec((2,), "int64"))
        restored = export.deserialize(exported.serialize())
        x = jnp.arange(32, dtype=jnp.float32).reshape(2, 16)
        out = restored.call(x, np.array([2**32 + 1, -1], np.int64))
    np.testing.assert_array_equal(out, [[0.0, 15.0], [0.0, 31.0]])


# ----- gather_nd, scatter_nd and scatter's reductions with symbolic sizes ---------------------

REDUCTIONS = ["none", "add", "mul", "max", "min"]
SYMBOLS = dict(zip(("B", "N"), export.symbolic_shape("B, N"), strict=True))

# name -> (data shape, indices shape, index bounds: the indexed axes' sizes), "B" the data's
# symbolic size, "N" the number of index tuples or updates; every case with both.
ND_GATHERS = {
    "data, indexed axis": ("B, 5", "3, 1", 0),
    "data, slice axis": ("4, B", "3, 1", 0),
    "data, batch axis": ("B, 4, 3", "B, 2, 1", 1),
    "tuples": ("4, 5", "N, 2", 0),
    "data and tuples": ("4, B", "N, 1", 0),
    "batch axis and tuples": ("B, 4, 3", "B, N, 1", 1),
}
ND_SCATTERS = {
    "data, indexed axis": ("B, 4", "3, 1"),
    "data, slice axis": ("4, B", "3, 1"),
    "updates": ("4, 5", "N, 1"),
    "data and updates": ("4, B", "N, 1"),
}
ELEMENT_SCATTERS = {  # data shape, indices shape, axis
    "data, other axis": ("B, 16", "B, 3", 1),
    "data, the axis": ("B, 16", "2, 16", 0),
    "updates, the axis": ("8, 16", "N, 16", 0),
    "data and updates": ("B, 16", "B, N", 1),
}


def _symbolic(text):
    return tuple(SYMBOLS[d] if d in SYMBOLS else int(d) for d in (s.strip() for s in text.split(",")))


def _concrete(text, sizes):
    return tuple(sizes[d] if d in sizes else int(d) for d in (s.strip() for s in text.split(",")))


def _updates(rng, shape):
    """Values spread over 10 decades: a float sum in another order than ONNX's loop shows."""
    return (rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 8, shape)).astype(np.float32)


def _tuples(rng, shape, sizes, unique):
    """Index tuples of ``shape[-1]`` signed indices into axes of ``sizes``; distinct when ``unique``."""
    count = int(np.prod(shape[:-1]))
    cells = np.array(list(np.ndindex(*sizes)))
    rows = rng.permutation(len(cells))[:count] if unique else rng.integers(0, len(cells), count)
    chosen = cells[rows]
    chosen = np.where(rng.random(chosen.shape) < 0.5, chosen - np.array(sizes), chosen)  # negative ones too
    return chosen.reshape(shape).astype(np.int32)


def _nd_gather(name, sizes, rng):
    data_shape, index_shape, b = ND_GATHERS[name]
    data = rng.standard_normal(_concrete(data_shape, sizes)).astype(np.float32)
    shape = _concrete(index_shape, sizes)
    k = shape[-1]
    lead = shape[b:-1]
    per_batch = [_tuples(rng, (*lead, k), data.shape[b : b + k], False) for _ in range(int(np.prod(shape[:b])))]
    indices = np.stack(per_batch).reshape(shape)
    fun = lambda x, i: dmljax.gather_nd(x, i, batch_dims=b)  # noqa: E731
    return fun, lambda x, i: reference.gather_nd(x, i, b), (data, indices), (data_shape, index_shape)


def _nd_scatter(name, reduction, sizes, rng):
    data_shape, index_shape = ND_SCATTERS[name]
    data = rng.standard_normal(_concrete(data_shape, sizes)).astype(np.float32)
    shape = _concrete(index_shape, sizes)
    k = shape[-1]
    indices = _tuples(rng, shape, data.shape[:k], unique=reduction == "none")  # "none": duplicates are invalid
    updates = _updates(rng, shape[:-1] + data.shape[k:])
    update_shape = ",".join([*index_shape.split(",")[:-1], *data_shape.split(",")[k:]])
    fun = lambda x, i, u: dmljax.scatter_nd(x, i, u, reduction=reduction)  # noqa: E731
    oracle = lambda x, i, u: reference.scatter_nd(x, i, u, reduction)  # noqa: E731
    return fun, oracle, (data, indices, updates), (data_shape, index_shape, update_shape)


def _element_scatter(name, reduction, sizes, rng):
    data_shape, index_shape, axis = ELEMENT_SCATTERS[name]
    data = rng.standard_normal(_concrete(data_shape, sizes)).astype(np.float32)
    shape = _concrete(index_shape, sizes)
    n = data.shape[axis]
    if reduction == "none":  # distinct targets along the axis: a permutation's first rows
        indices = np.argsort(rng.random(shape[:axis] + (n,) + shape[axis + 1 :]), axis=axis)
        indices = np.take(indices, np.arange(shape[axis]), axis=axis)
    else:
        indices = rng.integers(0, n, shape)
    indices = np.where(rng.random(shape) < 0.5, indices - n, indices).astype(np.int32)
    updates = _updates(rng, shape)
    fun = lambda x, i, u: dmljax.scatter(x, i, u, axis=axis, reduction=reduction)  # noqa: E731
    oracle = lambda x, i, u: reference.scatter_elements(x, i, u, axis, reduction)  # noqa: E731
    return fun, oracle, (data, indices, updates), (data_shape, index_shape, index_shape)


def _symbolic_case(case, sizes, rng):
    kind, name, reduction = case
    if kind == "gather_nd":
        return _nd_gather(name, sizes, rng)
    if kind == "scatter_nd":
        return _nd_scatter(name, reduction, sizes, rng)
    return _element_scatter(name, reduction, sizes, rng)


SYMBOLIC_CASES = [
    pytest.param(case, marks=[pytest.mark.slow] if case[2] in ("add", "mul") else [])  # the rounds: 1-1.5 s
    for case in (
        [("gather_nd", name, None) for name in ND_GATHERS]
        + [("scatter_nd", name, r) for name in ND_SCATTERS for r in REDUCTIONS]
        + [("scatter", name, r) for name in ELEMENT_SCATTERS for r in REDUCTIONS]
    )
]


@pytest.mark.parametrize("platforms", [("cpu",), ("cpu", "cuda")], ids=["cpu", "cpu+cuda"])
@pytest.mark.parametrize("case", SYMBOLIC_CASES, ids=lambda c: " ".join(str(p) for p in c if p))
def test_nd_and_reductions_export_with_symbolic_sizes(case, platforms):
    """Symbolic sizes of the data, of the index tuples or updates, and both: the exported
    program round-trips and equals the eager result and ONNX's loop (bit for bit: the
    ordered reductions keep the loop's order)."""
    fun, _, _, texts = _symbolic_case(case, {"B": 3, "N": 4}, np.random.default_rng(0))
    specs = [jax.ShapeDtypeStruct(_symbolic(t), np.int32 if j == 1 else np.float32) for j, t in enumerate(texts)]
    exported = export.export(jax.jit(fun), platforms=platforms)(*specs)
    restored = export.deserialize(exported.serialize())
    assert restored.platforms == platforms
    for seed, sizes in enumerate(({"B": 3, "N": 4}, {"B": 6, "N": 2})):
        _, oracle, args, _ = _symbolic_case(case, sizes, np.random.default_rng(seed))
        out = np.asarray(restored.call(*args))
        np.testing.assert_array_equal(out, fun(*args))
        np.testing.assert_array_equal(out, oracle(*args))


def test_scatter_nd_symbolic_updates_of_another_size_are_named():
    (m,) = export.symbolic_shape("M", scope=SYMBOLS["B"].scope)
    specs = (
        jax.ShapeDtypeStruct((4, 5), np.float32),
        jax.ShapeDtypeStruct((SYMBOLS["N"], 1), np.int32),
        jax.ShapeDtypeStruct((m, 5), np.float32),
    )
    with pytest.raises(dmljax.ValidationError, match=r"scatter_nd.*updates\.shape.*\(M, 5\)"):
        export.export(jax.jit(lambda x, i, u: dmljax.scatter_nd(x, i, u, reduction="add")))(*specs)


@pytest.mark.slow
@pytest.mark.parametrize("op", ["scatter_nd", "scatter"])
def test_mul_gradient_exports_with_a_symbolic_number_of_updates(op):
    """The product rule's segmented scan over a symbolic number of updates (JAX's
    associative_scan needs a known length): it rounds otherwise than the eager scan."""
    n = SYMBOLS["N"]
    if op == "scatter_nd":
        fun = lambda x, i, u: dmljax.scatter_nd(x, i, u, reduction="mul")  # noqa: E731
        shapes = ((4, 5), (n, 1), (n, 5))
    else:
        fun = lambda x, i, u: dmljax.scatter(x, i, u, axis=0, reduction="mul")  # noqa: E731
        shapes = ((4, 5), (n, 5), (n, 5))
    grad = jax.grad(lambda x, i, u: (fun(x, i, u) ** 2).sum(), argnums=(0, 2))
    specs = [jax.ShapeDtypeStruct(s, d) for s, d in zip(shapes, ("float32", "int32", "float32"), strict=True)]
    restored = export.deserialize(export.export(jax.jit(grad))(*specs).serialize())
    rng = np.random.default_rng(0)
    for count in (7, 2):
        concrete = [tuple(count if d is n else d for d in s) for s in shapes]
        x, u = (rng.standard_normal(concrete[j]).astype(np.float32) for j in (0, 2))
        i = rng.integers(-2, 2, concrete[1]).astype(np.int32)  # duplicates: runs of several updates
        for got, want in zip(restored.call(x, i, u), grad(x, i, u), strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-6)
