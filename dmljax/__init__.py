"""dmljax: DirectML's tensor operators as pure, differentiable JAX functions."""

from dmljax._compile import compile_operator as compile_operator
from dmljax._dtypes import DataType as DataType
from dmljax._errors import ValidationError as ValidationError
from dmljax._feature_levels import FeatureLevel as FeatureLevel
from dmljax._operator_descs import GatherElementsOperatorDesc as GatherElementsOperatorDesc
from dmljax._operator_descs import GatherOperatorDesc as GatherOperatorDesc
from dmljax._operator_descs import RandomGeneratorOperatorDesc as RandomGeneratorOperatorDesc
from dmljax._operator_descs import RandomGeneratorType as RandomGeneratorType
from dmljax._operator_descs import ScatterElementsOperatorDesc as ScatterElementsOperatorDesc
from dmljax._operator_descs import ScatterOperatorDesc as ScatterOperatorDesc
from dmljax._operator_descs import Slice1OperatorDesc as Slice1OperatorDesc
from dmljax._strided import read_tensor as read_tensor
from dmljax._strided import write_tensor as write_tensor
from dmljax._tensor_desc import TensorDesc as TensorDesc
from dmljax._tensor_desc import calc_buffer_tensor_size as calc_buffer_tensor_size
from dmljax._tensor_desc import packed_strides as packed_strides

__version__ = "0.1.0"

__all__ = [
    "DataType",
    "FeatureLevel",
    "GatherElementsOperatorDesc",
    "GatherOperatorDesc",
    "RandomGeneratorOperatorDesc",
    "RandomGeneratorType",
    "ScatterElementsOperatorDesc",
    "ScatterOperatorDesc",
    "Slice1OperatorDesc",
    "TensorDesc",
    "ValidationError",
    "calc_buffer_tensor_size",
    "compile_operator",
    "packed_strides",
    "read_tensor",
    "write_tensor",
]
