"""Composites of the pooling family: the 1d poolings (PyTorch's CompositeImplicitAutograd
functions over the 2d ones, through a height of one), max_pool2d/3d (the values of
max_pool*_with_indices) and adaptive_avg_pool2d/3d (a mean for a 1x1 output, else
_adaptive_avg_pool*)."""

from __future__ import annotations

from collections.abc import Sequence

from ..tensor import Tensor
from ..generated import ops  # functions read at call time (the generated tie)

__all__ = [
    "max_pool1d_with_indices",
    "max_pool1d",
    "max_pool2d",
    "max_pool3d",
    "avg_pool1d",
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool3d",
    "adaptive_max_pool1d",
]


def _check_dims(self: Tensor, name: str) -> None:
    """PyTorch's checkDimRange(2, 4) for the 1d poolings."""
    if self.dim() not in (2, 3):
        raise RuntimeError(
            f"Expected 2 to 3 dimensions, but got {self.dim()}-dimensional tensor for "
            f"argument #1 'self' (while checking arguments for {name})"
        )


def _check1d(name: str, argument: str, values: Sequence[int]) -> None:
    if len(values) != 1:
        raise RuntimeError(
            f"{name}() argument '{argument}' should contain one int (got {len(values)})"
        )


def _height_one(values: Sequence[int], fill: int) -> list[int]:
    """A 1d parameter as the 2d one over a height of one."""
    return [fill, *values] if values else []


def max_pool1d_with_indices(
    self: Tensor,
    kernel_size: Sequence[int],
    stride: Sequence[int] = (),
    padding: Sequence[int] = (0,),
    dilation: Sequence[int] = (1,),
    ceil_mode: bool = False,
) -> tuple[Tensor, Tensor]:
    """max_pool2d_with_indices over a height of one (indices count along the length)."""
    _check_dims(self, "max_pool1d")
    _check1d("max_pool1d", "kernel_size", kernel_size)
    if stride:
        _check1d("max_pool1d", "stride", stride)
    _check1d("max_pool1d", "padding", padding)
    _check1d("max_pool1d", "dilation", dilation)
    values, indices = ops.max_pool2d_with_indices(
        self.unsqueeze(-2),
        _height_one(kernel_size, 1),
        _height_one(stride or kernel_size, 1),
        _height_one(padding, 0),
        _height_one(dilation, 1),
        ceil_mode,
    )
    return values.squeeze(-2), indices.squeeze(-2)


def max_pool1d(
    self: Tensor,
    kernel_size: Sequence[int],
    stride: Sequence[int] = (),
    padding: Sequence[int] = (0,),
    dilation: Sequence[int] = (1,),
    ceil_mode: bool = False,
) -> Tensor:
    """The values of max_pool1d_with_indices."""
    if self.dim() not in (2, 3):
        raise RuntimeError(
            "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim "
            f"batch size for input, but got:{list(self.shape)}"
        )
    if len(kernel_size) != 1:
        raise RuntimeError(
            "max_pool1d() kernel_size must be an int, list of ints or tuple of ints of "
            f"size 1 but got size {len(kernel_size)}"
        )
    return max_pool1d_with_indices(
        self, kernel_size, stride, padding, dilation, ceil_mode
    )[0]


def max_pool2d(
    self: Tensor,
    kernel_size: Sequence[int],
    stride: Sequence[int] = (),
    padding: Sequence[int] = (0, 0),
    dilation: Sequence[int] = (1, 1),
    ceil_mode: bool = False,
) -> Tensor:
    """The values of max_pool2d_with_indices (MaxPool2DWithIndicesBackward0)."""
    return ops.max_pool2d_with_indices(
        self, kernel_size, stride, padding, dilation, ceil_mode
    )[0]


def max_pool3d(
    self: Tensor,
    kernel_size: Sequence[int],
    stride: Sequence[int] = (),
    padding: Sequence[int] = (0, 0, 0),
    dilation: Sequence[int] = (1, 1, 1),
    ceil_mode: bool = False,
) -> Tensor:
    """The values of max_pool3d_with_indices (MaxPool3DWithIndicesBackward0)."""
    return ops.max_pool3d_with_indices(
        self, kernel_size, stride, padding, dilation, ceil_mode
    )[0]


def avg_pool1d(
    self: Tensor,
    kernel_size: Sequence[int],
    stride: Sequence[int] = (),
    padding: Sequence[int] = (0,),
    ceil_mode: bool = False,
    count_include_pad: bool = True,
) -> Tensor:
    """avg_pool2d over a height of one."""
    _check_dims(self, "avg_pool1d")
    _check1d("avg_pool1d", "kernel_size", kernel_size)
    if stride:
        _check1d("avg_pool1d", "stride", stride)
    _check1d("avg_pool1d", "padding", padding)
    output = ops.avg_pool2d(
        self.unsqueeze(-2),
        _height_one(kernel_size, 1),
        _height_one(stride or kernel_size, 1),
        _height_one(padding, 0),
        ceil_mode,
        count_include_pad,
    )
    return output.squeeze(-2)


def adaptive_avg_pool1d(self: Tensor, output_size: Sequence[int]) -> Tensor:
    """adaptive_avg_pool2d over a height of one."""
    _check_dims(self, "adaptive_avg_pool1d")
    _check1d("adaptive_avg_pool1d", "output_size", output_size)
    output = adaptive_avg_pool2d(self.unsqueeze(-2), _height_one(output_size, 1))
    return output.squeeze(-2)


def _adaptive_avg(self: Tensor, output_size: Sequence[int], nd: int) -> Tensor:
    if len(output_size) in (1, nd) and all(o == 1 for o in output_size):
        # A 1x1 output is the mean over the spatial dimensions (MeanBackward1).
        if self.dim() in (nd + 1, nd + 2) and 0 not in self.shape[-nd:]:
            return self.mean(list(range(-nd, 0)), True)
    operator = getattr(ops, f"_adaptive_avg_pool{nd}d")
    return operator(self, output_size)  # type: ignore[no-any-return]


def adaptive_avg_pool2d(self: Tensor, output_size: Sequence[int]) -> Tensor:
    """_adaptive_avg_pool2d, or a mean for a 1x1 output (as PyTorch)."""
    return _adaptive_avg(self, output_size, 2)


def adaptive_avg_pool3d(self: Tensor, output_size: Sequence[int]) -> Tensor:
    """_adaptive_avg_pool3d, or a mean for a 1x1x1 output (as PyTorch)."""
    return _adaptive_avg(self, output_size, 3)


def adaptive_max_pool1d(
    self: Tensor, output_size: Sequence[int]
) -> tuple[Tensor, Tensor]:
    """adaptive_max_pool2d over a height of one."""
    _check_dims(self, "adaptive_max_pool1d")
    _check1d("adaptive_max_pool1d", "output_size", output_size)
    values, indices = ops.adaptive_max_pool2d(
        self.unsqueeze(-2), _height_one(output_size, 1)
    )
    return values.squeeze(-2), indices.squeeze(-2)
