"""cross_entropy against class indices over a batch, as one node (vmap(grad)'s
per-example training loss).

Inside vmap each example's ``cross_entropy(logits, target)`` with one row of logits
(a (C,) or (1, C) example) and its class index runs as log_softmax, then nll_loss's
batching rule: a reshape, nll_loss_forward without reduction, a reshape, each
example's count of targets not ignored, a sum and (for the mean) a division; its
graph has six nodes. `batched_class_cross_entropy` computes the same with the same
numpy operations in the same order (log_softmax's kernel, nll_loss's unreduced
kernel, the division by the count), and records one
PerExampleClassCrossEntropyBackward, whose array form runs the formulas of those
nodes (the division's, nll_loss_backward's kernel, _log_softmax_backward_data's)
on the same arrays: the values and gradients are the same to the last bit. When
every target counts (none ignored or out of range: each weight and each total is
1), the nll steps skip the kernels' masks: -picked for the loss, -1 * grad at each
target for its gradient, the same values.

It returns NotImplemented (the composite then runs as usual) for anything else:
class weights, label smoothing, no reduction, several rows per example, another
dtype than float32/float64 or int64 targets, and where `_plain_call` says no.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..dtypes import Reduction
from ..generated import ops
from ..graph import RELEASED, Node, Saved, SavedVariable, unpack_saved
from ..numpy_kernels.activation import softmax_backward_data
from ..numpy_kernels.loss import _nll_grad_rows, _nll_unreduced
from ..tensor import Tensor
from ..variable_type_utils import next_edge, set_history
from .batching import HANDLES, BatchedTensor

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_INT64 = np.dtype(np.int64)


class LogSoftmaxLossBackward(Node):
    """What the per-example cross-entropy nodes share (this one, and
    batching_composites' against class probabilities): the logits `x_` and the
    `target_` saved, the log-probabilities kept from the forward for the array form
    (None once released), and the last steps of both forms."""

    __slots__ = ("x_", "target_", "log_probabilities")
    _has_array_form = True

    def __init__(self, x: Saved, target: Saved, log_probabilities: np.ndarray) -> None:
        Node.__init__(self)
        self.x_: Saved = x
        self.target_: Saved = target
        self.log_probabilities: np.ndarray | None = log_probabilities

    def release_variables(self) -> None:
        self.x_ = self.target_ = RELEASED
        self.log_probabilities = None

    def _array_grad(self, grads: list[Any]) -> np.ndarray | None:
        """The gradient when the array form applies (an ndarray in the kept
        log-probabilities' dtype, before they are released), else None."""
        grad = grads[0]
        log_probabilities = self.log_probabilities
        if (
            grad is None
            or grad.__class__ is not np.ndarray
            or log_probabilities is None
            or grad.dtype is not log_probabilities.dtype
        ):
            return None
        return grad

    @staticmethod
    def _log_softmax_backward(grad: Tensor, x: Tensor, dim: int) -> list[Tensor | None]:
        """The tensor form's last step: log_softmax's backward, its values
        recomputed from `x` (so that their path to `x` is differentiated too)."""
        log_probabilities = HANDLES["_log_softmax"].call(x, dim, False)
        return [
            HANDLES["_log_softmax_backward_data"].call(
                grad, log_probabilities, dim, x.dtype
            )
        ]


class PerExampleClassCrossEntropyBackward(LogSoftmaxLossBackward):
    """Backward of each example's cross entropy of one row of logits `x` (b, C) or
    (b, 1, C) against its class index: the division by the example's count of
    targets not ignored (`mean`), nll_loss's backward over the (b, C) rows, and
    log_softmax's backward. The array form reads the log-probabilities kept from
    the forward; the tensor form (a graph of the backward) recomputes them from
    `x`, so that their path to `x` is differentiated too."""

    __slots__ = ("total", "mean", "ignore_index", "counted")

    def __init__(
        self,
        x: Saved,
        target: Saved,
        log_probabilities: np.ndarray,
        total: np.ndarray,
        mean: bool,
        ignore_index: int,
        counted: bool,
    ) -> None:
        LogSoftmaxLossBackward.__init__(self, x, target, log_probabilities)
        self.total: np.ndarray = total
        self.mean = mean
        self.ignore_index = ignore_index
        self.counted = counted  # every target counts (none ignored): weights of 1

    def apply(self, grads: Sequence[Tensor | None]) -> list[Tensor | None]:
        grad = grads[0]
        if grad is None:
            return [None]
        x, target = unpack_saved(self.x_, self), unpack_saved(self.target_, self)
        dim = x.dim() - 1
        classes = x.shape[-1]
        if self.mean:  # the division's backward
            grad = HANDLES["div.Tensor"].call(grad, Tensor(self.total))
        rows = ops.reshape(HANDLES["_log_softmax"].call(x, dim, False), [-1, classes])
        zero = Tensor(np.zeros((), x.dtype.numpy))
        grad = HANDLES["nll_loss_backward"].call(
            ops.reshape(grad, [-1]),
            rows,
            ops.reshape(target, [-1]),
            None,
            Reduction.NONE,
            self.ignore_index,
            zero,
        )
        return self._log_softmax_backward(ops.reshape(grad, list(x.shape)), x, dim)

    def apply_arrays(self, grads: list[Any]) -> list[Any] | None:
        grad = self._array_grad(grads)
        log_probabilities = self.log_probabilities
        if grad is None or log_probabilities is None:
            return None
        target = unpack_saved(self.target_, self)._data
        dtype = log_probabilities.dtype
        classes = log_probabilities.shape[-1]
        rows = log_probabilities.reshape(-1, classes)
        targets = target.reshape(-1)
        if self.counted:
            # nll_loss_backward's kernel when every target counts: -1 * grad at each
            # target (each weight 1; the division by a total of 1 is exact).
            grad_rows = np.zeros(rows.shape, dtype)
            values = grad.reshape(-1) * dtype.type(-1)
            grad_rows[np.arange(len(targets)), targets] = values
        else:
            if self.mean:  # div's formula (real operands: true division)
                with np.errstate(all="ignore"):
                    grad = np.true_divide(grad, self.total)
            grad_rows = _nll_grad_rows(  # nll_loss_backward's kernel, unreduced
                grad.reshape(-1),
                rows,
                targets,
                None,
                Reduction.NONE,
                self.ignore_index,
                np.zeros((), dtype),
                unreduced=True,
            )
        return [
            softmax_backward_data(
                grad_rows.reshape(log_probabilities.shape),
                log_probabilities,
                log_probabilities.ndim - 1,
                True,
            )
        ]


def _all_counted(targets: np.ndarray, classes: int, ignore_index: int) -> bool:
    """Whether every target is a class (in range) and none is `ignore_index`."""
    if targets.size == 0:
        return False
    low, high = np.minimum.reduce(targets), np.maximum.reduce(targets)
    if low < 0 or high >= classes:
        return False
    return not (low <= ignore_index <= high and (targets == ignore_index).any())


def batched_class_cross_entropy(
    level: int,
    x: Tensor,
    target: Tensor,
    reduction: int,
    ignore_index: int,
    class_max: Any,
) -> Any:
    """Each example's cross entropy against its class index, as one node (see the
    module's text); NotImplemented outside its case. `class_max`: log_softmax's
    maximum over the classes (batching_composites._class_max)."""
    x_data, target_data = x._data, target._data
    shape = x_data.shape
    if (
        reduction not in (Reduction.MEAN, Reduction.SUM)
        or x_data.dtype not in _FLOATS
        or target_data.dtype != _INT64
        or target_data.shape != shape[:-1]
        or not (x_data.ndim == 2 or (x_data.ndim == 3 and shape[1] == 1))
        or x_data.size == 0
        or target.requires_grad
    ):
        return NotImplemented
    edge = next_edge(x)
    if edge[0] is None:
        return NotImplemented  # nothing to record: the composite as usual
    dim = x_data.ndim - 1
    # _log_softmax's kernel (numpy_kernels.activation.softmax), its reductions
    # without np.max's and np.sum's Python wrappers.
    with np.errstate(all="ignore"):
        shifted = x_data - class_max(x_data, dim)
        sums = np.add.reduce(np.exp(shifted), axis=dim, keepdims=True)
        log_probabilities = shifted - np.log(sums)
    targets = target_data.reshape(-1)
    # nll_loss's rule: the unreduced kernel over the (b, C) rows (it raises for a
    # target out of range), each example's one loss its sum, and the count of its
    # targets not ignored (0 or 1) as the total weight.
    rows = log_probabilities.reshape(-1, shape[-1])
    counted = _all_counted(targets, shape[-1], ignore_index)
    if counted:
        # (the kernel's values when every target counts: each weight is 1, and
        # -picked * 1 is -picked; the total is 1, by which a division is exact)
        losses = np.negative(rows[np.arange(len(targets)), targets])
        total = np.ones(len(targets), rows.dtype)
    else:
        losses = _nll_unreduced(rows, targets, None, ignore_index)
        total = (targets != ignore_index).astype(losses.dtype)
    # (the sum of one term: 0 plus that term, -0.0 becoming 0.0, as numpy's sum)
    losses = np.add(losses, losses.dtype.type(0))
    mean = reduction == Reduction.MEAN
    if mean and not counted:
        with np.errstate(all="ignore"):
            losses = np.true_divide(losses, total)
    node = PerExampleClassCrossEntropyBackward(
        SavedVariable.input(x),
        SavedVariable.input(target),
        log_probabilities,
        total,
        mean,
        ignore_index,
        counted,
    )
    node.set_next_edges((edge,))
    result = Tensor(losses)
    set_history(result, node)
    return BatchedTensor(result, level)
