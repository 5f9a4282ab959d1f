"""Array twins of the indexing operators and helpers a formula calls."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ...numpy_kernels import (
    gather as _gather,
    index_select as _index_select,
    scatter as _scatter,
)
from ._common import as_array
from .elementwise import eq, masked_fill
from .reduction import sum  # noqa: A004  (PyTorch's name)
from .shape import unsqueeze

__all__ = [
    "gather",
    "index_select",
    "scatter",
    "value_selecting_reduction_backward_symint",
    "masked_fill_backward",
]


def gather(
    self: np.ndarray, dim: int, index: np.ndarray, sparse_grad: bool = False
) -> np.ndarray:
    return as_array(_gather(as_array(self), dim, as_array(index)))


def index_select(self: np.ndarray, dim: int, index: np.ndarray) -> np.ndarray:
    return as_array(_index_select(as_array(self), dim, as_array(index)))


def scatter(
    self: np.ndarray, dim: int, index: np.ndarray, src: Any, reduce: str | None = None
) -> np.ndarray:
    """scatter.src / scatter.value (and their reduce overloads)."""
    if isinstance(src, (np.ndarray, np.generic)):
        src = as_array(src)
    return as_array(_scatter(as_array(self), dim, as_array(index), src, reduce))


def value_selecting_reduction_backward_symint(
    grad: np.ndarray,
    dim: int,
    indices: np.ndarray,
    sizes: Sequence[int],
    keepdim: bool,
) -> np.ndarray:
    """Each slice's gradient put at the one position `indices` selected."""
    if not keepdim and len(sizes) > 0:
        grad = unsqueeze(grad, dim)
        indices = unsqueeze(indices, dim)
    return scatter(np.zeros(tuple(sizes), grad.dtype), dim, indices, grad)


def masked_fill_backward(grad: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The gradient of masked_fill's value: the sum of grad where mask is set."""
    return sum(masked_fill(grad, eq(mask, False), 0))
