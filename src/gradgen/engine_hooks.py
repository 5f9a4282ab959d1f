"""The engine's hooks on gradients (engine.py runs them): the hooks registered on a
node's output tensors and retain_grad, in PyTorch's order, and the checks on what a
hook returns in place of a gradient (PyTorch's check_single_result, with its
messages)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

from .graph import AccumulateGrad, Node, _legacy_type_name
from .scalars import python_type_name
from .tensor import Tensor

# Guards the `.grad` of non-leaves that retain it (leaves have their AccumulateGrad's).
_RETAIN_GRAD_LOCK = threading.Lock()


def call_tensor_pre_hooks(node: Node, inputs: list[Tensor | None]) -> None:
    """Tensor hooks of the node's outputs, then retain_grad, as PyTorch orders them."""
    if isinstance(node, AccumulateGrad):
        leaf_hooks = node.variable._hooks
        hooks_by_output = {0: leaf_hooks} if leaf_hooks else None
    else:
        hooks_by_output = node._tensor_pre_hooks
    if hooks_by_output:
        _run_tensor_hooks(hooks_by_output, inputs)
    if node._retains_grad:
        for output_nr, ref in node._retains_grad.items():
            tensor, grad = ref(), inputs[output_nr]
            if tensor is None or grad is None:
                continue
            with _RETAIN_GRAD_LOCK:  # backward passes on other threads may share it
                if tensor._grad is None:
                    tensor._grad = grad.clone()
                else:
                    tensor._grad = tensor._grad + grad


def _run_tensor_hooks(
    hooks_by_output: dict[int, list[Callable[..., Tensor | None]]],
    inputs: list[Tensor | None],
) -> None:
    for output_nr, hooks in hooks_by_output.items():
        for hook in list(hooks):
            grad = inputs[output_nr]
            replaced = hook(
                grad
            )  # called with None for an undefined gradient, as PyTorch
            if replaced is not None:
                inputs[output_nr] = _checked_replacement(hook, grad, replaced)


NONE_REPLACED_ERROR = "can't replace a None gradient with a non-None value"


def _checked_replacement(hook: object, grad: Tensor | None, replaced: object) -> Tensor:
    """A gradient a hook returned instead of `grad`: a Tensor of the same dtype and
    shape (PyTorch's check_single_result, with its messages)."""
    if not isinstance(replaced, Tensor):
        raise TypeError(
            f"expected Variable, but hook returned '{python_type_name(replaced)}'"
        )
    if grad is None:
        raise RuntimeError(NONE_REPLACED_ERROR)
    name = getattr(hook, "__name__", hook)
    if replaced._data.dtype != grad._data.dtype:
        raise RuntimeError(
            f"hook '{name}' has changed the type of value (was "
            f"{_legacy_type_name(grad)} got {_legacy_type_name(replaced)})"
        )
    if replaced._data.shape != grad._data.shape:
        raise RuntimeError(f"hook '{name}' has changed the size of value")
    return replaced


def replace_gradients(
    hook: object, old: Sequence[Tensor | None], new: object
) -> list[Tensor | None]:
    """What a node hook returned, checked: None (no change) or a tuple with one
    gradient per value, each None or a Tensor like the one it replaces."""
    if new is None:
        return list(old)
    if not isinstance(new, tuple):
        raise TypeError(f"expected tuple, but hook returned '{python_type_name(new)}'")
    if len(new) != len(old):
        raise RuntimeError(
            f"hook '{getattr(hook, '__name__', hook)}' has returned an incorrect number "
            f"of values (got {len(new)}, but expected {len(old)})"
        )
    return [
        None if after is None else _checked_replacement(hook, before, after)
        for before, after in zip(old, new)
    ]
