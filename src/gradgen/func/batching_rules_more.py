"""Batching rules of the losses over rows of classes (multi_margin, multilabel_margin,
nll_loss2d), the linear-algebra operators whose kernels want every argument with
the same batch dims, and a few one-off shapes (renorm, channel_shuffle,
affine_grid_generator, rms and layer norm with batched parameters).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..dispatch import OperatorHandle
from ..dtypes import get_default_dtype
from ..factories import zeros_like
from ..generated import ops
from ..tensor import Tensor
from .batching import (
    HANDLES,
    Rule,
    batch_size,
    broadcast_value,
    call_plain,
    inplace_error,
    is_batched,
    mutates_self,
    wrap,
)
from .batching_schema import arguments, pad, same_kind, wrap_dim

# -- every argument over the batch ------------------------------------------------------


def _broadcast_all(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    """Operators on the last dims whose kernels want the same batch dims on every
    Tensor argument (lu_unpack, lstsq, cdist): all repeated over the
    batch."""
    values = [broadcast_value(a, level) if isinstance(a, Tensor) else a for a in args]
    return wrap(_per_example(handle.call(*values), level), level)


def _per_example(result: Any, level: int) -> Any:
    """Results with the batch in front; a placeholder the kernel leaves empty (no
    batch: lstsq's residuals for some drivers) is repeated as the loop's would be."""
    if isinstance(result, (tuple, list)):
        return same_kind(result, [_per_example(r, level) for r in result])
    if isinstance(result, Tensor) and (
        result.dim() == 0 or result.shape[0] != batch_size(level)
    ):
        return broadcast_value(result, level)
    return result


def _scan(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    """logcumsumexp: along the shifted dim; a 0-d example is its own result."""
    self, dim = args[0], args[1]
    value = broadcast_value(self, level)
    if self.dim() == 0:
        return wrap(HANDLES["clone"].call(value, None), level)
    return wrap(handle.call(value, wrap_dim(dim, self.dim()) + 1), level)


def _renorm(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    """renorm: every (example, index along dim) pair is one slice, so the batch dim
    is merged into `dim` for one call."""
    self, p, dim, maxnorm = args
    if mutates_self(handle) and not is_batched(self, level):
        inplace_error(self, level)
    rank, size = self.dim(), batch_size(level)
    if rank == 0:
        return NotImplemented
    d = wrap_dim(dim, rank)
    order = list(range(1, d + 1)) + [0] + list(range(d + 1, rank + 1))
    moved = HANDLES["permute"].call(broadcast_value(self, level), order)
    shape = list(moved.shape)
    merged = ops.reshape(moved, shape[:d] + [size * shape[d + 1]] + shape[d + 2 :])
    out = HANDLES["renorm"].call(merged, p, d, maxnorm)
    back = [order.index(k) for k in range(rank + 1)]
    result = HANDLES["permute"].call(ops.reshape(out, shape), back)
    if mutates_self(handle):
        HANDLES["copy_"].call(self._value, result, False)
        return self
    return wrap(result, level)


def _channel_shuffle(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    """channel_shuffle (N, C, *): the batch folded into N."""
    self, groups = args
    if self.dim() < 3:
        return NotImplemented
    value = broadcast_value(self, level)
    shape = list(value.shape)
    out = handle.call(ops.reshape(value, [shape[0] * shape[1]] + shape[2:]), groups)
    return wrap(ops.reshape(out, shape[:2] + list(out.shape)[1:]), level)


def _affine_grid(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    """affine_grid_generator: theta (N, ...) and size [N, ...] with the batch in N."""
    theta, size, align_corners = args
    b = batch_size(level)
    value = broadcast_value(theta, level)
    flat = ops.reshape(value, [b * theta.shape[0]] + list(theta.shape[1:]))
    out = handle.call(flat, [size[0] * b, *size[1:]], align_corners)
    return wrap(ops.reshape(out, [b, size[0]] + list(out.shape)[1:]), level)


# -- norms with batched parameters ------------------------------------------------------


def _fused_rms_norm(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    """_fused_rms_norm: normalise the batch as it is; a batched weight multiplies
    after."""
    input, shape, weight, eps = args
    value = broadcast_value(input, level)
    if not is_batched(weight, level):
        return wrap(handle.call(value, shape, weight, eps), level)
    out, rstd = handle.call(value, shape, None, eps)
    out = HANDLES["mul.Tensor"].call(out, pad(weight._value, weight.dim(), input.dim()))
    return wrap((out, rstd), level)


def _layer_norm_backward(
    handle: OperatorHandle, level: int, args: tuple[Any, ...]
) -> Any:
    """native_layer_norm_backward: the input's gradient by the kernel (with the
    weight folded into the incoming gradient), the weight's and bias's summed per
    example over the leading dims."""
    grad, input, shape, mean, rstd, weight, bias, mask = args
    g, x = broadcast_value(grad, level), broadcast_value(input, level)
    m, r = broadcast_value(mean, level), broadcast_value(rstd, level)
    rank = input.dim()
    lead = list(range(1, rank - len(shape) + 1))
    scaled = g
    if weight is not None:
        scaled = HANDLES["mul.Tensor"].call(
            g, pad(broadcast_value(weight, level), weight.dim(), rank)
        )
    grad_input = None
    if mask[0]:
        grad_input = handle.call(
            scaled, x, shape, m, r, None, None, [True, False, False]
        )[0]
    grad_weight = grad_bias = None
    if mask[1] and weight is not None:
        normalized = HANDLES["mul.Tensor"].call(HANDLES["sub.Tensor"].call(x, m, 1), r)
        product = HANDLES["mul.Tensor"].call(g, normalized)
        grad_weight = (
            HANDLES["sum.dim_IntList"].call(product, lead, False, None)
            if lead
            else product
        )
    if mask[2] and bias is not None:
        grad_bias = HANDLES["sum.dim_IntList"].call(g, lead, False, None) if lead else g
    return wrap((grad_input, grad_weight, grad_bias), level)


# -- losses over rows of classes --------------------------------------------------------


def _row_values(level: int, self: Tensor, other: Tensor) -> tuple[Tensor, Tensor]:
    """`self` (rows, C) or (C,) of each example as one (B * rows, C) matrix, and a
    per-row argument (targets) likewise."""
    size = batch_size(level)
    rows = 1 if self.dim() == 1 else self.shape[0]
    scores = ops.reshape(broadcast_value(self, level), [size * rows, self.shape[-1]])
    tail = list(other.shape)[self.dim() - 1 :]
    return scores, ops.reshape(broadcast_value(other, level), [size * rows] + tail)


def _row_loss(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    """multi_margin_loss / multilabel_margin_loss (and backwards): the unreduced loss
    of every example's rows in one call, reduced per example."""
    schema = arguments(handle.schema)
    named = dict(zip((name for _, name in schema), args))
    if is_batched(named.get("weight"), level):
        return NotImplemented
    self, reduction = named["self"], named["reduction"]
    size = batch_size(level)
    rows = 1 if self.dim() == 1 else self.shape[0]
    scores, targets = _row_values(level, self, named["target"])
    new_args = []
    for name, arg in named.items():
        if name == "self":
            arg = scores
        elif name == "target":
            arg = targets
        elif name == "is_target":
            arg = _row_values(level, self, arg)[1]
        elif name == "grad_output":
            arg = _row_grad(level, arg, reduction, rows)
        elif name == "reduction":
            arg = 0
        new_args.append(arg)
    result = handle.call(*new_args)
    if "grad_output" in named:
        return wrap(ops.reshape(result, [size] + list(self.shape)), level)
    is_target = None
    if isinstance(result, (tuple, list)):
        result, is_target = result
        is_target = ops.reshape(is_target, [size] + list(self.shape))
    losses = ops.reshape(result, [size, rows])
    if reduction == 0:
        losses = losses if self.dim() > 1 else ops.reshape(losses, [size])
    else:
        target = "sum.dim_IntList" if reduction == 2 else "mean.dim"
        losses = HANDLES[target].call(losses, [1], False, None)
    return wrap(losses if is_target is None else (losses, is_target), level)


def _row_grad(level: int, grad: Tensor, reduction: int, rows: int) -> Tensor:
    """A loss's incoming gradient as one per row: a reduced loss's spread over its
    example's rows (divided by them for the mean)."""
    size = batch_size(level)
    value = broadcast_value(grad, level)
    if reduction == 0:
        return ops.reshape(value, [size * rows])
    spread = HANDLES["expand"].call(ops.reshape(value, [size, 1]), [size, rows], False)
    if reduction == 1:
        spread = HANDLES["div.Scalar"].call(spread, rows)
    return ops.reshape(spread, [size * rows])


def _rows_2d(self: Tensor) -> Tensor:
    """(N, C, *S) as (N * prod(S), C): one row per position."""
    channels = self.shape[1]
    order = [0] + list(range(2, self.dim())) + [1]
    return ops.reshape(HANDLES["permute"].call(self, order), [-1, channels])


def _nll_loss2d(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    """nll_loss2d as nll_loss over one row per position (whose rule reduces per
    example)."""
    self, target, weight, reduction, ignore_index = args
    rows, targets = _rows_2d(self), ops.reshape(target, [-1])
    out, total = HANDLES["nll_loss_forward"].call(
        rows, targets, weight, reduction, ignore_index
    )
    if reduction == 0:
        out = ops.reshape(out, list(target.shape))
    return out, total


def _nll_loss2d_backward(
    handle: OperatorHandle, level: int, args: tuple[Any, ...]
) -> Any:
    grad, self, target, weight, reduction, ignore_index, total = args
    if reduction == 0:
        grad = ops.reshape(grad, [-1])
    grads = HANDLES["nll_loss_backward"].call(
        grad,
        _rows_2d(self),
        ops.reshape(target, [-1]),
        weight,
        reduction,
        ignore_index,
        total,
    )
    moved = [self.shape[0]] + list(self.shape[2:]) + [self.shape[1]]
    order = [0, self.dim() - 1] + list(range(1, self.dim() - 1))
    return HANDLES["permute"].call(ops.reshape(grads, moved), order)


# -- fused RNN cells: the batch folded into the rows -------------------------------------


def _rows_of(value: Tensor) -> Tensor:
    shape = list(value.shape)
    return ops.reshape(value, [shape[0] * shape[1]] + shape[2:])


def _split_rows(value: Tensor, size: int) -> Tensor:
    shape = list(value.shape)
    return ops.reshape(value, [size, shape[0] // size] + shape[1:])


def _fused_cell(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    """_thnn_fused_lstm_cell / _thnn_fused_gru_cell: rows (B * N, ...); batched biases
    are added to the gates first (the cells add them to the gates too)."""
    input_gates, hidden_gates, state = args[0], args[1], args[2]
    input_bias = args[3] if len(args) > 3 else None
    hidden_bias = args[4] if len(args) > 4 else None
    if is_batched(input_bias, level) or is_batched(hidden_bias, level):
        if input_bias is not None:
            input_gates = HANDLES["add.Tensor"].call(input_gates, input_bias, 1)
        if hidden_bias is not None:
            hidden_gates = HANDLES["add.Tensor"].call(hidden_gates, hidden_bias, 1)
        return handle.call(input_gates, hidden_gates, state, None, None)
    size = batch_size(level)
    rows = [_rows_of(broadcast_value(t, level)) for t in (input_gates, hidden_gates)]
    state_rows = _rows_of(broadcast_value(state, level))
    result = handle.call(*rows, state_rows, input_bias, hidden_bias)
    return wrap(same_kind(result, [_split_rows(r, size) for r in result]), level)


def _fused_cell_backward(
    handle: OperatorHandle, level: int, args: tuple[Any, ...]
) -> Any:
    """The fused cells' backwards: rows (B * N, ...); the bias gradients (sums over
    the rows) summed per example instead."""
    size = batch_size(level)
    values = [
        _rows_of(broadcast_value(a, level)) if isinstance(a, Tensor) else a
        for a in args
    ]
    result = list(handle.call(*values))
    biases = 1 if handle.name.startswith("_thnn_fused_lstm") else 2
    grads = [_split_rows(r, size) for r in result[:-biases]]
    has_bias = args[-1]
    for k in range(biases):
        gates = grads[k]
        if has_bias:
            bias = HANDLES["sum.dim_IntList"].call(gates, [1], False, None)
        else:
            bias = ops.reshape(gates[:, 0] * 0.0, [size, gates.shape[-1]])
        grads.append(bias)
    return wrap(tuple(grads), level)


# -- scalars against a batched sequence -------------------------------------------------


def _scalar_search(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    """searchsorted.Scalar / bucketize.Scalar with a batched (1-d) sequence: the
    Tensor overload with the scalar as a one-element row per example."""
    bucketize = handle.name.startswith("bucketize")
    sequence, value = (args[1], args[0]) if bucketize else (args[0], args[1])
    if sequence.dim() != 1:
        return NotImplemented
    size = batch_size(level)
    rows = broadcast_value(sequence, level)
    values = Tensor(np.full((size, 1), value)).to(rows.dtype)
    if bucketize:
        out_int32 = args[2] if len(args) > 2 else False
        right = args[3] if len(args) > 3 else False
        found = HANDLES["searchsorted.Tensor"].call(
            rows, values, out_int32, right, None, None
        )
    else:
        found = HANDLES["searchsorted.Tensor"].call(rows, values, *args[2:])
    return wrap(ops.reshape(found, [size]), level)


def _per_channel_quantize(
    handle: OperatorHandle, level: int, args: tuple[Any, ...]
) -> Any:
    """fake_quantize_per_channel_affine_cachemask with one scale and zero point for
    the batch: the channel axis shifts."""
    self, scale, zero_point, axis = args[0], args[1], args[2], args[3]
    if is_batched(scale, level) or is_batched(zero_point, level):
        return NotImplemented
    value = broadcast_value(self, level)
    shifted = wrap_dim(axis, self.dim()) + 1
    return wrap(handle.call(value, scale, zero_point, shifted, *args[4:]), level)


def _block_diag(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    """block_diag: every block padded to the full width, the rows concatenated."""
    blocks = [
        t if t.dim() == 2 else ops.reshape(t, [1, -1] if t.dim() == 1 else [1, 1])
        for t in args[0]
    ]
    width = sum(b.shape[1] for b in blocks)
    rows, left = [], 0
    for block in blocks:
        right = width - left - block.shape[1]
        rows.append(HANDLES["constant_pad_nd"].call(block, [left, right], 0))
        left += block.shape[1]
    return HANDLES["cat"].call(rows, 0)


def _masked_scatter_backward(
    handle: OperatorHandle, level: int, args: tuple[Any, ...]
) -> Any:
    """masked_scatter_backward with one mask for the batch: the selected gradients
    (the same count in every example), zero-padded to `sizes`."""
    grad, mask, sizes = args
    if is_batched(mask, level):
        return NotImplemented
    selected = HANDLES["masked_select"].call(grad, mask)
    total = int(np.prod(sizes))
    padded = HANDLES["constant_pad_nd"].call(
        selected, [0, total - selected.shape[0]], 0
    )
    return ops.reshape(padded, list(sizes))


# -- class losses ----------------------------------------------------------------------


def _class_rows(level: int, self: Tensor, target: Tensor) -> tuple[Tensor, Tensor, int]:
    """The batch's inputs as one (B * N, C) matrix and (B * N,) targets, and N."""
    size = batch_size(level)
    classes = self.shape[-1]
    rows = 1 if self.dim() == 1 else self.shape[0]
    scores = ops.reshape(broadcast_value(self, level), [size * rows, classes])
    targets = ops.reshape(broadcast_value(target, level), [size * rows])
    return scores, targets, rows


def _class_weights(
    level: int, targets: Tensor, weight: Tensor | None, ignore_index: int, rows: int
) -> Tensor:
    """Each example's total weight: the weights of its targets that are not ignored."""
    kept = ops.ne(targets, ignore_index)
    if weight is None:
        each = kept.to(get_default_dtype())
    else:
        safe = ops.where(kept, targets, zeros_like(targets))
        each = ops.index_select(weight, 0, safe) * kept
    return ops.sum(ops.reshape(each, [batch_size(level), rows]), [1])


def _nll_loss_forward(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    """nll_loss per example: the unreduced loss of all rows at once, reduced per
    example by its own total weight."""
    self, target, weight, reduction, ignore_index = args
    if is_batched(weight, level):
        return NotImplemented
    scores, targets, rows = _class_rows(level, self, target)
    losses, _ = call_plain(handle, scores, targets, weight, 0, ignore_index)
    losses = ops.reshape(losses, [batch_size(level), rows])
    total = _class_weights(level, targets, weight, ignore_index, rows).to(losses.dtype)
    if reduction == 0:
        out = losses if self.dim() > 1 else ops.reshape(losses, [batch_size(level)])
        return wrap((out, zeros_like(total)), level)
    summed = ops.sum(losses, [1])
    return wrap((summed if reduction == 2 else summed / total, total), level)


def _nll_loss_backward(
    handle: OperatorHandle, level: int, args: tuple[Any, ...]
) -> Any:
    grad, self, target, weight, reduction, ignore_index, total = args
    if is_batched(weight, level):
        return NotImplemented
    scores, targets, rows = _class_rows(level, self, target)
    size = batch_size(level)
    grads = broadcast_value(grad, level)
    if reduction == 1:
        grads = grads / broadcast_value(total, level)
    grads = ops.reshape(grads, [size, -1]).expand(size, rows).reshape([size * rows])
    result = call_plain(handle, grads, scores, targets, weight, 0, ignore_index, total)
    return wrap(ops.reshape(result, [size] + list(self.shape)), level)


MORE_CUSTOM: dict[str, Rule] = {
    "nll_loss_forward": _nll_loss_forward,
    "nll_loss_backward": _nll_loss_backward,
    "_thnn_fused_lstm_cell": _fused_cell,
    "_thnn_fused_gru_cell": _fused_cell,
    "_thnn_fused_lstm_cell_backward_impl": _fused_cell_backward,
    "_thnn_fused_gru_cell_backward": _fused_cell_backward,
    "searchsorted.Scalar": _scalar_search,
    "bucketize.Scalar": _scalar_search,
    "fake_quantize_per_channel_affine_cachemask": _per_channel_quantize,
    "block_diag": _block_diag,
    "masked_scatter_backward": _masked_scatter_backward,
    "lu_unpack": _broadcast_all,
    "linalg_lstsq": _broadcast_all,
    "_cdist_forward": _broadcast_all,
    "_cdist_backward": _broadcast_all,
    "logcumsumexp": _scan,
    "renorm": _renorm,
    "renorm_": _renorm,
    "channel_shuffle": _channel_shuffle,
    "affine_grid_generator": _affine_grid,
    "_fused_rms_norm": _fused_rms_norm,
    "native_layer_norm_backward": _layer_norm_backward,
    "multi_margin_loss": _row_loss,
    "multi_margin_loss_backward": _row_loss,
    "multilabel_margin_loss_forward": _row_loss,
    "multilabel_margin_loss_backward": _row_loss,
    "nll_loss2d_forward": _nll_loss2d,
    "nll_loss2d_backward": _nll_loss2d_backward,
}
