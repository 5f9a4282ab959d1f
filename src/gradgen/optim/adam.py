"""torch.optim.Adam: adaptive moment estimation."""

from __future__ import annotations

import math
from collections.abc import Callable

from gradgen.factories import zeros_like
from gradgen.generated import ops
from gradgen.grad_mode import no_grad
from gradgen.tensor import Tensor

from .optimizer import Optimizer, ParamsT

__all__ = ["Adam"]


class Adam(Optimizer):
    """PyTorch's update at step t, for each parameter p with gradient g:

        g = g + weight_decay * p
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        v_hat = max(v_hat, v) (amsgrad), else v_hat = v
        p = p - lr / (1 - beta1**t) * m / (sqrt(v_hat) / sqrt(1 - beta2**t) + eps)

    PyTorch writes the moment updates with lerp_ / addcmul_ and the last line with
    addcdiv_; gradgen has none of those, so they are composed from mul_, add_, div
    and sqrt (the same arithmetic).
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
    ) -> None:
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
        defaults = dict(
            lr=lr,
            betas=betas,
            eps=eps,
            weight_decay=weight_decay,
            amsgrad=amsgrad,
            maximize=maximize,
        )
        super().__init__(params, defaults)

    def step(self, closure: Callable[[], Tensor] | None = None) -> Tensor | None:
        """One update of every parameter that has a gradient."""
        loss = self._evaluate(closure)
        with no_grad():
            for group in self.param_groups:
                beta1, beta2 = group["betas"]
                for param in group["params"]:
                    grad = param.grad
                    if grad is None:
                        continue
                    if group["maximize"]:
                        grad = -grad
                    state = self.state.setdefault(param, {})
                    if not state:
                        state["step"] = 0
                        state["exp_avg"] = zeros_like(param)
                        state["exp_avg_sq"] = zeros_like(param)
                        if group["amsgrad"]:
                            state["max_exp_avg_sq"] = zeros_like(param)
                    state["step"] += 1
                    step = state["step"]
                    if group["weight_decay"] != 0:
                        grad = grad.add(param, alpha=group["weight_decay"])
                    exp_avg: Tensor = state["exp_avg"]
                    exp_avg_sq: Tensor = state["exp_avg_sq"]
                    exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)  # type: ignore[attr-defined]
                    exp_avg_sq.mul_(beta2).add_(grad * grad, alpha=1 - beta2)  # type: ignore[attr-defined]
                    if group["amsgrad"]:
                        second = ops.maximum(state["max_exp_avg_sq"], exp_avg_sq)
                        state["max_exp_avg_sq"] = second
                    else:
                        second = exp_avg_sq
                    bias_correction1 = 1 - beta1**step
                    bias_correction2 = 1 - beta2**step
                    step_size = group["lr"] / bias_correction1
                    denom = (second.sqrt() / math.sqrt(bias_correction2)).add_(
                        group["eps"]
                    )
                    param.add_(exp_avg / denom, alpha=-step_size)
        return loss
