"""torch.nn.functional's functions, under its names and signatures.

The losses take `reduction` as a string ("none", "mean", "sum") and the legacy
`size_average` / `reduce` flags, as torch.nn.functional does, and call gradgen's
operators (PyTorch's ATen operators, whose `reduction` is an int: None=0, Mean=1,
Sum=2). Each function calls the operator of its name in `gradgen.generated.ops`, or writes
PyTorch's composite with those operators.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from gradgen.composites._common import BATCHED
from gradgen.composites.dropout import _dropout_noise
from gradgen.factories import zeros
from gradgen.generated import ops
from gradgen.numpy_kernels import broadcast_shape_error
from gradgen.tensor import Tensor

from ._functional.activation import (
    celu,
    celu_,
    elu_,
    glu,
    gumbel_softmax,
    hardshrink,
    hardsigmoid,
    hardswish,
    hardtanh_,
    leaky_relu_,
    prelu,
    relu6,
    relu_,
    rrelu,
    rrelu_,
    selu,
    selu_,
    softmin,
    softshrink,
    tanhshrink,
    threshold,
    threshold_,
)
from ._functional.attention import (
    multi_head_attention_forward,
    scaled_dot_product_attention,
)
from ._functional.conv import (
    conv1d,
    conv2d,
    conv3d,
    conv_transpose1d,
    conv_transpose2d,
    conv_transpose3d,
)
from ._functional.distance import (
    _vector_norm,
    cosine_similarity,
    pairwise_distance,
    pdist,
)
from ._functional.dropout import (
    alpha_dropout,
    dropout1d,
    dropout2d,
    dropout3d,
    feature_alpha_dropout,
)
from ._functional.ctc import ctc_loss
from ._functional.linear import bilinear
from ._functional.linear_cross_entropy import linear_cross_entropy
from ._functional.loss import (
    gaussian_nll_loss,
    multilabel_soft_margin_loss,
    poisson_nll_loss,
)
from ._functional.normalization import (
    batch_norm,
    group_norm,
    instance_norm,
    local_response_norm,
    rms_norm,
)
from ._functional.margin_loss import (
    cosine_embedding_loss,
    hinge_embedding_loss,
    margin_ranking_loss,
    multi_margin_loss,
    multilabel_margin_loss,
    soft_margin_loss,
    triplet_margin_loss,
    triplet_margin_with_distance_loss,
)
from ._functional.padding import pad_by_mode
from ._functional.resampling import (
    affine_grid,
    channel_shuffle,
    fold,
    grid_sample,
    interpolate,
    pixel_shuffle,
    pixel_unshuffle,
    unfold,
    upsample,
    upsample_bilinear,
    upsample_nearest,
)
from ._functional.sparse import _no_grad_embedding_renorm_, embedding_bag
from ._functional.pooling import (
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_avg_pool3d,
    adaptive_max_pool1d,
    adaptive_max_pool1d_with_indices,
    adaptive_max_pool2d,
    adaptive_max_pool2d_with_indices,
    adaptive_max_pool3d,
    adaptive_max_pool3d_with_indices,
    avg_pool1d,
    avg_pool2d,
    avg_pool3d,
    max_pool1d,
    max_pool1d_with_indices,
    max_pool2d,
    max_pool2d_with_indices,
    max_pool3d,
    max_pool3d_with_indices,
    lp_pool1d,
    lp_pool2d,
    lp_pool3d,
    max_unpool1d,
    max_unpool2d,
    max_unpool3d,
    fractional_max_pool2d,
    fractional_max_pool2d_with_indices,
    fractional_max_pool3d,
    fractional_max_pool3d_with_indices,
)
from ._reduction import get_enum as _get_enum
from ._reduction import legacy_get_string as _legacy_get_string

__all__ = [
    "linear",
    "mse_loss",
    "nll_loss",
    "cross_entropy",
    "binary_cross_entropy",
    "celu",
    "glu",
    "hardshrink",
    "hardsigmoid",
    "hardswish",
    "prelu",
    "relu6",
    "rrelu",
    "selu",
    "softmin",
    "softshrink",
    "tanhshrink",
    "threshold",
    "cosine_similarity",
    "pairwise_distance",
    "cosine_embedding_loss",
    "hinge_embedding_loss",
    "margin_ranking_loss",
    "soft_margin_loss",
    "multi_margin_loss",
    "multilabel_margin_loss",
    "triplet_margin_loss",
    "scaled_dot_product_attention",
    "multi_head_attention_forward",
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
    "max_pool1d",
    "max_pool2d",
    "max_pool3d",
    "max_pool1d_with_indices",
    "max_pool2d_with_indices",
    "max_pool3d_with_indices",
    "avg_pool1d",
    "avg_pool2d",
    "avg_pool3d",
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool3d",
    "adaptive_max_pool1d",
    "adaptive_max_pool2d",
    "adaptive_max_pool3d",
    "adaptive_max_pool1d_with_indices",
    "adaptive_max_pool2d_with_indices",
    "adaptive_max_pool3d_with_indices",
    "lp_pool1d",
    "lp_pool2d",
    "lp_pool3d",
    "max_unpool1d",
    "max_unpool2d",
    "max_unpool3d",
    "rms_norm",
    "fractional_max_pool2d",
    "fractional_max_pool2d_with_indices",
    "fractional_max_pool3d",
    "fractional_max_pool3d_with_indices",
]


def _broadcast_tensors(*tensors: Tensor) -> list[Tensor]:
    """torch.broadcast_tensors for two tensors: each expanded to the common shape
    (a tensor already of that shape is returned as it is)."""
    shapes = [tuple(t.shape) for t in tensors]
    try:
        shape = tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise broadcast_shape_error(*shapes) from None
    return [t if tuple(t.shape) == shape else t.expand(shape) for t in tensors]


# -- linear and losses ---------------------------------------------------------------


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """y = input @ weight.T + bias."""
    if (
        bias is not None
        and input.__class__ is not Tensor
        and BATCHED.linear is not None
    ):
        # Inside vmap: the batched linear the composite would reach (it records
        # the call as one node, or returns NotImplemented), without the binding's
        # argument checks on the way.
        result = BATCHED.linear(input, weight, bias)
        if result is not NotImplemented:
            return result  # type: ignore[no-any-return]
    return ops.linear(input, weight, bias)


def mse_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    weight: Tensor | None = None,
) -> Tensor:
    """The mean (or sum) squared error, optionally weighted per element."""
    _warn_target_size(input, target)
    if size_average is not None or reduce is not None:
        reduction = _legacy_get_string(size_average, reduce)
    expanded_input, expanded_target = _broadcast_tensors(input, target)
    if weight is None:
        return ops.mse_loss(expanded_input, expanded_target, _get_enum(reduction))
    if weight.size() != input.size():
        raise ValueError("Weights and input must have the same size.")
    squared_errors = (expanded_input - expanded_target).pow(2)
    return _weighted_reduction(squared_errors * weight, reduction, weight)


def nll_loss(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    ignore_index: int = -100,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """The negative log likelihood of log-probabilities `input` (class dimension 1)."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_get_string(size_average, reduce)
    return ops.nll_loss_nd(input, target, weight, _get_enum(reduction), ignore_index)


def cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    ignore_index: int = -100,
    reduce: bool | None = None,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Tensor:
    """The cross entropy of logits `input` against class indices or probabilities."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_get_string(size_average, reduce)
    reduced = _get_enum(reduction)
    if input.__class__ is not Tensor and BATCHED.cross_entropy_loss is not None:
        # Inside vmap: the composite's batched case directly (as `linear`).
        result = BATCHED.cross_entropy_loss(
            input, target, weight, reduced, ignore_index, label_smoothing
        )
        if result is not NotImplemented:
            return result  # type: ignore[no-any-return]
    return ops.cross_entropy_loss(
        input, target, weight, reduced, ignore_index, label_smoothing
    )


def binary_cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
) -> Tensor:
    """The binary cross entropy of probabilities `input` against `target`."""
    if size_average is not None or reduce is not None:
        reduction_enum = _get_enum(_legacy_get_string(size_average, reduce))
    else:
        reduction_enum = _get_enum(reduction)
    if target.size() != input.size():
        raise ValueError(
            f"Using a target size ({target.size()}) that is different to the input size "
            f"({input.size()}) is deprecated. Please ensure they have the same size."
        )
    if weight is not None:
        shape = _broadcast_tensors(target, weight)[1].shape
        weight = weight.expand(shape)
    return ops.binary_cross_entropy(input, target, weight, reduction_enum)


# -- activations ---------------------------------------------------------------------


def _get_softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to "
        "include dim=X as an argument.",
        stacklevel=stacklevel,
    )
    return 0 if ndim in (0, 1, 3) else 1


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """max(input, 0) elementwise."""
    if inplace:
        return ops.relu_(input)
    if input.__class__ is not Tensor and BATCHED.relu is not None:
        result = BATCHED.relu(input)  # inside vmap: relu's batching rule directly
        if result is not NotImplemented:
            return result  # type: ignore[no-any-return]
    return ops.relu(input)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """input * sigmoid(input) elementwise (in place: the same product written into
    input, as gradgen has no silu_ kernel)."""
    if inplace:
        return input.mul_(input.sigmoid())
    return ops.silu(input)


gelu = ops.gelu
sigmoid = ops.sigmoid
tanh = ops.tanh


def _softmax_like(name: str) -> Any:
    def function(
        input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype: Any = None
    ) -> Tensor:
        if dim is None:
            dim = _get_softmax_dim(name, input.dim(), _stacklevel)
        method = getattr(input, name)
        if dtype is None:
            return method(dim)  # type: ignore[no-any-return]
        return method(dim, dtype=dtype)  # type: ignore[no-any-return]

    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"torch.nn.functional.{name}: the {name} of `input` along `dim`."
    return function


softmax = _softmax_like("softmax")
log_softmax = _softmax_like("log_softmax")

__all__ += ["batch_norm", "group_norm", "instance_norm", "local_response_norm"]
__all__ += ["interpolate", "upsample", "upsample_nearest", "upsample_bilinear"]
__all__ += ["grid_sample", "affine_grid", "unfold", "fold"]
__all__ += ["pixel_shuffle", "pixel_unshuffle", "channel_shuffle"]
__all__ += [
    "relu_",
    "elu_",
    "leaky_relu_",
    "selu_",
    "celu_",
    "hardtanh_",
    "threshold_",
    "rrelu_",
    "gumbel_softmax",
    "pdist",
    "bilinear",
    "dropout1d",
    "dropout2d",
    "dropout3d",
    "alpha_dropout",
    "feature_alpha_dropout",
    "gaussian_nll_loss",
    "ctc_loss",
    "linear_cross_entropy",
    "poisson_nll_loss",
    "multilabel_soft_margin_loss",
    "triplet_margin_with_distance_loss",
]
__all__ += ["gelu", "log_softmax", "relu", "sigmoid", "silu", "softmax", "tanh"]

__all__ += [
    "leaky_relu",
    "elu",
    "softplus",
    "logsigmoid",
    "hardtanh",
    "mish",
    "softsign",
    "l1_loss",
    "smooth_l1_loss",
    "huber_loss",
    "binary_cross_entropy_with_logits",
    "kl_div",
    "layer_norm",
    "embedding",
    "embedding_bag",
    "one_hot",
    "pad",
    "dropout",
    "normalize",
]


def leaky_relu(
    input: Tensor, negative_slope: float = 0.01, inplace: bool = False
) -> Tensor:
    """x where x > 0, else negative_slope * x."""
    if inplace:
        return ops.leaky_relu_(input, negative_slope)
    return ops.leaky_relu(input, negative_slope)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """x where x > 0, else alpha * (exp(x) - 1)."""
    if inplace:
        return ops.elu_(input, alpha)
    return ops.elu(input, alpha)


def softplus(input: Tensor, beta: float = 1, threshold: float = 20) -> Tensor:
    """log(1 + exp(beta * x)) / beta, and x where beta * x > threshold."""
    return ops.softplus(input, beta, threshold)


def logsigmoid(input: Tensor) -> Tensor:
    """log(1 / (1 + exp(-x))), computed without overflow."""
    return ops.log_sigmoid(input)


def hardtanh(
    input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False
) -> Tensor:
    """x clamped to [min_val, max_val]."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if inplace:
        return ops.hardtanh_(input, min_val, max_val)
    return ops.hardtanh(input, min_val, max_val)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * tanh(softplus(x))."""
    if inplace:
        return ops.mish_(input)
    return ops.mish(input)


def softsign(input: Tensor) -> Tensor:
    """x / (1 + |x|) (torch.nn.functional's own composite: DivBackward0)."""
    return input / (input.abs() + 1)


def _warn_target_size(input: Tensor, target: Tensor) -> None:
    if target.size() != input.size():
        warnings.warn(
            f"Using a target size ({target.size()}) that is different to the input size "
            f"({input.size()}). This will likely lead to incorrect results due to "
            "broadcasting. Please ensure they have the same size.",
            stacklevel=3,
        )


def _weighted_reduction(
    loss: Tensor, reduction: str, mean_over: Tensor | None
) -> Tensor:
    """The `weight=` path of mse_loss / l1_loss / huber_loss: unreduced, summed, or the
    sum divided by `mean_over`'s sum (mse_loss, l1_loss) or averaged (huber_loss,
    mean_over None)."""
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        if mean_over is None:
            return loss.mean()
        return loss.sum() / mean_over.sum()
    raise ValueError(
        f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'."
    )


def l1_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    weight: Tensor | None = None,
) -> Tensor:
    """The mean (or sum) absolute error, optionally weighted per element."""
    _warn_target_size(input, target)
    if size_average is not None or reduce is not None:
        reduction = _legacy_get_string(size_average, reduce)
    expanded_input, expanded_target = _broadcast_tensors(input, target)
    if weight is not None:
        if weight.size() != input.size():
            raise ValueError("Weights and input must have the same size.")
        absolute_errors = (expanded_input - expanded_target).abs()
        return _weighted_reduction(absolute_errors * weight, reduction, weight)
    return ops.l1_loss(expanded_input, expanded_target, _get_enum(reduction))


def smooth_l1_loss(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    beta: float = 1.0,
) -> Tensor:
    """0.5 * d^2 / beta where d = |input - target| < beta, else d - 0.5 * beta
    (the L1 loss for beta == 0)."""
    _warn_target_size(input, target)
    if size_average is not None or reduce is not None:
        reduction = _legacy_get_string(size_average, reduce)
    expanded_input, expanded_target = _broadcast_tensors(input, target)
    if beta == 0.0:
        return ops.l1_loss(expanded_input, expanded_target, _get_enum(reduction))
    return ops.smooth_l1_loss(
        expanded_input, expanded_target, _get_enum(reduction), beta
    )


def huber_loss(
    input: Tensor,
    target: Tensor,
    reduction: str = "mean",
    delta: float = 1.0,
    weight: Tensor | None = None,
) -> Tensor:
    """0.5 * d^2 where d = |input - target| < delta, else delta * (d - 0.5 * delta),
    optionally weighted per element."""
    _warn_target_size(input, target)
    expanded_input, expanded_target = _broadcast_tensors(input, target)
    if weight is None:
        return ops.huber_loss(
            expanded_input, expanded_target, _get_enum(reduction), delta
        )
    if weight.size() != input.size():
        raise ValueError("Weights and input must have the same size.")
    unweighted = ops.huber_loss(
        expanded_input, expanded_target, _get_enum("none"), delta
    )
    return _weighted_reduction(unweighted * weight, reduction, None)


def binary_cross_entropy_with_logits(
    input: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    pos_weight: Tensor | None = None,
) -> Tensor:
    """The binary cross entropy of sigmoid(input) against target, computed from the
    logits without overflow; pos_weight weighs the positive examples."""
    if size_average is not None or reduce is not None:
        reduction_enum = _get_enum(_legacy_get_string(size_average, reduce))
    else:
        reduction_enum = _get_enum(reduction)
    if not target.size() == input.size():
        raise ValueError(
            f"Target size ({target.size()}) must be the same as input size "
            f"({input.size()})"
        )
    return ops.binary_cross_entropy_with_logits(
        input, target, weight, pos_weight, reduction_enum
    )


def kl_div(
    input: Tensor,
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: str = "mean",
    log_target: bool = False,
) -> Tensor:
    """The KL divergence of log-probabilities `input` from `target` (probabilities, or
    log-probabilities with log_target); reduction="batchmean" divides the sum by the
    batch size."""
    if size_average is not None or reduce is not None:
        reduction_enum = _get_enum(_legacy_get_string(size_average, reduce))
    else:
        if reduction == "mean":
            warnings.warn(
                "reduction: 'mean' divides the total loss by both the batch size and the "
                "support size.'batchmean' divides only by the batch size, and aligns "
                "with the KL div math definition.'mean' will be changed to behave the "
                "same as 'batchmean' in the next major release.",
                stacklevel=2,
            )
        if reduction == "batchmean":
            reduction_enum = _get_enum("sum")
        else:
            reduction_enum = _get_enum(reduction)
    reduced = ops.kl_div(input, target, reduction_enum, log_target=log_target)
    if reduction == "batchmean" and input.dim() != 0:
        reduced = reduced / input.shape[0]
    return reduced


def layer_norm(
    input: Tensor,
    normalized_shape: Any,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Normalize over the last len(normalized_shape) dimensions (mean 0, variance 1),
    then scale by weight and shift by bias."""
    return ops.layer_norm(input, normalized_shape, weight, bias, eps)


def embedding(
    input: Tensor,
    weight: Tensor,
    padding_idx: int | None = None,
    max_norm: float | None = None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
    """The rows of `weight` that the indices `input` name. The row padding_idx gets no
    gradient; max_norm renormalizes the rows used, in place."""
    if padding_idx is not None:
        if padding_idx > 0:
            if padding_idx >= weight.shape[0]:
                raise AssertionError("Padding_idx must be within num_embeddings")
        elif padding_idx < 0:
            if padding_idx < -weight.shape[0]:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = weight.shape[0] + padding_idx
    else:
        padding_idx = -1
    if sparse:
        raise NotImplementedError(
            "embedding(sparse=True): gradgen has no sparse tensors for the gradient"
        )
    if max_norm is not None:
        _no_grad_embedding_renorm_(weight, input, max_norm, norm_type)
    return ops.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """int64 one-hot vectors: shape tensor.shape + (num_classes,)."""
    return ops.one_hot(tensor, num_classes)


_PAD_MODES = ("constant", "reflect", "replicate", "circular")


def pad(
    input: Tensor, pad: Any, mode: str = "constant", value: float | None = None
) -> Tensor:
    """Pad (or, with negative amounts, crop) the last dimensions: `pad` holds (before,
    after) pairs, last dimension first. mode "constant" fills with `value`; "reflect",
    "replicate" and "circular" read the border from the input (1 to 3 dimensions)."""
    if mode not in _PAD_MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if mode == "constant":
        return ops.constant_pad_nd(input, pad, 0.0 if value is None else value)
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    return pad_by_mode(input, pad, mode)


def dropout(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Zero each element with probability p and scale the others by 1 / (1 - p) while
    training; the input itself otherwise. The mask comes from gradgen's generator
    (gradgen.manual_seed)."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not inplace:
        return ops.dropout(input, p, training)
    if p == 0 or not training or input.numel() == 0:
        return input
    if p == 1:
        return input.mul_(zeros((), dtype=input.dtype))
    return input.mul_(_dropout_noise(input, p))


def normalize(
    input: Tensor,
    p: float = 2.0,
    dim: int = 1,
    eps: float = 1e-12,
    out: Tensor | None = None,
) -> Tensor:
    """input / max(||input||_p, eps) along `dim`."""
    if out is not None:
        raise NotImplementedError("normalize(out=...): gradgen has no out= arguments")
    denom = _vector_norm(input, p, dim).clamp_min(eps).expand_as(input)
    return input / denom
