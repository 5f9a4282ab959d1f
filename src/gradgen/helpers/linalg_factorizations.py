"""Formula helpers of the older torch.* functions over factorisations (PyTorch's
FunctionsManual names): cholesky_inverse, cholesky_solve, triangular_solve, lu_unpack,
linalg.householder_product and ormqr.

Every value is computed with gradgen operators, so each formula is differentiable
again (double backward). The Householder products are differentiated through their
recurrence Q_i = H_i Q_{i+1}, H_i = I - tau_i v_i v_i^H, one reflector per step."""

from __future__ import annotations

import numpy as np

from ..generated.ops import (
    cat,
    cholesky_solve,
    constant_pad_nd,
    matmul,
    triangular_solve,
)
from ..tensor import Tensor

__all__ = [
    "cholesky_inverse_backward",
    "cholesky_inverse_jvp",
    "cholesky_solve_backward",
    "cholesky_solve_jvp",
    "triangular_solve_backward",
    "triangular_solve_jvp",
    "lu_unpack_backward",
    "householder_product_backward",
    "householder_product_jvp",
    "ormqr_backward",
]


def _mH(A: Tensor) -> Tensor:  # noqa: N802  (PyTorch's name)
    return A.transpose(-2, -1).conj()


# --- Cholesky -----------------------------------------------------------------------


def cholesky_inverse_backward(
    grad: Tensor | None, L: Tensor, upper: bool, inverse: Tensor
) -> Tensor | None:
    """inverse = (L L^H)^{-1}: d inverse = -inverse dA inverse with dA = dL L^H +
    L dL^H (U^H U when `upper`), transposed onto dL."""
    if grad is None:
        return None
    common_term = grad + _mH(grad)
    common_term = matmul(inverse, matmul(common_term, inverse))
    return -matmul(L, common_term) if upper else -matmul(common_term, L)


def cholesky_inverse_jvp(F: Tensor, dF: Tensor, X: Tensor, upper: bool) -> Tensor:
    """dX = -X dA X for dA = dF^H F + F^H dF (upper) or dF F^H + F dF^H (lower)."""
    CF = F if upper else _mH(F)
    dCF = _mH(dF) if upper else dF
    partial_dX = -matmul(matmul(matmul(X, dCF), CF), X)
    return partial_dX + _mH(partial_dX)


def cholesky_solve_backward(
    grad_x: Tensor | None,
    self: Tensor,
    input2: Tensor,
    result: Tensor,
    upper: bool,
    output_mask: tuple[bool, ...],
) -> tuple[Tensor | None, Tensor | None]:
    """X = A^{-1} B with A = L L^H: grad B = A^{-1} grad X (A is Hermitian); grad L
    through dA as in cholesky_inverse_backward."""
    if grad_x is None:
        return None, None
    grad_self = cholesky_solve(grad_x, input2, upper)
    grad_input2 = None
    if output_mask[1]:
        common_term = matmul(grad_self, _mH(result))
        common_term = common_term + _mH(common_term)
        if upper:
            grad_input2 = -matmul(input2, common_term)
        else:
            grad_input2 = -matmul(common_term, input2)
    return grad_self, grad_input2


def cholesky_solve_jvp(
    X: Tensor, U: Tensor, dU: Tensor | None, dB: Tensor | None, upper: bool
) -> Tensor:
    """dX = A^{-1} (dB - dA X), dA = dU^H U + U^H dU (upper) or dU U^H + U dU^H."""
    rhs = dB if dB is not None else X * 0
    if dU is not None:
        dK = matmul(_mH(dU), U) if upper else matmul(dU, _mH(U))
        rhs = rhs - matmul(dK + _mH(dK), X)
    return cholesky_solve(rhs, U, upper)


# --- triangular_solve -----------------------------------------------------------------


def _triangle_of(A: Tensor, upper: bool, unitriangular: bool) -> Tensor:
    """The part of A the solve reads: its upper or lower triangle, without the
    diagonal when it is taken as ones."""
    return A.triu(int(unitriangular)) if upper else A.tril(-int(unitriangular))


def triangular_solve_backward(
    grad_x: Tensor | None,
    grad_m: Tensor | None,
    b: Tensor,
    a: Tensor,
    x: Tensor,
    upper: bool,
    transpose: bool,
    unitriangular: bool,
    output_mask: tuple[bool, ...],
) -> tuple[Tensor | None, Tensor | None]:
    """X = op(A)^{-1} B: grad B = op(A)^{-H} grad X, grad A = -grad B X^H (op(A) = A)
    or its transpose, on the triangle the solve reads; plus the cloned coefficient's
    gradient."""
    grad_b: Tensor | None = None
    grad_a: Tensor | None = None
    if grad_x is not None:
        grad_b = triangular_solve(
            grad_x, a.conj(), upper, not transpose, unitriangular
        )[0]
        if output_mask[1]:
            if transpose:
                grad_a = -matmul(x.conj(), grad_b.transpose(-2, -1))
            else:
                grad_a = -matmul(grad_b, _mH(x))
            grad_a = _triangle_of(grad_a, upper, unitriangular)
    if grad_m is not None:
        grad_a = grad_m if grad_a is None else grad_a + grad_m
    return grad_b, grad_a


def triangular_solve_jvp(
    X: Tensor,
    A: Tensor,
    dA: Tensor | None,
    dB: Tensor | None,
    upper: bool,
    transpose: bool,
    unitriangular: bool,
) -> Tensor:
    """dX = op(A)^{-1} (dB - op(dA) X), dA on the triangle the solve reads."""
    rhs = dB if dB is not None else X * 0
    if dA is not None:
        dT = _triangle_of(dA, upper, unitriangular)
        rhs = rhs - matmul(dT.transpose(-2, -1) if transpose else dT, X)
    return triangular_solve(rhs, A, upper, transpose, unitriangular)[0]


# --- lu_unpack ------------------------------------------------------------------------


def lu_unpack_backward(
    L_grad: Tensor | None, U_grad: Tensor | None, m: int, n: int
) -> Tensor | None:
    """L is the strict lower part of LU's first k = min(m, n) columns (and a unit
    diagonal), U the upper part of its first k rows: their gradients, put back."""
    if L_grad is None and U_grad is None:
        return None
    k = min(m, n)
    parts = []
    if L_grad is not None:
        parts.append(constant_pad_nd(L_grad.tril(-1), [0, n - k], 0))
    if U_grad is not None:
        parts.append(constant_pad_nd(U_grad.triu(), [0, 0, 0, m - k], 0))
    return parts[0] if len(parts) == 1 else parts[0] + parts[1]


# --- Householder products ---------------------------------------------------------------


def _vectors(input: Tensor, k: int) -> Tensor:
    """The first k Householder vectors as columns: input's strict lower triangle with
    ones on the diagonal."""
    m = input.shape[-2]
    V = input.narrow(-1, 0, k).tril(-1)
    return V + Tensor(np.eye(m, k, dtype=input._data.dtype))


def _steps(V: Tensor, tau: Tensor, start: Tensor) -> list[Tensor]:
    """Q_k+1 = start, Q_i = H_i Q_i+1 down to Q_1 (the list in that order)."""
    Q = [start]
    for i in range(tau.shape[-1] - 1, -1, -1):
        v = V.narrow(-1, i, 1)
        t = tau.narrow(-1, i, 1).unsqueeze(-1)
        Q.append(Q[-1] - (t * v).matmul(_mH(v).matmul(Q[-1])))
    return Q


def _householder_vjp(
    grad: Tensor, V: Tensor, tau: Tensor, start: Tensor
) -> tuple[Tensor, Tensor]:
    """The gradients of (V, tau) for Q = H_1 ... H_k start, given grad Q: each step
    Y = X - t v (v^H X) gives grad X = H^H G, grad t = -sum(conj(v v^H X) G) and
    grad v = -conj(t) G X^H v - t X G^H v."""
    Q = _steps(V, tau, start)
    k = tau.shape[-1]
    G = grad
    grad_v: list[Tensor] = []
    grad_t: list[Tensor] = []
    for i in range(k):
        X = Q[k - 1 - i]  # the product the i-th reflector multiplied
        v = V.narrow(-1, i, 1)
        t = tau.narrow(-1, i, 1).unsqueeze(-1)
        vhX = _mH(v).matmul(X)
        grad_t.append(-(v.matmul(vhX).conj() * G).sum((-2, -1)).unsqueeze(-1))
        grad_v.append(
            -t.conj() * G.matmul(_mH(X).matmul(v)) - t * X.matmul(_mH(G).matmul(v))
        )
        G = G - (t.conj() * v).matmul(_mH(v).matmul(G))
    return cat(grad_v, -1), cat(grad_t, -1)


def householder_product_backward(
    grad: Tensor | None, result: Tensor, input: Tensor, tau: Tensor
) -> tuple[Tensor | None, Tensor | None]:
    """The gradients of input (below its diagonal) and tau of the first n columns of
    H_1 ... H_k."""
    if grad is None:
        return None, None
    m, n, k = input.shape[-2], input.shape[-1], tau.shape[-1]
    if k == 0:
        return input * 0, tau * 0
    start = Tensor(np.broadcast_to(np.eye(m, n, dtype=input._data.dtype), input.shape))
    grad_V, grad_tau = _householder_vjp(grad, _vectors(input, k), tau, start)
    grad_input = constant_pad_nd(grad_V.tril(-1), [0, n - k], 0)
    return grad_input, grad_tau


def householder_product_jvp(
    dV_: Tensor | None,
    dtau: Tensor | None,
    prod: Tensor,
    V_: Tensor,
    tau: Tensor,
) -> Tensor:
    """The tangent of H_1 ... H_k's first n columns, step by step: dQ_i = dQ_i+1 -
    dt v (v^H Q) - t dv (v^H Q) - t v (dv^H Q + v^H dQ_i+1)."""
    m, n, k = V_.shape[-2], V_.shape[-1], tau.shape[-1]
    start = Tensor(np.broadcast_to(np.eye(m, n, dtype=V_._data.dtype), V_.shape))
    V = _vectors(V_, k)
    dV = dV_.narrow(-1, 0, k).tril(-1) if dV_ is not None else V * 0
    dt_all = dtau if dtau is not None else tau * 0
    Q = _steps(V, tau, start)
    dQ = start * 0
    for step, i in enumerate(range(k - 1, -1, -1)):
        X = Q[step]
        v, dv = V.narrow(-1, i, 1), dV.narrow(-1, i, 1)
        t = tau.narrow(-1, i, 1).unsqueeze(-1)
        dt = dt_all.narrow(-1, i, 1).unsqueeze(-1)
        vhX = _mH(v).matmul(X)
        dQ = (
            dQ
            - (dt * v).matmul(vhX)
            - (t * dv).matmul(vhX)
            - (t * v).matmul(_mH(dv).matmul(X) + _mH(v).matmul(dQ))
        )
    return dQ


def ormqr_backward(
    grad: Tensor | None,
    result: Tensor,
    self: Tensor,
    tau: Tensor,
    other: Tensor,
    left: bool,
    transpose: bool,
    grad_input_mask: tuple[bool, ...],
) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
    """ormqr multiplies C by op(Q), Q = H_1 ... H_k the full m x m product: grad C is
    op(Q)^H applied to grad (ormqr again), and grad Q (hence the reflectors') that of
    a matrix product."""
    if grad is None:
        return None, None, None
    from_left = left
    grad_other = None
    if grad_input_mask[2]:
        grad_other = self.ormqr(tau, grad, left, not transpose)
    if not (grad_input_mask[0] or grad_input_mask[1]):
        return None, None, grad_other
    m, n, k = self.shape[-2], self.shape[-1], tau.shape[-1]
    if from_left:
        grad_Q = matmul(other, _mH(grad)) if transpose else matmul(grad, _mH(other))
    else:
        grad_Q = matmul(_mH(grad), other) if transpose else matmul(_mH(other), grad)
    start = Tensor(np.broadcast_to(np.eye(m, dtype=self._data.dtype), grad_Q.shape))
    grad_V, grad_tau = _householder_vjp(grad_Q, _vectors(self, k), tau, start)
    grad_self = constant_pad_nd(grad_V.tril(-1), [0, n - k], 0)
    return grad_self, grad_tau, grad_other
