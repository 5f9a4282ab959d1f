"""Kernels of the pooling family: max pooling with indices (dilation, ceil_mode),
average pooling (count_include_pad, divisor_override), adaptive average and max
pooling, 2d and 3d (the 1d forms are composites over the 2d ones), and their
backward kernels.

Windows are strided views of the (padded) input (`conv._windows`); a backward adds the
gradients back with one strided addition per kernel offset (`conv._fold`), or, for max
pooling, with one `np.bincount` over the saved flat indices. Adaptive average pooling
is a product with one averaging matrix per spatial dimension.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ..dtypes import spelling
from ._half import in_float32, is_half
from ._common import _wrap_dim
from .conv import _fold, _windows

__all__ = [
    "max_pool_with_indices",
    "max_pool_with_indices_backward",
    "avg_pool",
    "avg_pool_backward",
    "adaptive_avg_pool",
    "adaptive_avg_pool_backward",
    "adaptive_max_pool",
    "max_unpool",
    "fractional_max_pool",
]

_AXES = ("D", "H", "W")


# -- parameters and PyTorch's checks --------------------------------------------------


def _param(
    name: str, what: str, values: Sequence[int], nd: int, default: Sequence[int]
) -> tuple[int, ...]:
    """One int for every dimension, or one per dimension; `default` when empty."""
    values = tuple(values) or tuple(default)
    if len(values) == 1:
        return values * nd
    if len(values) != nd:
        counts = {2: "two", 3: "three"}
        if what == "stride":
            rule = (
                f"must either be omitted, a single int, or a tuple of {counts[nd]} ints"
            )
        elif what == "dilation":
            rule = f"must be either a single int, or a tuple of {counts[nd]} ints"
        else:
            rule = f"must either be a single int, or a tuple of {counts[nd]} ints"
        raise RuntimeError(f"{name}: {what} {rule}")
    return values


def _batched(self: np.ndarray, nd: int) -> np.ndarray:
    """`self` with a batch dimension: (N, C, *spatial); only N may be empty."""
    if self.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"non-empty {nd + 1}D or {nd + 2}D (batch mode) tensor expected for input"
        )
    if 0 in self.shape[-nd - 1 :]:
        raise RuntimeError(
            f"Expected {nd + 1}D or {nd + 2}D (batch mode) tensor with optional 0 dim "
            f"batch size for input, but got:{list(self.shape)}"
        )
    return self if self.ndim == nd + 2 else self[None]


def _output_size(
    size: int, k: int, pad: int, stride: int, dilation: int, ceil_mode: bool
) -> int:
    """PyTorch's pooling_output_shape: the last window must start inside the input or
    its left padding."""
    out = size + 2 * pad - dilation * (k - 1) - 1 + (stride - 1 if ceil_mode else 0)
    out = out // stride + 1
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1
    return out


def _check_window(
    kernel: Sequence[int],
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
) -> None:
    """PyTorch's pooling_output_shape checks, made before the output size."""
    if any(s <= 0 for s in stride):
        raise RuntimeError("stride should not be zero")
    for k, p, d in zip(kernel, padding, dilation):
        if p < 0 or p > ((k - 1) * d + 1) // 2:
            raise RuntimeError(
                "pad should be at most half of effective kernel size, but got "
                f"pad={p}, kernel_size={k} and dilation={d}"
            )


def _check_pool(
    x: np.ndarray,
    kernel: Sequence[int],
    dilation: Sequence[int],
    out: Sequence[int],
) -> None:
    """PyTorch's pool2d_shape_check / pool3d_shape_check messages."""
    names = _AXES[-len(kernel) :]
    if any(k <= 0 for k in kernel):
        values = " ".join(f"k{n}: {k}" for n, k in zip(names, kernel))
        raise RuntimeError(f"kernel size should be greater than zero, but got {values}")
    if any(d <= 0 for d in dilation):
        values = " ".join(f"dilation{n}: {d}" for n, d in zip(names, dilation))
        raise RuntimeError(f"dilation should be greater than zero, but got {values}")
    if any(o < 1 for o in out):
        given = "x".join(map(str, x.shape[1:]))
        calculated = "x".join(map(str, (x.shape[1],) + tuple(out)))
        raise RuntimeError(
            f"Given input size: ({given}). Calculated output size: ({calculated}). "
            "Output size is too small"
        )


def _padded_windows(
    x: np.ndarray,
    kernel: Sequence[int],
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    out: Sequence[int],
    value: float,
) -> tuple[np.ndarray, tuple[int, ...]]:
    """The windows (N, C, *out, *kernel) of `x` padded with `value`: `padding` on the
    left, and on the right as far as the last window reaches (ceil_mode). Also the
    right padding used."""
    right = tuple(
        max(0, (o - 1) * s + d * (k - 1) + 1 - size - p)
        for o, s, d, k, size, p in zip(
            out, stride, dilation, kernel, x.shape[2:], padding
        )
    )
    widths = [(0, 0), (0, 0)] + list(zip(padding, right))
    padded = (
        np.pad(x, widths, constant_values=value) if any(tuple(padding) + right) else x
    )
    return _windows(padded, out, kernel, stride, dilation), right


def _positions(out: int, stride: int, pad: int, axis: int, nd: int) -> np.ndarray:
    """The start of each window along spatial `axis`, shaped to broadcast against
    (N, C, *out)."""
    shape = [1] * (2 + nd)
    shape[2 + axis] = out
    return (np.arange(out) * stride - pad).reshape(shape)


def _flat_index(
    coordinates: Sequence[np.ndarray], spatial: Sequence[int]
) -> np.ndarray:
    """Row-major flat positions in the spatial plane from per-dimension coordinates."""
    index = np.zeros((), np.int64)
    for coordinate, size in zip(coordinates, spatial):
        index = index * size + coordinate
    return np.asarray(index, np.int64)


# -- max pooling ----------------------------------------------------------------------


def _window_max(
    view: np.ndarray, kernel: Sequence[int]
) -> tuple[np.ndarray, np.ndarray]:
    """The maximum over the kernel axes of `view` (lead..., *kernel) and the flat kernel
    offset where it is, as PyTorch's scan picks it (a later element wins when it is
    greater or NaN: the first maximum, or the last NaN). A few fast elementwise passes
    per kernel offset, no masked copies (numpy's slow path)."""
    slices = [view[(Ellipsis,) + offset] for offset in np.ndindex(*kernel)]
    values = slices[0].copy()
    for candidate in slices[1:]:
        np.maximum(values, candidate, out=values)  # NaN propagates, as in PyTorch
    best = np.zeros(values.shape, np.int64)
    found = slices[0] == values
    for number, candidate in enumerate(slices[1:], start=1):
        hit = (candidate == values) & ~found
        best += number * hit
        found |= hit
    if values.dtype.kind == "f":
        nan = np.isnan(values)
        if nan.any():
            last = np.zeros(values.shape, np.int64)
            for number, candidate in enumerate(slices):
                last[np.isnan(candidate)] = number
            best = np.where(nan, last, best)
    return values, best


def _window_sum(view: np.ndarray, kernel: Sequence[int]) -> np.ndarray:
    """The sum over the kernel axes of `view` (lead..., *kernel), one addition per
    kernel offset."""
    offsets = list(np.ndindex(*kernel))
    total = view[(Ellipsis,) + offsets[0]].copy()
    for offset in offsets[1:]:
        total += view[(Ellipsis,) + offset]
    return total


def max_pool_with_indices(
    self: np.ndarray,
    kernel_size: Sequence[int],
    stride: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    ceil_mode: bool,
    nd: int,
) -> tuple[np.ndarray, np.ndarray]:
    """max_pool{nd}d_with_indices: the maximum of each window and its flat position
    in the input's spatial plane (the first maximum, or the first NaN)."""
    name = f"max_pool{nd}d"
    kernel = _param(name, "kernel_size", kernel_size, nd, ())
    stride = _param(name, "stride", stride, nd, kernel)
    padding = _param(name, "padding", padding, nd, ())
    dilation = _param(name, "dilation", dilation, nd, ())
    x = _batched(self, nd)
    _check_window(kernel, stride, padding, dilation)
    spatial = x.shape[2:]
    out = tuple(
        _output_size(*args, ceil_mode)
        for args in zip(spatial, kernel, padding, stride, dilation)
    )
    _check_pool(x, kernel, dilation, out)
    low = -np.inf if x.dtype.kind in "fc" else np.iinfo(x.dtype).min
    view, _ = _padded_windows(x, kernel, stride, padding, dilation, out, low)
    values, best = _window_max(view, kernel)
    # A window's flat start in the plane, plus the flat step of each kernel offset.
    starts = [
        _positions(o, s, p, axis, nd)
        for axis, (o, s, p) in enumerate(zip(out, stride, padding))
    ]
    steps = [np.arange(k) * d for k, d in zip(kernel, dilation)]
    indices = _flat_index(starts, spatial) + np.take(
        _flat_index(np.ix_(*steps), spatial).ravel(), best
    )
    if self.ndim == nd + 1:
        return values[0], indices[0]
    return values, indices


def max_pool_with_indices_backward(
    grad_output: np.ndarray, self: np.ndarray, indices: np.ndarray, nd: int
) -> np.ndarray:
    """The gradient of max pooling: each output's gradient added at its index (the
    same backward for every max pooling that saved flat spatial indices)."""
    plane = math.prod(self.shape[self.ndim - nd :])
    rows = math.prod(self.shape[: self.ndim - nd])
    flat = indices.reshape(rows, -1) + (np.arange(rows) * plane)[:, None]
    grad = np.broadcast_to(grad_output, indices.shape).reshape(rows, -1)
    result = np.bincount(flat.ravel(), weights=grad.ravel(), minlength=rows * plane)
    dtype = np.result_type(grad_output, self)
    return result.astype(dtype).reshape(self.shape)


# -- average pooling ------------------------------------------------------------------


def _avg_parameters(
    self: np.ndarray,
    kernel_size: Sequence[int],
    stride: Sequence[int],
    padding: Sequence[int],
    ceil_mode: bool,
    divisor_override: int | None,
    nd: int,
) -> tuple[np.ndarray, tuple[tuple[int, ...], ...]]:
    name = f"avg_pool{nd}d"
    kernel = _param(name, "kernel_size", kernel_size, nd, ())
    stride = _param(name, "stride", stride, nd, kernel)
    padding = _param(name, "padding", padding, nd, ())
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    if nd == 2:  # PyTorch's avg_pool2d reads input.size(-3) first
        _wrap_dim(-3, self.ndim)
    x = _batched(self, nd)
    ones = (1,) * nd
    _check_window(kernel, stride, padding, ones)
    out = tuple(
        _output_size(size, k, p, s, 1, ceil_mode)
        for size, k, p, s in zip(x.shape[2:], kernel, padding, stride)
    )
    _check_pool(x, kernel, ones, out)
    return x, (kernel, stride, padding, out)


def _divisor(
    spatial: Sequence[int],
    parameters: tuple[tuple[int, ...], ...],
    count_include_pad: bool,
    divisor_override: int | None,
) -> np.ndarray | int:
    """What each window's sum is divided by, broadcasting against (N, C, *out)."""
    if divisor_override is not None:
        return divisor_override
    kernel, stride, padding, out = parameters
    nd = len(kernel)
    divisor: np.ndarray | int = 1
    for axis, (size, k, s, p, o) in enumerate(
        zip(spatial, kernel, stride, padding, out)
    ):
        start = _positions(o, s, p, axis, nd)
        end = np.minimum(start + k, size + p)
        if count_include_pad:
            divisor = divisor * (end - start)
        else:
            divisor = divisor * (np.minimum(end, size) - np.maximum(start, 0))
    return divisor


def avg_pool(
    self: np.ndarray,
    kernel_size: Sequence[int],
    stride: Sequence[int],
    padding: Sequence[int],
    ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: int | None,
    nd: int,
) -> np.ndarray:
    """avg_pool{nd}d: each window's sum over its divisor."""
    if is_half(self):  # in float32, rounded once
        args = (kernel_size, stride, padding, ceil_mode, count_include_pad)
        return in_float32(avg_pool, self, *args, divisor_override, nd)
    x, parameters = _avg_parameters(
        self, kernel_size, stride, padding, ceil_mode, divisor_override, nd
    )
    kernel, stride_, padding_, out = parameters
    view, _ = _padded_windows(x, kernel, stride_, padding_, (1,) * nd, out, 0.0)
    sums = _window_sum(view, kernel)
    divisor = _divisor(x.shape[2:], parameters, count_include_pad, divisor_override)
    result = (sums / divisor).astype(x.dtype, copy=False)
    return result[0] if self.ndim == nd + 1 else result


def avg_pool_backward(
    grad_output: np.ndarray,
    self: np.ndarray,
    kernel_size: Sequence[int],
    stride: Sequence[int],
    padding: Sequence[int],
    ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: int | None,
    nd: int,
) -> np.ndarray:
    """The gradient of avg_pool{nd}d: each output's gradient over its divisor, spread
    over its window."""
    x, parameters = _avg_parameters(
        self, kernel_size, stride, padding, ceil_mode, divisor_override, nd
    )
    kernel, stride_, padding_, out = parameters
    g = grad_output if self.ndim == nd + 2 else grad_output[None]
    if g.shape != x.shape[:2] + out:
        raise RuntimeError(
            f"avg_pool{nd}d_backward: expected grad_output of size "
            f"{list(x.shape[:2] + out)}, but got {list(g.shape)}"
        )
    divisor = _divisor(x.shape[2:], parameters, count_include_pad, divisor_override)
    share = g / divisor
    cols = np.broadcast_to(share[(Ellipsis,) + (None,) * nd], share.shape + kernel)
    right = tuple(
        max(0, (o - 1) * s + k - size - p)
        for o, s, k, size, p in zip(out, stride_, kernel, x.shape[2:], padding_)
    )
    padded = [size + p + r for size, p, r in zip(x.shape[2:], padding_, right)]
    grad = _fold(cols, padded, stride_, (1,) * nd)
    crop = tuple(slice(p, p + size) for p, size in zip(padding_, x.shape[2:]))
    dtype = np.result_type(grad_output, self)
    result = np.ascontiguousarray(grad[(Ellipsis,) + crop]).astype(dtype, copy=False)
    return result.reshape(self.shape)


# -- adaptive pooling -----------------------------------------------------------------


def _adaptive_bounds(size: int, out: int) -> tuple[np.ndarray, np.ndarray]:
    """PyTorch's adaptive windows: [floor(o * size / out), ceil((o + 1) * size / out))."""
    o = np.arange(out)
    return (o * size) // out, -((-(o + 1) * size) // out)


def _adaptive_input(
    self: np.ndarray, output_size: Sequence[int], nd: int, name: str
) -> None:
    if self.ndim not in (nd + 1, nd + 2):
        colon = ":" if name.startswith("adaptive_max") else ""
        raise RuntimeError(
            f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got{colon} "
            f"{list(self.shape)}"
        )
    for dim in range(self.ndim - nd - 1, self.ndim):
        if self.shape[dim] == 0:
            raise RuntimeError(
                f"{name}(): Expected input to have non-zero size for non-batch "
                f"dimensions, but input has sizes {list(self.shape)} with dimension "
                f"{dim} being empty"
            )
    if len(output_size) not in (1, nd):
        raise RuntimeError(f"{name}: output_size must be {nd}")
    if any(o < 0 for o in output_size):
        raise RuntimeError(
            f"{name}: elements of output_size must be greater than or equal to 0 but "
            f"received {list(output_size)}"
        )


def _sizes(output_size: Sequence[int], nd: int) -> tuple[int, ...]:
    """One size for every dimension, or one per dimension."""
    return tuple(output_size) * nd if len(output_size) == 1 else tuple(output_size)


def _averaging(size: int, out: int, dtype: np.dtype) -> np.ndarray:
    """The (out, size) matrix whose row o averages adaptive window o."""
    start, end = _adaptive_bounds(size, out)
    j = np.arange(size)
    inside = (j >= start[:, None]) & (j < end[:, None])
    return (inside / np.maximum(end - start, 1)[:, None]).astype(dtype)


def _along(x: np.ndarray, axis: int, matrix: np.ndarray) -> np.ndarray:
    """`matrix` (m, n) applied along `axis` (of length n) of `x`."""
    return np.moveaxis(np.moveaxis(x, axis, -1) @ matrix.T, -1, axis)


def adaptive_avg_pool(
    self: np.ndarray, output_size: Sequence[int], nd: int
) -> np.ndarray:
    """_adaptive_avg_pool{nd}d: the mean of each adaptive window."""
    _adaptive_input(self, output_size, nd, f"adaptive_avg_pool{nd}d")
    output_size = _sizes(output_size, nd)
    result = self
    for axis, out in enumerate(output_size, start=self.ndim - nd):
        result = _along(result, axis, _averaging(self.shape[axis], out, self.dtype))
    return np.ascontiguousarray(result)


def adaptive_avg_pool_backward(
    grad_output: np.ndarray, self: np.ndarray, nd: int
) -> np.ndarray:
    """The gradient of _adaptive_avg_pool{nd}d: each averaging matrix transposed."""
    result = grad_output
    out = grad_output.shape[grad_output.ndim - nd :]
    for axis, o in enumerate(out, start=self.ndim - nd):
        matrix = _averaging(self.shape[axis], o, np.result_type(grad_output, self))
        result = _along(result, axis, matrix.T)
    return np.ascontiguousarray(result)


def adaptive_max_pool(
    self: np.ndarray, output_size: Sequence[int], nd: int
) -> tuple[np.ndarray, np.ndarray]:
    """adaptive_max_pool{nd}d: the maximum of each adaptive window and its flat
    position in the spatial plane. Windows are gathered at their widest, a shorter
    window repeating its last position (which changes no maximum)."""
    _adaptive_input(self, output_size, nd, f"adaptive_max_pool{nd}d")
    output_size = _sizes(output_size, nd)
    lead = self.shape[: self.ndim - nd]
    spatial = self.shape[self.ndim - nd :]
    positions = []
    for size, out in zip(spatial, output_size):
        start, end = _adaptive_bounds(size, out)
        width = int((end - start).max()) if out else 1
        positions.append(
            np.minimum(start[:, None] + np.arange(width), end[:, None] - 1)
        )
    grids = np.ix_(*[p.ravel() for p in positions])
    gathered = self[(Ellipsis,) + grids]  # (lead..., o0*k0, o1*k1, ...)
    shape = lead + tuple(x for p in positions for x in p.shape)
    gathered = gathered.reshape(shape)
    n = len(lead)
    axes = tuple(range(n)) + tuple(n + 2 * i for i in range(nd))
    axes += tuple(n + 2 * i + 1 for i in range(nd))
    flat = gathered.transpose(axes).reshape(lead + tuple(output_size) + (-1,))
    best = flat.argmax(axis=-1)
    values = np.take_along_axis(flat, best[..., None], axis=-1)[..., 0]
    offsets = np.unravel_index(best, tuple(p.shape[1] for p in positions))
    coordinates = []
    for axis, (p, offset) in enumerate(zip(positions, offsets)):
        shape_o = [1] * (n + nd)
        shape_o[n + axis] = p.shape[0]
        o = np.arange(p.shape[0]).reshape(shape_o)
        coordinates.append(p[o, offset])
    return values, _flat_index(coordinates, spatial)


# -- max unpooling ---------------------------------------------------------------------

_UNPOOL_WORDS = {2: ("two", "(height, width)"), 3: ("three", "(depth, height, width)")}


def _check_unpool(
    self: np.ndarray, indices: np.ndarray, output_size: Sequence[int], nd: int
) -> None:
    """PyTorch's checks of max_unpool2d / max_unpool3d, in its order."""
    if indices.dtype != np.int64:
        raise RuntimeError(
            "elements in indices should be type int64 but got: "
            f"{spelling(indices).scalar_type}"
        )
    count, names = _UNPOOL_WORDS[nd]
    if len(output_size) != nd:
        raise RuntimeError(
            f"There should be exactly {count} elements {names} in output_size, but "
            f"got {len(output_size)} elements."
        )
    if self.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"Input to max_unpooling{nd}d should be a {nd + 1}d or {nd + 2}d Tensor, "
            f"but got a tensor with {self.ndim} dimensions."
        )
    if self.shape != indices.shape:
        raise RuntimeError(
            "Expected shape of indices to be same as that of the input tensor "
            f"({list(self.shape)}) but got indices tensor with shape: "
            f"{list(indices.shape)}"
        )


def max_unpool(
    self: np.ndarray,
    indices: np.ndarray,
    output_size: Sequence[int],
    nd: int,
    stride: Sequence[int] | None = None,
) -> np.ndarray:
    """PyTorch's max_unpool2d / max_unpool3d: zeros of the spatial size output_size,
    each value of `self` written at its flat index in its plane (max pooling's
    indices); where two values share an index the first is kept."""
    _check_unpool(self, indices, output_size, nd)
    if stride is not None and any(s <= 0 for s in stride):
        raise RuntimeError(
            f"strides should be greater than zero, but got stride: {list(stride)}"
        )
    volume = math.prod(output_size)
    lead = self.shape[: self.ndim - nd]
    planes = math.prod(lead)
    flat_indices = indices.reshape(planes, -1)
    invalid = np.flatnonzero((flat_indices < 0) | (flat_indices >= volume))
    if invalid.size:
        first = int(flat_indices.reshape(-1)[invalid[0]])
        shape = "x".join(str(size) for size in output_size)
        raise RuntimeError(
            f"Found an invalid max index: {first} (output volumes are of size {shape})"
        )
    keys = (np.arange(planes)[:, None] * volume + flat_indices).reshape(-1)
    _, written = np.unique(keys, return_index=True)  # the first write of each place
    result = np.zeros(planes * volume, self.dtype)
    result[keys[written]] = self.reshape(-1)[written]
    return result.reshape(lead + tuple(output_size))


# -- fractional max pooling ------------------------------------------------------------

_FRACTIONAL_NAMES = {2: ("height", "width"), 3: ("time", "height", "width")}


def _check_fractional(
    self: np.ndarray,
    kernel_size: Sequence[int],
    output_size: Sequence[int],
    random_samples: np.ndarray,
    nd: int,
) -> None:
    """PyTorch's checks of fractional_max_pool2d / 3d."""
    name = f"fractional_max_pool{nd}d"
    if self.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(
            f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: "
            f"{list(self.shape)}"
        )
    if random_samples.ndim != 3 or random_samples.shape[2] != nd:
        raise RuntimeError(
            f"Expect _random_samples.size(2) equals to {nd}; got "
            f"{random_samples.shape[2] if random_samples.ndim == 3 else None}."
        )
    batch = self.shape[0] if self.ndim == nd + 2 else 1
    planes = self.shape[-nd - 1]
    if random_samples.shape[0] < batch or random_samples.shape[1] < planes:
        raise RuntimeError(
            f"Expect _random_samples of at least [{batch}, {planes}, {nd}]; got "
            f"{list(random_samples.shape)}."
        )
    spatial = self.shape[self.ndim - nd :]
    where = name if nd == 2 else f"{name}_out"
    for label, size, out, pool in zip(
        _FRACTIONAL_NAMES[nd], spatial, output_size, kernel_size
    ):
        # PyTorch: out + pool - 1 <= size in 2d, < size in 3d
        if out + pool - 1 > size or (nd == 3 and out + pool - 1 == size):
            raise RuntimeError(
                f"{where}(): pool {label} {pool} too large relative to input "
                f"{label} {size}"
            )


def _intervals(samples: np.ndarray, size: int, out: int, pool: int) -> np.ndarray:
    """PyTorch's generate_intervals for each plane's sample: the start of each of the
    `out` windows of length `pool` along a dimension of length `size`, computed in
    the samples' precision."""
    starts = np.empty(samples.shape + (out,), np.int64)
    if out > 1:
        alpha = samples.dtype.type(size - pool) / samples.dtype.type(out - 1)
        steps = np.arange(out - 1, dtype=samples.dtype)
        scaled = ((steps + samples[:, None]) * alpha).astype(np.int64)
        starts[:, :-1] = scaled - (samples * alpha).astype(np.int64)[:, None]
    if out > 0:
        starts[:, -1] = size - pool
    return starts


def fractional_max_pool(
    self: np.ndarray,
    kernel_size: Sequence[int],
    output_size: Sequence[int],
    random_samples: np.ndarray,
    nd: int,
) -> tuple[np.ndarray, np.ndarray]:
    """PyTorch's fractional_max_pool2d / 3d: (values, flat indices in each plane) of
    the maxima of windows of kernel_size whose starts are pseudo-random, drawn from
    each plane's random_samples (the last dimension: depth (3d), height, width in
    PyTorch's order of the samples: width first in 2d)."""
    _check_fractional(self, kernel_size, output_size, random_samples, nd)
    spatial = self.shape[self.ndim - nd :]
    lead = self.shape[: self.ndim - nd]
    planes = math.prod(lead)
    x = self.reshape((planes,) + spatial)
    batch = self.shape[0] if self.ndim == nd + 2 else 1
    used = random_samples[:batch, : self.shape[-nd - 1]]  # PyTorch reads these
    samples = used.reshape(planes, nd).astype(self.dtype, copy=False)
    order = (1, 0) if nd == 2 else (0, 1, 2)  # the sample of each spatial dimension
    # flat[plane, *out, *window]: the flat input position each window element reads
    flat = np.zeros((planes,) + (1,) * (2 * nd), np.int64)
    for d in range(nd):
        pool = kernel_size[d]
        starts = _intervals(samples[:, order[d]], spatial[d], output_size[d], pool)
        positions = (starts[:, :, None] + np.arange(pool)) * math.prod(spatial[d + 1 :])
        shape = [planes] + [1] * (2 * nd)
        shape[1 + d], shape[1 + nd + d] = output_size[d], pool
        flat = flat + positions.reshape(shape)
    windows = flat.reshape((planes,) + tuple(output_size) + (-1,))
    values = np.take_along_axis(
        x.reshape(planes, -1), windows.reshape(planes, -1), axis=1
    ).reshape(windows.shape)
    best = np.argmax(values, axis=-1)[..., None]
    picked = np.take_along_axis(values, best, axis=-1)[..., 0]
    indices = np.take_along_axis(windows, best, axis=-1)[..., 0]
    out_shape = lead + tuple(output_size)
    return picked.reshape(out_shape), indices.reshape(out_shape)
