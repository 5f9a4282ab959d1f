"""Formula helpers every family uses: real-to-complex gradients, sum_to, zeros."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..dtypes import dtype
from ..generated.ops import real
from ..numpy_kernels import _wrap_dim
from ..tensor import Tensor

__all__ = [
    "handle_r_to_c",
    "maybe_multiply",
    "sum_to",
    "zeros_like",
    "scalar_conj",
    "scalar_tensor",
    "zeros",
    "ones",
]

Number = int | float | complex | bool


def handle_r_to_c(
    self_type: dtype | Tensor, gradient_result: Tensor | None
) -> Tensor | None:
    """Drop the imaginary part of a gradient whose input was real."""
    if gradient_result is None:
        return None
    is_complex = (
        self_type.is_complex()
        if isinstance(self_type, Tensor)
        else self_type.is_complex
    )
    if not is_complex and gradient_result.is_complex():
        return real(gradient_result)
    return gradient_result


def maybe_multiply(tensor: Tensor, scalar: Number) -> Tensor:
    """`tensor * scalar`, skipping the multiplication when the scalar is one."""
    if scalar == 1:
        return tensor
    return tensor * scalar


def sum_to(grad: Tensor, shape: tuple[int, ...]) -> Tensor:
    """Sum `grad` down to `shape` (the reverse of broadcasting `shape` up to grad's)."""
    if tuple(grad.shape) == tuple(shape):
        return grad
    return grad.sum_to_size(shape)


def zeros_like(tensor: Tensor) -> Tensor:
    """A tensor of zeros with `tensor`'s shape and dtype (not part of any graph)."""
    return Tensor(np.zeros_like(tensor._data))


def scalar_conj(scalar: Number) -> Number:
    """The conjugate of a Scalar argument (PyTorch's ``Scalar::conj``)."""
    return scalar.conjugate() if isinstance(scalar, complex) else scalar


def _zeros(shape: Sequence[int], dtype: dtype) -> Tensor:
    return Tensor(np.zeros(tuple(shape), dtype.numpy))


def _full(shape: Sequence[int], value: Number, dtype: dtype) -> Tensor:
    """A constant tensor (not part of any graph), as at::full / at::ones."""
    return Tensor(np.full(tuple(shape), value, dtype.numpy))


def scalar_tensor(value: Number, options: dtype) -> Tensor:
    """PyTorch's at::scalar_tensor(value, x.options()): a 0-dim constant of x's dtype."""
    return _full((), value, options)


def zeros(size: Sequence[int], options: dtype) -> Tensor:
    """PyTorch's at::zeros(size, x.options()): a constant of zeros of x's dtype (also
    what `x.new_zeros(size)` is read as)."""
    return _full(size, 0, options)


def ones(size: Sequence[int], options: dtype) -> Tensor:
    """PyTorch's at::ones(size, x.options()): a constant of ones of x's dtype."""
    return _full(size, 1, options)


def _unsqueeze_multiple(
    tensor: Tensor, dims: Sequence[int] | None, ndim: int
) -> Tensor:
    """Put back the (size-1) dims a reduction without keepdim removed."""
    if dims is not None and len(dims) == 0:
        return tensor
    wanted = range(ndim) if dims is None else sorted(_wrap_dim(d, ndim) for d in dims)
    for dim in wanted:
        tensor = tensor.unsqueeze(dim)
    return tensor
