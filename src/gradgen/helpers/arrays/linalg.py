"""Array twins of the matrix products and their backward helpers."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...numpy_kernels import bmm as _bmm, mm as _mm, mv as _mv
from ...numpy_kernels.linalg import _column_major
from ._common import as_array, scalar_conj
from .elementwise import conj, maybe_multiply
from .shape import t

__all__ = ["mm", "bmm", "mv", "mm_mat1_backward", "mm_mat2_backward"]


def mm(self: np.ndarray, mat2: np.ndarray) -> np.ndarray:
    return as_array(_mm(as_array(self), as_array(mat2)))


def mv(self: np.ndarray, vec: np.ndarray) -> np.ndarray:
    return as_array(_mv(as_array(self), as_array(vec)))


def bmm(self: np.ndarray, mat2: np.ndarray) -> np.ndarray:
    return as_array(_bmm(as_array(self), as_array(mat2)))


def mm_mat1_backward(
    grad: np.ndarray,
    mat2: np.ndarray,
    mat1_sizes: Any,
    mat1_strides: Any,
    mat1_layout: Any,
    alpha: Any,
) -> np.ndarray:
    """grad @ mat2^H * conj(alpha); for a column-major mat1, (mat2^* @ grad^T)^T (as
    the tensor form, PyTorch's)."""
    transposed = _column_major(mat1_sizes, mat1_strides, mat1_layout)
    if alpha == 1 and _real_matrices(grad, mat2):
        # nn.Linear's and matmul's case: conj and alpha change nothing, and the
        # kernel's checks hold for the shapes the forward accepted (the same matmul).
        if transposed:
            return np.matmul(mat2, grad.T).T  # type: ignore[no-any-return]
        product: np.ndarray = np.matmul(grad, mat2.T)
        return product
    if transposed:
        return maybe_multiply(t(mm(conj(mat2), t(grad))), scalar_conj(alpha))
    return maybe_multiply(mm(grad, conj(t(mat2))), scalar_conj(alpha))


def mm_mat2_backward(
    grad: np.ndarray,
    mat1: np.ndarray,
    mat2_sizes: Any,
    mat2_strides: Any,
    mat2_layout: Any,
    alpha: Any,
) -> np.ndarray:
    """mat1^H @ grad * conj(alpha); for a column-major mat2, (grad^T @ mat1^*)^T."""
    transposed = _column_major(mat2_sizes, mat2_strides, mat2_layout)
    if alpha == 1 and _real_matrices(grad, mat1):
        if transposed:  # nn.Linear's weight.t(): the weight's gradient row-major
            return np.matmul(grad.T, mat1).T  # type: ignore[no-any-return]
        product: np.ndarray = np.matmul(mat1.T, grad)
        return product
    if transposed:
        return maybe_multiply(t(mm(t(grad), conj(mat1))), scalar_conj(alpha))
    return maybe_multiply(mm(conj(t(mat1)), grad), scalar_conj(alpha))


def _real_matrices(grad: Any, mat: Any) -> bool:
    """Two real floating 2-d ndarrays of one dtype: what the general path's mm (after
    t and conj, which change nothing then) multiplies with np.matmul unchanged."""
    return (
        grad.__class__ is _NDARRAY
        and mat.__class__ is _NDARRAY
        and grad.dtype is mat.dtype
        and grad.dtype.kind == "f"
        and grad.ndim == 2
        and mat.ndim == 2
    )


_NDARRAY = np.ndarray
