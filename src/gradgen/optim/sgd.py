"""torch.optim.SGD: gradient descent with optional momentum and weight decay."""

from __future__ import annotations

from collections.abc import Callable

from gradgen.grad_mode import no_grad
from gradgen.tensor import Tensor

from .optimizer import Optimizer, ParamsT

__all__ = ["SGD"]


class SGD(Optimizer):
    """PyTorch's update, for each parameter p with gradient g:

    g = g + weight_decay * p
    buf = g (first step), else buf = momentum * buf + (1 - dampening) * g
    g = g + momentum * buf (nesterov), else g = buf     (when momentum != 0)
    p = p - lr * g                                       (p + lr * g if maximize)
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-3,
        momentum: float = 0,
        dampening: float = 0,
        weight_decay: float = 0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
    ) -> None:
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        defaults = dict(
            lr=lr,
            momentum=momentum,
            dampening=dampening,
            weight_decay=weight_decay,
            nesterov=nesterov,
            maximize=maximize,
        )
        super().__init__(params, defaults)

    def step(self, closure: Callable[[], Tensor] | None = None) -> Tensor | None:
        """One update of every parameter that has a gradient."""
        loss = self._evaluate(closure)
        with no_grad():
            for group in self.param_groups:
                lr = group["lr"]
                momentum = group["momentum"]
                for param in group["params"]:
                    grad = param.grad
                    if grad is None:
                        continue
                    if group["maximize"]:
                        grad = -grad
                    if group["weight_decay"] != 0:
                        grad = grad.add(param, alpha=group["weight_decay"])
                    if momentum != 0:
                        state = self.state.setdefault(param, {})
                        buf = state.get("momentum_buffer")
                        if buf is None:
                            buf = grad.clone()
                            state["momentum_buffer"] = buf
                        else:
                            buf.mul_(momentum).add_(grad, alpha=1 - group["dampening"])
                        grad = (
                            grad.add(buf, alpha=momentum) if group["nesterov"] else buf
                        )
                    param.add_(grad, alpha=-lr)
        return loss
