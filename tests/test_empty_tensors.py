"""Empty tensors: every indexing operator on empty non-indexed axes (ONNX allows them) against the loop oracle.

An empty indexed axis, and DirectML's tensor descriptors and slice windows (whose sizes are
at least 1 on DirectML), are refused with a named `dmljax.ValidationError` instead.
"""

import jax
import numpy as np
import pytest

import dmljax
from tests import reference

F, IDX = np.float32, np.int32


def z(*shape, dtype=F):
    return np.zeros(shape, dtype)


# name: (dmljax call, oracle call), both on the same NumPy arguments.
CASES = {
    "scatter, empty trailing axis": (
        lambda: (z(3, 0), z(2, 0, dtype=IDX), z(2, 0)),
        lambda x, i, u: dmljax.scatter(x, i, u),
        lambda x, i, u: reference.scatter(x, i, u, 0),
    ),
    "scatter axis=1, empty leading axis": (
        lambda: (z(0, 3), z(0, 2, dtype=IDX), z(0, 2)),
        lambda x, i, u: dmljax.scatter(x, i, u, axis=1),
        lambda x, i, u: reference.scatter(x, i, u, 1),
    ),
    "scatter, no indices": (
        lambda: (np.ones((3, 4), F), z(0, 4, dtype=IDX), z(0, 4)),
        lambda x, i, u: dmljax.scatter(x, i, u),
        lambda x, i, u: reference.scatter(x, i, u, 0),
    ),
    **{
        f"scatter reduction={r}, empty trailing axis": (
            lambda: (z(3, 0), z(2, 0, dtype=IDX), z(2, 0)),
            lambda x, i, u, r=r: dmljax.scatter(x, i, u, reduction=r),
            lambda x, i, u, r=r: reference.scatter_elements(x, i, u, 0, r),
        )
        for r in ("add", "mul", "max", "min")
    },
    "scatter reduction=add, no indices": (
        lambda: (np.ones((3, 4), F), z(0, 4, dtype=IDX), z(0, 4)),
        lambda x, i, u: dmljax.scatter(x, i, u, reduction="add"),
        lambda x, i, u: reference.scatter_elements(x, i, u, 0, "add"),
    ),
    "gather, empty trailing axis": (
        lambda: (z(3, 0), np.array([2, 0], IDX)),
        lambda x, i: dmljax.gather(x, i, axis=0),
        lambda x, i: reference.gather(x, i, 0),
    ),
    "gather, no indices": (
        lambda: (np.ones((3, 4), F), z(0, dtype=IDX)),
        lambda x, i: dmljax.gather(x, i, axis=0),
        lambda x, i: reference.gather(x, i, 0),
    ),
    "gather_elements, empty trailing axis": (
        lambda: (z(3, 0), z(2, 0, dtype=IDX)),
        lambda x, i: dmljax.gather_elements(x, i, axis=0),
        lambda x, i: reference.gather_elements(x, i, 0),
    ),
    "gather_nd, empty slices": (
        lambda: (z(3, 0), np.array([[2], [1]], IDX)),
        lambda x, i: dmljax.gather_nd(x, i),
        lambda x, i: reference.gather_nd(x, i),
    ),
    "gather_nd, no tuples": (
        lambda: (np.ones((3, 4), F), z(0, 1, dtype=IDX)),
        lambda x, i: dmljax.gather_nd(x, i),
        lambda x, i: reference.gather_nd(x, i),
    ),
    **{
        f"scatter_nd reduction={r}, empty slices": (
            lambda: (z(3, 0), np.array([[2], [2]], IDX), z(2, 0)),
            lambda x, i, u, r=r: dmljax.scatter_nd(x, i, u, reduction=r),
            lambda x, i, u, r=r: reference.scatter_nd(x, i, u, r),
        )
        for r in ("none", "add", "mul", "max", "min")
    },
    "scatter_nd reduction=mul, no tuples": (
        lambda: (np.ones((3, 4), F), z(0, 1, dtype=IDX), z(0, 4)),
        lambda x, i, u: dmljax.scatter_nd(x, i, u, reduction="mul"),
        lambda x, i, u: reference.scatter_nd(x, i, u, "mul"),
    ),
}


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("name", CASES)
def test_empty_non_indexed_axes_compute_what_the_oracle_computes(name, jit):
    make, call, oracle = CASES[name]
    args = make()
    got = (jax.jit(call) if jit else call)(*args)
    want = oracle(*args)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: dmljax.gather(z(0, 3), z(0, dtype=IDX), axis=0), r"gather: data.shape\[0\] must be >= 1"),
        (lambda: dmljax.scatter(z(0, 3), z(0, 3, dtype=IDX), z(0, 3)), r"scatter: input.shape\[0\] must be >= 1"),
        (lambda: dmljax.slice(z(3, 0), (0, 0), (2, 0), (1, 1)), r"slice1: sizes\[1\] must be >= 1"),
        (lambda: dmljax.TensorDesc("float32", (3, 0)), r"TensorDesc: sizes\[1\] must be in \[1, 2\*\*32 - 1\]"),
    ],
    ids=["gather", "scatter", "slice1", "TensorDesc"],
)
def test_empty_indexed_axes_and_directml_descriptors_are_refused_by_name(call, match):
    with pytest.raises(dmljax.ValidationError, match=match):
        call()


def test_the_gradient_of_an_empty_scatter():
    x, i, u = z(3, 0), z(2, 0, dtype=IDX), z(2, 0)
    gx, gu = jax.grad(lambda x, u: dmljax.scatter(x, i, u, reduction="add").sum(), argnums=(0, 1))(x, u)
    assert gx.shape == (3, 0) and gu.shape == (2, 0)
