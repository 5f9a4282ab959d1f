"""Formula helpers of torch.linalg's LU factorisation (lu_factor, lu, lu_solve) and
least squares (lstsq), PyTorch's FunctionsManual names, written with gradgen
operators (see linalg_decompositions.py)."""

from __future__ import annotations

import numpy as np

from ..generated import operators
from ..generated.ops import real
from ..tensor import Tensor
from .linalg_decompositions import (
    _mH,
    _solve,
    _solve_triangular,
    pinv_backward,
    pinv_jvp,
)

__all__ = [
    "linalg_lstsq_backward",
    "linalg_lstsq_solution_jvp",
    "linalg_lstsq_residuals_jvp",
    "linalg_lu_backward",
    "linalg_lu_jvp",
    "lu_factor_ex_backward",
    "lu_factor_ex_jvp",
    "linalg_lu_solve_LU",
    "linalg_lu_solve_jvp",
]


# --- least squares -----------------------------------------------------------------


def _pinv(A: Tensor) -> Tensor:
    return operators.linalg_pinv_atol_rtol_tensor.call(  # type: ignore[no-any-return]
        A, None, None, False
    )


def _lstsq_vector(A: Tensor, B: Tensor) -> bool:
    return B.dim() == 1 or B.dim() == A.dim() - 1


def linalg_lstsq_solution_jvp(A: Tensor, B_: Tensor, dA: Tensor, dB_: Tensor) -> Tensor:
    """dX = d(pinv(A)) B + pinv(A) dB."""
    vector = _lstsq_vector(A, B_)
    B = B_.unsqueeze(-1) if vector else B_
    dB = dB_.unsqueeze(-1) if vector else dB_
    pinvA = _pinv(A)
    dX = pinv_jvp(A, pinvA, dA).matmul(B) + pinvA.matmul(dB)
    return dX.squeeze(-1) if vector else dX


def linalg_lstsq_residuals_jvp(
    A: Tensor, B_: Tensor, dA: Tensor, dB_: Tensor, X_: Tensor, L: Tensor
) -> Tensor:
    """dL = 2 Re(sum(r * conj(dr))) over the rows, r = AX - B, dr = dA X - dB, as if X
    were fixed (Danskin's theorem)."""
    if L.numel() == 0:
        return L.clone()
    vector = _lstsq_vector(A, B_)
    B = B_.unsqueeze(-1) if vector else B_
    dB = dB_.unsqueeze(-1) if vector else dB_
    X = X_.unsqueeze(-1) if vector else X_
    r = A.matmul(X) - B
    dr = dA.matmul(X) - dB
    dL = 2 * real(r * dr.conj()).sum(-2)
    return dL.squeeze(-1) if vector else dL


def linalg_lstsq_backward(
    gX_: Tensor | None,
    gL_: Tensor | None,
    A: Tensor,
    B_: Tensor,
    X_: Tensor,
    grad_input_mask: tuple[bool, ...],
) -> tuple[Tensor | None, Tensor | None]:
    """Through pinv for the solution (gA = pinv_backward(gX B^H), gB = pinv(A)^H gX)
    and directly for the residuals (gA = 2 gL r X^H, gB = -2 gL r)."""
    A_requires_grad, B_requires_grad = grad_input_mask[0], grad_input_mask[1]
    has_gL = gL_ is not None and gL_.numel() > 0
    if (gX_ is None and not has_gL) or not (A_requires_grad or B_requires_grad):
        return None, None
    vector = _lstsq_vector(A, B_)
    B = B_.unsqueeze(-1) if vector else B_
    A_grad: Tensor | None = None
    B_grad: Tensor | None = None
    if gX_ is not None:
        gX = gX_.unsqueeze(-1) if vector else gX_
        pinvA = _pinv(A)
        if A_requires_grad:
            A_grad = pinv_backward(gX.matmul(_mH(B)), pinvA, A)
        if B_requires_grad:
            B_grad = _mH(pinvA).matmul(gX)
            B_grad = B_grad.squeeze(-1) if vector else B_grad
    if has_gL:
        assert gL_ is not None
        X = X_.unsqueeze(-1) if vector else X_
        r = A.matmul(X) - B
        gL = (gL_.unsqueeze(-1) if vector else gL_).unsqueeze(-2)
        if A_requires_grad:
            A_grad_L = 2 * (gL * r).matmul(_mH(X))
            A_grad = A_grad_L if A_grad is None else A_grad + A_grad_L
        if B_requires_grad:
            B_grad_L = -2 * gL * r
            B_grad_L = B_grad_L.squeeze(-1) if vector else B_grad_L
            B_grad = B_grad_L if B_grad is None else B_grad + B_grad_L
    return A_grad, B_grad


# --- LU ------------------------------------------------------------------------------


def _unpack(LU: Tensor, pivots: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """P (a constant), unit-lower L and upper U of a square packed LU, L and U recorded
    as functions of LU."""
    eye = Tensor(np.eye(LU.shape[-1], dtype=LU._data.dtype))
    P = operators.lu_unpack.call(LU.detach(), pivots, False, True)[0]
    return P, LU.tril(-1) + eye, LU.triu()


def _check_square_lu(m: int, n: int) -> None:
    if m != n:
        raise NotImplementedError(
            "the derivative of the LU factorisation of a non-square matrix is not "
            "implemented in gradgen"
        )


def linalg_lu_backward(
    L_grad: Tensor | None,
    U_grad: Tensor | None,
    P: Tensor,
    L: Tensor,
    U: Tensor,
    pivot: bool,
) -> Tensor | None:
    """A = P L U (square): gA = P L^{-H} [tril_-1(L^H gL) + triu(gU U^H)] U^{-H}."""
    if L_grad is None and U_grad is None:
        return None
    _check_square_lu(L.shape[-2], U.shape[-1])
    parts = []
    if L_grad is not None:
        parts.append(_mH(L).matmul(L_grad).tril(-1))
    if U_grad is not None:
        parts.append(U_grad.matmul(_mH(U)).triu())
    gA = parts[0] if len(parts) == 1 else parts[0] + parts[1]
    gA = _solve_triangular(_mH(U), gA, False, False)
    gA = _solve_triangular(_mH(L), gA, True, True, True)
    return P.matmul(gA) if pivot else gA


def linalg_lu_jvp(
    dA: Tensor, P: Tensor, L: Tensor, U: Tensor, pivot: bool
) -> tuple[Tensor, Tensor]:
    """dK = L^{-1} P^T dA U^{-1}: dL = L tril_-1(dK), dU = triu(dK) U (square)."""
    _check_square_lu(L.shape[-2], U.shape[-1])
    PdA = P.transpose(-2, -1).matmul(dA) if pivot else dA
    dK = _solve_triangular(L, PdA, False, True, True)
    dK = _solve_triangular(U, dK, True, False)
    return L.matmul(dK.tril(-1)), dK.triu().matmul(U)


def lu_factor_ex_backward(
    grad: Tensor | None, LU: Tensor, pivs: Tensor, pivot: bool
) -> Tensor | None:
    """The gradient of the packed factorisation: linalg_lu_backward of its strictly
    lower (L) and upper (U) parts."""
    if grad is None:
        return None
    P, L, U = _unpack(LU, pivs)
    return linalg_lu_backward(grad.tril(-1), grad.triu(), P, L, U, pivot)


def lu_factor_ex_jvp(dA: Tensor, LU: Tensor, pivs: Tensor, pivot: bool) -> Tensor:
    """The tangent of the packed factorisation: dL + dU."""
    P, L, U = _unpack(LU, pivs)
    dL, dU = linalg_lu_jvp(dA, P, L, U, pivot)
    return dL + dU


def _op(X: Tensor, adjoint: bool) -> Tensor:
    return _mH(X) if adjoint else X


def linalg_lu_solve_LU(  # noqa: N802  (PyTorch's name)
    gX: Tensor | None,
    LU: Tensor,
    pivots: Tensor,
    X: Tensor,
    left: bool,
    adjoint: bool,
) -> Tensor | None:
    """The gradient for the packed LU of X = op(A)^{-1} B (left) or B op(A)^{-1}:
    the gradient for op(A) (-op(A)^{-H} gX X^H, or -X^H gX op(A)^{-H}), taken back
    through op and through A = P L U to L's strict lower and U's upper part."""
    if gX is None:
        return None
    P, L, U = _unpack(LU, pivots)
    A = P.matmul(L).matmul(U)
    opA = _op(A, adjoint)
    if left:
        g_op = -_solve(_mH(opA), gX).matmul(_mH(X))
    else:
        g_op = -_mH(X).matmul(_solve(_mH(opA), gX, False))
    gA = _op(g_op, adjoint)
    PtgA = P.transpose(-2, -1).matmul(gA)
    gL = PtgA.matmul(_mH(U)).tril(-1)
    gU = _mH(L).matmul(PtgA).triu()
    return gL + gU


def linalg_lu_solve_jvp(
    X: Tensor,
    LU: Tensor,
    pivots: Tensor,
    dLU: Tensor,
    dB: Tensor,
    left: bool,
    adjoint: bool,
) -> Tensor:
    """dX = op(A)^{-1}(dB - op(dA) X) (left) or (dB - X op(dA)) op(A)^{-1}, with
    dA = P (dL U + L dU) from the packed tangent."""
    P, L, U = _unpack(LU, pivots)
    dA = P.matmul(dLU.tril(-1).matmul(U) + L.matmul(dLU.triu()))
    opA, opdA = _op(P.matmul(L).matmul(U), adjoint), _op(dA, adjoint)
    if left:
        return _solve(opA, dB - opdA.matmul(X))
    return _solve(opA, dB - X.matmul(opdA), False)
