"""Formula helpers of the loss family: reductions of a loss, double backwards."""

from __future__ import annotations

from typing import Any


import numpy as np

from ..dtypes import Reduction
from ..generated.ops import huber_loss_backward as _huber_loss_backward
from ..generated.ops import log_sigmoid as _log_sigmoid
from ..generated.ops import multi_margin_loss_backward as _multi_margin_loss_backward
from ..generated.ops import (
    multilabel_margin_loss_backward as _multilabel_margin_loss_backward,
)
from ..generated.ops import soft_margin_loss_backward as _soft_margin_loss_backward
from ..tensor import Tensor
from ._common import Number, _full, _zeros

__all__ = [
    "apply_loss_reduction",
    "mse_loss_double_backward",
    "binary_cross_entropy_target_backward",
    "binary_cross_entropy_double_backward",
    "binary_cross_entropy_double_backward_target",
    "binary_cross_entropy_double_backward_grad_output",
    "smooth_l1_loss_double_backward",
    "huber_loss_double_backward",
    "huber_loss_double_backward_grad_output",
    "binary_cross_entropy_with_logits_backward",
    "binary_cross_entropy_with_logits_target_backward",
    "soft_margin_loss_double_backward",
    "soft_margin_loss_double_backward_grad_output",
    "multi_margin_loss_double_backward",
    "multi_margin_loss_double_backward_grad_output",
    "multilabel_margin_loss_double_backward_grad_output",
]


_BCE_EPS = 1e-12  # binary_cross_entropy's epsilon, for all dtypes (as PyTorch)


def apply_loss_reduction(unreduced: Tensor, reduction: int) -> Tensor:
    """The mean, the sum, or the loss unreduced, as `reduction` says."""
    if reduction == Reduction.MEAN:
        return unreduced.mean()
    if reduction == Reduction.SUM:
        return unreduced.sum()
    return unreduced


def _divide_by_numel(tensor: Tensor, numel: int) -> Tensor:
    """`tensor / numel` (a mean's scale; an empty input gives nan as 0/0 does)."""
    return tensor * (1.0 / numel if numel else float("nan"))


def mse_loss_double_backward(grad: Tensor, input: Tensor, reduction: int) -> Tensor:
    """The derivative of mse_loss_backward with respect to self: 2 * grad (/ numel)."""
    grad_input = 2 * grad
    if reduction == Reduction.MEAN:
        grad_input = _divide_by_numel(grad_input, input.numel())
    return grad_input


def binary_cross_entropy_target_backward(
    grad: Tensor,
    self: Tensor,
    target: Tensor,
    weight: Tensor | None,
    reduction: int,
) -> Tensor:
    """d(binary_cross_entropy)/d(target) applied to grad: -logit(self) * grad, with
    logit(p) = log(p) - log1p(-p) (gradgen has no logit operator)."""
    logit = self.log() - self.neg().log1p()
    grad_target = logit.neg() * grad
    if weight is not None:
        grad_target = grad_target * weight
    if reduction == Reduction.MEAN:
        grad_target = _divide_by_numel(grad_target, target.numel())
    return grad_target


def binary_cross_entropy_double_backward(
    grad_output: Tensor,
    grad: Tensor,
    input: Tensor,
    target: Tensor,
    weight: Tensor | None,
    reduction: int,
) -> Tensor:
    """The derivative of binary_cross_entropy_backward with respect to self."""
    eps = _BCE_EPS
    input_plus_eps = input + eps
    one_minus_input_plus_eps = 1 - input + eps
    numerator = input * input - 2 * input * target + target
    denominator = input_plus_eps.pow(2) * one_minus_input_plus_eps.pow(2)
    grad_input = numerator * denominator.pow(-1) * (grad * grad_output)
    if weight is not None:
        grad_input = grad_input * weight
    if reduction == Reduction.MEAN:
        return _divide_by_numel(grad_input, input.numel())
    return grad_input


def binary_cross_entropy_double_backward_grad_output(
    grad: Tensor,
    input: Tensor,
    target: Tensor,
    weight: Tensor | None,
    reduction: int,
) -> Tensor:
    """The derivative of binary_cross_entropy_backward with respect to grad_output."""
    eps = _BCE_EPS
    grad_grad_output = (
        (input - target) * ((input + eps) * (1 - input + eps)).pow(-1) * grad
    )
    if weight is not None:
        grad_grad_output = grad_grad_output * weight
    if reduction == Reduction.MEAN:
        return _divide_by_numel(grad_grad_output, input.numel())
    return grad_grad_output


def binary_cross_entropy_double_backward_target(
    grad: Tensor,
    grad_output: Tensor,
    self: Tensor,
    target: Tensor,
    weight: Tensor | None,
    reduction: int,
) -> Tensor:
    """The derivative of binary_cross_entropy_backward with respect to target:
    -grad * grad_output / max((1 - self) * self, eps).

    PyTorch clamps the denominator in place under no_grad, so the clamp changes its
    value but not its gradient; adding the (constant) difference does the same."""
    result = -grad * grad_output
    if weight is not None:
        result = result * weight
    denominator = (1 - self) * self
    clamped = np.maximum(denominator._data, _BCE_EPS)
    denominator = denominator + Tensor(clamped - denominator._data)
    result = result * denominator.pow(-1)
    if reduction == Reduction.MEAN:
        result = _divide_by_numel(result, target.numel())
    return result


def smooth_l1_loss_double_backward(
    grad: Tensor, input: Tensor, target: Tensor, reduction: int, beta: float
) -> Tensor:
    """The derivative of smooth_l1_loss_backward with respect to self: grad / beta
    where |self - target| < beta, else 0 (all 0 for beta == 0), / numel for the mean."""
    if beta == 0:
        return _zeros(grad.shape, grad.dtype)
    inside = (input - target).abs() < beta
    grad_input = grad * inside * (1.0 / beta)
    if reduction == Reduction.MEAN:
        grad_input = _divide_by_numel(grad_input, input.numel())
    return grad_input


def huber_loss_double_backward(
    grad: Tensor, input: Tensor, target: Tensor, reduction: int, delta: float
) -> Tensor:
    """The derivative of huber_loss_backward with respect to self: grad where
    |self - target| < delta, else 0, / numel for the mean."""
    grad_input = grad * ((input - target).abs() < delta)
    if reduction == Reduction.MEAN:
        grad_input = _divide_by_numel(grad_input, input.numel())
    return grad_input


def huber_loss_double_backward_grad_output(
    grad: Tensor,
    grad_output: Tensor,
    input: Tensor,
    target: Tensor,
    reduction: int,
    delta: float,
) -> Tensor:
    """The derivative of huber_loss_backward with respect to grad_output: the backward
    applied to grad itself (unreduced), or, for a reduced (0-d) grad_output, the sum of
    grad times the backward of a unit grad_output."""
    if reduction == Reduction.NONE:
        return _huber_loss_backward(grad, input, target, reduction, delta)
    ones = Tensor(np.ones_like(grad_output._data))
    unit = _huber_loss_backward(ones, input, target, reduction, delta)
    return (unit * grad).sum()


def binary_cross_entropy_with_logits_backward(
    grad: Tensor,
    input: Tensor,
    target: Tensor,
    weight: Tensor | None,
    pos_weight: Tensor | None,
    reduction: int,
) -> Tensor:
    """d(binary_cross_entropy_with_logits)/d(self) applied to grad: sigmoid(x) - y, or
    with pos_weight p: (p * y + 1 - y) * sigmoid(x) - p * y; times weight, / numel
    of self for the mean."""
    if pos_weight is not None:
        t = pos_weight * target
        grad_input = (t + 1 - target) * input.sigmoid() - t
    else:
        grad_input = input.sigmoid() - target
    grad_input = grad_input * grad
    if weight is not None:
        grad_input = grad_input * weight
    if reduction == Reduction.MEAN:
        grad_input = _divide_by_numel(grad_input, input.numel())
    return grad_input


def binary_cross_entropy_with_logits_target_backward(
    grad_output: Tensor,
    self: Tensor,
    target: Tensor,
    weight: Tensor | None,
    pos_weight: Tensor | None,
    reduction: int,
) -> Tensor:
    """d(binary_cross_entropy_with_logits)/d(target) applied to grad_output: -x, or
    with pos_weight p: log_sigmoid(-x) - p * log_sigmoid(x); times weight, / numel of
    target for the mean."""
    if pos_weight is not None:
        grad_target = _log_sigmoid(-self) - _log_sigmoid(self) * pos_weight
    else:
        grad_target = -self
    grad_target = grad_target * grad_output
    if weight is not None:
        grad_target = grad_target * weight
    if reduction == Reduction.MEAN:
        grad_target = _divide_by_numel(grad_target, target.numel())
    return grad_target


def soft_margin_loss_double_backward(
    grad: Tensor, input: Tensor, target: Tensor, reduction: int
) -> Tensor:
    """The derivative of soft_margin_loss_backward with respect to input, applied to
    grad: grad * target^2 * z / (1 + z)^2, z = exp(-target * input) (/ numel)."""
    z = (input * -target).exp()
    grad_input = grad * (target * target) * z / ((z + 1) * (z + 1))
    if reduction == Reduction.MEAN:
        grad_input = _divide_by_numel(grad_input, input.numel())
    return grad_input


def soft_margin_loss_double_backward_grad_output(
    grad: Tensor, grad_output: Tensor, input: Tensor, target: Tensor, reduction: int
) -> Tensor:
    """The derivative of soft_margin_loss_backward with respect to grad_output (it is
    linear in it), applied to grad."""
    if reduction == Reduction.NONE:
        return _soft_margin_loss_backward(grad, input, target, reduction)
    ones = _full(grad_output.shape, 1, grad_output.dtype)
    return (_soft_margin_loss_backward(ones, input, target, reduction) * grad).sum()


def _per_output(products: Tensor, grad_output: Tensor) -> Tensor:
    """products (one per input element) summed to grad_output's shape: per sample
    (the class dimension summed) when unreduced over rows, else all of them."""
    if grad_output.dim() == 1:
        return products.sum(-1)
    return products.sum()


def multi_margin_loss_double_backward_grad_output(
    grad: Tensor,
    grad_output: Tensor,
    input: Tensor,
    target: Tensor,
    p: Number,
    margin: Number,
    weight: Tensor | None,
    reduction: int,
) -> Tensor:
    """The derivative of multi_margin_loss_backward with respect to grad_output (it is
    linear in it), applied to grad (gradgen's: PyTorch has none)."""
    ones = _full(grad_output.shape, 1, grad_output.dtype)
    unit = _multi_margin_loss_backward(
        ones, input, target, p, margin, weight, reduction
    )
    return _per_output(unit * grad, grad_output)


def multi_margin_loss_double_backward(
    grad: Tensor,
    grad_output: Tensor,
    input: Tensor,
    target: Tensor,
    p: Number,
    margin: Number,
    weight: Tensor | None,
    reduction: int,
) -> Tensor:
    """The derivative of multi_margin_loss_backward with respect to input, applied to
    grad G (gradgen's: PyTorch has none). Zero for p == 1 (piecewise linear); for
    p == 2 each violated class j adds c * (G[j] - G[y]) to j and takes it from the
    target y, c = 2 * w[y] * grad_output / C (/ N for the mean)."""
    if p == 1:
        return grad * 0
    rows = input.detach()._data.reshape(-1, input.shape[-1] if input.dim() else 1)
    labels = target._data.reshape(-1, 1)
    classes = rows.shape[1]
    picked = np.take_along_axis(rows, labels, 1)
    others = np.arange(classes)[None, :] != labels
    violated = others & (margin - picked + rows > 0)
    scale: Any = 2.0 / classes / (rows.shape[0] if reduction == Reduction.MEAN else 1)
    if weight is not None:
        scale = scale * weight._data[labels]
    coefficient = Tensor(np.asarray(violated * scale, rows.dtype))
    onehot = Tensor(np.asarray(~others, rows.dtype))
    grads = grad.reshape(rows.shape)
    differences = coefficient * (grads - grads.gather(1, Tensor(labels)))
    result = differences - onehot * differences.sum(1, True)
    per_sample = (
        grad_output.reshape(-1, 1) if reduction == Reduction.NONE else grad_output
    )
    return (result * per_sample).reshape(input.shape)


def multilabel_margin_loss_double_backward_grad_output(
    grad: Tensor,
    grad_output: Tensor,
    input: Tensor,
    target: Tensor,
    reduction: int,
    is_target: Tensor,
) -> Tensor:
    """The derivative of multilabel_margin_loss_backward with respect to grad_output
    (it is linear in it), applied to grad (gradgen's: PyTorch has none)."""
    ones = _full(grad_output.shape, 1, grad_output.dtype)
    unit = _multilabel_margin_loss_backward(ones, input, target, reduction, is_target)
    return _per_output(unit * grad, grad_output)
