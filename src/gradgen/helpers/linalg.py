"""Formula helpers of the linalg family: matrix products, trace, norms."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..generated import operators
from ..generated.ops import real, where
from ..numpy_kernels.linalg import _column_major
from ..tensor import Tensor
from ._common import (
    Number,
    _unsqueeze_multiple,
    maybe_multiply,
    scalar_conj,
    zeros_like,
)

__all__ = [
    "mm_mat1_backward",
    "mm_mat2_backward",
    "trace_backward",
    "norm_backward",
    "norm_jvp",
    "linalg_vector_norm_backward",
    "linalg_vector_norm_jvp",
    "renorm_backward",
    "renorm_jvp",
]


def mm_mat1_backward(
    grad: Tensor,
    mat2: Tensor,
    mat1_sizes: tuple[int, ...],
    mat1_strides: tuple[int, ...],
    mat1_layout: str,
    alpha: Number,
) -> Tensor:
    """d(alpha * mat1 @ mat2)/d(mat1) applied to grad: grad @ mat2^H * conj(alpha).

    As PyTorch's: for a column-major mat1 (a transposed matrix, e.g. nn.Linear's
    weight.t()) the product is computed transposed, (mat2^* @ grad^T)^T, so the
    gradient comes out column-major too (and the weight's own, after t(), row-major)."""
    if _column_major(mat1_sizes, mat1_strides, mat1_layout):
        return maybe_multiply(mat2.conj().mm(grad.t()).t(), scalar_conj(alpha))
    return maybe_multiply(grad.mm(mat2.t().conj()), scalar_conj(alpha))


def mm_mat2_backward(
    grad: Tensor,
    mat1: Tensor,
    mat2_sizes: tuple[int, ...],
    mat2_strides: tuple[int, ...],
    mat2_layout: str,
    alpha: Number,
) -> Tensor:
    """d(alpha * mat1 @ mat2)/d(mat2) applied to grad: mat1^H @ grad * conj(alpha);
    for a column-major mat2, (grad^T @ mat1^*)^T, as mm_mat1_backward."""
    if _column_major(mat2_sizes, mat2_strides, mat2_layout):
        return maybe_multiply(grad.t().mm(mat1.conj()).t(), scalar_conj(alpha))
    return maybe_multiply(mat1.t().conj().mm(grad), scalar_conj(alpha))


def trace_backward(grad: Tensor, sizes: Sequence[int]) -> Tensor:
    """The gradient of trace: grad on the diagonal of a matrix of `sizes`, zeros
    elsewhere (PyTorch's trace_backward_symint)."""
    if len(sizes) != 2:
        raise RuntimeError("expected matrix input")
    eye = Tensor(np.eye(sizes[0], sizes[1], dtype=grad._data.dtype))
    return grad * eye


def _norm_order(p: Number | None) -> float:
    """The order of a norm as a double (2 when None, PyTorch's p.value_or(2))."""
    if p is None:
        return 2.0
    return float(p.real if isinstance(p, complex) else p)


def _reduced_dims(dim: Sequence[int] | None) -> Sequence[int]:
    return () if dim is None else dim


def norm_backward(
    grad: Tensor | None,
    self: Tensor,
    p: Number | None,
    norm: Tensor,
    dim: Sequence[int] = (),
    keepdim: bool = False,
) -> Tensor | None:
    """The gradient of the p-norm of `self` over `dim` (every dim when empty), with
    PyTorch's cases: none for p = 0 (a count), sgn(self) for p = 1, self / norm for
    p = 2 (0 where the norm is 0), the elements of largest magnitude sharing it for
    p = inf, and sgn(self) |self|^(p-1) / norm^(p-1) otherwise."""
    if grad is None:
        return None
    ndim = self.dim()
    order = _norm_order(p)
    if not keepdim and ndim != 0:
        grad = _unsqueeze_multiple(grad, dim, ndim)
        norm = _unsqueeze_multiple(norm, dim, ndim)
    if order == 0.0:
        return None
    if order == 1.0:
        return self.sgn() * grad
    if order == 2.0:
        return grad * (self / norm).masked_fill(norm.eq(0), 0)
    if np.isinf(order):
        self_abs = self.abs()
        mask = self_abs.eq(norm).logical_or(self_abs.isnan())
        return self.sgn() * ((grad / mask.sum(dim, True)) * mask)
    if order < 1.0:
        self_scaled = self.sgn() * self.abs().pow(order - 1).masked_fill(self.eq(0), 0)
        return self_scaled * grad * norm.pow(1 - order)
    if order < 2.0:
        self_scaled = self.sgn() * self.abs().pow(order - 1)
    else:
        self_scaled = self * self.abs().pow(order - 2)
    scale_v = (grad / norm.pow(order - 1)).masked_fill(norm.eq(0), 0)
    return self_scaled * scale_v


def norm_jvp(
    self_p: Tensor,
    self_t: Tensor,
    p: Number | None,
    norm: Tensor,
    dim: Sequence[int] | None = (),
    keepdim: bool = False,
) -> Tensor:
    """The tangent of the p-norm of `self_p` over `dim` (every dim when None or empty)
    for the tangent `self_t`."""
    dim = _reduced_dims(dim)
    ndim = self_p.dim()
    order = _norm_order(p)
    if order == 0.0:
        return zeros_like(norm)
    if order == 1.0:
        return real(self_p.sgn() * self_t.conj()).sum(dim, keepdim)
    if order == 2.0:
        total = real(self_p * self_t.conj()).sum(dim, keepdim)
        return total.div(norm).masked_fill(norm.eq(0), 0)
    if np.isinf(order):
        if not keepdim and ndim != 0:
            norm = _unsqueeze_multiple(norm, dim, ndim)
        both_nan = self_p.isnan().logical_and(norm.isnan())
        is_eq_max = self_p.abs().eq(norm).logical_or(both_nan).to(norm.dtype)
        nb_max = is_eq_max.sum(dim, True)
        sgn_t = real(self_p.sgn() * self_t.conj())
        return (sgn_t * is_eq_max / nb_max).sum(dim, keepdim)
    if order < 1.0:
        weights = self_p.abs().pow(order - 1).masked_fill(self_p.eq(0), 0)
        total = (weights * real(self_p.sgn() * self_t.conj())).sum(dim, keepdim)
        return total * norm.pow(1 - order)
    if order < 2.0:
        weights = self_p.abs().pow(order - 1)
        total = (weights * real(self_p.sgn() * self_t.conj())).sum(dim, keepdim)
    else:
        weights = self_p.abs().pow(order - 2)
        total = (weights * real(self_p * self_t.conj())).sum(dim, keepdim)
    return (total / norm.pow(order - 1)).masked_fill(norm.eq(0), 0)


def linalg_vector_norm_jvp(
    self_p: Tensor,
    self_t: Tensor,
    scalar_ord: Number,
    norm: Tensor,
    dim: Sequence[int] | None,
    keepdim: bool,
) -> Tensor:
    """norm_jvp over `dim` (every dim when None)."""
    return norm_jvp(self_p, self_t, scalar_ord, norm, dim, keepdim)


def linalg_vector_norm_backward(
    grad: Tensor | None,
    self: Tensor,
    ord: Number,
    norm: Tensor,
    dim: Sequence[int] | None,
    keepdim: bool,
) -> Tensor | None:
    """norm_backward over `dim` (every dim when None); `dtype` needs nothing: the
    engine converts the gradient to self's dtype."""
    return norm_backward(grad, self, ord, norm, _reduced_dims(dim), keepdim)


def _renorm_dims(self: Tensor, dim: int) -> list[int]:
    """Every dimension but `dim`: the ones renorm's norms reduce."""
    ndim = self.dim()
    kept = dim % ndim if ndim else 0
    return [d for d in range(ndim) if d != kept]


def _renorm_norm(self: Tensor, p: Number, dims: Sequence[int]) -> Tensor:
    """The p-norm of each slice, kept as a size-1 dimension."""
    return operators.linalg_vector_norm.call(self, p, dims, True, None)  # type: ignore[no-any-return]


def renorm_backward(
    grad: Tensor | None, self: Tensor, p: Number, dim: int, maxnorm: Number
) -> Tensor | None:
    """The gradient of renorm: where a slice's norm n exceeds maxnorm, its output is
    self * maxnorm / (n + 1e-7), whose derivative adds the term through n."""
    if grad is None:
        return None
    dims = _renorm_dims(self, dim)
    norm = _renorm_norm(self, p, dims)
    grad_output = self.conj() * grad
    if grad_output.is_complex():
        grad_output = real(grad_output)
    grad_output = grad_output.sum(dims, True)
    nb = norm_backward(grad_output, self, p, norm, dims, True)
    invnorm = (norm + 1e-7).reciprocal()
    factor = invnorm * maxnorm
    scaled = (
        factor * grad
        if nb is None
        else factor * grad - maxnorm * invnorm * invnorm * nb
    )
    return where(norm > maxnorm, scaled, grad)


def renorm_jvp(
    self_p: Tensor, self_t: Tensor, p: Number, dim: int, maxnorm: Number
) -> Tensor:
    """The tangent of renorm: maxnorm / (n + 1e-7) * self_t less self_p times the
    norm's tangent over (n + 1e-7)^2, where the norm n exceeds maxnorm."""
    dims = _renorm_dims(self_p, dim)
    norm = _renorm_norm(self_p, p, dims)
    invnorm = (norm + 1e-7).reciprocal()
    norm_t = norm_jvp(self_p, self_t, p, norm, dims, True)
    scaled = (
        invnorm * maxnorm * self_t - self_p * (maxnorm * invnorm * invnorm) * norm_t
    )
    return where(norm > maxnorm, scaled, self_t)
