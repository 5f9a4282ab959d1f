"""Composites of the dropout family (PyTorch's Dropout.cpp): dropout and its noise."""

from __future__ import annotations


import numpy as np

from ..random import rand
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
    from gradgen's generator (gradgen.rand, so gradgen.manual_seed applies)."""
    keep = rand(*input.shape, dtype="float64")._data < 1 - p
    return Tensor((keep / (1 - p)).astype(input._data.dtype))
