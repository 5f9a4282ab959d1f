"""torch.optim.ASGD: averaged stochastic gradient descent (Polyak and Juditsky)."""

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
    new_state,
    new_step,
    scalar,
)

__all__ = ["ASGD"]


class ASGD(Optimizer):
    """PyTorch's update at step t, for each parameter p with gradient g:

    g = g + weight_decay * p
    p = p * (1 - lambd * eta) - eta * g
    ax = ax + (p - ax) * mu   (ax = p while mu is 1)
    eta = lr / (1 + lambd * lr * t) ** alpha;  mu = 1 / max(1, t - t0)

    eta and mu are kept as float32 0-d tensors, rounded as PyTorch rounds them.
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-2,
        lambd: float = 1e-4,
        alpha: float = 0.75,
        t0: float = 1e6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        check_argument("learning rate", lr)
        check_argument("weight_decay value", weight_decay)
        defaults = dict(
            lr=lr,
            lambd=lambd,
            alpha=alpha,
            t0=t0,
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
            "eta": Tensor(np.array(scalar(group["lr"]), dtype=np.float32)),
            "mu": Tensor(np.ones((), dtype=np.float32)),
            "ax": new_state(param),
        }

    def _update(
        self,
        param: np.ndarray,
        grad: np.ndarray,
        state: dict[str, Any],
        group: dict[str, Any],
    ) -> None:
        lr, lambd = scalar(group["lr"]), group["lambd"]
        step = count_step(state["step"])
        if group["weight_decay"] != 0:
            grad = grad + group["weight_decay"] * param
        eta = float(state["eta"]._data)
        mu = float(state["mu"]._data)
        param *= 1 - lambd * eta
        param += -eta * grad
        ax = data(state, "ax")
        if mu != 1:
            ax += (param - ax) * mu
        else:
            np.copyto(ax, param)
        state["eta"]._data[...] = lr / ((1 + lambd * lr * step) ** group["alpha"])
        state["mu"]._data[...] = 1 / max(1, step - group["t0"])
