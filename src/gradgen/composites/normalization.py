"""Composites of the normalization family: layer_norm."""

from __future__ import annotations


from ..tensor import Tensor
from ..generated import ops  # functions read at call time (the generated tie)

__all__ = ["layer_norm"]


def layer_norm(
    input: Tensor,
    normalized_shape: tuple[int, ...],
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-05,
    cudnn_enable: bool = True,
) -> Tensor:
    """The first output of native_layer_norm (NativeLayerNormBackward0)."""
    return ops.native_layer_norm(input, normalized_shape, weight, bias, eps)[0]
