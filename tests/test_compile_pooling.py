"""compile_operator for DML_MAX_POOLING2, DML_MAX_UNPOOLING, DML_UNFOLD and DML_FOLD.

Strided layouts against the loop oracles (tests/reference.py), the optional indices output,
the feature-level tables and the rules between members.
"""

import jax.numpy as jnp
import numpy as np
import pytest

from dmljax import TensorDesc, ValidationError
from dmljax.descriptors import (
    FoldOperatorDesc,
    MaxPooling2OperatorDesc,
    MaxUnpoolingOperatorDesc,
    UnfoldOperatorDesc,
    compile_operator,
)
from tests import reference
from tests.test_compile_operator import check_output, random_layout, to_buffer

WINDOW = dict(strides=(2, 1), window_size=(3, 2), start_padding=(1, 0), end_padding=(1, 1), dilations=(1, 2))


def _pool_desc(x, out, indices):
    return MaxPooling2OperatorDesc(x, out, indices, **WINDOW)


@pytest.mark.parametrize("seed", range(3))
def test_max_pooling2_in_strided_layouts_matches_the_oracle(seed):
    rng = np.random.default_rng(seed)
    value = np.round(rng.standard_normal((2, 3, 7, 6)) * 2).astype(np.float32)  # ties
    want_v, want_i = reference.max_pool(value, (3, 2), (2, 1), (1, 2), (1, 0), (1, 1))
    x = random_layout(rng, "float32", value.shape)
    out = random_layout(rng, "float32", want_v.shape)
    idx = random_layout(rng, "uint32", want_v.shape)
    v, i = compile_operator(_pool_desc(x, out, idx), "3.0")(jnp.asarray(to_buffer(x, value)))
    check_output(out, v, want_v)
    check_output(idx, i, want_i)
    only = compile_operator(_pool_desc(x, out, None), "2.1")(jnp.asarray(to_buffer(x, value)))
    check_output(out, only, want_v)


def test_max_unpooling_and_fold_unfold_in_strided_layouts():
    rng = np.random.default_rng(5)
    value = rng.standard_normal((1, 2, 3, 3)).astype(np.float32)
    indices = rng.permutation(2 * 5 * 5)[: value.size].reshape(value.shape).astype(np.uint32)
    x, i = random_layout(rng, "float32", value.shape), random_layout(rng, "uint32", value.shape)
    out = random_layout(rng, "float32", (1, 2, 5, 5))
    got = compile_operator(MaxUnpoolingOperatorDesc(x, i, out))(
        jnp.asarray(to_buffer(x, value)), jnp.asarray(to_buffer(i, indices))
    )
    check_output(out, got, reference.max_unpool(value, indices, (1, 2, 5, 5)))

    image = rng.standard_normal((2, 3, 5, 6)).astype(np.float32)
    args = dict(window_sizes=(2, 3), strides=(1, 2), dilations=(2, 1), start_padding=(1, 1), end_padding=(0, 1))
    cols = reference.unfold(image, (2, 3), (1, 2), (2, 1), (1, 1), (0, 1))
    xi, xc = random_layout(rng, "float32", image.shape), random_layout(rng, "float32", cols.shape)
    unfolded = compile_operator(UnfoldOperatorDesc(xi, xc, **args), "6.4")(jnp.asarray(to_buffer(xi, image)))
    check_output(xc, unfolded, cols)
    c = (rng.standard_normal(cols.shape) * 10.0 ** rng.integers(-5, 6, cols.shape)).astype(np.float32)
    folded = compile_operator(FoldOperatorDesc(xc, xi, **args), "6.4")(jnp.asarray(to_buffer(xc, c)))
    want = reference.fold(c, (5, 6), (2, 3), (1, 2), (2, 1), (1, 1), (0, 1))
    assert np.asarray(reference.read_tensor(np.asarray(folded), xi.sizes, xi.strides)).tobytes() == want.tobytes()


def test_tables_and_rules():
    x, out = TensorDesc("float32", (1, 1, 5, 5)), TensorDesc("float32", (1, 1, 3, 4))
    idx = TensorDesc("uint32", (1, 1, 3, 4))
    compile_operator(_pool_desc(x, out, idx), "2.1")
    with pytest.raises(ValidationError, match="input_tensor.dtype"):
        compile_operator(_pool_desc(TensorDesc("int8", (1, 1, 5, 5)), TensorDesc("int8", (1, 1, 3, 4)), idx), "2.1")
    compile_operator(_pool_desc(TensorDesc("int8", (1, 1, 5, 5)), TensorDesc("int8", (1, 1, 3, 4)), idx), "3.0")
    with pytest.raises(ValidationError, match="output_tensor.sizes"):
        compile_operator(_pool_desc(x, TensorDesc("float32", (1, 1, 2, 4)), None))
    with pytest.raises(ValidationError, match="output_indices_tensor.dtype"):
        compile_operator(_pool_desc(x, out, TensorDesc("int32", (1, 1, 3, 4))))
    with pytest.raises(ValidationError, match="window_size"):
        compile_operator(MaxPooling2OperatorDesc(x, out, None, (1, 1), (2,), (0, 0), (0, 0), (1, 1)))
    cols, image = TensorDesc("float32", (1, 4, 16)), TensorDesc("float32", (1, 1, 5, 5))
    args = dict(window_sizes=(2, 2), strides=(1, 1), dilations=(1, 1), start_padding=(0, 0), end_padding=(0, 0))
    with pytest.raises(ValidationError, match="introduced in DML_FEATURE_LEVEL_6_4"):
        compile_operator(FoldOperatorDesc(cols, image, **args), "6.3")
    with pytest.raises(ValidationError, match=r"cols.shape\[2\]"):
        compile_operator(FoldOperatorDesc(TensorDesc("float32", (1, 4, 15)), image, **args), "6.4")
    with pytest.raises(ValidationError, match="output_tensor.sizes"):
        compile_operator(UnfoldOperatorDesc(image, TensorDesc("float32", (1, 4, 15)), **args), "6.4")
    with pytest.raises(ValidationError, match="indices_tensor.sizes"):
        compile_operator(MaxUnpoolingOperatorDesc(x, TensorDesc("uint32", (1, 1, 5, 4)), x))


def test_the_pooling_pages_levels():
    """MAX_UNPOOLING came in 3.0 and both pages add the integer types (UINT64 indices) in 5.0."""
    x, out = TensorDesc("float32", (1, 1, 2, 2)), TensorDesc("float32", (1, 1, 4, 4))
    idx = TensorDesc("uint32", (1, 1, 2, 2))
    compile_operator(MaxUnpoolingOperatorDesc(x, idx, out), "3.0")
    with pytest.raises(ValidationError, match=r"feature_level must be at least 3.0.*DML_FEATURE_LEVEL_3_0"):
        compile_operator(MaxUnpoolingOperatorDesc(x, idx, out), "2.1")
    xi, oi = TensorDesc("int32", (1, 1, 2, 2)), TensorDesc("int32", (1, 1, 4, 4))
    values = np.array([7, -3, 5, 2], np.int32)
    got = compile_operator(MaxUnpoolingOperatorDesc(xi, idx, oi), "5.0")(
        jnp.asarray(values), jnp.asarray(np.array([0, 3, 9, 15], np.uint32))
    )
    want = np.zeros(16, np.int32)
    want[[0, 3, 9, 15]] = values
    check_output(oi, got, want.reshape(1, 1, 4, 4))
    with pytest.raises(ValidationError, match=r"input_tensor.dtype must be .* at feature level 4.1"):
        compile_operator(MaxUnpoolingOperatorDesc(xi, idx, oi), "4.1")
    with pytest.raises(ValidationError, match=r"indices_tensor.dtype must be .* at feature level 4.1"):
        compile_operator(MaxUnpoolingOperatorDesc(x, TensorDesc("uint64", (1, 1, 2, 2)), out), "4.1")
    compile_operator(MaxUnpoolingOperatorDesc(x, TensorDesc("uint64", (1, 1, 2, 2)), out), "5.0")
    value = np.arange(-12, 18, dtype=np.int32).reshape(1, 1, 5, 6) * 7 % 23
    want_v, want_i = reference.max_pool(value, (3, 2), (2, 1), (1, 2), (1, 0), (1, 1))
    p, q = TensorDesc("int32", value.shape), TensorDesc("int32", want_v.shape)
    v, i = compile_operator(_pool_desc(p, q, TensorDesc("uint32", want_v.shape)), "5.0")(jnp.asarray(value.ravel()))
    check_output(q, v, want_v)
    check_output(TensorDesc("uint32", want_v.shape), i, want_i)
    with pytest.raises(ValidationError, match=r"input_tensor.dtype must be .* at feature level 4.1"):
        compile_operator(_pool_desc(p, q, None), "4.1")
    f, g = TensorDesc("float32", value.shape), TensorDesc("float32", want_v.shape)
    compile_operator(_pool_desc(f, g, TensorDesc("uint64", want_v.shape)), "5.0")
    with pytest.raises(ValidationError, match=r"output_indices_tensor.dtype must be .* at feature level 4.1"):
        compile_operator(_pool_desc(f, g, TensorDesc("uint64", want_v.shape)), "4.1")
