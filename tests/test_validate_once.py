"""The descriptor path validates once: adapters call the array functions, not the public ones.

`compile_operator` validates the descriptor (`dmljax._descriptors.validate`); its adapters
then call each operator's ``*_validated`` function, which must trace exactly what the public
function traces on the same (traced) arguments, without re-running the argument checks.
``scripts/count_calls.py`` prints the whole call counts.
"""

import collections
import functools
import os
import sys

import jax
import numpy as np
import pytest

import dmljax
from dmljax import TensorDesc
from dmljax._descriptors.registry import lookup
from dmljax._ops.index.gather import gather_elements_validated, gather_validated
from dmljax._ops.index.nd import gather_nd_validated, scatter_nd_validated
from dmljax._ops.index.scatter import scatter_validated
from dmljax._ops.index.slice1 import slice1_validated
from dmljax._ops.movement.one_hot import one_hot_validated
from dmljax._ops.ordered.cumulative import cumulative_product_validated, cumulative_sum_validated
from dmljax._ops.selection.arg_reduce import argmax_validated, argmin_validated
from dmljax._ops.selection.nonzero import nonzero_coordinates_validated
from dmljax._ops.selection.topk import top_k_validated
from dmljax._random.generator import random_generator_validated
from dmljax.descriptors import (
    ArgMaxOperatorDesc,
    ArgMinOperatorDesc,
    AxisDirection,
    CumulativeProductOperatorDesc,
    CumulativeSummationOperatorDesc,
    GatherElementsOperatorDesc,
    GatherNDOperatorDesc,
    GatherOperatorDesc,
    NonzeroCoordinatesOperatorDesc,
    OneHotOperatorDesc,
    RandomGeneratorOperatorDesc,
    ScatterNDOperatorDesc,
    ScatterOperatorDesc,
    Slice1OperatorDesc,
    TopKOperatorDesc,
    compile_operator,
)

F32, U32, I32 = np.dtype("float32"), np.dtype("uint32"), np.dtype("int32")
DEC = AxisDirection.DECREASING


def _spec(shape, dtype):
    return jax.ShapeDtypeStruct(shape, dtype)


# (public call, validated call, argument specs): the validated twin on the public defaults.
TWINS = {
    "scatter": (
        lambda x, i, u: dmljax.scatter(x, i, u, 1),
        lambda x, i, u: scatter_validated(x, i, u, 1),
        [_spec((3, 4), F32), _spec((3, 2), I32), _spec((3, 2), F32)],
    ),
    "gather": (
        lambda x, i: dmljax.gather(x, i, 1),
        lambda x, i: gather_validated(x, i, 1),
        [_spec((3, 4), F32), _spec((2, 5), U32)],
    ),
    "gather_elements": (
        lambda x, i: dmljax.gather_elements(x, i, 0),
        lambda x, i: gather_elements_validated(x, i, 0),
        [_spec((3, 4), F32), _spec((2, 4), I32)],
    ),
    "gather_nd": (
        lambda x, i: dmljax.gather_nd(x, i, 1),
        lambda x, i: gather_nd_validated(x, i, 1),
        [_spec((2, 3, 4), F32), _spec((2, 5, 2), U32)],
    ),
    "scatter_nd": (
        dmljax.scatter_nd,
        scatter_nd_validated,
        [_spec((3, 4), F32), _spec((2, 1), I32), _spec((2, 4), F32)],
    ),
    "slice1": (
        lambda x: dmljax.slice(x, [0, 1], [3, 3], [2, -1]),
        lambda x: slice1_validated(x, (0, 1), (3, 3), (2, -1), (2, 3)),
        [_spec((3, 4), F32)],
    ),
    "random_generator": (
        lambda s: dmljax.random.random_generator(s, (2, 5)),
        lambda s: random_generator_validated(s, (2, 5)),
        [_spec((1, 6), U32)],
    ),
    "cumulative_sum": (
        lambda x: dmljax.cumulative_sum(x, -1, exclusive=True),
        lambda x: cumulative_sum_validated(x, 1, False, True),
        [_spec((3, 4), F32)],
    ),
    "cumulative_product": (
        lambda x: dmljax.cumulative_prod(x, reverse=True),
        lambda x: cumulative_product_validated(x, 0, True, False),
        [_spec((3, 4), F32)],
    ),
    "top_k": (
        lambda x: dmljax.top_k(x, 2),
        lambda x: top_k_validated(x, 2, 1, True),
        [_spec((3, 4), F32)],
    ),
    "argmax": (
        lambda x: dmljax.argmax(x, [2, 0], keepdims=True),
        lambda x: argmax_validated(x, (0, 2), True, False),
        [_spec((2, 3, 4), F32)],
    ),
    "argmin": (
        lambda x: dmljax.argmin(x, select_last_index=True),
        lambda x: argmin_validated(x, (0, 1), False, True),
        [_spec((3, 4), F32)],
    ),
    "one_hot": (
        lambda i, v: dmljax.one_hot(i, 5, values=v, axis=0),
        lambda i, v: one_hot_validated(i, v, 5, 0),
        [_spec((3, 2), U32), _spec((2,), F32)],
    ),
    "nonzero_coordinates": (
        dmljax.nonzero_coordinates,
        nonzero_coordinates_validated,
        [_spec((3, 4), F32)],
    ),
}


@pytest.mark.parametrize("name", TWINS)
def test_validated_twin_traces_what_the_public_function_traces(name):
    public, validated, specs = TWINS[name]
    assert str(jax.make_jaxpr(validated)(*specs)) == str(jax.make_jaxpr(public)(*specs))


def _count_calls(fn, *args):
    """Calls of each dmljax function (``module:qualname``) while ``fn(*args)`` runs."""
    root = os.path.dirname(os.path.abspath(dmljax.__file__))
    calls = collections.Counter()

    def profile(frame, event, arg):
        if event == "call" and frame.f_code.co_filename.startswith(root):
            module = os.path.relpath(frame.f_code.co_filename, root)
            calls[f"{module}:{frame.f_code.co_qualname}"] += 1

    sys.setprofile(profile)
    try:
        fn(*args)
    finally:
        sys.setprofile(None)
    return calls


T = TensorDesc
_STATE = T("uint32", (1, 1, 1, 6))
DESCRIPTORS = {
    "scatter": ScatterOperatorDesc(T("float32", (5,)), T("uint32", (4,)), T("float32", (4,)), T("float32", (5,)), 0),
    "gather": GatherOperatorDesc(
        T("float32", (1, 1, 4, 3)), T("int32", (1, 1, 1, 2)), T("float32", (1, 1, 2, 3)), axis=2, index_dimensions=1
    ),
    "gather_elements": GatherElementsOperatorDesc(T("uint32", (3, 3)), T("uint32", (2, 3)), T("uint32", (2, 3)), 0),
    "gather_nd": GatherNDOperatorDesc(
        T("float32", (1, 1, 2, 2)), T("uint32", (1, 1, 2, 2)), T("float32", (1, 1, 1, 2)), 2, 2
    ),
    "scatter_nd": ScatterNDOperatorDesc(
        T("float32", (1, 1, 2, 2)),
        T("uint32", (1, 1, 2, 1)),
        T("float32", (1, 1, 2, 2)),
        T("float32", (1, 1, 2, 2)),
        2,
        2,
    ),
    "slice1": Slice1OperatorDesc(T("float32", (1, 4)), T("float32", (1, 2)), (0, 0), (1, 4), (1, 2)),
    "random_generator": RandomGeneratorOperatorDesc(_STATE, T("uint32", (2, 4)), _STATE),
    "cumulative_summation": CumulativeSummationOperatorDesc(
        T("float32", (1, 1, 2, 3)), T("float32", (1, 1, 2, 3)), 3, DEC, True
    ),
    "cumulative_product": CumulativeProductOperatorDesc(T("float32", (2, 3)), T("float32", (2, 3)), 0),
    "top_k": TopKOperatorDesc(T("float32", (2, 3)), T("float32", (2, 2)), T("uint32", (2, 2)), 1, 2),
    "argmax": ArgMaxOperatorDesc(T("float32", (2, 3, 4)), T("uint32", (1, 3, 1)), (2, 0)),
    "argmin": ArgMinOperatorDesc(T("float32", (2, 3)), T("int32", (2, 1)), (1,), DEC),
    "one_hot": OneHotOperatorDesc(T("uint32", (3, 1)), T("float32", (1, 2)), T("float32", (3, 4)), 1),
    "nonzero_coordinates": NonzeroCoordinatesOperatorDesc(
        T("float32", (1, 1, 2, 3)), T("uint32", (1, 1, 1, 1)), T("uint32", (1, 1, 6, 4))
    ),
}

# Argument checks of the public functions (write_tensor: the aliasing check): none may run on the descriptor path.
PUBLIC_CHECKS = (
    "_ops/common/indices.py:as_data",
    "_ops/common/indices.py:as_indices",
    "_ops/common/indices.py:check_axis",
    "_ops/common/indices.py:resolve_mode",
    "_ops/common/index_checks.py:prepare_indices",
    "_random/generator.py:check_state",
    "_ops/common/indices.py:check_rank",
    "_ops/selection/order_keys.py:check_ordered",
    "_ops/ordered/cumulative.py:_cumulative",
    "_ops/selection/topk.py:_check_k",
    "_ops/selection/arg_reduce.py:_arg_reduce",
    "_ops/selection/arg_reduce.py:_check_axes",
    "_ops/movement/one_hot.py:_check_depth",
    "_buffers/strided.py:write_tensor",
)


@pytest.mark.parametrize("name", DESCRIPTORS)
def test_compile_operator_checks_once(name):
    desc = DESCRIPTORS[name]
    inputs = [getattr(desc, m) for m in lookup(desc).inputs]
    buffers = [np.zeros(t.buffer_elements, t.dtype.dtype) for t in inputs]
    calls = _count_calls(lambda: compile_operator(desc)(*buffers))
    assert calls["_descriptors/registry.py:lookup"] == 1
    assert calls["_descriptors/validate.py:validate_operator_desc"] == 1
    assert calls["_buffers/strided.py:check_buffer"] == len(buffers)  # the buffers, which arrive at the call
    assert {check: calls[check] for check in PUBLIC_CHECKS} == dict.fromkeys(PUBLIC_CHECKS, 0)


# The argument checks of the segment reductions (`dmljax._ops.index.segment`).
SEGMENT_CHECKS = (
    "_ops/common/indices.py:as_data",
    "_ops/common/indices.py:check_rank",
    "_ops/index/segment_ids.py:_as_ids",
    "_ops/index/segment_ids.py:_flag",
    "_ops/index/segment_ids.py:_policy",
    "_ops/index/segment_ids.py:_num_segments",
    "_ops/index/segment_ids.py:_check_ids",
)


@pytest.mark.parametrize("mode", [None, "checked"])
@pytest.mark.parametrize("traced", [False, True])
def test_segment_mean_validates_once(mode, traced):
    """segment_mean is a sum and a count: its arguments are checked as often as segment_sum's."""
    data, ids = np.ones((4, 3), np.float32), np.array([0, 2, 2, 1], np.int32)

    def call(fn, d, i):
        return fn(d, i, 3, mode=mode)

    def counts(fn):
        run = functools.partial(call, fn)
        return _count_calls(lambda: jax.make_jaxpr(run)(data, ids) if traced else run(data, ids))

    once = dict.fromkeys(SEGMENT_CHECKS, 1)
    once |= {"_ops/index/segment_ids.py:_flag": 2, "_ops/index/segment_ids.py:_check_ids": int(mode is not None)}
    mean, total = counts(dmljax.segment_mean), counts(dmljax.segment_sum)
    assert {c: total[c] for c in SEGMENT_CHECKS} == once
    assert {c: mean[c] for c in SEGMENT_CHECKS} == once
