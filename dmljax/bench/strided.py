"""Benchmark cases for `read_tensor` / `write_tensor`, one per common layout.

Each case is a float32 tensor of about ``nbytes`` bytes; contenders: dmljax (jitted,
descriptor static), the hand-written ``jnp`` formulation of the same layout (the
reference for ratios), NumPy's ``as_strided(...).copy()`` and, when installed, torch's
``as_strided(...).clone()`` (`dmljax.bench._torch`).
"""

from __future__ import annotations

from collections.abc import Sequence

import jax
import jax.numpy as jnp
import numpy as np

from dmljax._strided import read_tensor, write_tensor
from dmljax._tensor_desc import TensorDesc, packed_strides
from dmljax.bench import _torch
from dmljax.bench._harness import Case

__all__ = ["cases"]

_CHANNELS = 16


def _nchw(nbytes: int) -> tuple[int, int, int, int]:
    elements = max(nbytes // 4, _CHANNELS * 4)
    width = min(256, elements // _CHANNELS)
    height = max(1, elements // (_CHANNELS * width))
    return (1, _CHANNELS, height, width)


def _as_strided(buffer: np.ndarray, desc: TensorDesc):
    strides = tuple(s * buffer.itemsize for s in desc.strides)
    return lambda: np.lib.stride_tricks.as_strided(buffer, desc.sizes, strides).copy()


def _read_case(name: str, desc: TensorDesc, buffer_len: int, hand_written) -> Case:
    host = np.arange(buffer_len, dtype=np.float32)
    buffer = jnp.asarray(host)
    ours = jax.jit(lambda b: read_tensor(b, desc))
    hand = jax.jit(hand_written)
    contenders = {
        "dmljax": lambda: ours(buffer),
        "jnp": lambda: hand(buffer),
        "numpy": _as_strided(host, desc),
        **_torch.read_strided(host, desc.sizes, desc.strides),
    }
    return Case("read_tensor", name, (buffer_len + desc.element_count) * 4, contenders, "jnp")


def _write_case(name: str, desc: TensorDesc, buffer_len: int, hand_written) -> Case:
    buffer = jnp.zeros(buffer_len, jnp.float32)
    value = jnp.ones(desc.sizes, jnp.float32)
    ours = jax.jit(lambda b, v: write_tensor(b, desc, v))
    hand = jax.jit(hand_written)
    host_buffer, host_value = np.zeros(buffer_len, np.float32), np.ones(desc.sizes, np.float32)
    strides = tuple(s * 4 for s in desc.strides)

    def numpy_write():
        out = host_buffer.copy()
        np.lib.stride_tricks.as_strided(out, desc.sizes, strides)[...] = host_value
        return out

    contenders = {"dmljax": lambda: ours(buffer, value), "jnp": lambda: hand(buffer, value), "numpy": numpy_write}
    contenders.update(_torch.write_strided(host_buffer, host_value, desc.strides))
    return Case("write_tensor", name, (buffer_len + desc.element_count) * 4, contenders, "jnp")


def cases(sizes_bytes: Sequence[int]) -> list[Case]:
    """Read and write cases for packed, NHWC, broadcast, padded and overlapping layouts."""
    out = []
    for nbytes in sizes_bytes:
        n, c, h, w = sizes = _nchw(nbytes)
        count = n * c * h * w
        nhwc = TensorDesc("float32", sizes, packed_strides(sizes, "NHWC"))
        padded = TensorDesc("float32", sizes, (c * h * (w + 8), h * (w + 8), w + 8, 1))
        broadcast = TensorDesc("float32", sizes, (0, 0, 0, 1))  # one row repeated
        windows = TensorDesc("float32", (count // 8, 8), (1, 1))  # overlapping sliding windows
        out += [
            _read_case(f"packed {sizes}", TensorDesc("float32", sizes), count, lambda b, s=sizes: b.reshape(s)),
            _read_case(
                f"NHWC {sizes}", nhwc, count, lambda b, n=n, h=h, w=w, c=c: b.reshape(n, h, w, c).transpose(0, 3, 1, 2)
            ),
            _read_case(
                f"padded rows +8 {sizes}", padded, padded.min_buffer_elements, lambda b, s=sizes: _hand_padded(b, s)
            ),
            _read_case(f"broadcast row {sizes}", broadcast, w, lambda b, s=sizes: jnp.broadcast_to(b, s)),
            _read_case(
                f"sliding windows {windows.sizes}", windows, windows.min_buffer_elements, lambda b: _hand_windows(b)
            ),
            _write_case(f"packed {sizes}", TensorDesc("float32", sizes), count, lambda b, v: v.reshape(-1)),
            _write_case(f"NHWC {sizes}", nhwc, count, lambda b, v: v.transpose(0, 2, 3, 1).reshape(-1)),
            _write_case(
                f"padded rows +8 {sizes}",
                padded,
                padded.min_buffer_elements,
                lambda b, v, s=sizes: _hand_padded_write(b, v, s),
            ),
        ]
    return out


def _hand_padded(buffer: jax.Array, sizes: tuple[int, ...]) -> jax.Array:
    n, c, h, w = sizes
    full = jnp.pad(buffer, (0, 8))  # the buffer stops after the last element, not its padding
    return full.reshape(n, c, h, w + 8)[..., :w]


def _hand_padded_write(buffer: jax.Array, value: jax.Array, sizes: tuple[int, ...]) -> jax.Array:
    n, c, h, w = sizes
    full = jnp.pad(buffer, (0, 8)).reshape(n, c, h, w + 8)
    return full.at[..., :w].set(value).reshape(-1)[: buffer.shape[0]]


def _hand_windows(buffer: jax.Array) -> jax.Array:
    rows = buffer.shape[0] - 7
    return buffer[jnp.arange(rows)[:, None] + jnp.arange(8)[None, :]]
