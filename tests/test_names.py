"""The public names: the top level's size, the two namespaces, and the deprecated aliases of 0.2.0.

docs/development.md ("Names") gives the rule. Each old top-level name must still give
the object it gave before (so its old behaviour, checked here on one call each), with a
`DeprecationWarning` that names the new place, and must stay out of ``__all__``.
"""

import warnings

import jax.numpy as jnp
import numpy as np
import pytest

import dmljax
import dmljax.descriptors
import dmljax.random
from dmljax._descriptors.compile import compile_operator
from dmljax._descriptors.registry import registered
from dmljax._descriptors.slice1 import Slice1OperatorDesc
from dmljax._ops.index.slice1 import slice1
from dmljax._ops.movement.join_split import join
from dmljax._ops.ordered.cumulative import cumulative_product
from dmljax._random import keys

# Each renamed or moved name of 0.1.0 -> where it lives from 0.2.0.
# The descriptor names of dmljax.__all__ before 0.2.0 (commit 3bbe2c8), which keep deprecated aliases.
RELEASED_0_1 = frozenset(
    """ArgMaxOperatorDesc ArgMinOperatorDesc AxisDirection CumulativeProductOperatorDesc
    CumulativeSummationOperatorDesc DepthToSpaceOperatorDesc FeatureLevel FillValueSequenceOperatorDesc
    GatherElementsOperatorDesc GatherNDOperatorDesc GatherOperatorDesc JoinOperatorDesc
    NonzeroCoordinatesOperatorDesc OneHotOperatorDesc PaddingOperatorDesc RandomGeneratorOperatorDesc
    RandomGeneratorType ReverseSubsequencesOperatorDesc ScatterElementsOperatorDesc ScatterNDOperatorDesc
    ScatterOperatorDesc Slice1OperatorDesc SliceGradOperatorDesc SpaceToDepthOperatorDesc SplitOperatorDesc
    TileOperatorDesc TopKOperatorDesc compile_operator""".split()
)
RENAMED = {
    "cumulative_product": "dmljax.cumulative_prod",
    "join": "dmljax.concatenate",
    "slice1": "dmljax.slice",
    **{name: f"dmljax.random.{name}" for name in dmljax.random.__all__},
    # 0.1.0's top-level descriptor names (structs new in 0.2.0 were never top level).
    **{name: f"dmljax.descriptors.{name}" for name in dmljax.descriptors.__all__ if name in RELEASED_0_1},
}


def _old(name):
    with pytest.warns(DeprecationWarning) as caught:
        value = getattr(dmljax, name)
    return value, [str(w.message) for w in caught]


def test_the_top_level_holds_at_most_60_names_and_no_struct():
    assert len(dmljax.__all__) <= 60
    assert not [name for name in dmljax.__all__ if name.endswith("OperatorDesc")]
    assert all(hasattr(dmljax, name) for name in dmljax.__all__)


def test_the_namespaces_hold_every_struct_and_the_random_functions():
    names = [name for name in dmljax.descriptors.__all__ if name.endswith("OperatorDesc")]
    assert {getattr(dmljax.descriptors, name) for name in names} == {operator.desc for operator in registered()}
    assert "compile_operator" in dmljax.descriptors.__all__
    assert {"split", "fold_in", "uniform", "normal", "bernoulli", "randint"} <= set(dmljax.random.__all__)
    assert not set(dmljax.__all__) & (set(dmljax.random.__all__) | set(dmljax.descriptors.__all__))


@pytest.mark.parametrize("old, new", sorted(RENAMED.items()))
def test_an_old_name_gives_the_same_object_with_a_warning_naming_the_new_place(old, new):
    module, _, name = new.rpartition(".")
    value, messages = _old(old)
    assert value is getattr(__import__(module, fromlist=[name]), name)
    assert messages == [f"dmljax.{old} is deprecated: use {new} (the old name goes in 0.3.0)"]
    assert old not in dmljax.__all__


def test_from_import_of_an_old_name_warns_too():
    with pytest.warns(DeprecationWarning, match=r"use dmljax\.random\.make_state"):
        from dmljax import make_state  # noqa: F401


def test_the_aliases_keep_their_old_behaviour():
    """One call each: the old name computes what 0.1.0's did (the private function it named)."""
    state = dmljax.random.make_state(7)
    old_split, _ = _old("split")
    assert old_split is keys.split  # the key split, not the tensor split (its name waits for 0.3.0)
    np.testing.assert_array_equal(old_split(state, 3), keys.split(state, 3))
    assert old_split(state).shape == (2, 6) and old_split is not dmljax.split_tensor
    x = jnp.array([1.0, 2.0, 3.0, 4.0])
    old_cumprod, _ = _old("cumulative_product")
    assert old_cumprod is cumulative_product
    np.testing.assert_array_equal(old_cumprod(x), [1.0, 2.0, 6.0, 24.0])
    old_slice1, _ = _old("slice1")
    assert old_slice1 is slice1
    np.testing.assert_array_equal(old_slice1(jnp.arange(6), [0], [6], [-2]), [5, 3, 1])
    old_join, _ = _old("join")
    assert old_join is join
    np.testing.assert_array_equal(old_join([x[:1], x[1:]], 0), x)
    old_desc, _ = _old("Slice1OperatorDesc")
    old_compile, _ = _old("compile_operator")
    assert old_desc is Slice1OperatorDesc and old_compile is compile_operator
    desc = old_desc(dmljax.TensorDesc("float32", (4,)), dmljax.TensorDesc("float32", (2,)), (0,), (4,), (2,))
    np.testing.assert_array_equal(old_compile(desc)(x), [1.0, 3.0])


def test_an_unknown_name_is_an_attribute_error_and_warns_nothing():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(AttributeError, match="no attribute 'cumulative_products'"):
            _ = dmljax.cumulative_products
        assert dmljax.concatenate is join and dmljax.slice is slice1 and dmljax.cumulative_prod is cumulative_product
