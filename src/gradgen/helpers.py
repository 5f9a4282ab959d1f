"""Helper functions that derivatives.yaml formulas call (PyTorch's FunctionsManual).

Every helper is written with gradgen operators, never with raw numpy, so a formula
that calls it is itself differentiable: under ``create_graph=True`` the engine runs
formulas in grad mode and these calls record their own graph. Each follows the
PyTorch helper of the same name. `__all__` is the list of helper names a formula may
call; the generator reads it (without importing this module) to validate formulas.

An undefined gradient is None; helpers that take a gradient pass None through.
"""

from __future__ import annotations

import numpy as np

from .dtypes import dtype
from .generated.ops import real
from .tensor import Tensor, _wrap_dim

__all__ = [
    "handle_r_to_c",
    "maybe_multiply",
    "mul_tensor_backward",
    "pow_backward",
    "permute_backwards",
    "sum_to",
    "zeros_like",
    "_to_copy_backward",
    "scalar_conj",
]

Number = int | float | complex | bool


def handle_r_to_c(self_type: dtype | Tensor, gradient_result: Tensor | None) -> Tensor | None:
    """Drop the imaginary part of a gradient whose input was real."""
    if gradient_result is None:
        return None
    is_complex = (
        self_type.is_complex() if isinstance(self_type, Tensor) else self_type.is_complex
    )
    if not is_complex and gradient_result.is_complex():
        return real(gradient_result)  # type: ignore[no-any-return]
    return gradient_result


def maybe_multiply(tensor: Tensor, scalar: Number) -> Tensor:
    """`tensor * scalar`, skipping the multiplication when the scalar is one."""
    if scalar == 1:
        return tensor
    return tensor * scalar


def mul_tensor_backward(grad: Tensor, other: Tensor, self_type: dtype) -> Tensor | None:
    """d(self * other)/d(self) applied to grad: grad * conj(other)."""
    return handle_r_to_c(self_type, grad * other.conj())  # type: ignore[attr-defined]


def pow_backward(grad: Tensor, self: Tensor, exponent: Number) -> Tensor | None:
    """d(self ** exponent)/d(self) applied to grad."""
    if exponent == 0:
        return zeros_like(self)
    grad_self = grad * (exponent * self.pow(exponent - 1)).conj()  # type: ignore[attr-defined]
    return handle_r_to_c(self, grad_self)


def permute_backwards(grad: Tensor, dims: tuple[int, ...]) -> Tensor:
    """Undo a permutation: permute by the inverse of `dims`."""
    ndim = len(dims)
    inverse = [0] * ndim
    for position, dim in enumerate(dims):
        inverse[_wrap_dim(dim, ndim)] = position
    return grad.permute(inverse)  # type: ignore[attr-defined,no-any-return]


def sum_to(grad: Tensor, shape: tuple[int, ...]) -> Tensor:
    """Sum `grad` down to `shape` (the reverse of broadcasting `shape` up to grad's)."""
    if tuple(grad.shape) == tuple(shape):
        return grad
    return grad.sum_to_size(shape)  # type: ignore[attr-defined,no-any-return]


def zeros_like(tensor: Tensor) -> Tensor:
    """A tensor of zeros with `tensor`'s shape and dtype (not part of any graph)."""
    return Tensor(np.zeros_like(tensor._data))


def _to_copy_backward(grad: Tensor, self_options: dtype) -> Tensor:
    """Gradient of a dtype conversion: convert back (dropping an imaginary part)."""
    if grad.is_complex() and not self_options.is_complex:
        grad = real(grad)
    return grad._to_copy(dtype=self_options)  # type: ignore[attr-defined,no-any-return]


def scalar_conj(scalar: Number) -> Number:
    """The conjugate of a Scalar argument (PyTorch's ``Scalar::conj``)."""
    return scalar.conjugate() if isinstance(scalar, complex) else scalar
