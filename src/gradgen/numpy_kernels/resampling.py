"""Kernels of the resampling family: upsampling (nearest, nearest-exact, linear,
bilinear, bicubic, trilinear), pixel_shuffle / pixel_unshuffle, channel_shuffle,
im2col / col2im, affine_grid_generator and grid_sampler_2d / 3d, and their backward
kernels.

Upsampling is separable: each spatial dimension has one interpolation matrix (out, in)
whose rows hold the taps' weights (PyTorch's source-index rules: `align_corners`,
given scales, the clamped cubic taps); the forward applies the matrices along their
dimensions and the backward their transposes. Nearest upsampling gathers (it also
takes integer tensors). grid_sampler gathers its taps with fancy indexing and adds
the gradients back with `np.bincount`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from ._common import _not_implemented_for
from .conv import _fold, _pad_spatial, _windows

__all__ = [
    "upsample",
    "upsample_backward",
    "pixel_shuffle",
    "pixel_unshuffle",
    "channel_shuffle",
    "im2col",
    "col2im",
    "affine_grid_generator",
    "affine_grid_generator_backward",
    "grid_sampler",
    "grid_sampler_backward",
]

_CUBIC_A = -0.75  # PyTorch's bicubic convolution coefficient
_COUNTS = {1: "3", 2: "4", 3: "5"}
_AXES = {1: ("W",), 2: ("H", "W"), 3: ("D", "H", "W")}


# -- upsampling ------------------------------------------------------------------------


def _check_upsample(
    input_size: Sequence[int], output_size: Sequence[int], nd: int
) -> None:
    """PyTorch's upsample_{nd}d_common_check."""
    if len(output_size) != nd:
        raise RuntimeError(
            f"It is expected output_size equals to {nd}, but got size {len(output_size)}"
        )
    if len(input_size) != nd + 2:
        raise RuntimeError(
            f"It is expected input_size equals to {nd + 2}, but got size "
            f"{len(input_size)}"
        )
    spatial = tuple(input_size[2:])
    if min(spatial) <= 0 or min(output_size) <= 0:
        axes = _AXES[nd]
        inputs = ", ".join(f"{a}: {s}" for a, s in zip(axes, spatial))
        outputs = ", ".join(f"{a}: {s}" for a, s in zip(axes, output_size))
        raise RuntimeError(
            "Input and output sizes should be greater than 0, but got input "
            f"({inputs}) output ({outputs})"
        )


def _scale(
    size: int, out: int, align_corners: bool, scale: float | None, dtype: np.dtype
) -> np.floating:
    """PyTorch's area_pixel_compute_scale: input pixels per output pixel."""
    if align_corners:
        return dtype.type((size - 1) / (out - 1) if out > 1 else 0)
    if scale is not None and scale > 0:
        return dtype.type(1.0 / scale)
    return dtype.type(size) / dtype.type(out)


def _nearest_index(size: int, out: int, scale: float | None, exact: bool) -> np.ndarray:
    """PyTorch's nearest_idx / nearest_neighbor_exact_compute_source_index, with its
    float arithmetic."""
    dst = np.arange(out)
    if not exact and out == size:
        return dst
    if not exact and out == 2 * size:
        return dst >> 1
    ratio = _scale(size, out, False, scale, np.dtype(np.float32))
    source = (
        (dst + 0.5) * np.float64(ratio) if exact else dst.astype(np.float32) * ratio
    )
    return np.minimum(np.floor(source.astype(np.float32)).astype(np.int64), size - 1)


def _source(
    ratio: np.floating, out: int, align_corners: bool, cubic: bool
) -> np.ndarray:
    """PyTorch's area_pixel_compute_source_index for every output position."""
    dst = np.arange(out, dtype=ratio.dtype)
    if align_corners:
        return ratio * dst
    source = ratio * (dst + ratio.dtype.type(0.5)) - ratio.dtype.type(0.5)
    return source if cubic else np.maximum(source, 0)


def _linear_taps(
    size: int, out: int, align_corners: bool, scale: float | None, dtype: np.dtype
) -> tuple[np.ndarray, np.ndarray]:
    """The (out, 2) input positions and weights of linear interpolation."""
    if size == out:
        dst = np.arange(out)
        return np.stack([dst, dst], 1), np.tile(np.array([1, 0], dtype), (out, 1))
    ratio = _scale(size, out, align_corners, scale, dtype)
    source = _source(ratio, out, align_corners, cubic=False)
    first = np.minimum(np.floor(source).astype(np.int64), size - 1)
    lam = np.clip(source - first, 0, 1).astype(dtype)
    second = first + (first < size - 1)
    return np.stack([first, second], 1), np.stack([1 - lam, lam], 1)


def _cubic_taps(
    size: int, out: int, align_corners: bool, scale: float | None, dtype: np.dtype
) -> tuple[np.ndarray, np.ndarray]:
    """The (out, 4) clamped input positions and cubic-convolution weights."""
    ratio = _scale(size, out, align_corners, scale, dtype)
    source = _source(ratio, out, align_corners, cubic=True)
    floor = np.floor(source)
    positions = np.clip(floor.astype(np.int64)[:, None] + np.arange(-1, 3), 0, size - 1)
    return positions, _cubic_weights(source - floor)


def _cubic_weights(t: np.ndarray) -> np.ndarray:
    """The four cubic-convolution weights (..., 4) of the fractions `t` (PyTorch's
    get_cubic_upsample_coefficients)."""
    a = _CUBIC_A

    def near(x: np.ndarray) -> np.ndarray:
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x: np.ndarray) -> np.ndarray:
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return np.stack([far(t + 1), near(t), near(1 - t), far(2 - t)], -1).astype(t.dtype)


def _aa_filter(mode: str) -> tuple[int, Callable[[np.ndarray], np.ndarray]]:
    """The anti-aliasing filter of a mode and its width in input pixels at scale 1."""
    if mode == "aa-linear":
        return 2, lambda x: np.maximum(1 - np.abs(x), 0)
    if mode == "aa-cubic":
        a = -0.5  # PyTorch's coefficient for anti-aliased bicubic

        def cubic(x: np.ndarray) -> np.ndarray:
            x = np.abs(x)
            near = ((a + 2) * x - (a + 3)) * x * x + 1
            far = (((x - 5) * x + 8) * x - 4) * a
            return np.where(x < 1, near, np.where(x < 2, far, 0))

        return 4, cubic
    return 6, lambda x: np.where(np.abs(x) < 3, np.sinc(x) * np.sinc(x / 3), 0)


def _aa_matrix(
    size: int, out: int, mode: str, align_corners: bool, scale: float | None
) -> np.ndarray:
    """The (out, size) matrix of anti-aliased resampling: each output pixel a
    normalised filter over the input pixels under its support, the filter stretched
    by the scale when downsampling."""
    width, kernel = _aa_filter(mode)
    ratio = float(_scale(size, out, align_corners, scale, np.dtype(np.float64)))
    support = width * 0.5 * max(ratio, 1.0)
    center = ratio * (np.arange(out) + 0.5)
    low = np.maximum((center - support + 0.5).astype(np.int64), 0)
    high = np.minimum((center + support + 0.5).astype(np.int64), size)
    position = np.arange(size)
    weights = kernel((position - center[:, None] + 0.5) / max(ratio, 1.0))
    inside = (position >= low[:, None]) & (position < high[:, None])
    weights = np.where(inside, weights, 0)
    total = weights.sum(1, keepdims=True)
    return weights / np.where(total == 0, 1, total)


def _matrix(
    size: int,
    out: int,
    mode: str,
    align_corners: bool,
    scale: float | None,
    dtype: np.dtype,
) -> np.ndarray:
    """The (out, size) interpolation matrix of one spatial dimension."""
    if mode.startswith("aa-"):
        return _aa_matrix(size, out, mode, align_corners, scale).astype(dtype)
    matrix = np.zeros((out, size), dtype)
    if mode in ("nearest", "nearest-exact"):
        index = _nearest_index(size, out, scale, mode == "nearest-exact")
        matrix[np.arange(out), index] = 1
        return matrix
    taps = _cubic_taps if mode == "cubic" else _linear_taps
    positions, weights = taps(size, out, align_corners, scale, dtype)
    rows = np.broadcast_to(np.arange(out)[:, None], positions.shape)
    np.add.at(matrix, (rows, positions), weights)
    return matrix


def _along(x: np.ndarray, axis: int, matrix: np.ndarray) -> np.ndarray:
    """`matrix` (m, n) applied along `axis` (of length n) of `x`."""
    return np.moveaxis(np.moveaxis(x, axis, -1) @ matrix.T, -1, axis)


def upsample(
    self: np.ndarray,
    output_size: Sequence[int],
    mode: str,
    align_corners: bool,
    scales: Sequence[float | None],
    nd: int,
) -> np.ndarray:
    """upsample_{mode}{nd}d: `mode` is nearest, nearest-exact, linear or cubic, or
    aa-linear, aa-cubic, aa-lanczos (anti-aliased)."""
    _check_upsample(self.shape, output_size, nd)
    taps = "nearest" if mode.startswith("nearest") else mode.removeprefix("aa-")
    allowed = "fu" if taps == "nearest" else "f"
    if self.dtype.kind not in allowed or self.dtype == np.bool_:
        kernel = f"compute_indices_weights_{taps}"
        if nd == 2 and taps != "cubic":  # PyTorch's 2-d kernels name their own
            kernel = (
                f"upsample_{'bilinear' if taps == 'linear' else taps}2d_channels_last"
            )
        raise _not_implemented_for(kernel, self)
    if taps == "nearest":
        result = self
        for axis, (size, out, scale) in enumerate(
            zip(self.shape[2:], output_size, scales), start=2
        ):
            index = _nearest_index(size, out, scale, mode == "nearest-exact")
            result = np.take(result, index, axis=axis)
        return np.ascontiguousarray(result)
    result = self
    for axis, (size, out, scale) in enumerate(
        zip(self.shape[2:], output_size, scales), start=2
    ):
        matrix = _matrix(size, out, mode, align_corners, scale, self.dtype)
        result = _along(result, axis, matrix)
    return np.ascontiguousarray(result)


def upsample_backward(
    grad_output: np.ndarray,
    output_size: Sequence[int],
    input_size: Sequence[int],
    mode: str,
    align_corners: bool,
    scales: Sequence[float | None],
    nd: int,
) -> np.ndarray:
    """upsample_{mode}{nd}d_backward: each interpolation matrix transposed."""
    _check_upsample(input_size, output_size, nd)
    expected = tuple(input_size[:2]) + tuple(output_size)
    if grad_output.ndim != nd + 2:
        raise RuntimeError(
            f"Expected grad_output to be a tensor of dimension {nd + 2} but got: "
            f"dimension {grad_output.ndim}"
        )
    for dim, (want, got) in enumerate(zip(expected, grad_output.shape)):
        if want != got:
            raise RuntimeError(
                "Expected grad_output to have the same shape as output; "
                f"output.size({dim}) = {want} but got grad_output.size({dim}) = {got}"
            )
    result = grad_output
    for axis, (size, out, scale) in enumerate(
        zip(input_size[2:], output_size, scales), start=2
    ):
        matrix = _matrix(size, out, mode, align_corners, scale, grad_output.dtype)
        result = _along(result, axis, matrix.T)
    return np.ascontiguousarray(result)


# -- shuffles --------------------------------------------------------------------------


def _check_shuffle(name: str, self: np.ndarray, factor: int, what: str) -> None:
    if self.ndim < 3:
        raise RuntimeError(
            f"{name} expects input to have at least 3 dimensions, but got input with "
            f"{self.ndim} dimension(s)"
        )
    if factor <= 0:
        raise RuntimeError(f"{name} expects a positive {what}, but got {factor}")


def pixel_shuffle(self: np.ndarray, upscale_factor: int) -> np.ndarray:
    """(*, C r^2, H, W) -> (*, C, H r, W r)."""
    r = upscale_factor
    _check_shuffle("pixel_shuffle", self, r, "upscale_factor")
    *lead, c, h, w = self.shape
    if c % (r * r):
        raise RuntimeError(
            "pixel_shuffle expects its input's 'channel' dimension to be divisible by "
            f"the square of upscale_factor, but input.size(-3)={c} is not divisible "
            f"by {r * r}"
        )
    n = len(lead)
    x = self.reshape(*lead, c // (r * r), r, r, h, w)
    order = list(range(n + 1)) + [n + 3, n + 1, n + 4, n + 2]
    return np.ascontiguousarray(x.transpose(order)).reshape(
        *lead, c // (r * r), h * r, w * r
    )


def pixel_unshuffle(self: np.ndarray, downscale_factor: int) -> np.ndarray:
    """(*, C, H r, W r) -> (*, C r^2, H, W)."""
    r = downscale_factor
    _check_shuffle("pixel_unshuffle", self, r, "downscale_factor")
    *lead, c, h, w = self.shape
    for what, size, dim in (("height", h, -2), ("width", w, -1)):
        if size % r:
            raise RuntimeError(
                f"pixel_unshuffle expects {what} to be divisible by downscale_factor, "
                f"but input.size({dim})={size} is not divisible by {r}"
            )
    n = len(lead)
    x = self.reshape(*lead, c, h // r, r, w // r, r)
    order = list(range(n + 1)) + [n + 2, n + 4, n + 1, n + 3]
    return np.ascontiguousarray(x.transpose(order)).reshape(
        *lead, c * r * r, h // r, w // r
    )


def channel_shuffle(self: np.ndarray, groups: int) -> np.ndarray:
    """(N, g k, *) -> (N, k g, *): channel i*k + j moves to j*g + i."""
    if self.ndim <= 2:
        raise RuntimeError(
            "channel_shuffle expects input with > 2 dims, but got input with sizes "
            f"{list(self.shape)}"
        )
    if groups <= 0:
        raise RuntimeError(
            "Number of groups to divide channels in must be positive. Value of "
            f"groups:{groups}"
        )
    n, c, *rest = self.shape
    if c % groups:
        raise RuntimeError(
            "Number of channels must be divisible by groups. Got "
            f"{c} channels and {groups} groups."
        )
    x = self.reshape(n, groups, c // groups, *rest).swapaxes(1, 2)
    return np.ascontiguousarray(x).reshape(self.shape)


# -- im2col / col2im -------------------------------------------------------------------


def _check_fold_params(
    kernel_size: Sequence[int],
    dilation: Sequence[int],
    padding: Sequence[int],
    stride: Sequence[int],
) -> None:
    """PyTorch's col2im_shape_check / im2col_shape_check on the parameters."""
    checks = (
        ("kernel size", "greater than zero", "kernel", kernel_size, 0),
        ("dilation", "greater than zero", "dilation", dilation, 0),
        ("padding", "non-negative", "pad", padding, -1),
        ("stride", "greater than zero", "stride", stride, 0),
    )
    for what, rule, short, values, above in checks:
        if min(values) <= above:
            raise RuntimeError(
                f"{what} should be {rule}, but got {short}_height: {values[0]} "
                f"{short}_width: {values[1]}"
            )


def _blocks(
    spatial: Sequence[int],
    kernel_size: Sequence[int],
    dilation: Sequence[int],
    padding: Sequence[int],
    stride: Sequence[int],
) -> tuple[int, int]:
    """The number of sliding blocks along each of the two spatial dimensions."""
    return tuple(  # type: ignore[return-value]
        (s + 2 * p - d * (k - 1) - 1) // st + 1
        for s, k, d, p, st in zip(spatial, kernel_size, dilation, padding, stride)
    )


def im2col(
    self: np.ndarray,
    kernel_size: Sequence[int],
    dilation: Sequence[int],
    padding: Sequence[int],
    stride: Sequence[int],
) -> np.ndarray:
    """(N, C, H, W) -> (N, C kh kw, L): each sliding block as a column."""
    _check_fold_params(kernel_size, dilation, padding, stride)
    if self.ndim not in (3, 4) or 0 in self.shape[1:]:
        raise RuntimeError(
            "Expected 3D or 4D (batch mode) tensor for input with possibly 0 batch "
            f"size and non-zero dimensions for input, but got: {list(self.shape)}"
        )
    x = self if self.ndim == 4 else self[None]
    out = _blocks(x.shape[2:], kernel_size, dilation, padding, stride)
    if min(out) < 1:
        raise RuntimeError(
            f"Given input with spatial size {tuple(x.shape[2:])}, "
            f"kernel_size={tuple(kernel_size)}, dilation={tuple(dilation)}, "
            f"padding={tuple(padding)}, calculated shape of the array of sliding "
            f"blocks as {out}, but its components must be at least one."
        )
    windows = _windows(_pad_spatial(x, padding), out, kernel_size, stride, dilation)
    n, c = x.shape[:2]
    columns = np.ascontiguousarray(windows.transpose(0, 1, 4, 5, 2, 3)).reshape(
        n, c * kernel_size[0] * kernel_size[1], out[0] * out[1]
    )
    return columns if self.ndim == 4 else columns[0]


def col2im(
    self: np.ndarray,
    output_size: Sequence[int],
    kernel_size: Sequence[int],
    dilation: Sequence[int],
    padding: Sequence[int],
    stride: Sequence[int],
) -> np.ndarray:
    """(N, C kh kw, L) -> (N, C, H, W): the columns summed back into the image."""
    _check_fold_params(kernel_size, dilation, padding, stride)
    if self.ndim not in (2, 3) or 0 in self.shape[1:]:
        raise RuntimeError(
            "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch "
            f"size and non-zero dimensions for input, but got: {list(self.shape)}"
        )
    x = self if self.ndim == 3 else self[None]
    block = kernel_size[0] * kernel_size[1]
    if x.shape[1] % block:
        raise RuntimeError(
            "Expected size of input's dimension 1 to be divisible by the product of "
            f"kernel_size, but got input.size(1)={x.shape[1]} and "
            f"kernel_size={tuple(kernel_size)}."
        )
    out = _blocks(output_size, kernel_size, dilation, padding, stride)
    if min(out) < 1 or out[0] * out[1] != x.shape[2]:
        raise RuntimeError(
            f"Given output_size={tuple(output_size)}, kernel_size={tuple(kernel_size)}, "
            f"dilation={tuple(dilation)}, padding={tuple(padding)}, "
            f"stride={tuple(stride)}, expected size of input's dimension 2 to match "
            f"the calculated number of sliding blocks {out[0]} * {out[1]} = "
            f"{out[0] * out[1]}, but got input.size(2)={x.shape[2]}."
        )
    n, c = x.shape[0], x.shape[1] // block
    cols = x.reshape(n, c, *kernel_size, *out).transpose(0, 1, 4, 5, 2, 3)
    padded = [s + 2 * p for s, p in zip(output_size, padding)]
    image = _fold(cols, padded, stride, dilation)
    (ph, pw), (h, w) = padding, output_size
    image = np.ascontiguousarray(image[..., ph : ph + h, pw : pw + w])
    return image if self.ndim == 3 else image[0]


# -- affine grids ----------------------------------------------------------------------


def _base_grid(size: Sequence[int], align_corners: bool, dtype: np.dtype) -> np.ndarray:
    """(*spatial, nd + 1): each output position's normalised (x, y[, z], 1)."""
    if len(size) not in (4, 5):
        raise RuntimeError(
            "AffineGridGenerator needs 4d (spatial) or 5d (volumetric) inputs."
        )
    axes = []
    for n in size[2:]:
        steps = np.linspace(-1, 1, n, dtype=dtype) if n > 1 else np.zeros(n, dtype)
        axes.append(steps if align_corners or n <= 1 else steps * (n - 1) / n)
    mesh = np.meshgrid(*axes, indexing="ij")  # spatial order: [D,] H, W
    ones = np.ones(tuple(size[2:]), dtype)
    return np.stack(list(mesh[::-1]) + [ones], -1).astype(dtype)


def affine_grid_generator(
    theta: np.ndarray, size: Sequence[int], align_corners: bool
) -> np.ndarray:
    """(N, nd, nd + 1) affine matrices -> (N, *spatial, nd) sampling grid."""
    nd = len(size) - 2
    base = _base_grid(size, align_corners, theta.dtype)
    if theta.ndim != 3 or theta.shape != (size[0], nd, nd + 1):
        n, c = theta.shape[:2] if theta.ndim == 3 else (theta.shape[0], 0)
        raise RuntimeError(
            "Expected size for first two dimensions of batch2 tensor to be: "
            f"[{size[0]}, {nd + 1}] but got: [{n}, {c if theta.ndim != 3 else theta.shape[2]}]."
        )
    flat = base.reshape(-1, nd + 1)
    grid = np.einsum("pk,nik->npi", flat, theta)
    return np.ascontiguousarray(grid.reshape(size[0], *size[2:], nd))


def affine_grid_generator_backward(
    grad: np.ndarray, size: Sequence[int], align_corners: bool
) -> np.ndarray:
    """The gradient of affine_grid_generator with respect to theta."""
    nd = len(size) - 2
    base = _base_grid(size, align_corners, grad.dtype).reshape(-1, nd + 1)
    return np.einsum("pk,npi->nik", base, grad.reshape(size[0], -1, nd))


# -- grid sampling ---------------------------------------------------------------------

_MODES = ("bilinear", "nearest", "bicubic")
_PADDINGS = ("zeros", "border", "reflection")


def _check_grid(input: np.ndarray, grid: np.ndarray, mode: int) -> None:
    """PyTorch's grid_sampler checks."""
    nd = input.ndim - 2
    if grid.shape[-1] != grid.ndim - 2:
        raise RuntimeError(
            f"grid_sampler(): expected grid to have size {grid.ndim - 2} in last "
            f"dimension, but got grid with sizes {list(grid.shape)}"
        )
    if input.ndim != grid.ndim or input.ndim not in (4, 5):
        raise RuntimeError(
            f"grid_sampler(): expected {input.ndim}D input and grid with same number "
            f"of dimensions, but got input with sizes {list(input.shape)} and grid "
            f"with sizes {list(grid.shape)}"
        )
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(
            "grid_sampler(): expected grid and input to have same batch size, but "
            f"got input with sizes {list(input.shape)} and grid with sizes "
            f"{list(grid.shape)}"
        )
    for dim in range(2, input.ndim):
        if input.shape[dim] == 0:
            raise RuntimeError(
                "grid_sampler(): expected input to have non-empty spatial dimensions, "
                f"but input has sizes {list(input.shape)} with dimension {dim} being "
                "empty"
            )
    if mode == 2 and nd != 2:
        raise RuntimeError(
            "grid_sampler(): bicubic interpolation only supports 4D input"
        )


def _reflect(
    x: np.ndarray, twice_low: int, twice_high: int
) -> tuple[np.ndarray, np.ndarray]:
    """PyTorch's reflect_coordinates_set_grad: the reflected coordinate and dx'/dx."""
    if twice_low == twice_high:
        return np.zeros_like(x), np.zeros_like(x)
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    shifted = x - low
    sign = np.where(shifted < 0, -1, 1).astype(x.dtype)
    shifted = np.abs(shifted)
    extra = np.fmod(shifted, span)
    even = np.floor(shifted / span) % 2 == 0
    value = np.where(even, extra + low, span - extra + low)
    return value.astype(x.dtype), np.where(even, sign, -sign)


def _clip(x: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """PyTorch's clip_coordinates_set_grad (the borders count as outside)."""
    inside = (x > 0) & (x < size - 1)
    return np.clip(x, 0, size - 1), inside.astype(x.dtype)


def _pad_coordinate(
    x: np.ndarray, size: int, padding: int, align_corners: bool
) -> tuple[np.ndarray, np.ndarray]:
    """A pixel coordinate through the padding mode, and its derivative."""
    if padding == 0:
        return x, np.ones_like(x)
    grad = np.ones_like(x)
    if padding == 2:
        low, high = (0, 2 * (size - 1)) if align_corners else (-1, 2 * size - 1)
        x, grad = _reflect(x, low, high)
    x, clip_grad = _clip(x, size)
    return x, grad * clip_grad


def _unnormalize(
    coord: np.ndarray, size: int, align_corners: bool
) -> tuple[np.ndarray, float]:
    """A grid coordinate in [-1, 1] as a pixel coordinate, and the derivative."""
    if align_corners:
        return (coord + 1) / 2 * (size - 1), (size - 1) / 2
    return ((coord + 1) * size - 1) / 2, size / 2


class _Taps:
    """The taps of every output position: flat input positions (N, G, T), weights
    (N, G, T), in-bounds masks, and d weight / d coordinate per spatial dimension."""

    def __init__(
        self,
        input: np.ndarray,
        grid: np.ndarray,
        mode: int,
        padding: int,
        align_corners: bool,
    ) -> None:
        nd = input.ndim - 2
        sizes = input.shape[2:]
        n = grid.shape[0]
        coords = grid.reshape(n, -1, nd)[..., ::-1]  # spatial order [D,] H, W
        per_axis = []
        # per dimension: the grid coordinate, the pixel coordinate the weights are
        # polynomials of, and d pixel / d grid (for the double backward's formulas)
        self.coordinates: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        for k, size in enumerate(sizes):
            pixel, scale = _unnormalize(coords[..., k], size, align_corners)
            if mode == 2:
                per_axis.append(self._cubic(pixel, size, padding, align_corners, scale))
                slope = np.full_like(pixel, scale)
            else:
                pixel, grad = _pad_coordinate(pixel, size, padding, align_corners)
                slope = grad * scale
                if mode == 1:
                    per_axis.append(self._nearest(pixel, size))
                else:
                    per_axis.append(self._linear(pixel, size, slope))
            self.coordinates.append((coords[..., k], pixel, slope))
        self._combine(per_axis, sizes)

    @staticmethod
    def _nearest(pixel: np.ndarray, size: int) -> tuple[np.ndarray, ...]:
        index = np.rint(pixel)
        weight = np.ones(pixel.shape + (1,), pixel.dtype)
        return index[..., None], weight, np.zeros_like(weight)

    @staticmethod
    def _linear(
        pixel: np.ndarray, size: int, grad: np.ndarray
    ) -> tuple[np.ndarray, ...]:
        first = np.floor(pixel)
        frac = (pixel - first)[..., None]
        index = first[..., None] + np.array([0, 1])
        weight = np.concatenate([1 - frac, frac], -1)
        slope = np.stack([-grad, grad], -1)
        return index, weight, slope

    @staticmethod
    def _cubic(
        pixel: np.ndarray, size: int, padding: int, align_corners: bool, scale: float
    ) -> tuple[np.ndarray, ...]:
        first = np.floor(pixel)
        t = pixel - first
        index, _ = _pad_coordinate(
            first[..., None] + np.arange(-1, 3), size, padding, align_corners
        )
        return index, _cubic_weights(t), _cubic_slopes(t) * scale

    def _combine(
        self, per_axis: list[tuple[np.ndarray, ...]], sizes: Sequence[int]
    ) -> None:
        """The outer product of the axes' taps, flattened to (N, G, T)."""
        nd = len(sizes)
        n, g = per_axis[0][0].shape[:2]

        def spread(a: np.ndarray, k: int) -> np.ndarray:
            return a.reshape((n, g) + (1,) * k + (-1,) + (1,) * (nd - 1 - k))

        flat: np.ndarray = np.zeros((n, g) + (1,) * nd, np.int64)
        inside: np.ndarray = np.ones((n, g) + (1,) * nd, bool)
        weights, slopes = [], []
        for k, (index, axis_weight, slope) in enumerate(per_axis):
            index = spread(index.astype(np.int64), k)
            inside = inside & (index >= 0) & (index < sizes[k])
            flat = flat * sizes[k] + np.clip(index, 0, sizes[k] - 1)
            weights.append(spread(axis_weight, k))
            slopes.append(spread(slope, k))
        weight: np.ndarray = np.prod(np.broadcast_arrays(*weights), axis=0)
        self.inside = np.broadcast_to(inside, weight.shape).reshape(n, g, -1)
        self.index = np.broadcast_to(flat, weight.shape).reshape(n, g, -1)
        self.weight = (weight * inside).reshape(n, g, -1)
        self.slopes = [
            (
                np.prod(
                    np.broadcast_arrays(*weights[:k], slopes[k], *weights[k + 1 :]),
                    axis=0,
                )
                * inside
            ).reshape(n, g, -1)
            for k in range(nd)
        ]


def _cubic_slopes(t: np.ndarray) -> np.ndarray:
    """d/dt of the four cubic-convolution weights of `_cubic_weights`."""
    a = _CUBIC_A

    def near(x: np.ndarray) -> np.ndarray:
        return (3 * (a + 2) * x - 2 * (a + 3)) * x

    def far(x: np.ndarray) -> np.ndarray:
        return (3 * a * x - 10 * a) * x + 8 * a

    return np.stack([far(t + 1), near(t), -near(1 - t), -far(2 - t)], -1).astype(
        t.dtype
    )


def _gather(input: np.ndarray, index: np.ndarray) -> np.ndarray:
    """input (N, C, *S) at flat spatial positions index (N, G, T): (N, C, G, T)."""
    n, c = input.shape[:2]
    flat = input.reshape(n, c, -1)
    taken = flat[np.arange(n)[:, None, None], :, index]  # (N, G, T, C)
    return np.moveaxis(taken, -1, 1)


def grid_sampler(
    input: np.ndarray,
    grid: np.ndarray,
    interpolation_mode: int,
    padding_mode: int,
    align_corners: bool,
) -> np.ndarray:
    """grid_sampler_2d / 3d: input (N, C, *S) sampled at grid (N, *G, nd)."""
    _check_grid(input, grid, interpolation_mode)
    taps = _Taps(input, grid, interpolation_mode, padding_mode, align_corners)
    values = _gather(input, taps.index)
    out = np.einsum("ncgt,ngt->ncg", values, taps.weight.astype(input.dtype))
    return np.ascontiguousarray(out.reshape(input.shape[:2] + grid.shape[1:-1]))


def grid_sampler_backward(
    grad_output: np.ndarray,
    input: np.ndarray,
    grid: np.ndarray,
    interpolation_mode: int,
    padding_mode: int,
    align_corners: bool,
    output_mask: Sequence[bool],
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """The gradients of grid_sampler with respect to input and grid."""
    _check_grid(input, grid, interpolation_mode)
    taps = _Taps(input, grid, interpolation_mode, padding_mode, align_corners)
    n, c = input.shape[:2]
    grad = grad_output.reshape(n, c, -1)
    grad_input = grad_grid = None
    if output_mask[0]:
        contributions = np.einsum("ncg,ngt->ncgt", grad, taps.weight)
        positions = math.prod(input.shape[2:])
        where = (np.arange(n * c).reshape(n, c, 1, 1) * positions) + taps.index[:, None]
        summed = np.bincount(
            where.ravel(), contributions.ravel(), minlength=n * c * positions
        )
        grad_input = summed.reshape(input.shape).astype(input.dtype)
    if output_mask[1]:
        values = _gather(input, taps.index)
        per_axis = [
            np.einsum("ncg,ncgt,ngt->ng", grad, values, slope) for slope in taps.slopes
        ]
        grad_grid = np.stack(per_axis[::-1], -1).reshape(grid.shape).astype(grid.dtype)
    return grad_input, grad_grid
