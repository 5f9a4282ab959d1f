"""torch.nn.Module: the base class of layers and models.

A Module registers what is assigned to its attributes, as PyTorch's does: a
`Parameter` goes to `_parameters`, a `Module` to `_modules`, a tensor assigned to a
name registered by `register_buffer` to `_buffers`, anything else is a plain
attribute. The walks (`named_parameters`, `named_buffers`, `named_modules`, ...) follow
the registrations in assignment order, depth first, each object once unless
`remove_duplicate=False`.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from typing import Any, NamedTuple

import numpy as np

from gradgen.devices import device
from gradgen.dtypes import as_dtype, float32, float64, spelling
from gradgen.factories import zeros, zeros_like
from gradgen.grad_mode import is_grad_enabled, no_grad
from gradgen.tensor import Size, Tensor
from gradgen.variable_type_utils import copy_into, increment_version

from ..parameter import Buffer, Parameter, is_lazy
from . import hooks as _hooks  # the registries of global hooks
from .hooks import RemovableHandle, call_with_hooks
from .hooks import (
    register_module_forward_hook as register_module_forward_hook,
    register_module_forward_pre_hook as register_module_forward_pre_hook,
    register_module_full_backward_hook as register_module_full_backward_hook,
    register_module_full_backward_pre_hook as register_module_full_backward_pre_hook,
)

__all__ = [
    "Module",
    "register_module_forward_hook",
    "register_module_forward_pre_hook",
    "register_module_full_backward_hook",
    "register_module_full_backward_pre_hook",
]

_HOOK_DICTS = (
    "_forward_pre_hooks",
    "_forward_pre_hooks_with_kwargs",
    "_forward_hooks",
    "_forward_hooks_with_kwargs",
    "_forward_hooks_always_called",
    "_backward_pre_hooks",
    "_backward_hooks",
    "_state_dict_pre_hooks",
    "_state_dict_hooks",
    "_load_state_dict_post_hooks",
)


class Module:
    """Base class of layers and models: subclasses set attributes in `__init__`
    (after `super().__init__()`) and define `forward`."""

    training: bool
    _parameters: dict[str, Parameter | None]
    _buffers: dict[str, Tensor | None]
    _non_persistent_buffers_set: set[str]
    _modules: dict[str, Module | None]
    _version: int = 1

    def __init__(self) -> None:
        setattr_ = object.__setattr__
        setattr_(self, "training", True)
        setattr_(self, "_parameters", {})
        setattr_(self, "_buffers", {})
        setattr_(self, "_non_persistent_buffers_set", set())
        setattr_(self, "_modules", {})
        for name in _HOOK_DICTS:
            setattr_(self, name, OrderedDict())

    # -- registration -----------------------------------------------------------------
    def __setattr__(self, name: str, value: Any) -> None:
        params = self.__dict__.get("_parameters")
        modules = self.__dict__.get("_modules")
        buffers = self.__dict__.get("_buffers")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError(
                    "cannot assign parameters before Module.__init__() call"
                )
            self._forget(name, "_parameters")
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as parameter '{name}' "
                    "(torch.nn.Parameter or None expected)"
                )
            self.register_parameter(name, value)
        elif isinstance(value, Module):
            if modules is None:
                raise AttributeError(
                    "cannot assign module before Module.__init__() call"
                )
            self._forget(name, "_modules")
            modules[name] = value
        elif modules is not None and name in modules:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as child module '{name}' "
                    "(torch.nn.Module or None expected)"
                )
            modules[name] = None
        elif isinstance(value, Buffer):
            self.register_buffer(name, value, value.persistent)
        elif buffers is not None and name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(
                    f"cannot assign '{_typename(value)}' as buffer '{name}' "
                    "(torch.nn.Buffer, torch.Tensor or None expected)"
                )
            buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def _forget(self, name: str, keep: str) -> None:
        """Drop `name` from the registries other than `keep` (where it keeps its
        place) before it is registered there."""
        self.__dict__.pop(name, None)
        for registry in ("_parameters", "_buffers", "_modules"):
            if registry != keep:
                self.__dict__[registry].pop(name, None)
        if keep != "_buffers":
            self.__dict__["_non_persistent_buffers_set"].discard(name)

    def __getattr__(self, name: str) -> Any:
        # Only called when normal lookup fails: parameters, buffers and submodules
        # live in the registries, not in __dict__.
        registries = self.__dict__
        for registry in ("_parameters", "_buffers", "_modules"):
            entries = registries.get(registry)
            if entries is not None and name in entries:
                return entries[name]
        raise AttributeError(
            f"'{type(self).__name__}' object has no attribute '{name}'"
        )

    def __delattr__(self, name: str) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def register_buffer(
        self, name: str, tensor: Tensor | None, persistent: bool = True
    ) -> None:
        """A tensor that is state but not a parameter (e.g. running statistics): in
        `state_dict` unless `persistent=False`, converted by `.to()`."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        _check_name(name, "buffer", self, self._buffers)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                "(torch Tensor or None required)"
            )
        self._forget(name, "_buffers")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter (or a None placeholder, e.g. a bias switched off)."""
        if "_parameters" not in self.__dict__:
            raise AttributeError(
                "cannot assign parameter before Module.__init__() call"
            )
        _check_name(name, "parameter", self, self._parameters)
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                "(torch.nn.Parameter or None required)"
            )
        if param is not None and param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model "
                f"parameters must be created explicitly. To express '{name}' as a "
                "function of another Tensor, compute the value in the forward() method."
            )
        self._forget(name, "_parameters")
        self._parameters[name] = param

    def add_module(self, name: str, module: Module | None) -> None:
        """Add a child module (or None)."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        _check_name(name, "module", self, self._modules)
        self._forget(name, "_modules")
        self._modules[name] = module

    def register_module(self, name: str, module: Module | None) -> None:
        """add_module under its other name."""
        self.add_module(name, module)

    def get_submodule(self, target: str) -> Module:
        """The module at dotted path `target` ("" is this module)."""
        if target == "":
            return self
        module: Module = self
        for item in target.split("."):
            if not hasattr(module, item):
                raise AttributeError(f"{module._get_name()} has no attribute `{item}`")
            module = getattr(module, item)
            if not isinstance(module, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return module

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at dotted path `target`."""
        module_path, _, name = target.rpartition(".")
        module = self.get_submodule(module_path)
        if not hasattr(module, name):
            raise AttributeError(f"{module._get_name()} has no attribute `{name}`")
        param = getattr(module, name)
        if not isinstance(param, Parameter):
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at dotted path `target`."""
        module_path, _, name = target.rpartition(".")
        module = self.get_submodule(module_path)
        if not hasattr(module, name):
            raise AttributeError(f"{module._get_name()} has no attribute `{name}`")
        if name not in module._buffers:
            raise AttributeError(f"`{name}` is not a buffer")
        buffer: Tensor = getattr(module, name)
        return buffer

    # -- calling ----------------------------------------------------------------------
    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function'
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not (
            self._forward_pre_hooks
            or self._forward_hooks
            or self._backward_hooks
            or self._backward_pre_hooks
            or _hooks.any_global_hooks()
        ):
            return self.forward(*args, **kwargs)
        return call_with_hooks(self, args, kwargs)

    # -- hooks ------------------------------------------------------------------------
    def _add_hook(
        self, registry: str, hook: Any, prepend: bool, *flags: str
    ) -> RemovableHandle:
        hooks = self.__dict__[registry]
        flag_dicts = [self.__dict__[flag] for flag in flags]
        handle = RemovableHandle(hooks, *flag_dicts)
        hooks[handle.id] = hook
        for flag_dict in flag_dicts:
            flag_dict[handle.id] = True
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_pre_hook(
        self,
        hook: Callable[..., Any],
        *,
        prepend: bool = False,
        with_kwargs: bool = False,
    ) -> RemovableHandle:
        """`hook(module, args)` (or `hook(module, args, kwargs)`) before forward; a
        result other than None replaces the arguments."""
        flags = ("_forward_pre_hooks_with_kwargs",) if with_kwargs else ()
        return self._add_hook("_forward_pre_hooks", hook, prepend, *flags)

    def register_forward_hook(
        self,
        hook: Callable[..., Any],
        *,
        prepend: bool = False,
        with_kwargs: bool = False,
        always_call: bool = False,
    ) -> RemovableHandle:
        """`hook(module, args, output)` (or with kwargs before output) after forward;
        a result other than None replaces the output."""
        flags: tuple[str, ...] = ("_forward_hooks_with_kwargs",) if with_kwargs else ()
        if always_call:
            flags += ("_forward_hooks_always_called",)
        return self._add_hook("_forward_hooks", hook, prepend, *flags)

    def register_full_backward_pre_hook(
        self, hook: Callable[..., Any], prepend: bool = False
    ) -> RemovableHandle:
        """`hook(module, grad_output)` when the gradients with respect to the module's
        outputs are known; a result other than None replaces them."""
        return self._add_hook("_backward_pre_hooks", hook, prepend)

    def register_full_backward_hook(
        self, hook: Callable[..., Any], prepend: bool = False
    ) -> RemovableHandle:
        """`hook(module, grad_input, grad_output)` when the gradients with respect to
        the module's tensor inputs are known; a result other than None replaces
        grad_input."""
        return self._add_hook("_backward_hooks", hook, prepend)

    def register_state_dict_pre_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """`hook(module, prefix, keep_vars)` before `state_dict` saves this module."""
        return self._add_hook("_state_dict_pre_hooks", hook, False)

    def register_state_dict_post_hook(
        self, hook: Callable[..., Any]
    ) -> RemovableHandle:
        """`hook(module, state_dict, prefix, local_metadata)` after `state_dict` saved
        this module (it may edit state_dict in place; it must return None)."""
        return self._add_hook("_state_dict_hooks", hook, False)

    def register_load_state_dict_post_hook(
        self, hook: Callable[..., Any]
    ) -> RemovableHandle:
        """`hook(module, incompatible_keys)` after `load_state_dict` (it may clear the
        key lists in place)."""
        return self._add_hook("_load_state_dict_post_hooks", hook, False)

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

    def _named_members(
        self, registry: str, prefix: str, recurse: bool, remove_duplicate: bool
    ) -> Iterator[tuple[str, Any]]:
        """(dotted name, member) of one registry over this module (and those below)."""
        seen: set[int] = set()
        modules = (
            self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
            if recurse
            else iter([(prefix, self)])
        )
        for module_prefix, module in modules:
            for name, member in module.__dict__[registry].items():
                if member is None or id(member) in seen:
                    continue
                if remove_duplicate:
                    seen.add(id(member))
                yield module_prefix + ("." if module_prefix else "") + name, member

    def named_parameters(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Parameter]]:
        """(dotted name, parameter) pairs in registration order; a parameter shared by
        two modules comes once unless `remove_duplicate` is False."""
        yield from self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_buffers(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Tensor]]:
        """(dotted name, buffer) pairs, persistent or not, as named_parameters."""
        yield from self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, buffer in self.named_buffers(recurse=recurse):
            yield buffer

    # -- modes and gradients ----------------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
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
    def apply(self, fn: Callable[[Module], Any]) -> Module:
        """`fn(module)` for every submodule (children first) and then this one."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def _apply(self, fn: Callable[[Tensor], Tensor]) -> Module:
        """`fn` over every parameter (in place: the same Parameter objects, their
        gradients too) and buffer (replaced), in this module and below."""
        for module in self.children():
            module._apply(fn)
        for param in self._parameters.values():
            if param is None:
                continue
            converted = fn(param.detach())
            if converted.dtype is not param.dtype:
                param.data = converted
                if param.grad is not None:
                    param.grad = fn(param.grad)
        for name, buffer in self._buffers.items():
            if is_lazy(buffer):  # converted in place, still uninitialized
                buffer.data = fn(buffer.detach())  # type: ignore[union-attr]
            elif buffer is not None:
                self._buffers[name] = fn(buffer)
        return self

    def to(self, *args: Any, **kwargs: Any) -> Module:
        """PyTorch's Module.to(device=None, dtype=None): floating (and complex)
        parameters and buffers converted, parameters in place."""
        zeros(()).to(*args, **kwargs)  # Tensor.to checks devices and arguments
        target = kwargs.get("dtype")
        for argument in args:
            if isinstance(argument, Tensor):
                target = argument.dtype
            elif not isinstance(argument, (str, device, bool)):
                target = argument
        if target is None:
            return self
        target = as_dtype(target)
        if not (target.is_floating_point or target.is_complex):
            raise TypeError(
                "nn.Module.to only accepts floating point or complex dtypes, but got "
                f"desired dtype={_dtype_text(target)}"
            )
        return self._apply(lambda t: t.to(target) if _is_float_or_complex(t) else t)

    def cpu(self) -> Module:
        return self

    def double(self) -> Module:
        return self._apply(lambda t: t.to(float64) if t.is_floating_point() else t)

    def float(self) -> Module:
        return self._apply(lambda t: t.to(float32) if t.is_floating_point() else t)

    # -- saving and loading -----------------------------------------------------------
    def state_dict(
        self,
        *,
        destination: dict[str, Any] | None = None,
        prefix: str = "",
        keep_vars: bool = False,
    ) -> dict[str, Any]:
        """Every parameter and persistent buffer by dotted name (detached unless
        `keep_vars`), module by module in registration order; `_metadata` holds each
        module's version, as PyTorch's."""
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()  # type: ignore[attr-defined]
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        local_metadata = {"version": self._version}
        metadata = getattr(destination, "_metadata", None)
        if metadata is not None:
            metadata[prefix[:-1]] = local_metadata
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(
                    destination=destination,
                    prefix=prefix + name + ".",
                    keep_vars=keep_vars,
                )
        for hook in self._state_dict_hooks.values():
            if hook(self, destination, prefix, local_metadata) is not None:
                raise RuntimeError("state_dict post-hook must return None")
        return destination

    def _save_to_state_dict(
        self, destination: dict[str, Any], prefix: str, keep_vars: bool
    ) -> None:
        """Write this module's own entries (not its children's) into `destination`,
        as PyTorch's hook for subclasses (the lazy modules keep their uninitialized
        entries as they are)."""
        for name, value in self._local_state().items():
            destination[prefix + name] = value if keep_vars else value.detach()

    def _local_state(self) -> dict[str, Tensor]:
        """This module's own parameters and persistent buffers (not None)."""
        state: dict[str, Tensor] = {
            name: p for name, p in self._parameters.items() if p is not None
        }
        for name, buffer in self._buffers.items():
            if buffer is not None and name not in self._non_persistent_buffers_set:
                state[name] = buffer
        return state

    def load_state_dict(
        self, state_dict: Mapping[str, Any], strict: bool = True, assign: bool = False
    ) -> _IncompatibleKeys:
        """Copy `state_dict`'s values into the parameters and persistent buffers of the
        same names (PyTorch's checks and messages); returns (missing_keys,
        unexpected_keys)."""
        if not isinstance(state_dict, Mapping):
            raise TypeError(
                f"Expected state_dict to be dict-like, got {type(state_dict)}."
            )
        missing: list[str] = []
        unexpected: list[str] = []
        errors: list[str] = []
        # A copy (modules may add keys, as BatchNorm does for old checkpoints) that
        # keeps the versions saved in `_metadata`.
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)
        for module_prefix, module in self.named_modules(remove_duplicate=False):
            prefix = module_prefix + "." if module_prefix else ""
            local_metadata = dict(metadata.get(module_prefix, {})) if metadata else {}
            local_metadata["assign_to_params_buffers"] = assign
            module._load_from_state_dict(
                state_dict, prefix, local_metadata, True, missing, unexpected, errors
            )
        result = _IncompatibleKeys(missing, unexpected)
        for _, module in self.named_modules(remove_duplicate=False):
            for hook in module._load_state_dict_post_hooks.values():
                hook(module, result)
        if strict and unexpected:
            errors.insert(
                0,
                "Unexpected key(s) in state_dict: "
                + ", ".join(f'"{k}"' for k in unexpected)
                + ". ",
            )
        if strict and missing:
            errors.insert(
                0,
                "Missing key(s) in state_dict: "
                + ", ".join(f'"{k}"' for k in missing)
                + ". ",
            )
        if errors:
            raise RuntimeError(
                f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                + "\n\t".join(errors)
            )
        return result

    def _load_from_state_dict(
        self,
        state_dict: dict[str, Any],
        prefix: str,
        local_metadata: dict[str, Any],
        strict: bool,
        missing_keys: list[str],
        unexpected_keys: list[str],
        error_msgs: list[str],
    ) -> None:
        """Load this module's own entries (not its children's), as PyTorch's hook for
        subclasses: `local_metadata["version"]` is the `_version` the checkpoint was
        saved with (absent in old or hand-made state dicts); an override may change
        `state_dict` (a copy) before calling this one."""
        assign = bool(local_metadata.get("assign_to_params_buffers", False))
        self._load_local(state_dict, prefix, missing_keys, error_msgs, assign)
        if strict:
            unexpected_keys += self._unexpected_keys(state_dict, prefix)

    def _load_local(
        self,
        state_dict: Mapping[str, Any],
        prefix: str,
        missing: list[str],
        errors: list[str],
        assign: bool,
    ) -> None:
        """Copy this module's own entries of `state_dict` (PyTorch's
        _load_from_state_dict); the lists collect what is missing or wrong."""
        for name, own in self._local_state().items():
            key = prefix + name
            if key not in state_dict:
                missing.append(key)
                continue
            if is_lazy(own):  # the checkpoint's entry is uninitialized too
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                errors.append(
                    f'While copying the parameter named "{key}", expected torch.Tensor '
                    f"or Tensor-like object from checkpoint but received {type(value)}"
                )
                continue
            if tuple(value.shape) != tuple(own.shape):
                errors.append(
                    f"size mismatch for {key}: copying a param with shape "
                    f"{_size_text(value.shape)} from checkpoint, the shape in current "
                    f"model is {_size_text(own.shape)}."
                )
                continue
            if assign:
                self._assign(name, value)
                continue
            with no_grad():
                copy_into(own, value.detach().to(own.dtype)._data)
                increment_version(own)

    def _assign(self, name: str, value: Tensor) -> None:
        """load_state_dict(assign=True): the checkpoint's tensor itself is kept."""
        if name in self._parameters:
            requires_grad = self._parameters[name].requires_grad  # type: ignore[union-attr]
            if not isinstance(value, Parameter):
                value = Parameter(value, requires_grad=requires_grad)
            else:
                value.requires_grad_(requires_grad)
            self._parameters[name] = value
        else:
            self._buffers[name] = value

    def _unexpected_keys(self, state_dict: Mapping[str, Any], prefix: str) -> list[str]:
        """The keys under `prefix` that name neither an entry of this module nor one
        of its children."""
        local = self._local_state()
        found = []
        for key in state_dict:
            if not key.startswith(prefix):
                continue
            head, dot, _ = key[len(prefix) :].partition(".")
            if (dot and head not in self._modules) or (not dot and head not in local):
                found.append(key)
        return found

    # -- printing ---------------------------------------------------------------------
    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        """This module's own settings, printed inside its repr."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [
            f"({name}): " + repr(module).replace("\n", "\n  ")
            for name, module in self._modules.items()
        ]
        lines = extra_lines + child_lines
        text = self._get_name() + "("
        if len(extra_lines) == 1 and not child_lines:
            text += extra_lines[0]
        elif lines:
            text += "\n  " + "\n  ".join(lines) + "\n"
        return text + ")"

    def __dir__(self) -> list[str]:
        names = list(super().__dir__())
        for registry in ("_parameters", "_buffers", "_modules"):
            names += list(self.__dict__[registry])
        return sorted(set(names))


def _typename(value: Any) -> str:
    """How torch.typename names `value`: the legacy class of a tensor
    ("torch.FloatTensor"), else the type's name."""
    if isinstance(value, Tensor):
        return "torch." + spelling(value).legacy_tensor
    return type(value).__name__


def _dtype_text(target: Any) -> str:
    return "torch." + str(target).rpartition(".")[2]


def _is_float_or_complex(t: Tensor) -> bool:
    return bool(t.is_floating_point() or t.is_complex())


def _check_name(name: Any, kind: str, owner: Module, registry: dict[str, Any]) -> None:
    """PyTorch's checks of a name being registered."""
    if not isinstance(name, str):
        raise TypeError(f"{kind} name should be a string. Got {_typename(name)}")
    if "." in name:
        if kind == "module":
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        raise KeyError(f'{kind} name can\'t contain "."')
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
        tensor.copy_(source)


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
