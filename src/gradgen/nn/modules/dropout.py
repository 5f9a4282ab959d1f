"""torch.nn's dropout modules: Dropout, Dropout1d, Dropout2d, Dropout3d, AlphaDropout,
FeatureAlphaDropout."""

from __future__ import annotations

from gradgen.tensor import Tensor

from .. import functional as F
from .module import Module

__all__ = [
    "Dropout",
    "Dropout1d",
    "Dropout2d",
    "Dropout3d",
    "AlphaDropout",
    "FeatureAlphaDropout",
]


class _DropoutNd(Module):
    """A dropout with probability `p` (checked in [0, 1]) and an `inplace` flag."""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(
                f"dropout probability has to be between 0 and 1, but got {p}"
            )
        self.p = p
        self.inplace = inplace

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """F.dropout while training (`train()`, the default), the identity after `eval()`."""

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout(input, self.p, self.training, self.inplace)


class Dropout1d(_DropoutNd):
    """F.dropout1d (whole channels of (N, C, L) or (C, L) inputs) while training."""

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    """F.dropout2d (whole channels of (N, C, H, W) inputs) while training."""

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout2d(input, self.p, self.training, self.inplace)


class Dropout3d(_DropoutNd):
    """F.dropout3d (whole channels of (N, C, D, H, W) or (C, D, H, W)) while training."""

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout3d(input, self.p, self.training, self.inplace)


class AlphaDropout(_DropoutNd):
    """F.alpha_dropout while training (as PyTorch's, `inplace` is not used)."""

    def forward(self, input: Tensor) -> Tensor:
        return F.alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(_DropoutNd):
    """F.feature_alpha_dropout while training (as PyTorch's, `inplace` is not used)."""

    def forward(self, input: Tensor) -> Tensor:
        return F.feature_alpha_dropout(input, self.p, self.training)
