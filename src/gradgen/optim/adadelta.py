"""torch.optim.Adadelta: steps scaled by running averages of squared gradients and
squared updates (Zeiler)."""

from __future__ import annotations

from typing import Any

import numpy as np

from gradgen.tensor import Tensor

from .optimizer import (
    Optimizer,
    ParamsT,
    check_argument,
    count_step,
    data,
    decay_mean_square_,
    new_state,
    new_step,
    scalar,
)

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """PyTorch's update, for each parameter p with gradient g:

    g = g + weight_decay * p
    v = rho * v + (1 - rho) * g * g
    delta = sqrt(u + eps) / sqrt(v + eps) * g
    u = rho * u + (1 - rho) * delta * delta
    p = p - lr * delta
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1.0,
        rho: float = 0.9,
        eps: float = 1e-6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        capturable: bool = False,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_argument("learning rate", lr)
        check_argument("rho value", rho, high=1.0)
        check_argument("epsilon value", eps)
        check_argument("weight_decay value", weight_decay)
        defaults = dict(
            lr=lr,
            rho=rho,
            eps=eps,
            weight_decay=weight_decay,
            maximize=maximize,
            capturable=capturable,
            foreach=foreach,
            differentiable=differentiable,
        )
        super().__init__(params, defaults)

    def _init_state(self, param: np.ndarray, group: dict[str, Any]) -> dict[str, Any]:
        return {
            "step": new_step(),
            "square_avg": new_state(param),
            "acc_delta": new_state(param),
        }

    def _update(
        self,
        param: np.ndarray,
        grad: np.ndarray,
        state: dict[str, Any],
        group: dict[str, Any],
    ) -> None:
        rho, eps = group["rho"], group["eps"]
        count_step(state["step"])
        if group["weight_decay"] != 0:
            grad = grad + group["weight_decay"] * param
        square_avg, acc_delta = data(state, "square_avg"), data(state, "acc_delta")
        decay_mean_square_(square_avg, grad, rho)
        std = np.sqrt(square_avg + eps)
        delta = np.sqrt(acc_delta + eps)
        delta /= std
        delta *= grad
        decay_mean_square_(acc_delta, delta, rho)
        param += -scalar(group["lr"]) * delta
