"""Running compiled code: the node its outputs hang from, and one compiled signature.

`CompiledFunctionBackward` is the one backward node of a compiled call: its saved
values are arrays, its edges lead to the inputs (and lifted tensors) that need a
gradient, so `loss.backward()`, optimizers, hooks on leaves and `autograd.grad` work
around it. Like a SavedVariable, it checks that no saved input or output was changed
in place since the forward, and it frees what it saved after a backward that does not
retain the graph.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import grad_mode
from ..graph import ERR_BACKWARD_TWICE, Node
from ..tensor import Tensor, VersionCounter
from ..variable_type_utils import collect_next_edges, set_history
from .graph import Program

__all__ = ["CompiledFunctionBackward", "Entry", "NEW", "SAME", "lifted_meta"]

ERR_DOUBLE_BACKWARD = (
    "gradgen.compile does not support double backward: the compiled backward is "
    "numpy code, not recorded"
)


class CompiledFunctionBackward(Node):
    """The backward of one compiled call (as torch.compile's CompiledFunctionBackward)."""

    __slots__ = ("_backward", "_saved", "_counters", "_grad_shapes")

    def __init__(
        self,
        backward: Any,
        saved: tuple[Any, ...],
        counters: list[tuple[VersionCounter, int]],
        grad_shapes: list[tuple[tuple[int, ...], np.dtype]],
    ) -> None:
        super().__init__()
        self._backward = backward
        self._saved: tuple[Any, ...] | None = saved
        self._counters = counters
        self._grad_shapes = grad_shapes

    def apply(self, grads: Sequence[Tensor | None]) -> list[Tensor | None]:
        if grad_mode.is_grad_enabled():
            raise RuntimeError(ERR_DOUBLE_BACKWARD)
        saved = self._saved
        if saved is None:
            raise RuntimeError(ERR_BACKWARD_TWICE)
        for counter, version in self._counters:
            if counter.version != version:
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been "
                    "modified by an inplace operation: a tensor saved by "
                    f"CompiledFunctionBackward is at version {counter.version}; "
                    f"expected version {version} instead."
                )
        arrays = [
            np.zeros(shape, dtype) if grad is None else grad._data
            for grad, (shape, dtype) in zip(grads, self._grad_shapes)
        ]
        results = self._backward(*arrays, *saved)
        return [
            (
                None
                if r is None
                else Tensor(r if type(r) is np.ndarray else np.asarray(r))
            )
            for r in results
        ]

    def release_variables(self) -> None:
        self._saved = None


NEW, SAME = -1, -2


def _meta(tensor: Tensor) -> tuple[Any, ...]:
    data = tensor._data
    return (data.shape, data.dtype, tensor._requires_grad)


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
    grad_shapes: list[Any] | None = None  # the differentiable outputs' (shape, dtype)

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
            self._attach(backward, tensors, results, saved)
        return results

    def _attach(
        self,
        backward: Any,
        tensors: list[Tensor],
        results: list[Tensor],
        saved: tuple[Any, ...],
    ) -> None:
        counters = []
        inputs = len(tensors)
        for source in self.saved_sources:
            if source >= 0:
                owner = tensors[source] if source < inputs else results[source - inputs]
                counter = owner._counter()
                counters.append((counter, counter.version))
        differentiable = [t for t, d in zip(results, self.differentiable) if d]
        if self.grad_shapes is None:
            self.grad_shapes = [(t._data.shape, t._data.dtype) for t in differentiable]
        node = CompiledFunctionBackward(backward, saved, counters, self.grad_shapes)
        node.set_next_edges(collect_next_edges(*[tensors[i] for i in self.needs_grad]))
        for tensor in differentiable:
            set_history(tensor, node)


def lifted_meta(tensors: list[Tensor]) -> list[Any]:
    """What a call checks of each lifted tensor besides its identity."""
    return [_meta(t) for t in tensors]
