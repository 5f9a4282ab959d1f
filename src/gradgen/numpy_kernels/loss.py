"""Loss kernels (torch.nn.functional's losses) and their backwards."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..dtypes import Reduction
from ._half import cascade_sum, is_half, rounded
from ._common import (
    _check_floating,
    _same_dtype,
    _scalar_type,
    broadcast_shape_error,
    broadcastable,
)

__all__ = [
    "mse_loss",
    "mse_loss_backward",
    "nll_loss_forward",
    "nll_loss_backward",
    "nll_loss2d_forward",
    "nll_loss2d_backward",
    "binary_cross_entropy",
    "binary_cross_entropy_backward",
    "smooth_l1_loss",
    "smooth_l1_loss_backward",
    "huber_loss",
    "huber_loss_backward",
    "binary_cross_entropy_with_logits",
    "soft_margin_loss",
    "soft_margin_loss_backward",
    "multi_margin_loss",
    "multi_margin_loss_backward",
    "multilabel_margin_loss_forward",
    "multilabel_margin_loss_backward",
]


_BCE_EPSILON = float(np.float32(1e-12))


def _reduce_loss(loss: np.ndarray, reduction: int) -> np.ndarray:
    """PyTorch's apply_loss_reduction: mean, sum, or the loss unreduced (half precision
    summed in float32 and rounded once, as PyTorch's sum and mean)."""
    if reduction != Reduction.NONE and is_half(loss) and loss.size:
        total = np.sum(loss, dtype=np.float32)
        return rounded(
            total / loss.size if reduction == Reduction.MEAN else total, loss.dtype
        )
    if reduction == Reduction.MEAN:
        if loss.size == 0:
            return np.asarray(np.nan, loss.dtype)
        return np.asarray(np.sum(loss) / loss.size, loss.dtype)
    if reduction == Reduction.SUM:
        return np.asarray(np.sum(loss), loss.dtype)
    return loss


def mse_loss(self: np.ndarray, target: np.ndarray, reduction: int) -> np.ndarray:
    """(self - target) ** 2, reduced (inputs already promoted to one dtype)."""
    if not is_half(self):  # bfloat16 too, as PyTorch's
        _check_floating("mse_cpu", self)
    if reduction not in (Reduction.NONE, Reduction.MEAN, Reduction.SUM):
        raise RuntimeError(
            "reduction == Reduction::Mean || reduction == Reduction::Sum INTERNAL ASSERT "
            "FAILED"
        )
    difference = self - target
    return _reduce_loss(difference * difference, reduction)


def mse_loss_backward(
    grad_output: np.ndarray, self: np.ndarray, target: np.ndarray, reduction: int
) -> np.ndarray:
    """2 * (self - target) * grad_output, divided by self's numel for the mean (as
    PyTorch: self's own numel, even when target broadcasts it to more elements)."""
    if not is_half(self):
        _check_floating("mse_backward_cpu_out", self)
    norm = 2.0 / self.size if reduction == Reduction.MEAN and self.size else 2.0
    return (norm * (self - target) * grad_output).astype(self.dtype, copy=False)


def _check_nll_dtypes(
    kernel: str, self: np.ndarray, target: np.ndarray, weight: np.ndarray | None
) -> None:
    if target.dtype != np.int64:
        raise RuntimeError(
            f"expected target dtype to be Long or Byte, but got {_scalar_type(target)}"
        )
    if not is_half(self):  # bfloat16 too, as PyTorch's
        _check_floating(kernel, self)
    if weight is not None and weight.dtype != self.dtype:
        raise RuntimeError(
            f"expected scalar type {_scalar_type(self)} but found {_scalar_type(weight)}"
        )


def _nll_rows(
    rows: np.ndarray, targets: np.ndarray, weight: np.ndarray | None, ignore_index: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For (N, C) rows and N targets: the ignored mask, the targets made safe to index
    with, and each row's weight (0 where ignored); out-of-range targets raise."""
    ignored = targets == ignore_index
    n_classes = rows.shape[-1]
    bad = ~ignored & ((targets < 0) | (targets >= n_classes))
    if bad.any():
        raise IndexError(f"Target {targets[bad][0]} is out of bounds.")
    safe = np.where(ignored, 0, targets)
    if weight is None:
        weights = np.ones(targets.shape, rows.dtype)
    else:
        weights = weight[safe]
    return ignored, safe, np.where(ignored, 0, weights).astype(rows.dtype, copy=False)


def _nll_reduced(
    rows: np.ndarray,
    targets: np.ndarray,
    weight: np.ndarray | None,
    reduction: int,
    ignore_index: int,
) -> tuple[np.ndarray, np.ndarray]:
    """The reduced loss and the total weight of (N, C) rows."""
    dtype = rows.dtype
    if targets.size == 0:
        output = np.nan if reduction == Reduction.MEAN else 0.0
        return np.asarray(output, dtype), np.asarray(0.0, dtype)
    ignored, safe, weights = _nll_rows(rows, targets, weight, ignore_index)
    picked = rows[np.arange(len(safe)), safe]
    if is_half(rows):  # PyTorch's cascade of half-precision partial sums
        loss = cascade_sum(-(picked * weights), ~ignored)
        total_weight = (
            np.asarray(np.count_nonzero(~ignored)).astype(dtype)
            if weight is None
            else cascade_sum(weights, ~ignored)
        )
    else:
        loss = -np.sum(np.where(ignored, 0, picked * weights))
        total_weight = np.sum(weights)
    if reduction == Reduction.MEAN:
        with np.errstate(divide="ignore", invalid="ignore"):
            loss = loss / total_weight
    return np.asarray(loss, dtype), np.asarray(total_weight, dtype)


def _nll_unreduced(
    rows: np.ndarray, targets: np.ndarray, weight: np.ndarray | None, ignore_index: int
) -> np.ndarray:
    """-weight[t] * row[t] per row, 0 for ignored rows."""
    ignored, safe, weights = _nll_rows(rows, targets, weight, ignore_index)
    picked = rows[np.arange(len(safe)), safe]
    return np.where(ignored, 0, -picked * weights).astype(rows.dtype, copy=False)


def nll_loss_forward(
    self: np.ndarray,
    target: np.ndarray,
    weight: np.ndarray | None,
    reduction: int,
    ignore_index: int,
) -> tuple[np.ndarray, np.ndarray]:
    """The negative log likelihood of 1-d or (N, C) log-probabilities, and the total
    weight of the targets counted (PyTorch's nll_loss_forward)."""
    _check_nll_shapes(self, target, weight)
    _check_nll_dtypes("nll_loss_out_frame", self, target, weight)
    rows, targets = (
        (self[None], target.reshape(1)) if self.ndim == 1 else (self, target)
    )
    if reduction == Reduction.NONE and self.ndim == 2:
        return _nll_unreduced(rows, targets, weight, ignore_index), np.zeros(
            (), self.dtype
        )
    return _nll_reduced(rows, targets, weight, reduction, ignore_index)


def _check_nll_shapes(
    self: np.ndarray, target: np.ndarray, weight: np.ndarray | None
) -> None:
    if not 0 < self.ndim <= 2:
        raise RuntimeError("input tensor should be 1D or 2D")
    if target.ndim > 1:
        raise RuntimeError(
            "0D or 1D target tensor expected, multi-target not supported"
        )
    if self.ndim == 1 and target.ndim == 1 and target.shape[0] != 1:
        raise ValueError(
            "For 1D input, 1D target must have size 1, but got target size: "
            f"{target.shape[0]}"
        )
    if self.ndim == 2:
        if target.ndim == 0:
            raise IndexError("Dimension specified as 0 but tensor has no dimensions")
        if self.shape[0] != target.shape[0]:
            raise RuntimeError(
                f"size mismatch (got input: {list(self.shape)}, target: "
                f"{list(target.shape)})"
            )
    n_classes = self.shape[-1]
    if weight is not None and (weight.ndim != 1 or weight.size != n_classes):
        raise RuntimeError(
            f"weight tensor should be defined either for all {n_classes} classes or no "
            f"classes but got weight tensor of shape: {list(weight.shape)}"
        )


def nll_loss_backward(
    grad_output: np.ndarray,
    self: np.ndarray,
    target: np.ndarray,
    weight: np.ndarray | None,
    reduction: int,
    ignore_index: int,
    total_weight: np.ndarray,
) -> np.ndarray:
    """Zeros of self's shape with -weight[t] * grad (over the total weight for the
    mean) at each counted target."""
    _check_nll_shapes(self, target, weight)
    _check_nll_dtypes("nll_loss_backward_out_frame", self, target, weight)
    rows, targets = (
        (self[None], target.reshape(1)) if self.ndim == 1 else (self, target)
    )
    grad_rows = _nll_grad_rows(
        grad_output,
        rows,
        targets,
        weight,
        reduction,
        ignore_index,
        total_weight,
        unreduced=reduction == Reduction.NONE and self.ndim == 2,
    )
    return grad_rows.reshape(self.shape)


def _nll_grad_rows(
    grad_output: np.ndarray,
    rows: np.ndarray,
    targets: np.ndarray,
    weight: np.ndarray | None,
    reduction: int,
    ignore_index: int,
    total_weight: np.ndarray,
    unreduced: bool,
) -> np.ndarray:
    """The gradient of the loss of (N, C) rows: -weight[t] * grad at each counted
    target (grad over the total weight for the mean), zeros elsewhere."""
    if total_weight.size != 1:
        raise RuntimeError(
            "expected total_weight to be a  single element tensor, got: "
            f"{list(total_weight.shape)} ({total_weight.size} elements)"
        )
    if unreduced:
        if grad_output.size != len(targets):
            raise RuntimeError(
                f"Expected a tensor of {len(targets)} elements for grad_output, but got: "
                f"{list(grad_output.shape)}"
            )
    elif grad_output.size != 1:
        raise RuntimeError(
            "Expected a single element grad_output tensor, but got: "
            f"{list(grad_output.shape)}"
        )
    grad_rows = np.zeros(rows.shape, rows.dtype)
    if targets.size == 0:
        return grad_rows
    ignored, safe, weights = _nll_rows(rows, targets, weight, ignore_index)
    kept = ~ignored
    with np.errstate(divide="ignore", invalid="ignore"):
        if unreduced:
            values = -weights[kept] * grad_output.reshape(-1)[kept]
        else:
            scale = grad_output.reshape(())
            if reduction == Reduction.MEAN:
                scale = scale / total_weight.reshape(())
            values = weights[kept] * -scale
    grad_rows[np.arange(len(safe))[kept], safe[kept]] = values
    return grad_rows


def _check_nll2d(
    self: np.ndarray, target: np.ndarray, weight: np.ndarray | None
) -> None:
    if target.ndim != 3:
        raise RuntimeError(
            "only batches of spatial targets supported (3D tensors) but got targets of "
            f"dimension: {target.ndim}"
        )
    if self.ndim != 4:
        raise RuntimeError(
            "only batches of spatial inputs supported (4D tensors), but got input of "
            f"dimension: {self.ndim}"
        )
    if weight is not None and weight.size != self.shape[1]:
        raise RuntimeError(
            "weight tensor should be defined either for all or no classes"
        )
    if (self.shape[0], self.shape[2], self.shape[3]) != target.shape:
        raise RuntimeError(
            f"size mismatch (got input: {list(self.shape)} , target: {list(target.shape)}"
        )


def _nll2d_rows(self: np.ndarray, target: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(N, C, H, W) as (N*H*W, C) rows and (N, H, W) targets as N*H*W targets."""
    return np.moveaxis(self, 1, -1).reshape(-1, self.shape[1]), target.reshape(-1)


def nll_loss2d_forward(
    self: np.ndarray,
    target: np.ndarray,
    weight: np.ndarray | None,
    reduction: int,
    ignore_index: int,
) -> tuple[np.ndarray, np.ndarray]:
    """nll_loss_forward for (N, C, H, W) inputs and (N, H, W) targets."""
    _check_nll2d(self, target, weight)
    _check_nll_dtypes("nll_loss2d_forward_out_frame", self, target, weight)
    rows, targets = _nll2d_rows(self, target)
    if reduction == Reduction.NONE:
        loss = _nll_unreduced(rows, targets, weight, ignore_index)
        return loss.reshape(target.shape), np.zeros((), self.dtype)
    return _nll_reduced(rows, targets, weight, reduction, ignore_index)


def nll_loss2d_backward(
    grad_output: np.ndarray,
    self: np.ndarray,
    target: np.ndarray,
    weight: np.ndarray | None,
    reduction: int,
    ignore_index: int,
    total_weight: np.ndarray,
) -> np.ndarray:
    _check_nll2d(self, target, weight)
    _check_nll_dtypes("nll_loss2d_backward_out_frame", self, target, weight)
    rows, targets = _nll2d_rows(self, target)
    grad_rows = _nll_grad_rows(
        grad_output,
        rows,
        targets,
        weight,
        reduction,
        ignore_index,
        total_weight,
        unreduced=reduction == Reduction.NONE,
    )
    n, c, h, w = self.shape
    return np.moveaxis(grad_rows.reshape(n, h, w, c), -1, 1).copy()


def _check_bce(
    self: np.ndarray, target: np.ndarray, weight: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray | None]:
    """PyTorch's checks of binary_cross_entropy's inputs; target and weight broadcast
    to self's shape (weight in self's dtype)."""
    _check_floating("binary_cross_entropy", self)
    if target.dtype != self.dtype:
        raise RuntimeError(
            f"Found dtype {_scalar_type(target)} but expected {_scalar_type(self)}"
        )
    try:
        target = np.broadcast_to(target, self.shape)
    except ValueError:
        raise broadcast_shape_error(self.shape, target.shape) from None
    if weight is not None:
        shape = (
            np.broadcast_shapes(self.shape, weight.shape)
            if broadcastable(self.shape, weight.shape)
            else None
        )
        if shape is None:
            raise broadcast_shape_error(self.shape, weight.shape)
        if shape != self.shape:
            raise RuntimeError(
                f"output with shape {list(self.shape)} doesn't match the broadcast shape "
                f"{list(shape)}"
            )
        weight = np.broadcast_to(weight.astype(self.dtype, copy=False), self.shape)
    return target, weight


def binary_cross_entropy(
    self: np.ndarray, target: np.ndarray, weight: np.ndarray | None, reduction: int
) -> np.ndarray:
    """-weight * (target * log(self) + (1 - target) * log(1 - self)), each logarithm
    clamped at -100 as PyTorch does, reduced."""
    target, weight = _check_bce(self, target, weight)
    if not np.all((self >= 0) & (self <= 1)):
        raise RuntimeError("all elements of input should be between 0 and 1")
    if not np.all((target >= 0) & (target <= 1)):
        raise RuntimeError("all elements of target should be between 0 and 1")
    with np.errstate(divide="ignore"):
        log_self = np.maximum(np.log(self), -100)
        log_one_minus_self = np.maximum(np.log1p(-self), -100)
    loss = (target - 1) * log_one_minus_self - target * log_self
    if weight is not None:
        loss = loss * weight
    return _reduce_loss(loss.astype(self.dtype, copy=False), reduction)


def binary_cross_entropy_backward(
    grad_output: np.ndarray,
    self: np.ndarray,
    target: np.ndarray,
    weight: np.ndarray | None,
    reduction: int,
) -> np.ndarray:
    """grad * (self - target) / max((1 - self) * self, 1e-12), times weight, divided by
    the number of elements for the mean."""
    target, weight = _check_bce(self, target, weight)
    # PyTorch's EPSILON is the float 1e-12, also in double kernels.
    grad_input = (
        grad_output * (self - target) / np.maximum((1 - self) * self, _BCE_EPSILON)
    )
    if weight is not None:
        grad_input = grad_input * weight
    if reduction == Reduction.MEAN and self.size:
        grad_input = grad_input / self.size
    return np.broadcast_to(grad_input, self.shape).astype(self.dtype)


def _loss_norm(self: np.ndarray, reduction: int) -> float:
    """The mean's 1 / numel (of self, as PyTorch), or 1."""
    if reduction == Reduction.MEAN:
        return 1.0 / self.size if self.size else math.nan
    return 1.0


def smooth_l1_loss(
    self: np.ndarray, target: np.ndarray, reduction: int, beta: float
) -> np.ndarray:
    """0.5 * d^2 / beta where d = |x - y| < beta, else d - 0.5 * beta; reduced."""
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    _check_floating("smooth_l1_cpu", self)
    z = np.abs(self - target)
    loss = np.where(z < beta, 0.5 * z * z / (beta if beta else 1.0), z - 0.5 * beta)
    return _reduce_loss(_same_dtype(loss, self), reduction)


def smooth_l1_loss_backward(
    grad_output: np.ndarray,
    self: np.ndarray,
    target: np.ndarray,
    reduction: int,
    beta: float,
) -> np.ndarray:
    """norm * grad * clamp((x - y) / beta, -1, 1) (norm = 1 / numel for the mean)."""
    _check_floating("smooth_l1_backward_cpu_out", self)
    norm = _loss_norm(self, reduction)
    x = self - target
    inside = norm * x * grad_output / (beta if beta else 1.0)
    grad = np.where(
        x <= -beta, -norm * grad_output, np.where(x >= beta, norm * grad_output, inside)
    )
    return _same_dtype(grad, self)


def _check_reduction(reduction: int) -> None:
    if reduction not in (Reduction.NONE, Reduction.MEAN, Reduction.SUM):
        raise RuntimeError(
            "reduction == Reduction::Mean || reduction == Reduction::Sum INTERNAL ASSERT "
            "FAILED"
        )


def huber_loss(
    self: np.ndarray, target: np.ndarray, reduction: int, delta: float
) -> np.ndarray:
    """0.5 * d^2 where d = |x - y| < delta, else delta * (d - 0.5 * delta); reduced."""
    if not delta > 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    _check_floating("huber_cpu", self)
    _check_reduction(reduction)
    if not broadcastable(self.shape, target.shape):
        raise broadcast_shape_error(self.shape, target.shape)
    z = np.abs(self - target)
    loss = np.where(z < delta, 0.5 * z * z, delta * (z - 0.5 * delta))
    return _reduce_loss(_same_dtype(loss, self), reduction)


def huber_loss_backward(
    grad_output: np.ndarray,
    self: np.ndarray,
    target: np.ndarray,
    reduction: int,
    delta: float,
) -> np.ndarray:
    """norm * grad * clamp(x - y, -delta, delta) (norm = 1 / numel for the mean)."""
    _check_floating("huber_backward_cpu_out", self)
    for other in (target, grad_output):
        if not broadcastable(self.shape, other.shape):
            raise broadcast_shape_error(self.shape, other.shape)
    norm = _loss_norm(self, reduction)
    x = self - target
    grad = np.where(
        x < -delta,
        -norm * grad_output * delta,
        np.where(x > delta, norm * grad_output * delta, norm * x * grad_output),
    )
    return _same_dtype(grad, self)


def _check_in_place_broadcast(output: tuple[int, ...], other: tuple[int, ...]) -> None:
    """PyTorch's error for an in-place operation whose operand broadcasts its output."""
    if not broadcastable(output, other):
        raise broadcast_shape_error(output, other)
    shape = np.broadcast_shapes(output, other)
    if shape != output:
        raise RuntimeError(
            f"output with shape {list(output)} doesn't match the broadcast shape "
            f"{list(shape)}"
        )


def binary_cross_entropy_with_logits(
    self: np.ndarray,
    target: np.ndarray,
    weight: np.ndarray | None,
    pos_weight: np.ndarray | None,
    reduction: int,
) -> np.ndarray:
    """(1 - y) * x - log_sigmoid(x) * (1 + (pos_weight - 1) * y), times weight, reduced.

    PyTorch computes it in place in 1 - target, whence the result's shape and dtype
    (target's) and its broadcasting and casting errors."""
    _check_floating("log_sigmoid_cpu", self)
    if target.dtype.kind == "b":
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use "
            "the `^` or `logical_xor()` operator instead."
        )
    if target.dtype.kind != "f":
        raise RuntimeError(
            f"result type {_scalar_type(self)} can't be cast to the desired output type "
            f"{_scalar_type(target)}"
        )
    dtype = target.dtype
    log_sigmoid_input = np.minimum(self, 0) - np.log1p(np.exp(-np.abs(self)))
    if pos_weight is not None:
        log_weight = (pos_weight - 1) * target + 1
        _check_in_place_broadcast(self.shape, log_weight.shape)
        log_sigmoid_input = log_sigmoid_input * log_weight
    _check_in_place_broadcast(target.shape, self.shape)
    loss = (1 - target) * self - log_sigmoid_input
    if weight is not None:
        _check_in_place_broadcast(target.shape, weight.shape)
        loss = loss * weight
    return _reduce_loss(np.asarray(loss).astype(dtype, copy=False), reduction)


def soft_margin_loss(
    self: np.ndarray, target: np.ndarray, reduction: int
) -> np.ndarray:
    """log(1 + exp(-target * self)), reduced."""
    _check_floating("soft_margin_loss", self)
    return _reduce_loss(_same_dtype(np.log1p(np.exp(-target * self)), self), reduction)


def soft_margin_loss_backward(
    grad_output: np.ndarray, self: np.ndarray, target: np.ndarray, reduction: int
) -> np.ndarray:
    """-target * exp(-target * x) / (1 + exp(-target * x)) * grad_output, over the
    numel for the mean."""
    _check_floating("soft_margin_loss_backward", self)
    norm = 1.0 / self.size if reduction == Reduction.MEAN and self.size else 1.0
    z = np.exp(-target * self)
    return _same_dtype(-norm * target * z / (1.0 + z) * grad_output, self)


def _margin_rows(
    self: np.ndarray, target: np.ndarray, weight: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """self as rows (N, C) and target as (N,), with multi_margin_loss's checks."""
    rows = self.reshape(-1, self.shape[-1]) if self.ndim else self.reshape(1, 1)
    labels = target.reshape(-1)
    if self.ndim > 2 or labels.shape[0] != rows.shape[0]:
        raise RuntimeError(
            "multi_margin_loss: target tensor should be 1-D with size equal to the "
            "number of input samples (batch size). Expected target size "
            f"[{rows.shape[0]}], but got {list(target.shape)}. Input has shape "
            f"{list(self.shape)}."
        )
    if labels.size and ((labels < 0) | (labels >= rows.shape[1])).any():
        raise RuntimeError("target out of range")
    if weight is not None and weight.size != rows.shape[1]:
        raise RuntimeError(
            f"inconsistent weight size, expected {rows.shape[1]} but got "
            f"{list(weight.shape)}"
        )
    return rows, labels


def _margin_violations(
    rows: np.ndarray, labels: np.ndarray, margin: Any
) -> tuple[np.ndarray, np.ndarray]:
    """margin - x[y] + x[j] per class j, and where it is positive (never at j == y)."""
    picked = np.take_along_axis(rows, labels[:, None], 1)
    z = margin - picked + rows
    others = np.arange(rows.shape[1])[None, :] != labels[:, None]
    return z, (z > 0) & others


def multi_margin_loss(
    self: np.ndarray,
    target: np.ndarray,
    p: Any,
    margin: Any,
    weight: np.ndarray | None,
    reduction: int,
) -> np.ndarray:
    """sum over j != y of w[y] * max(0, margin - x[y] + x[j]) ** p / C, per sample,
    reduced (p is 1 or 2)."""
    _check_floating("multi_margin_loss_cpu_kernel", self)
    if p not in (1, 2):
        raise RuntimeError("only p == 1 and p == 2 supported")
    rows, labels = _margin_rows(self, target, weight)
    z, violated = _margin_violations(rows, labels, margin)
    terms = np.where(violated, z if p == 1 else z * z, 0)
    if weight is not None:
        terms = terms * weight[labels][:, None]
    per_sample = terms.sum(1) / rows.shape[1]
    if self.ndim < 2 and reduction == Reduction.NONE:
        per_sample = per_sample.reshape(())
    return _reduce_loss(_same_dtype(per_sample, self), reduction)


def multi_margin_loss_backward(
    grad_output: np.ndarray,
    self: np.ndarray,
    target: np.ndarray,
    p: Any,
    margin: Any,
    weight: np.ndarray | None,
    reduction: int,
) -> np.ndarray:
    """The gradient of multi_margin_loss: for each violated j, h = g (p == 1) or
    2 g z (p == 2), times w[y]; x[j] gets h and x[y] loses it (g = 1/C, over N more
    for the mean), all times grad_output (per sample when unreduced)."""
    _check_floating("multi_margin_loss_backward_cpu_kernel", self)
    if p not in (1, 2):
        raise RuntimeError("only p == 1 and p == 2 supported")
    rows, labels = _margin_rows(self, target, weight)
    z, violated = _margin_violations(rows, labels, margin)
    g = 1.0 / rows.shape[1]
    if reduction == Reduction.MEAN:
        g /= rows.shape[0]
    h = np.where(violated, g if p == 1 else 2 * g * z, 0)
    if weight is not None:
        h = h * weight[labels][:, None]
    grad = h.copy()
    np.put_along_axis(grad, labels[:, None], -h.sum(1, keepdims=True), 1)
    scale = grad_output.reshape(-1, 1) if reduction == Reduction.NONE else grad_output
    return _same_dtype((grad * scale).reshape(self.shape), self)


def _multilabel_rows(
    self: np.ndarray, target: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """self and target as rows (N, C), with PyTorch's checks; the targets of a row
    are its entries before the first -1."""
    if target.shape != self.shape or self.ndim > 2:
        raise RuntimeError(
            f"inconsistent target size: {list(target.shape)} for input of size: "
            f"{list(self.shape)}"
        )
    rows = self.reshape(-1, self.shape[-1]) if self.ndim else self.reshape(1, 1)
    labels = target.reshape(rows.shape)
    if labels.size and ((labels < -1) | (labels >= rows.shape[1])).any():
        raise RuntimeError("argument #2 'target' is out of range")
    return rows, labels


def _multilabel_is_target(labels: np.ndarray) -> np.ndarray:
    """1 where a class is one of its row's targets (entries before the first -1)."""
    valid = np.cumprod(labels >= 0, axis=1).astype(bool)
    is_target = np.zeros(labels.shape, bool)
    row_index = np.nonzero(valid)[0]
    is_target[row_index, labels[valid]] = True
    return is_target


def _multilabel_pairs(rows: np.ndarray, is_target: np.ndarray) -> np.ndarray:
    """(N, C, C): 1 - x[j] + x[k] where j is a target, k is not, and it is positive."""
    z = 1 - rows[:, :, None] + rows[:, None, :]
    pairs = is_target[:, :, None] & ~is_target[:, None, :]
    return np.where(pairs & (z > 0), z, 0)


def multilabel_margin_loss_forward(
    self: np.ndarray, target: np.ndarray, reduction: int
) -> tuple[np.ndarray, np.ndarray]:
    """(loss, is_target): sum over target j and non-target k of max(0, 1 - x[j] +
    x[k]) / C per sample, reduced; is_target in self's dtype."""
    _check_floating("multilabel_margin_loss_forward_out_frame", self)
    rows, labels = _multilabel_rows(self, target)
    is_target = _multilabel_is_target(labels)
    per_sample = _multilabel_pairs(rows, is_target).sum((1, 2)) / rows.shape[1]
    if self.ndim < 2 and reduction == Reduction.NONE:
        per_sample = per_sample.reshape(())
    loss = _reduce_loss(_same_dtype(per_sample, self), reduction)
    return loss, _same_dtype(is_target.reshape(self.shape), self)


def multilabel_margin_loss_backward(
    grad_output: np.ndarray,
    self: np.ndarray,
    target: np.ndarray,
    reduction: int,
    is_target: np.ndarray,
) -> np.ndarray:
    """For each violated (target j, non-target k) pair, x[j] loses g and x[k] gains
    it (g = 1/C, over N more for the mean), times grad_output."""
    _check_floating("multilabel_margin_loss_backward_out_frame", self)
    rows, _ = _multilabel_rows(self, target)
    targets = is_target.reshape(rows.shape) != 0
    active = _multilabel_pairs(rows, targets) > 0
    g = 1.0 / rows.shape[1]
    if reduction == Reduction.MEAN:
        g /= rows.shape[0]
    grad = g * (active.sum(1) - active.sum(2))
    scale = grad_output.reshape(-1, 1) if reduction == Reduction.NONE else grad_output
    return _same_dtype((grad * scale).reshape(self.shape), self)
