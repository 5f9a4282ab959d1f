"""Trace the backward pass, AOTAutograd style: run the traced graph's own backward
nodes once, under the recorder, so the derivatives.yaml formulas (which call operators
through the dispatcher) are recorded like the forward.

The walk is the engine's (`engine._run`): nodes in decreasing sequence number, each
once all gradients for it have arrived, its `apply` under no_grad. What the engine does
to arrays itself is done here with operators, so it is recorded too: gradients for the
same input are summed with `add`, a gradient is reduced to its input's shape with
`sum_to_size` and cast with `_to_copy`, exactly as `engine.validate_outputs` does.
Hooks on intermediate tensors or nodes, and nodes that are not generated formulas,
stop the trace.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from typing import Any

from .. import dtypes
from ..grad_mode import no_grad
from ..graph import AccumulateGrad, EdgeTuple, Node
from ..tensor import Tensor
from .trace import Recorder

__all__ = ["trace_backward"]

_FORMULAS_MODULE = "gradgen.generated.functions"


def _dependencies(roots: list[Node], boundary: int) -> dict[Node, int]:
    """How many edges lead into each node reachable from the roots (not past a node
    made before `boundary`)."""
    dependencies: dict[Node, int] = {}
    seen = set(roots)
    stack = list(seen)  # a node that roots two outputs is counted once
    while stack:
        node = stack.pop()
        if isinstance(node, AccumulateGrad) or node._sequence_number < boundary:
            continue
        for function, _ in node._next_edges:
            if function is None:
                continue
            dependencies[function] = dependencies.get(function, 0) + 1
            if function not in seen:
                seen.add(function)
                stack.append(function)
    return dependencies


def _check_node(recorder: Recorder, node: Node) -> None:
    if node._pre_hooks or node._post_hooks or node._tensor_pre_hooks:
        raise recorder.stop(
            f"a hook is registered on {node.name()} inside the compiled function"
        )
    if node._retains_grad:
        raise recorder.stop("retain_grad() is called inside the compiled function")
    if type(node).__module__ != _FORMULAS_MODULE:
        raise recorder.stop(f"the backward node {node.name()} is not a formula node")


def _validated(edge: EdgeTuple, grad: Tensor) -> Tensor:
    """engine.validate_outputs for one gradient, through operators."""
    function, input_nr = edge
    assert function is not None
    expected_shape, expected_dtype = function._input_metadata[input_nr]
    if grad._data.shape != expected_shape:
        grad = grad.sum_to_size(expected_shape)
    if expected_dtype is not None and grad._data.dtype != expected_dtype:
        grad = grad._to_copy(dtype=dtypes._FROM_NUMPY[expected_dtype])
    return grad


def _add(buffers: dict[Node, list[Any]], edge: EdgeTuple, grad: Tensor | None) -> None:
    function, input_nr = edge
    assert function is not None
    slots = buffers.setdefault(function, [None] * len(function._input_metadata))
    old = slots[input_nr]
    slots[input_nr] = grad if old is None or grad is None else old + grad


def trace_backward(
    recorder: Recorder,
    roots: Sequence[EdgeTuple],
    grads: list[Tensor],
    boundary: int = -1,
    outside: dict[Node, list[Any]] | None = None,
) -> dict[AccumulateGrad, Tensor]:
    """Run the backward from `roots` (seeded with `grads`) under `recorder`; the
    gradient arriving at each leaf's AccumulateGrad (summed, validated). A node made
    before `boundary` (a sequence number: an earlier piece of a split graph) is a
    leaf too: the gradients arriving at its inputs go to `outside`."""
    dependencies = _dependencies([e[0] for e in roots if e[0] is not None], boundary)
    buffers: dict[Node, list[Any]] = {}
    ready: list[tuple[int, int, Node]] = []
    leaves: dict[AccumulateGrad, Tensor] = {}
    recorder.node_name = "engine.validate_outputs"
    with no_grad():
        for edge, root_grad in zip(roots, grads):
            _add(buffers, edge, _validated(edge, root_grad))
        for node in {e[0] for e in roots if e[0] is not None}:
            if dependencies.get(node, 0) == 0:
                heapq.heappush(ready, (-node._sequence_number, len(ready), node))
        pushes = len(ready)
        while ready:
            _, _, node = heapq.heappop(ready)
            inputs = buffers.pop(node)
            if isinstance(node, AccumulateGrad):
                if inputs[0] is not None:
                    leaves[node] = inputs[0]
                continue
            if node._sequence_number < boundary:
                assert outside is not None
                outside[node] = inputs
                continue
            _check_node(recorder, node)
            recorder.node_name = f"{node.name()} (derivatives.yaml)"
            outputs = list(node.apply(inputs))
            recorder.node_name = "engine.validate_outputs"
            for next_edge, output in zip(node._next_edges, outputs):
                target = next_edge[0]  # edges are (node, input_nr) tuples
                if target is None:
                    continue
                if output is not None:
                    if not isinstance(output, Tensor):
                        raise recorder.stop(f"{node.name()} returned a non-tensor")
                    output = _validated(next_edge, output)
                _add(buffers, next_edge, output)
                remaining = dependencies[target] - 1
                dependencies[target] = remaining
                if remaining == 0:
                    heapq.heappush(ready, (-target._sequence_number, pushes, target))
                    pushes += 1
    return leaves
