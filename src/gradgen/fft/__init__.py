"""gradgen.fft, PyTorch's torch.fft: the transforms native_functions.yaml declares with
`python_module: fft` (fft_rfft is gradgen.fft.rfft), composites over _fft_r2c,
_fft_c2c and _fft_c2r, and the sample frequencies fftfreq / rfftfreq (factories)."""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from ..factories import DTypeArgument, _finish, _float_dtype
from ..generated.fft import *  # noqa: F401,F403
from ..generated.fft import __all__ as _generated_all
from ..tensor import Tensor

__all__ = [*_generated_all, "fftfreq", "rfftfreq"]


def _frequencies(
    n: builtins.int,
    values: np.ndarray,
    d: builtins.float,
    dtype: DTypeArgument,
    requires_grad: builtins.bool,
) -> Tensor:
    if n < 0:
        raise RuntimeError(
            f"Trying to create tensor with negative dimension {n}: [{n}]"
        )
    target = _float_dtype(dtype).numpy
    with np.errstate(divide="ignore", invalid="ignore"):  # rfftfreq(0) is [nan]
        scaled = values / (n * d)
    return _finish(scaled.astype(target), requires_grad)


def fftfreq(
    n: builtins.int,
    d: builtins.float = 1.0,
    *,
    dtype: DTypeArgument = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: builtins.bool = False,
) -> Tensor:
    """The sample frequencies of an n-point fft: [0, 1, ..., -2, -1] / (n * d)."""
    indices = np.arange(max(n, 0), dtype=np.float64)
    indices[(n + 1) // 2 :] -= n
    return _frequencies(n, indices, d, dtype, requires_grad)


def rfftfreq(
    n: builtins.int,
    d: builtins.float = 1.0,
    *,
    dtype: DTypeArgument = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: builtins.bool = False,
) -> Tensor:
    """The sample frequencies of an n-point rfft: [0, 1, ..., n // 2] / (n * d)."""
    indices = np.arange(max(n // 2 + 1, 0) if n >= 0 else 0, dtype=np.float64)
    return _frequencies(n, indices, d, dtype, requires_grad)
