"""torch.optim.Rprop: resilient backpropagation (per-element step sizes that grow
while the gradient keeps its sign and shrink when it flips)."""

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

__all__ = ["Rprop"]


class Rprop(Optimizer):
    """PyTorch's update, for each parameter p with gradient g and previous gradient
    g' (kept as 0 where the sign flipped):

    f = etaplus where g g' > 0, etaminus where g g' < 0, else 1
    step_size = clamp(step_size * f, *step_sizes)   (starting at lr)
    g = 0 where f == etaminus
    p = p - sign(g) * step_size;  g' = g
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1e-2,
        etas: tuple[float, float] = (0.5, 1.2),
        step_sizes: tuple[float, float] = (1e-6, 50),
        *,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        check_argument("learning rate", lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(
            lr=lr,
            etas=etas,
            step_sizes=step_sizes,
            foreach=foreach,
            maximize=maximize,
            differentiable=differentiable,
            capturable=capturable,
        )
        super().__init__(params, defaults)

    def _init_state(self, param: np.ndarray, group: dict[str, Any]) -> dict[str, Any]:
        lr = scalar(group["lr"])
        # The imaginary parts of a complex parameter step as independent reals.
        fill = complex(lr, lr) if param.dtype.kind == "c" else lr
        return {
            "step": new_step(),
            "prev": new_state(param),
            "step_size": Tensor(np.full_like(param, fill)),
        }

    def _update(
        self,
        param: np.ndarray,
        grad: np.ndarray,
        state: dict[str, Any],
        group: dict[str, Any],
    ) -> None:
        etaminus, etaplus = group["etas"]
        smallest, largest = group["step_sizes"]
        count_step(state["step"])
        prev, step_size = data(state, "prev"), data(state, "step_size")
        sign = np.sign(grad * prev)
        factor = np.where(sign > 0, etaplus, np.where(sign < 0, etaminus, 1.0))
        step_size *= factor.astype(step_size.dtype, copy=False)
        np.clip(step_size, smallest, largest, out=step_size)
        grad = np.where(factor == etaminus, 0, grad).astype(grad.dtype, copy=False)
        param -= np.sign(grad) * step_size
        np.copyto(prev, grad)
