"""FFT kernels: PyTorch's three primitive transforms (_fft_r2c, _fft_c2c, _fft_c2r),
unnormalised discrete Fourier transforms over `dim` scaled as `normalization` says.

`normalization` is PyTorch's fft_norm_mode: 0 none, 1 by 1/sqrt(n), 2 by 1/n, n the
product of the signal sizes along `dim` (of the real signal for r2c and c2r). numpy's
pocketfft computes them in the input's precision (float32 -> complex64).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ._common import _scalar_type, _wrap_dim

__all__ = ["fft_r2c", "fft_c2c", "fft_c2r"]

_COMPLEX = {np.dtype(np.float32): np.complex64, np.dtype(np.float64): np.complex128}
_REAL = {np.dtype(np.complex64): np.float32, np.dtype(np.complex128): np.float64}


def _check_kind(self: np.ndarray, kind: str, kind_name: str) -> None:
    if self.dtype.kind != kind:
        raise RuntimeError(
            f"Only supports {kind_name} dtypes, but found: {_scalar_type(self)}"
        )


def _axes(dim: Sequence[int], ndim: int) -> tuple[int, ...]:
    return tuple(_wrap_dim(d, ndim) for d in dim)


def _scale(normalization: int, signal: Sequence[int]) -> float:
    """The factor fft_norm_mode applies: 1, 1/sqrt(n) or 1/n."""
    n = math.prod(signal)
    if normalization == 1:
        return 1.0 / math.sqrt(n)
    if normalization == 2:
        return 1.0 / n
    return 1.0


def fft_r2c(
    self: np.ndarray, dim: Sequence[int], normalization: int, onesided: bool
) -> np.ndarray:
    """The forward DFT of a real signal, complex; `onesided` keeps the first
    n // 2 + 1 frequencies of the last transformed dimension."""
    _check_kind(self, "f", "floating-point")
    axes = _axes(dim, self.ndim)
    scale = _scale(normalization, [self.shape[a] for a in axes])
    if onesided:
        result = np.fft.rfftn(self, axes=axes)
    else:
        result = np.fft.fftn(self, axes=axes)
    return (result * scale).astype(_COMPLEX[self.dtype], copy=False)


def fft_c2c(
    self: np.ndarray, dim: Sequence[int], normalization: int, forward: bool
) -> np.ndarray:
    """The DFT (`forward`) or the unnormalised inverse DFT of a complex signal,
    scaled."""
    _check_kind(self, "c", "complex")
    axes = _axes(dim, self.ndim)
    scale = _scale(normalization, [self.shape[a] for a in axes])
    if forward:
        result = np.fft.fftn(self, axes=axes)
    else:
        result = np.fft.ifftn(self, axes=axes, norm="forward")
    return (result * scale).astype(self.dtype, copy=False)


def fft_c2r(
    self: np.ndarray, dim: Sequence[int], normalization: int, last_dim_size: int
) -> np.ndarray:
    """The unnormalised inverse DFT of a one-sided Hermitian signal, real, the last
    transformed dimension `last_dim_size` long, scaled."""
    _check_kind(self, "c", "complex")
    axes = _axes(dim, self.ndim)
    sizes = [self.shape[a] for a in axes[:-1]] + [last_dim_size]
    result = np.fft.irfftn(self, s=sizes, axes=axes, norm="forward")
    scale = _scale(normalization, sizes)
    return (result * scale).astype(_REAL[self.dtype], copy=False)
