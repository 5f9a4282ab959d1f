"""torch.nn.functional.bilinear: y = x1^T A x2 + b, one A per output feature."""

from __future__ import annotations

from gradgen.generated import ops
from gradgen.tensor import Tensor

__all__ = ["bilinear"]


def _check_bilinear(
    input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None
) -> None:
    """ATen's bilinear checks, with its words."""
    if input1.dim() != input2.dim():
        raise RuntimeError(
            "bilinear(): input dimensions do not match: got "
            f"{input1.dim()} and {input2.dim()}"
        )
    for i in range(input1.dim() - 1):
        if input1.size(i) != input2.size(i):
            raise RuntimeError(
                f"bilinear(): input batch dimensions do not match at dim {i}: "
                f"got {input1.size(i)} and {input2.size(i)}"
            )
    for name, x, d in (("input1", input1, 1), ("input2", input2, 2)):
        if x.size(-1) != weight.size(d):
            raise RuntimeError(
                f"bilinear(): {name} size does not match weight size: got "
                f"{x.size(-1)} but expected {weight.size(d)}"
            )
    if bias is not None and bias.size(0) != weight.size(0):
        raise RuntimeError(
            "bilinear(): bias size does not match weight size: got "
            f"{bias.size(0)} but expected {weight.size(0)}"
        )


def bilinear(
    input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None
) -> Tensor:
    """out[..., o] = sum_ij input1[..., i] * weight[o, i, j] * input2[..., j] +
    bias[o] (einsum's backward)."""
    _check_bilinear(input1, input2, weight, bias)
    output = ops.einsum("...i,oij,...j->...o", [input1, weight, input2])
    if bias is not None:
        output = output + bias
    return output
