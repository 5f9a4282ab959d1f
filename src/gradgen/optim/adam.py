"""torch.optim.Adam: adaptive moment estimation (and AdamW's decoupled weight decay)."""

from __future__ import annotations

from typing import Any

import numpy as np

from gradgen.tensor import Tensor

from .optimizer import (
    Optimizer,
    ParamsT,
    add_quotient_,
    count_step,
    data,
    decay_mean_square_,
    lerp_,
    new_state,
    new_step,
    scalar,
)

__all__ = ["Adam"]


def check_adam_arguments(
    lr: Any, eps: float, betas: tuple[float, float], weight_decay: float
) -> None:
    """PyTorch's checks of the arguments Adam's family shares."""
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    if not 0.0 <= betas[0] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
    if not 0.0 <= betas[1] < 1.0:
        raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


def apply_weight_decay(
    param: np.ndarray, grad: np.ndarray, group: dict[str, Any], lr: float
) -> np.ndarray:
    """L2 penalty added to the gradient, or (decoupled, AdamW's) the parameter
    shrunk by lr * weight_decay; the gradient to use."""
    weight_decay = float(group["weight_decay"])
    if weight_decay == 0:
        return grad
    if group.get("decoupled_weight_decay", False):
        param *= 1 - lr * weight_decay
        return grad
    return grad + weight_decay * param


class Adam(Optimizer):
    """PyTorch's update at step t, for each parameter p with gradient g:

    g = g + weight_decay * p   (or p = p * (1 - lr * weight_decay) if decoupled)
    m = lerp(m, g, 1 - beta1)
    v = beta2 * v + (1 - beta2) * g * g
    v_max = max(v_max, v) (amsgrad), used in place of v below
    p = p - lr / (1 - beta1**t) * m / (sqrt(v) / sqrt(1 - beta2**t) + eps)
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        amsgrad: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
        decoupled_weight_decay: bool = False,
    ) -> None:
        check_adam_arguments(lr, eps, betas, weight_decay)
        defaults = dict(
            lr=lr,
            betas=(scalar(betas[0]), scalar(betas[1])),
            eps=eps,
            weight_decay=weight_decay,
            amsgrad=amsgrad,
            maximize=maximize,
            foreach=foreach,
            capturable=capturable,
            differentiable=differentiable,
            fused=fused,
            decoupled_weight_decay=decoupled_weight_decay,
        )
        super().__init__(params, defaults)
        if fused:
            if differentiable:
                raise RuntimeError("`fused` does not support `differentiable`")
            if foreach:
                raise RuntimeError("`fused` and `foreach` cannot be `True` together.")

    def _init_state(self, param: np.ndarray, group: dict[str, Any]) -> dict[str, Any]:
        state = {
            "step": new_step(),
            "exp_avg": new_state(param),
            "exp_avg_sq": new_state(param),
        }
        if group["amsgrad"]:
            state["max_exp_avg_sq"] = new_state(param)
        return state

    def _update(
        self,
        param: np.ndarray,
        grad: np.ndarray,
        state: dict[str, Any],
        group: dict[str, Any],
    ) -> None:
        lr = scalar(group["lr"])
        beta1, beta2 = group["betas"]
        step = count_step(state["step"])
        grad = apply_weight_decay(param, grad, group, lr)
        exp_avg, second = data(state, "exp_avg"), data(state, "exp_avg_sq")
        lerp_(exp_avg, grad, 1 - beta1)
        decay_mean_square_(second, grad, beta2)
        if group["amsgrad"]:
            maximum = data(state, "max_exp_avg_sq")
            np.maximum(maximum, second, out=maximum)
            second = maximum
        step_size = lr / (1 - beta1**step)
        denom = np.sqrt(second)
        denom /= (1 - beta2**step) ** 0.5
        denom += group["eps"]
        add_quotient_(param, -step_size, exp_avg, denom)
