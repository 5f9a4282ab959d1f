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

from collections.abc import Sequence
from typing import Any

from .dtypes import dtype
from .generated.ops import cat, real, slice_backward, stack
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
    "cat_tensors_backward",
    "stack_tensors_backward",
    "split_backward",
    "split_with_sizes_backward",
    "unbind_backward",
    "unsqueeze_to",
    "slice_backward_wrapper",
    "sum_backward",
    "mean_backward",
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


def _zeros(shape: Sequence[int], dtype: dtype) -> Tensor:
    return Tensor(np.zeros(tuple(shape), dtype.numpy))


def cat_tensors_backward(
    grad: Tensor | None,
    sizes: Sequence[tuple[int, ...]],
    dtypes: Sequence[dtype],
    dim: int,
) -> list[Tensor | None]:
    """Split the gradient of `cat` back into one piece per input."""
    if grad is None:
        return [None] * len(sizes)
    dim = _wrap_dim(dim, grad.dim())
    pieces: list[Tensor | None] = []
    start = 0
    for shape, input_dtype in zip(sizes, dtypes):
        if shape == (0,):  # PyTorch skips legacy empty 1-d inputs
            pieces.append(_zeros(shape, input_dtype))
            continue
        length = shape[dim]
        pieces.append(handle_r_to_c(input_dtype, grad.narrow(dim, start, length)))  # type: ignore[attr-defined]
        start += length
    return pieces


def stack_tensors_backward(
    grad: Tensor | None, dim: int, dtypes: Sequence[dtype]
) -> list[Tensor | None]:
    """One slice of the gradient of `stack` per input."""
    if grad is None:
        return [None] * len(dtypes)
    slices = grad.unbind(dim)  # type: ignore[attr-defined]
    return [handle_r_to_c(d, g) for d, g in zip(dtypes, slices)]


def split_with_sizes_backward(
    grads: Sequence[Tensor | None],
    split_sizes: Sequence[int],
    dim: int,
    sizes: tuple[int, ...],
    options: dtype,
) -> Tensor:
    """Concatenate the pieces' gradients; a piece without one contributes zeros."""
    dim = _wrap_dim(dim, len(sizes))
    filled = []
    for grad, length in zip(grads, split_sizes):
        if grad is None:
            shape = list(sizes)
            shape[dim] = length
            grad = _zeros(shape, options)
        filled.append(grad)
    return cat(filled, dim)  # type: ignore[no-any-return]


def split_backward(
    grads: Sequence[Tensor | None],
    split_size: int,
    dim: int,
    sizes: tuple[int, ...],
    options: dtype,
) -> Tensor:
    dim = _wrap_dim(dim, len(sizes))
    size = sizes[dim]
    lengths = [min(split_size, size - start) for start in range(0, size, split_size)] or [0]
    return split_with_sizes_backward(grads, lengths, dim, sizes, options)


def unbind_backward(grads: Sequence[Tensor | None], dim: int) -> Tensor:
    """Stack the slices' gradients; a slice without one contributes zeros."""
    defined = next((g for g in grads if g is not None), None)
    assert defined is not None, "the engine only runs a node that received a gradient"
    filled = [g if g is not None else _zeros(defined.shape, defined.dtype) for g in grads]
    return stack(filled, dim)  # type: ignore[no-any-return]


def unsqueeze_to(grad: Tensor, *args: Any) -> Tensor:
    """`unsqueeze_to(grad, sizes)` or `unsqueeze_to(grad, dim, sizes)`: put back the
    size-1 dimensions that squeeze removed."""
    sizes = args[-1]
    return grad.reshape(sizes)  # type: ignore[attr-defined,no-any-return]


def slice_backward_wrapper(
    grad: Tensor,
    input_sizes: tuple[int, ...],
    dim: int,
    start: int | None,
    end: int | None,
    step: int,
) -> Tensor:
    """slice_backward with None bounds filled in, as PyTorch's wrapper does."""
    return slice_backward(  # type: ignore[no-any-return]
        grad, input_sizes, dim, 0 if start is None else start, end if end is not None else 2**63 - 1, step
    )


def sum_backward(
    grad: Tensor, sizes: tuple[int, ...], dims: Sequence[int] | None, keepdim: bool
) -> Tensor:
    """Broadcast the gradient of a sum back over the summed dimensions."""
    if not keepdim and len(sizes) > 0:
        if dims is None or len(dims) == 0:
            return grad.expand(sizes)  # type: ignore[attr-defined,no-any-return]
        for dim in sorted(_wrap_dim(d, len(sizes)) for d in dims):
            grad = grad.unsqueeze(dim)  # type: ignore[attr-defined]
    return grad.expand(sizes)  # type: ignore[attr-defined,no-any-return]


def mean_backward(
    grad: Tensor,
    sizes: tuple[int, ...],
    dims: Sequence[int] | None,
    numel: int,
    keepdim: bool,
) -> Tensor:
    """The gradient of a mean: the sum's, divided by how many were averaged."""
    if dims is None or len(dims) == 0 or len(sizes) == 0:
        count = numel
    else:
        count = int(np.prod([sizes[_wrap_dim(d, len(sizes))] for d in dims]))
    return sum_backward(grad, sizes, dims, keepdim) * (1.0 / count if count else float("nan"))


# ---- batch A: unary elementwise ----
# (functions of this group go here; add their names with `__all__ += [...]`)
#


# ---- batch B: binary, comparison and logical ----
# (functions of this group go here; add their names with `__all__ += [...]`)
#


# ---- batch C: reductions, scans and indexing ----
# (functions of this group go here; add their names with `__all__ += [...]`)
#


# ---- batch D: linear algebra and losses ----
# (functions of this group go here; add their names with `__all__ += [...]`)
#

__all__ += [
    "mm_mat1_backward",
    "mm_mat2_backward",
    "apply_loss_reduction",
    "mse_loss_double_backward",
    "binary_cross_entropy_target_backward",
    "binary_cross_entropy_double_backward",
    "binary_cross_entropy_double_backward_target",
    "binary_cross_entropy_double_backward_grad_output",
]

_REDUCTION_MEAN, _REDUCTION_SUM = 1, 2  # at::Reduction (None is 0)
_BCE_EPS = 1e-12  # binary_cross_entropy's epsilon, for all dtypes (as PyTorch)


def mm_mat1_backward(
    grad: Tensor, mat2: Tensor, mat1_sizes: tuple[int, ...], alpha: Number
) -> Tensor:
    """d(alpha * mat1 @ mat2)/d(mat1) applied to grad: grad @ mat2^H * conj(alpha).

    PyTorch's helper also takes mat1's strides and layout, only to return a
    column-major gradient for a column-major mat1; the values are the same."""
    return maybe_multiply(grad.mm(mat2.t().conj()), scalar_conj(alpha))  # type: ignore[attr-defined]


def mm_mat2_backward(
    grad: Tensor, mat1: Tensor, mat2_sizes: tuple[int, ...], alpha: Number
) -> Tensor:
    """d(alpha * mat1 @ mat2)/d(mat2) applied to grad: mat1^H @ grad * conj(alpha)."""
    return maybe_multiply(mat1.t().conj().mm(grad), scalar_conj(alpha))  # type: ignore[attr-defined]


def apply_loss_reduction(unreduced: Tensor, reduction: int) -> Tensor:
    """The mean, the sum, or the loss unreduced, as `reduction` says."""
    if reduction == _REDUCTION_MEAN:
        return unreduced.mean()  # type: ignore[attr-defined,no-any-return]
    if reduction == _REDUCTION_SUM:
        return unreduced.sum()  # type: ignore[attr-defined,no-any-return]
    return unreduced


def _divide_by_numel(tensor: Tensor, numel: int) -> Tensor:
    """`tensor / numel` (a mean's scale; an empty input gives nan as 0/0 does)."""
    return tensor * (1.0 / numel if numel else float("nan"))


def mse_loss_double_backward(grad: Tensor, input: Tensor, reduction: int) -> Tensor:
    """The derivative of mse_loss_backward with respect to self: 2 * grad (/ numel)."""
    grad_input = 2 * grad
    if reduction == _REDUCTION_MEAN:
        grad_input = _divide_by_numel(grad_input, input.numel())
    return grad_input


def binary_cross_entropy_target_backward(
    grad: Tensor,
    self: Tensor,
    target: Tensor,
    weight: Tensor | None,
    reduction: int,
) -> Tensor:
    """d(binary_cross_entropy)/d(target) applied to grad: -logit(self) * grad.

    `logit` is an operator of the unary batch; before it is merged this gradient
    (only needed when the target requires grad) raises AttributeError."""
    grad_target = self.logit().neg() * grad  # type: ignore[attr-defined]
    if weight is not None:
        grad_target = grad_target * weight
    if reduction == _REDUCTION_MEAN:
        grad_target = _divide_by_numel(grad_target, target.numel())
    return grad_target  # type: ignore[no-any-return]


def binary_cross_entropy_double_backward(
    grad_output: Tensor,
    grad: Tensor,
    input: Tensor,
    target: Tensor,
    weight: Tensor | None,
    reduction: int,
) -> Tensor:
    """The derivative of binary_cross_entropy_backward with respect to self."""
    eps = _BCE_EPS
    input_plus_eps = input + eps
    one_minus_input_plus_eps = 1 - input + eps
    numerator = input * input - 2 * input * target + target
    denominator = input_plus_eps.pow(2) * one_minus_input_plus_eps.pow(2)
    grad_input = numerator * denominator.pow(-1) * (grad * grad_output)
    if weight is not None:
        grad_input = grad_input * weight
    if reduction == _REDUCTION_MEAN:
        return _divide_by_numel(grad_input, input.numel())
    return grad_input


def binary_cross_entropy_double_backward_grad_output(
    grad: Tensor,
    input: Tensor,
    target: Tensor,
    weight: Tensor | None,
    reduction: int,
) -> Tensor:
    """The derivative of binary_cross_entropy_backward with respect to grad_output."""
    eps = _BCE_EPS
    grad_grad_output = (input - target) * ((input + eps) * (1 - input + eps)).pow(-1) * grad
    if weight is not None:
        grad_grad_output = grad_grad_output * weight
    if reduction == _REDUCTION_MEAN:
        return _divide_by_numel(grad_grad_output, input.numel())
    return grad_grad_output


def binary_cross_entropy_double_backward_target(
    grad: Tensor,
    grad_output: Tensor,
    self: Tensor,
    target: Tensor,
    weight: Tensor | None,
    reduction: int,
) -> Tensor:
    """The derivative of binary_cross_entropy_backward with respect to target:
    -grad * grad_output / max((1 - self) * self, eps).

    PyTorch clamps the denominator in place under no_grad, so the clamp changes its
    value but not its gradient; adding the (constant) difference does the same."""
    result = -grad * grad_output
    if weight is not None:
        result = result * weight
    denominator = (1 - self) * self
    clamped = np.maximum(denominator._data, _BCE_EPS)
    denominator = denominator + Tensor(clamped - denominator._data)
    result = result * denominator.pow(-1)
    if reduction == _REDUCTION_MEAN:
        result = _divide_by_numel(result, target.numel())
    return result
