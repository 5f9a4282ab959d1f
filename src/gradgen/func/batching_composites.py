"""Composites run on a whole batch as one call inside vmap(grad): linear and
cross_entropy.

A composite (CompositeImplicit) is a Python function over operators: inside vmap each
of its operators goes through its own batching rule and records its own node. For
the two composites of every per-example training loss the batched call is known as a
whole, and these rules (installed in the composites' `BATCHED` slots) run it as one:

- `linear` with the input, the weight and the bias all batched (nn.Linear under
  ``vmap(grad(...))``, the weight a per-example alias): one PerExampleLinearBackward
  (batching_linear.py) whose third edge is the weight's own, without the transpose
  the composite records;
- `cross_entropy` against class probabilities (the input's shape), without class
  weights or label smoothing, reduced by mean or sum: one
  PerExampleCrossEntropyBackward instead of log_softmax, mul, sum, neg and mul.
  Forward and backward are the same numpy operations, in the same order, as those
  five operators' kernels and formulas, so the values are the same to the last bit;
- `cross_entropy` against class indices, one row of logits per example: one
  PerExampleClassCrossEntropyBackward (batching_class_loss.py), likewise.

Each returns NotImplemented (the composite then runs as usual) outside the plain case:
nested levels (a batch that is itself batched), forward AD, the profiler's observer,
grad mode off, saved-tensor hooks (which must see the saves of the operators), a
target that requires grad, other dtypes or shapes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import dispatch
from ..composites._common import BATCHED
from ..dispatch import forward_ad_levels
from ..dtypes import Reduction
from ..grad_mode import _state as _grad_mode_state
from ..graph import (
    SAVED_TENSORS_HOOKS,
    Saved,
    SavedVariable,
    OPEN_HOOKS,
    unpack_saved,
)
from ..tensor import Tensor
from ..variable_type_utils import next_edge, set_history
from .batching import HANDLES, BatchedTensor, call_plain, per_example
from .batching_class_loss import LogSoftmaxLossBackward, batched_class_cross_entropy
from .batching_linear import linear_node


def batched_linear(input: Tensor, weight: Tensor, bias: Tensor) -> Any:
    """linear's addmm case with all three batched at one level, as one node."""
    if (
        input.__class__ is not BatchedTensor
        or weight.__class__ is not BatchedTensor
        or bias.__class__ is not BatchedTensor
        or (OPEN_HOOKS[0] and SAVED_TENSORS_HOOKS.stack)  # must see t()'s result
    ):
        return NotImplemented
    level = input._level
    if weight._level != level or bias._level != level:
        return NotImplemented
    result = linear_node(bias._value, input._value, weight._value, rows=True)
    return NotImplemented if result is None else BatchedTensor(result, level)


class PerExampleCrossEntropyBackward(LogSoftmaxLossBackward):
    """Backward of the per-example cross entropy of logits `x` (b, ...) against
    class probabilities `target` (same shape), over class axis `dim` of the values:
    ``-sum(target * log_softmax(x))``, times `scale` for the mean (None: the sum).
    The array form reads the log-probabilities kept from the forward; the tensor
    form (a graph of the backward) recomputes them from `x`, so that their path to
    `x` is differentiated too (and raises PyTorch's in-place error if `x` changed
    in place since, where the operators' nodes would have used the saved values)."""

    __slots__ = ("dim", "scale", "sizes")

    def __init__(
        self,
        x: Saved,
        target: Saved,
        log_probabilities: np.ndarray,
        dim: int,
        scale: float | None,
        sizes: tuple[int, ...],
    ) -> None:
        LogSoftmaxLossBackward.__init__(self, x, target, log_probabilities)
        self.dim = dim
        self.scale = scale
        self.sizes = sizes

    def _summed_dims(self) -> list[int]:
        return list(range(1, len(self.sizes)))

    def apply(self, grads: Sequence[Tensor | None]) -> list[Tensor | None]:
        grad = grads[0]
        if grad is None:
            return [None]
        x, target = unpack_saved(self.x_, self), unpack_saved(self.target_, self)
        if self.scale is not None:  # mul's backward
            grad = HANDLES["mul.Scalar"].call(grad, self.scale)
        grad = HANDLES["neg"].call(grad)
        for dim in self._summed_dims():  # sum's backward
            grad = HANDLES["unsqueeze"].call(grad, dim)
        grad = HANDLES["expand"].call(grad, list(self.sizes), False)
        grad = HANDLES["mul.Tensor"].call(grad, target)  # mul's, to log_softmax
        return self._log_softmax_backward(grad, x, self.dim)

    def apply_arrays(self, grads: list[Any]) -> list[Any] | None:
        grad = self._array_grad(grads)
        log_probabilities = self.log_probabilities
        if grad is None or log_probabilities is None:
            return None
        # (`x` is not read: as the operators' nodes, which save the
        # log-probabilities and not the logits, a later in-place change of the
        # logits does not matter here.)
        target = unpack_saved(self.target_, self)._data
        # The array formulas of mul, neg, sum, mul and log_softmax in turn
        # (helpers.arrays: grad * scale, negative, a broadcast view, grad * target,
        # _log_softmax_backward_data), without their generic steps.
        # Without numpy's warnings (inf - inf), as the kernels run.
        with np.errstate(all="ignore"):
            if self.scale is not None:
                grad = grad * self.scale
            grad = np.negative(grad)
            grad = grad.reshape(grad.shape + (1,) * (target.ndim - 1)) * target
            exps = np.exp(log_probabilities)
            return [grad - exps * np.add.reduce(grad, axis=self.dim, keepdims=True)]


def _plain_call() -> bool:
    """Whether a batched call may record its own node: grad mode on, no forward AD,
    no observer, no saved-tensor hooks."""
    return (
        _grad_mode_state.enabled
        and not forward_ad_levels.count
        and dispatch._observer is None
        and not (OPEN_HOOKS[0] and SAVED_TENSORS_HOOKS.stack)
    )


def batched_cross_entropy(
    self: Tensor,
    target: Tensor,
    weight: Tensor | None,
    reduction: int,
    ignore_index: int,
    label_smoothing: float,
) -> Any:
    """cross_entropy against class probabilities or class indices
    (batching_class_loss.py) over a batch, as one node."""
    if (
        self.__class__ is not BatchedTensor
        or target.__class__ is not BatchedTensor
        or target._level != self._level
        or weight is not None
        or label_smoothing != 0.0
        or reduction not in (Reduction.MEAN, Reduction.SUM)
        or not _plain_call()
    ):
        return NotImplemented
    x, probabilities = self._value, target._value
    if x.__class__ is not Tensor or probabilities.__class__ is not Tensor:
        return NotImplemented
    x_data, target_data = x._data, probabilities._data
    if target_data.dtype.kind in "iu":  # class indices
        return batched_class_cross_entropy(
            self._level, x, probabilities, reduction, ignore_index, _class_max
        )
    if (
        ignore_index >= 0
        or x_data.shape != target_data.shape
        or x_data.ndim < 2
        or x_data.dtype.kind != "f"
        or target_data.dtype is not x_data.dtype
        or x_data.size == 0
        or probabilities.requires_grad
    ):
        return NotImplemented
    edge = next_edge(x)
    if edge[0] is None:
        return NotImplemented  # nothing to record: the composite as usual
    return _record(self._level, x, probabilities, edge, reduction)


def _class_max(x: np.ndarray, dim: int) -> np.ndarray:
    """``np.maximum.reduce(x, axis=dim, keepdims=True)`` (log_softmax's kernel's max),
    the same bits. numpy reduces a short last axis one row at a time (~70 ns a row);
    many rows of a few classes go faster as the rows' elementwise maximum, class
    after class, over a transposed copy. The maximum of values that are not NaN is
    one value, with one bit pattern unless it is a zero (-0.0 and 0.0 compare
    equal: which one wins a tie depends on the order), so the result is kept only
    when every row's maximum is neither NaN nor a zero (nor so small that its
    square is 0); else the row-wise reduction runs."""
    classes = x.shape[dim]
    if dim != x.ndim - 1 or classes > _CLASS_MAX_CLASSES or x.size < _CLASS_MAX_SIZE:
        return np.maximum.reduce(x, axis=dim, keepdims=True)
    columns = np.ascontiguousarray(x.reshape(-1, classes).T)
    found: np.ndarray = np.maximum.reduce(columns, axis=0)
    if not np.greater(found * found, 0).all():  # a NaN or a zero maximum
        return np.maximum.reduce(x, axis=dim, keepdims=True)
    return found.reshape(x.shape[:-1] + (1,))


# Where `_class_max`'s transposed maximum is faster (measured with float32: 256 rows
# of 10 classes 7 us instead of 19; at 100 classes the row-wise reduction wins).
_CLASS_MAX_CLASSES = 32
_CLASS_MAX_SIZE = 1024


def _record(
    level: int,
    x: Tensor,
    target: Tensor,
    edge: Any,
    reduction: int,
) -> BatchedTensor:
    """The loss of each example and its node (the composite's kernels, in order)."""
    x_data, target_data = x._data, target._data
    rank = x_data.ndim  # the examples' rank + 1
    dim = 1 if rank == 2 else 2  # the class dimension (0 for a 1-d example, else 1)
    # _log_softmax's kernel (numpy_kernels.activation.softmax), its reductions
    # without np.max's and np.sum's Python wrappers.
    with np.errstate(all="ignore"):
        shifted = x_data - _class_max(x_data, dim)
        sums = np.add.reduce(np.exp(shifted), axis=dim, keepdims=True)
        log_probabilities = shifted - np.log(sums)
    terms = log_probabilities * target_data
    # (reduce_sum's reduction of a floating array over the examples' dims, directly)
    total = np.negative(
        np.add.reduce(terms, axis=tuple(range(1, rank)), dtype=terms.dtype)
    )
    scale = None
    if reduction == Reduction.MEAN:
        scale = 1.0 / (x_data[0].size // x_data.shape[dim])
        total = total * x_data.dtype.type(scale)
    node = PerExampleCrossEntropyBackward(
        SavedVariable.input(x),
        SavedVariable.input(target),
        log_probabilities,
        dim,
        scale,
        x_data.shape,
    )
    node.set_next_edges((edge,))
    result = Tensor(total)
    set_history(result, node)
    return BatchedTensor(result, level)


def batched_relu(input: Tensor) -> Any:
    """relu of a batch of plain tensors: what the Batched key's kernel does for it
    (relu's pointwise rule: the value's relu below the Batched key), without the
    dispatcher's steps on the way; NotImplemented for anything else, and while the
    profiler's observer must see the call."""
    if input.__class__ is not BatchedTensor or dispatch._observer is not None:
        return NotImplemented
    value = input._value
    if value.__class__ is not Tensor:
        return NotImplemented
    result = call_plain(HANDLES["relu"], value)
    return BatchedTensor(result, input._level)


def install() -> None:
    """Fill the composites' slots (gradgen.func loads after them)."""
    BATCHED.linear = batched_linear
    BATCHED.cross_entropy_loss = batched_cross_entropy
    BATCHED.relu = batched_relu
    BATCHED.per_example = per_example
