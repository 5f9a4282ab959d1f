"""torch.optim.NAdam: Adam with Nesterov momentum (Dozat), with momentum decay."""

from __future__ import annotations

from typing import Any

import numpy as np

from gradgen.tensor import Tensor

from .adam import apply_weight_decay, check_adam_arguments
from .optimizer import (
    Optimizer,
    ParamsT,
    add_quotient_,
    check_argument,
    count_step,
    data,
    decay_mean_square_,
    lerp_,
    new_state,
    new_step,
    scalar,
)

__all__ = ["NAdam"]


class NAdam(Optimizer):
    """PyTorch's update at step t, for each parameter p with gradient g:

    mu_t = beta1 * (1 - 0.5 * 0.96**(t * momentum_decay)); P_t = mu_1 * ... * mu_t
    g = g + weight_decay * p   (or p = p * (1 - lr * weight_decay) if decoupled)
    m = lerp(m, g, 1 - beta1);  v = beta2 * v + (1 - beta2) * g * g
    d = sqrt(v / (1 - beta2**t)) + eps
    p = p - lr * (1 - mu_t) / (1 - P_t) * g / d - lr * mu_{t+1} / (1 - P_t mu_{t+1}) * m / d

    P_t is kept as a float32 0-d tensor ("mu_product"), rounded as PyTorch rounds it.
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum_decay: float = 4e-3,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_adam_arguments(lr, eps, betas, weight_decay)
        check_argument("momentum_decay value", momentum_decay)
        defaults = dict(
            lr=lr,
            betas=betas,
            eps=eps,
            weight_decay=weight_decay,
            momentum_decay=momentum_decay,
            decoupled_weight_decay=decoupled_weight_decay,
            maximize=maximize,
            foreach=foreach,
            capturable=capturable,
            differentiable=differentiable,
        )
        super().__init__(params, defaults)

    def _init_state(self, param: np.ndarray, group: dict[str, Any]) -> dict[str, Any]:
        return {
            "step": new_step(),
            "mu_product": Tensor(np.ones((), dtype=np.float32)),
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
        bias_correction2 = 1 - beta2**step
        grad = apply_weight_decay(param, grad, group, lr)
        decay = group["momentum_decay"]
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * decay)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * decay)))
        product = state["mu_product"]._data
        product *= product.dtype.type(mu)  # in the product's dtype (float32)
        mu_product = float(product)
        exp_avg, exp_avg_sq = data(state, "exp_avg"), data(state, "exp_avg_sq")
        lerp_(exp_avg, grad, 1 - beta1)
        decay_mean_square_(exp_avg_sq, grad, beta2)
        denom = np.sqrt(exp_avg_sq / bias_correction2)
        denom += group["eps"]
        mu_product_next = mu_product * mu_next
        add_quotient_(param, -lr * (1.0 - mu) / (1.0 - mu_product), grad, denom)
        add_quotient_(param, (-lr * mu_next) / (1.0 - mu_product_next), exp_avg, denom)
