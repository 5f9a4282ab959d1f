"""torch.optim.Adagrad: steps scaled by the root of the summed squared gradients."""

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
    new_state,
    new_step,
    scalar,
)

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """PyTorch's update at step t, for each parameter p with gradient g:

    g = g + weight_decay * p
    s = s + g * g                   (s starts at initial_accumulator_value)
    p = p - lr / (1 + (t - 1) * lr_decay) * g / (sqrt(s) + eps)

    As in PyTorch, every parameter's state exists from construction on.
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-2,
        lr_decay: float = 0,
        weight_decay: float = 0,
        initial_accumulator_value: float = 0,
        eps: float = 1e-10,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        check_argument("learning rate", lr)
        check_argument("lr_decay value", lr_decay)
        check_argument("weight_decay value", weight_decay)
        check_argument("initial_accumulator_value value", initial_accumulator_value)
        check_argument("epsilon value", eps)
        defaults = dict(
            lr=lr,
            lr_decay=lr_decay,
            eps=eps,
            weight_decay=weight_decay,
            initial_accumulator_value=initial_accumulator_value,
            foreach=foreach,
            maximize=maximize,
            differentiable=differentiable,
            fused=fused,
        )
        super().__init__(params, defaults)
        if fused and foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
        for group in self.param_groups:
            for param in group["params"]:
                self.state[param] = self._init_state(param._data, group)

    def _init_state(self, param: np.ndarray, group: dict[str, Any]) -> dict[str, Any]:
        fill = group["initial_accumulator_value"]
        return {"step": new_step(), "sum": new_state(param, fill)}

    def share_memory(self) -> None:
        """A no-op: gradgen's arrays live in one process."""

    def _update(
        self,
        param: np.ndarray,
        grad: np.ndarray,
        state: dict[str, Any],
        group: dict[str, Any],
    ) -> None:
        step = count_step(state["step"])
        if group["weight_decay"] != 0:
            grad = grad + group["weight_decay"] * param
        clr = scalar(group["lr"]) / (1 + (step - 1) * group["lr_decay"])
        total = data(state, "sum")
        total += 1 * grad * grad
        std = np.sqrt(total)
        std += group["eps"]
        add_quotient_(param, -clr, grad, std)
