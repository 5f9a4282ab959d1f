"""vmap(grad)'s backward pass over a tree of array-form nodes.

Inside ``vmap(grad(f))`` with one level open, `_vjp_of_batch` asks for the gradients
of one batched output with respect to the differentiable inputs, leaves made for the
call. The graph between them is most often a tree (every node feeds one other node:
a chain of layers, each with its parameters' leaves), its nodes with array forms and
no hooks. `tree_grads` runs such a graph as the engine would, with what the engine
does for any graph left out: no exec info from a second walk, no dependency counts
(every node is ready once its one consumer ran), no root validation, no edges made
for the inputs (their AccumulateGrad nodes are looked up). The nodes run in the
engine's order (the one node made ready runs next, else the latest-created ready
node), on the same arrays, with the same task state, so the gradients are the
engine's.

It steps aside (None: the caller runs `autograd.grad`) when the graph is not that:
a node reached twice (its gradients would be summed, in the engine's order), a node
without an array form, hooks or metadata on any node, an input that is not a leaf or
has hooks, a leaf that is not an input (autograd.grad would not run its sink), or
anomaly mode, forward AD, the profiler's observer, or arrays not allowed to flow.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import anomaly_mode, dispatch
from ..engine import ARRAY_FORMS, GraphTask, validate_outputs
from ..grad_mode import _state as _grad_mode_state
from ..graph import AccumulateGrad, Node, task_state
from ..tensor import Tensor

_NDARRAY = np.ndarray
_SCALARS = frozenset(
    {np.float16, np.float32, np.float64, np.longdouble, np.complex64, np.complex128}
)


class _Plan:
    """A tree ready to run: its root, the inputs' sinks by input index, and the nodes
    that lead to a sink (the others do not run, as with the engine's exec info)."""

    __slots__ = ("root", "output_nr", "sinks", "needed", "reached")

    def __init__(
        self,
        root: Node,
        output_nr: int,
        sinks: dict[Node, int],
        needed: set[Node],
        reached: list[Node],
    ) -> None:
        self.root = root
        self.output_nr = output_nr
        self.sinks = sinks
        self.needed = needed
        self.reached = reached


def _sinks(inputs: Sequence[Tensor]) -> dict[Node, int] | None:
    """Each input's AccumulateGrad (an input without one is not in the graph: its
    gradient is None); None when an input is not a hook-free leaf, or repeats."""
    sinks: dict[Node, int] = {}
    for index, tensor in enumerate(inputs):
        if tensor._grad_fn is not None or not tensor._requires_grad or tensor._hooks:
            return None
        reference = tensor._grad_accumulator
        sink = reference() if reference is not None else None
        if sink is None:
            continue
        if sink in sinks or sink._extras is not None:
            return None
        sinks[sink] = index
    return sinks


def _children(node: Node) -> Sequence[Node | None]:
    """The nodes `node`'s edges lead to (None for an edge to nothing)."""
    count = node._num_edges  # the edges kept flat in the node, read inline
    if count == 1:
        return (node._fn0,)
    if count == 2:
        return (node._fn0, node._fn1)
    return [function for function, _ in node._next_edges]


def _walk(root: Node, sinks: dict[Node, int]) -> dict[Node, Node] | None:
    """Each node reached from `root` (in the order reached: parents first) with the
    one node whose edge leads to it; None when a node is reached twice, has hooks
    or metadata, has no array form, or is a leaf's sink that is not an input's."""
    parents: dict[Node, Node] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        if node in sinks:
            continue
        if (
            node._extras is not None
            or not node._has_array_form
            or type(node) is AccumulateGrad
        ):
            return None
        count = node._num_edges  # `_children(node)`, inline
        if count == 1:
            children: Sequence[Node | None] = (node._fn0,)
        elif count == 2:
            children = (node._fn0, node._fn1)
        else:
            children = _children(node)
        for function in children:
            if function is None:
                continue
            if function in parents or function is root:
                return None
            parents[function] = node
            stack.append(function)
    return parents


def _plan(output: Tensor, inputs: Sequence[Tensor]) -> _Plan | None:
    if (
        anomaly_mode._enabled
        or dispatch._observer is not None
        or dispatch._detour is not None
        or dispatch.forward_ad_levels.count
        or not ARRAY_FORMS.enabled
    ):
        return None
    root = output._grad_fn
    if root is None:
        return None
    sinks = _sinks(inputs)
    if sinks is None:
        return None
    parents = _walk(root, sinks)
    if parents is None:
        return None
    # The nodes on the way from the root to a sink (the engine's exec info).
    needed: set[Node] = set()
    for sink in sinks:
        node = parents.get(sink)
        while node is not None and node not in needed:
            needed.add(node)
            node = parents.get(node)
    return _Plan(root, output._output_nr, sinks, needed, [root, *parents])


def tree_grads(
    output: Tensor, seed: np.ndarray, inputs: Sequence[Tensor]
) -> list[Tensor | None] | None:
    """``autograd.grad([output], inputs, [seed], retain_graph=True,
    allow_unused=True)`` for a tree of array-form nodes (see the module's text); None
    when the graph is not one."""
    plan = _plan(output, inputs)
    if plan is None:
        return None
    captured: list[Tensor | None] = [None] * len(inputs)
    if plan.root not in plan.needed:
        return captured  # no input is reached
    task = GraphTask(True, plan.root)
    task.dependencies = dict.fromkeys(plan.reached[1:], 1)
    task.needed = plan.needed
    task.captures = {sink: [(0, index)] for sink, index in plan.sinks.items()}
    task.exec_info = dict.fromkeys(plan.needed | plan.sinks.keys(), True)
    previous = _grad_mode_state.enabled, task_state.exec_info, task_state.task
    _grad_mode_state.enabled = False
    task_state.exec_info, task_state.task = task.exec_info, task
    try:
        complete = _run(plan, seed, captured)
    finally:
        _grad_mode_state.enabled = previous[0]
        task_state.exec_info, task_state.task = previous[1], previous[2]
    return captured if complete else None


def _run(plan: _Plan, seed: np.ndarray, captured: list[Tensor | None]) -> bool:
    """Run the needed nodes in the engine's order, capturing what reaches a sink;
    False when a gradient is not an array or a plain Tensor (the engine must run)."""
    sinks, needed = plan.sinks, plan.needed
    root_buffer: list[Any] = [None] * len(plan.root._input_metadata)
    # (a 0-d seed as a numpy scalar, as the engine hands it on)
    root_buffer[plan.output_nr] = seed if seed.ndim else seed[()]
    ready: list[tuple[int, int, Node, list[Any]]] = []
    pushes = 0
    following: tuple[Node, list[Any]] | None = (plan.root, root_buffer)
    while True:
        if following is not None:
            node, inputs = following
            following = None
        elif ready:
            _, _, node, inputs = heapq.heappop(ready)
        else:
            return True
        produced: Any = node.apply_arrays(inputs)
        if produced is None:
            produced = node.apply(_tensors(inputs))
        outputs: list[Any] = produced if type(produced) is list else list(produced)
        edges = node._next_edges
        if len(outputs) != len(edges):
            validate_outputs(edges, outputs, node)  # raises the count error
        for index, (function, input_nr) in enumerate(edges):
            if function is None:
                continue
            data = outputs[index]
            if data is not None and not (
                # an array of its edge's shape and dtype (`_checked`'s common case)
                data.__class__ is _NDARRAY
                and (data.shape, data.dtype) == function._input_metadata[input_nr]
            ):
                data = _checked(node, edges, outputs, index, function, input_nr)
                if data is None:
                    return False
                if data.__class__ is list:  # validated: every output from here on
                    outputs = data
                    data = _array(outputs[index])
            if function in sinks:
                captured[sinks[function]] = None if data is None else _tensor(data)
                continue
            if function not in needed:
                continue
            buffer: list[Any] = [None] * len(function._input_metadata)
            buffer[input_nr] = data
            if following is None:
                following = (function, buffer)
            else:
                heapq.heappush(
                    ready, (-function._sequence_number, pushes, function, buffer)
                )
                pushes += 1
        if following is not None and ready:
            function, buffer = following
            following = None
            heapq.heappush(
                ready, (-function._sequence_number, pushes, function, buffer)
            )
            pushes += 1


def _checked(
    node: Node,
    edges: Sequence[tuple[Node | None, int]],
    outputs: list[Any],
    index: int,
    function: Node,
    input_nr: int,
) -> Any:
    """Gradient `index` of `node` as an array when it fits its edge's metadata (the
    common case); else, when it is an array or a plain Tensor, every output checked
    (summed to shape, cast) as the engine checks them, as a list of Tensors; None
    when it is neither."""
    gradient = outputs[index]
    cls = gradient.__class__
    if cls is _NDARRAY or cls in _SCALARS:
        data = gradient
    elif cls is Tensor:
        data = gradient._data
    else:
        data = None
    if data is not None:
        expected_shape, expected_dtype = function._input_metadata[input_nr]
        if data.shape == expected_shape and (
            expected_dtype is None or data.dtype == expected_dtype
        ):
            return data
    checked = _tensors(list(outputs))
    validate_outputs(edges, checked, node)  # sums, casts or raises
    return None if _array(checked[index]) is None else checked


def _array(gradient: Any) -> Any:
    cls = gradient.__class__
    if cls is _NDARRAY or cls in _SCALARS:
        return gradient
    return gradient._data if cls is Tensor else None


def _tensor(data: Any) -> Tensor:
    return Tensor(data if data.__class__ is _NDARRAY else np.asarray(data))


def _tensors(values: list[Any]) -> list[Any]:
    """The arrays among `values` wrapped as Tensors (in place)."""
    for slot, value in enumerate(values):
        if value is not None and (
            value.__class__ is _NDARRAY or value.__class__ in _SCALARS
        ):
            values[slot] = _tensor(value)
    return values
