"""Benchmark cases for the data-movement operators, each beside its hand-written ``jnp`` twin.

Each case is float32 data of about ``nbytes`` bytes: ``(rows, cols)`` with rows of up to
1024 columns, or ``(1, 16, s, s)`` NCHW for `depth_to_space` / `space_to_depth`; its
label names that shape. Contenders, dmljax first: ``jnp`` (the reference for ratios), the
formulation a user would write (reshape and transpose, ``jnp.tile``, ``jnp.pad`` with the
same mode, ``jnp.concatenate``, ``jnp.split``, advanced indexing for
`reverse_subsequences`), and ``numpy`` on the host (the same formulation). Special cases:

* `fill_value_sequence` float32 gives the bits of DirectML's loop (each addition rounds;
  computed from its runs per binade, docs/design/fill-value-sequence.md); its reference
  ``jnp start+delta*iota (other bits)`` is the closed form, which computes other bits;
  ``numpy`` (a float32 ``cumsum``, which adds in sequence) computes the loop's bits. The
  int32 sequence is the closed form in both.
* `slice_grad` (the window of `slice` with rows reversed in steps of 2, every third
  column) against ``jax.vjp`` of `slice` (the reference) and ``jnp .at[].set`` into zeros.

Backward cases (``grad(sum(op(x) * cotangent))``, random cotangent) for `tile`, `pad`
reflection and `reverse_subsequences`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

import dmljax
from dmljax._ops.movement.padding import PADDING_MODES
from dmljax.bench._harness import Case, sized

__all__ = ["cases", "op_cases", "rows_cols"]

GROUP = "movement"


def rows_cols(nbytes: int) -> tuple[int, int]:
    """A float32 ``(rows, cols)`` shape of about ``nbytes``: rows of up to 1024 columns, 64 elements at least.

    Examples:
      >>> rows_cols(4096), rows_cols(100), rows_cols(1 << 20)
      ((1, 1024), (1, 64), (256, 1024))
    """
    elements = max(nbytes // 4, 64)
    cols = min(1024, elements)
    return elements // cols, cols


def _nchw(nbytes: int) -> tuple[int, int, int, int]:
    """``(1, 16, s, s)`` with ``s`` even, about ``nbytes`` of float32."""
    side = 2 * math.isqrt(max(nbytes // 4, 64) // 64)
    return 1, 16, side, side


def op_cases(
    group: str,
    name: str,
    nbytes: int,
    args: tuple,
    ops: dict[str, Callable],
    numpy_fn: Callable | None = None,
    *,
    reference: str = "jnp",
    backward: bool = False,
) -> list[Case]:
    """The forward case ``{name} fwd`` of ``ops`` (each jitted) on ``args``, NumPy's on the host.

    With ``backward``, also ``{name} bwd``: the gradient of ``sum(op(*args) * ct)`` with
    respect to the first argument (a random cotangent ``ct``), the JAX contenders only.
    """
    dev = tuple(jnp.asarray(a) for a in args)
    contenders: dict[str, Callable[[], Any]] = {k: _bound(jax.jit(f), dev) for k, f in ops.items()}
    if numpy_fn is not None:
        contenders["numpy"] = lambda: numpy_fn(*args)
    out = [Case(group, f"{name} fwd", nbytes, contenders, reference)]
    if backward:
        # Through a new function: the forward contender's own jit still traces at its first call.
        shape = jax.eval_shape(lambda *a: ops["dmljax"](*a), *dev).shape
        ct = jnp.asarray(np.random.default_rng(1).standard_normal(shape).astype(np.float32))

        def grad(f: Callable) -> Callable:
            return jax.jit(jax.grad(lambda *a: jnp.sum(f(*a) * ct)))

        grads = {k: _bound(grad(f), dev) for k, f in ops.items() if k in contenders}
        out.append(Case(group, f"{name} bwd", 2 * nbytes, grads, reference))
    return out


def _bound(fn: Callable, args: tuple) -> Callable[[], Any]:
    return lambda: fn(*args)


def _depth_space_cases(nbytes: int) -> list[Case]:
    x = np.random.default_rng(0).standard_normal(_nchw(nbytes), dtype=np.float32)
    n, c, h, w = x.shape

    def to_space(xp: Any) -> Callable:  # DCR, ONNX DepthToSpace's formula
        return lambda v: xp.transpose(v.reshape(n, 2, 2, c // 4, h, w), (0, 3, 4, 1, 5, 2)).reshape(
            n, c // 4, 2 * h, 2 * w
        )

    def to_depth(xp: Any) -> Callable:  # DCR, ONNX SpaceToDepth's formula
        return lambda v: xp.transpose(v.reshape(n, c, h // 2, 2, w // 2, 2), (0, 3, 5, 1, 2, 4)).reshape(
            n, 4 * c, h // 2, w // 2
        )

    def host(f: Callable) -> Callable:
        return lambda v: np.ascontiguousarray(f(v))

    out = op_cases(
        GROUP,
        f"depth_to_space block=2 DCR {x.shape}",
        2 * x.nbytes,
        (x,),
        {"dmljax": lambda v: dmljax.depth_to_space(v, 2), "jnp": to_space(jnp)},
        host(to_space(np)),
    )
    return out + op_cases(
        GROUP,
        f"space_to_depth block=2 DCR {x.shape}",
        2 * x.nbytes,
        (x,),
        {"dmljax": lambda v: dmljax.space_to_depth(v, 2), "jnp": to_depth(jnp)},
        host(to_depth(np)),
    )


def _tile_pad_cases(x: np.ndarray) -> list[Case]:
    ops = {"dmljax": lambda v: dmljax.tile(v, (2, 2)), "jnp": lambda v: jnp.tile(v, (2, 2))}
    out = op_cases(
        GROUP, f"tile reps=(2, 2) {x.shape}", 5 * x.nbytes, (x,), ops, lambda v: np.tile(v, (2, 2)), backward=True
    )
    rows = min(1, x.shape[0] - 1)  # reflection needs more rows than it pads
    start, end = (rows, 16), (rows, 16)
    padded = (x.shape[0] + 2 * rows) * (x.shape[1] + 32) * 4
    for mode in PADDING_MODES:
        pad_ops, numpy_fn = _pad_ops(mode, start, end)
        name = f"pad {mode} {start}+{end} {x.shape}"
        out += op_cases(GROUP, name, x.nbytes + padded, (x,), pad_ops, numpy_fn, backward=mode == "reflection")
    return out


def _pad_ops(mode: str, start: tuple[int, ...], end: tuple[int, ...]) -> tuple[dict[str, Callable], Callable]:
    """dmljax's pad in ``mode`` (constant: 0.5) and ``jnp.pad`` in the same mode; ``np.pad``'s."""
    widths = tuple(zip(start, end, strict=True))
    kwargs: dict[str, Any] = {"mode": PADDING_MODES[mode]}
    if mode == "constant":
        kwargs["constant_values"] = 0.5
    ops = {
        "dmljax": lambda v: dmljax.pad(v, start, end, mode, kwargs.get("constant_values", 0)),
        "jnp": lambda v: jnp.pad(v, widths, **kwargs),
    }
    return ops, lambda v: np.pad(v, widths, **kwargs)


def _join_split_cases(x: np.ndarray) -> list[Case]:
    cols = x.shape[1]
    sizes = (cols // 4, cols // 4, cols - 2 * (cols // 4))
    cuts = [sizes[0], sizes[0] + sizes[1]]
    pieces = tuple(np.ascontiguousarray(p) for p in np.split(x, cuts, axis=1))
    join = {"dmljax": lambda *p: dmljax.concatenate(p, 1), "jnp": lambda *p: jnp.concatenate(p, axis=1)}
    split = {"dmljax": lambda v: dmljax.split_tensor(v, sizes, 1), "jnp": lambda v: tuple(jnp.split(v, cuts, axis=1))}
    split_np = lambda v: tuple(np.ascontiguousarray(p) for p in np.split(v, cuts, axis=1))  # noqa: E731
    name = f"concatenate axis=1 sizes={sizes} {x.shape}"
    out = op_cases(GROUP, name, 2 * x.nbytes, pieces, join, lambda *p: np.concatenate(p, 1))
    return out + op_cases(GROUP, f"split_tensor axis=1 sizes={sizes} {x.shape}", 2 * x.nbytes, (x,), split, split_np)


def _reverse_cases(x: np.ndarray) -> list[Case]:
    rows, cols = x.shape
    lengths = np.random.default_rng(2).integers(0, cols + 1, (rows, 1), dtype=np.int32)

    def indexed(xp: Any) -> Callable:
        def reverse(v: Any, lengths: Any) -> Any:
            j = xp.arange(cols, dtype=np.int32)[None, :]
            return v[xp.arange(rows)[:, None], xp.where(j < lengths, lengths - 1 - j, j)]

        return reverse

    ops = {"dmljax": lambda v, n: dmljax.reverse_subsequences(v, n, 1), "jnp": indexed(jnp)}
    name = f"reverse_subsequences axis=1 {x.shape}"
    return op_cases(GROUP, name, 2 * x.nbytes + lengths.nbytes, (x, lengths), ops, indexed(np), backward=True)


def _fill_cases(shape: tuple[int, int]) -> list[Case]:
    """The float32 loop's bits and the int32 closed form, sized."""
    return sized(_float_fill_cases(shape), 4 * shape[0] * shape[1]) + sized(
        _int_fill_cases(shape), 4 * shape[0] * shape[1]
    )


def _float_fill_cases(shape: tuple[int, int]) -> list[Case]:
    n, f32 = shape[0] * shape[1], np.float32(0.1)
    floats = {
        "dmljax": lambda: dmljax.fill_value_sequence(shape, np.float32, 0.1, 0.1),
        "jnp start+delta*iota (other bits)": lambda: (f32 + f32 * lax.iota(np.float32, n)).reshape(shape),
    }

    def loop_np() -> np.ndarray:  # float32 cumsum adds in sequence: the loop's roundings
        return np.cumsum(np.full(n, f32, np.float32), dtype=np.float32).reshape(shape)

    return op_cases(
        GROUP, f"fill_value_sequence float32 {shape}", 4 * n, (), floats, loop_np, reference=list(floats)[1]
    )


def _int_fill_cases(shape: tuple[int, int]) -> list[Case]:
    n, i32 = shape[0] * shape[1], np.int32(3)
    ints = {
        "dmljax": lambda: dmljax.fill_value_sequence(shape, np.int32, -5, 3),
        "jnp": lambda: (np.int32(-5) + i32 * lax.iota(np.int32, n)).reshape(shape),
    }
    ints_np = lambda: (np.arange(n, dtype=np.int32) * i32 - np.int32(5)).reshape(shape)  # noqa: E731
    return op_cases(GROUP, f"fill_value_sequence int32 {shape}", 4 * n, (), ints, ints_np)


def _slice_grad_cases(shape: tuple[int, int]) -> list[Case]:
    rows, cols = shape
    offsets, sizes, strides = (0, 1), (rows, cols - 1), (-2, 3)  # rows reversed in steps of 2, every third column
    window = (slice(rows - 1, None, -2), slice(1, cols, 3))
    outs = tuple(1 + (s - 1) // abs(t) for s, t in zip(sizes, strides, strict=True))
    g = np.random.default_rng(3).standard_normal(outs, dtype=np.float32)

    def vjp(g: jax.Array) -> jax.Array:
        return jax.vjp(lambda v: dmljax.slice(v, offsets, sizes, strides), jnp.zeros(shape, g.dtype))[1](g)[0]

    def assign_np(g: np.ndarray) -> np.ndarray:
        out = np.zeros(shape, g.dtype)
        out[window] = g
        return out

    ops = {
        "dmljax": lambda g: dmljax.slice_grad(g, shape, offsets, sizes, strides),
        "vjp(slice)": vjp,
        "jnp .at[].set": lambda g: jnp.zeros(shape, g.dtype).at[window].set(g),
    }
    name = f"slice_grad strides={strides} {shape}"
    return op_cases(GROUP, name, g.nbytes + 4 * rows * cols, (g,), ops, assign_np, reference="vjp(slice)")


def cases(sizes_bytes: Sequence[int]) -> list[Case]:
    """Each data-movement operator forward at each size; tile, pad reflection and reverse_subsequences backward."""
    out: list[Case] = []
    for nbytes in sizes_bytes:
        out += sized(_depth_space_cases(nbytes), 4 * math.prod(_nchw(nbytes)))
        shape = rows_cols(nbytes)
        x = np.random.default_rng(nbytes).standard_normal(shape, dtype=np.float32)
        built = _tile_pad_cases(x) + _join_split_cases(x) + _reverse_cases(x) + _slice_grad_cases(shape)
        out += sized(built, x.nbytes) + _fill_cases(shape)
    return out
