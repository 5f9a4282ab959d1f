"""torch.nn.functional.linear_cross_entropy: the cross entropy of a linear layer's
logits, as a composite of linear and cross_entropy (PyTorch's reference path; its
chunked path, chosen by `options`, computes the same numbers with less memory)."""

from __future__ import annotations

import math
import warnings
from typing import Any

from gradgen.dtypes import int64
from gradgen.generated import ops
from gradgen.tensor import Tensor

from .._reduction import get_enum

__all__ = ["linear_cross_entropy"]


def _check(
    input: Tensor, linear_weight: Tensor, linear_bias: Tensor | None
) -> tuple[int, ...]:
    """PyTorch's checks; the logits' shape (batch, classes, *out_features)."""
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(
            f"expected input with dimensionality 1 or 2, got {input.dim()}"
        )
    if linear_weight.dim() < 2:
        raise RuntimeError(
            "expected linear_weight with dimensionality at least 2, got "
            f"{linear_weight.dim()}"
        )
    batches, in_features = tuple(input.shape[:-1]), input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError(
            "expected equal input and linear_weight last dimensions (in_features), "
            f"got {in_features} and {linear_weight.shape[-1]}, respectively"
        )
    classes, out_features = linear_weight.shape[0], tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (classes, *out_features):
        raise RuntimeError(
            f"expected linear_bias shape {(classes, *out_features)}, got "
            f"{tuple(linear_bias.shape)}"
        )
    if out_features and not batches:
        raise RuntimeError(
            "K-dimensional loss defined by linear_weight shape "
            f"{tuple(linear_weight.shape)} requires batched input, (N, {in_features}), "
            f"got unbatched input with shape {tuple(input.shape)}"
        )
    return (*batches, classes, *out_features)


def _warn_options(
    reduction: str, label_smoothing: float, target: Tensor, shape: tuple[int, ...]
) -> None:
    """PyTorch's warning when `options` asks for the chunked path in a configuration
    it does not cover (the result is the reference path's either way)."""
    out_features = shape[2:] if len(shape) > 2 else ()
    if (
        out_features
        or reduction not in ("mean", "sum", "none")
        or label_smoothing != 0.0
        or target.dtype is not int64
    ):
        warnings.warn(
            "linear_cross_entropy: ``options`` ignored; chunked path needs reduction "
            "in {'mean','sum','none'}, label_smoothing == 0, target.dtype == int64, "
            f"out_features == (). Got reduction={reduction!r}, label_smoothing="
            f"{label_smoothing}, target.dtype={target.dtype}, "
            f"out_features={tuple(out_features)}",
            stacklevel=3,
        )


def linear_cross_entropy(
    input: Tensor,
    linear_weight: Tensor,
    target: Tensor,
    *,
    linear_bias: Tensor | None = None,
    weight: Tensor | None = None,
    reduction: str = "mean",
    ignore_index: int | None = None,
    label_smoothing: float = 0.0,
    options: Any = None,
) -> Tensor:
    """cross_entropy(linear(input, linear_weight, linear_bias), target): input (N,
    in_features) or (in_features,), linear_weight (classes, *out_features,
    in_features); target class indices or, of the logits' shape, probabilities."""
    shape = _check(input, linear_weight, linear_bias)
    probabilities = tuple(target.shape) == shape
    if probabilities and ignore_index is not None:
        raise RuntimeError(
            "ignore_index cannot be specified when target contains probabilities"
        )
    if options is not None:
        _warn_options(reduction, label_smoothing, target, shape)
    in_features = input.shape[-1]
    rows = math.prod(shape[input.dim() - 1 :])
    weight_2d = linear_weight.reshape(rows, in_features)
    bias_1d = None if linear_bias is None else linear_bias.reshape(rows)
    logits = ops.linear(input, weight_2d, bias_1d).reshape(shape)
    return ops.cross_entropy_loss(
        logits,
        target,
        weight,
        get_enum(reduction),
        -100 if ignore_index is None else ignore_index,
        label_smoothing,
    )
