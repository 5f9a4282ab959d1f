"""Linear algebra kernels: matrix products, triangles, trace, norms."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..dtypes import spelling
from ..dtypes import scalar_type_name as _scalar_type_name
from ._half import in_float32, is_half, rounded
from ._common import (
    _check_broadcast,
    _common_dtype,
    _not_implemented_for,
    _reduction_dims,
    _scalar_type,
    _silently,
)
from .shape import expand

__all__ = [
    "mm",
    "bmm",
    "dot",
    "vdot",
    "mv",
    "addmm",
    "tril",
    "triu",
    "trace",
    "vector_norm",
    "dist",
]


def _check_not_bool(kernel: str, array: np.ndarray) -> None:
    if array.dtype.kind == "b":
        raise _not_implemented_for(kernel, array)


def mm(self: np.ndarray, mat2: np.ndarray) -> np.ndarray:
    """A matrix product of two matrices of one dtype (PyTorch's checks and messages)."""
    dtype = self.dtype
    if (
        dtype is mat2.dtype
        and dtype.kind in "fc"
        and self.ndim == 2
        and mat2.ndim == 2
        and self.shape[1] == mat2.shape[0]
    ):
        # The common case (two float or complex matrices that fit): the checks below
        # all pass.
        product: np.ndarray = np.matmul(self, mat2)
        return product
    if self.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    if self.shape[1] != mat2.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({self.shape[0]}x{self.shape[1]} "
            f"and {mat2.shape[0]}x{mat2.shape[1]})"
        )
    if self.dtype != mat2.dtype:
        raise RuntimeError(
            "expected m1 and m2 to have the same dtype, but got: "
            f"{spelling(self).typeid} != {spelling(mat2).typeid}"
        )
    _check_not_bool("addmm_impl_cpu_", self)
    if is_half(
        self
    ):  # bfloat16 (float16 takes the path above: numpy's sums in float32)
        return rounded(_float32_product(self, mat2), self.dtype)
    return np.matmul(self, mat2)


def _float32_product(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """The matrix product of half-precision arrays, accumulated in float32 (PyTorch's
    half GEMMs accumulate in float)."""
    return np.matmul(left.astype(np.float32), right.astype(np.float32))


def _column_major(sizes: Sequence[int], strides: Sequence[int], layout: str) -> bool:
    """Whether a strided matrix of `sizes` and `strides` (in elements) is stored column
    by column (PyTorch's test in mm_mat1_backward: strides[0] == 1, strides[1] ==
    sizes[0])."""
    return layout == "strided" and strides[0] == 1 and strides[1] == sizes[0]


def bmm(self: np.ndarray, mat2: np.ndarray) -> np.ndarray:
    """Matrix products of two batches of matrices, batch by batch."""
    if self.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if mat2.shape[0] != self.shape[0] or mat2.shape[1] != self.shape[2]:
        raise RuntimeError(
            "Expected size for first two dimensions of batch2 tensor to be: "
            f"[{self.shape[0]}, {self.shape[2]}] but got: [{mat2.shape[0]}, {mat2.shape[1]}]."
        )
    if self.dtype != mat2.dtype:
        raise RuntimeError(
            f"expected scalar type {_scalar_type(self)} but found {_scalar_type(mat2)}"
        )
    _check_not_bool("bmm", self)
    if self.dtype.kind == "V":  # bfloat16 (numpy's float16 products sum in float32)
        return rounded(_float32_product(self, mat2), self.dtype)
    if self.shape[2] == 1:
        # Outer products (vmap's per-example weight gradients): numpy's matmul over a
        # contraction of length one is far slower than the products it equals.
        return _outer(self, mat2)
    batch, rows, inner = self.shape
    columns = mat2.shape[2]
    if batch > 1 and mat2.strides[0] == 0:
        # One matrix repeated over the batch (vmap's expanded weights): one product
        # of all rows instead of numpy's matrix-by-matrix loop.
        flat = np.ascontiguousarray(self).reshape(batch * rows, inner)
        return np.matmul(flat, mat2[0]).reshape(batch, rows, columns)
    if batch > 1 and self.strides[0] == 0:
        flat = np.ascontiguousarray(mat2.transpose(0, 2, 1)).reshape(
            batch * columns, inner
        )
        product = np.matmul(flat, self[0].T).reshape(batch, columns, rows)
        return np.ascontiguousarray(product.transpose(0, 2, 1))
    return np.matmul(self, mat2)


def _outer(self: np.ndarray, mat2: np.ndarray) -> np.ndarray:
    """bmm of (b, n, 1) by (b, 1, m): each batch's outer product. Written in the
    memory order (b, m, n) and returned transposed, so that the transpose a caller
    takes next (vmap's per-example weight gradients: the backward of weight.t()) is
    contiguous. Large float32 and float64 ones by BLAS over a contraction of length
    2 (numpy's matmul over a contraction of length 1 has no fast path, and einsum
    first zeroes its output: about twice the time): two examples per product
    (`_outer_pairs`), or one padded by zeros."""
    left, right = mat2[:, 0, :], self[:, :, 0]
    batch, rows_, columns_ = left.shape[0], left.shape[1], right.shape[1]
    if self.dtype not in _BLAS_REAL or rows_ * columns_ < 256:
        return np.einsum("bi,bj->bij", left, right).transpose(0, 2, 1)
    if batch % 2 == 0 and np.isfinite(right).all():
        return _outer_pairs(left, right).transpose(0, 2, 1)
    # (stored by columns, as `_outer_pairs`'s block diagonal: ~5% faster)
    columns = np.zeros((batch, 2, rows_), self.dtype)
    columns[:, 0, :] = left
    rows = np.zeros((batch, 2, columns_), self.dtype)
    rows[:, 0, :] = right
    return np.matmul(columns.transpose(0, 2, 1), rows).transpose(0, 2, 1)


def _outer_pairs(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """(b, n, m) outer products of the rows of `left` and `right` (b even), two
    examples per BLAS product: ``[[l0, 0], [0, l1]] @ [r0; r1]`` (2n x 2 by 2 x m)
    gives both, each element its one product plus 0 times the other example's
    (finite) value, exactly the product. Half the calls of one padded product per
    example. The block diagonal is stored by columns (``[l0, 0]`` and ``[0, l1]``
    as rows of a (2, 2n) matrix, given to matmul transposed): two contiguous
    copies to build, and OpenBLAS's product over it takes ~5% less time."""
    batch, n = left.shape
    half = batch // 2
    blocks = np.zeros((half, 2, 2, n), left.dtype)
    examples = left.reshape(half, 2, n)
    blocks[:, 0, 0, :] = examples[:, 0]
    blocks[:, 1, 1, :] = examples[:, 1]
    product = np.matmul(
        blocks.reshape(half, 2, 2 * n).transpose(0, 2, 1),
        right.reshape(half, 2, -1),
    )
    return product.reshape(batch, n, right.shape[1])


_BLAS_REAL = (np.dtype(np.float32), np.dtype(np.float64))


def _check_dot(self: np.ndarray, other: np.ndarray) -> None:
    if self.ndim != 1 or other.ndim != 1:
        raise RuntimeError(
            f"1D tensors expected, but got {self.ndim}D and {other.ndim}D tensors"
        )
    if self.dtype != other.dtype:
        raise RuntimeError(
            "dot : expected both vectors to have same dtype, but found "
            f"{_scalar_type(self)} and {_scalar_type(other)}"
        )
    if self.shape[0] != other.shape[0]:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{self.shape[0]}] and src "
            f"[{other.shape[0]}] to have the same number of elements, but got "
            f"{self.shape[0]} and {other.shape[0]} elements respectively"
        )
    _check_not_bool("dot", self)


def dot(self: np.ndarray, tensor: np.ndarray) -> np.ndarray:
    """The inner product of two vectors, without conjugation; a 0-d result."""
    _check_dot(self, tensor)
    return np.asarray(np.dot(self, tensor), dtype=self.dtype)


def vdot(self: np.ndarray, other: np.ndarray) -> np.ndarray:
    """The inner product conjugating the first vector; a 0-d result."""
    _check_dot(self, other)
    return np.asarray(np.vdot(self, other), dtype=self.dtype)


def mv(self: np.ndarray, vec: np.ndarray) -> np.ndarray:
    """A matrix times a vector (PyTorch computes it as addmv, hence its messages)."""
    if self.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(
            f"vector + matrix @ vector expected, got 1, {self.ndim}, {vec.ndim}"
        )
    if self.shape[1] != vec.shape[0]:
        raise RuntimeError(
            f"size mismatch, got input ({self.shape[0]}), mat "
            f"({self.shape[0]}x{self.shape[1]}), vec ({vec.shape[0]})"
        )
    if self.dtype != vec.dtype:
        raise RuntimeError(
            "addmv input tensors must have the same dtype, but got "
            f"{_scalar_type(vec)}, {_scalar_type(self)}, and {_scalar_type(vec)}"
        )
    _check_not_bool("addmv_impl_cpu", self)
    if self.dtype.kind == "V":  # bfloat16 (numpy's float16 products sum in float32)
        return rounded(_float32_product(self, vec), self.dtype)
    return np.matmul(self, vec)


def _scalar_as(value: Any, array: np.ndarray) -> Any:
    """A Scalar argument converted to the tensor's type, as the kernel reads it."""
    if array.dtype.kind in "iu":
        return int(value.real if isinstance(value, complex) else value)
    if array.dtype.kind == "f":
        if isinstance(value, complex):
            if value.imag != 0:
                raise RuntimeError(
                    f"value cannot be converted to type {spelling(array).typeid} "
                    "without overflow"
                )
            value = value.real
        return array.dtype.type(value)
    return array.dtype.type(value)


def addmm(
    self: np.ndarray, mat1: np.ndarray, mat2: np.ndarray, beta: Any, alpha: Any
) -> np.ndarray:
    """beta * self + alpha * (mat1 @ mat2), `self` broadcast to the product's shape.

    As in BLAS, beta == 0 ignores `self` (nan and inf included) and alpha == 0 the
    product."""
    dtype = self.dtype
    if (
        beta.__class__ is int
        and alpha.__class__ is int
        and beta == 1
        and alpha == 1
        and dtype is mat1.dtype
        and dtype is mat2.dtype
        and dtype.kind in "fc"
        and dtype.itemsize > 2  # half precision: below, in float32
        and mat1.ndim == 2
        and mat2.ndim == 2
        and mat1.shape[1] == mat2.shape[0]
        and (
            self.shape == (mat2.shape[1],)
            or self.shape == (mat1.shape[0], mat2.shape[1])
        )
    ):
        # nn.Linear's case (a bias of the product's columns or shape, beta = alpha =
        # 1): every check below passes, and `self + product` is what the steps below
        # compute, here into the product's own fresh array.
        product: np.ndarray = np.matmul(mat1, mat2)
        return np.add(self, product, out=product)
    if self.dtype != mat2.dtype:
        raise RuntimeError(
            "self and mat2 must have the same dtype, but got "
            f"{_scalar_type(self)} and {_scalar_type(mat2)}"
        )
    if mat1.dtype != mat2.dtype:
        raise RuntimeError(
            "mat1 and mat2 must have the same dtype, but got "
            f"{_scalar_type(mat1)} and {_scalar_type(mat2)}"
        )
    for name, mat in (("mat1", mat1), ("mat2", mat2)):
        if mat.ndim != 2:
            raise RuntimeError(f"{name} must be a matrix, got {mat.ndim}-D tensor")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({mat1.shape[0]}x{mat1.shape[1]} "
            f"and {mat2.shape[0]}x{mat2.shape[1]})"
        )
    _check_not_bool("addmm_impl_cpu_", mat1)
    shape = (mat1.shape[0], mat2.shape[1])
    base = _expand_size(self, shape)
    if is_half(self):  # beta * self + alpha * product in float32, rounded once
        return _half_addmm(base, mat1, mat2, beta, alpha)
    beta, alpha = _scalar_as(beta, self), _scalar_as(alpha, self)
    if alpha == 0:
        product = np.zeros(shape, self.dtype)
    else:
        product = np.matmul(mat1, mat2)
        if alpha != 1:
            product = product * alpha
    if beta == 0:
        return product.astype(self.dtype, copy=False)
    return (base * beta + product if beta != 1 else base + product).astype(
        self.dtype, copy=False
    )


def _half_addmm(
    base: np.ndarray, mat1: np.ndarray, mat2: np.ndarray, beta: Any, alpha: Any
) -> np.ndarray:
    """addmm of half precision as PyTorch's: the product, alpha and beta and the sum
    in float32, rounded once (beta == 0 ignores `base`, alpha == 0 the product)."""
    beta, alpha = np.float32(beta), np.float32(alpha)
    shape = (mat1.shape[0], mat2.shape[1])
    product = _float32_product(mat1, mat2) if alpha else np.zeros(shape, np.float32)
    if alpha != 1:
        product = product * alpha
    if beta:
        product = product + base.astype(np.float32) * beta
    return rounded(product, base.dtype)


def _expand_size(self: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """`self` broadcast to `shape` (PyTorch's expand_size, with its messages)."""
    if self.ndim > len(shape):
        expand(self, shape)  # raises PyTorch's "number of sizes provided" error
    leading = len(shape) - self.ndim
    for i, extent in enumerate(self.shape):
        target = shape[leading + i]
        if extent != 1 and extent != target:
            raise RuntimeError(
                f"The expanded size of the tensor ({target}) must match the existing size "
                f"({extent}) at non-singleton dimension {leading + i}.  Target sizes: "
                f"{list(shape)}.  Tensor sizes: {list(self.shape)}"
            )
    return np.broadcast_to(self, shape)


def _check_matrices(self: np.ndarray, name: str) -> None:
    if self.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")


def tril(self: np.ndarray, diagonal: int) -> np.ndarray:
    """The lower triangle of the last two dims (on and below `diagonal`), zeros above."""
    _check_matrices(self, "tril")
    return np.tril(self, diagonal)


def triu(self: np.ndarray, diagonal: int) -> np.ndarray:
    """The upper triangle of the last two dims (on and above `diagonal`), zeros below."""
    _check_matrices(self, "triu")
    return np.triu(self, diagonal)


def trace(self: np.ndarray) -> np.ndarray:
    """The sum of a matrix's diagonal; integral input gives int64."""
    if self.ndim != 2:
        raise RuntimeError(
            f"trace: expected a matrix, but got tensor with dim {self.ndim}"
        )
    if self.dtype.kind == "b":
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    dtype = np.int64 if self.dtype.kind in "iu" else self.dtype
    return np.asarray(np.trace(self, dtype=dtype))


def _check_vector_norm_dtype(self: np.ndarray, dtype: Any) -> np.ndarray:
    """linalg.vector_norm's checks of the input and `dtype`; the input converted."""
    if self.dtype.kind not in "fcV":  # V: ml_dtypes' bfloat16
        raise RuntimeError(
            "linalg.vector_norm: Expected a floating point or complex tensor as input. "
            f"Got {_scalar_type_name(self)}"
        )
    if dtype is None:
        return self
    wanted = np.dtype(dtype.numpy)
    if wanted.kind not in "fcV":
        raise RuntimeError(
            "linalg.vector_norm: dtype should be floating point or complex, but got "
            f"{spelling(wanted).scalar_type}"
        )
    if (self.dtype.kind == "c") != (wanted.kind == "c"):
        kind = "complex" if self.dtype.kind == "c" else "real"
        raise RuntimeError(
            f"linalg.vector_norm: dtype should be {kind} for {kind} inputs, but got "
            f"{spelling(wanted).scalar_type}"
        )
    if wanted.itemsize < self.dtype.itemsize:
        raise RuntimeError(
            f"linalg.vector_norm: the dtype of the input ({_scalar_type_name(self)}) "
            "should be convertible without narrowing to the specified dtype "
            f"({spelling(wanted).scalar_type})"
        )
    return self.astype(wanted)


@_silently
def vector_norm(
    self: np.ndarray,
    ord: Any,
    dim: Sequence[int] | None,
    keepdim: bool,
    dtype: Any,
) -> np.ndarray:
    """The `ord`-norm of the elements over `dim` (every dim when None or empty): the
    count of non-zeros for 0, the largest (smallest) magnitude for inf (-inf), else
    sum(|x|^ord)^(1/ord). The result is real."""
    self = _check_vector_norm_dtype(self, dtype)
    if is_half(self):  # in float32, rounded once
        return in_float32(vector_norm, self, ord, dim, keepdim, None)
    if isinstance(ord, complex):
        raise RuntimeError(
            "linalg.vector_norm: Expected a non-complex scalar as the order of norm."
        )
    axes = _reduction_dims(dim, self.ndim)
    p = float(ord)
    if math.isinf(p):
        name = "inf" if p > 0 else "-inf"
        if self.size == 0 and (dim is None or len(dim) == 0):
            raise RuntimeError(
                f"linalg.vector_norm cannot compute the {name} norm on an empty tensor "
                "because the operation does not have an identity"
            )
        for d in axes:
            if self.shape[d] == 0:
                raise RuntimeError(
                    f"linalg.vector_norm cannot compute the {name} norm on the "
                    f"dimension {d}because this dimension is empty and the operation "
                    "does not have an identity"
                )
    magnitude = np.abs(self)
    real = magnitude.dtype
    if p == 0:
        result = np.sum(magnitude != 0, axis=axes, keepdims=keepdim, dtype=real)
    elif p == math.inf:
        result = np.max(magnitude, axis=axes, keepdims=keepdim)
    elif p == -math.inf:
        result = np.min(magnitude, axis=axes, keepdims=keepdim)
    elif p == 1:
        result = np.sum(magnitude, axis=axes, keepdims=keepdim)
    elif p == 2:
        result = np.sqrt(np.sum(magnitude * magnitude, axis=axes, keepdims=keepdim))
    else:
        powered = np.sum(magnitude**p, axis=axes, keepdims=keepdim)
        result = powered ** (1.0 / p)
    return np.asarray(result, real)


def dist(self: np.ndarray, other: np.ndarray, p: Any) -> np.ndarray:
    """The p-norm of self - other (broadcast), in their common (floating) dtype; the
    result is real."""
    common = _common_dtype(self, other)
    self, other = self.astype(common, copy=False), other.astype(common, copy=False)
    if self.dtype.kind == "b" and other.dtype.kind == "b":
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. "
            "Use the `^` or `logical_xor()` operator instead."
        )
    if self.dtype.kind not in "fc":
        raise RuntimeError(
            "norm(): input dtype should be either floating point or complex. Got "
            f"{_scalar_type_name(self)} instead."
        )
    _check_broadcast(self, other)
    return vector_norm(self - other, p, None, False, None)
