"""dmljax: DirectML's tensor operators as pure, differentiable JAX functions."""

from dmljax._buffers.strided import read_tensor as read_tensor
from dmljax._buffers.strided import write_tensor as write_tensor
from dmljax._buffers.tensor_desc import TensorDesc as TensorDesc
from dmljax._buffers.tensor_desc import calc_buffer_tensor_size as calc_buffer_tensor_size
from dmljax._buffers.tensor_desc import packed_strides as packed_strides
from dmljax._core.config import config as config
from dmljax._core.dtypes import DataType as DataType
from dmljax._core.errors import ValidationError as ValidationError
from dmljax._core.version import __version__ as __version__
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
from dmljax._descriptors.generators import DiagonalMatrix1OperatorDesc as DiagonalMatrix1OperatorDesc
from dmljax._descriptors.generators import DiagonalMatrixOperatorDesc as DiagonalMatrixOperatorDesc
from dmljax._descriptors.generators import FillValueConstantOperatorDesc as FillValueConstantOperatorDesc
from dmljax._descriptors.join_split import JoinOperatorDesc as JoinOperatorDesc
from dmljax._descriptors.join_split import SplitOperatorDesc as SplitOperatorDesc
from dmljax._descriptors.nd import GatherNDOperatorDesc as GatherNDOperatorDesc
from dmljax._descriptors.nd import ScatterNDOperatorDesc as ScatterNDOperatorDesc
from dmljax._descriptors.nonzero import NonzeroCoordinatesOperatorDesc as NonzeroCoordinatesOperatorDesc
from dmljax._descriptors.one_hot import OneHotOperatorDesc as OneHotOperatorDesc
from dmljax._descriptors.padding import PaddingOperatorDesc as PaddingOperatorDesc
from dmljax._descriptors.pooling import FoldOperatorDesc as FoldOperatorDesc
from dmljax._descriptors.pooling import MaxPooling2OperatorDesc as MaxPooling2OperatorDesc
from dmljax._descriptors.pooling import MaxUnpoolingOperatorDesc as MaxUnpoolingOperatorDesc
from dmljax._descriptors.pooling import UnfoldOperatorDesc as UnfoldOperatorDesc
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
from dmljax._ops.index.slice1 import slice1 as slice1
from dmljax._ops.index.slice_grad import slice_grad as slice_grad
from dmljax._ops.movement.depth_space import depth_to_space as depth_to_space
from dmljax._ops.movement.depth_space import space_to_depth as space_to_depth
from dmljax._ops.movement.fill_value_sequence import fill_value_sequence as fill_value_sequence
from dmljax._ops.movement.generators import diagonal_matrix as diagonal_matrix
from dmljax._ops.movement.generators import fill_value_constant as fill_value_constant
from dmljax._ops.movement.join_split import join as join
from dmljax._ops.movement.join_split import split_tensor as split_tensor
from dmljax._ops.movement.one_hot import one_hot as one_hot
from dmljax._ops.movement.padding import pad as pad
from dmljax._ops.movement.reverse_subsequences import reverse_subsequences as reverse_subsequences
from dmljax._ops.movement.tile import tile as tile
from dmljax._ops.ordered.cumulative import cumulative_product as cumulative_product
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
from dmljax._random.distributions import bernoulli as bernoulli
from dmljax._random.distributions import normal as normal
from dmljax._random.distributions import randint as randint
from dmljax._random.distributions import uniform as uniform
from dmljax._random.dropout import dropout as dropout
from dmljax._random.generator import make_state as make_state
from dmljax._random.generator import random_generator as random_generator
from dmljax._random.keys import advance as advance
from dmljax._random.keys import fold_in as fold_in
from dmljax._random.keys import split as split
from dmljax._random.philox import philox4x32_10 as philox4x32_10
from dmljax._random.prng_impl import prng_impl as prng_impl
from dmljax._random.tf_seed import state_from_tf_seed as state_from_tf_seed

__all__ = [
    "ArgMaxOperatorDesc",
    "ArgMinOperatorDesc",
    "AxisDirection",
    "CumulativeProductOperatorDesc",
    "CumulativeSummationOperatorDesc",
    "DataType",
    "DepthToSpaceOperatorDesc",
    "DiagonalMatrix1OperatorDesc",
    "DiagonalMatrixOperatorDesc",
    "FeatureLevel",
    "FillValueConstantOperatorDesc",
    "FillValueSequenceOperatorDesc",
    "FoldOperatorDesc",
    "GatherElementsOperatorDesc",
    "GatherNDOperatorDesc",
    "GatherOperatorDesc",
    "IndexMode",
    "InterpolationMode",
    "JoinOperatorDesc",
    "MaxPooling2OperatorDesc",
    "MaxUnpoolingOperatorDesc",
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
    "TensorDesc",
    "TileOperatorDesc",
    "TopKOperatorDesc",
    "UnfoldOperatorDesc",
    "ValidationError",
    "advance",
    "argmax",
    "argmin",
    "bernoulli",
    "calc_buffer_tensor_size",
    "compile_operator",
    "config",
    "cumulative_product",
    "cumulative_sum",
    "depth_to_space",
    "diagonal_matrix",
    "dropout",
    "fill_value_constant",
    "fill_value_sequence",
    "fold",
    "fold_in",
    "gather",
    "gather_elements",
    "gather_nd",
    "join",
    "make_state",
    "max_pool_with_indices",
    "max_unpool",
    "nonzero_coordinates",
    "normal",
    "one_hot",
    "packed_strides",
    "pad",
    "philox4x32_10",
    "prng_impl",
    "randint",
    "random_generator",
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
    "slice1",
    "slice_grad",
    "space_to_depth",
    "split",
    "split_tensor",
    "state_from_tf_seed",
    "tile",
    "top_k",
    "unfold",
    "uniform",
    "write_tensor",
]
