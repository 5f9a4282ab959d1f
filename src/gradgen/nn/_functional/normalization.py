"""torch.nn.functional's normalizations over operators of the normalization family:
batch_norm, instance_norm, group_norm, local_response_norm, rms_norm."""

from __future__ import annotations

from collections.abc import Sequence

from gradgen.generated import ops
from gradgen.tensor import Tensor

__all__ = [
    "batch_norm",
    "instance_norm",
    "group_norm",
    "local_response_norm",
    "rms_norm",
]


def _verify_batch_size(size: Sequence[int]) -> None:
    """Training statistics need more than one value per channel."""
    values = size[0]
    for extent in size[2:]:
        values *= extent
    if values == 1:
        raise ValueError(
            f"Expected more than 1 value per channel when training, got input size {size}"
        )


def _verify_spatial_size(size: Sequence[int]) -> None:
    """Instance statistics need more than one spatial element."""
    values = 1
    for extent in size[2:]:
        values *= extent
    if values == 1:
        raise ValueError(
            "Expected more than 1 spatial element when training, got input size "
            f"{size}"
        )


def batch_norm(
    input: Tensor,
    running_mean: Tensor | None,
    running_var: Tensor | None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Each channel (dimension 1) normalized by the batch statistics (training, which
    also moves the running statistics by `momentum`) or the running ones."""
    if training:
        _verify_batch_size(input.shape)
    return ops.batch_norm(
        input, weight, bias, running_mean, running_var, training, momentum, eps, False
    )


def instance_norm(
    input: Tensor,
    running_mean: Tensor | None = None,
    running_var: Tensor | None = None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    use_input_stats: bool = True,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Each channel of each sample normalized over its own spatial elements."""
    if use_input_stats:
        _verify_spatial_size(input.shape)
    return ops.instance_norm(
        input,
        weight,
        bias,
        running_mean,
        running_var,
        use_input_stats,
        momentum,
        eps,
        False,
    )


def group_norm(
    input: Tensor,
    num_groups: int,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """The channels of each sample split into `num_groups` groups, each normalized over
    its channels and spatial elements; then a per-channel weight and bias."""
    if input.dim() < 2:
        raise RuntimeError(
            "Expected at least 2 dimensions for input tensor but received "
            f"{input.dim()}"
        )
    shape = list(input.shape)
    _verify_batch_size([shape[0] * shape[1] // num_groups, num_groups] + shape[2:])
    return ops.group_norm(input, num_groups, weight, bias, eps)


def local_response_norm(
    input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0
) -> Tensor:
    """input / (k + alpha * mean of the squares over `size` neighbouring channels) **
    beta, the window zero-padded at the ends of the channels."""
    dim = input.dim()
    if dim < 3:
        raise ValueError(
            "Expected 3D or higher dimensionality                          input "
            f"(got {dim} dimensions)"
        )
    if input.numel() == 0:
        return input
    div = input * input
    padding = [size // 2, (size - 1) // 2]
    if dim == 3:
        div = ops.constant_pad_nd(div.unsqueeze(1), [0, 0] + padding)
        div = ops.avg_pool2d(div, [size, 1], [1, 1]).squeeze(1)
    else:
        sizes = tuple(input.shape)
        div = div.reshape((sizes[0], 1, sizes[1], sizes[2], -1))
        div = ops.constant_pad_nd(div, [0, 0, 0, 0] + padding)
        div = ops.avg_pool3d(div, [size, 1, 1], [1, 1, 1]).squeeze(1)
        div = div.reshape(sizes)
    div = (div * alpha + k) ** beta
    return input / div


def rms_norm(
    input: Tensor,
    normalized_shape: Sequence[int],
    weight: Tensor | None = None,
    eps: float | None = None,
) -> Tensor:
    """input / sqrt(mean(input ** 2) + eps) over the last dimensions, normalized_shape,
    times weight (eps None: the machine epsilon of input's dtype)."""
    return ops.rms_norm(input, normalized_shape, weight, eps)
