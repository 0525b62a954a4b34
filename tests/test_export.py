"""`jax.export`: symbolic batch dimensions, serialisation round trips, every platform, no custom calls."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import export

import dmljax

PLATFORMS = ("cpu", "cuda", "rocm", "tpu")
(B,) = export.symbolic_shape("b")  # one symbolic scope for every argument


def _spec(shape, dtype):
    if isinstance(shape, str):
        shape = tuple(B if d.strip() == "b" else int(d) for d in shape.split(","))
    return jax.ShapeDtypeStruct(shape, dtype)


def _indices(rng, shape, size, dtype="int32"):
    return rng.integers(-size if dtype.startswith("int") else 0, size, shape).astype(dtype)


def _slice_batch(x):
    return dmljax.slice1(x, (0, 2), (x.shape[0], 13), (1, -3))


def _slice_batch_reversed(x):
    return dmljax.slice1(x, (0, 1), (x.shape[0], 8), (-1, 2))


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
