"""torch.optim.Adamax: Adam with the infinity norm in place of the second moment."""

from __future__ import annotations

from typing import Any

import numpy as np

from gradgen.tensor import Tensor

from .adam import check_adam_arguments
from .optimizer import (
    Optimizer,
    ParamsT,
    add_quotient_,
    count_step,
    data,
    lerp_,
    new_state,
    new_step,
    scalar,
)

__all__ = ["Adamax"]


class Adamax(Optimizer):
    """PyTorch's update at step t, for each parameter p with gradient g:

    g = g + weight_decay * p
    m = lerp(m, g, 1 - beta1)
    u = max(beta2 * u, |g| + eps)
    p = p - lr / (1 - beta1**t) * m / u
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        check_adam_arguments(lr, eps, betas, weight_decay)
        defaults = dict(
            lr=lr,
            betas=betas,
            eps=eps,
            weight_decay=weight_decay,
            foreach=foreach,
            maximize=maximize,
            differentiable=differentiable,
            capturable=capturable,
        )
        super().__init__(params, defaults)

    def _init_state(self, param: np.ndarray, group: dict[str, Any]) -> dict[str, Any]:
        return {
            "step": new_step(),
            "exp_avg": new_state(param),
            "exp_inf": new_state(param),
        }

    def _update(
        self,
        param: np.ndarray,
        grad: np.ndarray,
        state: dict[str, Any],
        group: dict[str, Any],
    ) -> None:
        beta1, beta2 = group["betas"]
        step = count_step(state["step"])
        if group["weight_decay"] != 0:
            grad = grad + group["weight_decay"] * param
        exp_avg, exp_inf = data(state, "exp_avg"), data(state, "exp_inf")
        lerp_(exp_avg, grad, 1 - beta1)
        exp_inf *= beta2
        bound = np.abs(grad)
        bound += group["eps"]
        np.maximum(exp_inf, bound, out=exp_inf)
        clr = scalar(group["lr"]) / (1 - beta1**step)
        add_quotient_(param, -clr, exp_avg, exp_inf)
