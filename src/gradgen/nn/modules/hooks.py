"""The hook machinery of Module: removable handles and the full backward hooks.

A handle is what `register_*_hook` returns: `handle.remove()` takes the hook out of
every dict it was filed in (PyTorch's torch.utils.hooks.RemovableHandle).

Full backward hooks (PyTorch's BackwardHook) wrap a module call between two identity
autograd Functions: one on the tensors the module receives, one on the tensors it
returns. Backward reaches the outputs' identity first (the gradients with respect to
the outputs: the pre-hooks run there and may replace them), then the inputs' identity
(the gradients with respect to the inputs: the full hooks run there with both).
"""

from __future__ import annotations

import warnings
import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from gradgen.autograd.function import Function
from gradgen.tensor import Tensor

__all__ = [
    "RemovableHandle",
    "BackwardHook",
    "call_with_hooks",
    "register_module_forward_pre_hook",
    "register_module_forward_hook",
    "register_module_full_backward_pre_hook",
    "register_module_full_backward_hook",
]


class RemovableHandle:
    """Removes one hook from the dicts it was filed in; also a context manager."""

    next_id = 0

    def __init__(self, *hooks_dicts: dict[int, Any]) -> None:
        self.hooks_dict_refs = [weakref.ref(hooks) for hooks in hooks_dicts]
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1

    def remove(self) -> None:
        for ref in self.hooks_dict_refs:
            hooks = ref()
            if hooks is not None:
                hooks.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.remove()


# Hooks of every module (torch.nn.modules.module.register_module_*): each module call
# runs them before its own hooks of the same kind.
# (OrderedDicts: a handle refers to them weakly, which plain dicts do not allow.)
global_forward_pre_hooks: dict[int, Callable[..., Any]] = OrderedDict()
global_forward_hooks: dict[int, Callable[..., Any]] = OrderedDict()
global_forward_hooks_with_kwargs: dict[int, bool] = OrderedDict()
global_backward_pre_hooks: dict[int, Callable[..., Any]] = OrderedDict()
global_backward_hooks: dict[int, Callable[..., Any]] = OrderedDict()


def any_global_hooks() -> bool:
    return bool(
        global_forward_pre_hooks
        or global_forward_hooks
        or global_backward_pre_hooks
        or global_backward_hooks
    )


def _register_global(
    registry: dict[int, Callable[..., Any]],
    hook: Callable[..., Any],
    *flags: dict[int, bool],
) -> RemovableHandle:
    handle = RemovableHandle(registry, *flags)
    registry[handle.id] = hook
    for flag in flags:
        flag[handle.id] = True
    return handle


def register_module_forward_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """`hook(module, args)` before every module's forward (and its own pre-hooks); a
    result other than None replaces the arguments."""
    return _register_global(global_forward_pre_hooks, hook)


def register_module_forward_hook(
    hook: Callable[..., Any], *, with_kwargs: bool = False, always_call: bool = False
) -> RemovableHandle:
    """`hook(module, args, output)` (with kwargs before output if `with_kwargs`) after
    every module's forward, before its own hooks; a result other than None replaces
    the output."""
    del always_call  # the hook runs after every forward that returns
    flags = (global_forward_hooks_with_kwargs,) if with_kwargs else ()
    return _register_global(global_forward_hooks, hook, *flags)


def register_module_full_backward_pre_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """`hook(module, grad_output)` for every module, before its own pre-hooks."""
    return _register_global(global_backward_pre_hooks, hook)


def register_module_full_backward_hook(hook: Callable[..., Any]) -> RemovableHandle:
    """`hook(module, grad_input, grad_output)` for every module, before its own."""
    return _register_global(global_backward_hooks, hook)


def call_with_hooks(module: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Module.__call__ with hooks: forward between the pre-hooks and the hooks (the
    global ones first), full backward hooks wrapped around."""
    args, kwargs = _run_forward_pre_hooks(module, args, kwargs)
    backward_hook = None
    full = [*global_backward_hooks.values(), *module._backward_hooks.values()]
    pre = [*global_backward_pre_hooks.values(), *module._backward_pre_hooks.values()]
    if full or pre:
        backward_hook = BackwardHook(module, full, pre)
        args = backward_hook.setup_input_hook(args)
    result = module.forward(*args, **kwargs)
    with_kwargs = {
        **global_forward_hooks_with_kwargs,
        **module._forward_hooks_with_kwargs,
    }
    hooks = [*global_forward_hooks.items(), *module._forward_hooks.items()]
    for hook_id, hook in hooks:
        if hook_id in with_kwargs:
            hook_result = hook(module, args, kwargs, result)
        else:
            hook_result = hook(module, args, result)
        if hook_result is not None:
            result = hook_result
    if backward_hook is not None:
        result = backward_hook.setup_output_hook(result)
    return result


def _run_forward_pre_hooks(
    module: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    for hook in global_forward_pre_hooks.values():
        result = hook(module, args)
        if result is not None:
            args = result if isinstance(result, tuple) else (result,)
    for hook_id, hook in module._forward_pre_hooks.items():
        if hook_id in module._forward_pre_hooks_with_kwargs:
            result = hook(module, args, kwargs)
            if result is None:
                continue
            if not (isinstance(result, tuple) and len(result) == 2):
                raise RuntimeError(
                    "forward pre-hook must return None or a tuple of "
                    f"(new_args, new_kwargs), but got {result}."
                )
            args, kwargs = result
        else:
            result = hook(module, args)
            if result is not None:
                args = result if isinstance(result, tuple) else (result,)
    return args, kwargs


class _Identity(Function):
    """The tensors unchanged; backward hands the gradients to `ctx.on_backward`."""

    @staticmethod
    def forward(ctx: Any, on_backward: Any, *tensors: Tensor) -> Any:
        ctx.on_backward = on_backward
        return tuple(tensor.view_as(tensor) for tensor in tensors)

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        return (None,) + tuple(ctx.on_backward(grads))


def _replaced(name: str, given: tuple[Any, ...], result: Any) -> tuple[Any, ...] | None:
    """A hook's result: None keeps the gradients, else a tuple of the same length."""
    if result is None:
        return None
    result = tuple(result) if isinstance(result, (tuple, list)) else (result,)
    if len(result) != len(given):
        raise RuntimeError(
            f"Backward hook returned an invalid number of grad_{name} (expected "
            f"{len(given)} but got {len(result)})"
        )
    return result  # type: ignore[no-any-return]


class BackwardHook:
    """One call of a module with full backward hooks and / or backward pre-hooks.

    grad_input and grad_output hold one entry per tensor the module received or
    returned, None for those that take no gradient, as PyTorch's.
    """

    def __init__(
        self,
        module: Any,
        hooks: list[Callable[..., Any]],
        pre_hooks: list[Callable[..., Any]],
    ) -> None:
        self.module = module
        self.hooks = hooks
        self.pre_hooks = pre_hooks
        self.grad_outputs: tuple[Any, ...] | None = None
        self.n_inputs = 0
        self.input_slots: list[int] = []
        self.n_outputs = 0
        self.output_slots: list[int] = []

    def setup_input_hook(self, args: tuple[Any, ...]) -> tuple[Any, ...]:
        """`args` with every tensor passed through the inputs' identity."""
        self.n_inputs = sum(isinstance(a, Tensor) for a in args)
        if not self.hooks:
            return args
        args, self.input_slots = _wrap(args, self._input_backward)
        return args

    def setup_output_hook(self, result: Any) -> Any:
        """`result` (a tensor or a tuple) with its tensors through the outputs'
        identity."""
        values = (result,) if isinstance(result, Tensor) else result
        if not isinstance(values, tuple):
            return result
        self.n_outputs = sum(isinstance(v, Tensor) for v in values)
        values, self.output_slots = _wrap(values, self._output_backward)
        return values[0] if isinstance(result, Tensor) else values

    def _output_backward(self, grads: tuple[Any, ...]) -> tuple[Any, ...]:
        full = _spread(grads, self.output_slots, self.n_outputs)
        for hook in self.pre_hooks:
            full = _replaced("output", full, hook(self.module, full)) or full
        self.grad_outputs = full
        if self.hooks and not self.input_slots:
            # No input takes a gradient: the hooks run now, with None for each input.
            warnings.warn(
                "Full backward hook is firing when gradients are computed with respect "
                "to module outputs since no inputs require gradients. See the "
                "documentation of torch.nn.Module.register_full_backward_hook for more "
                "details.",
                stacklevel=2,
            )
            self._run_hooks((None,) * self.n_inputs)
        return tuple(full[slot] for slot in self.output_slots)

    def _input_backward(self, grads: tuple[Any, ...]) -> tuple[Any, ...]:
        full = self._run_hooks(_spread(grads, self.input_slots, self.n_inputs))
        return tuple(full[slot] for slot in self.input_slots)

    def _run_hooks(self, grad_inputs: tuple[Any, ...]) -> tuple[Any, ...]:
        for hook in self.hooks:
            result = hook(self.module, grad_inputs, self.grad_outputs)
            grad_inputs = _replaced("input", grad_inputs, result) or grad_inputs
        return grad_inputs


def _spread(grads: tuple[Any, ...], slots: list[int], size: int) -> tuple[Any, ...]:
    """`grads` (one per wrapped tensor) placed at their slots among `size` tensors."""
    full: list[Any] = [None] * size
    for slot, grad in zip(slots, grads):
        full[slot] = grad
    return tuple(full)


def _wrap(
    values: tuple[Any, ...], on_backward: Callable[[tuple[Any, ...]], Any]
) -> tuple[tuple[Any, ...], list[int]]:
    """`values` with the tensors that require grad replaced by their identity, and
    the slots (counted among the tensors) of those replaced."""
    positions, slots = [], []
    tensors_seen = 0
    for position, value in enumerate(values):
        if isinstance(value, Tensor):
            if value.requires_grad:
                positions.append(position)
                slots.append(tensors_seen)
            tensors_seen += 1
    if not positions:
        return values, []
    wrapped = _Identity.apply(on_backward, *(values[i] for i in positions))
    result = list(values)
    for position, tensor in zip(positions, wrapped):
        result[position] = tensor
    return tuple(result), slots
