"""Kernels of the older torch.* linear algebra functions over factorisations: cholesky,
cholesky_inverse, cholesky_solve, triangular_solve, lu_unpack, geqrf, ormqr and
linalg.householder_product (LAPACK's orgqr). Checks and messages are PyTorch's."""

from __future__ import annotations

import warnings

import numpy as np

from ..dtypes import scalar_type_name as _scalar_type_name
from ._common import _not_implemented_for, _silently
from .linalg_decompositions import (
    _check_square,
    _cholesky_errors,
    _permutation,
    _substitute,
    linalg_cholesky_ex,
)

__all__ = [
    "cholesky",
    "cholesky_inverse",
    "cholesky_solve",
    "triangular_solve",
    "lu_unpack",
    "geqrf",
    "householder_product",
    "ormqr",
]

_Pairs = list[tuple[np.ndarray, np.ndarray]]

_CHOLESKY_DEPRECATED = (
    "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed "
    "in a future PyTorch release.\nL = torch.cholesky(A)\nshould be replaced with\n"
    "L = torch.linalg.cholesky(A)\nand\nU = torch.cholesky(A, upper=True)\nshould be "
    "replaced with\nU = torch.linalg.cholesky(A).mH\nThis transform will produce "
    "equivalent results for all valid (symmetric positive definite) inputs."
)


def _mH(A: np.ndarray) -> np.ndarray:  # noqa: N802  (PyTorch's name)
    return np.conj(np.swapaxes(A, -1, -2))


def cholesky(self: np.ndarray, upper: bool) -> np.ndarray:
    """torch.cholesky (deprecated, with PyTorch's warning): L with A = L L^H (U = L^H
    when `upper`), an error naming `cholesky` when A is not positive-definite."""
    warnings.warn(_CHOLESKY_DEPRECATED, UserWarning, stacklevel=2)
    _check_square(self, "cholesky")
    L, info = linalg_cholesky_ex(self, upper, False)
    _cholesky_errors(info)
    return L


def _triangle(A: np.ndarray, upper: bool) -> np.ndarray:
    return np.triu(A) if upper else np.tril(A)


def _gram(factor: np.ndarray, upper: bool) -> np.ndarray:
    """The matrix a Cholesky factor stands for: U^H U, or L L^H."""
    T = _triangle(factor, upper)
    return _mH(T) @ T if upper else T @ _mH(T)


@_silently
def cholesky_inverse(self: np.ndarray, upper: bool) -> np.ndarray:
    """(L L^H)^{-1} (or (U^H U)^{-1} when `upper`) from the factor's triangle."""
    _check_square(self, "cholesky_inverse")
    if self.dtype.kind not in "fc":
        raise _not_implemented_for("cholesky_inverse_out_cpu", self)
    T = _triangle(self, upper)
    eye = np.broadcast_to(np.eye(self.shape[-1], dtype=self.dtype), self.shape)
    inverse = _substitute(T, eye, lower=not upper, unit=False)  # T^{-1}
    if upper:
        return (inverse @ _mH(inverse)).astype(self.dtype, copy=False)
    return (_mH(inverse) @ inverse).astype(self.dtype, copy=False)


def _check_b_and_A(b: np.ndarray, A: np.ndarray, fname: str, message: str) -> None:
    """The shared checks of cholesky_solve and triangular_solve (b first)."""
    if b.ndim < 2:
        raise RuntimeError(message.format(b.ndim))
    if b.dtype != A.dtype:
        raise RuntimeError(
            "Expected b and A to have the same dtype, but found b of type "
            f"{_scalar_type_name(b)} and A of type {_scalar_type_name(A)} instead."
        )
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError(
            "A must be batches of square matrices, but they are "
            f"{A.shape[-2] if A.ndim > 1 else 1} by {A.shape[-1]} matrices"
        )
    if A.shape[-1] != b.shape[-2]:
        raise RuntimeError(
            f"Incompatible matrix sizes for {fname}: each A matrix is {A.shape[-2]} by "
            f"{A.shape[-1]} but each b matrix is {b.shape[-2]} by {b.shape[-1]}"
        )


@_silently
def cholesky_solve(self: np.ndarray, input2: np.ndarray, upper: bool) -> np.ndarray:
    """X with (L L^H) X = B (U^H U when `upper`); B = self, the factor input2, their
    batch dimensions broadcast."""
    _check_b_and_A(
        self,
        input2,
        "cholesky_solve",
        "b should have at least 2 dimensions, but has {} dimensions instead",
    )
    T = _triangle(input2, upper)
    first = _substitute(_mH(T) if upper else T, self, lower=True, unit=False)
    X = _substitute(T if upper else _mH(T), first, lower=False, unit=False)
    return X.astype(self.dtype, copy=False)


@_silently
def triangular_solve(
    self: np.ndarray, A: np.ndarray, upper: bool, transpose: bool, unitriangular: bool
) -> tuple[np.ndarray, np.ndarray]:
    """X with op(A) X = B (B = self; op transposes when `transpose`), only A's
    `upper` or lower triangle read, its diagonal ones when `unitriangular`; and A
    broadcast to the batch (PyTorch's cloned_coefficient)."""
    _check_b_and_A(
        self,
        A,
        "triangular_solve",
        "torch.triangular_solve: Expected b to have at least 2 dimensions, but it has "
        "{} dimensions instead",
    )
    T = np.swapaxes(A, -1, -2) if transpose else A
    lower = upper if transpose else not upper
    X = _substitute(T, self, lower=lower, unit=unitriangular).astype(self.dtype)
    batch = X.shape[:-2]
    return X, np.array(np.broadcast_to(A, batch + A.shape[-2:]), copy=True)


def lu_unpack(
    LU_data: np.ndarray, LU_pivots: np.ndarray, unpack_data: bool, unpack_pivots: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """P, L (unit lower, m x k) and U (upper, k x n) from linalg.lu_factor's packed LU
    and pivots; what is not unpacked is an empty tensor."""
    if LU_data.ndim < 2:
        raise RuntimeError(
            "torch.lu_unpack: Expected tensor with 2 or more dimensions. Got size: "
            f"{list(LU_data.shape)} instead"
        )
    if LU_pivots.dtype != np.int32:
        raise RuntimeError(
            "torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of "
            "torch.int32 dtype.\nNote: this function is intended to be used with the "
            "output produced by torch.linalg.lu_factor"
        )
    m, n = LU_data.shape[-2:]
    k = min(m, n)
    empty = np.zeros((0,), LU_data.dtype)
    L, U = empty, empty
    if unpack_data:
        L = np.tril(LU_data[..., :, :k], -1) + np.eye(m, k, dtype=LU_data.dtype)
        U = np.triu(LU_data[..., :k, :])
    P = empty
    if unpack_pivots:
        perm = _permutation(LU_pivots, m)
        P = np.zeros(LU_pivots.shape[:-1] + (m, m), LU_data.dtype)
        np.put_along_axis(P, perm[..., :, None], 1, axis=-1)
        P = np.swapaxes(P, -1, -2).copy()
    return P, L, U


def geqrf(self: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """LAPACK's geqrf: R on and above the diagonal, the Householder vectors below it,
    and their scales tau (numpy's 'raw' QR, which is geqrf's output transposed)."""
    if self.ndim < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    if self.dtype.kind not in "fc":
        raise _not_implemented_for("geqrf_cpu", self)
    m, n = self.shape[-2:]
    if self.size == 0:
        return np.array(self, copy=True), np.zeros(self.shape[:-2] + (min(m, n),))
    h, tau = np.linalg.qr(self, mode="raw")
    return np.swapaxes(h, -1, -2).astype(self.dtype), tau.astype(self.dtype)


def _reflectors(input: np.ndarray, tau: np.ndarray) -> _Pairs:
    """The Householder reflectors H_i = I - tau_i v_i v_i^H of geqrf's output: v_i the
    i-th column below the diagonal with a one on it, as (v, tau) pairs."""
    pairs = []
    for i in range(tau.shape[-1]):
        v = np.array(input[..., :, i : i + 1], copy=True)
        v[..., :i, :] = 0
        v[..., i, :] = 1
        pairs.append((v, tau[..., i, None, None]))
    return pairs


def _apply_left(pairs: _Pairs, C: np.ndarray) -> np.ndarray:
    """H_1 H_2 ... H_k C, the last reflector applied first."""
    for v, t in reversed(pairs):
        C = C - (t * v) @ (_mH(v) @ C)
    return C


def _check_householder(input: np.ndarray, tau: np.ndarray) -> None:
    fname = "torch.linalg.householder_product"
    if input.ndim < 2:
        raise RuntimeError(f"{fname}: input must have at least 2 dimensions.")
    m, n = input.shape[-2:]
    if m < n:
        raise RuntimeError(
            f"{fname}: input.shape[-2] must be greater than or equal to input.shape[-1]"
        )
    if n < tau.shape[-1]:
        raise RuntimeError(
            f"{fname}: input.shape[-1] must be greater than or equal to tau.shape[-1]"
        )
    if input.dtype != tau.dtype:
        raise RuntimeError(
            f"{fname}: tau dtype {_scalar_type_name(tau)} does not match input dtype "
            f"{_scalar_type_name(input)}"
        )


def householder_product(input: np.ndarray, tau: np.ndarray) -> np.ndarray:
    """The first n columns of H_1 ... H_k (LAPACK's orgqr)."""
    _check_householder(input, tau)
    m, n = input.shape[-2:]
    eye = np.broadcast_to(np.eye(m, n, dtype=input.dtype), input.shape)
    return _apply_left(_reflectors(input, tau), eye).astype(input.dtype, copy=False)


def _check_ormqr(
    input: np.ndarray, tau: np.ndarray, other: np.ndarray, left: bool
) -> None:
    if input.ndim < 2:
        raise RuntimeError("torch.ormqr: input must have at least 2 dimensions.")
    if other.ndim < 2:
        raise RuntimeError("torch.ormqr: other must have at least 2 dimensions.")
    side = other.shape[-2] if left else other.shape[-1]
    name = "other.shape[-2]" if left else "other.shape[-1]"
    if side != input.shape[-2]:
        raise RuntimeError(f"torch.ormqr: {name} must be equal to input.shape[-2]")
    if tau.shape[-1] != min(side, input.shape[-1]):
        raise RuntimeError(
            f"torch.ormqr: tau.shape[-1] must be equal to min({name}, input.shape[-1])"
        )
    for name, array in (("tau", tau), ("other", other)):
        if array.dtype != input.dtype:
            raise RuntimeError(
                f"torch.ormqr: Expected input and {name} to have the same dtype, but "
                f"input has dtype {_scalar_type_name(input)} and {name} has dtype "
                f"{_scalar_type_name(array)}"
            )


def ormqr(
    self: np.ndarray,
    input2: np.ndarray,
    input3: np.ndarray,
    left: bool,
    transpose: bool,
) -> np.ndarray:
    """Q C, Q^H C, C Q or C Q^H (C = input3) for Q = H_1 ... H_k of geqrf's output
    (self, tau = input2), without forming Q."""
    _check_ormqr(self, input2, input3, left)
    pairs = _reflectors(self, input2)
    if not left:  # C Q = (Q^H C^H)^H
        product = _mH(_apply_left_adjoint(pairs, _mH(input3), not transpose))
    else:
        product = _apply_left_adjoint(pairs, input3, transpose)
    return product.astype(input3.dtype, copy=False)


def _apply_left_adjoint(pairs: _Pairs, C: np.ndarray, adjoint: bool) -> np.ndarray:
    """Q C, or Q^H C = H_k^H ... H_1^H C when `adjoint`."""
    if not adjoint:
        return _apply_left(pairs, C)
    for v, t in pairs:
        C = C - (np.conj(t) * v) @ (_mH(v) @ C)
    return C
