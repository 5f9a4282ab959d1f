"""Formula helpers of the fft family (PyTorch's FunctionsManual names): the
backwards of the one-sided transforms, written with operators so that they can be
differentiated again."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..generated.ops import _fft_c2c as _c2c
from ..generated.ops import _fft_r2c as _r2c
from ..generated.ops import constant_pad_nd as _constant_pad_nd
from ..generated.ops import real as _real
from ..numpy_kernels import _wrap_dim
from ..tensor import Tensor

__all__ = ["fft_r2c_backward", "fft_c2r_backward"]


def fft_r2c_backward(
    grad: Tensor,
    dim: Sequence[int],
    normalization: int,
    onesided: bool,
    last_dim_size: int,
) -> Tensor:
    """The gradient of _fft_r2c: the real part of the inverse transform of grad (with
    the discarded half of a one-sided transform filled with zeros)."""
    if not onesided:
        return _real(_c2c(grad, dim, normalization, False))
    last_dim = _wrap_dim(dim[-1], grad.dim())
    zero_length = last_dim_size - grad.shape[last_dim]
    full = grad
    if zero_length > 0:
        # constant_pad_nd pads the last dimensions first, two numbers each.
        pad = [0, 0] * (grad.dim() - 1 - last_dim) + [0, zero_length]
        full = _constant_pad_nd(grad, pad)
    return _real(_c2c(full, dim, normalization, False))


def fft_c2r_backward(grad: Tensor, dim: Sequence[int], normalization: int) -> Tensor:
    """The gradient of _fft_c2r: the one-sided forward transform of grad, with the
    frequencies whose mirror images the one-sided input omits counted twice."""
    grad_input = _r2c(grad, dim, normalization, True)
    last_dim = _wrap_dim(dim[-1], grad.dim())
    double_length = grad.shape[last_dim] - grad_input.shape[last_dim]
    if double_length <= 0:
        return grad_input
    factor = np.ones(grad_input.shape[last_dim], grad.dtype.numpy)
    factor[1 : 1 + double_length] = 2
    shape = [1] * grad_input.dim()
    shape[last_dim] = factor.size
    return grad_input * Tensor(factor.reshape(shape))
