"""Composites of the dropout family (PyTorch's Dropout.cpp): dropout and its noise."""

from __future__ import annotations


import numpy as np

from ..dtypes import float64
from ..factories import zeros
from ..generated import ops  # functions read at call time (the generated tie)
from ..tensor import Tensor

__all__ = ["dropout"]


def dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """input * mask / (1 - p), the mask drawn from gradgen's generator with P(1) = 1 - p
    (PyTorch's CPU dropout, MulBackward0); the input itself when p == 0, when not
    training or when it is empty; input * 0 when p == 1."""
    if not 0 <= p <= 1:
        raise RuntimeError(
            f"dropout probability has to be between 0 and 1, but got {p}"
        )
    if p == 0 or not train or input.numel() == 0:
        return input
    if p == 1:
        return input * Tensor(np.zeros((), input._data.dtype))
    return input * _dropout_noise(input, p)


def _dropout_noise(input: Tensor, p: float) -> Tensor:
    """A tensor of input's shape and dtype: 1 / (1 - p) with probability 1 - p, else 0,
    from gradgen's generator (gradgen.manual_seed applies). Drawn by operators (the
    mask by bernoulli, in float64 as gradgen.rand() < 1 - p would), so gradgen.compile
    records the draw and its compiled code draws from the generator in eager's order."""
    keep = ops.bernoulli(zeros(tuple(input.shape), dtype=float64), 1 - p)
    return ops._to_copy(keep / (1 - p), dtype=input.dtype)
