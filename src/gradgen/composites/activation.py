"""Composites of the activation family: softmax, log_softmax, log_sigmoid."""

from __future__ import annotations


from ..tensor import Tensor
from ._common import _ops

__all__ = ["softmax", "log_softmax", "log_sigmoid"]


def softmax(self: Tensor, dim: int, dtype: object = None) -> Tensor:
    """_softmax of the input converted to `dtype` first when one is given."""
    from ..generated.ops import _softmax

    converted = self if dtype is None else self.to(dtype)
    return _softmax(converted, dim, False)


def log_softmax(self: Tensor, dim: int, dtype: object = None) -> Tensor:
    """_log_softmax of the input converted to `dtype` first when one is given."""
    from ..generated.ops import _log_softmax

    converted = self if dtype is None else self.to(dtype)
    return _log_softmax(converted, dim, False)


def log_sigmoid(self: Tensor) -> Tensor:
    """log(sigmoid(self)): the first output of log_sigmoid_forward (whose node is
    LogSigmoidBackward0, as in PyTorch)."""
    return _ops().log_sigmoid_forward(self)[0]  # type: ignore[no-any-return]
