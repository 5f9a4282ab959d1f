"""Composites of the fft family (PyTorch's SpectralOps.cpp): torch.fft's transforms
over the three primitives _fft_r2c, _fft_c2c and _fft_c2r, and the shifts.

A transform resizes its input to the signal sizes asked for (zero-padded or cut),
turns `norm` ("backward", "forward", "ortho") into the primitive's normalization for
its direction, and calls one primitive; the transforms of real input the primitives
lack (a backward r2c, a forward c2r) are the conjugates of the ones they have.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..dtypes import get_default_dtype, spelling
from ..generated import ops  # functions read at call time (the generated tie)
from ..numpy_kernels import _wrap_dim
from ..tensor import Tensor

__all__ = [
    "fft_fft",
    "fft_ifft",
    "fft_rfft",
    "fft_irfft",
    "fft_hfft",
    "fft_ihfft",
    "fft_fft2",
    "fft_ifft2",
    "fft_rfft2",
    "fft_irfft2",
    "fft_fftn",
    "fft_ifftn",
    "fft_rfftn",
    "fft_irfftn",
    "fft_fftshift",
    "fft_ifftshift",
]

_NONE, _BY_ROOT_N, _BY_N = 0, 1, 2  # PyTorch's fft_norm_mode


def _norm_mode(norm: str | None, forward: bool) -> int:
    """The scale a transform in direction `forward` applies for `norm`."""
    if norm is None or norm == "backward":
        return _NONE if forward else _BY_N
    if norm == "forward":
        return _BY_N if forward else _NONE
    if norm == "ortho":
        return _BY_ROOT_N
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _promote(x: Tensor, require_complex: bool = False) -> Tensor:
    """Integers and bools as the default floating dtype; complex when required."""
    dtype = x.dtype
    if not dtype.is_floating_point and not dtype.is_complex:
        dtype = get_default_dtype()
    if require_complex:
        dtype = dtype.to_complex()
    return x if dtype == x.dtype else x.to(dtype)


def _check_points(n: int) -> None:
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


def _resize(x: Tensor, dims: Sequence[int], sizes: Sequence[int]) -> Tensor:
    """x zero-padded or cut at the end of each of `dims` to `sizes`."""
    pad = [0, 0] * x.dim()
    must_pad = False
    for d, size in zip(dims, sizes):
        current = x.shape[d]
        if current > size:
            x = x.narrow(d, 0, size)
        elif current < size:
            must_pad = True
            pad[2 * (x.dim() - 1 - d) + 1] = size - current
    return ops.constant_pad_nd(x, pad) if must_pad else x


def _one_dim(x: Tensor, dim: int) -> int:
    if x.dim() == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return _wrap_dim(dim, x.dim())


def _c2c(x: Tensor, n: int | None, dim: int, norm: str | None, forward: bool) -> Tensor:
    axis = _one_dim(x, dim)
    size = x.shape[axis] if n is None else n
    _check_points(size)
    if n is not None:
        x = _resize(x, [axis], [size])
    return ops._fft_c2c(x, [axis], _norm_mode(norm, forward), forward)


def _r2c(
    name: str,
    x: Tensor,
    n: int | None,
    dim: int,
    norm: str | None,
    forward: bool,
    onesided: bool,
) -> Tensor:
    if x.is_complex():
        raise RuntimeError(
            f"{name} expects a real input tensor, but got {spelling(x).scalar_type}"
        )
    x = _promote(x)
    axis = _one_dim(x, dim)
    size = x.shape[axis] if n is None else n
    _check_points(size)
    if n is not None:
        x = _resize(x, [axis], [size])
    result = ops._fft_r2c(x, [axis], _norm_mode(norm, forward), onesided)
    return result if forward else result.conj()


def _c2r(x: Tensor, n: int | None, dim: int, norm: str | None, forward: bool) -> Tensor:
    x = _promote(x, require_complex=True)
    axis = _one_dim(x, dim)
    size = 2 * (x.shape[axis] - 1) if n is None else n
    _check_points(size)
    if n is not None:
        x = _resize(x, [axis], [size // 2 + 1])
    if forward:
        x = x.conj()
    return ops._fft_c2r(x, [axis], _norm_mode(norm, forward), size)


def fft_fft(
    self: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None
) -> Tensor:
    """The one-dimensional DFT (of a real input: its full complex transform)."""
    if self.is_complex():
        return _c2c(self, n, dim, norm, True)
    return _r2c("fft", self, n, dim, norm, True, False)


def fft_ifft(
    self: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None
) -> Tensor:
    """The one-dimensional inverse DFT."""
    if self.is_complex():
        return _c2c(self, n, dim, norm, False)
    return _r2c("ifft", self, n, dim, norm, False, False)


def fft_rfft(
    self: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None
) -> Tensor:
    """The DFT of a real input, its first n // 2 + 1 frequencies."""
    return _r2c("rfft", self, n, dim, norm, True, True)


def fft_irfft(
    self: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None
) -> Tensor:
    """The inverse of rfft: a real signal of n points (2 * (size - 1) by default)."""
    return _c2r(self, n, dim, norm, False)


def fft_hfft(
    self: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None
) -> Tensor:
    """The DFT of a Hermitian-symmetric signal given by its first half: real."""
    return _c2r(self, n, dim, norm, True)


def fft_ihfft(
    self: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None
) -> Tensor:
    """The inverse of hfft: the first half of the inverse DFT of a real signal."""
    return _r2c("ihfft", self, n, dim, norm, False, True)


def _shape_and_dims(
    x: Tensor, s: Sequence[int] | None, dim: Sequence[int] | None
) -> tuple[list[int], list[int]]:
    """PyTorch's canonicalize_fft_shape_and_dim_args: the signal sizes and the wrapped
    dimensions (the last len(s) ones when only s is given, all when neither is)."""
    ndim = x.dim()
    dims: list[int] = []
    if dim is not None:
        dims = [_wrap_dim(d, ndim) for d in dim]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is None:
        if dim is None:
            dims = list(range(ndim))
        return [x.shape[d] for d in dims], dims
    if dim is not None and len(dims) != len(s):
        raise RuntimeError(
            "When given, dim and shape arguments must have the same length"
        )
    if len(s) > ndim:
        raise RuntimeError(
            f"Got shape with {len(s)} values but input tensor only has {ndim} "
            "dimensions."
        )
    if dim is None:
        dims = list(range(ndim - len(s), ndim))
    shape = [x.shape[d] if size == -1 else size for d, size in zip(dims, s)]
    for size in shape:
        _check_points(size)
    return shape, dims


def _fftn_c2c(
    x: Tensor,
    s: Sequence[int] | None,
    dim: Sequence[int] | None,
    norm: str | None,
    forward: bool,
) -> Tensor:
    shape, dims = _shape_and_dims(x, s, dim)
    x = _resize(_promote(x, require_complex=True), dims, shape)
    return ops._fft_c2c(x, dims, _norm_mode(norm, forward), forward)


def fft_fftn(
    self: Tensor,
    s: Sequence[int] | None = None,
    dim: Sequence[int] | None = None,
    norm: str | None = None,
) -> Tensor:
    """The N-dimensional DFT over `dim` (all dimensions by default)."""
    return _fftn_c2c(self, s, dim, norm, True)


def fft_ifftn(
    self: Tensor,
    s: Sequence[int] | None = None,
    dim: Sequence[int] | None = None,
    norm: str | None = None,
) -> Tensor:
    """The N-dimensional inverse DFT."""
    return _fftn_c2c(self, s, dim, norm, False)


def fft_fft2(
    self: Tensor,
    s: Sequence[int] | None = None,
    dim: Sequence[int] = (-2, -1),
    norm: str | None = None,
) -> Tensor:
    """fftn over the last two dimensions."""
    return _fftn_c2c(self, s, dim, norm, True)


def fft_ifft2(
    self: Tensor,
    s: Sequence[int] | None = None,
    dim: Sequence[int] = (-2, -1),
    norm: str | None = None,
) -> Tensor:
    """ifftn over the last two dimensions."""
    return _fftn_c2c(self, s, dim, norm, False)


def fft_rfftn(
    self: Tensor,
    s: Sequence[int] | None = None,
    dim: Sequence[int] | None = None,
    norm: str | None = None,
) -> Tensor:
    """The N-dimensional DFT of a real input, one-sided in the last dimension."""
    if self.is_complex():
        raise RuntimeError(
            "rfftn expects a real-valued input tensor, but got "
            f"{spelling(self).scalar_type}"
        )
    shape, dims = _shape_and_dims(self, s, dim)
    if not shape:
        raise RuntimeError("rfftn must transform at least one axis")
    x = _resize(_promote(self), dims, shape)
    return ops._fft_r2c(x, dims, _norm_mode(norm, True), True)


def fft_irfftn(
    self: Tensor,
    s: Sequence[int] | None = None,
    dim: Sequence[int] | None = None,
    norm: str | None = None,
) -> Tensor:
    """The inverse of rfftn: real, the last dimension s[-1] long (2 * (size - 1) by
    default)."""
    shape, dims = _shape_and_dims(self, s, dim)
    if not shape:
        raise RuntimeError("irfftn must transform at least one axis")
    last_dim_size = (
        2 * (self.shape[dims[-1]] - 1) if s is None or s[-1] == -1 else shape[-1]
    )
    _check_points(last_dim_size)
    shape[-1] = last_dim_size // 2 + 1
    x = _resize(_promote(self, require_complex=True), dims, shape)
    return ops._fft_c2r(x, dims, _norm_mode(norm, False), last_dim_size)


def fft_rfft2(
    self: Tensor,
    s: Sequence[int] | None = None,
    dim: Sequence[int] = (-2, -1),
    norm: str | None = None,
) -> Tensor:
    """rfftn over the last two dimensions."""
    return fft_rfftn(self, s, dim, norm)


def fft_irfft2(
    self: Tensor,
    s: Sequence[int] | None = None,
    dim: Sequence[int] = (-2, -1),
    norm: str | None = None,
) -> Tensor:
    """irfftn over the last two dimensions."""
    return fft_irfftn(self, s, dim, norm)


def _shift(x: Tensor, dim: Sequence[int] | None, inverse: bool) -> Tensor:
    dims = list(range(x.dim())) if dim is None else [_wrap_dim(d, x.dim()) for d in dim]
    if not dims:
        return x.clone()
    shifts = [(x.shape[d] + 1) // 2 if inverse else x.shape[d] // 2 for d in dims]
    return ops.roll(x, shifts, dims)


def fft_fftshift(self: Tensor, dim: Sequence[int] | None = None) -> Tensor:
    """The zero frequency moved to the centre: a roll by n // 2 along `dim` (all)."""
    return _shift(self, dim, False)


def fft_ifftshift(self: Tensor, dim: Sequence[int] | None = None) -> Tensor:
    """The inverse of fftshift: a roll by (n + 1) // 2."""
    return _shift(self, dim, True)
