"""Running compiled code: the node its outputs hang from, and one compiled signature.

`CompiledFunctionBackward` is the one backward node of a compiled call: its saved
values are arrays, its edges lead to the inputs (and lifted tensors) that need a
gradient, so `loss.backward()`, optimizers, hooks on leaves and `autograd.grad` work
around it. Like a SavedVariable, it checks that no saved input or output was changed
in place since the forward, and it frees what it saved after a backward that does not
retain the graph.

The hot path of a compiled call is kept to the bone:
- a call whose arguments are tensors only runs `Entry.fast_call`, a function made per
  signature (`fast.py`) whose guard is one straight-line comparison of the arguments'
  metadata against the signature's, and which runs the program, wraps its outputs and
  attaches the node;
- `backward()` from an output of such a node, when the node feeds leaves only and
  nothing needs the engine (no hooks, no anomaly mode, no `inputs=`), runs the
  compiled backward and accumulates into `.grad` itself (`run_alone`, registered with
  autograd.backward); anything else goes through the engine as any node does.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import anomaly_mode, grad_mode
from ..autograd import RUN_ALONE
from ..graph import ERR_BACKWARD_TWICE, AccumulateGrad, Node
from ..tensor import Tensor, VersionCounter
from ..variable_type_utils import collect_next_edges, set_history
from .graph import Program

__all__ = [
    "CompiledFunctionBackward",
    "Entry",
    "NEW",
    "SAME",
    "lifted_meta",
    "run_alone",
]

ERR_DOUBLE_BACKWARD = (
    "gradgen.compile does not support double backward: the compiled backward is "
    "numpy code, not recorded"
)

_NDARRAY = np.ndarray
_getrefcount = sys.getrefcount


def _version_error(counter: VersionCounter, version: int) -> RuntimeError:
    return RuntimeError(
        "one of the variables needed for gradient computation has been "
        "modified by an inplace operation: a tensor saved by "
        f"CompiledFunctionBackward is at version {counter.version}; "
        f"expected version {version} instead."
    )


class CompiledFunctionBackward(Node):
    """The backward of one compiled call (as torch.compile's CompiledFunctionBackward).

    `_counters` is flat: counter, version, counter, version, ...; `_zeros` holds one
    read-only array of zeros per differentiable output (the gradient of an output the
    backward does not reach), `_ones` one of ones (the seed of `backward()`)."""

    __slots__ = ("_backward", "_saved", "_counters", "_zeros", "_ones")

    def __init__(
        self,
        backward: Any,
        saved: tuple[Any, ...],
        counters: tuple[Any, ...],
        zeros: tuple[np.ndarray, ...],
        ones: tuple[np.ndarray, ...],
    ) -> None:
        super().__init__()
        self._backward = backward
        self._saved: tuple[Any, ...] | None = saved
        self._counters = counters
        self._zeros = zeros
        self._ones = ones

    def _check_versions(self) -> None:
        counters = self._counters
        for index in range(0, len(counters), 2):
            if counters[index].version != counters[index + 1]:
                raise _version_error(counters[index], counters[index + 1])

    def apply(self, grads: Sequence[Tensor | None]) -> list[Tensor | None]:
        if grad_mode._state.enabled:
            raise RuntimeError(ERR_DOUBLE_BACKWARD)
        saved = self._saved
        if saved is None:
            raise RuntimeError(ERR_BACKWARD_TWICE)
        self._check_versions()
        arrays = [
            zero if grad is None else grad._data
            for grad, zero in zip(grads, self._zeros)
        ]
        results = self._backward(*arrays, *saved)
        return [
            (None if r is None else Tensor(r if type(r) is _NDARRAY else np.asarray(r)))
            for r in results
        ]

    def release_variables(self) -> None:
        self._saved = None


def _runs_alone(node: CompiledFunctionBackward) -> bool:
    """Whether a backward from this node needs nothing of the engine: no hooks or
    retain_grad on it, and each edge an AccumulateGrad of a leaf without hooks, no two
    edges to the same leaf."""
    if (
        node._pre_hooks
        or node._post_hooks
        or node._tensor_pre_hooks
        or node._retains_grad
        or anomaly_mode._enabled
    ):
        return False
    seen = []
    for function, _ in node._next_edges:
        if function is None:
            continue
        if (
            function.__class__ is not AccumulateGrad
            or function._pre_hooks
            or function._post_hooks
            or function._tensor_pre_hooks
        ):
            return False
        variable = function.variable
        if (
            variable._hooks
            or variable._post_accumulate_grad_hooks
            or variable._grad_fn is not None
            or function in seen
        ):
            return False
        seen.append(function)
    return True


def _accumulate(function: AccumulateGrad, grad: Any) -> None:
    """AccumulateGrad.apply for a gradient array only this call holds (`grad`, taken
    when it owns fresh memory, else copied), without a Tensor around it first."""
    variable = function.variable
    if not variable._requires_grad:
        return
    with function._mutex or function._lock():
        old = variable._grad
        if old is None:
            variable._grad = Tensor(grad)
        elif old.__class__ is Tensor and old._data.flags.writeable:
            np.add(old._data, grad, out=old._data)
            old._counter().version += 1
        else:
            variable._grad = old + Tensor(grad)


def run_alone(node: Node, output: Tensor, retain_graph: bool) -> bool:
    """`output.backward()` (implicit gradient, no create_graph, no inputs=) when the
    engine is not needed: False to let the engine run it."""
    assert isinstance(node, CompiledFunctionBackward)
    data = output._data
    if output._base is not None or data.size != 1 or data.dtype.kind != "f":
        return False
    saved = node._saved
    if saved is None or not _runs_alone(node):
        return False
    node._check_versions()
    nr = output._output_nr
    ones = node._ones
    if len(ones) == 1:
        seeds: Sequence[np.ndarray] = ones
    else:
        seeds = list(node._zeros)
        seeds[nr] = ones[nr]
    if not retain_graph:
        node._saved = None
    results = node._backward(*seeds, *saved)
    del saved
    for index, (function, _) in enumerate(node._next_edges):
        grad = results[index]  # (not zip: its result tuple would hold a reference)
        if function is None or grad is None:
            continue
        if grad.__class__ is not _NDARRAY:
            grad = np.asarray(grad)  # a numpy scalar: a new 0-d array
        elif not (
            _getrefcount(grad) <= 3  # the results tuple, `grad`, the call's argument
            and _private_memory(grad)
        ):
            grad = np.copy(grad, order="K")
        _accumulate(function, grad)  # type: ignore[arg-type]
    return True


def _private_memory(array: np.ndarray) -> bool:
    """Whether the array's memory is its own or that of a base only it references (a
    reshape or transpose of a fresh result), and writeable."""
    base = array.base
    return array.flags.writeable and (
        base is None
        or (
            base.__class__ is _NDARRAY
            and _getrefcount(base) <= 3  # the view, `base`, the call's argument
            and base.base is None
        )
    )


RUN_ALONE[CompiledFunctionBackward] = run_alone


NEW, SAME = -1, -2


def _meta(tensor: Tensor) -> tuple[Any, ...]:
    data = tensor._data
    return (data.shape, data.dtype, tensor._requires_grad)


def _read_only(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


@dataclass
class Entry:
    """One compiled signature: its program and how its results are put together."""

    program: Program
    lifted: list[tuple[Any, Any, Tensor]]  # (owner, key, tensor) read at each call
    output_spec: Any  # the outputs' structure, tensors as ("tensor", position)
    # per output: its input position, NEW, or SAME - j for the same value as output j
    output_sources: list[int]
    # per output: whether it gets the node's history (the first of equal outputs)
    differentiable: list[bool]
    needs_grad: list[int]  # positions (inputs, then lifted) the backward feeds
    saved_sources: list[int]  # per saved value: input position, output position+N, -1
    lifted_meta: list[Any]  # per lifted tensor: shape, dtype, requires_grad
    # per differentiable output: read-only zeros and ones of its shape and dtype
    zeros: tuple[np.ndarray, ...] | None = None
    ones: tuple[np.ndarray, ...] | None = None
    fast_call: Any = field(default=None, repr=False)  # see fast.py
    edges: tuple[Any, ...] = ()  # the last fast call's edges (see fast.py)

    def lifted_tensors(self) -> list[Tensor] | None:
        """The lifted tensors, or None when one was replaced since the compile."""
        tensors = []
        for (owner, key, tensor), meta in zip(self.lifted, self.lifted_meta):
            current = owner.cell_contents if key is None else owner.get(key)
            if current is not tensor or _meta(tensor) != meta:
                return None
            tensors.append(tensor)
        return tensors

    def run(self, tensors: list[Tensor]) -> list[Tensor]:
        """Run the program on the inputs (then lifted tensors); the output tensors."""
        outputs, saved = self.program.forward(*[t._data for t in tensors])
        results: list[Tensor] = []
        for array, source in zip(outputs, self.output_sources):
            if source >= 0:
                results.append(tensors[source])
            elif source == NEW:
                results.append(
                    Tensor(array if type(array) is np.ndarray else np.asarray(array))
                )
            else:  # the same value as an earlier output: the same tensor
                results.append(results[SAME - source])
        backward = self.program.backward
        if backward is not None and grad_mode.is_grad_enabled():
            self.attach(backward, tensors, results, saved)
        return results

    def seeds(self, results: list[Tensor]) -> None:
        """Make the zeros and ones of the differentiable outputs (once)."""
        differentiable = [t for t, d in zip(results, self.differentiable) if d]
        self.zeros = tuple(
            _read_only(np.zeros_like(t._data, order="C")) for t in differentiable
        )
        self.ones = tuple(
            _read_only(np.ones_like(t._data, order="C")) for t in differentiable
        )

    def attach(
        self,
        backward: Any,
        tensors: list[Tensor],
        results: list[Tensor],
        saved: tuple[Any, ...],
    ) -> None:
        """Make the call's CompiledFunctionBackward and hang the outputs from it."""
        counters: list[Any] = []
        inputs = len(tensors)
        for source in self.saved_sources:
            if source >= 0:
                owner = tensors[source] if source < inputs else results[source - inputs]
                counter = owner._counter()
                counters += (counter, counter.version)
        if self.zeros is None or self.ones is None:
            self.seeds(results)
            assert self.zeros is not None and self.ones is not None
        node = CompiledFunctionBackward(
            backward, saved, tuple(counters), self.zeros, self.ones
        )
        node.set_next_edges(collect_next_edges(*[tensors[i] for i in self.needs_grad]))
        for tensor, differentiable in zip(results, self.differentiable):
            if differentiable:
                set_history(tensor, node)


def lifted_meta(tensors: list[Tensor]) -> list[Any]:
    """What a call checks of each lifted tensor besides its identity."""
    return [_meta(t) for t in tensors]
