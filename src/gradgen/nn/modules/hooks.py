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
from collections.abc import Callable
from typing import Any

from gradgen.autograd.function import Function
from gradgen.tensor import Tensor

__all__ = ["RemovableHandle", "BackwardHook"]


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
