"""torch.optim.Optimizer: parameter groups, per-parameter state and zero_grad."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from gradgen.grad_mode import enable_grad
from gradgen.tensor import Tensor
from gradgen.variable_type_utils import increment_version

__all__ = ["Optimizer"]

ParamsT = Iterable[Tensor] | Iterable[dict[str, Any]]


class Optimizer:
    """Holds `param_groups` (dicts with "params" and the hyper-parameters) and
    `state` (a dict per parameter, keyed by the parameter tensor). Subclasses
    implement `step`, updating the parameters in place under `gradgen.no_grad()`."""

    def __init__(self, params: ParamsT, defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        self.state: dict[Tensor, dict[str, Any]] = {}
        self.param_groups: list[dict[str, Any]] = []
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of "
                f"Tensors or dicts, but got {type(params).__name__}"
            )
        groups: list[Any] = list(params)
        if len(groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters, with hyper-parameters that default to the
        optimizer's."""
        if not isinstance(param_group, dict):
            raise TypeError(
                f"param_group must be a dict, but got {type(param_group).__name__}"
            )
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but "
                "the ordering of tensors in sets will change between runs. Please use a "
                "list instead."
            )
        else:
            params = list(params)
        for param in params:
            if not isinstance(param, Tensor):
                raise TypeError(
                    "optimizer can only optimize Tensors, but one of the params is "
                    + type(param).__name__
                )
            if not param.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        group = dict(param_group, params=params)
        for name, default in self.defaults.items():
            group.setdefault(name, default)
        if len({id(p) for p in params}) != len(params):
            raise ValueError("some parameters appear more than once in this group")
        known = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in known for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset every parameter's gradient: to None (the default), or to zeros."""
        for group in self.param_groups:
            for param in group["params"]:
                grad = param.grad
                if grad is None:
                    continue
                if set_to_none:
                    param.grad = None
                elif grad.grad_fn is not None:
                    param.grad = Tensor(np.zeros_like(grad._data))
                else:
                    grad._data[...] = 0
                    increment_version(grad)

    def step(self, closure: Callable[[], Tensor] | None = None) -> Tensor | None:
        raise NotImplementedError

    def _evaluate(self, closure: Callable[[], Tensor] | None) -> Tensor | None:
        """Run `closure` (which recomputes the loss and calls backward) with grad on."""
        if closure is None:
            return None
        with enable_grad():
            return closure()

    def __repr__(self) -> str:
        lines = [type(self).__name__ + " ("]
        for index, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {index}")
            for key in sorted(group):
                if key != "params":
                    lines.append(f"    {key}: {group[key]}")
        lines.append(")")
        return "\n".join(lines)
