"""dmljax: DirectML's tensor operators as pure, differentiable JAX functions.

The top level holds the array functions (one per DirectML operator, named by the rule of
docs/development.md), `IndexMode`, `ValidationError`, `config` and the buffer API
(`TensorDesc`, `read_tensor`, `write_tensor`, ...); `dmljax.descriptors` holds DirectML's
operator structs and `compile_operator`, `dmljax.random` the Philox keys and draws.

Examples:
  >>> import jax.numpy as jnp
  >>> import dmljax
  >>> dmljax.cumulative_prod(jnp.array([1.0, 2.0, 3.0, 4.0]))
  Array([ 1.,  2.,  6., 24.], dtype=float32)
  >>> dmljax.slice(jnp.arange(6), (0,), (6,), (-2,))
  Array([5, 3, 1], dtype=int32)
  >>> dmljax.random.split(dmljax.random.make_state(0)).shape
  (2, 6)
"""

import sys
import warnings
from typing import Any

from dmljax import descriptors as descriptors
from dmljax import random as random
from dmljax._buffers.strided import read_tensor as read_tensor
from dmljax._buffers.strided import write_tensor as write_tensor
from dmljax._buffers.tensor_desc import TensorDesc as TensorDesc
from dmljax._buffers.tensor_desc import calc_buffer_tensor_size as calc_buffer_tensor_size
from dmljax._buffers.tensor_desc import packed_strides as packed_strides
from dmljax._core.config import config as config
from dmljax._core.dtypes import DataType as DataType
from dmljax._core.errors import ValidationError as ValidationError
from dmljax._core.version import __version__ as __version__
from dmljax._ops.common.indices import IndexMode as IndexMode
from dmljax._ops.index.gather import gather as gather
from dmljax._ops.index.gather import gather_elements as gather_elements
from dmljax._ops.index.nd import gather_nd as gather_nd
from dmljax._ops.index.nd import scatter_nd as scatter_nd
from dmljax._ops.index.scatter import scatter as scatter
from dmljax._ops.index.scatter import scatter_elements as scatter_elements
from dmljax._ops.index.segment import segment_max as segment_max
from dmljax._ops.index.segment import segment_mean as segment_mean
from dmljax._ops.index.segment import segment_min as segment_min
from dmljax._ops.index.segment import segment_prod as segment_prod
from dmljax._ops.index.segment import segment_sum as segment_sum
from dmljax._ops.index.slice1 import slice1 as slice
from dmljax._ops.index.slice_grad import slice_grad as slice_grad
from dmljax._ops.movement.depth_space import depth_to_space as depth_to_space
from dmljax._ops.movement.depth_space import space_to_depth as space_to_depth
from dmljax._ops.movement.fill_value_sequence import fill_value_sequence as fill_value_sequence
from dmljax._ops.movement.generators import diagonal_matrix as diagonal_matrix
from dmljax._ops.movement.generators import fill_value_constant as fill_value_constant
from dmljax._ops.movement.join_split import join as concatenate
from dmljax._ops.movement.join_split import split_tensor as split_tensor
from dmljax._ops.movement.one_hot import one_hot as one_hot
from dmljax._ops.movement.padding import pad as pad
from dmljax._ops.movement.reverse_subsequences import reverse_subsequences as reverse_subsequences
from dmljax._ops.movement.tile import tile as tile
from dmljax._ops.ordered.cumulative import cumulative_product as cumulative_prod
from dmljax._ops.ordered.cumulative import cumulative_sum as cumulative_sum
from dmljax._ops.selection.arg_reduce import argmax as argmax
from dmljax._ops.selection.arg_reduce import argmin as argmin
from dmljax._ops.selection.nonzero import nonzero_coordinates as nonzero_coordinates
from dmljax._ops.selection.topk import top_k as top_k
from dmljax._ops.vision.fold import fold as fold
from dmljax._ops.vision.fold import unfold as unfold
from dmljax._ops.vision.pooling import max_pool_with_indices as max_pool_with_indices
from dmljax._ops.vision.pooling import max_unpool as max_unpool
from dmljax._ops.vision.resample import resample as resample
from dmljax._ops.vision.resample import resample_grad as resample_grad
from dmljax._transforms.deterministic import deterministic as deterministic

__all__ = [
    "DataType",
    "IndexMode",
    "TensorDesc",
    "ValidationError",
    "argmax",
    "argmin",
    "calc_buffer_tensor_size",
    "concatenate",
    "config",
    "cumulative_prod",
    "cumulative_sum",
    "depth_to_space",
    "deterministic",
    "diagonal_matrix",
    "fill_value_constant",
    "fill_value_sequence",
    "fold",
    "gather",
    "gather_elements",
    "gather_nd",
    "max_pool_with_indices",
    "max_unpool",
    "nonzero_coordinates",
    "one_hot",
    "packed_strides",
    "pad",
    "read_tensor",
    "resample",
    "resample_grad",
    "reverse_subsequences",
    "scatter",
    "scatter_elements",
    "scatter_nd",
    "segment_max",
    "segment_mean",
    "segment_min",
    "segment_prod",
    "segment_sum",
    "slice",
    "slice_grad",
    "space_to_depth",
    "split_tensor",
    "tile",
    "top_k",
    "unfold",
    "write_tensor",
]

# Old top-level name -> (module, name) it moved to in 0.2.0; each works, with a
# DeprecationWarning, until 0.3.0 (docs/development.md, "Names"). Not in __all__.
_DEPRECATED: dict[str, tuple[str, str]] = {
    "ArgMaxOperatorDesc": ("dmljax.descriptors", "ArgMaxOperatorDesc"),
    "ArgMinOperatorDesc": ("dmljax.descriptors", "ArgMinOperatorDesc"),
    "AxisDirection": ("dmljax.descriptors", "AxisDirection"),
    "CumulativeProductOperatorDesc": ("dmljax.descriptors", "CumulativeProductOperatorDesc"),
    "CumulativeSummationOperatorDesc": ("dmljax.descriptors", "CumulativeSummationOperatorDesc"),
    "DepthToSpaceOperatorDesc": ("dmljax.descriptors", "DepthToSpaceOperatorDesc"),
    "FeatureLevel": ("dmljax.descriptors", "FeatureLevel"),
    "FillValueSequenceOperatorDesc": ("dmljax.descriptors", "FillValueSequenceOperatorDesc"),
    "GatherElementsOperatorDesc": ("dmljax.descriptors", "GatherElementsOperatorDesc"),
    "GatherNDOperatorDesc": ("dmljax.descriptors", "GatherNDOperatorDesc"),
    "GatherOperatorDesc": ("dmljax.descriptors", "GatherOperatorDesc"),
    "JoinOperatorDesc": ("dmljax.descriptors", "JoinOperatorDesc"),
    "NonzeroCoordinatesOperatorDesc": ("dmljax.descriptors", "NonzeroCoordinatesOperatorDesc"),
    "OneHotOperatorDesc": ("dmljax.descriptors", "OneHotOperatorDesc"),
    "PaddingOperatorDesc": ("dmljax.descriptors", "PaddingOperatorDesc"),
    "RandomGeneratorOperatorDesc": ("dmljax.descriptors", "RandomGeneratorOperatorDesc"),
    "RandomGeneratorType": ("dmljax.descriptors", "RandomGeneratorType"),
    "ReverseSubsequencesOperatorDesc": ("dmljax.descriptors", "ReverseSubsequencesOperatorDesc"),
    "ScatterElementsOperatorDesc": ("dmljax.descriptors", "ScatterElementsOperatorDesc"),
    "ScatterNDOperatorDesc": ("dmljax.descriptors", "ScatterNDOperatorDesc"),
    "ScatterOperatorDesc": ("dmljax.descriptors", "ScatterOperatorDesc"),
    "Slice1OperatorDesc": ("dmljax.descriptors", "Slice1OperatorDesc"),
    "SliceGradOperatorDesc": ("dmljax.descriptors", "SliceGradOperatorDesc"),
    "SpaceToDepthOperatorDesc": ("dmljax.descriptors", "SpaceToDepthOperatorDesc"),
    "SplitOperatorDesc": ("dmljax.descriptors", "SplitOperatorDesc"),
    "TileOperatorDesc": ("dmljax.descriptors", "TileOperatorDesc"),
    "TopKOperatorDesc": ("dmljax.descriptors", "TopKOperatorDesc"),
    "advance": ("dmljax.random", "advance"),
    "bernoulli": ("dmljax.random", "bernoulli"),
    "compile_operator": ("dmljax.descriptors", "compile_operator"),
    "cumulative_product": ("dmljax", "cumulative_prod"),
    "dropout": ("dmljax.random", "dropout"),
    "fold_in": ("dmljax.random", "fold_in"),
    "join": ("dmljax", "concatenate"),
    "make_state": ("dmljax.random", "make_state"),
    "normal": ("dmljax.random", "normal"),
    "philox4x32_10": ("dmljax.random", "philox4x32_10"),
    "prng_impl": ("dmljax.random", "prng_impl"),
    "randint": ("dmljax.random", "randint"),
    "random_generator": ("dmljax.random", "random_generator"),
    "slice1": ("dmljax", "slice"),
    "split": ("dmljax.random", "split"),
    "state_from_tf_seed": ("dmljax.random", "state_from_tf_seed"),
    "uniform": ("dmljax.random", "uniform"),
}


def __getattr__(name: str) -> Any:
    """An old top-level name: the object at its new place, after a `DeprecationWarning`.

    Examples:
      >>> import warnings
      >>> import dmljax
      >>> with warnings.catch_warnings(record=True) as caught:
      ...     warnings.simplefilter("always")
      ...     key_split = dmljax.split
      >>> key_split is dmljax.random.split, str(caught[0].message)
      (True, 'dmljax.split is deprecated: use dmljax.random.split (the old name goes in 0.3.0)')
    """
    if name not in _DEPRECATED:
        raise AttributeError(f"module 'dmljax' has no attribute {name!r}")
    module, new = _DEPRECATED[name]
    message = f"dmljax.{name} is deprecated: use {module}.{new} (the old name goes in 0.3.0)"
    warnings.warn(message, DeprecationWarning, stacklevel=2)
    return getattr(sys.modules[module], new)
