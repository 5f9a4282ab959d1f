"""torch.nn.functional's resampling: interpolate (nearest, nearest-exact, linear,
bilinear, bicubic, trilinear, area), the deprecated upsample / upsample_nearest /
upsample_bilinear, grid_sample, affine_grid, unfold / fold, pixel_shuffle /
pixel_unshuffle and channel_shuffle, with PyTorch's signatures and argument checks,
calling gradgen's resampling operators."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

from gradgen.generated import ops
from gradgen.tensor import Tensor

__all__ = [
    "interpolate",
    "upsample",
    "upsample_nearest",
    "upsample_bilinear",
    "grid_sample",
    "affine_grid",
    "unfold",
    "fold",
    "pixel_shuffle",
    "pixel_unshuffle",
    "channel_shuffle",
]

pixel_shuffle = ops.pixel_shuffle
pixel_unshuffle = ops.pixel_unshuffle
channel_shuffle = ops.channel_shuffle

_INTERPOLATING = "linear | bilinear | bicubic | trilinear"
# (mode, input dimensions) -> (operator, whether it takes align_corners)
_UPSAMPLERS = {
    ("nearest", 3): ("upsample_nearest1d", False),
    ("nearest", 4): ("upsample_nearest2d", False),
    ("nearest", 5): ("upsample_nearest3d", False),
    ("nearest-exact", 3): ("_upsample_nearest_exact1d", False),
    ("nearest-exact", 4): ("_upsample_nearest_exact2d", False),
    ("nearest-exact", 5): ("_upsample_nearest_exact3d", False),
    ("linear", 3): ("upsample_linear1d", True),
    ("bilinear", 4): ("upsample_bilinear2d", True),
    ("bicubic", 4): ("upsample_bicubic2d", True),
    ("trilinear", 5): ("upsample_trilinear3d", True),
}
_NEEDS = {"linear": 3, "bilinear": 4, "trilinear": 5}


def _sizes(
    input: Tensor, size: Any, scale_factor: Any, dim: int
) -> tuple[list[int] | None, list[float] | None]:
    """The output size or the scale factors, one per spatial dimension."""
    spatial = list(input.shape[2:])
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if not isinstance(size, (list, tuple)):
            return [size] * dim, None
        if len(size) != dim:
            raise ValueError(
                "Input and output must have the same number of spatial dimensions, "
                f"but got input with spatial dimensions of {spatial} and output size "
                f"of {size}. Please provide input tensor in (N, C, d1, d2, ...,dK) "
                "format and output size in (o1, o2, ...,oK) format."
            )
        if not all(isinstance(s, int) and not isinstance(s, bool) for s in size):
            raise TypeError(
                "expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                "Tuple[int, int, int], but got size with types "
                f"{[type(s) for s in size]}"
            )
        return list(size), None
    if scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    if not isinstance(scale_factor, (list, tuple)):
        return None, [scale_factor] * dim
    if len(scale_factor) != dim:
        raise ValueError(
            "Input and scale_factor must have the same number of spatial dimensions, "
            f"but got input with spatial dimensions of {spatial} and scale_factor of "
            f"shape {scale_factor}. Please provide input tensor in (N, C, d1, d2, "
            "...,dK) format and scale_factor in (s1, s2, ...,sK) format."
        )
    return None, list(scale_factor)


def _check_mode(mode: str, align_corners: bool | None) -> bool:
    """align_corners only with the interpolating modes (False by default there)."""
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError(
                "align_corners option can only be set with the interpolating modes: "
                + _INTERPOLATING
            )
        return False
    return bool(align_corners)


def interpolate(
    input: Tensor,
    size: Any = None,
    scale_factor: Any = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
    recompute_scale_factor: bool | None = None,
    antialias: bool = False,
) -> Tensor:
    """Resize `input` (N, C, *spatial) to `size`, or by `scale_factor`."""
    corners = _check_mode(mode, align_corners)
    dim = input.dim() - 2
    output_size, scales = _sizes(input, size, scale_factor, dim)
    if recompute_scale_factor and size is not None:
        raise ValueError(
            "recompute_scale_factor is not meaningful with an explicit size."
        )
    if mode == "area" and output_size is None:
        recompute_scale_factor = True
    if recompute_scale_factor and scales is not None:
        output_size = [
            math.floor(float(input.shape[i + 2] * scales[i])) for i in range(dim)
        ]
        scales = None
    if antialias and not (
        mode in ("bilinear", "bicubic", "lanczos") and input.dim() == 4
    ):
        raise ValueError(
            "Anti-alias option is restricted to bilinear, bicubic, and lanczos modes "
            "and requires a 4-D tensor as input"
        )
    if mode == "lanczos" and input.dim() == 4:
        if corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
    if mode == "area" and 3 <= input.dim() <= 5:
        assert output_size is not None
        pools = (
            ops.adaptive_avg_pool1d,
            ops.adaptive_avg_pool2d,
            ops.adaptive_avg_pool3d,
        )
        return pools[dim - 1](input, output_size)
    found = _UPSAMPLERS.get((mode, input.dim()))
    if antialias:
        found = (f"_upsample_{mode}2d_aa", True)
    if found is None:
        if mode in _NEEDS and 3 <= input.dim() <= 5:
            raise NotImplementedError(
                f"Got {input.dim()}D input, but {mode} mode needs {_NEEDS[mode]}D input"
            )
        raise NotImplementedError(
            "Input Error: Only 3D, 4D and 5D input Tensors supported"
            f" (got {input.dim()}D) for the modes: nearest | linear | bilinear | "
            f"bicubic | trilinear | lanczos | area | nearest-exact (got {mode})"
        )
    name, takes_corners = found
    if output_size is None:  # the .vec overloads: sizes from the scales
        assert scales is not None
        output_size = [int(s * f) for s, f in zip(input.shape[2:], scales)]
    extra: list[Any] = [corners] if takes_corners else []
    given: Sequence[float | None] = scales if scales is not None else [None] * dim
    result: Tensor = getattr(ops, name)(input, output_size, *extra, *given)
    return result


def upsample(
    input: Tensor,
    size: Any = None,
    scale_factor: Any = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
) -> Tensor:
    """Deprecated: interpolate."""
    warnings.warn(
        "`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` "
        "instead.",
        stacklevel=2,
    )
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(
    input: Tensor, size: Any = None, scale_factor: Any = None
) -> Tensor:
    """Deprecated: interpolate(mode="nearest")."""
    warnings.warn(
        "`nn.functional.upsample_nearest` is deprecated. Use "
        "`nn.functional.interpolate` instead.",
        stacklevel=2,
    )
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(
    input: Tensor, size: Any = None, scale_factor: Any = None
) -> Tensor:
    """Deprecated: interpolate(mode="bilinear", align_corners=True)."""
    warnings.warn(
        "`nn.functional.upsample_bilinear` is deprecated. Use "
        "`nn.functional.interpolate` instead.",
        stacklevel=2,
    )
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


_ALIGN_WARNING = (
    "Default grid_sample and affine_grid behavior has changed to align_corners=False "
    "since 1.3.0. Please specify align_corners=True if the old behavior is desired. "
    "See the documentation of grid_sample for details."
)


def grid_sample(
    input: Tensor,
    grid: Tensor,
    mode: str = "bilinear",
    padding_mode: str = "zeros",
    align_corners: bool | None = None,
) -> Tensor:
    """Sample `input` (N, C, *spatial) at the normalised positions of `grid`."""
    modes = {"bilinear": 0, "nearest": 1, "bicubic": 2}
    paddings = {"zeros": 0, "border": 1, "reflection": 2}
    if mode not in modes:
        raise ValueError(
            "nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' "
            f"or 'bicubic', but got: '{mode}'"
        )
    if padding_mode not in paddings:
        raise ValueError(
            "nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
            f"'border', or 'reflection', but got: '{padding_mode}'"
        )
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    return ops.grid_sampler(
        input, grid, modes[mode], paddings[padding_mode], align_corners
    )


def affine_grid(
    theta: Tensor, size: Sequence[int], align_corners: bool | None = None
) -> Tensor:
    """The sampling grid of the affine maps `theta` (N, 2, 3) or (N, 3, 4)."""
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(
            f"Expected theta to have floating point type, but got {theta.dtype}"
        )
    shapes = {4: (2, 3, "2D", "Nx2x3"), 5: (3, 4, "3D", "Nx3x4")}
    if len(size) not in shapes:
        raise NotImplementedError(
            "affine_grid only supports 4D and 5D sizes, for 2D and 3D affine "
            f"transforms, respectively. Got size {size}."
        )
    rows, columns, kind, shape = shapes[len(size)]
    if theta.dim() != 3 or tuple(theta.shape[-2:]) != (rows, columns):
        raise ValueError(
            f"Expected a batch of {kind} affine matrices of shape {shape} for size "
            f"{size}. Got {theta.shape}."
        )
    if align_corners and min(size[2:]) == 1:
        warnings.warn(
            "Since version 1.3.0, affine_grid behavior has changed for unit-size "
            "grids when align_corners=True. This is not an intended use case of "
            "affine_grid. See the documentation of affine_grid for details.",
            stacklevel=2,
        )
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    return ops.affine_grid_generator(theta, list(size), align_corners)


def _pair(value: Any) -> list[int]:
    return list(value) if isinstance(value, (list, tuple)) else [value, value]


def unfold(
    input: Tensor,
    kernel_size: Any,
    dilation: Any = 1,
    padding: Any = 0,
    stride: Any = 1,
) -> Tensor:
    """The sliding blocks of `input` (N, C, H, W) as columns (N, C kh kw, L)."""
    return ops.im2col(
        input, _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride)
    )


def fold(
    input: Tensor,
    output_size: Any,
    kernel_size: Any,
    dilation: Any = 1,
    padding: Any = 0,
    stride: Any = 1,
) -> Tensor:
    """Columns (N, C kh kw, L) summed back into an image (N, C, *output_size)."""
    return ops.col2im(
        input,
        _pair(output_size),
        _pair(kernel_size),
        _pair(dilation),
        _pair(padding),
        _pair(stride),
    )
