"""torch.nn.LinearCrossEntropyLoss and LinearCrossEntropyOptions: a linear layer
followed by the cross entropy, as one loss (F.linear_cross_entropy)."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from gradgen import dtypes
from gradgen.tensor import Tensor

from .. import functional as F
from .linear import Linear
from .loss import _WeightedLoss

__all__ = ["LinearCrossEntropyLoss", "LinearCrossEntropyOptions"]

_ACC_POLICIES = ("auto", "accurate", "balanced", "compact")
_ACC_DTYPES = (dtypes.float16, dtypes.float32, dtypes.float64) + (
    (dtypes.bfloat16,) if dtypes.HAS_BFLOAT16 else ()  # bfloat16 needs ml_dtypes
)


@dataclasses.dataclass(slots=True, frozen=True)
class LinearCrossEntropyOptions:
    """PyTorch's settings of its chunked linear_cross_entropy, checked as PyTorch
    checks them. gradgen computes the reference path whatever they say (the chunked
    path gives the same numbers; it saves memory on large vocabularies)."""

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: str = "auto"
    acc_dtype: Any = None

    def __post_init__(self) -> None:
        if self.acc_policy not in _ACC_POLICIES:
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}")
        method = self.chunking_method
        if method is not None and method != "auto":
            name, sep, factor = method.partition(":")
            factor = factor if sep else "1"
            if not (name == "aspect_ratio" and factor.isdigit() and int(factor) > 0):
                raise ValueError(f"invalid chunking_method: {method!r}")
        size = self.batch_chunk_size
        if not (size is None or (isinstance(size, int) and size > 0)):
            raise ValueError(
                f"batch_chunk_size must be positive int or None, got {size!r}"
            )
        if self.acc_dtype is not None and self.acc_dtype not in _ACC_DTYPES:
            raise ValueError(
                "acc_dtype must be one of {None, torch.float16, torch.bfloat16, "
                f"torch.float32, torch.float64}}, got {self.acc_dtype!r}. Pass "
                "acc_dtype=None to let the op pick automatically."
            )


class LinearCrossEntropyLoss(_WeightedLoss):
    """F.linear_cross_entropy with a Linear(in_features, num_classes *
    prod(out_features)) whose weight is read as (num_classes, *out_features,
    in_features)."""

    def __init__(
        self,
        in_features: int,
        num_classes: int,
        *,
        out_features: tuple[int, ...] = (),
        bias: bool = False,
        device: Any = None,
        dtype: Any = None,
        reduction: str = "mean",
        weight: Tensor | None = None,
        ignore_index: int | None = None,
        label_smoothing: float = 0.0,
        options: LinearCrossEntropyOptions | None = None,
    ) -> None:
        if weight is not None and tuple(weight.shape) != (num_classes,):
            raise RuntimeError(
                f"expected weight shape to be {(num_classes,)}, got "
                f"{tuple(weight.shape)}"
            )
        if label_smoothing < 0 or label_smoothing > 1.0:
            raise RuntimeError(
                f"expected label_smoothing to be in range [0, 1], got {label_smoothing}"
            )
        super().__init__(weight=weight, reduction=reduction)
        self.num_classes = num_classes
        self.out_features = out_features
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing
        rows = math.prod(out_features, start=num_classes)
        self.linear = Linear(in_features, rows, bias=bias, dtype=dtype)
        self.options = options

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        shape = (self.num_classes, *self.out_features)
        bias = self.linear.bias
        return F.linear_cross_entropy(
            input,
            self.linear.weight.reshape(*shape, self.linear.in_features),
            target,
            linear_bias=None if bias is None else bias.reshape(shape),
            weight=self.weight,
            reduction=self.reduction,
            ignore_index=self.ignore_index,
            label_smoothing=self.label_smoothing,
            options=self.options,
        )

    def extra_repr(self) -> str:
        return (
            f"in_features={self.linear.in_features}, num_classes={self.num_classes}, "
            f"out_features={self.out_features}, bias={self.linear.bias is not None}, "
            f"reduction={self.reduction}, ignore_index={self.ignore_index}, "
            f"label_smoothing={self.label_smoothing}, options={self.options}"
        )
