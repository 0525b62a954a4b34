"""Benchmark cases for `compile_operator`: the descriptor layer's cost over the array function.

A DirectML-style GatherElements over an NHWC input buffer, written to a packed output
buffer, against the same work written by hand in ``jnp`` (reshape + transpose +
``take_along_axis`` + reshape): the adapter (`read_tensor` -> op -> `write_tensor`)
should add nothing that XLA does not fuse away.
"""

from __future__ import annotations

from collections.abc import Sequence

import jax
import jax.numpy as jnp
import numpy as np

import dmljax
from dmljax.bench._harness import Case, sized

__all__ = ["cases"]


def cases(sizes_bytes: Sequence[int]) -> list[Case]:
    """One case per size: float32 NHWC data of about ``size`` bytes, uint32 indices along C."""
    out = []
    for size in sizes_bytes:
        channels, width = 8, 64
        height = max(1, size // 4 // (channels * width))
        sizes = (1, channels, height, width)
        nhwc = dmljax.TensorDesc("float32", sizes, dmljax.packed_strides(sizes, "NHWC"))
        index_desc = dmljax.TensorDesc("uint32", sizes)
        output = dmljax.TensorDesc("float32", sizes)
        op = dmljax.descriptors.compile_operator(
            dmljax.descriptors.GatherElementsOperatorDesc(nhwc, index_desc, output, axis=1)
        )
        rng = np.random.default_rng(size)
        data = jnp.asarray(rng.standard_normal(nhwc.min_buffer_elements, dtype=np.float32))
        indices = jnp.asarray(rng.integers(0, channels, index_desc.element_count, dtype=np.uint32))

        @jax.jit
        def hand(data, indices, sizes=sizes):
            n, c, h, w = sizes
            nchw = data.reshape(n, h, w, c).transpose(0, 3, 1, 2)
            picked = jnp.take_along_axis(nchw, indices.reshape(sizes), axis=1, mode="clip")
            return picked.reshape(-1)

        contenders = {
            "dmljax": lambda op=op, d=data, i=indices: op(d, i),
            "jnp": lambda hand=hand, d=data, i=indices: hand(d, i),
        }
        nbytes = 3 * 4 * output.element_count
        name = f"GatherElements NHWC->packed {sizes}"
        out += sized([Case("compile_operator", name, nbytes, contenders, "jnp")], 4 * output.element_count)
    return out
