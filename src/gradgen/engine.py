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
Step 4 has three loops: `_run_loop` does everything; `_run_plain` does the common case
(arrays flow, no hooks, no exec info) and hands over to it; on a graph that step 2 found
to be a tree, engine_tree.run_tree does _run_plain's work without counts or buffers.

Invariants: nothing here recurses, so graph depth is bounded by memory only.
`_validated` (through `validate_outputs`, or inline in `_run`'s loop) is the one place
where a gradient is reduced to its input's shape (broadcasting) and cast to its input's
dtype; formulas never do it themselves.
Gradients of non-leaves live only in the engine's input buffers.
"""

from __future__ import annotations

import heapq
import itertools
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import anomaly_mode, dispatch, grad_mode
from .graph import (
    AccumulateGrad,
    Edge,
    EdgeTuple,
    GraphRoot,
    Node,
    task_state,
)
from .engine_checks import (  # (validate_outputs and buffer_add: engine's names too)
    _ARRAYS,
    _SCALAR_DTYPES,
    _SCALARS,
    _SMALL_SUM,
    InputBuffer,
    _accumulate_array,
    _as_arrays,
    _as_tensors,
    _checked,
    buffer_add as buffer_add,
    passed_on,
    validate_outputs as validate_outputs,
)
from .engine_hooks import call_tensor_pre_hooks, replace_gradients
from .engine_tree import run_tree
from .tensor import Tensor

_NDARRAY = np.ndarray
_GRAD_MODE = grad_mode._state


class _ArrayForms:
    """Whether nodes may use their array forms at all (tests turn them off to compare
    both forms: gradgen.helpers.arrays.tensor_forms_only)."""

    enabled = True


ARRAY_FORMS = _ArrayForms()

_task_ids = itertools.count()


class GraphTask:
    """The state of one backward pass."""

    __slots__ = (
        "task_id",
        "keep_graph",
        "root",
        "dependencies",
        "not_ready",
        "exec_info",
        "needed",
        "captures",
        "captured",
    )

    def __init__(self, keep_graph: bool, root: Node | None = None) -> None:
        self.task_id = next(_task_ids)  # PyTorch's _current_graph_task_id
        self.keep_graph = keep_graph
        self.root = root
        # Every node reached from the root, with the number of edges into it not yet
        # run (0 once it was ready).
        self.dependencies: dict[Node, int] = {}
        self.not_ready: dict[Node, InputBuffer] = {}
        # None: run everything. Otherwise the nodes gradients must reach (PyTorch's
        # should_execute: needed or captured) ...
        self.exec_info: dict[Node, bool] | None = None
        # ... and, of those, the nodes whose apply runs (init_to_execute sets these).
        self.needed: set[Node] = _NOTHING_NEEDED
        self.captures: dict[Node, list[tuple[int, int]]] = _NO_CAPTURES
        self.captured: list[Tensor | None] = []

    def in_graph(self, node: Node) -> bool:
        """Whether `node` was reached from the root (PyTorch's nodes_in_graph)."""
        return node is self.root or node in self.dependencies


# What a task without exec info reads (init_to_execute replaces both).
_NOTHING_NEEDED: set[Node] = set()
_NO_CAPTURES: dict[Node, list[tuple[int, int]]] = {}


def compute_dependencies(root: Node, task: GraphTask, min_topo_nr: int = 0) -> bool:
    """Count the edges into every node reachable from `root` (iterative DFS). True
    when the graph is a tree: no node has more than one edge into it.

    Nodes whose topological number is below `min_topo_nr` cannot lead to any of the
    requested outputs, so the search does not go below them (PyTorch's pruning).
    """
    task.root = root
    dependencies = task.dependencies
    if min_topo_nr:
        _pruned_dependencies(root, dependencies, min_topo_nr)
        return False
    tree = True
    # Without pruning: the first child seen for the first time is visited next
    # without going through the stack (a chain never touches it).
    stack: list[Node] = []
    push, pop, get = stack.append, stack.pop, dependencies.get
    node = root
    while True:
        following: Node | None = None
        edges = node._num_edges  # the edges kept flat in the node, read inline
        if edges:
            function = node._fn0
            if function is not None:
                count = get(function)
                if count is None:
                    dependencies[function] = 1
                    following = function
                else:
                    dependencies[function] = count + 1
                    tree = False
            if edges > 1:
                function = node._fn1  # (the same steps, unrolled: most have 1 or 2)
                if function is not None:
                    count = get(function)
                    if count is None:
                        dependencies[function] = 1
                        if following is None:
                            following = function
                        else:
                            push(function)
                    else:
                        dependencies[function] = count + 1
                        tree = False
                if edges > 2:
                    for function, _ in node._more:
                        if function is None:
                            continue
                        count = get(function)
                        if count is None:
                            dependencies[function] = 1
                            push(function)
                        else:
                            dependencies[function] = count + 1
                            tree = False
        if following is not None:
            node = following
        elif stack:
            node = pop()
        else:
            return tree


def _pruned_dependencies(
    root: Node, dependencies: dict[Node, int], min_topo_nr: int
) -> None:
    """compute_dependencies below `min_topo_nr` > 0: no search below such nodes."""
    stack = [root]
    pop, push, get = stack.pop, stack.append, dependencies.get
    while stack:
        node = pop()
        for function, _ in node._next_edges:
            if function is None:
                continue
            count = get(function)
            if count is None:
                dependencies[function] = 1
                if function._topological_nr >= min_topo_nr:
                    push(function)
            else:
                dependencies[function] = count + 1


def init_to_execute(
    root: Node,
    task: GraphTask,
    outputs: Sequence[Edge],
    accumulate_grad: bool,
    min_topo_nr: int = 0,
) -> None:
    """Mark the nodes that lead to `outputs`; only they will run."""
    needed: set[Node] = set()
    task.captures = {}
    for index, (function, input_nr) in enumerate(outputs):
        if function is None:
            continue
        if accumulate_grad:
            needed.add(function)
        else:
            task.captures.setdefault(function, []).append((input_nr, index))
    # A node is needed if a child is needed or captured. Post-order, iteratively;
    # each entry holds its node's edges (Node._next_edges builds them per read).
    stack: list[tuple[Node, tuple[EdgeTuple, ...], int]] = [(root, root._next_edges, 0)]
    visited = {root}
    while stack:
        node, edges, child_index = stack[-1]
        if child_index < len(edges):
            stack[-1] = (node, edges, child_index + 1)
            child = edges[child_index][0]
            if (
                child is not None
                and child not in visited
                and child._topological_nr >= min_topo_nr
            ):
                visited.add(child)
                stack.append((child, child._next_edges, 0))
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


def _call_function(
    task: GraphTask, node: Node, inputs: list[Tensor | None]
) -> list[Tensor | None]:
    if node._pre_hooks:
        for hook in list(node._pre_hooks):
            inputs = replace_gradients(hook, inputs, hook(tuple(inputs)))
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
            outputs = replace_gradients(
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
    tree = compute_dependencies(root, task, min_topo_nr)
    if outputs is not None:
        init_to_execute(root, task, outputs, accumulate_grad, min_topo_nr)
        task.captured = [None] * len(outputs)

    _run_task(task, root, root_buffer, create_graph, tree)
    return task.captured


def _run_task(
    task: GraphTask,
    root: Node,
    root_buffer: InputBuffer,
    create_graph: bool,
    tree: bool = False,
) -> None:
    """Run `task` from `root` with grad mode and the task state set for it (`tree`:
    compute_dependencies found the graph to be a tree)."""
    mode = _GRAD_MODE
    state = task_state
    previous_mode = mode.enabled
    previous_exec_info, previous_task = state.exec_info, state.task
    mode.enabled = create_graph
    state.exec_info, state.task = task.exec_info, task
    try:
        _run(task, root, root_buffer, tree)
    finally:
        mode.enabled = previous_mode
        state.exec_info, state.task = previous_exec_info, previous_task
    if task.not_ready and task.exec_info is None:
        raise RuntimeError("could not compute gradients for some functions")


def execute_root(root: Node, input_nr: int, root_grad: Any, keep_graph: bool) -> bool:
    """`execute` of one root (input `input_nr` of `root`) and one gradient array (or
    numpy scalar, for a 0-d root), no graph recorded, gradients accumulated into the
    leaves: `backward()`'s common case without the general checks. False (nothing
    run) when the array does not match that input's shape and dtype: `execute` must
    run (and raise) instead."""
    metadata = root._input_metadata
    expected_shape, expected_dtype = metadata[input_nr]
    if expected_shape or (
        _SCALAR_DTYPES.get(root_grad.__class__, _NDARRAY) is not expected_dtype
    ):  # (not a numpy scalar of the root's 0-d dtype: the general check)
        dtype = root_grad.dtype
        if root_grad.shape != expected_shape or (
            dtype is not expected_dtype
            and expected_dtype is not None
            and dtype != expected_dtype
        ):
            return False
    if len(metadata) == 1:  # (one input: input_nr is 0)
        root_buffer: InputBuffer = [root_grad]
    else:
        root_buffer = [None] * len(metadata)
        root_buffer[input_nr] = root_grad  # _run wraps it when no arrays flow
    task = GraphTask(keep_graph)
    tree = compute_dependencies(root, task)
    if (
        (root_grad.__class__ in _SCALARS or root_grad.ndim)  # (a 0-d one: _run's)
        and not dispatch.forward_ad_levels.count  # arrays may flow (see _run)
        and dispatch._detour is None
        and ARRAY_FORMS.enabled
    ):
        # _run_task and _run in one, for the lean loops' common case (run_tree's
        # when the graph is a tree).
        state = task_state
        previous_mode = _GRAD_MODE.enabled
        previous_exec_info, previous_task = state.exec_info, state.task
        _GRAD_MODE.enabled = False
        if previous_exec_info is not None:  # (outside any backward it is None)
            state.exec_info = None
        state.task = task
        try:
            ready: list[tuple[int, int, Node, InputBuffer]] = []
            following, pushes, mixed = (
                run_tree(not keep_graph, root, root_buffer, ready)
                if tree
                else _run_plain(task, (root, root_buffer), ready)
            )
            if following is not None or ready:
                _run_loop(task, following, ready, pushes, mixed, True)
        finally:
            _GRAD_MODE.enabled = previous_mode
            if previous_exec_info is not None:
                state.exec_info = previous_exec_info
            state.task = previous_task
        if task.not_ready:
            raise RuntimeError("could not compute gradients for some functions")
        return True
    _run_task(task, root, root_buffer, False, tree)
    return True


def _run(task: GraphTask, root: Node, root_buffer: InputBuffer, tree: bool) -> None:
    # Heap entries: (-sequence_nr, tie-breaker, node, buffer). Later nodes pop first.
    ready: list[tuple[int, int, Node, InputBuffer]] = []
    pushes = 0
    exec_info = task.exec_info
    # Whether this backward may hand gradients on as bare arrays: it records no graph,
    # no forward-AD level is open, no dispatch detour (profiler, vmap) must see the
    # calls, and the array forms are on.
    arrays = (
        not _GRAD_MODE.enabled
        and not dispatch.forward_ad_levels.count
        and dispatch._detour is None
        and ARRAY_FORMS.enabled
    )
    # With arrays flowing, a plain Tensor is handed on as its array to a node with an
    # array form (or a leaf's sink), so their buffers hold bare arrays, numpy scalars
    # and None only, until `mixed`: something else went in (a Tensor subclass), and
    # every node's buffer is converted (_as_arrays) first. A node that runs its tensor
    # form keeps the Tensors it is given.
    mixed = False
    if arrays and (root._has_array_form or type(root) is AccumulateGrad):
        mixed = not _as_arrays(root_buffer)
        for slot, value in enumerate(root_buffer):
            if (
                value.__class__ is _NDARRAY
                and not value.ndim
                and value.dtype.type in _SCALARS
            ):
                # A 0-d seed as a numpy scalar: 0-d arithmetic on it costs a tenth.
                root_buffer[slot] = value[()]
    elif not arrays:
        _as_tensors(root_buffer)
    # The one node that became ready while no other was (a chain's next link, the
    # root): run next without going through the heap.
    following: tuple[Node, InputBuffer] | None = (root, root_buffer)
    if arrays and not mixed and exec_info is None:
        # The common case first: _run_loop takes over at the first node that needs
        # more than _run_plain (or, on a tree, run_tree) does.
        following, pushes, mixed = (
            run_tree(not task.keep_graph, root, root_buffer, ready)
            if tree
            else _run_plain(task, following, ready)
        )
        if following is None and not ready:
            return
    _run_loop(task, following, ready, pushes, mixed, arrays)


def _run_loop(
    task: GraphTask,
    following: tuple[Node, InputBuffer] | None,
    ready: list[tuple[int, int, Node, InputBuffer]],
    pushes: int,
    mixed: bool,
    arrays: bool,
) -> None:
    """_run's loop: every node, with everything a node may need (hooks, captures,
    exec info, the tensor form, anomaly mode)."""
    heappop, heappush = heapq.heappop, heapq.heappush
    dependencies = task.dependencies
    not_ready = task.not_ready
    exec_info = task.exec_info
    keep_graph = task.keep_graph
    while True:
        if following is not None:
            node, inputs = following
            following = None
        elif ready:
            _, _, node, inputs = heappop(ready)
        else:
            break
        convert = mixed
        # A node's hooks and metadata are all in `_extras` (None: it has none).
        extras = node._extras
        if type(node) is AccumulateGrad:
            if (
                arrays
                and exec_info is None
                and not (
                    (extras is not None and (extras.pre_hooks or extras.post_hooks))
                    or anomaly_mode._enabled
                )
                and not node.variable._hooks
                and _accumulate_array(node, inputs)
            ):
                continue  # the leaf's sink, straight from the buffer
            call_tensor_pre_hooks(node, _as_tensors(inputs))
            convert = True
        elif extras is not None and (extras.tensor_pre_hooks or extras.retains_grad):
            call_tensor_pre_hooks(node, _as_tensors(inputs))
            convert = True
        if exec_info is not None:
            captures = task.captures.get(node)
            if captures:
                _as_tensors(inputs)
                convert = True
                for input_nr, output_index in captures:
                    task.captured[output_index] = inputs[input_nr]  # type: ignore
            if node not in task.needed:
                continue
        if (
            extras is not None and (extras.pre_hooks or extras.post_hooks)
        ) or anomaly_mode._enabled:
            outputs = _call_function(task, node, _as_tensors(inputs))
        else:
            # _call_function's common case, with validate_outputs folded into the loop
            # below that hands the gradients on.
            if not keep_graph and node._will_release:
                node.will_release_variables()
            produced: Any = None
            if arrays and node._has_array_form and (not convert or _as_arrays(inputs)):
                produced = node.apply_arrays(inputs)
            if produced is None:
                # Only a backward that hands arrays on has arrays in its buffers.
                produced = node.apply(
                    _as_tensors(inputs) if arrays else inputs  # type: ignore[arg-type]
                )
            outputs = produced if type(produced) is list else list(produced)
            if len(outputs) != node._num_edges:
                validate_outputs(node._next_edges, outputs, node)  # the count error
        del inputs
        if not keep_graph and node._releases:
            node.release_variables()
        # The next edges, read off the node's flat slots (Node._next_edges, inline).
        for index in range(node._num_edges):
            if index == 0:
                function, input_nr = node._fn0, node._nr0
            elif index == 1:
                function, input_nr = node._fn1, node._nr1
            else:
                function, input_nr = node._more[index - 2]
            if function is None:
                continue
            gradient: Any = outputs[index]
            if gradient is not None:
                # The common case inline: an array (or a plain Tensor's) of the
                # input's shape and dtype; anything else through _checked.
                expected_shape, expected_dtype = function._input_metadata[input_nr]
                cls = gradient.__class__
                data = (
                    gradient
                    if cls is _NDARRAY or (arrays and cls in _SCALARS)
                    else gradient._data if cls is Tensor else None
                )
                if (
                    data is None
                    or data.shape != expected_shape
                    or (
                        (dtype := data.dtype) is not expected_dtype
                        and expected_dtype is not None
                        and dtype != expected_dtype
                    )
                ):
                    gradient = _checked(node, index, gradient, function, input_nr)
                    cls = gradient.__class__
                    data = (
                        gradient
                        if cls is _NDARRAY
                        else gradient._data if cls is Tensor else None
                    )
                if arrays:
                    if data is None:
                        mixed = True  # a Tensor subclass goes on as it is
                    elif cls is not Tensor or (
                        function._has_array_form or type(function) is AccumulateGrad
                    ):
                        gradient = data
                    # (a Tensor for a node that runs its tensor form stays one)
            remaining = dependencies[function] - 1
            next_buffer = not_ready.pop(function, None)
            if next_buffer is None:
                if exec_info is not None and function not in exec_info:
                    dependencies[function] = remaining
                    continue
                next_buffer = [None] * len(function._input_metadata)
                next_buffer[input_nr] = gradient  # (a new buffer: nothing to add to)
            elif gradient is not None:
                old = next_buffer[input_nr]
                if old is None:
                    next_buffer[input_nr] = gradient
                elif (
                    arrays
                    and (
                        old.__class__ in _SCALARS
                        or (old.__class__ is _NDARRAY and old.size <= _SMALL_SUM)
                    )
                    and gradient.__class__ in _ARRAYS
                ):
                    # buffer_add's small case inline: a new array (or numpy scalar)
                    # costs less than the checks that would allow adding in place.
                    next_buffer[input_nr] = old + gradient
                else:
                    del old  # (buffer_add may add in place when nothing else sees it)
                    buffer_add(next_buffer, input_nr, gradient)
            if remaining == 0:
                # (its count stays: no edge leads into it again, in_graph reads it)
                if following is None:
                    following = (function, next_buffer)
                else:
                    heappush(
                        ready,
                        (-function._sequence_number, pushes, function, next_buffer),
                    )
                    pushes += 1
            else:
                dependencies[function] = remaining
                not_ready[function] = next_buffer
        if following is not None and ready:
            function, next_buffer = following
            following = None
            heappush(ready, (-function._sequence_number, pushes, function, next_buffer))
            pushes += 1
        # Drop this node's references to the gradients it passed on: a gradient that
        # only its buffer holds can be taken over (not copied) where it arrives.
        outputs = produced = gradient = next_buffer = data = old = None  # type: ignore


def _run_plain(
    task: GraphTask,
    following: tuple[Node, InputBuffer] | None,
    ready: list[tuple[int, int, Node, InputBuffer]],
) -> tuple[tuple[Node, InputBuffer] | None, int, bool]:
    """_run's loop for what most backward passes are made of: arrays flow, no exec
    info, and every node runs its array form (or is a leaf's sink) without hooks,
    metadata or anomaly mode. It stops before the first node that needs more, or
    after the node that handed on a Tensor subclass (`mixed`), and returns where _run's
    loop goes on: (the next node and its buffer, or None; the heap's push count;
    mixed). The steps are _run's, without the checks that cannot apply here."""
    heappop, heappush = heapq.heappop, heapq.heappush
    dependencies = task.dependencies
    not_ready = task.not_ready
    release = not task.keep_graph
    pushes = 0
    mixed = False
    # The next node and its buffer, as two locals (no pair per node).
    next_node: Node | None = None
    next_inputs: Any = None
    if following is not None:
        next_node, next_inputs = following
    while True:
        if next_node is not None:
            node, inputs = next_node, next_inputs
            next_node = next_inputs = None
        elif ready:
            _, _, node, inputs = heappop(ready)
        else:
            return None, pushes, False
        if node._extras is not None or anomaly_mode._enabled:
            return (node, inputs), pushes, False
        if not node._has_array_form:
            if (
                type(node) is AccumulateGrad
                and not node.variable._hooks
                and _accumulate_array(node, inputs)
            ):
                continue
            return (node, inputs), pushes, False
        if release and node._will_release:
            node.will_release_variables()
        outputs: Any = node.apply_arrays(inputs)
        if outputs is None:  # a saved subclass: the tensor form
            return (node, inputs), pushes, False
        if type(outputs) is not list:
            outputs = list(outputs)
        if len(outputs) != node._num_edges:
            validate_outputs(node._next_edges, outputs, node)  # the count error
        del inputs
        if release and node._releases:
            node.release_variables()
        for index in range(node._num_edges):
            if index == 0:
                function, input_nr = node._fn0, node._nr0
            elif index == 1:
                function, input_nr = node._fn1, node._nr1
            else:
                function, input_nr = node._more[index - 2]
            if function is None:
                continue
            metadata = function._input_metadata
            gradient: Any = outputs[index]
            if gradient is not None:
                # The common case inline: an array (or numpy scalar) of the input's
                # shape and dtype goes on as it is; anything else through passed_on.
                expected_shape, expected_dtype = metadata[input_nr]
                cls = gradient.__class__
                if not (
                    (cls is _NDARRAY or cls in _SCALARS)
                    and gradient.shape == expected_shape
                    and (
                        (dtype := gradient.dtype) is expected_dtype
                        or expected_dtype is None
                        or dtype == expected_dtype
                    )
                ):
                    gradient, subclass = passed_on(
                        node, index, gradient, function, input_nr
                    )
                    if subclass:
                        mixed = True  # a Tensor subclass goes on as it is
            remaining = dependencies[function] - 1
            # (a buffer stays in not_ready, added to in place, until its last edge)
            next_buffer = not_ready.get(function)
            if next_buffer is None:
                if len(metadata) == 1:  # (one input: input_nr is 0)
                    next_buffer = [gradient]
                else:
                    next_buffer = [None] * len(metadata)
                    next_buffer[input_nr] = gradient  # (a new buffer: nothing to add)
                if remaining:
                    not_ready[function] = next_buffer
            else:
                if not remaining:
                    del not_ready[function]
                if gradient is not None:
                    old = next_buffer[input_nr]
                    if old is None:
                        next_buffer[input_nr] = gradient
                    elif (
                        (old.__class__ is _NDARRAY and old.size <= _SMALL_SUM)
                        or old.__class__ in _SCALARS
                    ) and gradient.__class__ in _ARRAYS:
                        next_buffer[input_nr] = old + gradient  # (as in _run)
                    else:
                        del old
                        buffer_add(next_buffer, input_nr, gradient)
            if remaining == 0:
                if (
                    not function._has_array_form
                    and type(function) is AccumulateGrad
                    and function._extras is None
                    and not function.variable._hooks
                    and not function.variable._post_accumulate_grad_hooks
                ):
                    # A leaf's sink would run next (its sequence number is the
                    # highest) and nothing can see the difference: it runs at once,
                    # with its gradient held by the buffer alone (so .grad may take
                    # it over).
                    outputs[index] = gradient = None
                    if _accumulate_array(function, next_buffer):
                        continue
                if next_node is None:
                    next_node, next_inputs = function, next_buffer
                elif function._sequence_number > next_node._sequence_number:
                    # The later node runs first: the earlier one waits in the heap
                    # (the order the heap would give, with one push less).
                    heappush(
                        ready,
                        (-next_node._sequence_number, pushes, next_node, next_inputs),
                    )
                    pushes += 1
                    next_node, next_inputs = function, next_buffer
                else:
                    heappush(
                        ready,
                        (-function._sequence_number, pushes, function, next_buffer),
                    )
                    pushes += 1
            else:
                dependencies[function] = remaining
        # The next node waits only when a ready one pops before it (a later sequence
        # number; on a tie the one pushed first, which it would follow).
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
        # (as in _run: a gradient only its buffer holds can be taken over)
        outputs = gradient = next_buffer = old = None
        if mixed:
            return (
                (None if next_node is None else (next_node, next_inputs)),
                pushes,
                True,
            )
