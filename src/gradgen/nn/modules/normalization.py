"""torch.nn's normalization layers: LayerNorm, GroupNorm, LocalResponseNorm, RMSNorm,
CrossMapLRN2d (batch and
instance normalization are in batchnorm.py and instancenorm.py, as PyTorch's)."""

from __future__ import annotations

from typing import Any

from gradgen.dtypes import int64
from gradgen.factories import ones, tensor, zeros, zeros_like
from gradgen.generated.ops import cat
from gradgen.tensor import Tensor

from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["LayerNorm", "GroupNorm", "LocalResponseNorm", "RMSNorm", "CrossMapLRN2d"]


class LayerNorm(Module):
    """F.layer_norm over the last dimensions, `normalized_shape`, with a learnt
    elementwise weight (initialised to ones) and bias (zeros), as PyTorch's."""

    normalized_shape: tuple[int, ...]
    eps: float
    elementwise_affine: bool
    weight: Parameter | None
    bias: Parameter | None

    def __init__(
        self,
        normalized_shape: int | tuple[int, ...] | list[int],
        eps: float = 1e-5,
        elementwise_affine: bool = True,
        bias: bool = True,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(ones(self.normalized_shape, dtype=dtype))
            if bias:
                self.bias = Parameter(zeros(self.normalized_shape, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return F.layer_norm(
            input, self.normalized_shape, self.weight, self.bias, self.eps
        )

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, "
            f"elementwise_affine={self.elementwise_affine}, "
            f"bias={self.bias is not None}"
        )


class GroupNorm(Module):
    """F.group_norm: the num_channels channels split into num_groups groups, each
    normalized over its channels and spatial elements, with a learnt per-channel
    weight (ones) and bias (zeros) when affine."""

    num_groups: int
    num_channels: int
    eps: float
    affine: bool
    weight: Parameter | None
    bias: Parameter | None

    def __init__(
        self,
        num_groups: int,
        num_channels: int,
        eps: float = 1e-5,
        affine: bool = True,
        device: Any = None,
        dtype: Any = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(
                f"num_channels ({num_channels}) must be divisible by num_groups "
                f"({num_groups})"
            )
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        if affine:
            self.weight = Parameter(ones(num_channels, dtype=dtype))
            if bias:
                self.bias = Parameter(zeros(num_channels, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, input: Tensor) -> Tensor:
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.num_groups}, {self.num_channels}, eps={self.eps}, "
            f"affine={self.affine}, bias={self.bias is not None}"
        )


class LocalResponseNorm(Module):
    """F.local_response_norm over `size` neighbouring channels."""

    def __init__(
        self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0
    ) -> None:
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input: Tensor) -> Tensor:
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class RMSNorm(Module):
    """F.rms_norm over the last dimensions, `normalized_shape`, with a learnt
    elementwise weight (initialised to ones) when elementwise_affine, as PyTorch's."""

    normalized_shape: tuple[int, ...]
    eps: float | None
    elementwise_affine: bool
    weight: Parameter | None

    def __init__(
        self,
        normalized_shape: int | tuple[int, ...] | list[int],
        eps: float | None = None,
        elementwise_affine: bool = True,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(ones(self.normalized_shape, dtype=dtype))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.weight is not None:
            init.ones_(self.weight)

    def forward(self, x: Tensor) -> Tensor:
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, "
            f"elementwise_affine={self.elementwise_affine}"
        )


def _cross_map_windows(channels: int, size: int) -> tuple[list[int], list[int]]:
    """For each channel c, the prefix-sum indices of PyTorch's legacy cross-map
    window: squares of channels 0..upper(c) are added and, once c passes the
    half-width pre_pad, those of channels 1..c - pre_pad taken off again (channel 0
    stays in every window, as in PyTorch's running update)."""
    pre_pad = int((size - 1) / 2 + 1)
    upper = [min(c + pre_pad - 1, channels - 1) + 1 for c in range(channels)]
    lower = [c - pre_pad + 1 if c - pre_pad >= 1 else 1 for c in range(channels)]
    return upper, lower


class CrossMapLRN2d(Module):
    """The legacy local response normalization of a (N, C, H, W) input: x times
    (k + alpha / size * sum of squares over a window of channels)^-beta, with
    PyTorch's window (see _cross_map_windows), as a composite of operators."""

    size: int
    alpha: float
    beta: float
    k: float

    def __init__(
        self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1
    ) -> None:
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input: Tensor) -> Tensor:
        if input.dim() != 4:
            raise ValueError(
                f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D instead."
            )
        channels = input.shape[1]
        upper, lower = _cross_map_windows(channels, self.size)
        squares = input * input
        first = zeros_like(squares.narrow(1, 0, 1))
        prefix = cat([first, squares.cumsum(1)], 1)  # prefix[j]: channels below j
        windows = (
            prefix.index_select(1, tensor(upper, dtype=int64))
            - prefix.index_select(1, tensor(lower, dtype=int64))
            + prefix.narrow(1, 1, 1)
        )
        scale = windows * (self.alpha / self.size) + self.k
        return input * scale.pow(-self.beta)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
