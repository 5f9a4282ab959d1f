"""torch.optim.RAdam: Adam with the variance of the adaptive rate rectified (Liu et al.)."""

from __future__ import annotations

from typing import Any

import numpy as np

from gradgen.tensor import Tensor

from .adam import apply_weight_decay, check_adam_arguments
from .optimizer import (
    Optimizer,
    ParamsT,
    count_step,
    data,
    decay_mean_square_,
    lerp_,
    new_state,
    new_step,
    scalar,
)

__all__ = ["RAdam"]


class RAdam(Optimizer):
    """PyTorch's update at step t, for each parameter p with gradient g:

    g = g + weight_decay * p   (or p = p * (1 - lr * weight_decay) if decoupled)
    m = lerp(m, g, 1 - beta1);  v = beta2 * v + (1 - beta2) * g * g
    rho_inf = 2 / (1 - beta2) - 1;  rho_t = rho_inf - 2 t beta2**t / (1 - beta2**t)
    m_hat = m / (1 - beta1**t)
    rho_t > 5: p = p - m_hat * lr * sqrt(1 - beta2**t) / (sqrt(v) + eps) * r_t, with
               r_t = sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho_t))
    else:      p = p - m_hat * lr
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_adam_arguments(lr, eps, betas, weight_decay)
        defaults = dict(
            lr=lr,
            betas=betas,
            eps=eps,
            weight_decay=weight_decay,
            maximize=maximize,
            foreach=foreach,
            capturable=capturable,
            decoupled_weight_decay=decoupled_weight_decay,
            differentiable=differentiable,
        )
        super().__init__(params, defaults)

    def _init_state(self, param: np.ndarray, group: dict[str, Any]) -> dict[str, Any]:
        return {
            "step": new_step(),
            "exp_avg": new_state(param),
            "exp_avg_sq": new_state(param),
        }

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
        exp_avg, exp_avg_sq = data(state, "exp_avg"), data(state, "exp_avg_sq")
        lerp_(exp_avg, grad, 1 - beta1)
        decay_mean_square_(exp_avg_sq, grad, beta2)
        bias_correction1 = 1 - beta1**step
        bias_correction2 = 1 - beta2**step
        corrected = exp_avg / bias_correction1
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
        if rho_t > 5.0:
            rect = (
                (rho_t - 4)
                * (rho_t - 2)
                * rho_inf
                / ((rho_inf - 4) * (rho_inf - 2) * rho_t)
            ) ** 0.5
            root = np.sqrt(exp_avg_sq)
            root += group["eps"]
            adaptive = (bias_correction2**0.5) / root
            param += -1.0 * (corrected * lr * adaptive * rect)
        else:
            param += -1.0 * (corrected * lr)
