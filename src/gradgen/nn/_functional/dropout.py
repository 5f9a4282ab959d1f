"""torch.nn.functional's channel-wise and alpha dropouts: dropout1d, dropout2d,
dropout3d, alpha_dropout, feature_alpha_dropout. Each is PyTorch's Dropout.cpp
composite: the input times a noise tensor drawn from gradgen's generator (one draw per
channel for the feature forms), plus a shift for the alpha forms (MulBackward0)."""

from __future__ import annotations

import math
import warnings

from gradgen.dtypes import float64
from gradgen.factories import zeros
from gradgen.generated import ops
from gradgen.tensor import Tensor

__all__ = [
    "dropout1d",
    "dropout2d",
    "dropout3d",
    "alpha_dropout",
    "feature_alpha_dropout",
]

# SELU's alpha times its scale: the value alpha dropout gives a dropped unit.
_ALPHA = 1.7580993408473766


def _check_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _keep_mask(input: Tensor, p: float, feature: bool) -> Tensor:
    """1 with probability 1 - p, else 0, in input's dtype: of input's shape, or of
    shape (N, C, 1, ...) for the feature forms (one draw per channel)."""
    shape = tuple(input.shape)
    if feature:
        if len(shape) < 2:
            raise RuntimeError(
                "Feature dropout requires at least 2 dimensions in the input"
            )
        shape = shape[:2] + (1,) * (len(shape) - 2)
    keep = ops.bernoulli(zeros(shape, dtype=float64), 1 - p)
    return ops._to_copy(keep, dtype=input.dtype)


def _dropout_impl(
    input: Tensor, p: float, train: bool, inplace: bool, feature: bool, alpha: bool
) -> Tensor:
    """ATen's _dropout_impl: the input when p == 0, not training or empty; zeros when
    p == 1; else input * keep / (1 - p), or for alpha dropout input * keep * a + b,
    with a and b chosen so that SELU's mean and variance are kept."""
    if p == 0 or not train or input.numel() == 0:
        return input
    zero = zeros((), dtype=input.dtype)
    if p == 1:
        return input.mul_(zero) if inplace else input * zero
    keep = _keep_mask(input, p, feature)
    if not alpha:
        noise = keep / (1 - p)
        return input.mul_(noise) if inplace else input * noise
    a = 1.0 / math.sqrt((_ALPHA * _ALPHA * p + 1) * (1 - p))
    shift = (keep - 1) * (_ALPHA * a) + _ALPHA * a * p
    noise = keep * a
    if inplace:
        return input.mul_(noise).add_(shift)
    return input * noise + shift


def _channel_dropout(
    input: Tensor, p: float, training: bool, inplace: bool, batched: bool
) -> Tensor:
    """feature dropout, on a batch of one when the input has no batch dimension (in
    place: through a view of input with the batch dimension, returning input)."""
    if batched:
        return _dropout_impl(input, p, training, inplace, feature=True, alpha=False)
    result = _dropout_impl(
        input.unsqueeze(0), p, training, inplace, feature=True, alpha=False
    )
    return input if inplace else result.squeeze(0)


def dropout1d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zero whole channels of a (C, L) or (N, C, L) input with probability p, scaling
    the others by 1 / (1 - p), while training."""
    _check_p(p)
    ndim = input.dim()
    if ndim not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {ndim}D input. "
            "Note that dropout1d exists to provide channel-wise dropout on inputs with 1 "
            "spatial dimension, a channel dimension, and an optional batch dimension "
            "(i.e. 2D or 3D inputs)."
        )
    return _channel_dropout(input, p, training, inplace, ndim == 3)


def _warn_feature_dim(name: str, ndim: int, spatial: int) -> None:
    words = {2: "2", 3: "3"}[spatial]
    warnings.warn(
        f"{name}: Received a {ndim}-D input to {name}, which is deprecated and will "
        "result in an error in a future release. To retain the behavior and silence "
        f"this warning, please use dropout instead. Note that {name} exists to provide "
        f"channel-wise dropout on inputs with {words} spatial dimensions, a channel "
        "dimension, and an optional batch dimension (i.e. "
        f"{spatial + 1}D or {spatial + 2}D inputs).",
        stacklevel=3,
    )


def dropout2d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zero whole channels of an (N, C, H, W) input with probability p, scaling the
    others by 1 / (1 - p), while training. As PyTorch's, a 3-D input is read as
    (N, C, L) (with a warning)."""
    _check_p(p)
    ndim = input.dim()
    if ndim not in (3, 4):
        _warn_feature_dim("dropout2d", ndim, 2)
    if ndim == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise "
            "1D dropout behavior is desired - input is interpreted as shape (N, C, L), "
            "where C is the channel dim. This behavior will change in a future release "
            "to interpret the input as one without a batch dimension, i.e. shape "
            "(C, H, W). To maintain the 1D channel-wise dropout behavior, please switch "
            "to using dropout1d instead.",
            stacklevel=2,
        )
    return _dropout_impl(input, p, training, inplace, feature=True, alpha=False)


def dropout3d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zero whole channels of a (C, D, H, W) or (N, C, D, H, W) input with probability
    p, scaling the others by 1 / (1 - p), while training."""
    _check_p(p)
    ndim = input.dim()
    if ndim not in (4, 5):
        _warn_feature_dim("dropout3d", ndim, 3)
    return _channel_dropout(input, p, training, inplace, ndim == 5)


def alpha_dropout(
    input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False
) -> Tensor:
    """Set each element to SELU's saturation value with probability p, then scale and
    shift so that the mean and variance stay those of the input (while training)."""
    _check_p(p)
    return _dropout_impl(input, p, training, inplace, feature=False, alpha=True)


def feature_alpha_dropout(
    input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False
) -> Tensor:
    """alpha_dropout with one draw per channel (dimensions 0 and 1)."""
    _check_p(p)
    return _dropout_impl(input, p, training, inplace, feature=True, alpha=True)
