"""torch.nn's Fold and Unfold."""

from __future__ import annotations

from typing import Any

from gradgen.tensor import Tensor

from .. import functional as F
from .module import Module

__all__ = ["Fold", "Unfold"]


class Fold(Module):
    """Columns (N, C kh kw, L) summed back into an image (N, C, *output_size)."""

    def __init__(
        self,
        output_size: Any,
        kernel_size: Any,
        dilation: Any = 1,
        padding: Any = 0,
        stride: Any = 1,
    ) -> None:
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: Tensor) -> Tensor:
        return F.fold(
            input,
            self.output_size,
            self.kernel_size,
            self.dilation,
            self.padding,
            self.stride,
        )

    def extra_repr(self) -> str:
        return (
            f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
            f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}"
        )


class Unfold(Module):
    """The sliding blocks of (N, C, H, W) as columns (N, C kh kw, L)."""

    def __init__(
        self, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input: Tensor) -> Tensor:
        return F.unfold(
            input, self.kernel_size, self.dilation, self.padding, self.stride
        )

    def extra_repr(self) -> str:
        return (
            f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
            f"padding={self.padding}, stride={self.stride}"
        )
