"""Composites of the resampling family: grid_sampler (grid_sampler_2d or _3d by the
input's dimensions) and affine_grid_generator_backward (a product with the constant
base grid, so that it is differentiable again)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..factories import from_numpy
from ..generated import ops  # functions read at call time (the generated tie)
from ..numpy_kernels.resampling import _base_grid
from ..tensor import Tensor

__all__ = [
    "affine_grid_generator_backward",
    "grid_sampler",
]


def grid_sampler(
    input: Tensor,
    grid: Tensor,
    interpolation_mode: int,
    padding_mode: int,
    align_corners: bool,
) -> Tensor:
    """grid_sampler_2d for a 4-d input, grid_sampler_3d for a 5-d one."""
    sampler = ops.grid_sampler_3d if input.dim() == 5 else ops.grid_sampler_2d
    return sampler(input, grid, interpolation_mode, padding_mode, align_corners)


def affine_grid_generator_backward(
    grad: Tensor, size: Sequence[int], align_corners: bool
) -> Tensor:
    """The gradient of affine_grid_generator with respect to theta: the base grid's
    positions (P, nd + 1) transposed times the gradient (N, P, nd), per sample."""
    nd = len(size) - 2
    base = from_numpy(_base_grid(size, align_corners, np.dtype(grad.dtype.numpy)))
    base = base.view(1, -1, nd + 1).expand(size[0], -1, nd + 1)
    return ops.bmm(base.transpose(1, 2), grad.reshape(size[0], -1, nd)).transpose(1, 2)
