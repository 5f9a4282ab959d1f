"""Composites of the reduction family: var, std, any, all, value-selecting backwards."""

from __future__ import annotations


from ..tensor import Tensor
from ._common import _zeros

__all__ = [
    "var",
    "var_dim",
    "std",
    "std_dim",
    "any_elements",
    "all_elements",
    "value_selecting_reduction_backward",
]


def var(self: Tensor, unbiased: bool = True) -> Tensor:
    """var(unbiased) is var.correction with correction 1 (unbiased) or 0."""
    return self.var(None, correction=1 if unbiased else 0)


def var_dim(
    self: Tensor,
    dim: tuple[int, ...] | None,
    unbiased: bool = True,
    keepdim: bool = False,
) -> Tensor:
    return self.var(dim, correction=1 if unbiased else 0, keepdim=keepdim)


def std(self: Tensor, unbiased: bool = True) -> Tensor:
    """std(unbiased) is std.correction with correction 1 (unbiased) or 0."""
    return self.std(None, correction=1 if unbiased else 0)


def std_dim(
    self: Tensor,
    dim: tuple[int, ...] | None,
    unbiased: bool = True,
    keepdim: bool = False,
) -> Tensor:
    return self.std(dim, correction=1 if unbiased else 0, keepdim=keepdim)


def value_selecting_reduction_backward(
    grad: Tensor, dim: int, indices: Tensor, sizes: tuple[int, ...], keepdim: bool
) -> Tensor:
    """The gradient of max.dim, min.dim, ...: each slice's gradient goes to the one
    position `indices` selected."""
    if not keepdim and len(sizes) > 0:
        grad = grad.unsqueeze(dim)
        indices = indices.unsqueeze(dim)
    return _zeros(sizes, grad).scatter(dim, indices, grad)


def any_elements(self: Tensor) -> Tensor:
    """any(): whether any element is non-zero (any.dims over every dim)."""
    return self.any(None)


def all_elements(self: Tensor) -> Tensor:
    """all(): whether every element is non-zero (all.dims over every dim)."""
    return self.all(None)
