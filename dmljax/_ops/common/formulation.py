"""The flat formulation of the element-wise gathers and scatters on one CPU device.

XLA CPU runs an element-wise scatter or gather with batching dimensions as a loop over an
``(N, rank)`` index array; the same operation on the flattened array at one-column flat
positions runs faster there (`dmljax._core.platform` says when and how a formulation is
chosen per platform; docs/design/per-platform-formulations.md has the figures).
`use_flat` says whether the flat formulation may be used; the positions are
`dmljax._ops.common.positions.flat_positions`.
"""

from __future__ import annotations

import math

from dmljax._core.config import config
from dmljax._core.platform import one_device_shape
from dmljax._ops.common.positions import FLAT_LIMIT

__all__ = ["use_flat"]


def use_flat(shape: tuple) -> bool:
    """Whether the flat formulation may be used for an array of ``shape`` (see the module doc).

    Examples:
      >>> use_flat((3, 4))  # one device in this process
      True
      >>> use_flat((12,)), use_flat((2**16, 2**16))
      (False, False)
    """
    if not config.flat_formulations:
        return False
    return len(shape) >= 2 and one_device_shape(shape) and math.prod(shape) < FLAT_LIMIT
