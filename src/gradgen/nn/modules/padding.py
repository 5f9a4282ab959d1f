"""torch.nn's padding layers: ConstantPad1d/2d/3d, ZeroPad1d/2d/3d, ReflectionPad1d/2d/3d,
ReplicationPad1d/2d/3d and CircularPad1d/2d/3d, F.pad with a fixed padding and mode,
with PyTorch's constructor arguments and repr. A padding given as one number pads both
sides of every padded dimension; a tuple is F.pad's (before, after) pairs, the last
dimension first."""

from __future__ import annotations

from collections.abc import Sequence

from gradgen.tensor import Tensor

from .. import functional as F
from .module import Module
from .utils import _ntuple

__all__ = [
    "ConstantPad1d",
    "ConstantPad2d",
    "ConstantPad3d",
    "ZeroPad1d",
    "ZeroPad2d",
    "ZeroPad3d",
    "ReflectionPad1d",
    "ReflectionPad2d",
    "ReflectionPad3d",
    "ReplicationPad1d",
    "ReplicationPad2d",
    "ReplicationPad3d",
    "CircularPad1d",
    "CircularPad2d",
    "CircularPad3d",
]

IntOrInts = int | Sequence[int]


class _PadNd(Module):
    """F.pad(input, self.padding, self.mode); subclasses set the dimensions."""

    mode = "constant"
    dims = 1

    def __init__(self, padding: IntOrInts) -> None:
        super().__init__()
        self.padding: tuple[int, ...] = _ntuple(2 * self.dims)(padding)

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, self.mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding: IntOrInts, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """The last dimension padded with `value`."""


class ConstantPad2d(_ConstantPadNd):
    """The last two dimensions padded with `value`."""

    dims = 2


class ConstantPad3d(_ConstantPadNd):
    """The last three dimensions padded with `value`."""

    dims = 3


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding: IntOrInts) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class ZeroPad1d(_ZeroPadNd):
    """The last dimension padded with zeros."""


class ZeroPad2d(_ZeroPadNd):
    """The last two dimensions padded with zeros."""

    dims = 2


class ZeroPad3d(_ZeroPadNd):
    """The last three dimensions padded with zeros."""

    dims = 3


class ReflectionPad1d(_PadNd):
    """The last dimension padded with its mirror image (reflection_pad1d)."""

    mode = "reflect"


class ReflectionPad2d(_PadNd):
    """The last two dimensions padded with their mirror image (reflection_pad2d)."""

    mode = "reflect"
    dims = 2


class ReflectionPad3d(_PadNd):
    """The last three dimensions padded with their mirror image (reflection_pad3d)."""

    mode = "reflect"
    dims = 3


class ReplicationPad1d(_PadNd):
    """The last dimension padded with copies of its border (replication_pad1d)."""

    mode = "replicate"


class ReplicationPad2d(_PadNd):
    """The last two dimensions padded with copies of their borders."""

    mode = "replicate"
    dims = 2


class ReplicationPad3d(_PadNd):
    """The last three dimensions padded with copies of their borders."""

    mode = "replicate"
    dims = 3


class _CircularPadNd(_PadNd):
    mode = "circular"

    def forward(self, input: Tensor) -> Tensor:
        if input.dim() not in (self.dims + 1, self.dims + 2):
            raise ValueError(
                f"expected {self.dims + 1}D or {self.dims + 2}D input (got "
                f"{input.dim()}D input)"
            )
        return F.pad(input, self.padding, "circular")


class CircularPad1d(_CircularPadNd):
    """The last dimension padded by wrapping around."""


class CircularPad2d(_CircularPadNd):
    """The last two dimensions padded by wrapping around."""

    dims = 2


class CircularPad3d(_CircularPadNd):
    """The last three dimensions padded by wrapping around."""

    dims = 3
