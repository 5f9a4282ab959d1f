"""Composites of the activation family: softmax, log_softmax, log_sigmoid, prelu."""

from __future__ import annotations


from ..tensor import Tensor
from ..generated import ops  # functions read at call time (the generated tie)

__all__ = ["softmax", "log_softmax", "log_sigmoid", "prelu"]


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


def prelu(self: Tensor, weight: Tensor) -> Tensor:
    """_prelu_kernel with the weight, one per channel (dimension 1, or 0 for a vector)
    or one for all, reshaped to broadcast along the channels."""
    channels = weight.numel()
    if channels != 1:
        if self.dim() == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        size = self.shape[1] if self.dim() >= 2 else self.shape[0]
        if channels != size:
            raise RuntimeError(
                "Mismatch of parameter numbers and input channel size. Found parameter "
                f"numbers = {channels} and channel size = {size}."
            )
    if weight.dim() > 1:
        raise RuntimeError(
            f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = "
            f"{weight.dim()}"
        )
    if self.dim() >= 2:
        shape = [1] * self.dim()
        shape[1] = channels
        weight = weight.reshape(shape)
    return ops._prelu_kernel(self, weight)
