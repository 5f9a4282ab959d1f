"""torch.nn.functional's likelihood and multi-label losses written as composites:
gaussian_nll_loss, poisson_nll_loss, multilabel_soft_margin_loss."""

from __future__ import annotations

import math

from gradgen.factories import ones_like
from gradgen.generated import ops
from gradgen.grad_mode import no_grad
from gradgen.tensor import Tensor

from .._reduction import legacy_get_string

__all__ = ["gaussian_nll_loss", "poisson_nll_loss", "multilabel_soft_margin_loss"]


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


# PyTorch's gaussian_nll_loss takes var as a Python float or a tensor; anything else
# reaches torch.any as a non-tensor, whose argument parser rejects it with this text.
_ANY_SIGNATURES = (
    " * (Tensor input, *, Tensor out = None)\n"
    " * (Tensor input, tuple of ints dim = None, bool keepdim = False, *, "
    "Tensor out = None)\n"
    " * (Tensor input, int dim, bool keepdim = False, *, Tensor out = None)\n"
)


def _type_name(value: object) -> str:
    """A value's type as PyTorch's argument parser spells it (`bool`, `numpy.bool`)."""
    kind = type(value)
    if kind.__module__ == "builtins":
        return kind.__name__
    return f"{kind.__module__}.{kind.__qualname__}"


def _has_negative(var: object) -> bool:
    """Whether `var` (not a float) has a negative entry; PyTorch's TypeError for a var
    that is neither a float nor a tensor (an int, a numpy scalar or array)."""
    negative = var < 0  # type: ignore[operator]
    if not isinstance(negative, Tensor):
        raise TypeError(
            "any() received an invalid combination of arguments - got "
            f"({_type_name(negative)}), but expected one of:\n" + _ANY_SIGNATURES
        )
    return bool(negative.any())


def _gaussian_var(input: Tensor, var: Tensor | float) -> Tensor:
    """var as a tensor that broadcasts against input (PyTorch's checks: no negative
    entry; input's size, input's size without its last dimension, or one dimension
    of size 1 where input's differs)."""
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = var * ones_like(input)
    elif _has_negative(var):
        raise ValueError("var has negative entry/entries")
    input_shape, var_shape = tuple(input.shape), tuple(var.shape)
    if var_shape == input_shape:
        return var
    if input_shape[:-1] == var_shape:
        return var.unsqueeze(-1)
    if len(input_shape) == len(var_shape):
        mismatched = [v for i, v in zip(input_shape, var_shape) if i != v]
        if sum(mismatched) == 1:
            return var
    raise ValueError("var is of incorrect size")


def gaussian_nll_loss(
    input: Tensor,
    target: Tensor,
    var: Tensor | float,
    full: bool = False,
    eps: float = 1e-6,
    reduction: str = "mean",
) -> Tensor:
    """0.5 * (log(var) + (input - target)^2 / var), plus 0.5 * log(2 pi) when full;
    var clamped below at eps without changing its gradient (as PyTorch's)."""
    var = _gaussian_var(input, var)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var.clone()
    with no_grad():
        var.clamp_(min=eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def poisson_nll_loss(
    input: Tensor,
    target: Tensor,
    log_input: bool = True,
    full: bool = False,
    size_average: bool | None = None,
    eps: float = 1e-8,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """exp(input) - target * input (log_input), or input - target * log(input + eps);
    with full, Stirling's approximation of log(target!) where target > 1."""
    if size_average is not None or reduce is not None:
        reduction = legacy_get_string(size_average, reduce)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not a valid value for reduction")
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        stirling = target * target.log() - target + 0.5 * (2 * math.pi * target).log()
        loss = loss + ops.masked_fill(stirling, target <= 1, 0)
    return _reduce(loss, reduction)


def multilabel_soft_margin_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """The binary cross entropy of sigmoid(input) against each label of target,
    optionally weighted, averaged over the classes (the last dimension)."""
    if size_average is not None or reduce is not None:
        reduction = legacy_get_string(size_average, reduce)
    loss = -(target * ops.log_sigmoid(input) + (1 - target) * ops.log_sigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(dim=class_dim) / input.size(class_dim)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    return _reduce(loss, reduction)
