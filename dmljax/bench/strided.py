"""Benchmark cases for `read_tensor` / `write_tensor`, one per common layout.

Each case is a float32 tensor of about ``nbytes`` bytes; contenders: dmljax (jitted,
descriptor static), the hand-written ``jnp`` formulation of the same layout (the
reference for ratios), NumPy's ``as_strided(...).copy()`` and, when installed, torch's
``as_strided(...).clone()`` (`dmljax.bench._torch`). The NHWC read and the padded write
also run backward; every case's reference is ``jnp``, and the fastest formulations found
run beside it as contenders. The padded write's: ``concat``, the value rows next to the
buffer's pad columns. It runs on DirectML's
minimum buffer, which ends at the last element, 8 short of the last row's padding (XLA
then copies the output once more: `dmljax._buffers.strided`), and, forward only, on a buffer of
whole rows (one pass). The NHWC read's, the fastest found at each size
(`dmljax._buffers.transpose`): ``tiles16`` (16x16 tiles, then 64-byte rows, which XLA CPU fuses
into one loop) below ``dmljax.config.tiled_transpose_two_pass_min_bytes``, ``two_pass``
(the same two steps kept apart by a conditional XLA cannot fold) from there on.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import jax
import jax.numpy as jnp
import numpy as np

from dmljax._buffers.strided import read_tensor, write_tensor
from dmljax._buffers.tensor_desc import TensorDesc, packed_strides
from dmljax.bench import _torch
from dmljax.bench._harness import Case, sized

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


def _read_case(name: str, desc: TensorDesc, buffer_len: int, hand_written, extra=()) -> Case:
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
    for key, fn in extra:
        contenders[key] = functools.partial(jax.jit(fn), buffer)
    return Case("read_tensor", name, (buffer_len + desc.element_count) * 4, contenders, "jnp")


def _write_case(name: str, desc: TensorDesc, buffer_len: int, hand_written, fastest=None) -> Case:
    host_buffer = np.arange(buffer_len, dtype=np.float32)  # distinct values: what is kept can be checked
    host_value = -np.arange(desc.element_count, dtype=np.float32).reshape(desc.sizes)
    buffer, value = jnp.asarray(host_buffer), jnp.asarray(host_value)
    ours = jax.jit(lambda b, v: write_tensor(b, desc, v))
    hand = jax.jit(hand_written)
    strides = tuple(s * 4 for s in desc.strides)

    def numpy_write():
        out = host_buffer.copy()
        np.lib.stride_tricks.as_strided(out, desc.sizes, strides)[...] = host_value
        return out

    contenders = {"dmljax": lambda: ours(buffer, value), "jnp": lambda: hand(buffer, value), "numpy": numpy_write}
    if fastest is not None:
        contenders[fastest[0]] = functools.partial(jax.jit(fastest[1]), buffer, value)
    contenders.update(_torch.write_strided(host_buffer, host_value, desc.strides))
    return Case("write_tensor", name, (buffer_len + desc.element_count) * 4, contenders, "jnp")


def _backward_case(group: str, name: str, nbytes: int, functions: dict, args: tuple) -> Case:
    """The VJP of each formulation in ``functions`` (one of them ``jnp``), ratios against ``jnp``.

    The cotangent is an argument (a constant one would be folded into the program).
    """
    first = next(iter(functions.values()))
    cotangent = jnp.linspace(-1.0, 1.0, math.prod(jax.eval_shape(first, *args).shape), dtype=jnp.float32)
    cotangent = cotangent.reshape(jax.eval_shape(first, *args).shape)

    def vjp(fn):
        return jax.jit(lambda ct, *a: jax.vjp(fn, *a)[1](ct))

    contenders = {key: functools.partial(vjp(fn), cotangent, *args) for key, fn in functions.items()}
    return Case(group, f"{name} bwd", nbytes, contenders, "jnp")


def cases(sizes_bytes: Sequence[int]) -> list[Case]:
    """Read and write cases for packed, NHWC, broadcast, padded and overlapping layouts."""
    out: list[Case] = []
    for nbytes in sizes_bytes:
        n, c, h, w = sizes = _nchw(nbytes)
        count = n * c * h * w
        nhwc = TensorDesc("float32", sizes, packed_strides(sizes, "NHWC"))
        padded = TensorDesc("float32", sizes, (c * h * (w + 8), h * (w + 8), w + 8, 1))
        broadcast = TensorDesc("float32", sizes, (0, 0, 0, 1))  # one row repeated
        windows = TensorDesc("float32", (count // 8, 8), (1, 1))  # overlapping sliding windows
        start = len(out)
        out += [
            _read_case(f"packed {sizes}", TensorDesc("float32", sizes), count, lambda b, s=sizes: b.reshape(s)),
            _read_case(
                f"NHWC {sizes}",
                nhwc,
                count,
                lambda b, n=n, h=h, w=w, c=c: b.reshape(n, h, w, c).transpose(0, 3, 1, 2),
                (
                    ("tiles16", lambda b, s=sizes: _tiles16_nhwc_read(b, s)),
                    ("two_pass", lambda b, s=sizes: _two_pass_nhwc_read(b, s)),
                ),
            ),
            _backward_case(
                "read_tensor",
                f"NHWC {sizes}",
                2 * count * 4,
                {
                    "dmljax": lambda b, d=nhwc: read_tensor(b, d),
                    "jnp": lambda b, n=n, h=h, w=w, c=c: b.reshape(n, h, w, c).transpose(0, 3, 1, 2),
                    "tiles16": lambda b, s=sizes: _tiles16_nhwc_read(b, s),
                },
                (jnp.arange(count, dtype=jnp.float32),),
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
                ("concat", lambda b, v, s=sizes: _concat_padded_write(b, v, s)),
            ),
            _write_case(
                f"padded rows +8, whole rows {sizes}",
                padded,
                c * h * (w + 8),
                lambda b, v, s=sizes: _hand_padded_write(b, v, s),
                ("concat", lambda b, v, s=sizes: _concat_padded_write(b, v, s)),
            ),
            _backward_case(
                "write_tensor",
                f"padded rows +8 {sizes}",
                (2 * padded.min_buffer_elements + 2 * count) * 4,
                {
                    "dmljax": lambda b, v, d=padded: write_tensor(b, d, v),
                    "jnp": lambda b, v, s=sizes: _hand_padded_write(b, v, s),
                    "concat": lambda b, v, s=sizes: _concat_padded_write(b, v, s),
                },
                (jnp.zeros(padded.min_buffer_elements, jnp.float32), jnp.ones(sizes, jnp.float32)),
            ),
        ]
        out[start:] = sized(out[start:], 4 * count)  # every layout holds the count elements of sizes
    return out


def _hand_padded(buffer: jax.Array, sizes: tuple[int, ...]) -> jax.Array:
    n, c, h, w = sizes
    full = jnp.pad(buffer, (0, 8))  # the buffer stops after the last element, not its padding
    return full.reshape(n, c, h, w + 8)[..., :w]


def _whole_rows(buffer: jax.Array, value: jax.Array) -> tuple[jax.Array, jax.Array]:
    """The buffer as 2-D rows of ``w + 8`` (zero-padded when it stops short of the last row's
    padding) and the value as rows of ``w``.

    2-D, not the tensor's 4-D shape: XLA CPU ran the 4-D concatenate (a leading axis of 1)
    1.7-2.4x slower than the same one on rows (16 and 256 MiB).
    """
    w = value.shape[-1]
    rows = jnp.pad(buffer, (0, -buffer.shape[0] % (w + 8))).reshape(-1, w + 8)
    return rows, value.reshape(-1, w)


def _hand_padded_write(buffer: jax.Array, value: jax.Array, sizes: tuple[int, ...]) -> jax.Array:
    rows, value_rows = _whole_rows(buffer, value)
    return rows.at[:, : sizes[3]].set(value_rows).reshape(-1)[: buffer.shape[0]]


def _concat_padded_write(buffer: jax.Array, value: jax.Array, sizes: tuple[int, ...]) -> jax.Array:
    """Fastest padded-row write found: one concatenate of the value rows and the buffer's pad columns."""
    rows, value_rows = _whole_rows(buffer, value)
    return jnp.concatenate([value_rows, rows[:, sizes[3] :]], axis=1).reshape(-1)[: buffer.shape[0]]


def _tiles16_nhwc_read(buffer: jax.Array, sizes: tuple[int, ...]) -> jax.Array:
    """NHWC -> NCHW with 16 channels as 16x16 tiles, then 64-byte rows (XLA CPU fuses the two)."""
    n, c, h, w = sizes
    tiled = buffer.reshape(n, h * w // 16, 16, c).transpose(0, 1, 3, 2)
    return tiled.transpose(0, 2, 1, 3).reshape(sizes)


def _two_pass_nhwc_read(buffer: jax.Array, sizes: tuple[int, ...]) -> jax.Array:
    """The same two steps, the first in a `lax.cond` on a predicate XLA cannot fold (both branches equal)."""
    n, c, h, w = sizes

    def tiles(b):
        return b.reshape(n, h * w // 16, 16, c).transpose(0, 1, 3, 2).reshape(n, h * w // 16, 16 * c)

    odd = jax.lax.bitcast_convert_type(buffer[0], jnp.uint32) & 1
    tiled = jax.lax.cond(odd == 0, tiles, tiles, buffer).reshape(n, h * w // 16, c, 16)
    return tiled.transpose(0, 2, 1, 3).reshape(sizes)


def _hand_windows(buffer: jax.Array) -> jax.Array:
    rows = buffer.shape[0] - 7
    return buffer[jnp.arange(rows)[:, None] + jnp.arange(8)[None, :]]
