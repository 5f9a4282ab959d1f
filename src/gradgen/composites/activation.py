"""Composites of the activation family: softmax, log_softmax, log_sigmoid."""

from __future__ import annotations


from ..tensor import Tensor
from ..generated import ops  # functions read at call time (the generated tie)

__all__ = ["softmax", "log_softmax", "log_sigmoid"]


def softmax(self: Tensor, dim: int, dtype: object = None) -> Tensor:
    """_softmax of the input converted to `dtype` first when one is given."""
    converted = self if dtype is None else self.to(dtype)
    return ops._softmax(converted, dim, False)


def log_softmax(self: Tensor, dim: int, dtype: object = None) -> Tensor:
    """_log_softmax of the input converted to `dtype` first when one is given."""
    converted = self if dtype is None else self.to(dtype)
    return ops._log_softmax(converted, dim, False)


def log_sigmoid(self: Tensor) -> Tensor:
    """log(sigmoid(self)): the first output of log_sigmoid_forward (whose node is
    LogSigmoidBackward0, as in PyTorch)."""
    return ops.log_sigmoid_forward(self)[0]
