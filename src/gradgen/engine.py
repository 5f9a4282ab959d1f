"""The backward engine: runs a graph of Nodes from its roots to its leaves.

`execute` does what PyTorch's Engine::execute does, on the calling thread:
1. validate the root gradients against the roots' metadata;
2. count, for every node reachable from the roots, how many edges lead into it;
3. when `outputs` are given (`grad()`, `backward(inputs=)`), mark which nodes have a
   path to them (exec info) so that nothing else runs;
4. pop ready nodes from a priority queue, latest-created first (AccumulateGrad as soon
   as it is ready), run hooks and `apply` under grad mode = `create_graph`, validate
   each produced gradient, and add it to the input buffer of the node it flows to;
5. free each executed node's saved tensors unless `keep_graph`.

Invariants: nothing here recurses, so graph depth is bounded by memory only.
`_validated` (through `validate_outputs`, or inline in `_run`'s loop) is the one place
where a gradient is reduced to its input's shape (broadcasting) and cast to its input's
dtype; formulas never do it themselves.
Gradients of non-leaves live only in the engine's input buffers.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import warnings
from collections.abc import Callable, Sequence
from typing import TypeAlias

import numpy as np

from . import anomaly_mode, dtypes, grad_mode
from .graph import (
    AccumulateGrad,
    Edge,
    EdgeTuple,
    GraphRoot,
    Node,
    _legacy_type_name,
    is_stealable,
    task_state,
)
from .scalars import python_type_name
from .tensor import Tensor

# The gradients arriving at one node, summed per input slot, are a plain list (one
# entry per input of the node): `buffer_add` adds one gradient into it.
InputBuffer: TypeAlias = "list[Tensor | None]"


def buffer_add(slots: InputBuffer, position: int, gradient: Tensor | None) -> None:
    """Add `gradient` into slot `position` (None adds nothing)."""
    if gradient is None:
        return
    old = slots[position]
    if old is None:
        slots[position] = gradient
    elif grad_mode.is_grad_enabled():
        slots[position] = old + gradient  # recorded: create_graph
    elif old.__class__ is not Tensor or gradient.__class__ is not Tensor:
        # A subclass (vmap's BatchedTensor): its _data is not all of it.
        slots[position] = old + gradient
    else:
        slots[position] = None
        if is_stealable(old):
            np.add(old._data, gradient._data, out=old._data)
            slots[position] = old
        else:
            slots[position] = Tensor(np.asarray(old._data + gradient._data))


def _shape_error(index: int, got: tuple[int, ...], expected: tuple[int, ...]) -> str:
    return (
        f"invalid gradient at index {index} - got {list(got)} but expected shape "
        f"compatible with {list(expected)}"
    )


def is_expandable_to(shape: tuple[int, ...], desired: tuple[int, ...]) -> bool:
    """Whether a tensor of `shape` broadcasts to `desired` (so `desired` sums back)."""
    if len(shape) > len(desired):
        return False
    for size, target in zip(reversed(shape), reversed(desired)):
        if size != target and size != 1:
            return False
    return True


def _error(node: Node | None, message: str) -> str:
    """A validation failure: "Function XBackward0 returned an invalid ..." for a node's
    gradients, the bare message for the root gradients."""
    return message if node is None else f"Function {node.name()} returned an {message}"


def validate_outputs(
    edges: Sequence[EdgeTuple], grads: list[Tensor | None], node: Node | None = None
) -> None:
    """Check every gradient against the input it flows to; reduce and cast in place.

    `node` produced `grads` (None for the root gradients); errors name it.
    """
    if len(grads) != len(edges):
        raise RuntimeError(
            _error(
                node,
                f"invalid number of gradients - expected {len(edges)}, but got "
                f"{len(grads)}",
            )
        )
    for index, (function, input_nr) in enumerate(edges):
        grad = grads[index]
        if function is None or grad is None:
            continue
        grads[index] = _validated(node, index, grad, function, input_nr)


def _validated(
    node: Node | None, index: int, grad: object, function: Node, input_nr: int
) -> Tensor:
    """Gradient `index` of `node`, checked against input `input_nr` of `function` it
    flows to, summed to that input's shape and cast to its dtype."""
    if not isinstance(grad, Tensor):
        raise TypeError(
            _error(
                node,
                f"invalid gradient at index {index} - expected a Tensor or None, "
                f"but got {type(grad).__name__}",
            )
        )
    expected_shape, expected_dtype = function._input_metadata[input_nr]
    shape = grad._data.shape
    if shape != expected_shape:
        if not is_expandable_to(expected_shape, shape):
            raise RuntimeError(_error(node, _shape_error(index, shape, expected_shape)))
        grad = grad.sum_to_size(expected_shape)
    if expected_dtype is not None and grad._data.dtype != expected_dtype:
        grad_is_complex = grad._data.dtype.kind == "c"
        if grad._data.dtype.kind != "f" and grad_is_complex != (
            expected_dtype.kind == "c"
        ):
            raise RuntimeError(
                _error(
                    node,
                    "Expected isFloatingType(grad.scalar_type()) || (input_is_complex "
                    "== grad_is_complex) to be true, but got false.",
                )
            )
        grad = grad._to_copy(dtype=dtypes._FROM_NUMPY[expected_dtype])
    return grad


_task_ids = itertools.count()


class GraphTask:
    """The state of one backward pass."""

    __slots__ = (
        "task_id",
        "keep_graph",
        "dependencies",
        "nodes_in_graph",
        "not_ready",
        "exec_info",
        "needed",
        "captures",
        "captured",
    )

    def __init__(self, keep_graph: bool) -> None:
        self.task_id = next(_task_ids)  # PyTorch's _current_graph_task_id
        self.keep_graph = keep_graph
        self.dependencies: dict[Node, int] = {}
        self.nodes_in_graph: set[Node] = set()  # reached from the root
        self.not_ready: dict[Node, InputBuffer] = {}
        # None: run everything. Otherwise the nodes gradients must reach (PyTorch's
        # should_execute: needed or captured) ...
        self.exec_info: dict[Node, bool] | None = None
        # ... and, of those, the nodes whose apply runs.
        self.needed: set[Node] = set()
        self.captures: dict[Node, list[tuple[int, int]]] = {}
        self.captured: list[Tensor | None] = []


def compute_dependencies(root: Node, task: GraphTask, min_topo_nr: int = 0) -> None:
    """Count the edges into every node reachable from `root` (iterative DFS).

    Nodes whose topological number is below `min_topo_nr` cannot lead to any of the
    requested outputs, so the search does not go below them (PyTorch's pruning).
    """
    dependencies = task.dependencies
    seen = task.nodes_in_graph
    seen.add(root)
    stack = [root]
    while stack:
        node = stack.pop()
        for function, _ in node._next_edges:
            if function is None:
                continue
            dependencies[function] = dependencies.get(function, 0) + 1
            if function not in seen and function._topological_nr >= min_topo_nr:
                seen.add(function)
                stack.append(function)


def init_to_execute(
    root: Node,
    task: GraphTask,
    outputs: Sequence[Edge],
    accumulate_grad: bool,
    min_topo_nr: int = 0,
) -> None:
    """Mark the nodes that lead to `outputs`; only they will run."""
    needed: set[Node] = set()
    for index, (function, input_nr) in enumerate(outputs):
        if function is None:
            continue
        if accumulate_grad:
            needed.add(function)
        else:
            task.captures.setdefault(function, []).append((input_nr, index))
    # A node is needed if a child is needed or captured. Post-order, iteratively.
    stack: list[tuple[Node, int]] = [(root, 0)]
    visited = {root}
    while stack:
        node, child_index = stack[-1]
        edges = node._next_edges
        if child_index < len(edges):
            stack[-1] = (node, child_index + 1)
            child = edges[child_index][0]
            if (
                child is not None
                and child not in visited
                and child._topological_nr >= min_topo_nr
            ):
                visited.add(child)
                stack.append((child, 0))
            continue
        stack.pop()
        if node in needed:
            continue
        for child, _ in edges:
            if child is not None and (child in needed or child in task.captures):
                needed.add(node)
                break
    task.needed = needed
    task.exec_info = dict.fromkeys(needed | task.captures.keys(), True)


# Guards the `.grad` of non-leaves that retain it (leaves have their AccumulateGrad's).
_RETAIN_GRAD_LOCK = threading.Lock()


def _call_tensor_pre_hooks(node: Node, inputs: list[Tensor | None]) -> None:
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


def _replace_gradients(
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


def _call_function(
    task: GraphTask, node: Node, inputs: list[Tensor | None]
) -> list[Tensor | None]:
    if node._pre_hooks:
        for hook in list(node._pre_hooks):
            inputs = _replace_gradients(hook, inputs, hook(tuple(inputs)))
    if not task.keep_graph:
        node.will_release_variables()
    if anomaly_mode._enabled:
        outputs = _apply_with_anomaly_checks(node, inputs)
    else:
        produced = node.apply(inputs)
        outputs = produced if type(produced) is list else list(produced)
    validate_outputs(node._next_edges, outputs, node)
    if node._post_hooks:
        for hook in list(node._post_hooks):
            outputs = _replace_gradients(
                hook, outputs, hook(tuple(outputs), tuple(inputs))
            )
    return outputs


def _apply_with_anomaly_checks(
    node: Node, inputs: list[Tensor | None]
) -> list[Tensor | None]:
    """`node.apply` that names the forward call behind a failure, and checks for NaN."""
    try:
        outputs = list(node.apply(inputs))
    except Exception:
        stack = "".join(
            (node._metadata or {}).get("traceback_", ["(no forward stack recorded)\n"])
        )
        warnings.warn(
            f"Error detected in {node.name()}. Traceback of forward call that caused the "
            f"error:\n{stack}",
            UserWarning,
            stacklevel=2,
        )
        raise
    if anomaly_mode._check_nan:
        for index, output in enumerate(outputs):
            if output is not None and np.isnan(output._data).any():
                raise RuntimeError(
                    f"Function '{node.name()}' returned nan values in its {index}th output."
                )
    return outputs


def execute(
    roots: Sequence[Edge],
    root_grads: list[Tensor | None],
    keep_graph: bool,
    create_graph: bool,
    accumulate_grad: bool = True,
    outputs: Sequence[Edge] | None = None,
) -> list[Tensor | None]:
    """Run backward from `roots` with `root_grads`; return the captured `outputs` grads."""
    validate_outputs(roots, root_grads)
    if len(roots) == 1 and roots[0].function is not None:
        root: Node = roots[0].function
        root_buffer: InputBuffer = [None] * len(root._input_metadata)
        buffer_add(root_buffer, roots[0].input_nr, root_grads[0])
    else:
        root = GraphRoot(tuple(roots), root_grads)
        root_buffer = []
    task = GraphTask(keep_graph)
    min_topo_nr = 0
    if outputs is not None:
        min_topo_nr = min(
            (f._topological_nr for f, _ in outputs if f is not None), default=0
        )
    compute_dependencies(root, task, min_topo_nr)
    if outputs is not None:
        init_to_execute(root, task, outputs, accumulate_grad, min_topo_nr)
        task.captured = [None] * len(outputs)

    previous_mode = grad_mode.is_grad_enabled()
    previous_exec_info, previous_task = task_state.exec_info, task_state.task
    grad_mode._set_enabled(create_graph)
    task_state.exec_info, task_state.task = task.exec_info, task
    try:
        _run(task, root, root_buffer)
    finally:
        grad_mode._set_enabled(previous_mode)
        task_state.exec_info, task_state.task = previous_exec_info, previous_task
    if task.not_ready and task.exec_info is None:
        raise RuntimeError("could not compute gradients for some functions")
    return task.captured


def _run(task: GraphTask, root: Node, root_buffer: InputBuffer) -> None:
    # Heap entries: (-sequence_nr, tie-breaker, node, buffer). Later nodes pop first.
    ready: list[tuple[int, int, Node, InputBuffer]] = [
        (-root._sequence_number, 0, root, root_buffer)
    ]
    pushes = 1
    dependencies = task.dependencies
    not_ready = task.not_ready
    exec_info = task.exec_info
    keep_graph = task.keep_graph
    heappop, heappush = heapq.heappop, heapq.heappush
    while ready:
        _, _, node, inputs = heappop(ready)
        if node._tensor_pre_hooks or node._retains_grad or type(node) is AccumulateGrad:
            _call_tensor_pre_hooks(node, inputs)
        if exec_info is not None:
            captures = task.captures.get(node)
            if captures:
                for input_nr, output_index in captures:
                    task.captured[output_index] = inputs[input_nr]
            if node not in task.needed:
                continue
        edges = node._next_edges
        if node._pre_hooks or node._post_hooks or anomaly_mode._enabled:
            outputs = _call_function(task, node, inputs)
            validated = True
        else:
            # _call_function's common case, with validate_outputs folded into the loop
            # below that hands the gradients on.
            if not keep_graph:
                node.will_release_variables()
            outputs = node.apply(inputs)  # type: ignore[assignment]
            if type(outputs) is not list:
                outputs = list(outputs)
            if len(outputs) != len(edges):
                validate_outputs(edges, outputs, node)  # raises the count error
            validated = False
        del inputs
        if not keep_graph:
            node.release_variables()
        for index, (function, input_nr) in enumerate(edges):
            if function is None:
                continue
            gradient = outputs[index]
            if not validated and gradient is not None:
                if gradient.__class__ is not Tensor:
                    gradient = _validated(node, index, gradient, function, input_nr)
                else:
                    expected_shape, expected_dtype = function._input_metadata[input_nr]
                    if gradient._data.shape != expected_shape or (
                        expected_dtype is not None
                        and gradient._data.dtype != expected_dtype
                    ):
                        gradient = _validated(node, index, gradient, function, input_nr)
                outputs[index] = gradient
            remaining = dependencies[function] - 1
            next_buffer = not_ready.pop(function, None)
            if next_buffer is None:
                if exec_info is not None and function not in exec_info:
                    dependencies[function] = remaining
                    continue
                next_buffer = [None] * len(function._input_metadata)
            if gradient is not None:
                if next_buffer[input_nr] is None:
                    next_buffer[input_nr] = gradient
                else:
                    buffer_add(next_buffer, input_nr, gradient)
            if remaining == 0:
                del dependencies[function]
                heappush(
                    ready, (-function._sequence_number, pushes, function, next_buffer)
                )
                pushes += 1
            else:
                dependencies[function] = remaining
                not_ready[function] = next_buffer
        # Drop this node's references to the gradients it passed on: a gradient that
        # only its buffer holds can be taken over (not copied) where it arrives.
        outputs = gradient = next_buffer = None  # type: ignore[assignment]
