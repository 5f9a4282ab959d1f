"""The autograd graph: Node, Edge, InputMetadata, AccumulateGrad (SavedVariable is in
saved_variable.py; its names are imported here too).

Invariants:
- A Node is the backward of one forward call. `next_edges[i]` says where the gradient
  for the forward's i-th differentiable input goes: ``(node, input_nr)``, or
  ``(None, 0)`` when that input needs no gradient. The node keeps them flat in its own
  slots (see Node.__slots__), so it is the only object of a recorded call that the
  cyclic garbage collector tracks. `input_metadata[k]` describes
  the forward's k-th output (shape, dtype), which is the k-th gradient the Node takes.
- Nodes hold their children strongly (through edges) and are held by the tensors they
  produced (`Tensor._grad_fn`), so a graph lives exactly as long as an output or a
  gradient buffer refers to it, and is freed by reference counting alone.
- A leaf that requires grad owns an `AccumulateGrad` only weakly; the graph's edges
  hold it strongly. AccumulateGrad holds its leaf strongly. It is the only writer of
  a leaf's `.grad`.
- What a node saves of its forward, and when it is released: saved_variable.py.
"""

from __future__ import annotations

import _thread
import itertools
import sys
import threading
import weakref
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple, TypeAlias, final

import numpy as np

from . import anomaly_mode, grad_mode
from .saved_variable import (  # the saved-variable names graph.py always had
    ERR_BACKWARD_TWICE as ERR_BACKWARD_TWICE,
    OPEN_HOOKS as OPEN_HOOKS,
    RELEASED as RELEASED,
    SAVED_TENSORS_HOOKS as SAVED_TENSORS_HOOKS,
    Saved as Saved,
    SavedVariable as SavedVariable,
    SavedVariableList as SavedVariableList,
    _legacy_type_name as _legacy_type_name,
    plain_version_error as plain_version_error,
    pop_saved_tensors_hooks as pop_saved_tensors_hooks,
    push_saved_tensors_hooks as push_saved_tensors_hooks,
    unpack_saved as unpack_saved,
)

if TYPE_CHECKING:
    from .tensor import Tensor

# Later-created nodes run first; AccumulateGrad as soon as it is ready (PyTorch uses
# UINT64_MAX for it). The generated fast paths, which build a node without its
# `__init__` frames, number it from here too.
SEQUENCE_NUMBERS = itertools.count()
MAX_SEQUENCE_NR = 2**64 - 1


class Edge(NamedTuple):
    """Where a gradient flows: the `input_nr`-th input of `function` (None: nowhere)."""

    function: Node | None
    input_nr: int

    def is_valid(self) -> bool:
        return self.function is not None


NO_EDGE = Edge(None, 0)

# What a node's `_next_edges` hold: an Edge or a plain `(function, input_nr)` tuple,
# which the generated wrappers build at a third of an Edge's cost.
EdgeTuple: TypeAlias = "tuple[Node | None, int]"


def new_edge(function: Node | None, input_nr: int) -> Edge:
    """`Edge(function, input_nr)` at half the cost (a NamedTuple's __new__ is Python code);
    every differentiable input of every recorded call makes one."""
    return _tuple_new(Edge, (function, input_nr))


_tuple_new = tuple.__new__


# Shape and numpy dtype of one forward output, checked against its incoming gradient
# (dtype None: an output that takes no gradient). A plain tuple of a tuple of ints and a
# numpy dtype, so Python's garbage collector stops tracking it: a graph of 100,000 nodes
# then has 100,000 fewer objects for each full collection to walk.
InputMetadata: TypeAlias = "tuple[tuple[int, ...], np.dtype[Any] | None]"


class RemovableHandle:
    """Returned by every `register_*hook`; `.remove()` takes the hook out again."""

    __slots__ = ("_hooks", "_hook")

    def __init__(self, hooks: list[Any], hook: Any) -> None:
        self._hooks = hooks
        self._hook = hook

    def remove(self) -> None:
        hooks = self._hooks
        for i, registered in enumerate(hooks):
            if registered is self._hook:
                del hooks[i]
                return


class _TaskState(threading.local):
    """The graph task whose nodes this thread is running (for exec-info pruning, and
    for autograd.graph's hooks that need to know which backward pass calls them)."""

    exec_info: dict[Node, bool] | None = None
    task: Any = None  # engine.GraphTask


task_state = _TaskState()


@final
class NodeExtras:
    """What a Node has only once hooks or metadata were given to it."""

    __slots__ = (
        "pre_hooks",
        "post_hooks",
        "tensor_pre_hooks",
        "retains_grad",
        "metadata",
    )

    def __init__(self) -> None:
        self.pre_hooks: list[Callable[..., Any]] | None = None
        self.post_hooks: list[Callable[..., Any]] | None = None
        # Hooks registered on the tensors the node produced, by output number.
        self.tensor_pre_hooks: dict[int, list[Callable[..., Any]]] | None = None
        # Outputs that called retain_grad(), by output number (held weakly).
        self.retains_grad: dict[int, weakref.ref[Tensor]] | None = None
        # PyTorch's Node.metadata (anomaly mode's forward stack, users' entries).
        self.metadata: dict[str, Any] | None = None


class Node:
    """A backward function: takes output gradients, returns input gradients.

    Subclasses implement `apply(grads) -> list` with one entry per next edge.
    """

    # The next edges are kept flat in the node, not as tuples: `_num_edges`, the first
    # two edges as `_fn0, _nr0` and `_fn1, _nr1` (set only when there are that many)
    # and any further ones as a tuple `_more` (set only then). A recorded call then
    # leaves one object the cyclic garbage collector tracks (this node) instead of
    # three or four (the edges' tuples, each holding a node): in a graph of 100,000
    # nodes, every collection walks that many fewer objects. `_next_edges` builds the
    # tuple of `(function, input_nr)` pairs for the readers that want one.
    __slots__ = (
        "_num_edges",
        "_fn0",
        "_nr0",
        "_fn1",
        "_nr1",
        "_more",
        "_input_metadata",
        "_sequence_number",
        "_topological_nr",
        "_extras",
        "__weakref__",
    )

    def __init__(self) -> None:
        self._num_edges = 0
        # A tuple, grown by one entry per output: its entries hold no objects the
        # collector tracks, so once the collector has seen it, it is not tracked.
        self._input_metadata: tuple[InputMetadata, ...] = ()
        self._sequence_number = next(SEQUENCE_NUMBERS)
        self._topological_nr = 0
        # Hooks and metadata, which most nodes never get: one slot, None until then
        # (see NodeExtras; `_pre_hooks` and the others read and write it).
        self._extras: NodeExtras | None = None
        if anomaly_mode._enabled:
            self._extra().metadata = {"traceback_": anomaly_mode.forward_stack()}

    # -- hooks and metadata, kept in `_extras` ---------------------------------------
    def _extra(self) -> NodeExtras:
        extras = self._extras
        if extras is None:
            extras = self._extras = NodeExtras()
        return extras

    @property
    def _pre_hooks(self) -> list[Callable[..., Any]] | None:
        extras = self._extras
        return None if extras is None else extras.pre_hooks

    @_pre_hooks.setter
    def _pre_hooks(self, hooks: list[Callable[..., Any]] | None) -> None:
        self._extra().pre_hooks = hooks

    @property
    def _post_hooks(self) -> list[Callable[..., Any]] | None:
        extras = self._extras
        return None if extras is None else extras.post_hooks

    @_post_hooks.setter
    def _post_hooks(self, hooks: list[Callable[..., Any]] | None) -> None:
        self._extra().post_hooks = hooks

    @property
    def _tensor_pre_hooks(self) -> dict[int, list[Callable[..., Any]]] | None:
        extras = self._extras
        return None if extras is None else extras.tensor_pre_hooks

    @_tensor_pre_hooks.setter
    def _tensor_pre_hooks(
        self, hooks: dict[int, list[Callable[..., Any]]] | None
    ) -> None:
        self._extra().tensor_pre_hooks = hooks

    @property
    def _retains_grad(self) -> dict[int, weakref.ref[Tensor]] | None:
        extras = self._extras
        return None if extras is None else extras.retains_grad

    @_retains_grad.setter
    def _retains_grad(self, refs: dict[int, weakref.ref[Tensor]] | None) -> None:
        self._extra().retains_grad = refs

    @property
    def _metadata(self) -> dict[str, Any] | None:
        extras = self._extras
        return None if extras is None else extras.metadata

    @_metadata.setter
    def _metadata(self, metadata: dict[str, Any] | None) -> None:
        self._extra().metadata = metadata

    # -- graph structure -------------------------------------------------------------
    def set_next_edges(self, edges: Sequence[EdgeTuple]) -> None:
        self._store_edges(edges)
        topological_nr = 0
        for function, _ in edges:
            if function is not None and function._topological_nr >= topological_nr:
                topological_nr = function._topological_nr + 1
        self._topological_nr = topological_nr

    def _store_edges(self, edges: Sequence[EdgeTuple]) -> None:
        """Keep `edges` flat in the node (see __slots__)."""
        count = len(edges)
        if count:
            self._fn0, self._nr0 = edges[0]
            if count > 1:
                self._fn1, self._nr1 = edges[1]
                if count > 2:
                    self._more = tuple([(f, nr) for f, nr in edges[2:]])
        self._num_edges = count

    @property
    def _next_edges(self) -> tuple[EdgeTuple, ...]:
        """The next edges as a tuple of `(function, input_nr)` pairs (built per call)."""
        count = self._num_edges
        if count == 1:
            return ((self._fn0, self._nr0),)
        if count == 2:
            return ((self._fn0, self._nr0), (self._fn1, self._nr1))
        if not count:
            return ()
        return ((self._fn0, self._nr0), (self._fn1, self._nr1)) + self._more

    @_next_edges.setter
    def _next_edges(self, edges: Sequence[EdgeTuple]) -> None:
        self._store_edges(edges)

    @property
    def next_functions(self) -> tuple[tuple[Node | None, int], ...]:
        return self._next_edges

    def next_edge(self, index: int) -> Edge:
        function, input_nr = self._next_edges[index]
        return Edge(function, input_nr)

    @property
    def num_outputs(self) -> int:
        """How many gradients `apply` returns: one per next edge."""
        return self._num_edges

    def add_input_metadata(self, tensor: Tensor) -> int:
        """Record one forward output; returns its output number."""
        metadata = self._input_metadata
        data = tensor._data
        self._input_metadata = metadata + ((data.shape, data.dtype),)
        return len(metadata)

    @property
    def input_metadata(self) -> tuple[InputMetadata, ...]:
        return self._input_metadata

    def should_compute_output(self, index: int) -> bool:
        """Whether gradient `index` goes anywhere (decided at graph construction)."""
        return self._next_edges[index][0] is not None

    def task_should_compute_output(self, index: int) -> bool:
        """Whether gradient `index` is needed by the backward pass now running."""
        function = self._next_edges[index][0]
        if function is None:
            return False
        exec_info = task_state.exec_info
        return exec_info is None or exec_info.get(function, False)

    def task_needs_input_grad(self) -> tuple[bool, ...]:
        """task_should_compute_output for every input at once (what `apply` asks)."""
        exec_info = task_state.exec_info
        count = self._num_edges
        if exec_info is None:
            # One and two inputs (most nodes) without building a list.
            if count == 1:
                return (self._fn0 is not None,)
            if count == 2:
                return (self._fn0 is not None, self._fn1 is not None)
            return tuple([function is not None for function, _ in self._next_edges])
        return tuple(
            [
                function is not None and exec_info.get(function, False)
                for function, _ in self._next_edges
            ]
        )

    # -- identity ---------------------------------------------------------------------
    def name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        return f"<{self.name()} object at {id(self):#x}>"

    def _sequence_nr(self) -> int:
        return self._sequence_number

    @property
    def metadata(self) -> dict[str, Any]:
        extras = self._extra()
        if extras.metadata is None:
            extras.metadata = {}
        return extras.metadata

    # -- running ----------------------------------------------------------------------
    def apply(self, grads: Sequence[Tensor | None]) -> Sequence[Tensor | None]:
        raise NotImplementedError(f"{self.name()} does not implement apply")

    def __call__(
        self, *grads: Tensor | None
    ) -> tuple[Tensor | None, ...] | Tensor | None:
        """Run this node directly, as PyTorch's ``y.grad_fn(grad)`` does."""
        result = tuple(self.apply(list(grads)))
        return result if len(result) != 1 else result[0]

    # Whether the class overrides apply_arrays (the engine hands such a node arrays).
    _has_array_form: ClassVar[bool] = False
    # Whether the class overrides will_release_variables / release_variables (the
    # engine calls them only then): set for every subclass by __init_subclass__.
    _will_release: ClassVar[bool] = False
    _releases: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._will_release = (
            cls.will_release_variables is not Node.will_release_variables
        )
        cls._releases = cls.release_variables is not Node.release_variables

    def apply_arrays(self, grads: list[Any]) -> list[Any] | None:
        """`apply` over bare arrays, for a backward that records no graph (the
        engine's): a generated node with an array form overrides it; None means
        "run `apply` on Tensors instead"."""
        return None

    def release_variables(self) -> None:
        """Free saved tensors; generated nodes with SavedVariables override this."""

    def will_release_variables(self) -> None:
        """Called before `apply` when the graph will not be retained."""

    # -- hooks ------------------------------------------------------------------------
    def register_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """`hook(grad_inputs, grad_outputs)` runs after `apply`; may return new grad_inputs."""
        extras = self._extra()
        if extras.post_hooks is None:
            extras.post_hooks = []
        extras.post_hooks.append(hook)
        return RemovableHandle(extras.post_hooks, hook)

    def register_prehook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """`hook(grad_outputs)` runs before `apply`; may return new grad_outputs."""
        extras = self._extra()
        if extras.pre_hooks is None:
            extras.pre_hooks = []
        extras.pre_hooks.append(hook)
        return RemovableHandle(extras.pre_hooks, hook)

    def _register_tensor_pre_hook(
        self, output_nr: int, hook: Callable[..., Any]
    ) -> RemovableHandle:
        extras = self._extra()
        if extras.tensor_pre_hooks is None:
            extras.tensor_pre_hooks = {}
        hooks = extras.tensor_pre_hooks.setdefault(output_nr, [])
        hooks.append(hook)
        return RemovableHandle(hooks, hook)


class GraphRoot(Node):
    """The start of a backward pass with several roots: emits the given gradients."""

    __slots__ = ("_outputs",)

    def __init__(
        self, edges: tuple[EdgeTuple, ...], outputs: list[Tensor | None]
    ) -> None:
        super().__init__()
        self.set_next_edges(edges)
        self._outputs = outputs

    def apply(self, grads: Sequence[Tensor | None]) -> list[Tensor | None]:
        return self._outputs


class AccumulateGrad(Node):
    """The sink of a leaf's gradients: adds what arrives into `variable.grad`.

    Backward passes on several threads may reach the same leaf at once (PyTorch's Note
    [Thread Safety on Autograd Node]): the read-add-write of `.grad` and the
    post-accumulate hooks run under this node's own mutex, as PyTorch's. A leaf has at
    most one live AccumulateGrad (see Tensor._get_grad_accumulator), so the mutex
    guards its `.grad`.
    """

    __slots__ = ("variable", "_mutex")

    def __init__(self, variable: Tensor, mutex: threading.RLock | None = None) -> None:
        # Node's fields, set here rather than through Node.__init__ (one per leaf and
        # graph): no edges, the largest sequence number (PyTorch's: a leaf's gradient
        # is accumulated as soon as it is ready), no hooks or metadata yet.
        self._num_edges = 0
        self._sequence_number = MAX_SEQUENCE_NR
        self._topological_nr = 0
        self._extras = None
        if anomaly_mode._enabled:
            self._extra().metadata = {"traceback_": anomaly_mode.forward_stack()}
        self.variable = variable
        # Reentrant (a hook may run backward). Tensor._get_grad_accumulator passes the
        # leaf's own, kept across its graphs (a leaf has at most one AccumulateGrad
        # alive), so a graph does not make one per leaf; otherwise made here, with the
        # node (cheaper than lazily under a module lock when the first gradient comes).
        self._mutex: threading.RLock | None = _RLock() if mutex is None else mutex
        data = variable._data
        self._input_metadata = ((data.shape, data.dtype),)

    def _lock(self) -> threading.RLock:
        """This node's mutex (callers write `node._mutex or node._lock()`)."""
        mutex = self._mutex
        if mutex is None:
            mutex = self._mutex = _RLock()
        return mutex

    def apply(self, grads: Sequence[Tensor | None]) -> list[Tensor | None]:
        new_grad = grads[0]
        variable = self.variable
        if new_grad is None:
            return []
        if variable._grad_fn is not None:
            raise RuntimeError("leaf variable has been moved into the graph interior")
        if not variable.requires_grad:
            return []
        recording = grad_mode._state.enabled  # create_graph: the sum must be recorded
        with self._mutex or self._lock():
            old_grad = variable._grad
            if old_grad is None:
                # Take the engine's gradient when nobody else can see it, else copy
                # it, so `.grad` never aliases a tensor the user holds (e.g.
                # `x.backward(g)`).
                if not recording and is_stealable(new_grad, extra_refs=_APPLY_REFS):
                    variable._grad = new_grad
                else:
                    variable._grad = new_grad.clone()
            elif recording:
                variable._grad = old_grad + new_grad
            elif old_grad._data.flags.writeable:
                # In place, as PyTorch: the same `.grad` object survives across
                # backwards.
                np.add(old_grad._data, new_grad._data, out=old_grad._data)
                old_grad._counter().version += 1
            else:
                variable._grad = old_grad + new_grad
            if variable._post_accumulate_grad_hooks:
                for hook in list(variable._post_accumulate_grad_hooks):
                    hook(variable)
        return []


# AccumulateGrad's mutex: what threading.RLock() returns, without its Python wrapper.
_RLock = _thread.RLock

# Inside `is_stealable` a tensor nobody else holds is referenced by its holder, the
# `tensor` parameter and getrefcount's argument; its array by the tensor, the local
# `data` and getrefcount's argument.
_BASE_TENSOR_REFS = 3
_BASE_ARRAY_REFS = 3
# In AccumulateGrad.apply the new gradient is also held by a local.
_APPLY_REFS = 1


def is_stealable(tensor: Tensor, extra_refs: int = 0) -> bool:
    """Whether only the caller sees `tensor` and its array, so it may be reused in place.

    `extra_refs` counts the references the caller itself holds beyond one holder.
    """
    data = tensor._data
    return (
        sys.getrefcount(tensor) <= _BASE_TENSOR_REFS + extra_refs
        and sys.getrefcount(data) <= _BASE_ARRAY_REFS
        and data.base is None
        and data.flags.writeable
        and tensor._grad_fn is None
    )


def index_ranges(sizes: Sequence[int]) -> list[range]:
    """The edge indices of each differentiable input: one for a Tensor, n for a list."""
    ranges = []
    start = 0
    for size in sizes:
        ranges.append(range(start, start + size))
        start += size
    return ranges


def flatten_grad_inputs(
    grad_inputs: Sequence[Any], ranges: Sequence[range]
) -> list[Tensor | None]:
    """One gradient per edge from one entry per input (a list for a Tensor[] input)."""
    flat: list[Tensor | None] = []
    for grad, indices in zip(grad_inputs, ranges):
        if len(indices) == 1 and not isinstance(grad, (list, tuple)):
            flat.append(grad)
        elif grad is None:
            flat.extend([None] * len(indices))
        else:
            if len(grad) != len(indices):
                raise RuntimeError(
                    f"a formula returned {len(grad)} gradients for a list of "
                    f"{len(indices)} tensors"
                )
            flat.extend(grad)
    return flat
