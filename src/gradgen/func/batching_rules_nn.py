"""Batching rules of the nn operators whose examples carry a leading batch dim N
(pooling, padding, upsampling, grid sampling, convolution, normalization): vmap's
batch folds into N, or into the channels when a per-channel argument is batched too.

- `leading(NAME:RANK, ...)` (declared in native_functions.yaml): the named tensors have
  RANK dims per sample after an optional N; the batch B and N become one dim B * N (an
  example without N has the batch as its N), the call runs once, and every result's
  first dim splits back into (B, N).
- convolution: a batched weight folds into the groups (B * groups), the inputs' batch
  into their channels; the results split back the same way.
- batch / group norm: the batch folds into the channels (B * C), so statistics
  and per-channel parameters stay per example.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..dispatch import OperatorHandle
from ..generated import ops
from ..tensor import Tensor
from .batching import HANDLES, Rule, batch_size, broadcast_value, is_batched, wrap
from .batching_schema import arguments, same_kind

# -- leading(NAME:RANK, ...) -------------------------------------------------------------


def _has_n(args: Sequence[Any], names: Sequence[str], ranks: dict[str, int]) -> Any:
    """Whether the named tensors' examples have their N (one answer for all), None
    when they disagree or a rank does not fit."""
    found: bool | None = None
    for name, arg in zip(names, args):
        if name in ranks and isinstance(arg, Tensor):
            if arg.dim() not in (ranks[name], ranks[name] + 1):
                return None
            this = arg.dim() == ranks[name] + 1
            if found is not None and found != this:
                return None
            found = this
    return found


def _fold(value: Tensor, has_n: bool) -> Tensor:
    """(B, N, ...) as (B * N, ...); a value without N is (B, ...) already."""
    if not has_n:
        return value
    shape = list(value.shape)
    return ops.reshape(value, [shape[0] * shape[1]] + shape[2:])


def _unfold(result: Any, size: int, has_n: bool) -> Any:
    """Every result's first dim (B * N) as (B, N)."""
    if isinstance(result, (tuple, list)):
        return same_kind(result, [_unfold(r, size, has_n) for r in result])
    if not isinstance(result, Tensor) or not has_n:
        return result
    shape = list(result.shape)
    return ops.reshape(result, [size, shape[0] // size] + shape[1:])


def leading(ranks: dict[str, int]) -> Rule:
    """The rule of `leading(NAME:RANK, ...)`."""
    full_size = next(iter(ranks.values())) + 1

    def rule(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
        schema = arguments(handle.schema)
        names = [name for _, name in schema]
        if any(is_batched(a, level) and n not in ranks for n, a in zip(names, args)):
            return NotImplemented
        has_n = _has_n(args, names, ranks)
        if has_n is None:
            return NotImplemented
        size = batch_size(level)
        new_args = []
        for name, arg in zip(names, args):
            if name in ranks and isinstance(arg, Tensor):
                arg = _fold(broadcast_value(arg, level), has_n)
            elif name == "input_size" and has_n and len(arg) == full_size:
                arg = [arg[0] * size, *arg[1:]]
            new_args.append(arg)
        return wrap(_unfold(handle.call(*new_args), size, has_n), level)

    return rule


# -- convolution -------------------------------------------------------------------------


def _at(args: Sequence[Any], index: int, default: Any) -> Any:
    return args[index] if len(args) > index else default


def _channels_first(value: Tensor, has_n: bool) -> Tensor:
    """(B, [N], C, *S) as (N, B * C, *S): the batch folded into the channels."""
    if not has_n:
        value = HANDLES["unsqueeze"].call(value, 1)
    shape = list(value.shape)
    moved = HANDLES["transpose.int"].call(value, 0, 1)
    return ops.reshape(moved, [shape[1], shape[0] * shape[2]] + shape[3:])


def _channels_back(value: Tensor, size: int, has_n: bool) -> Tensor:
    """(N, B * C, *S) back to (B, [N], C, *S)."""
    shape = list(value.shape)
    split = ops.reshape(value, [shape[0], size, shape[1] // size] + shape[2:])
    moved: Tensor = HANDLES["transpose.int"].call(split, 0, 1)
    if not has_n:
        moved = HANDLES["squeeze.dim"].call(moved, 1)
    return moved


def _flat(value: Tensor) -> Tensor:
    """(B, A, ...) as (B * A, ...)."""
    shape = list(value.shape)
    return ops.reshape(value, [shape[0] * shape[1]] + shape[2:])


def _split(value: Tensor | None, size: int) -> Tensor | None:
    """(B * A, ...) as (B, A, ...)."""
    if value is None:
        return None
    shape = list(value.shape)
    return ops.reshape(value, [size, shape[0] // size] + shape[1:])


def _convolution(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    """convolution (and the operators with its arguments first): an unbatched weight
    sees the batch folded into N; a batched one, folded into the groups."""
    input, weight, bias = args[0], args[1], args[2]
    size = batch_size(level)
    has_n = input.dim() == weight.dim()
    rest = list(args[3:])
    x = broadcast_value(input, level)
    if not is_batched(weight, level) and not is_batched(bias, level):
        if not has_n:
            return wrap(handle.call(x, weight, bias, *rest), level)
        out = handle.call(_flat(x), weight, bias, *rest)
        return wrap(_split(out, size), level)
    rest[5] = rest[5] * size  # groups
    b = None if bias is None else ops.reshape(broadcast_value(bias, level), [-1])
    out = handle.call(
        _channels_first(x, has_n), _flat(broadcast_value(weight, level)), b, *rest
    )
    return wrap(_channels_back(out, size, has_n), level)


def _convolution_backward(
    handle: OperatorHandle, level: int, args: tuple[Any, ...]
) -> Any:
    """convolution_backward: everything folded into the groups, so the weight's and
    bias's gradients stay per example."""
    grad, input, weight, bias_sizes = args[0], args[1], args[2], args[3]
    size = batch_size(level)
    has_n = input.dim() == weight.dim()
    rest = list(args[4:])
    rest[5] = rest[5] * size  # groups
    sizes = None if bias_sizes is None else [bias_sizes[0] * size]
    grads = handle.call(
        _channels_first(broadcast_value(grad, level), has_n),
        _channels_first(broadcast_value(input, level), has_n),
        _flat(broadcast_value(weight, level)),
        sizes,
        *rest,
    )
    grad_input, grad_weight, grad_bias = grads
    if grad_input is not None:
        grad_input = _channels_back(grad_input, size, has_n)
    return wrap((grad_input, _split(grad_weight, size), _split(grad_bias, size)), level)


def _as_convolution(
    transposed: bool, groups_from_input: bool, dilation: bool = True
) -> Rule:
    """The slow/depthwise convolutions, (self, weight, kernel_size, bias, stride,
    padding, [output_padding,] [dilation]), as convolution on the batched tensors."""

    def rule(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
        self, weight = args[0], args[1]
        spatial = weight.dim() - 2
        ones, zeros = [1] * spatial, [0] * spatial
        bias, stride = _at(args, 3, None), _at(args, 4, ones)
        padding = _at(args, 5, zeros)
        output_padding = _at(args, 6, zeros) if transposed else zeros
        dilated = _at(args, 7 if transposed else 6, ones) if dilation else ones
        groups = self.shape[-spatial - 1] if groups_from_input else 1
        return HANDLES["convolution"].call(
            self,
            weight,
            bias,
            stride,
            padding,
            dilated,
            transposed,
            output_padding,
            groups,
        )

    return rule


def _nnpack(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    input, weight, bias, padding = args[0], args[1], args[2], args[3]
    stride = _at(args, 4, [1, 1])
    return HANDLES["convolution"].call(
        input, weight, bias, stride, padding, [1, 1], False, [0, 0], 1
    )


def _conv_tbc(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    """conv_tbc (time, batch, channels) as a 1-d convolution."""
    self, weight, bias, pad = args[0], args[1], args[2], _at(args, 3, 0)
    x = HANDLES["permute"].call(self, [1, 2, 0])
    w = HANDLES["permute"].call(weight, [2, 1, 0])
    out = HANDLES["convolution"].call(x, w, bias, [1], [pad], [1], False, [0], 1)
    return HANDLES["permute"].call(out, [2, 0, 1])


def _slow_conv2d_backward(
    handle: OperatorHandle, level: int, args: tuple[Any, ...]
) -> Any:
    grad, self, weight, _, stride, padding, mask = args
    return HANDLES["convolution_backward"].call(
        grad,
        self,
        weight,
        [weight.shape[0]],
        stride,
        padding,
        [1, 1],
        False,
        [0, 0],
        1,
        mask,
    )


def _convolution_backward_overrideable(
    handle: OperatorHandle, level: int, args: tuple[Any, ...]
) -> Any:
    grad, input, weight = args[0], args[1], args[2]
    groups = args[8]
    transposed = args[6]
    channels = weight.shape[1] * groups if transposed else weight.shape[0]
    return HANDLES["convolution_backward"].call(
        grad, input, weight, [channels], *args[3:]
    )


NN_CUSTOM: dict[str, Rule] = {
    "convolution": _convolution,
    "_convolution": _convolution,
    "convolution_overrideable": _convolution,
    "convolution_backward": _convolution_backward,
    "convolution_backward_overrideable": _convolution_backward_overrideable,
    "_slow_conv2d_backward.output_mask": _slow_conv2d_backward,
    "_conv_depthwise2d": _as_convolution(False, True),
    "conv_depthwise3d": _as_convolution(False, True),
    "slow_conv_dilated2d": _as_convolution(False, False),
    "slow_conv_dilated3d": _as_convolution(False, False),
    "_slow_conv2d_forward": _as_convolution(False, False, dilation=False),
    "slow_conv3d_forward": _as_convolution(False, False, dilation=False),
    "slow_conv_transpose2d": _as_convolution(True, False),
    "slow_conv_transpose3d": _as_convolution(True, False),
    "_nnpack_spatial_convolution": _nnpack,
    "conv_tbc": _conv_tbc,
}


# -- batch / group norm: the batch folded into the channels ------------------------

# Arguments with a leading N and the channels second, (N, C, *S), or a group norm's
# statistics, (N, groups); the per-channel (C,) arguments; the counts that grow B-fold.
_CHANNELED = frozenset({"input", "grad_out", "grad_output", "self", "mean", "rstd"})
_PER_CHANNEL = frozenset(
    {"weight", "bias", "running_mean", "running_var", "save_mean", "save_invstd"}
    | {"save_var"}
)
_COUNTS = frozenset({"C", "group"})


def _fold_channels(
    schema: Sequence[tuple[str, str]], level: int, args: tuple[Any, ...], skip: set[str]
) -> list[Any] | None:
    """The arguments with the batch folded into the channels (None: a call this
    cannot fold). Per-channel arguments named in `skip` are left out (None)."""
    size = batch_size(level)
    folded = []
    for (_, name), arg in zip(schema, args):
        if name in skip:
            arg = None
        elif isinstance(arg, Tensor) and name in _CHANNELED:
            if arg.dim() < 2:
                return None
            arg = _channels_first(broadcast_value(arg, level), True)
        elif isinstance(arg, Tensor) and name in _PER_CHANNEL:
            arg = ops.reshape(broadcast_value(arg, level), [-1])
        elif isinstance(arg, Tensor) and is_batched(arg, level):
            return None
        elif name in _COUNTS:
            arg = arg * size
        folded.append(arg)
    return folded


def _unfold_channels(result: Any, size: int) -> Any:
    """Results of a folded call: (N, B * C, ...) back to (B, N, C, ...), (B * C,) to
    (B, C); empty placeholders (statistics not computed) stay as they are."""
    if isinstance(result, (tuple, list)):
        return same_kind(result, [_unfold_channels(r, size) for r in result])
    if not isinstance(result, Tensor) or result.numel() == 0:
        return result
    if result.dim() >= 2:
        return BatchedMarker(_channels_back(result, size, True))
    return BatchedMarker(ops.reshape(result, [size, -1]))


class BatchedMarker:
    """A folded result to be wrapped as batched (empty ones stay plain)."""

    __slots__ = ("value",)

    def __init__(self, value: Tensor) -> None:
        self.value = value


def _wrap_marked(result: Any, level: int) -> Any:
    if isinstance(result, (tuple, list)):
        return same_kind(result, [_wrap_marked(r, level) for r in result])
    return wrap(result.value, level) if isinstance(result, BatchedMarker) else result


def _update_running(
    running: Tensor, batch_stat: Tensor, momentum: float, size: int
) -> None:
    """The running statistic after the per-example updates, one after the other:
    r <- (1 - m) r + m s_b for b = 0 .. B - 1, summed in closed form."""
    weights = momentum * (1.0 - momentum) ** np.arange(size - 1, -1, -1.0)
    step = Tensor(weights.reshape(size, 1).astype(np.float64)).to(running.dtype)
    total = HANDLES["sum.dim_IntList"].call(batch_stat * step, [0], False, None)
    new = running * (1.0 - momentum) ** size + total
    HANDLES["copy_"].call(running, new.detach(), False)


def _batch_norm(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    """Batch norm with the batch folded into the channels. Training with running
    statistics that are one for the batch updates them as the examples one after
    the other would."""
    schema = arguments(handle.schema)
    named = dict(zip((name for _, name in schema), args))
    training = bool(named.get("training", False))
    running = [named.get("running_mean"), named.get("running_var")]
    update = training and any(
        isinstance(r, Tensor) and not is_batched(r, level) for r in running
    )
    if update and any(is_batched(r, level) for r in running):
        return NotImplemented
    skip = {"running_mean", "running_var"} if update else set()
    folded = _fold_channels(schema, level, args, skip)
    if folded is None:
        return NotImplemented
    size = batch_size(level)
    result = _unfold_channels(handle.call(*folded), size)
    if update:
        input = named["input"]
        mean, invstd = result[1].value, result[2].value
        count = input.numel() // max(input.shape[1], 1)
        eps = named["eps"]
        var = (1.0 / (invstd * invstd) - eps) * (count / max(count - 1, 1))
        momentum = named["momentum"]
        if running[0] is not None:
            _update_running(running[0], mean.detach(), momentum, size)
        if running[1] is not None:
            _update_running(running[1], var.detach(), momentum, size)
    return _wrap_marked(result, level)


def _channels(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    """Group norm, batch norm's backward: everything folded into the channels."""
    folded = _fold_channels(arguments(handle.schema), level, args, set())
    if folded is None:
        return NotImplemented
    result = _unfold_channels(handle.call(*folded), batch_size(level))
    return _wrap_marked(result, level)


NN_CUSTOM.update(
    {
        "native_batch_norm": _batch_norm,
        "_native_batch_norm_legit.no_stats": _batch_norm,
        "_native_batch_norm_legit_no_training": _batch_norm,
        "_batch_norm_no_update": _batch_norm,
        "native_batch_norm_backward": _channels,
        "batch_norm_backward": _channels,
        "native_group_norm": _channels,
        "native_group_norm_backward": _channels,
    }
)
