"""Formula helpers of the resampling family: the double backward of grid sampling.

grid_sampler's output is a sum over taps of the input at constant positions times a
weight that is a polynomial of the fractional pixel coordinate, a piecewise affine
function of the grid. The double backward is written with gradgen operators over
those weights (their first and second derivatives in closed form), so it is itself
differentiable; the tap positions, in-bounds masks and slopes are constants (numpy).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from functools import reduce

import numpy as np

from ..factories import from_numpy, zeros
from ..generated.ops import stack
from ..numpy_kernels.resampling import _CUBIC_A, _Taps
from ..tensor import Tensor

__all__ = ["grid_sampler_2d_double_backward", "grid_sampler_3d_double_backward"]


def _cubic(f: Tensor) -> tuple[list[Tensor], list[Tensor], list[Tensor]]:
    """The four cubic-convolution weights of fraction f and their first and second
    derivatives with respect to f."""
    a = _CUBIC_A

    def near(x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        return (
            ((a + 2) * x - (a + 3)) * x * x + 1,
            (3 * (a + 2) * x - 2 * (a + 3)) * x,
            6 * (a + 2) * x - 2 * (a + 3),
        )

    def far(x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        return (
            ((a * x - 5 * a) * x + 8 * a) * x - 4 * a,
            (3 * a * x - 10 * a) * x + 8 * a,
            6 * a * x - 10 * a,
        )

    taps = [far(f + 1), near(f), near(1 - f), far(2 - f)]
    signs = [1, 1, -1, -1]  # d/df of the argument of each tap's polynomial
    return (
        [t[0] for t in taps],
        [s * t[1] for s, t in zip(signs, taps)],
        [t[2] for t in taps],
    )


def _axis(
    grid_k: Tensor, coordinate: tuple[np.ndarray, ...], mode: int
) -> tuple[Tensor, Tensor, Tensor]:
    """One dimension's tap weights (N, G, T_k) as functions of the grid, and their
    first and second derivatives with respect to the pixel coordinate."""
    grid_np, pixel, slope = coordinate
    if mode == 1:  # nearest: a constant weight of one
        one = grid_k.unsqueeze(-1) * 0 + 1
        return one, one * 0, one * 0
    # the fraction as the grid's affine function: slope * grid + a constant
    offset = pixel - slope * grid_np - np.floor(pixel)
    f = grid_k * from_numpy(np.ascontiguousarray(slope)) + from_numpy(offset)
    if mode == 2:
        w, dw, d2w = _cubic(f)
        return stack(w, -1), stack(dw, -1), stack(d2w, -1)
    zero, one = f * 0, f * 0 + 1
    return stack([1 - f, f], -1), stack([-one, one], -1), stack([zero, zero], -1)


def _spread(t: Tensor, k: int, nd: int) -> Tensor:
    """(N, G, T_k) as (N, G, 1, .., T_k, .., 1) with T_k at tap dimension k."""
    for _ in range(k):
        t = t.unsqueeze(-2)
    for _ in range(nd - 1 - k):
        t = t.unsqueeze(-1)
    return t


def _product(factors: list[Tensor], inside: Tensor) -> Tensor:
    """The outer product over the dimensions' taps, flattened to (N, G, T) and masked."""
    combined: Tensor = reduce(operator.mul, factors)
    return combined.flatten(2) * inside


def _gather(values: Tensor, index: Tensor) -> Tensor:
    """values (N, C, *S) at the flat positions index (N, G, T): (N, C, G, T)."""
    n, c = values.shape[0], values.shape[1]
    g, t = index.shape[1], index.shape[2]
    where = index.view(n, 1, g * t).expand(n, c, g * t)
    return values.flatten(2).gather(2, where).view(n, c, g, t)


def _scatter(contributions: Tensor, index: Tensor, like: Tensor) -> Tensor:
    """The adjoint of `_gather`: (N, C, G, T) added into a tensor shaped like `like`."""
    n, c = like.shape[0], like.shape[1]
    where = index.view(n, 1, -1).expand(n, c, index.shape[1] * index.shape[2])
    total = zeros([n, c, math.prod(like.shape[2:])], dtype=contributions.dtype)
    return total.scatter_add(2, where, contributions.flatten(2)).view(like.shape)


def _double_backward(
    ggI: Tensor | None,
    ggG: Tensor | None,
    gO: Tensor,
    input: Tensor,
    grid: Tensor,
    interpolation_mode: int,
    padding_mode: int,
    align_corners: bool,
    output_mask: Sequence[bool],
) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
    """The gradients of (grad_input, grad_grid) = grid_sampler_backward(gO, input,
    grid) for the cotangents ggI and ggG, with respect to gO, input and grid."""
    taps = _Taps(
        input.detach().numpy(),
        grid.detach().numpy(),
        interpolation_mode,
        padding_mode,
        align_corners,
    )
    nd = input.dim() - 2
    n, c = input.shape[0], input.shape[1]
    index = from_numpy(np.ascontiguousarray(taps.index))
    inside = from_numpy(taps.inside.astype(taps.weight.dtype))
    coords = grid.reshape(n, -1, nd)
    axes = [
        _axis(coords[..., nd - 1 - k], taps.coordinates[k], interpolation_mode)
        for k in range(nd)
    ]
    slopes = [
        from_numpy(np.ascontiguousarray(co[2])).unsqueeze(-1) for co in taps.coordinates
    ]
    w = [_spread(axis[0], k, nd) for k, axis in enumerate(axes)]
    weight = _product(w, inside)

    def derivative(*ks: int) -> Tensor:
        """d^len(ks) weight / d grid_k ... (grid coordinates in spatial order)."""
        factors = list(w)
        for k in set(ks):
            order = ks.count(k)
            factors[k] = _spread(axes[k][order], k, nd)
        scale: Tensor = reduce(operator.mul, [slopes[k] for k in ks])
        return _product(factors, inside) * scale

    go = gO.reshape(n, c, -1, 1)
    values = _gather(input, index)
    grads_go = grads_input = grads_grid = None
    grid_terms = []  # per spatial dimension: d <ggI, gI> + <ggG, gG> / d grid_k
    first = [derivative(k) for k in range(nd)]
    gg = (
        [ggG.reshape(n, -1, nd)[..., nd - 1 - k].unsqueeze(-1) for k in range(nd)]
        if ggG is not None
        else []
    )
    along_gg = reduce(
        operator.add, [g * d for g, d in zip(gg, first)], weight * 0
    )  # (N, G, T)
    if output_mask[0]:
        total = weight * 0 if ggI is None else _gather(ggI, index) * weight.unsqueeze(1)
        total = total + values * along_gg.unsqueeze(1)
        grads_go = total.sum(-1).view(gO.shape)
    if output_mask[1]:
        grads_input = _scatter(go * along_gg.unsqueeze(1), index, input)
    if output_mask[2]:
        picked = None if ggI is None else _gather(ggI, index)
        for j in range(nd):
            term = (go * values).sum(1) * reduce(
                operator.add,
                [g * derivative(k, j) for k, g in enumerate(gg)],
                weight * 0,
            )
            if picked is not None:
                term = term + (go * picked).sum(1) * first[j]
            grid_terms.append(term.sum(-1))
        grads_grid = stack(grid_terms[::-1], -1).view(grid.shape)
    return grads_go, grads_input, grads_grid


def grid_sampler_2d_double_backward(
    ggI: Tensor | None,
    ggG: Tensor | None,
    gO: Tensor,
    input: Tensor,
    grid: Tensor,
    interpolation_mode: int,
    padding_mode: int,
    align_corners: bool,
    output_mask: Sequence[bool],
) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
    """PyTorch's grid_sampler_2d_double_backward."""
    return _double_backward(
        ggI,
        ggG,
        gO,
        input,
        grid,
        interpolation_mode,
        padding_mode,
        align_corners,
        output_mask,
    )


def grid_sampler_3d_double_backward(
    ggI: Tensor | None,
    ggG: Tensor | None,
    gO: Tensor,
    input: Tensor,
    grid: Tensor,
    interpolation_mode: int,
    padding_mode: int,
    align_corners: bool,
    output_mask: Sequence[bool],
) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
    """PyTorch's grid_sampler_3d_double_backward."""
    return _double_backward(
        ggI,
        ggG,
        gO,
        input,
        grid,
        interpolation_mode,
        padding_mode,
        align_corners,
        output_mask,
    )
