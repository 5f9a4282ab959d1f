"""The engine's loop for a graph that is a tree (engine.py runs it): every node reached
from the root has exactly one edge into it, as in `3 * a**3 - b**2`.

Then a node is ready as soon as its one gradient arrives, so the loop needs neither
the dependency counts nor buffers that wait for more gradients: it is _run_plain's
loop (engine.py) without them. The order is the same: the ready node with the highest
sequence number runs first (a leaf's sink at once), through the heap or the one next
node kept aside. The counts compute_dependencies made stay as they are (1 each): where
_run_loop takes over, it counts each remaining edge down to 0, and the task's in_graph
reads them.
"""

from __future__ import annotations

import heapq
from typing import Any

import numpy as np

from . import anomaly_mode
from .engine_checks import (
    _SCALAR_DTYPES,
    InputBuffer,
    _accumulate_array,
    passed_on,
    validate_outputs,
)
from .graph import AccumulateGrad, Node

_NDARRAY = np.ndarray
_ACCUMULATE_GRAD = AccumulateGrad

# The heap's entries: (-sequence number, push count, node, its buffer).
Ready = list[tuple[int, int, Node, InputBuffer]]


def run_tree(
    release: bool, node: Node, inputs: InputBuffer, ready: Ready
) -> tuple[tuple[Node, InputBuffer] | None, int, bool]:
    """Run the tree from `node` with `inputs` while every node runs its array form (or
    is a leaf's sink) without hooks, metadata or anomaly mode; `release`: free each
    node's saved tensors. Returns, as _run_plain does, where _run_loop goes on: (the
    next node and its buffer, or None; the heap's push count; mixed)."""
    heappush = heapq.heappush
    pushes = 0
    mixed = False
    next_node: Any = None
    next_inputs: Any = None
    while True:
        if node._extras is not None or anomaly_mode._enabled:
            return (node, inputs), pushes, False
        if not node._has_array_form:
            # (the root only: every other leaf's sink runs where its gradient arrives)
            if not (
                type(node) is _ACCUMULATE_GRAD
                and not node.variable._hooks
                and _accumulate_array(node, inputs)
            ):
                return (node, inputs), pushes, False
            count = 0
        else:
            if release and node._will_release:
                node.will_release_variables()
            outputs: Any = node.apply_arrays(inputs)
            if outputs is None:  # a saved subclass: the tensor form
                return (node, inputs), pushes, False
            count = node._num_edges
            if len(outputs) != count:
                validate_outputs(node._next_edges, outputs, node)  # the count error
            del inputs
            if release and node._releases:
                node.release_variables()
        index = 0
        while index < count:
            if index == 0:
                function, input_nr = node._fn0, node._nr0
            elif index == 1:
                function, input_nr = node._fn1, node._nr1
            else:
                function, input_nr = node._more[index - 2]
            index += 1
            if function is None:
                continue
            metadata = function._input_metadata
            gradient: Any = outputs[index - 1]
            if gradient is not None:
                # An array (or numpy scalar) of the input's shape and dtype goes on
                # as it is; anything else through passed_on. (A numpy scalar is 0-d,
                # and its class tells its dtype.)
                expected_shape, expected_dtype = metadata[input_nr]
                cls = gradient.__class__
                if not (
                    (
                        gradient.shape == expected_shape
                        and (
                            (dtype := gradient.dtype) is expected_dtype
                            or expected_dtype is None
                            or dtype == expected_dtype
                        )
                    )
                    if cls is _NDARRAY
                    else not expected_shape
                    and _SCALAR_DTYPES.get(cls, _NDARRAY) is expected_dtype
                ):
                    gradient, subclass = passed_on(
                        node, index - 1, gradient, function, input_nr
                    )
                    if subclass:
                        mixed = True  # a Tensor subclass goes on as it is
            if len(metadata) == 1:  # (one input: input_nr is 0)
                buffer: Any = [gradient]
            else:
                buffer = [None] * len(metadata)
                buffer[input_nr] = gradient
            if (
                not function._has_array_form
                and type(function) is _ACCUMULATE_GRAD
                and function._extras is None
                and not function.variable._hooks
                and not function.variable._post_accumulate_grad_hooks
            ):
                # A leaf's sink: it would run next, and runs at once (as in
                # _run_plain), its gradient held by the buffer alone.
                outputs[index - 1] = gradient = None
                if _accumulate_array(function, buffer):
                    continue
            if next_node is None:
                next_node, next_inputs = function, buffer
            elif function._sequence_number > next_node._sequence_number:
                heappush(
                    ready, (-next_node._sequence_number, pushes, next_node, next_inputs)
                )
                pushes += 1
                next_node, next_inputs = function, buffer
            else:
                heappush(ready, (-function._sequence_number, pushes, function, buffer))
                pushes += 1
        outputs = gradient = buffer = None
        # The next node waits only when a ready one pops before it (as in _run_plain).
        if (
            next_node is not None
            and ready
            and -next_node._sequence_number >= ready[0][0]
        ):
            heappush(
                ready, (-next_node._sequence_number, pushes, next_node, next_inputs)
            )
            pushes += 1
            next_node = next_inputs = None
        if mixed:
            return (
                (None if next_node is None else (next_node, next_inputs)),
                pushes,
                True,
            )
        if next_node is not None:
            node, inputs = next_node, next_inputs
            next_node = next_inputs = None
        elif ready:
            _, _, node, inputs = heapq.heappop(ready)
        else:
            return None, pushes, False
