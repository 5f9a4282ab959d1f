"""What a backward Node keeps of its forward: SavedVariable (PyTorch's
saved_variable.cpp), the lists of them, and the saved-tensor hooks' stack.

A saved input is kept plain (`SavedVariable.input`: the tensor, or `(tensor,
version)`) unless saved-tensor hooks are open; `SavedVariable` keeps the rest. An
output of the very node that saves it is stored without its grad_fn (a new Tensor over
the same data and version counter), so node -> saved -> tensor -> node never forms a
cycle; unpack rebuilds it. Saved tensors are released (`RELEASED`) after the node ran
unless the graph is retained.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias, cast, final

from . import anomaly_mode, grad_mode
from .dispatch import forward_ad_levels
from .dtypes import spelling

if TYPE_CHECKING:
    from .graph import Node
    from .tensor import Tensor

ERR_BACKWARD_TWICE = (
    "Trying to backward through the graph a second time (or directly access saved "
    "tensors after they have already been freed). Saved intermediate values of the "
    "graph are freed when you call .backward() or autograd.grad(). Specify "
    "retain_graph=True if you need to backward through the graph a second time or if "
    "you need to access saved tensors after calling backward."
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
