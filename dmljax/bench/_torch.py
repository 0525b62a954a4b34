"""PyTorch CPU contenders for the benchmark cases, when torch is installed (``pip install 'dmljax[torch]'``).

Each builder returns zero-argument callables computing the same semantics as the case's
dmljax contender, or nothing when torch cannot be imported, so that every case module
runs without torch. Negative indices are wrapped inside the timed call, as the ``jnp``
contenders do; torch's index operands are int64 (``torch.gather`` and ``torch.scatter``
take nothing else), converted once outside the timed call. Backward contenders time
forward + ``torch.autograd.grad`` with a cotangent of ones, like the JAX ones time
``grad(sum(op(x) * cotangent))``.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from dmljax.bench._harness import Case

__all__ = ["NAME", "gather", "gather_elements", "random_bits", "read_strided", "scatter", "slice1", "with_torch"]

NAME = "torch"  # the contender's name in every case


@functools.cache
def _torch() -> Any:
    try:
        import torch
    except ImportError:
        return None
    return torch


Pair = tuple[Callable[[], Any], Callable[[], Any]] | None


def with_torch(cases: Sequence[Case], pair: Pair) -> list[Case]:
    """``[fwd, bwd]`` cases with the torch forward and backward contenders added (unchanged without torch).

    Examples:
      >>> case = Case("g", "op fwd", 1, {"dmljax": None}, "dmljax")
      >>> [list(c.contenders) for c in with_torch([case, case], (int, float))]
      [['dmljax', 'torch'], ['dmljax', 'torch']]
      >>> with_torch([case, case], None) == [case, case]
      True
    """
    if pair is None:
        return list(cases)
    return [dataclasses.replace(c, contenders={**c.contenders, NAME: fn}) for c, fn in zip(cases, pair, strict=True)]


def _wrapped(torch: Any, i: Any, n: int) -> Any:
    return torch.where(i < 0, i + n, i)


def _fwd_bwd(op: Callable[..., Any], *arrays: np.ndarray, diff: tuple[int, ...] = (0,)) -> Pair:
    """Forward and backward callables of ``op(*tensors)``; the tensors at ``diff`` get gradients."""
    torch = _torch()
    if torch is None:
        return None
    tensors = [torch.from_numpy(np.ascontiguousarray(a)) for a in arrays]
    leaves = [t.detach().clone().requires_grad_(True) if k in diff else t for k, t in enumerate(tensors)]
    ct = torch.ones_like(op(*tensors))

    def backward() -> Any:
        return torch.autograd.grad(op(*leaves), [leaves[k] for k in diff], ct)

    return (lambda: op(*tensors)), backward


def gather_elements(x: np.ndarray, i: np.ndarray, axis: int) -> Pair:
    """``torch.gather`` (ONNX GatherElements)."""
    torch = _torch()
    n = x.shape[axis]
    return _fwd_bwd(lambda x, i: torch.gather(x, axis, _wrapped(torch, i, n)), x, i.astype(np.int64))


def gather(x: np.ndarray, i: np.ndarray, axis: int) -> Pair:
    """``torch.index_select`` (ONNX Gather with 1-D indices)."""
    torch = _torch()
    n = x.shape[axis]
    return _fwd_bwd(lambda x, i: torch.index_select(x, axis, _wrapped(torch, i, n)), x, i.astype(np.int64))


def scatter(x: np.ndarray, i: np.ndarray, u: np.ndarray, axis: int) -> Pair:
    """Out-of-place ``torch.scatter`` (ONNX ScatterElements, unique indices); gradients for data and updates."""
    torch = _torch()
    n = x.shape[axis]
    op = lambda x, i, u: torch.scatter(x, axis, _wrapped(torch, i, n), u)  # noqa: E731
    return _fwd_bwd(op, x, i.astype(np.int64), u, diff=(0, 2))


def slice1(x: np.ndarray, key: tuple[slice, ...], flip_dims: tuple[int, ...]) -> Pair:
    """Basic slicing with positive steps, then ``torch.flip`` (a contiguous copy)."""
    torch = _torch()
    return _fwd_bwd(lambda x: torch.flip(x[key], flip_dims), x)


def read_strided(buffer: np.ndarray, sizes: Sequence[int], strides: Sequence[int]) -> dict[str, Callable[[], Any]]:
    """``{"torch": as_strided(...).clone()}`` into a packed tensor, strides in elements; empty without torch.

    A copy every time, like the other contenders: ``.contiguous()`` would return a packed view itself.
    """
    torch = _torch()
    if torch is None:
        return {}
    t = torch.from_numpy(buffer)
    packed = torch.contiguous_format
    return {NAME: lambda: torch.as_strided(t, tuple(sizes), tuple(strides)).clone(memory_format=packed)}


def write_strided(buffer: np.ndarray, value: np.ndarray, strides: Sequence[int]) -> dict[str, Callable[[], Any]]:
    """``{"torch": copy of the buffer with value written through as_strided}``; empty without torch."""
    torch = _torch()
    if torch is None:
        return {}
    b, v = torch.from_numpy(buffer), torch.from_numpy(value)

    def write() -> Any:
        out = b.clone()
        out.as_strided(tuple(v.shape), tuple(strides)).copy_(v)
        return out

    return {NAME: write}


def random_bits(n: int) -> dict[str, Callable[[], Any]]:
    """``{"torch randint int32 (mt19937)": ...}``: 32 random bits per output from torch's CPU generator.

    torch's CPU generator is MT19937 (no Philox on CPU), so this is a peer in work, not in bits.
    """
    torch = _torch()
    if torch is None:
        return {}
    generator = torch.Generator().manual_seed(0)
    return {
        "torch randint int32 (mt19937)": lambda: torch.randint(
            -(2**31), 2**31, (n,), dtype=torch.int32, generator=generator
        )
    }
