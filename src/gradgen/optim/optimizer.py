"""torch.optim.Optimizer: parameter groups, per-parameter state, state dicts, zero_grad.

The optimizers update numpy arrays: a parameter's array is changed in place (the
parameter stays the same leaf tensor) and its version counter is bumped once per step,
as PyTorch's in-place update bumps it. No graph is built and no Tensor is made per
element-wise step; the state values are tensors over arrays that are updated in place.
"""

from __future__ import annotations

import functools
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from copy import deepcopy
from typing import Any

import numpy as np

from gradgen.dtypes import spelling
from gradgen.grad_mode import enable_grad, no_grad
from gradgen.graph import RemovableHandle
from gradgen.tensor import Tensor
from gradgen.variable_type_utils import increment_version

__all__ = [
    "Optimizer",
    "required",
    "register_optimizer_step_pre_hook",
    "register_optimizer_step_post_hook",
]

ParamsT = Iterable[Tensor] | Iterable[dict[str, Any]]
StateDict = dict[str, Any]


class _RequiredParameter:
    """The default of a hyper-parameter that every group must give (PyTorch's
    `torch.optim.optimizer.required`)."""

    def __repr__(self) -> str:
        return "<required parameter>"


required: Any = _RequiredParameter()


def _typename(value: object) -> str:
    """PyTorch's torch.typename for the values an optimizer is given."""
    if isinstance(value, Tensor):
        return "gradgen." + spelling(value).legacy_tensor
    kind = type(value)
    return kind.__qualname__ if kind.__module__ == "builtins" else str(kind)


def scalar(value: Any) -> float:
    """A hyper-parameter as a Python float (a one-element tensor lr is accepted)."""
    return float(value)


def check_argument(label: str, value: Any, high: float | None = None) -> None:
    """PyTorch's `Invalid <label>: <value>` for a hyper-parameter below 0 (or above
    `high`)."""
    if not 0.0 <= value or (high is not None and not value <= high):
        raise ValueError(f"Invalid {label}: {value}")


def new_state(like: np.ndarray, fill: float = 0.0) -> Tensor:
    """A state tensor shaped and typed as a parameter's array."""
    return Tensor(np.full_like(like, fill))


def new_step() -> Tensor:
    """A step counter: a 0-d float32 tensor, as PyTorch keeps it."""
    return Tensor(np.zeros((), dtype=np.float32))


def count_step(step: Tensor) -> float:
    """`step += 1`; the new count as a float."""
    step._data += 1
    return float(step._data)


def real_view(array: np.ndarray) -> np.ndarray:
    """A complex array as interleaved reals (PyTorch's view_as_real in the updates):
    the moments of complex parameters are kept per real component."""
    if array.dtype.kind != "c":
        return array
    if array.ndim == 0:
        array = array.reshape(1)
    return array.view(array.real.dtype)


def data(state: dict[str, Any], name: str) -> np.ndarray:
    """The array of a state tensor, as real_view sees it."""
    return real_view(state[name]._data)


def lerp_(start: np.ndarray, end: np.ndarray, weight: float) -> None:
    """start <- start + weight * (end - start), in PyTorch's two-sided form."""
    step = end - start
    if abs(weight) < 0.5:
        step *= weight
        start += step
    else:
        step *= 1 - weight
        np.subtract(end, step, out=start)


def add_quotient_(
    target: np.ndarray, value: float, numerator: np.ndarray, denominator: np.ndarray
) -> None:
    """target <- target + value * numerator / denominator (PyTorch's addcdiv_, in its
    order of rounding), with one temporary."""
    update = numerator * value
    update /= denominator
    target += update


def decay_mean_square_(average: np.ndarray, grad: np.ndarray, beta: float) -> None:
    """average <- beta * average + (1 - beta) * grad * grad (PyTorch's
    `mul_(beta).addcmul_(grad, grad, value=1 - beta)`)."""
    square = grad * (1 - beta)
    square *= grad
    average *= beta
    average += square


# -- step hooks ------------------------------------------------------------------------

Hook = Callable[..., Any]
_GLOBAL_STEP_PRE_HOOKS: list[Hook] = []
_GLOBAL_STEP_POST_HOOKS: list[Hook] = []


def register_optimizer_step_pre_hook(hook: Hook) -> RemovableHandle:
    """`hook(optimizer, args, kwargs)` before every optimizer's step; it may return
    new (args, kwargs)."""
    _GLOBAL_STEP_PRE_HOOKS.append(hook)
    return RemovableHandle(_GLOBAL_STEP_PRE_HOOKS, hook)


def register_optimizer_step_post_hook(hook: Hook) -> RemovableHandle:
    """`hook(optimizer, args, kwargs)` after every optimizer's step."""
    _GLOBAL_STEP_POST_HOOKS.append(hook)
    return RemovableHandle(_GLOBAL_STEP_POST_HOOKS, hook)


def _with_step_hooks(step: Callable[..., Any]) -> Callable[..., Any]:
    """`step` running the global and the optimizer's step hooks around it (once: a
    step that calls its parent's step runs them only at the outer call). As in
    PyTorch, the hooks' `args` start with the optimizer."""

    @functools.wraps(step)
    def hooked(*args: Any, **kwargs: Any) -> Any:
        self: Optimizer = args[0]
        if self._in_step or not (
            _GLOBAL_STEP_PRE_HOOKS
            or _GLOBAL_STEP_POST_HOOKS
            or self._optimizer_step_pre_hooks
            or self._optimizer_step_post_hooks
        ):
            return step(*args, **kwargs)
        for hook in [*_GLOBAL_STEP_PRE_HOOKS, *self._optimizer_step_pre_hooks]:
            result = hook(self, args, kwargs)
            if result is None:
                continue
            if not (isinstance(result, tuple) and len(result) == 2):
                raise RuntimeError(
                    f"{hook} must return None or a tuple of (new_args, new_kwargs), "
                    f"but got {result}."
                )
            args, kwargs = result
        self._in_step = True
        try:
            out = step(*args, **kwargs)
        finally:
            self._in_step = False
        for hook in [*self._optimizer_step_post_hooks, *_GLOBAL_STEP_POST_HOOKS]:
            hook(self, args, kwargs)
        return out

    hooked._runs_step_hooks = True  # type: ignore[attr-defined]
    return hooked


def _register(hooks: list[Hook], hook: Hook, prepend: bool) -> RemovableHandle:
    hooks.insert(0, hook) if prepend else hooks.append(hook)
    return RemovableHandle(hooks, hook)


class Optimizer:
    """Holds `param_groups` (dicts with "params" and the hyper-parameters) and
    `state` (a dict per parameter, keyed by the parameter tensor). Subclasses
    implement `step`, updating the parameters in place with grad mode off."""

    _in_step = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "_runs_step_hooks", False):
            cls.step = _with_step_hooks(step)  # type: ignore[method-assign]

    def __init__(self, params: ParamsT, defaults: dict[str, Any]) -> None:
        self._optimizer_step_pre_hooks: list[Hook] = []
        self._optimizer_step_post_hooks: list[Hook] = []
        self._optimizer_state_dict_pre_hooks: list[Hook] = []
        self._optimizer_state_dict_post_hooks: list[Hook] = []
        self._optimizer_load_state_dict_pre_hooks: list[Hook] = []
        self._optimizer_load_state_dict_post_hooks: list[Hook] = []
        self.defaults = defaults
        self.state: defaultdict[Tensor, dict[str, Any]] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of "
                "Tensors or dicts, but got " + _typename(params)
            )
        groups: list[Any] = list(params)
        if len(groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    # -- groups -----------------------------------------------------------------------
    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters, with hyper-parameters that default to the
        optimizer's."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        param_group["params"] = _param_list(param_group["params"])
        _split_names(param_group)
        for param in param_group["params"]:
            if not isinstance(param, Tensor):
                raise TypeError(
                    "optimizer can only optimize Tensors, but one of the params is "
                    + _typename(param)
                )
            if not (param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(
                    "parameter group didn't specify a value of required optimization "
                    f"parameter {name}"
                )
            param_group.setdefault(name, default)
        params = param_group["params"]
        if len({id(p) for p in params}) != len(params):
            warnings.warn(
                "optimizer contains a parameter group with duplicate parameters; in "
                "future, this will cause an error; see "
                "github.com/pytorch/pytorch/issues/40967 for more information",
                stacklevel=3,
            )
        known: set[int] = set()
        for group in self.param_groups:
            known.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with" if "param_names" in param_group else "without"
                raise ValueError(
                    "all optimizer param groups should be with/without names. "
                    f"cannot add param group {which} names to the optimizer"
                )
        if any(id(p) in known for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    # -- gradients and steps ----------------------------------------------------------
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

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Evaluate `closure` (if given) with grad mode on, then update every
        parameter that has a gradient; return the closure's loss."""
        loss = self._evaluate(closure)
        with no_grad():
            for group in self.param_groups:
                self._step_group(group)
        return loss

    def _step_group(self, group: dict[str, Any]) -> None:
        """Update every parameter of `group` that has a gradient (grad mode off)."""
        for param, grad in self._with_grads(group):
            state = self.state.get(param)
            if state is None:
                state = self._init_state(param._data, group)
                if state is not None:
                    self.state[param] = state
            self._update(
                real_view(param._data),
                real_view(grad),
                {} if state is None else state,
                group,
            )
            increment_version(param)

    def _with_grads(self, group: dict[str, Any]) -> Iterator[tuple[Tensor, np.ndarray]]:
        """(parameter, gradient array) for each parameter of the group that has a
        gradient; the gradient negated when the group maximizes."""
        for param in group["params"]:
            grad = param.grad
            if grad is None:
                continue
            array = grad._data
            yield param, (-array if group.get("maximize", False) else array)

    def _init_state(
        self, param: np.ndarray, group: dict[str, Any]
    ) -> dict[str, Any] | None:
        """The state of a parameter before its first step (None: it keeps none)."""
        return {}

    def _update(
        self,
        param: np.ndarray,
        grad: np.ndarray,
        state: dict[str, Any],
        group: dict[str, Any],
    ) -> None:
        """Change `param` in place, from its gradient and state."""
        raise NotImplementedError

    def _evaluate(self, closure: Callable[[], Any] | None) -> Any:
        """Run `closure` (which recomputes the loss and calls backward) with grad on."""
        if closure is None:
            return None
        with enable_grad():
            return closure()

    # -- hooks ------------------------------------------------------------------------
    def register_step_pre_hook(self, hook: Hook) -> RemovableHandle:
        """`hook(optimizer, args, kwargs)` before each step; it may return new
        (args, kwargs)."""
        return _register(self._optimizer_step_pre_hooks, hook, False)

    def register_step_post_hook(self, hook: Hook) -> RemovableHandle:
        """`hook(optimizer, args, kwargs)` after each step."""
        return _register(self._optimizer_step_post_hooks, hook, False)

    def register_state_dict_pre_hook(
        self, hook: Hook, prepend: bool = False
    ) -> RemovableHandle:
        """`hook(optimizer)` before `state_dict()` packs the state."""
        return _register(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(
        self, hook: Hook, prepend: bool = False
    ) -> RemovableHandle:
        """`hook(optimizer, state_dict)` after; it may return a new state dict."""
        return _register(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(
        self, hook: Hook, prepend: bool = False
    ) -> RemovableHandle:
        """`hook(optimizer, state_dict)` before loading; it may return a new one."""
        return _register(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(
        self, hook: Hook, prepend: bool = False
    ) -> RemovableHandle:
        """`hook(optimizer)` after loading."""
        return _register(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    # -- state dicts ------------------------------------------------------------------
    def state_dict(self) -> StateDict:
        """{"state": {index: state}, "param_groups": [group with "params" as
        indices]}: parameters numbered in group order, as PyTorch numbers them. The
        state values are the optimizer's own tensors (not copies), as in PyTorch."""
        for pre_hook in self._optimizer_state_dict_pre_hooks:
            pre_hook(self)
        index: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            for param in group["params"]:
                index.setdefault(id(param), len(index))
            packed = {k: v for k, v in group.items() if k != "params"}
            packed["params"] = [index[id(p)] for p in group["params"]]
            groups.append(packed)
        state = {
            (index[id(key)] if isinstance(key, Tensor) else key): value
            for key, value in self.state.items()
        }
        state_dict: StateDict = {"state": state, "param_groups": groups}
        for post_hook in self._optimizer_state_dict_post_hooks:
            state_dict = post_hook(self, state_dict) or state_dict
        return state_dict

    def load_state_dict(self, state_dict: StateDict) -> None:
        """Take the state and hyper-parameters of `state_dict` (from `state_dict()`,
        of an optimizer over parameters of the same shapes in the same groups)."""
        state_dict = state_dict.copy()
        for pre_hook in self._optimizer_load_state_dict_pre_hooks:
            state_dict = pre_hook(self, state_dict) or state_dict
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(self.param_groups) != len(saved_groups):
            raise ValueError(
                "loaded state dict has a different number of parameter groups"
            )
        for group, saved in zip(self.param_groups, saved_groups):
            if len(group["params"]) != len(saved["params"]):
                raise ValueError(
                    "loaded state dict contains a parameter group that doesn't match "
                    "the size of optimizer's group"
                )
        by_index = {
            index: param
            for saved, group in zip(saved_groups, self.param_groups)
            for index, param in zip(saved["params"], group["params"])
        }
        state: defaultdict[Any, dict[str, Any]] = defaultdict(dict)
        for key, value in state_dict["state"].items():
            if key in by_index:
                param = by_index[key]
                state[param] = {
                    name: _cast(param, item, name) for name, item in value.items()
                }
            else:
                state[key] = value
        for group, saved in zip(self.param_groups, saved_groups):
            saved["params"] = group["params"]
            if "param_names" in group and "param_names" not in saved:
                saved["param_names"] = group["param_names"]
        self.__setstate__({"state": state, "param_groups": saved_groups})
        for post_hook in self._optimizer_load_state_dict_post_hooks:
            post_hook(self)

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def __repr__(self) -> str:
        text = type(self).__name__ + " ("
        for index, group in enumerate(self.param_groups):
            text += f"\nParameter Group {index}\n"
            for key in sorted(group):
                if key != "params":
                    text += f"    {key}: {group[key]}\n"
        return text + ")"


Optimizer.step = _with_step_hooks(Optimizer.step)  # type: ignore[method-assign]


def _param_list(params: Any) -> list[Any]:
    if isinstance(params, Tensor):
        return [params]
    if isinstance(params, set):
        raise TypeError(
            "optimizer parameters need to be organized in ordered collections, but the "
            "ordering of tensors in sets will change between runs. Please use a list "
            "instead."
        )
    return list(params)


def _split_names(param_group: dict[str, Any]) -> None:
    """(name, tensor) pairs become "params" and "param_names", as in PyTorch."""
    names = [p[0] for p in param_group["params"] if isinstance(p, tuple)]
    param_group["params"] = [
        p[1] if isinstance(p, tuple) else p for p in param_group["params"]
    ]
    if names and len(names) != len(param_group["params"]):
        raise ValueError(
            "all optimizer params should be with/without names. Some param names are "
            "missing"
        )
    if names:
        param_group["param_names"] = names


def _cast(param: Tensor, value: Any, name: str) -> Any:
    """A loaded state value, copied: tensors take the parameter's floating dtype
    (except the step counter), containers are copied item by item."""
    if isinstance(value, Tensor):
        array = np.array(value._data)
        if name != "step" and param._data.dtype.kind in "fc":
            array = array.astype(param._data.dtype)
        return Tensor(array)
    if isinstance(value, dict):
        return {key: _cast(param, item, key) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(param, item, name) for item in value)
    return value
