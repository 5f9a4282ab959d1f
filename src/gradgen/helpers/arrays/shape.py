"""Array twins of the view and shape operators and helpers a formula calls."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ...numpy_kernels import (
    _wrap_dim,
    permute as _permute,
    squeeze as _squeeze,
    t as _t,
    transpose as _transpose,
    unsqueeze as _unsqueeze,
    view as _view,
)
from ._common import as_array

__all__ = [
    "t",
    "transpose",
    "view",
    "reshape",
    "reshape_as",
    "squeeze",
    "unsqueeze",
    "unsqueeze_to",
    "permute",
    "permute_backwards",
]


def t(self: np.ndarray) -> np.ndarray:
    return as_array(_t(as_array(self)))


def transpose(self: np.ndarray, dim0: int, dim1: int) -> np.ndarray:
    return as_array(_transpose(as_array(self), dim0, dim1))


def view(self: np.ndarray, size: Sequence[int]) -> np.ndarray:
    return as_array(_view(as_array(self), size))


def reshape(self: np.ndarray, shape: Sequence[int]) -> np.ndarray:
    """A view when the memory allows one, else a reshaped contiguous copy."""
    data = as_array(self)
    if data.flags.c_contiguous or data.ndim < 2:
        return as_array(_view(data, shape))
    try:
        return as_array(_view(data, shape))
    except RuntimeError:
        return as_array(_view(np.copy(data, order="C"), shape))


def reshape_as(self: np.ndarray, other: np.ndarray) -> np.ndarray:
    return reshape(self, tuple(other.shape))


def squeeze(self: np.ndarray, dim: int | None = None) -> np.ndarray:
    return as_array(_squeeze(as_array(self), dim))


def unsqueeze(self: np.ndarray, dim: int) -> np.ndarray:
    return as_array(_unsqueeze(as_array(self), dim))


def unsqueeze_to(grad: np.ndarray, *args: Any) -> np.ndarray:
    """Put back the size-1 dimensions that squeeze removed."""
    return reshape(grad, args[-1])


def permute(self: np.ndarray, dims: Sequence[int]) -> np.ndarray:
    return as_array(_permute(as_array(self), dims))


def permute_backwards(grad: np.ndarray, dims: Sequence[int]) -> np.ndarray:
    """Undo a permutation: permute by the inverse of `dims`."""
    ndim = len(dims)
    inverse = [0] * ndim
    for position, dim in enumerate(dims):
        inverse[_wrap_dim(dim, ndim)] = position
    return permute(grad, inverse)
