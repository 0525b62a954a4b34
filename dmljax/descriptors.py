"""DirectML's operator structs, their enums and feature levels, and `compile_operator`.

The descriptor layer: a struct (``*OperatorDesc``, DirectML's ``DML_*_OPERATOR_DESC``
with its members in snake_case) names its tensors by `dmljax.TensorDesc` (a flat
buffer's sizes, strides and type); `compile_operator` validates the struct for a
`FeatureLevel` once and returns the function from input buffers to output buffers. The
buffer API itself (`dmljax.TensorDesc`, `dmljax.read_tensor`, `dmljax.write_tensor`,
`dmljax.calc_buffer_tensor_size`, `dmljax.packed_strides`) stays at the top level, beside
the array functions it feeds.

Examples:
  >>> import jax.numpy as jnp
  >>> import dmljax
  >>> from dmljax.descriptors import Slice1OperatorDesc, compile_operator
  >>> desc = Slice1OperatorDesc(
  ...     input_tensor=dmljax.TensorDesc("float32", (4,)),
  ...     output_tensor=dmljax.TensorDesc("float32", (2,)),
  ...     input_window_offsets=(0,),
  ...     input_window_sizes=(4,),
  ...     input_window_strides=(-2,),
  ... )
  >>> compile_operator(desc)(jnp.arange(4.0))
  Array([3., 1.], dtype=float32)
"""

from dmljax._descriptors.axis_direction import AxisDirection as AxisDirection
from dmljax._descriptors.compile import compile_operator as compile_operator
from dmljax._descriptors.cumulative import CumulativeProductOperatorDesc as CumulativeProductOperatorDesc
from dmljax._descriptors.cumulative import CumulativeSummationOperatorDesc as CumulativeSummationOperatorDesc
from dmljax._descriptors.depth_space import DepthToSpaceOperatorDesc as DepthToSpaceOperatorDesc
from dmljax._descriptors.depth_space import SpaceToDepthOperatorDesc as SpaceToDepthOperatorDesc
from dmljax._descriptors.feature_levels import FeatureLevel as FeatureLevel
from dmljax._descriptors.fill_value_sequence import FillValueSequenceOperatorDesc as FillValueSequenceOperatorDesc
from dmljax._descriptors.gather import GatherOperatorDesc as GatherOperatorDesc
from dmljax._descriptors.gather_elements import GatherElementsOperatorDesc as GatherElementsOperatorDesc
from dmljax._descriptors.join_split import JoinOperatorDesc as JoinOperatorDesc
from dmljax._descriptors.join_split import SplitOperatorDesc as SplitOperatorDesc
from dmljax._descriptors.nd import GatherNDOperatorDesc as GatherNDOperatorDesc
from dmljax._descriptors.nd import ScatterNDOperatorDesc as ScatterNDOperatorDesc
from dmljax._descriptors.nonzero import NonzeroCoordinatesOperatorDesc as NonzeroCoordinatesOperatorDesc
from dmljax._descriptors.one_hot import OneHotOperatorDesc as OneHotOperatorDesc
from dmljax._descriptors.padding import PaddingOperatorDesc as PaddingOperatorDesc
from dmljax._descriptors.random_generator import RandomGeneratorOperatorDesc as RandomGeneratorOperatorDesc
from dmljax._descriptors.random_generator import RandomGeneratorType as RandomGeneratorType
from dmljax._descriptors.resample import InterpolationMode as InterpolationMode
from dmljax._descriptors.resample import Resample1OperatorDesc as Resample1OperatorDesc
from dmljax._descriptors.resample import Resample2OperatorDesc as Resample2OperatorDesc
from dmljax._descriptors.resample import Resample3OperatorDesc as Resample3OperatorDesc
from dmljax._descriptors.resample import ResampleGrad1OperatorDesc as ResampleGrad1OperatorDesc
from dmljax._descriptors.resample import ResampleGradOperatorDesc as ResampleGradOperatorDesc
from dmljax._descriptors.resample import ResampleOperatorDesc as ResampleOperatorDesc
from dmljax._descriptors.reverse_subsequences import ReverseSubsequencesOperatorDesc as ReverseSubsequencesOperatorDesc
from dmljax._descriptors.scatter import ScatterElementsOperatorDesc as ScatterElementsOperatorDesc
from dmljax._descriptors.scatter import ScatterOperatorDesc as ScatterOperatorDesc
from dmljax._descriptors.slice1 import Slice1OperatorDesc as Slice1OperatorDesc
from dmljax._descriptors.slice_grad import SliceGradOperatorDesc as SliceGradOperatorDesc
from dmljax._descriptors.tile import TileOperatorDesc as TileOperatorDesc
from dmljax._descriptors.topk import ArgMaxOperatorDesc as ArgMaxOperatorDesc
from dmljax._descriptors.topk import ArgMinOperatorDesc as ArgMinOperatorDesc
from dmljax._descriptors.topk import TopKOperatorDesc as TopKOperatorDesc

__all__ = [
    "ArgMaxOperatorDesc",
    "ArgMinOperatorDesc",
    "AxisDirection",
    "CumulativeProductOperatorDesc",
    "CumulativeSummationOperatorDesc",
    "DepthToSpaceOperatorDesc",
    "FeatureLevel",
    "FillValueSequenceOperatorDesc",
    "GatherElementsOperatorDesc",
    "GatherNDOperatorDesc",
    "GatherOperatorDesc",
    "InterpolationMode",
    "JoinOperatorDesc",
    "NonzeroCoordinatesOperatorDesc",
    "OneHotOperatorDesc",
    "PaddingOperatorDesc",
    "RandomGeneratorOperatorDesc",
    "RandomGeneratorType",
    "Resample1OperatorDesc",
    "Resample2OperatorDesc",
    "Resample3OperatorDesc",
    "ResampleGrad1OperatorDesc",
    "ResampleGradOperatorDesc",
    "ResampleOperatorDesc",
    "ReverseSubsequencesOperatorDesc",
    "ScatterElementsOperatorDesc",
    "ScatterNDOperatorDesc",
    "ScatterOperatorDesc",
    "Slice1OperatorDesc",
    "SliceGradOperatorDesc",
    "SpaceToDepthOperatorDesc",
    "SplitOperatorDesc",
    "TileOperatorDesc",
    "TopKOperatorDesc",
    "compile_operator",
]
