"""torch.optim.SGD: gradient descent with optional momentum and weight decay."""

from __future__ import annotations

from typing import Any

import numpy as np

from gradgen.tensor import Tensor

from .optimizer import Optimizer, ParamsT, real_view, required, scalar

__all__ = ["SGD"]


class SGD(Optimizer):
    """PyTorch's update, for each parameter p with gradient g (-g if maximize):

    g = g + weight_decay * p
    buf = g (first step), else buf = momentum * buf + (1 - dampening) * g
    g = g + momentum * buf (nesterov), else g = buf     (when momentum != 0)
    p = p - lr * g
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-3,
        momentum: float = 0,
        dampening: float = 0,
        weight_decay: float = 0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        if lr is not required and lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(
            lr=lr,
            momentum=momentum,
            dampening=dampening,
            weight_decay=weight_decay,
            nesterov=nesterov,
            maximize=maximize,
            foreach=foreach,
            differentiable=differentiable,
            fused=fused,
        )
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)

    def _init_state(
        self, param: np.ndarray, group: dict[str, Any]
    ) -> dict[str, Any] | None:
        return {} if group["momentum"] != 0 else None

    def _step_group(self, group: dict[str, Any]) -> None:
        if (
            group["momentum"] != 0
            or group["weight_decay"] != 0
            or group.get("maximize", False)
        ):
            super()._step_group(group)
            return
        # Plain SGD (the common case): `param += -lr * grad`, what _update computes
        # then, in one loop over the group (no state, no per-parameter calls).
        step = -scalar(group["lr"])
        for param in group["params"]:
            grad = param.grad
            if grad is None:
                continue
            array, values = param._data, grad._data
            if array.dtype.kind == "c" or values.dtype.kind == "c":
                array, values = real_view(array), real_view(values)
            array += step * values
            param._counter().version += 1

    def _update(
        self,
        param: np.ndarray,
        grad: np.ndarray,
        state: dict[str, Any],
        group: dict[str, Any],
    ) -> None:
        weight_decay, momentum = group["weight_decay"], group["momentum"]
        if weight_decay != 0:
            grad = grad + weight_decay * param
        if momentum != 0:
            buffer = state.get("momentum_buffer")
            if buffer is None:
                state["momentum_buffer"] = buffer = Tensor(np.array(grad, copy=True))
            else:
                buffer._data *= momentum
                buffer._data += (1 - group["dampening"]) * grad
            if group["nesterov"]:
                grad = grad + momentum * buffer._data
            else:
                grad = buffer._data
        param += -scalar(group["lr"]) * grad
