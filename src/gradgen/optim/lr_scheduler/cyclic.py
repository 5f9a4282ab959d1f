"""Schedulers that follow a curve between two rates: CosineAnnealingLR,
CosineAnnealingWarmRestarts, CyclicLR, OneCycleLR."""

from __future__ import annotations

import math
import types
from collections.abc import Callable
from typing import Any

from ..optimizer import Optimizer
from .base import (
    LRScheduler,
    check_optimizer,
    format_param,
    group_values,
    set_group_value,
)

__all__ = [
    "CosineAnnealingLR",
    "CosineAnnealingWarmRestarts",
    "CyclicLR",
    "OneCycleLR",
]


class CosineAnnealingLR(LRScheduler):
    """lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * epoch / T_max)) / 2,
    stepped in PyTorch's recursive form (so it also follows changes made to the rate
    by others)."""

    def __init__(
        self,
        optimizer: Optimizer,
        T_max: int,  # noqa: N803  (PyTorch's name)
        eta_min: float = 0.0,
        last_epoch: int = -1,
    ) -> None:
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        self._warn_outside_step()
        groups = self.optimizer.param_groups
        if self._is_initial:
            return self._current()
        if self._step_count == 1 and self.last_epoch > 0:  # resumed
            cosine = 1 + math.cos((self.last_epoch) * math.pi / self.T_max)
            return [
                self.eta_min + (base_lr - self.eta_min) * cosine / 2
                for base_lr in self.base_lrs
            ]
        if (self.last_epoch - 1 - self.T_max) % (2 * self.T_max) == 0:
            return [
                group["lr"]
                + (base_lr - self.eta_min) * (1 - math.cos(math.pi / self.T_max)) / 2
                for base_lr, group in zip(self.base_lrs, groups)
            ]
        ratio = (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / (
            1 + math.cos(math.pi * (self.last_epoch - 1) / self.T_max)
        )
        return [ratio * (group["lr"] - self.eta_min) + self.eta_min for group in groups]

    def _get_closed_form_lr(self) -> list[Any]:
        return [
            self.eta_min
            + (base_lr - self.eta_min)
            * (1 + math.cos(math.pi * self.last_epoch / self.T_max))
            / 2
            for base_lr in self.base_lrs
        ]


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing from base_lr to eta_min over T_cur = 0 .. T_i, restarting at
    base_lr; each period T_mult times the last (SGDR)."""

    def __init__(
        self,
        optimizer: Optimizer,
        T_0: int,  # noqa: N803
        T_mult: int = 1,  # noqa: N803
        eta_min: float = 0.0,
        last_epoch: int = -1,
    ) -> None:
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(
                f"Expected float or int eta_min, but got {eta_min} of type "
                f"{type(eta_min)}"
            )
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur: float = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[Any]:
        self._warn_outside_step()
        cosine = 1 + math.cos(math.pi * self.T_cur / self.T_i)
        return [
            self.eta_min + (base_lr - self.eta_min) * cosine / 2
            for base_lr in self.base_lrs
        ]

    def step(self, epoch: float | None = None) -> None:
        """Advance one step, or go to `epoch` (fractional epochs allowed)."""
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur % self.T_i
                self.T_i = self.T_i * self.T_mult
        else:
            self._jump(epoch)
        self.last_epoch = math.floor(epoch)
        self._get_lr_called_within_step = True
        try:
            values = self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values):
            set_group_value(group, "lr", lr)
        self._last_lr = group_values(self.optimizer, "lr")

    def _jump(self, epoch: float) -> None:
        """T_cur and T_i at `epoch`, in closed form."""
        if epoch < 0:
            raise ValueError(f"Expected non-negative epoch, but got {epoch}")
        if epoch < self.T_0:
            self.T_i = self.T_0
            self.T_cur = epoch
        elif self.T_mult == 1:
            self.T_cur = epoch % self.T_0
        else:
            n = int(math.log((epoch / self.T_0 * (self.T_mult - 1) + 1), self.T_mult))
            self.T_cur = epoch - self.T_0 * (self.T_mult**n - 1) / (self.T_mult - 1)
            self.T_i = self.T_0 * self.T_mult ** (n)


def _set_momentum(group: dict[str, Any], momentum: float, use_beta1: bool) -> None:
    """A group's momentum, or the first of its betas."""
    if use_beta1:
        group["betas"] = (momentum, *group["betas"][1:])
    else:
        group["momentum"] = momentum


def _momentum_bounds(
    scheduler: CyclicLR | OneCycleLR,
    optimizer: Optimizer,
    base_momentum: Any,
    max_momentum: Any,
    last_epoch: int,
) -> tuple[list[Any], list[Any]]:
    """(base, max) momenta per group for a cycling scheduler, written into the
    groups (momentum at its maximum) on a fresh start."""
    if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
        raise ValueError(
            "optimizer must support momentum or beta1 with `cycle_momentum` option "
            "enabled"
        )
    scheduler.use_beta1 = "betas" in optimizer.defaults
    bases = format_param("base_momentum", optimizer, base_momentum)
    maxima = format_param("max_momentum", optimizer, max_momentum)
    if last_epoch == -1:
        for top, bottom, group in zip(maxima, bases, optimizer.param_groups):
            _set_momentum(group, top, scheduler.use_beta1)
            group["max_momentum"] = top
            group["base_momentum"] = bottom
    return bases, maxima


class CyclicLR(LRScheduler):
    """The rate cycles between base_lr and max_lr (up in step_size_up steps, down in
    step_size_down), the amplitude scaled per cycle or per step by `mode` or
    `scale_fn`; the momentum cycles the other way (Smith's cyclical rates)."""

    def __init__(
        self,
        optimizer: Optimizer,
        base_lr: float | list[float],
        max_lr: float | list[float],
        step_size_up: int = 2000,
        step_size_down: int | None = None,
        mode: str = "triangular",
        gamma: float = 1.0,
        scale_fn: Callable[[float], float] | None = None,
        scale_mode: str = "cycle",
        cycle_momentum: bool = True,
        base_momentum: float = 0.8,
        max_momentum: float = 0.9,
        last_epoch: int = -1,
    ) -> None:
        check_optimizer(optimizer)
        self.optimizer = optimizer
        base_lrs = format_param("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                set_group_value(group, "lr", lr)
        self.max_lrs = format_param("max_lr", optimizer, max_lr)
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size = up + down
        self.step_ratio = up / self.total_size
        if mode not in ["triangular", "triangular2", "exp_range"] and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode = mode
        self.gamma = gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        self._init_scale_fn()
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.base_momentums, self.max_momentums = _momentum_bounds(
                self, optimizer, base_momentum, max_momentum, last_epoch
            )
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    use_beta1: bool

    def _init_scale_fn(self) -> None:
        if self._scale_fn_custom is not None:
            return
        if self.mode in ("triangular", "triangular2"):
            self.scale_mode = "cycle"
        elif self.mode == "exp_range":
            self.scale_mode = "iterations"

    def scale_fn(self, x: float) -> float:
        """The amplitude's scale at cycle (or step) x."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return float(1 / (2.0 ** (x - 1)))
        return float(self.gamma**x)

    def get_lr(self) -> list[Any]:
        self._warn_outside_step()
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        if x <= self.step_ratio:
            scale_factor = x / self.step_ratio
        else:
            scale_factor = (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [
            base_lr + (max_lr - base_lr) * scale_factor * scale
            for base_lr, max_lr in zip(self.base_lrs, self.max_lrs)
        ]
        if self.cycle_momentum:
            for group, bottom, top in zip(
                self.optimizer.param_groups, self.base_momentums, self.max_momentums
            ):
                momentum = top - (top - bottom) * scale_factor * scale
                _set_momentum(group, momentum, self.use_beta1)
        return lrs

    def state_dict(self) -> dict[str, Any]:
        state = super().state_dict()
        custom = state.pop("_scale_fn_custom")
        state["_scale_fn_custom"] = (
            None
            if custom is None or isinstance(custom, types.FunctionType)
            else custom.__dict__.copy()
        )
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        custom = state_dict.pop("_scale_fn_custom")
        super().load_state_dict(state_dict)
        if custom is not None and self._scale_fn_custom is not None:
            self._scale_fn_custom.__dict__.update(custom)
        self._init_scale_fn()


def _phase(
    end_step: float, lr: tuple[str, str], momentum: tuple[str, str]
) -> dict[str, Any]:
    return {
        "end_step": end_step,
        "start_lr": lr[0],
        "end_lr": lr[1],
        "start_momentum": momentum[0],
        "end_momentum": momentum[1],
    }


class OneCycleLR(LRScheduler):
    """The 1cycle policy: the rate rises from max_lr / div_factor to max_lr over
    pct_start of total_steps, then anneals to the initial rate / final_div_factor
    (cosine or linear; three_phase comes back down to the initial rate first); the
    momentum moves the other way."""

    def __init__(
        self,
        optimizer: Optimizer,
        max_lr: float | list[float],
        total_steps: int | None = None,
        epochs: int | None = None,
        steps_per_epoch: int | None = None,
        pct_start: float = 0.3,
        anneal_strategy: str = "cos",
        cycle_momentum: bool = True,
        base_momentum: float | list[float] = 0.85,
        max_momentum: float | list[float] = 0.95,
        div_factor: float = 25.0,
        final_div_factor: float = 1e4,
        three_phase: bool = False,
        last_epoch: int = -1,
    ) -> None:
        check_optimizer(optimizer)
        self.optimizer = optimizer
        self.total_steps = _total_steps(total_steps, epochs, steps_per_epoch)
        self._schedule_phases = self._phases(pct_start, three_phase)
        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(
                f"Expected float between 0 and 1 pct_start, but got {pct_start}"
            )
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(
                "anneal_strategy must be one of 'cos' or 'linear', instead got "
                f"{anneal_strategy}"
            )
        self._anneal_func_type = anneal_strategy
        max_lrs = format_param("max_lr", self.optimizer, max_lr)
        if last_epoch == -1:
            for top, group in zip(max_lrs, self.optimizer.param_groups):
                group["initial_lr"] = top / div_factor
                group["max_lr"] = top
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            _momentum_bounds(self, optimizer, base_momentum, max_momentum, last_epoch)
        super().__init__(optimizer, last_epoch)

    use_beta1: bool

    def _phases(self, pct_start: float, three_phase: bool) -> list[dict[str, Any]]:
        warm_up = float(pct_start * self.total_steps) - 1
        last = self.total_steps - 1
        if not three_phase:
            return [
                _phase(
                    warm_up, ("initial_lr", "max_lr"), ("max_momentum", "base_momentum")
                ),
                _phase(last, ("max_lr", "min_lr"), ("base_momentum", "max_momentum")),
            ]
        return [
            _phase(
                warm_up, ("initial_lr", "max_lr"), ("max_momentum", "base_momentum")
            ),
            _phase(
                float(2 * pct_start * self.total_steps) - 2,
                ("max_lr", "initial_lr"),
                ("base_momentum", "max_momentum"),
            ),
            _phase(last, ("initial_lr", "min_lr"), ("max_momentum", "max_momentum")),
        ]

    def _anneal(self, start: float, end: float, pct: float) -> float:
        if self._anneal_func_type == "cos":
            cos_out = math.cos(math.pi * pct) + 1
            return end + (start - end) / 2.0 * cos_out
        return (end - start) * pct + start

    def get_lr(self) -> list[Any]:
        self._warn_outside_step()
        step_num = self.last_epoch
        if step_num > self.total_steps:
            raise ValueError(
                f"Tried to step {step_num} times. The specified number of total steps "
                f"is {self.total_steps}"
            )
        lrs = []
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for index, phase in enumerate(self._schedule_phases):
                end_step = phase["end_step"]
                if step_num <= end_step or index == len(self._schedule_phases) - 1:
                    pct = (step_num - start_step) / (end_step - start_step)
                    break
                start_step = phase["end_step"]
            lrs.append(
                self._anneal(group[phase["start_lr"]], group[phase["end_lr"]], pct)
            )
            if self.cycle_momentum:
                momentum = self._anneal(
                    group[phase["start_momentum"]], group[phase["end_momentum"]], pct
                )
                _set_momentum(group, momentum, self.use_beta1)
        return lrs


def _total_steps(
    total_steps: int | None, epochs: int | None, steps_per_epoch: int | None
) -> int:
    """OneCycleLR's length: total_steps, or epochs * steps_per_epoch."""
    if total_steps is not None:
        if total_steps <= 0 or not isinstance(total_steps, int):
            raise ValueError(
                f"Expected positive integer total_steps, but got {total_steps}"
            )
        return total_steps
    if epochs is not None and steps_per_epoch is not None:
        if not isinstance(epochs, int) or epochs <= 0:
            raise ValueError(f"Expected positive integer epochs, but got {epochs}")
        if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
            raise ValueError(
                "Expected positive integer steps_per_epoch, but got "
                f"{steps_per_epoch}"
            )
        return epochs * steps_per_epoch
    raise ValueError(
        "You must define either total_steps OR (epochs AND steps_per_epoch)"
    )
