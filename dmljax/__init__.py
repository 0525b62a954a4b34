"""dmljax: DirectML's tensor operators as pure, differentiable JAX functions."""

from dmljax._dtypes import DataType as DataType
from dmljax._errors import ValidationError as ValidationError
from dmljax._feature_levels import FeatureLevel as FeatureLevel
from dmljax._gather import gather as gather
from dmljax._gather import gather_elements as gather_elements
from dmljax._scatter import scatter as scatter
from dmljax._scatter import scatter_elements as scatter_elements
from dmljax._slice import slice1 as slice1
from dmljax._strided import read_tensor as read_tensor
from dmljax._strided import write_tensor as write_tensor
from dmljax._tensor_desc import TensorDesc as TensorDesc
from dmljax._tensor_desc import calc_buffer_tensor_size as calc_buffer_tensor_size
from dmljax._tensor_desc import packed_strides as packed_strides

__version__ = "0.1.0"

__all__ = [
    "DataType",
    "FeatureLevel",
    "TensorDesc",
    "ValidationError",
    "calc_buffer_tensor_size",
    "gather",
    "gather_elements",
    "packed_strides",
    "read_tensor",
    "scatter",
    "scatter_elements",
    "slice1",
    "write_tensor",
]
