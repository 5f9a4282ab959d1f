"""torch.optim.RMSprop: steps scaled by a running root mean square of the gradient."""

from __future__ import annotations

from typing import Any

import numpy as np

from gradgen.tensor import Tensor

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

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """PyTorch's update, for each parameter p with gradient g:

    g = g + weight_decay * p
    v = alpha * v + (1 - alpha) * g * g
    centered: m = lerp(m, g, 1 - alpha) and avg = sqrt(v - m * m), else avg = sqrt(v)
    momentum > 0: buf = momentum * buf + g / (avg + eps) and p = p - lr * buf
    else: p = p - lr * g / (avg + eps)
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum: float = 0,
        centered: bool = False,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_argument("learning rate", lr)
        check_argument("epsilon value", eps)
        check_argument("momentum value", momentum)
        check_argument("weight_decay value", weight_decay)
        check_argument("alpha value", alpha)
        defaults = dict(
            lr=lr,
            momentum=momentum,
            alpha=alpha,
            eps=eps,
            centered=centered,
            weight_decay=weight_decay,
            capturable=capturable,
            foreach=foreach,
            maximize=maximize,
            differentiable=differentiable,
        )
        super().__init__(params, defaults)

    def _init_state(self, param: np.ndarray, group: dict[str, Any]) -> dict[str, Any]:
        state = {"step": new_step(), "square_avg": new_state(param)}
        if group["momentum"] > 0:
            state["momentum_buffer"] = new_state(param)
        if group["centered"]:
            state["grad_avg"] = new_state(param)
        return state

    def _update(
        self,
        param: np.ndarray,
        grad: np.ndarray,
        state: dict[str, Any],
        group: dict[str, Any],
    ) -> None:
        alpha, eps, lr = group["alpha"], group["eps"], scalar(group["lr"])
        count_step(state["step"])
        if group["weight_decay"] != 0:
            grad = grad + group["weight_decay"] * param
        square_avg = data(state, "square_avg")
        decay_mean_square_(square_avg, grad, alpha)
        if group["centered"]:
            grad_avg = data(state, "grad_avg")
            lerp_(grad_avg, grad, 1 - alpha)
            avg = np.sqrt(square_avg + -1 * grad_avg * grad_avg)
        else:
            avg = np.sqrt(square_avg)
        avg += eps
        if group["momentum"] > 0:
            buffer = data(state, "momentum_buffer")
            buffer *= group["momentum"]
            buffer += grad / avg
            param += -lr * buffer
        else:
            add_quotient_(param, -lr, grad, avg)
