"""Kernels of the linalg family's distances: _cdist_forward and _pdist_forward (the
p-norm distances between rows) and their _backward operators."""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes

__all__ = ["cdist_forward", "cdist_backward", "pdist_forward", "pdist_backward"]


def _check_float(name: str, which: str, array: np.ndarray) -> None:
    if array.dtype.kind not in "fc":
        raise RuntimeError(
            f"{name} only supports floating-point dtypes, {which} got: "
            f"{dtypes.scalar_type_name(array)}"
        )


def _norms(diff: np.ndarray, p: float) -> np.ndarray:
    """The p-norm of `diff` over its last axis (p = 0 counts the non-zeros)."""
    magnitude = np.abs(diff)
    if p == 0:
        return (magnitude != 0).sum(-1).astype(diff.dtype)
    if p == 1:
        return magnitude.sum(-1)
    if p == 2:
        return np.sqrt((magnitude * magnitude).sum(-1))
    if math.isinf(p):
        return magnitude.max(-1, initial=0)
    return (magnitude**p).sum(-1) ** (1 / p)


def cdist_forward(
    x1: np.ndarray, x2: np.ndarray, p: float, compute_mode: int | None
) -> np.ndarray:
    """[..., P, M] and [..., R, M] -> [..., P, R]: the distance of every pair of rows."""
    if x1.ndim < 2:
        raise RuntimeError(
            f"cdist only supports at least 2D tensors, X1 got: {x1.ndim}D"
        )
    if x2.ndim < 2:
        raise RuntimeError(
            f"cdist only supports at least 2D tensors, X2 got: {x2.ndim}D"
        )
    _check_float("cdist", "X1", x1)
    _check_float("cdist", "X2", x2)
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(
            "X1 and X2 must have the same number of columns. X1: "
            f"{x1.shape[-1]} X2: {x2.shape[-1]}"
        )
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    diff = x1[..., :, None, :] - x2[..., None, :, :]
    return _norms(diff, p)


def _sum_to(array: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """`array` summed over the leading (broadcast) dims down to `shape`."""
    lead = array.ndim - len(shape)
    array = array.sum(tuple(range(lead))) if lead else array
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and array.shape[i] != 1)
    return array.sum(axes, keepdims=True) if axes else array


def cdist_backward(
    grad: np.ndarray, x1: np.ndarray, x2: np.ndarray, p: float, cdist: np.ndarray
) -> np.ndarray:
    """The gradient of cdist with respect to x1 (swap the roles for x2)."""
    if p == 0 or grad.size == 0:
        return np.zeros_like(x1)
    diff = x1[..., :, None, :] - x2[..., None, :, :]
    dist = cdist[..., None]
    with np.errstate(divide="ignore", invalid="ignore"):
        if p == 1:
            slope = np.sign(diff)
        elif p == 2:
            slope = np.where(dist == 0, 0, diff / dist)
        elif math.isinf(p):
            slope = np.sign(diff) * (np.abs(diff) == dist)
        elif p < 2:  # |diff|^(p-1) is infinite at 0 for p < 1, and 0 there anyway
            slope = np.where(
                (dist == 0) | (diff == 0),
                0,
                np.sign(diff) * np.abs(diff) ** (p - 1) / dist ** (p - 1),
            )
        else:
            slope = np.where(
                dist == 0, 0, diff * np.abs(diff) ** (p - 2) / dist ** (p - 1)
            )
    result = (grad[..., None] * slope).sum(-2)
    return _sum_to(result, x1.shape).astype(x1.dtype, copy=False)


def pdist_forward(self: np.ndarray, p: float) -> np.ndarray:
    """[..., N, M] -> [..., N (N - 1) / 2]: the distance of rows i < j, in row-major
    order. Dims before the last two are a batch (vmap's rule calls it so; pdist
    itself takes 2-D only)."""
    if self.ndim < 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {self.ndim}D")
    _check_float("pdist", "X1", self)
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    rows, cols = np.triu_indices(self.shape[-2], 1)
    return _norms(self[..., rows, :] - self[..., cols, :], p)


def pdist_backward(
    grad: np.ndarray, self: np.ndarray, p: float, pdist: np.ndarray
) -> np.ndarray:
    """The gradient of pdist: cdist's of the rows against themselves, with the pair
    gradients and distances laid out as symmetric matrices. Leading dims are a
    batch, broadcast among the three (vmap's rule), the result self's rows for
    each."""
    n = self.shape[-2]
    batch = np.broadcast_shapes(grad.shape[:-1], self.shape[:-2], pdist.shape[:-1])
    rows, cols = np.triu_indices(n, 1)
    full_grad = np.zeros(batch + (n, n), dtype=grad.dtype)
    full_dist = np.zeros(batch + (n, n), dtype=pdist.dtype)
    full_grad[..., rows, cols] = full_grad[..., cols, rows] = grad
    full_dist[..., rows, cols] = full_dist[..., cols, rows] = pdist
    x = np.broadcast_to(self, batch + self.shape[-2:])
    return cdist_backward(full_grad, x, x, p, full_dist)
