"""Linear algebra kernels of torch.linalg: factorisations (LU, Cholesky, QR, SVD,
eigendecompositions) and what is computed from them (inverse, determinants, solves).

numpy.linalg runs LAPACK over batches of matrices; what it does not offer (an LU with
its pivots, triangular solves) is written here over the whole batch at once, one
column per step. Checks and messages are PyTorch's."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..dtypes import scalar_type_name as _scalar_type_name
from ._common import _silently

__all__ = [
    "linalg_lu_factor",
    "linalg_lu_solve_arrays",
    "linalg_inv_ex",
    "linalg_det",
    "linalg_slogdet",
    "linalg_solve_ex",
    "linalg_cholesky_ex",
    "linalg_qr",
    "linalg_svd",
    "linalg_eigh",
    "linalg_eig",
    "linalg_solve_triangular",
    "linalg_cross",
    "linalg_matrix_exp",
    "linalg_pinv",
    "linalg_lstsq",
    "linalg_lu_factor_ex",
    "linalg_lu",
    "linalg_lu_solve",
]


class _LinAlgError(RuntimeError):
    """A linear algebra function failed on its input's values (a singular matrix, one
    that is not positive-definite): torch.linalg.LinAlgError, a RuntimeError (its class
    is torch._C._LinAlgError, hence the name)."""


LinAlgError = _LinAlgError


def _check_matrix(A: np.ndarray, fname: str, name: str = "A") -> None:
    if A.ndim < 2:
        raise RuntimeError(
            f"{fname}: The input tensor {name} must have at least 2 dimensions."
        )


def _check_floating(A: np.ndarray, fname: str) -> None:
    if A.dtype.kind not in "fc":
        raise RuntimeError(
            f"{fname}: Expected a floating point or complex tensor as input. Got "
            f"{_scalar_type_name(A)}"
        )


def _check_square(A: np.ndarray, fname: str, name: str = "A") -> None:
    """PyTorch's squareCheckInputs and checkFloatingOrComplex, in its order."""
    _check_matrix(A, fname, name)
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(
            f"{fname}: {name} must be batches of square matrices, but they are "
            f"{A.shape[-2]} by {A.shape[-1]} matrices"
        )
    _check_floating(A, fname)


def _raise_for_info(info: np.ndarray, fname: str, describe: Any) -> None:
    """check_errors=True: a LinAlgError for the first failed batch element, described
    by `describe(code)` (the element's number when the input is batched)."""
    flat = info.reshape(-1)
    failed = np.flatnonzero(flat)
    if failed.size == 0:
        return
    first = int(failed[0])
    where = f"(Batch element {first}): " if info.ndim > 0 else ""
    raise LinAlgError(f"{fname}: {where}{describe(int(flat[first]))}")


# --- LU -------------------------------------------------------------------------


def _as_batch(A: np.ndarray) -> np.ndarray:
    return A.reshape((-1,) + A.shape[-2:])


@_silently
def linalg_lu_factor(A: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """LAPACK getrf over a batch: LU (L unit lower, U upper, in one matrix), the
    1-based row interchanges (int32) and info (the first zero pivot, 1-based, or 0)."""
    m, n = A.shape[-2:]
    k = min(m, n)
    lu = np.array(_as_batch(A), copy=True)
    count = lu.shape[0]
    rows = np.arange(count)
    pivots = np.empty((count, k), np.int32)
    info = np.zeros(count, np.int32)
    complex_ = A.dtype.kind == "c"
    for j in range(k):
        column = lu[:, j:, j]
        # LAPACK's i?amax: |re| + |im| for complex numbers
        size = np.abs(column.real) + np.abs(column.imag) if complex_ else np.abs(column)
        p = j + np.argmax(size, axis=1)
        pivots[:, j] = p + 1
        swapped = lu[rows, p].copy()
        lu[rows, p] = lu[:, j]
        lu[:, j] = swapped
        pivot = lu[:, j, j]
        zero = pivot == 0
        info = np.where((info == 0) & zero, j + 1, info).astype(np.int32)
        lu[:, j + 1 :, j] /= np.where(zero, 1, pivot)[:, None]
        lu[:, j + 1 :, j + 1 :] -= lu[:, j + 1 :, j, None] * lu[:, j, None, j + 1 :]
    batch = A.shape[:-2]
    return lu.reshape(A.shape), pivots.reshape(batch + (k,)), info.reshape(batch)


def _permutation(pivots: np.ndarray, n: int) -> np.ndarray:
    """The row order the interchanges produce: row i of P^T A is row perm[i] of A."""
    count, k = int(np.prod(pivots.shape[:-1])), pivots.shape[-1]
    flat = pivots.reshape((count, k)).astype(np.intp) - 1
    perm = np.tile(np.arange(n), (count, 1))
    rows = np.arange(count)
    for j in range(k):
        p = flat[:, j]
        swapped = perm[rows, p].copy()
        perm[rows, p] = perm[:, j]
        perm[:, j] = swapped
    return perm.reshape(pivots.shape[:-1] + (n,))


def _substitute(T: np.ndarray, B: np.ndarray, lower: bool, unit: bool) -> np.ndarray:
    """T^{-1} B for triangular T (batched, broadcast), one row per step, as LAPACK's
    trtrs without its singularity check: a zero diagonal gives inf and nan."""
    n = T.shape[-1]
    shape = np.broadcast_shapes(T.shape[:-2], B.shape[:-2])
    dtype = np.result_type(T, B)
    T = np.broadcast_to(T, shape + T.shape[-2:])
    X = np.array(np.broadcast_to(B, shape + B.shape[-2:]), dtype=dtype, copy=True)
    order = range(n) if lower else range(n - 1, -1, -1)
    for i in order:
        done = slice(0, i) if lower else slice(i + 1, n)
        if (i > 0) if lower else (i < n - 1):
            X[..., i, :] -= np.einsum(
                "...j,...jk->...k", T[..., i, done], X[..., done, :]
            )
        if not unit:
            X[..., i, :] /= T[..., i, i, None]
    return X


@_silently
def linalg_lu_solve_arrays(
    LU: np.ndarray, pivots: np.ndarray, B: np.ndarray, left: bool, adjoint: bool
) -> np.ndarray:
    """X with A X = B (or X A = B when not `left`; A^H for `adjoint`), A = P L U given
    by its LU factorisation."""
    if not left:
        # X A = B  <=>  A^H X^H = B^H
        return np.conj(
            linalg_lu_solve_arrays(
                LU, pivots, np.conj(np.swapaxes(B, -1, -2)), True, not adjoint
            )
        ).swapaxes(-1, -2)
    n = LU.shape[-1]
    perm = _permutation(pivots, n)
    if not adjoint:
        # A = P L U: L U X = P^T B
        shape = np.broadcast_shapes(perm.shape[:-1], B.shape[:-2])
        Pb = np.take_along_axis(
            np.broadcast_to(B, shape + B.shape[-2:]),
            np.broadcast_to(perm, shape + (n,))[..., None],
            axis=-2,
        )
        Y = _substitute(LU, Pb, lower=True, unit=True)
        return _substitute(LU, Y, lower=False, unit=False)
    # A^H = U^H L^H P^T: U^H L^H Z = B, X = P Z
    LUh = np.conj(np.swapaxes(LU, -1, -2))
    Y = _substitute(LUh, B, lower=True, unit=False)
    Z = _substitute(LUh, Y, lower=False, unit=True)
    inverse = np.argsort(perm, axis=-1)
    shape = np.broadcast_shapes(inverse.shape[:-1], Z.shape[:-2])
    return np.take_along_axis(
        np.broadcast_to(Z, shape + Z.shape[-2:]),
        np.broadcast_to(inverse, shape + (n,))[..., None],
        axis=-2,
    )


def _lu_sign(pivots: np.ndarray, dtype: Any) -> np.ndarray:
    swaps = np.sum(
        pivots != np.arange(1, pivots.shape[-1] + 1, dtype=np.int32), axis=-1
    )
    return np.where(swaps % 2 == 1, -1, 1).astype(dtype)


# --- inverse, determinants, solves ------------------------------------------------

_SINGULAR = (
    "The diagonal element {} is zero, the inversion could not be completed because "
    "the input matrix is singular."
)


@_silently
def linalg_inv_ex(A: np.ndarray, check_errors: bool) -> tuple[np.ndarray, np.ndarray]:
    """The inverse of each matrix and LAPACK's info (the first zero pivot of its LU)."""
    _check_square(A, "linalg.inv")
    n = A.shape[-1]
    if A.size == 0:
        return np.array(A, copy=True), np.zeros(A.shape[:-2], np.int32)
    try:
        inverse = np.linalg.inv(A)
        info = np.zeros(A.shape[:-2], np.int32)
    except np.linalg.LinAlgError:
        LU, pivots, info = linalg_lu_factor(A)
        eye = np.broadcast_to(np.eye(n, dtype=A.dtype), A.shape)
        inverse = linalg_lu_solve_arrays(LU, pivots, eye, True, False)
    if check_errors:
        _raise_for_info(info, "linalg.inv", _SINGULAR.format)
    return inverse.astype(A.dtype, copy=False), info


def linalg_det(A: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """_linalg_det: the determinant, with the LU factorisation it is computed from."""
    _check_square(A, "linalg.det")
    LU, pivots, _ = linalg_lu_factor(A)
    diagonal = np.diagonal(LU, axis1=-2, axis2=-1)
    det = np.prod(diagonal, axis=-1) * _lu_sign(pivots, A.dtype)
    return np.asarray(det, A.dtype), LU, pivots


@_silently
def linalg_slogdet(
    A: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """_linalg_slogdet: the sign (a unit complex number for complex input; 0 when
    singular) and log|det| (-inf when singular), with the LU factorisation."""
    _check_square(A, "linalg.slogdet")
    LU, pivots, _ = linalg_lu_factor(A)
    diagonal = np.diagonal(LU, axis1=-2, axis2=-1)
    magnitude = np.abs(diagonal)
    units = np.where(
        magnitude == 0, 0, diagonal / np.where(magnitude == 0, 1, magnitude)
    )
    sign = np.prod(units, axis=-1) * _lu_sign(pivots, A.dtype)
    logabsdet = np.sum(np.log(magnitude), axis=-1)
    return (
        np.asarray(sign, A.dtype),
        np.asarray(logabsdet, magnitude.dtype),
        LU,
        pivots,
    )


def _is_vector_rhs(A: np.ndarray, B: np.ndarray) -> bool:
    """PyTorch's linalg_solve_is_vector_rhs: B is a (batch of) vector(s)."""
    return B.ndim == 1 or (B.ndim == A.ndim - 1 and B.shape == A.shape[:-1])


def _check_solve(A: np.ndarray, B: np.ndarray, left: bool, vector: bool) -> None:
    _check_square(A, "linalg.solve")
    if B.ndim < 1 or (not vector and B.ndim < 2):
        raise RuntimeError(
            "linalg.solve: The input tensor B must have at least 2 dimensions."
        )
    if A.dtype != B.dtype:
        raise RuntimeError(
            "linalg.solve: Expected A and B to have the same dtype, but found A of type "
            f"{_scalar_type_name(A)} and B of type {_scalar_type_name(B)} instead"
        )
    shape = (B.shape[-1], 1) if vector else B.shape[-2:]
    if shape[0 if left else 1] != A.shape[-1]:
        raise RuntimeError(
            "linalg.solve: Incompatible shapes of A and B for the equation "
            f"{'AX = B' if left else 'XA = B'} ({A.shape[-2]}x{A.shape[-1]} and "
            f"{shape[0]}x{shape[1]})"
        )


@_silently
def linalg_solve_ex(
    A: np.ndarray, B: np.ndarray, left: bool, check_errors: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """_linalg_solve_ex: X with AX = B (XA = B when not `left`), B a matrix or (batch
    of) vector(s), with the LU factorisation of A and its info."""
    vector = _is_vector_rhs(A, B)
    _check_solve(A, B, left, vector)
    if vector and not left:
        raise RuntimeError(
            "linalg.solve: Vector broadcasting of the left hand side is not supported "
            "for left=False. In this case linalg.solve is equivalent to B / A.squeeze(-1)"
        )
    LU, pivots, info = linalg_lu_factor(A)
    if check_errors and np.any(info):
        raise LinAlgError(
            "torch.linalg.solve: The solver failed because the input matrix is singular."
        )
    matrix = B[..., None] if vector else B
    if left:
        X = linalg_lu_solve_arrays(LU, pivots, matrix, True, False)
    else:
        X = linalg_lu_solve_arrays(LU, pivots, matrix, False, False)
    return (X[..., 0] if vector else X), LU, pivots, info


_NOT_PD = (
    "The factorization could not be completed because the input is not "
    "positive-definite (the leading minor of order {} is not positive-definite)."
)


def _partial_cholesky(A: np.ndarray) -> tuple[np.ndarray, int]:
    """LAPACK's unblocked potf2 on one matrix: L column by column until a pivot is not
    positive; that pivot is stored as computed and the rest of A's lower triangle is
    left as it was. The factor and info (the failing order, 0 if none)."""
    L = np.tril(A).copy()
    for j in range(A.shape[-1]):
        pivot = L[j, j] - np.vdot(L[j, :j], L[j, :j])
        if not pivot.real > 0:
            L[j, j] = pivot
            return L, j + 1
        L[j, j] = np.sqrt(pivot.real)
        below = L[j + 1 :, j] - L[j + 1 :, :j] @ np.conj(L[j, :j])
        L[j + 1 :, j] = below / L[j, j]
    return L, 0


def linalg_cholesky_ex(
    A: np.ndarray, upper: bool, check_errors: bool
) -> tuple[np.ndarray, np.ndarray]:
    """L lower triangular with A = L L^H (U = L^H when `upper`), read from A's lower
    triangle, and info (the order of the first minor that is not positive-definite)."""
    _check_square(A, "linalg.cholesky")
    lower = np.tril(A)
    hermitian = lower + np.conj(np.swapaxes(np.tril(A, -1), -1, -2))
    try:
        L = np.linalg.cholesky(hermitian) if A.size else np.array(A, copy=True)
        info = np.zeros(A.shape[:-2], np.int32)
    except np.linalg.LinAlgError:
        batch = _as_batch(hermitian)
        parts = [_partial_cholesky(matrix) for matrix in batch]
        L = np.stack([part[0] for part in parts]).reshape(A.shape)
        info = np.array([part[1] for part in parts], np.int32).reshape(A.shape[:-2])
        if check_errors:
            _raise_for_info(info, "linalg.cholesky", _NOT_PD.format)
    L = L.astype(A.dtype, copy=False)
    return (np.conj(np.swapaxes(L, -1, -2)) if upper else L), info


def _cholesky_errors(info: np.ndarray) -> None:
    """torch.cholesky's error for a matrix that is not positive-definite."""
    _raise_for_info(info, "cholesky", _NOT_PD.format)


def linalg_qr(A: np.ndarray, mode: str) -> tuple[np.ndarray, np.ndarray]:
    """Q with orthonormal columns and R upper triangular, A = QR; mode 'reduced'
    (k = min(m, n) columns), 'complete' (Q square) or 'r' (Q empty)."""
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(
            f"qr received unrecognized mode '{mode}' but expected one of 'reduced' "
            "(default), 'r', or 'complete'"
        )
    _check_matrix(A, "linalg.qr")
    _check_floating(A, "linalg.qr")
    if mode == "r":
        only_r = np.linalg.qr(A, mode="r")
        return np.zeros((0,), A.dtype), np.asarray(only_r, A.dtype)
    Q, R = np.linalg.qr(A, mode="complete" if mode == "complete" else "reduced")
    return np.asarray(Q, A.dtype), np.asarray(R, A.dtype)


def linalg_svd(
    A: np.ndarray, full_matrices: bool, compute_uv: bool, driver: str | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """_linalg_svd: U, S (real, descending), Vh with A = U diag(S) Vh; U and Vh empty
    when not `compute_uv`."""
    _check_matrix(A, "linalg.svd")
    _check_floating(A, "linalg.svd")
    if driver is not None:
        raise RuntimeError(
            "torch.linalg.svd: keyword argument `driver=` is only supported on CUDA "
            "inputs with cuSOLVER backend."
        )
    real = np.abs(np.zeros((), A.dtype)).dtype
    if not compute_uv:
        S = np.linalg.svd(A, compute_uv=False)
        return (
            np.zeros((0,), A.dtype),
            S.astype(real, copy=False),
            np.zeros((0,), A.dtype),
        )
    U, S, Vh = np.linalg.svd(A, full_matrices=full_matrices)
    return (
        U.astype(A.dtype, copy=False),
        S.astype(real, copy=False),
        Vh.astype(A.dtype, copy=False),
    )


def linalg_eigh(
    A: np.ndarray, UPLO: str, compute_v: bool
) -> tuple[np.ndarray, np.ndarray]:
    """_linalg_eigh: the (real, ascending) eigenvalues of a Hermitian matrix read from
    its lower ('L') or upper ('U') triangle, and orthonormal eigenvectors as columns
    (empty when not `compute_v`)."""
    if UPLO not in ("L", "U", "l", "u"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    _check_matrix(A, "linalg.eigh")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(
            f"linalg.eigh: A must be batches of square matrices, but they are "
            f"{A.shape[-2]} by {A.shape[-1]} matrices"
        )
    if A.dtype.kind not in "fc":
        raise NotImplementedError(
            f"\"linalg_eigh_cpu\" not implemented for '{_scalar_type_name(A)}'"
        )
    real = np.abs(np.zeros((), A.dtype)).dtype
    if not compute_v:
        L = np.linalg.eigvalsh(A, UPLO="U" if UPLO in "Uu" else "L")
        return L.astype(real, copy=False), np.zeros((0,), A.dtype)
    L, V = np.linalg.eigh(A, UPLO="U" if UPLO in "Uu" else "L")
    return L.astype(real, copy=False), V.astype(A.dtype, copy=False)


def _complex_of(dtype: np.dtype) -> np.dtype:
    return np.result_type(dtype, np.complex64)


def linalg_eig(A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The (complex) eigenvalues and unit-norm eigenvectors (as columns) of a general
    square matrix."""
    _check_matrix(A, "linalg.eig")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(
            f"linalg.eig: A must be batches of square matrices, but they are "
            f"{A.shape[-2]} by {A.shape[-1]} matrices"
        )
    if A.dtype.kind not in "fc":
        raise RuntimeError(f"Unknown Complex ScalarType for {_scalar_type_name(A)}")
    L, V = np.linalg.eig(A)
    complex_type = _complex_of(A.dtype)
    return L.astype(complex_type), V.astype(complex_type)


def linalg_solve_triangular(
    A: np.ndarray, B: np.ndarray, upper: bool, left: bool, unitriangular: bool
) -> np.ndarray:
    """X with AX = B (XA = B when not `left`), A triangular: only its `upper` or lower
    triangle is read, and its diagonal taken as ones when `unitriangular`."""
    for name, array in (("A", A), ("B", B)):
        _check_matrix(array, "linalg.solve_triangular", name)
    if A.dtype != B.dtype:
        raise RuntimeError(
            "linalg.solve_triangular: Expected A and B to have the same dtype, but found "
            f"A of type {_scalar_type_name(A)} and B of type {_scalar_type_name(B)} "
            "instead"
        )
    _check_floating(A, "linalg.solve_triangular")
    if left:
        return _substitute_checked(A, B, upper, unitriangular)
    # X A = B  <=>  A^T X^T = B^T
    At, Bt = np.swapaxes(A, -1, -2), np.swapaxes(B, -1, -2)
    return np.swapaxes(_substitute_checked(At, Bt, not upper, unitriangular), -1, -2)


@_silently
def _substitute_checked(
    A: np.ndarray, B: np.ndarray, upper: bool, unit: bool
) -> np.ndarray:
    if A.shape[-1] != A.shape[-2] or B.shape[-2] != A.shape[-1]:
        raise RuntimeError(
            "linalg.solve_triangular: Incompatible shapes of A and B for the equation "
            f"AX = B ({A.shape[-2]}x{A.shape[-1]} and {B.shape[-2]}x{B.shape[-1]})"
        )
    return _substitute(A, B, lower=not upper, unit=unit).astype(A.dtype, copy=False)


def linalg_cross(self: np.ndarray, other: np.ndarray, dim: int) -> np.ndarray:
    """The cross product of 3-vectors along `dim` (inputs broadcast)."""
    if self.ndim != other.ndim:
        raise RuntimeError(
            "linalg.cross: inputs must have the same number of dimensions."
        )
    ndim = self.ndim
    axis = dim + ndim if dim < 0 else dim
    if not 0 <= axis < ndim:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], "
            f"but got {dim})"
        )
    if self.shape[axis] != 3 or other.shape[axis] != 3:
        raise RuntimeError(
            f"linalg.cross: inputs dimension {dim} must have length 3. Got "
            f"{self.shape[axis]} and {other.shape[axis]}"
        )
    dtype = np.result_type(self, other)
    return np.cross(self, other, axisa=axis, axisb=axis, axisc=axis).astype(
        dtype, copy=False
    )


@_silently
def linalg_matrix_exp(A: np.ndarray) -> np.ndarray:
    """exp(A) by scaling and squaring with a degree-18 Taylor polynomial (a norm
    below 1/2 after scaling keeps the remainder under float64's epsilon)."""
    _check_square(A, "linalg.matrix_exp")
    if A.size == 0:
        return np.array(A, copy=True)
    norm = np.max(np.sum(np.abs(A), axis=-2), axis=-1)
    squarings = np.maximum(0, np.ceil(np.log2(np.maximum(norm, 1e-300) / 0.5))).astype(
        int
    )
    top = int(np.max(squarings))
    scaled = A / (2.0**squarings)[..., None, None]
    eye = np.broadcast_to(np.eye(A.shape[-1], dtype=A.dtype), A.shape)
    result = eye.copy()
    term = eye.copy()
    for k in range(1, 19):
        term = term @ scaled / k
        result = result + term
    for step in range(top):
        square = result @ result
        result = np.where((squarings > step)[..., None, None], square, result)
    return result.astype(A.dtype, copy=False)


def linalg_pinv(
    A: np.ndarray, atol: np.ndarray | None, rtol: np.ndarray | None, hermitian: bool
) -> np.ndarray:
    """The pseudo-inverse from the SVD (the eigendecomposition when `hermitian`),
    singular values below max(atol, rtol * largest) treated as zero."""
    if A.ndim < 2 or A.dtype.kind not in "fc":
        raise RuntimeError(
            f"linalg.pinv({_scalar_type_name(A)}{{{list(A.shape)}}}): expected a tensor "
            "with 2 or more dimensions of float, double, cfloat or cdouble types"
        )
    real = np.abs(np.zeros((), A.dtype)).dtype
    if rtol is None:
        eps = np.finfo(real).eps
        rtol_value = (
            np.zeros((), real)
            if atol is not None and np.any(atol > 0)
            else np.asarray(eps * max(A.shape[-2:]), real)
        )
    else:
        rtol_value = rtol
    atol_value = np.zeros((), real) if atol is None else atol
    if A.size == 0:
        return np.zeros(A.shape[:-2] + (A.shape[-1], A.shape[-2]), A.dtype)
    if hermitian:
        L, V = np.linalg.eigh(A)
        S = np.abs(L)
        largest = np.max(S, axis=-1, keepdims=True)
        cutoff = np.maximum(
            np.asarray(atol_value)[..., None],
            np.asarray(rtol_value)[..., None] * largest,
        )
        inverse = np.where(S > cutoff, 1 / np.where(S > cutoff, L, 1), 0)
        return ((V * inverse[..., None, :]) @ np.conj(np.swapaxes(V, -1, -2))).astype(
            A.dtype
        )
    U, S, Vh = np.linalg.svd(A, full_matrices=False)
    largest = S[..., :1]
    cutoff = np.maximum(
        np.asarray(atol_value)[..., None], np.asarray(rtol_value)[..., None] * largest
    )
    inverse = np.where(S > cutoff, 1 / np.where(S > cutoff, S, 1), 0)
    Vt = np.conj(np.swapaxes(Vh, -1, -2))
    return ((Vt * inverse[..., None, :]) @ np.conj(np.swapaxes(U, -1, -2))).astype(
        A.dtype
    )


_LSTSQ_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def _check_lstsq(A: np.ndarray, B: np.ndarray, driver: str | None) -> bool:
    """linalg.lstsq's checks; whether B is a (batch of) vector(s)."""
    if A.ndim < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    if B.ndim < 1:
        raise RuntimeError("torch.linalg.lstsq: other must have at least 1 dimension.")
    if A.dtype != B.dtype:
        raise RuntimeError(
            "torch.linalg.lstsq: Expected input and other to have the same dtype, but "
            f"got input's dtype {_scalar_type_name(A)} and other's dtype "
            f"{_scalar_type_name(B)}"
        )
    _check_floating(A, "torch.linalg.lstsq")
    if driver is not None and driver not in _LSTSQ_DRIVERS:
        raise RuntimeError(
            "torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, "
            "gelsd, gelss)"
        )
    vector = B.ndim == 1 or B.ndim == A.ndim - 1
    rows = B.shape[-1] if vector else B.shape[-2]
    if rows != A.shape[-2]:
        raise RuntimeError(
            "torch.linalg.lstsq: input.size(-2) should match other.size(-"
            f"{1 if vector else 2})"
        )
    return vector


def linalg_lstsq(
    A: np.ndarray, B: np.ndarray, rcond: float | None, driver: str | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The least-squares solution X of AX = B (batched, broadcast), with what the
    driver reports: the squared residuals (not 'gelsy'; only for m > n and full
    rank), the rank (not 'gels') and the singular values ('gelsd', 'gelss')."""
    vector = _check_lstsq(A, B, driver)
    driver = driver or "gelsy"
    matrix = B[..., None] if vector else B
    batch = np.broadcast_shapes(A.shape[:-2], matrix.shape[:-2])
    m, n = A.shape[-2:]
    As = np.broadcast_to(A, batch + A.shape[-2:]).reshape((-1, m, n))
    Bs = np.broadcast_to(matrix, batch + matrix.shape[-2:]).reshape(
        (-1, m, matrix.shape[-1])
    )
    real = np.abs(np.zeros((), A.dtype)).dtype
    cutoff = rcond if rcond is not None else float(np.finfo(real).eps) * max(m, n)
    solved = [np.linalg.lstsq(a, b, rcond=cutoff) for a, b in zip(As, Bs)]
    X = np.stack([s[0] for s in solved]).reshape(batch + (n, matrix.shape[-1]))
    ranks = np.array([s[2] for s in solved], np.int64).reshape(batch)
    if vector:
        X = X[..., 0]
    residuals: np.ndarray = np.zeros((0,), real)
    if driver != "gelsy" and m > n and (driver == "gels" or np.all(ranks == n)):
        difference = np.matmul(A, X[..., None] if vector else X) - matrix
        residuals = np.sum(np.abs(difference) ** 2, axis=-2).astype(real)
        if vector:
            residuals = residuals[..., 0]
    singular: np.ndarray = np.zeros((0,), real)
    if driver in ("gelsd", "gelss"):
        singular = np.stack([s[3] for s in solved]).reshape(batch + (min(m, n),))
    rank = ranks if driver != "gels" else np.zeros((0,), np.int64)
    return X.astype(A.dtype, copy=False), residuals, rank, singular.astype(real)


def _lu_zero_pivot(code: int) -> str:
    return (
        f"U[{code},{code}] is zero and using it on lu_solve would result in a division "
        "by zero. If you still want to perform the factorization, consider calling "
        "linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)"
    )


def _check_lu_input(A: np.ndarray, fname: str, pivot: bool) -> None:
    if A.ndim < 2:
        raise RuntimeError(
            f"{fname}: Expected tensor with 2 or more dimensions. Got size: "
            f"{list(A.shape)} instead"
        )
    _check_floating(A, fname)
    if not pivot:
        raise RuntimeError(
            f"{fname}: LU without pivoting is not implemented on the CPU"
        )


def linalg_lu_factor_ex(
    A: np.ndarray, pivot: bool, check_errors: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The packed LU factorisation with partial pivoting (getrf): LU, pivots, info."""
    _check_lu_input(A, "torch.lu_factor" if A.ndim < 2 else "linalg.lu_factor", pivot)
    LU, pivots, info = linalg_lu_factor(A)
    if check_errors:
        _lu_factor_errors(info, "torch.linalg.lu_factor_ex")
    return LU, pivots, info


def _lu_factor_errors(info: np.ndarray, fname: str) -> None:
    """The error of an LU factorisation with a zero pivot (RuntimeError, as
    PyTorch's), naming the first failed batch element."""
    try:
        _raise_for_info(info, fname, _lu_zero_pivot)
    except LinAlgError as error:
        raise RuntimeError(str(error)) from None


def linalg_lu(A: np.ndarray, pivot: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """P, L (unit lower, m x k) and U (upper, k x n) with A = P L U."""
    _check_lu_input(A, "linalg.lu", pivot)
    LU, pivots, _ = linalg_lu_factor(A)
    m, n = A.shape[-2:]
    k = min(m, n)
    L = np.tril(LU[..., :, :k], -1) + np.eye(m, k, dtype=A.dtype)
    U = np.triu(LU[..., :k, :])
    perm = _permutation(pivots, m)
    P = np.zeros(A.shape[:-2] + (m, m), A.dtype)
    np.put_along_axis(P, perm[..., :, None], 1, axis=-1)
    return np.swapaxes(P, -1, -2).copy(), L, U


def linalg_lu_solve(
    LU: np.ndarray, pivots: np.ndarray, B: np.ndarray, left: bool, adjoint: bool
) -> np.ndarray:
    """X with op(A) X = B (X op(A) = B when not `left`), A = P L U given packed,
    op the conjugate transpose when `adjoint`."""
    _check_matrix(B, "linalg.lu_solve", "B")
    _check_square(LU, "linalg.lu_solve", "LU")
    if LU.dtype != B.dtype:
        raise RuntimeError(
            "linalg.lu_solve: Expected LU and B to have the same dtype, but found LU of "
            f"type {_scalar_type_name(LU)} and B of type {_scalar_type_name(B)} instead"
        )
    side = B.shape[-2] if left else B.shape[-1]
    if side != LU.shape[-1]:
        raise RuntimeError(
            "linalg.lu_solve: Incompatible shapes of A and B for the equation "
            f"{'AX = B' if left else 'XA = B'} ({LU.shape[-2]}x{LU.shape[-1]} and "
            f"{B.shape[-2]}x{B.shape[-1]})"
        )
    return linalg_lu_solve_arrays(LU, pivots, B, left, adjoint).astype(
        B.dtype, copy=False
    )
