"""Kernels of the linalg family's scaled products (addmv, addr, addbmm, baddbmm), the
ATen norm overloads and renorm: PyTorch's checks and messages, BLAS's convention that
beta == 0 ignores `self` (nan and inf included)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..dtypes import scalar_type_name as _scalar_type_name
from ..dtypes import spelling
from ._common import _not_implemented_for, _scalar_type, _wrap_dim
from .linalg import _expand_size, _scalar_as, vector_norm

__all__ = ["addmv", "addr", "addbmm", "baddbmm", "aten_norm", "renorm"]


def _scaled_sum(
    self: np.ndarray, product: np.ndarray, beta: Any, alpha: Any
) -> np.ndarray:
    """beta * self + alpha * product in self's dtype (self already broadcast);
    beta == 0 ignores self and alpha == 0 the product."""
    beta, alpha = _scalar_as(beta, self), _scalar_as(alpha, self)
    scaled = np.zeros(product.shape, self.dtype) if alpha == 0 else product * alpha
    if beta == 0:
        return np.asarray(scaled).astype(self.dtype, copy=False)
    return np.asarray(self * beta + scaled).astype(self.dtype, copy=False)


def addmv(
    self: np.ndarray, mat: np.ndarray, vec: np.ndarray, beta: Any, alpha: Any
) -> np.ndarray:
    """beta * self + alpha * (mat @ vec), `self` broadcast to mat's rows."""
    if mat.ndim != 2 or vec.ndim != 1 or self.ndim > 1:
        raise RuntimeError(
            f"vector + matrix @ vector expected, got {self.ndim}, {mat.ndim}, {vec.ndim}"
        )
    if mat.shape[1] != vec.shape[0] or self.shape not in ((mat.shape[0],), (1,), ()):
        size = self.shape[0] if self.ndim else 1
        raise RuntimeError(
            f"size mismatch, got input ({size}), mat "
            f"({mat.shape[0]}x{mat.shape[1]}), vec ({vec.shape[0]})"
        )
    if not self.dtype == mat.dtype == vec.dtype:
        raise RuntimeError(
            "addmv input tensors must have the same dtype, but got "
            f"{_scalar_type(self)}, {_scalar_type(mat)}, and {_scalar_type(vec)}"
        )
    if mat.dtype.kind == "b":
        raise _not_implemented_for("addmv_impl_cpu", mat)
    base = np.broadcast_to(self, (mat.shape[0],))
    return _scaled_sum(base, np.matmul(mat, vec), beta, alpha)


def _check_integral_scalars(self: np.ndarray, beta: Any, alpha: Any) -> None:
    """addr's checks of beta and alpha against the result's dtype."""
    for name, value in (("beta", beta), ("alpha", alpha)):
        if self.dtype.kind != "b" and isinstance(value, bool):
            raise RuntimeError(f"Boolean {name} only supported for Boolean results.")
    for name, value in (("beta", beta), ("alpha", alpha)):
        if self.dtype.kind in "biu" and isinstance(value, (float, complex)):
            raise RuntimeError(
                f"For integral input tensors, argument {name} must not be a floating "
                "point number."
            )


def addr(
    self: np.ndarray, vec1: np.ndarray, vec2: np.ndarray, beta: Any, alpha: Any
) -> np.ndarray:
    """beta * self + alpha * outer(vec1, vec2) (promoted operands); for bool, `and`
    for the products and `or` for the sum."""
    for name, vec in (("vec1", vec1), ("vec2", vec2)):
        if vec.ndim != 1:
            raise RuntimeError(
                f"addr: Expected 1-D argument {name}, but got {vec.ndim}-D"
            )
    _check_integral_scalars(self, beta, alpha)
    shape = (vec1.shape[0], vec2.shape[0])
    base = _expand_size(self, shape)
    product = np.multiply.outer(vec1, vec2)
    if self.dtype.kind == "b":
        scaled = product if alpha else np.zeros(shape, bool)
        return np.asarray(scaled | base if beta else scaled)
    return _scaled_sum(base, product, beta, alpha)


def _check_batches(batch1: np.ndarray, batch2: np.ndarray) -> None:
    """The shapes of two batches of matrices to multiply."""
    for name, batch in (("batch1", batch1), ("batch2", batch2)):
        if batch.ndim != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    if batch1.shape[0] != batch2.shape[0]:
        raise RuntimeError(
            "batch1 and batch2 must have same number of batches, got "
            f"{batch1.shape[0]} and {batch2.shape[0]}"
        )
    if batch1.shape[2] != batch2.shape[1]:
        raise RuntimeError(
            f"Incompatible matrix sizes for bmm ({batch1.shape[1]}x{batch1.shape[2]} "
            f"and {batch2.shape[1]}x{batch2.shape[2]})"
        )


def addbmm(
    self: np.ndarray, batch1: np.ndarray, batch2: np.ndarray, beta: Any, alpha: Any
) -> np.ndarray:
    """beta * self + alpha * sum_b (batch1[b] @ batch2[b])."""
    _check_batches(batch1, batch2)
    if self.dtype != batch2.dtype or batch1.dtype != batch2.dtype:
        other = batch1 if self.dtype == batch2.dtype else self
        raise RuntimeError(
            f"{'mat1' if other is batch1 else 'self'} and mat2 must have the same "
            f"dtype, but got {_scalar_type(other)} and {_scalar_type(batch2)}"
        )
    if self.dtype.kind == "b":
        raise _not_implemented_for("addmm_impl_cpu_", self)
    shape = (batch1.shape[1], batch2.shape[2])
    base = _expand_size(self, shape)
    product = np.einsum("bij,bjk->ik", batch1, batch2)
    return _scaled_sum(base, product, beta, alpha)


def baddbmm(
    self: np.ndarray, batch1: np.ndarray, batch2: np.ndarray, beta: Any, alpha: Any
) -> np.ndarray:
    """beta * self + alpha * (batch1 @ batch2), batch by batch."""
    _check_batches(batch1, batch2)
    if batch1.dtype != batch2.dtype:
        raise RuntimeError(
            f"expected scalar type {_scalar_type(batch1)} but found "
            f"{_scalar_type(batch2)}"
        )
    if self.dtype != batch1.dtype:
        raise RuntimeError(
            f"Input dtypes must be the same, got: input {_dtype_word(self)}, "
            f"batch1: {_dtype_word(batch1)}, batch2: {_dtype_word(batch2)}"
        )
    if self.dtype.kind == "b":
        raise _not_implemented_for("baddbmm", self)
    shape = (batch1.shape[0], batch1.shape[1], batch2.shape[2])
    base = _expand_size(self, shape)
    return _scaled_sum(base, np.matmul(batch1, batch2), beta, alpha)


def _dtype_word(array: np.ndarray) -> str:
    """PyTorch's lower-case dtype word (float, double, ...)."""
    return {"float32": "float", "float64": "double"}.get(
        array.dtype.name, array.dtype.name
    )


def aten_norm(
    self: np.ndarray,
    p: Any,
    dim: Sequence[int] | None,
    keepdim: bool,
    dtype: Any,
) -> np.ndarray:
    """The ATen norm overloads: linalg_vector_norm of floating or complex input, with
    norm's own messages; p None is 2."""
    if self.dtype.kind not in "fc":
        raise RuntimeError(
            "norm(): input dtype should be either floating point or complex. Got "
            f"{_scalar_type_name(self)} instead."
        )
    if dtype is not None and np.dtype(dtype.numpy).kind not in "fc":
        raise RuntimeError(
            "norm(): the desired output dtype should be either floating point or "
            f"complex. Got {spelling(np.dtype(dtype.numpy)).scalar_type} instead."
        )
    return vector_norm(self, 2 if p is None else p, dim, keepdim, dtype)


def renorm(self: np.ndarray, p: Any, dim: int, maxnorm: Any) -> np.ndarray:
    """Each slice along `dim` whose p-norm exceeds maxnorm, scaled down to norm
    maxnorm (by maxnorm / (norm + 1e-7), as PyTorch does)."""
    if isinstance(p, complex):
        raise RuntimeError("renorm: p must be real-valued")
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if isinstance(maxnorm, complex):
        raise RuntimeError("renorm: maxnorm must be real-valued")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if self.ndim <= 1:
        raise RuntimeError(
            f"renorm: input needs at least 2 dimensions, got {self.ndim} dimensions"
        )
    dim = _wrap_dim(dim, self.ndim)
    others = tuple(d for d in range(self.ndim) if d != dim)
    norm = vector_norm(self, p, others, True, None)
    factor = np.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0).astype(norm.dtype)
    return np.asarray(self * factor).astype(self.dtype, copy=False)
