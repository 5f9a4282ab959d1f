"""Batching rules of the solves on the linalg family whose Tensor arguments broadcast
their batch dims against each other (_linalg_solve_ex, linalg_lu_solve): each batched
argument gets size-1 dims after the vmap batch dim, so that numpy lines the examples'
own batch dims up, and the factorisation outputs keep the shape of each example's A."""

from __future__ import annotations

from typing import Any

from ..dispatch import OperatorHandle
from ..generated import ops
from ..tensor import Tensor
from .batching import (
    HANDLES,
    Rule,
    batch_size,
    broadcast_value,
    is_batched,
    unwrap,
    wrap,
)
from .batching_schema import pad, same_kind


def _aligned(level: int, tensors: list[tuple[Tensor, int]]) -> list[Tensor]:
    """The values of (tensor, core rank) pairs with their batch dims aligned: batched
    ones padded to the largest batch rank (unbatched ones broadcast as they are)."""
    rank = max(t.dim() - core for t, core in tensors)
    return [
        pad(unwrap(t, level), t.dim(), rank + core) if is_batched(t, level) else t
        for t, core in tensors
    ]


def _lu_solve(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    """linalg_lu_solve: LU (..., n, n), pivots (..., n), B (..., n, k) broadcast."""
    LU, pivots, B, left, adjoint = args
    values = _aligned(level, [(LU, 2), (pivots, 1), (B, 2)])
    return wrap(handle.call(*values, left, adjoint), level)


def _solve_ex(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    """_linalg_solve_ex: A repeated over the batch (its LU is per example), B a
    matrix broadcast against it, or a vector (one, or one per matrix of A): the kernel
    tells a vector by B's shape, so it is expanded to A's batch dims."""
    A, B, left, check_errors = args
    size, batch = batch_size(level), list(A.shape[:-2])
    vector = B.dim() == 1 or (B.dim() == A.dim() - 1 and B.shape == A.shape[:-1])
    if vector:
        b = broadcast_value(B, level)
        b = pad(b, B.dim(), len(batch) + 1)
        b = HANDLES["expand"].call(b, [size, *batch, B.shape[-1]], False)
        return wrap(
            handle.call(broadcast_value(A, level), b, left, check_errors), level
        )
    rank = max(A.dim(), B.dim())
    a = pad(broadcast_value(A, level), A.dim(), rank)
    b = pad(unwrap(B, level), B.dim(), rank) if is_batched(B, level) else B
    result = handle.call(a, b, left, check_errors)
    shape = [size, *A.shape]
    sizes = (None, shape, shape[:-1], shape[:-2])  # LU, pivots, info as A's
    return wrap(
        same_kind(
            result,
            [r if s is None else ops.reshape(r, s) for r, s in zip(result, sizes)],
        ),
        level,
    )


LINALG_CUSTOM: dict[str, Rule] = {
    "_linalg_solve_ex": _solve_ex,
    "linalg_lu_solve": _lu_solve,
}
