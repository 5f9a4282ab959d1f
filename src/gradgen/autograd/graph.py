"""gradgen.autograd.graph, as torch.autograd.graph: the graph's nodes and edges seen
from Python, saved-tensor hooks, and hooks on several tensors at once.

Saved-tensor hooks: inside ``saved_tensors_hooks(pack_hook, unpack_hook)`` every
tensor an operation saves for backward (inputs, outputs, ``ctx.save_for_backward``) is
handed to ``pack_hook`` (in no-grad mode) and only its result is kept; backward calls
``unpack_hook`` on that result and uses the tensor it returns, in the saved tensor's
place in the graph. The hooks of the innermost context apply; they belong to the
thread that opened them. ``utils.checkpoint`` is built on them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple

from .. import graph as _graph
from ..grad_mode import DecoratorContext
from ..graph import Node as Node
from ..graph import RemovableHandle, task_state
from ..tensor import Tensor
from ._engine_switches import (
    region_activation_memory_budget as region_activation_memory_budget,
    set_override_stale_capture_stream as set_override_stale_capture_stream,
    set_warn_on_accumulate_grad_stream_mismatch as set_warn_on_accumulate_grad_stream_mismatch,
)
from ._mutation_on_saved import (
    allow_mutation_on_saved_tensors as allow_mutation_on_saved_tensors,
)

__all__ = [
    "GradientEdge",
    "Node",
    "allow_mutation_on_saved_tensors",
    "disable_saved_tensors_hooks",
    "get_gradient_edge",
    "increment_version",
    "region_activation_memory_budget",
    "register_multi_grad_hook",
    "save_on_cpu",
    "saved_tensors_hooks",
    "set_override_stale_capture_stream",
    "set_warn_on_accumulate_grad_stream_mismatch",
]


class GradientEdge(NamedTuple):
    """Where a tensor's gradient flows: the node and which of its inputs."""

    node: Node
    output_nr: int
    ownership_token: Any = None


def get_gradient_edge(tensor: Tensor) -> GradientEdge:
    """The edge `tensor`'s gradient flows into: its grad_fn, or a leaf's AccumulateGrad."""
    if not tensor.requires_grad:
        raise RuntimeError(
            "It is not possible to get the gradient edge for a Tensor that does not "
            "require gradients"
        )
    grad_fn = tensor.grad_fn
    if grad_fn is not None:
        return GradientEdge(grad_fn, tensor.output_nr)
    accumulator = tensor._get_grad_accumulator()
    assert accumulator is not None  # a leaf that requires grad has one
    return GradientEdge(accumulator, 0)


def increment_version(tensor: Tensor | Iterable[Tensor]) -> None:
    """Mark tensors as modified in place (what an in-place operation does to their
    version counter), so backward refuses stale saved values."""
    for each in [tensor] if isinstance(tensor, Tensor) else tensor:
        each._counter().version += 1


class saved_tensors_hooks:
    """Context manager: pack every tensor saved for backward with `pack_hook`, and
    give backward `unpack_hook(packed)` in its place."""

    def __init__(
        self, pack_hook: Callable[[Tensor], Any], unpack_hook: Callable[[Any], Tensor]
    ) -> None:
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> None:
        _graph.push_saved_tensors_hooks(self.pack_hook, self.unpack_hook)

    def __exit__(self, *args: object) -> None:
        _graph.pop_saved_tensors_hooks()


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors are kept as copies on the CPU (here every tensor is on the CPU:
    the copy keeps the saved value apart from later in-place changes, as PyTorch's
    copy to CPU memory does). `pin_memory` and `device_type` are accepted."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack(tensor: Tensor) -> Tensor:
            return tensor.detach().clone()

        def unpack(packed: Tensor) -> Tensor:
            return packed

        super().__init__(pack, unpack)


class disable_saved_tensors_hooks(DecoratorContext):
    """Inside it, opening saved_tensors_hooks raises RuntimeError(error_message)."""

    def __init__(self, error_message: str) -> None:
        self.error_message = error_message

    def __enter__(self) -> None:
        self._previous = _graph.SAVED_TENSORS_HOOKS.disabled
        _graph.SAVED_TENSORS_HOOKS.disabled = self.error_message

    def __exit__(self, *args: object) -> None:
        _graph.SAVED_TENSORS_HOOKS.disabled = self._previous

    def clone(self) -> disable_saved_tensors_hooks:
        return disable_saved_tensors_hooks(self.error_message)


def _will_engine_execute_node(node: Node) -> bool:
    """Whether the backward pass now running will run `node`."""
    task = task_state.task
    if task is None:
        raise RuntimeError(
            "_will_engine_execute_node should only be called during the backward pass"
        )
    if task.exec_info is not None:
        return bool(task.exec_info.get(node, False))
    return bool(task.in_graph(node))


class _MultiHandle(RemovableHandle):
    """Removes the hook from every tensor it was registered on."""

    def __init__(self, handles: Sequence[RemovableHandle]) -> None:
        self._handles = tuple(handles)

    def remove(self) -> None:
        for handle in self._handles:
            handle.remove()


def register_multi_grad_hook(
    tensors: Sequence[Tensor], fn: Callable[..., None], *, mode: str = "all"
) -> RemovableHandle:
    """mode="all": once per backward, after the gradients of all of `tensors` that
    this backward reaches are computed, `fn(grads)` (None for the others).
    mode="any": `fn(grad)` with the first of their gradients computed."""
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    tensors = tuple(tensors)
    lock = threading.Lock()
    # Per running backward (keyed by its GraphTask): the gradients seen so far.
    pending: dict[int, tuple[list[Any], list[int]]] = {}

    def edge_node(tensor: Tensor) -> Node:
        return get_gradient_edge(tensor).node

    def all_hook(index: int) -> Callable[[Tensor], None]:
        def hook(grad: Tensor) -> None:
            task_id = task_state.task.task_id
            with lock:
                if task_id not in pending:
                    expected = sum(
                        _will_engine_execute_node(edge_node(t))
                        for t in tensors
                        if t.requires_grad
                    )
                    pending[task_id] = ([None] * len(tensors), [0, expected])
                grads, (seen, expected) = pending[task_id]
                grads[index] = grad
                pending[task_id][1][0] = seen + 1
                done = seen + 1 == expected
                if done:
                    del pending[task_id]
            if done:
                fn(grads)

        return hook

    fired = [-1]  # mode "any": the backward pass that has called fn

    def any_hook(grad: Tensor) -> None:
        task_id = task_state.task.task_id
        with lock:
            if fired[0] == task_id:
                return
            fired[0] = task_id
        fn(grad)

    handles = [
        t.register_hook(all_hook(i) if mode == "all" else any_hook)
        for i, t in enumerate(tensors)
        if t.requires_grad
    ]
    return _MultiHandle(handles)
