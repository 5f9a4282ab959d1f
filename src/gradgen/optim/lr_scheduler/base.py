"""torch.optim.lr_scheduler.LRScheduler: the base every epoch-driven scheduler shares.

A scheduler writes each param group's "lr" when stepped. PyTorch computes the next rate
from the current one (the chainable, recursive form, so that schedulers can be stacked)
and, when `step(epoch)` names an epoch, from the closed form where the scheduler has
one; gradgen evaluates the same expressions in the same order, so the sequences agree
to the last bit.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from functools import wraps
from typing import Any
from weakref import ref


from gradgen.tensor import Tensor
from gradgen.variable_type_utils import increment_version

from ..optimizer import Optimizer

__all__ = ["LRScheduler"]

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being "
    "deprecated where possible. Please use `scheduler.step()` to step the scheduler. "
    "During the deprecation, if epoch is different from None, the closed form is used "
    "instead of the new chainable form, where available. Please open an issue if you "
    "are unable to replicate your use case: "
    "https://github.com/pytorch/pytorch/issues/new/choose."
)
ORDER_WARNING = (
    "Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 "
    "and later, you should call them in the opposite order: `optimizer.step()` before "
    "`lr_scheduler.step()`.  Failure to do this will result in PyTorch skipping the "
    "first value of the learning rate schedule. See more details at "
    "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate"
)
OVERRIDDEN_WARNING = (
    "Seems like `optimizer.step()` has been overridden after learning rate scheduler "
    "initialization. Please, make sure to call `optimizer.step()` before "
    "`lr_scheduler.step()`. See more details at "
    "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate"
)
GET_LR_WARNING = (
    "To get the last learning rate computed by the scheduler, please use "
    "`get_last_lr()`."
)


def check_optimizer(optimizer: Any) -> None:
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")


def format_param(name: str, optimizer: Optimizer, value: Any) -> list[Any]:
    """One value per param group: a list of them (checked), or one repeated."""
    if isinstance(value, (list, tuple)):
        if len(value) != len(optimizer.param_groups):
            raise ValueError(
                f"{name} must have the same length as optimizer.param_groups. {name} "
                f"has {len(value)} values, param_groups has "
                f"{len(optimizer.param_groups)}."
            )
        values = list(value)
    else:
        values = [value] * len(optimizer.param_groups)
    return [_copy(item) for item in values]


def _copy(value: Any) -> Any:
    return Tensor(value._data.copy()) if isinstance(value, Tensor) else value


def group_values(optimizer: Optimizer, key: str) -> list[Any]:
    """`key` of every param group (tensors copied)."""
    return [_copy(group[key]) for group in optimizer.param_groups]


def set_group_value(group: dict[str, Any], key: str, value: Any) -> None:
    """Write `key` of a param group; a tensor value is filled in place."""
    current = group[key]
    if isinstance(current, Tensor):
        current._data[...] = float(value)
        increment_version(current)
    else:
        group[key] = value


def _track_step_calls(scheduler: LRScheduler, optimizer: Optimizer) -> None:
    """Wrap `optimizer.step` so that the scheduler can tell whether it ran before
    the scheduler's first step (PyTorch warns when it did not)."""
    if hasattr(optimizer.step, "_wrapped_by_lr_sched"):
        return
    method = optimizer.step
    owner = ref(optimizer)

    @wraps(method)
    def step(*args: Any, **kwargs: Any) -> Any:
        found = owner()
        if found is not None:
            found._opt_called = True  # type: ignore[attr-defined]
        return method(*args, **kwargs)

    step._wrapped_by_lr_sched = True  # type: ignore[attr-defined]
    optimizer.step = step  # type: ignore[method-assign]


class LRScheduler:
    """Sets the learning rate of each param group at each `step()`; `last_epoch` counts
    the steps (the constructor takes step 0), `base_lrs` are the groups' initial
    rates, `get_last_lr()` the rates the last step set."""

    _get_lr_called_within_step: bool = False
    _is_initial: bool = False

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        check_optimizer(optimizer)
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", _copy(group["lr"]))
        else:
            for index, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{index}] "
                        "when resuming scheduler with last_epoch >= 0.\nThis typically "
                        "happens when:\n1. You're trying to resume training from a "
                        "checkpoint but haven't properly loaded the optimizer state\n2. "
                        "You're using last_epoch >= 0 for a fresh training run (not "
                        "recommended)"
                    )
        self.base_lrs: list[Any] = group_values(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        _track_step_calls(self, optimizer)
        self._initial_step()

    def _initial_step(self) -> None:
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    # -- state ------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """Every attribute but the optimizer (PyTorch's structure)."""
        return {
            key: value for key, value in self.__dict__.items() if key != "optimizer"
        }

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update(state_dict)

    def get_last_lr(self) -> list[Any]:
        """The learning rates the last step set, one per param group."""
        return self._last_lr

    # -- stepping ---------------------------------------------------------------------
    def get_lr(self) -> list[Any]:
        """The rates for `last_epoch` (chainable form); subclasses define it."""
        raise NotImplementedError

    def step(self, epoch: int | None = None) -> None:
        """Advance one epoch (or, deprecated, jump to `epoch`) and set the rates."""
        if self._step_count == 1:
            if not hasattr(self.optimizer.step, "_wrapped_by_lr_sched"):
                warnings.warn(OVERRIDDEN_WARNING, UserWarning, stacklevel=2)
            elif not getattr(self.optimizer, "_opt_called", False):
                warnings.warn(ORDER_WARNING, UserWarning, stacklevel=2)
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch: int | None = None) -> None:
        self._get_lr_called_within_step = True
        try:
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                closed_form: Callable[[], list[Any]] | None = getattr(
                    self, "_get_closed_form_lr", None
                )
                values = self.get_lr() if closed_form is None else closed_form()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values):
            set_group_value(group, "lr", lr)
        self._last_lr: list[Any] = group_values(self.optimizer, "lr")

    def _warn_outside_step(self) -> None:
        if not self._get_lr_called_within_step:
            warnings.warn(GET_LR_WARNING, UserWarning, stacklevel=3)

    def _current(self) -> list[Any]:
        """The groups' rates as they are (a step that keeps them)."""
        return group_values(self.optimizer, "lr")

    def _scaled(self, factor: float) -> list[Any]:
        """The groups' rates times `factor`."""
        return [group["lr"] * factor for group in self.optimizer.param_groups]


class _LRScheduler(LRScheduler):
    """PyTorch's old name of LRScheduler, kept for the programs that subclass it."""
