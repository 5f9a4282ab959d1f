"""The autograd graph: Node, Edge, InputMetadata, AccumulateGrad, SavedVariable.

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
- A saved input is kept plain (`SavedVariable.input`: the tensor, or `(tensor,
  version)`) unless saved-tensor hooks are open; `SavedVariable` keeps the rest. An
  output of the very node that saves it is stored without its grad_fn (a new Tensor
  over the same data and version counter), so node -> saved -> tensor -> node never
  forms a cycle; unpack rebuilds it. Saved tensors are released (`RELEASED`) after the
  node ran unless the graph is retained.
"""

from __future__ import annotations

import _thread
import itertools
import re
import sys
import threading
import weakref
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple, TypeAlias, cast, final

import numpy as np

from . import anomaly_mode, grad_mode
from .dispatch import forward_ad_levels
from .dtypes import spelling

if TYPE_CHECKING:
    from .tensor import Tensor

ERR_BACKWARD_TWICE = (
    "Trying to backward through the graph a second time (or directly access saved "
    "tensors after they have already been freed). Saved intermediate values of the "
    "graph are freed when you call .backward() or autograd.grad(). Specify "
    "retain_graph=True if you need to backward through the graph a second time or if "
    "you need to access saved tensors after calling backward."
)

# Later-created nodes run first; AccumulateGrad as soon as it is ready (PyTorch uses
# UINT64_MAX for it).
_sequence_numbers = itertools.count()
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
        self._sequence_number = next(_sequence_numbers)
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

    def __init__(self, variable: Tensor) -> None:
        Node.__init__(self)  # without super()'s lookup: one per leaf and graph
        self._sequence_number = MAX_SEQUENCE_NR
        self.variable = variable
        # Made with the node (the C lock directly: a leaf gets a new AccumulateGrad per
        # graph, and making one here costs less than making it lazily under a module
        # lock when the first gradient arrives); reentrant: a hook may run backward.
        self._mutex: threading.RLock | None = _RLock()
        self._input_metadata = ((variable._data.shape, variable._data.dtype),)

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


class _SavedTensorsHooks(threading.local):
    """This thread's saved-tensor hooks (autograd.graph.saved_tensors_hooks): a stack
    of (pack_hook, unpack_hook), and the message of disable_saved_tensors_hooks."""

    def __init__(self) -> None:
        self.stack: list[tuple[Callable[[Any], Any], Callable[[Any], Any]]] = []
        self.disabled: str | None = None


SAVED_TENSORS_HOOKS = _SavedTensorsHooks()
# How many saved_tensors_hooks contexts are open in all threads: a SavedVariable looks
# at its thread's stack only when some are (the common case costs one global read).
OPEN_HOOKS = [0]


def push_saved_tensors_hooks(
    pack_hook: Callable[[Any], Any], unpack_hook: Callable[[Any], Any]
) -> None:
    if SAVED_TENSORS_HOOKS.disabled is not None:
        raise RuntimeError(SAVED_TENSORS_HOOKS.disabled)
    SAVED_TENSORS_HOOKS.stack.append((pack_hook, unpack_hook))
    OPEN_HOOKS[0] += 1


def pop_saved_tensors_hooks() -> None:
    SAVED_TENSORS_HOOKS.stack.pop()
    OPEN_HOOKS[0] -= 1


@final
class _Packed:
    """What a pack hook made of a saved tensor, with the saved tensor's place in the
    graph (the node its gradient goes to and its output number)."""

    __slots__ = ("packed", "unpack_hook", "node", "output_nr")

    def __init__(
        self,
        packed: Any,
        unpack_hook: Callable[[Any], Any],
        node: Node | None,
        output_nr: int,
    ) -> None:
        self.packed = packed
        self.unpack_hook = unpack_hook
        self.node = node
        self.output_nr = output_nr


class SavedVariable:
    """A tensor saved for backward, with the version it had when saved; or, under
    saved-tensor hooks, what the pack hook made of it."""

    # Every recorded call saves one or two of these, so a saved input costs three
    # stores: the tensor, its version and `_output` None. The version is read through
    # the saved tensor (`_data`), which shares the original's version counter: an input
    # is kept as itself, an output as a shallow copy. A tensor that has no counter yet
    # is at version 0, and the counter it gets later (on an in-place change) is its own
    # for good, so saving needs none.
    # - `_data`: the saved Tensor; a `_Packed` under saved-tensor hooks; None once
    #   released (`reset_data`).
    # - `_output`: for an output that has a grad_fn (the node saving it), its output
    #   number and, under forward AD, the output itself; None for everything else.
    __slots__ = ("_data", "_saved_version", "_output")

    def __init__(self, tensor: Tensor, is_output: bool) -> None:
        counter = tensor._version_counter
        self._saved_version = 0 if counter is None else counter.version
        if is_output and tensor._grad_fn is not None:
            # Save the data without its grad_fn: that grad_fn is the node saving it.
            self._data: Tensor | _Packed | None = tensor._shallow_copy()
            # Under forward AD the output's tangent is set after it is saved: keep the
            # output itself to read it (a cycle, freed by the collector, only then).
            self._output: tuple[int, Tensor | None] | None = (
                tensor._output_nr,
                tensor if forward_ad_levels.count else None,
            )
        else:
            self._data = tensor
            self._output = None
        if OPEN_HOOKS[0] and SAVED_TENSORS_HOOKS.stack:
            self._pack(tensor, is_output)

    def _pack(self, tensor: Tensor, is_output: bool) -> None:
        """Hand the tensor to the innermost pack hook (in no-grad mode, as PyTorch)
        and keep only what it returns, and where the tensor's gradient goes."""
        pack_hook, unpack_hook = SAVED_TENSORS_HOOKS.stack[-1]
        previous = grad_mode.is_grad_enabled()
        grad_mode._set_enabled(False)
        try:
            packed = pack_hook(tensor)
        finally:
            grad_mode._set_enabled(previous)
        node: Node | None = None
        if not is_output and tensor.requires_grad:
            node = tensor.grad_fn or tensor._get_grad_accumulator()
        # The hooks hold the value now.
        self._data = _Packed(packed, unpack_hook, node, tensor._output_nr)

    def _unpack_hooked(self, hooked: _Packed, saved_for: Node | None) -> Tensor:
        """The unpack hook's tensor, given the saved tensor's place in the graph (no
        version check: the hooks own the value, as in PyTorch)."""
        tensor: Tensor = hooked.unpack_hook(hooked.packed)
        if not hasattr(tensor, "_shallow_copy"):  # graph.py sits below tensor.py
            raise TypeError(
                "Output of saved tensor unpack_hook expected to be a Tensor but got "
                f"result of type {type(tensor).__name__}"
            )
        node, output_nr = hooked.node, hooked.output_nr
        if self._output is not None:
            node, output_nr = saved_for, self._output[0]
        if node is None or tensor._grad_fn is node:
            return tensor
        copy: Tensor = tensor._shallow_copy()
        copy._grad_fn = node
        copy._output_nr = output_nr
        return copy

    def unpack(self, saved_for: Node | None = None) -> Tensor:
        """The saved tensor, checked against in-place changes since it was saved."""
        data = self._data
        if data is None:
            raise RuntimeError(ERR_BACKWARD_TWICE)
        if type(data) is _Packed:
            return self._unpack_hooked(data, saved_for)
        counter = data._version_counter
        if counter is not None and self._saved_version != counter.version:
            raise RuntimeError(self._version_error(data, saved_for))
        output = self._output
        if output is None or data._grad_fn is not None:
            return data
        # Rebuild the output with its history (saved_for is the node that made it).
        tensor = data._shallow_copy()
        if output[1] is not None:
            tensor._fw_grad = output[1]._fw_grad
        if saved_for is not None:
            tensor._grad_fn = saved_for
            tensor._output_nr = output[0]
        return tensor

    def _version_error(self, data: Tensor, saved_for: Node | None) -> str:
        type_name = _legacy_type_name(data)
        output = self._output
        producer = saved_for if output is not None else data._grad_fn
        clause = ""
        if producer is not None:
            # PyTorch names the forward operation: MulBackward0 -> Mul, EBackward -> E.
            op = re.sub(r"Backward\d*$", "", producer.name())
            output_nr = output[0] if output is not None else data._output_nr
            clause = f", which is output {output_nr} of {op},"
        return (
            "one of the variables needed for gradient computation has been modified by "
            f"an inplace operation: [{type_name} {list(data._data.shape)}]{clause} is at "
            f"version {data._version}; expected version "
            f"{self._saved_version} instead. {self._hint()}"
        )

    @staticmethod
    def _hint() -> str:
        if anomaly_mode._enabled:
            return (
                "Hint: the backtrace further above shows the operation that failed to "
                "compute its gradient. The variable in question was changed in there or "
                "anywhere later. Good luck!"
            )
        return (
            "Hint: enable anomaly detection to find the operation that failed to compute "
            "its gradient, with gradgen.autograd.set_detect_anomaly(True, "
            "check_nan=False)."
        )

    def reset_data(self) -> None:
        """Free the saved tensor; unpacking afterwards is the backward-twice error."""
        self._data = None

    @staticmethod
    def input(tensor: Tensor) -> Saved:
        """What a node keeps of an input it saves: the tensor itself when it is at
        version 0 (or has no version counter yet), `(tensor, version)` otherwise, with
        no SavedVariable object; a SavedVariable when saved-tensor hooks are open
        (in any thread: the hooks must see every save)."""
        if OPEN_HOOKS[0] and SAVED_TENSORS_HOOKS.stack:
            return SavedVariable(tensor, False)
        counter = tensor._version_counter
        if counter is None:
            return tensor
        version = counter.version
        return tensor if not version else (tensor, version)


# What a Backward node's slot holds for a saved tensor: None (nothing saved), an
# input saved plain (`SavedVariable.input`: a Tensor saved at version 0, or a
# `(tensor, version)` pair), a SavedVariable (outputs, saves under hooks) or a
# SavedVariableList; `RELEASED` once the node ran without retain_graph.
Saved: TypeAlias = "Tensor | tuple[Tensor, int] | SavedVariable | SavedVariableList"


# A released slot: unpacking it is the backward-twice error.
def _saved_plain(tensor: Tensor | None, version: int) -> SavedVariable:
    """A SavedVariable of an input as SavedVariable(tensor, False) keeps it, made
    without the save (no hooks, no version read)."""
    saved = SavedVariable.__new__(SavedVariable)
    saved._data, saved._saved_version, saved._output = tensor, version, None
    return saved


RELEASED = _saved_plain(None, 0)


def unpack_saved(saved: Saved | None, saved_for: Node) -> Any:
    """A saved tensor back (None when nothing was saved), checked against in-place
    changes since it was saved."""
    if saved is None:
        return None
    cls = saved.__class__
    if cls is SavedVariable or cls is SavedVariableList:
        return saved.unpack(saved_for)  # type: ignore[union-attr]
    tensor: Any = saved
    version = 0
    if cls is tuple:
        tensor, version = cast("tuple[Tensor, int]", saved)
    counter = tensor._version_counter
    if counter is not None and counter.version != version:
        raise RuntimeError(plain_version_error(tensor, version))
    return tensor


def plain_version_error(tensor: Tensor, version: int) -> str:
    """The in-place modification error of an input saved plain at `version`."""
    return _saved_plain(tensor, version)._version_error(tensor, None)


def _legacy_type_name(tensor: Tensor) -> str:
    """PyTorch's ``torch.FloatTensor`` style names, with gradgen's prefix."""
    return "gradgen." + spelling(tensor).legacy_tensor


class SavedVariableList:
    """A saved Tensor[] argument (e.g. `cat`'s tensors): one SavedVariable each; a
    Tensor?[] (`index`'s indices) keeps its None entries."""

    __slots__ = ("_saved", "_released")

    def __init__(self, tensors: Sequence[Tensor | None]) -> None:
        self._saved = [None if t is None else SavedVariable(t, False) for t in tensors]
        self._released = False

    def unpack(self, saved_for: Node | None = None) -> list[Any]:
        if self._released:
            raise RuntimeError(ERR_BACKWARD_TWICE)
        return [
            None if saved is None else saved.unpack(saved_for) for saved in self._saved
        ]

    def reset_data(self) -> None:
        self._released = True
        self._saved = []


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
