"""torch.nn.Module: the base class of layers and models.

A Module registers what is assigned to its attributes, as PyTorch's does: a
`Parameter` goes to `_parameters`, a `Module` to `_modules`, anything else is a plain
attribute. `parameters()` / `named_parameters()` walk the registrations in assignment
order, depth first, each parameter once.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

import numpy as np

from gradgen.devices import device
from gradgen.dtypes import as_dtype, float32, float64
from gradgen.factories import tensor, zeros, zeros_like
from gradgen.grad_mode import is_grad_enabled, no_grad
from gradgen.tensor import Size, Tensor
from gradgen.variable_type_utils import copy_into, increment_version

from ..parameter import Parameter

__all__ = ["Module"]


class Module:
    """Base class of layers and models: subclasses set attributes in `__init__`
    (after `super().__init__()`) and define `forward`."""

    training: bool
    _parameters: dict[str, Parameter | None]
    _modules: dict[str, Module | None]

    def __init__(self) -> None:
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_modules", {})

    # -- registration -----------------------------------------------------------------
    def __setattr__(self, name: str, value: Any) -> None:
        params = self.__dict__.get("_parameters")
        modules = self.__dict__.get("_modules")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError(
                    "cannot assign parameters before Module.__init__() call"
                )
            self._forget(name)
            params[name] = value
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                    "(torch.nn.Parameter or None expected)"
                )
            params[name] = None
        elif isinstance(value, Module):
            if modules is None:
                raise AttributeError(
                    "cannot assign module before Module.__init__() call"
                )
            self._forget(name)
            modules[name] = value
        elif modules is not None and name in modules:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as child module '{name}' "
                    "(torch.nn.Module or None expected)"
                )
            modules[name] = None
        else:
            object.__setattr__(self, name, value)

    def _forget(self, name: str) -> None:
        """Drop `name` from every registry before it is registered again."""
        self.__dict__.pop(name, None)
        self.__dict__["_parameters"].pop(name, None)
        self.__dict__["_modules"].pop(name, None)

    def __getattr__(self, name: str) -> Any:
        # Only called when normal lookup fails: parameters and submodules live in
        # the registries, not in __dict__.
        registries = self.__dict__
        for registry in ("_parameters", "_modules"):
            entries = registries.get(registry)
            if entries is not None and name in entries:
                return entries[name]
        raise AttributeError(
            f"'{type(self).__name__}' object has no attribute '{name}'"
        )

    def __delattr__(self, name: str) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter (or a None placeholder, e.g. a bias switched off)."""
        if "_parameters" not in self.__dict__:
            raise AttributeError(
                "cannot assign parameter before Module.__init__() call"
            )
        _check_name(name, "parameter", self, self._parameters)
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{type(param).__name__}' object to parameter '{name}' "
                "(torch.nn.Parameter or None required)"
            )
        self._forget(name)
        self._parameters[name] = param

    def add_module(self, name: str, module: Module | None) -> None:
        """Add a child module (or None)."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        _check_name(name, "module", self, self._modules)
        self._forget(name)
        self._modules[name] = module

    register_module = add_module

    # -- calling ----------------------------------------------------------------------
    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function'
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.forward(*args, **kwargs)

    # -- traversal --------------------------------------------------------------------
    def named_modules(
        self,
        memo: set[int] | None = None,
        prefix: str = "",
        remove_duplicate: bool = True,
    ) -> Iterator[tuple[str, Module]]:
        """This module and all below it, depth first, with dotted names."""
        if memo is None:
            memo = set()
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            child_prefix = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, child_prefix, remove_duplicate)

    def modules(self) -> Iterator[Module]:
        for _, module in self.named_modules():
            yield module

    def named_children(self) -> Iterator[tuple[str, Module]]:
        seen: set[int] = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                yield name, module

    def children(self) -> Iterator[Module]:
        for _, module in self.named_children():
            yield module

    def named_parameters(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Parameter]]:
        """(dotted name, parameter) pairs in registration order; a parameter shared by
        two modules comes once unless `remove_duplicate` is False."""
        seen: set[int] = set()
        modules = (
            self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
            if recurse
            else iter([(prefix, self)])
        )
        for module_prefix, module in modules:
            for name, param in module._parameters.items():
                if param is None:
                    continue
                if remove_duplicate:
                    if id(param) in seen:
                        continue
                    seen.add(id(param))
                yield module_prefix + ("." if module_prefix else "") + name, param

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    # -- modes and gradients ----------------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        for module in self.modules():
            object.__setattr__(module, "training", mode)
        return self

    def eval(self) -> Module:
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for param in self.parameters():
            param.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the parameters' gradients (see `gradgen.optim.Optimizer.zero_grad`)."""
        for param in self.parameters():
            _reset_grad(param, set_to_none)

    # -- devices, dtypes, functions over the tree ------------------------------------
    def apply(self, fn: Any) -> Module:
        """`fn(module)` for every submodule (children first) and then this one."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def to(self, *args: Any, **kwargs: Any) -> Module:
        """PyTorch's Module.to(device=None, dtype=None): the parameters converted in
        place (the same Parameter objects), floating ones only, as PyTorch does."""
        zeros(()).to(*args, **kwargs)  # Tensor.to checks devices and arguments
        target = kwargs.get("dtype")
        for argument in args:
            if isinstance(argument, Tensor):
                target = argument.dtype
            elif not isinstance(argument, (str, device, bool)):
                target = argument
        if target is not None:
            target = as_dtype(target)
            for param in self.parameters():
                if param.is_floating_point() or param.is_complex():
                    _convert(param, target)
        return self

    def cpu(self) -> Module:
        return self

    def double(self) -> Module:
        return self.to(float64)

    def float(self) -> Module:
        return self.to(float32)

    # -- saving and loading -----------------------------------------------------------
    def state_dict(
        self, prefix: str = "", keep_vars: bool = False
    ) -> dict[str, Tensor]:
        """Every parameter by dotted name (detached unless `keep_vars`), in order."""
        return {
            name: param if keep_vars else param.detach()
            for name, param in self.named_parameters(
                prefix=prefix, remove_duplicate=False
            )
        }

    def load_state_dict(self, state_dict: dict[str, Any], strict: bool = True) -> Any:
        """Copy `state_dict`'s values into the parameters of the same names (PyTorch's
        checks and messages); returns (missing_keys, unexpected_keys)."""
        own = dict(self.named_parameters(remove_duplicate=False))
        missing = [name for name in own if name not in state_dict]
        unexpected = [name for name in state_dict if name not in own]
        errors = []
        if strict and missing:
            errors.append(
                "Missing key(s) in state_dict: "
                + ", ".join(f'"{k}"' for k in missing)
                + ". "
            )
        if strict and unexpected:
            errors.append(
                "Unexpected key(s) in state_dict: "
                + ", ".join(f'"{k}"' for k in unexpected)
                + ". "
            )
        for name, param in own.items():
            if name not in state_dict:
                continue
            value = state_dict[name]
            value = value if isinstance(value, Tensor) else tensor(value)
            if tuple(value.shape) != tuple(param.shape):
                errors.append(
                    f"size mismatch for {name}: copying a param with shape "
                    f"{_size_text(value.shape)} from checkpoint, the shape in current "
                    f"model is {_size_text(param.shape)}."
                )
                continue
            with no_grad():
                copy_into(param, value.detach().to(param.dtype)._data)
                increment_version(param)
        if errors:
            raise RuntimeError(
                f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                + "\n\t".join(errors)
            )
        return _IncompatibleKeys(missing, unexpected)

    # -- printing ---------------------------------------------------------------------
    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        lines = [line for line in self.extra_repr().split("\n") if line]
        for name, module in self._modules.items():
            child = repr(module).replace("\n", "\n  ")
            lines.append(f"({name}): {child}")
        head = type(self).__name__ + "("
        if not self._modules and len(lines) <= 1:
            return head + "".join(lines) + ")"
        return head + "\n  " + "\n  ".join(lines) + "\n)"


def _check_name(name: Any, kind: str, owner: Module, registry: dict[str, Any]) -> None:
    """PyTorch's checks on a name given to register_parameter / add_module."""
    if not isinstance(name, str):
        raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
    if "." in name:
        raise KeyError(f'{kind} name can\'t contain ".", got: {name}')
    if name == "":
        raise KeyError(f'{kind} name can\'t be empty string ""')
    if hasattr(owner, name) and name not in registry:
        raise KeyError(f"attribute '{name}' already exists")


def _reset_grad(param: Tensor, set_to_none: bool) -> None:
    """`param.grad = None`, or its gradient zeroed in place (PyTorch's
    `grad.detach_(); grad.zero_()`; a gradient that has a history is replaced by a
    detached zero tensor instead)."""
    grad = param.grad
    if grad is None:
        return
    if set_to_none:
        param.grad = None
    elif grad.grad_fn is not None:
        param.grad = zeros_like(grad)
    else:
        _overwrite_(grad, 0)


def _overwrite_(tensor: Tensor, values: Any) -> None:
    """`tensor.copy_(values)` outside autograd, as PyTorch writes a parameter being
    initialised (`uniform_` of values drawn by gradgen's generator) or a gradient
    being zeroed: a number or an array broadcast to the tensor, one version bump."""
    if tensor.requires_grad and is_grad_enabled():
        raise RuntimeError(
            "a leaf Variable that requires grad is being used in an in-place operation."
        )
    source = Tensor(np.asarray(values, dtype=tensor._data.dtype))
    with no_grad():
        tensor.copy_(source)  # type: ignore[attr-defined]


class _IncompatibleKeys(NamedTuple):
    missing_keys: list[str]
    unexpected_keys: list[str]

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return (
            f"_IncompatibleKeys(missing_keys={self.missing_keys}, "
            f"unexpected_keys={self.unexpected_keys})"
        )


def _size_text(shape: Any) -> str:
    return repr(Size(shape))


def _convert(param: Tensor, target: Any) -> None:
    """Change a parameter's dtype in place (PyTorch's `param.data = fn(param.data)`)."""
    if param.dtype is not target:
        param.data = param.detach().to(target)
        if param.grad is not None:
            param.grad = param.grad.to(target)
