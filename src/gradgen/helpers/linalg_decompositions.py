"""Formula helpers of torch.linalg's factorisations and what is built on them
(PyTorch's FunctionsManual names): determinants, solves, Cholesky, QR, SVD,
eigendecompositions, the pseudo-inverse, triangular solves and the matrix exponential.

Each is written with gradgen operators, so that under create_graph=True its result is
differentiable again; where PyTorch takes a shortcut outside grad mode (a solve with
the saved LU factorisation), the shortcut is taken on the arrays."""

from __future__ import annotations

import numpy as np

from ..generated import operators
from ..generated.ops import cat, imag, real, where
from ..grad_mode import is_grad_enabled, no_grad
from ..tensor import Tensor

__all__ = [
    "linalg_det_backward",
    "linalg_det_jvp",
    "slogdet_backward",
    "slogdet_jvp",
    "linalg_solve_backward",
    "linalg_solve_jvp",
    "cholesky_backward",
    "cholesky_jvp",
    "linalg_qr_backward",
    "linalg_qr_jvp",
    "svd_backward",
    "linalg_svd_jvp",
    "linalg_eig_backward",
    "linalg_eig_jvp",
    "linalg_solve_triangular_backward",
    "linalg_solve_triangular_forward_AD",
    "linalg_matrix_exp_differential",
    "pinv_backward",
    "pinv_jvp",
]


def _mH(A: Tensor) -> Tensor:  # noqa: N802  (PyTorch's name)
    """The conjugate transpose of (a batch of) matrices."""
    return A.transpose(-2, -1).conj()


def _diag(A: Tensor) -> Tensor:
    return A.diagonal(0, -2, -1)


def _solve(A: Tensor, B: Tensor, left: bool = True) -> Tensor:
    """linalg_solve(A, B, left), recorded (the helpers' differentiable solve)."""
    return operators._linalg_solve_ex.call(A, B, left, False)[0]  # type: ignore[no-any-return]


def _solve_triangular(
    A: Tensor, B: Tensor, upper: bool, left: bool = True, unitriangular: bool = False
) -> Tensor:
    return operators.linalg_solve_triangular.call(  # type: ignore[no-any-return]
        A, B, upper, left, unitriangular
    )


def _lu_solve(
    LU: Tensor, pivots: Tensor, B: Tensor, left: bool, adjoint: bool
) -> Tensor:
    """A solve with a saved LU factorisation (PyTorch's linalg_lu_solve shortcut),
    only outside grad mode (nothing records it): the operator, so that vmap batches
    it (a batch of gradients, as check_batched_grad and jacrev run)."""
    return operators.linalg_lu_solve.call(  # type: ignore[no-any-return]
        LU, pivots, B, left, adjoint
    )


def _is_vector_rhs(A: Tensor, B: Tensor) -> bool:
    """PyTorch's linalg_solve_is_vector_rhs, on the (logical) shapes."""
    return B.dim() == 1 or (B.dim() == A.dim() - 1 and B.shape == A.shape[:-1])


def _epsilon(LU: Tensor) -> float:
    return float(np.finfo(np.abs(np.zeros((), LU._data.dtype)).dtype).eps)


def _perturbed(LU: Tensor) -> Tensor:
    """LU with its zero pivots replaced by eps: a non-singular neighbour (det is C^1)."""
    diagonal = _diag(LU)
    return LU + where(diagonal.eq(0), _epsilon(LU), 0.0).to(LU.dtype).diag_embed()


# --- determinants ---------------------------------------------------------------


def linalg_det_jvp(
    dA: Tensor, det: Tensor, LU: Tensor, pivots: Tensor, use_A_T: bool
) -> Tensor:
    """d det = tr(A^{-1} dA) det, with A's LU perturbed off singularity (det is C^1).
    The LU here is of A itself, so `use_A_T` (PyTorch's LU of A^T) changes nothing."""
    return _diag(_solve_with_lu(_perturbed(LU), pivots, dA)).sum(-1) * det


def _solve_with_lu(LU: Tensor, pivots: Tensor, B: Tensor, left: bool = True) -> Tensor:
    """A^{-1} B (B A^{-1} when not `left`) for the A of an LU factorisation: on the
    arrays when B needs no gradient, else recorded (linear in B; A is a constant)."""
    if not (is_grad_enabled() and B.requires_grad):
        return _lu_solve(LU, pivots, B, left, False)
    return _solve(_lu_matrix(LU, pivots), B, left)


def _lu_matrix(LU: Tensor, pivots: Tensor) -> Tensor:
    """The matrix P L U an LU factorisation stands for, as a constant."""
    P, L, U = operators.lu_unpack.call(LU.detach(), pivots, True, True)
    return P.matmul(L.matmul(U))  # type: ignore[no-any-return]


def _prod_safe_zeros_backward(grad: Tensor, inp: Tensor) -> Tensor:
    """The gradient of prod over the last dim, right where some factors are zero:
    exclusive products from both sides (PyTorch's prod_safe_zeros_backward)."""
    ones = inp.narrow(-1, 0, 1) * 0 + 1
    before = cat([ones, inp.narrow(-1, 0, inp.shape[-1] - 1)], -1).cumprod(-1)
    flipped = inp.flip([-1])
    after = cat([ones, flipped.narrow(-1, 0, inp.shape[-1] - 1)], -1).cumprod(-1)
    return grad * (before * after.flip([-1])).conj()


def _det_singular(A: Tensor, grad: Tensor) -> Tensor:
    """The gradient of det at any matrix, singular included: the adjugate from the
    SVD, U diag(prod of the other singular values) Vh times det(U) det(Vh)."""
    U, S, Vh = operators._linalg_svd.call(A, False, True, None)
    det_u = operators._linalg_det.call(U)[0]
    det_vh = operators._linalg_det.call(Vh)[0]
    alpha = (det_u * det_vh).conj() * grad
    D = _prod_safe_zeros_backward(alpha.unsqueeze(-1), S.to(A.dtype))
    return (U * D.unsqueeze(-2)).matmul(Vh)  # type: ignore[no-any-return]


def linalg_det_backward(
    grad: Tensor | None, det: Tensor, A: Tensor, LU: Tensor, pivots: Tensor
) -> Tensor | None:
    """The gradient of det: G solving A^H G = conj(det) grad I; outside grad mode with
    the saved LU (perturbed off singularity), in grad mode with a recorded solve, or
    the adjugate by SVD for (nearly) singular matrices."""
    if grad is None or A.numel() == 0:
        return None
    d_diag = grad * det.conj()
    eye = Tensor(np.eye(A.shape[-1], dtype=A._data.dtype))
    d = d_diag.unsqueeze(-1).unsqueeze(-1) * eye
    if not is_grad_enabled():
        return _lu_solve(_perturbed(LU), pivots, d, True, True)
    singular = det.abs() < 100.0 * _epsilon(LU)
    # over every example under vmap (a batch of matrices is one call's batch)
    if not _all_examples(singular).any():
        return _solve(_mH(A), d)
    if _all_examples(singular).all():
        return _det_singular(A, grad)
    mask = singular.unsqueeze(-1).unsqueeze(-1)
    safe_A = where(mask, eye.to(A.dtype), A)
    return where(mask, _det_singular(A, grad), _solve(_mH(safe_A), d))


def slogdet_jvp(
    LU: Tensor, pivots: Tensor, dA: Tensor, sign: Tensor, use_A_T: bool
) -> tuple[Tensor, Tensor]:
    """The tangents of (sign, logabsdet): i Im(tr(A^{-1} dA)) sign and
    Re(tr(A^{-1} dA)); zero for the sign of a real matrix."""
    trace = _diag(_solve_with_lu(LU, pivots, dA)).sum(-1)
    if LU.is_complex():
        return imag(trace) * (1j * sign), real(trace)
    return sign * 0, trace


def slogdet_backward(
    grad_sign: Tensor | None,
    grad_logabsdet: Tensor | None,
    A: Tensor,
    signdet: Tensor,
    LU: Tensor,
    pivots: Tensor,
) -> Tensor | None:
    """(g_abs - i Im(conj(g_sign) sign)) A^{-H}: the real case has no sign gradient."""
    if grad_sign is None and grad_logabsdet is None:
        return None
    is_complex = A.is_complex()
    if not is_complex and grad_logabsdet is None:
        return None
    g = grad_logabsdet
    if is_complex:
        if grad_sign is not None:
            phase = imag(grad_sign.conj() * signdet) * -1j
            g = phase if g is None else g + phase
        else:
            assert g is not None
            g = g.to(A.dtype)
    assert g is not None
    eye = Tensor(np.eye(A.shape[-1], dtype=A._data.dtype))
    d = g.unsqueeze(-1).unsqueeze(-1) * eye
    if not is_grad_enabled():
        return _lu_solve(LU, pivots, d, True, True)
    return _solve(_mH(A), d)


# --- solves -----------------------------------------------------------------------


def linalg_solve_jvp(
    dA: Tensor, dB: Tensor, X: Tensor, LU: Tensor, pivots: Tensor, left: bool
) -> Tensor:
    """dX = A^{-1}(dB - dA X) (left), (dB - X dA) A^{-1} (right)."""
    vector = _is_vector_rhs(LU, dB)
    dB_ = dB.unsqueeze(-1) if vector else dB
    X_ = X.unsqueeze(-1) if vector else X
    rhs = dB_ - (dA.matmul(X_) if left else X_.matmul(dA))
    dX = _solve_with_lu(LU, pivots, rhs, left)
    return dX.squeeze(-1) if vector else dX


def linalg_solve_backward(
    gX: Tensor | None,
    X: Tensor,
    A: Tensor,
    LU: Tensor,
    pivots: Tensor,
    left: bool,
    B_requires_grad: bool,
) -> tuple[Tensor | None, Tensor | None]:
    """gB = A^{-H} gX (left; gX A^{-H} right), gA = -gB X^H (left; -X^H gB right)."""
    if gX is None:
        return None, None
    vector = _is_vector_rhs(LU, X)
    gX_ = gX.unsqueeze(-1) if vector else gX
    X_ = X.unsqueeze(-1) if vector else X
    if is_grad_enabled():
        gB = _solve(_mH(A), gX_, left)
    else:
        gB = _lu_solve(LU, pivots, gX_, left, True)
    gA = -gB.matmul(_mH(X_)) if left else -_mH(X_).matmul(gB)
    if not B_requires_grad:
        return gA, None
    return gA, (gB.squeeze(-1) if vector else gB)


def linalg_solve_triangular_forward_AD(  # noqa: N802  (PyTorch's name)
    A_t: Tensor,
    B_t: Tensor,
    A: Tensor,
    X: Tensor,
    upper: bool,
    left: bool,
    unitriangular: bool,
) -> Tensor:
    """dX = A^{-1}(dB - tri(dA) X) (left), with dA projected on A's triangle."""
    offset = int(unitriangular)
    proj = A_t.triu(offset) if upper else A_t.tril(-offset)
    rhs = B_t - (proj.matmul(X) if left else X.matmul(proj))
    return _solve_triangular(A, rhs, upper, left, unitriangular)


def linalg_solve_triangular_backward(
    grad: Tensor | None,
    A: Tensor,
    X: Tensor,
    upper: bool,
    left: bool,
    unitriangular: bool,
    output_mask: tuple[bool, ...],
) -> tuple[Tensor | None, Tensor | None]:
    """G_B = A^{-H} G_X; G_A = -G_B X^H (left) projected on A's triangle."""
    A_requires_grad, B_requires_grad = output_mask[0], output_mask[1]
    if grad is None or not (A_requires_grad or B_requires_grad):
        return None, None
    G_B = _solve_triangular(_mH(A), grad, not upper, left, unitriangular)
    if not A_requires_grad:
        return None, G_B
    G_A = -G_B.matmul(_mH(X)) if left else -_mH(X).matmul(G_B)
    offset = int(unitriangular)
    G_A = G_A.triu(offset) if upper else G_A.tril(-offset)
    return G_A, (G_B if B_requires_grad else None)


# --- Cholesky ---------------------------------------------------------------------


def cholesky_jvp(dA: Tensor, L: Tensor, upper: bool) -> Tensor:
    """dL = L Phi(L^{-1} dA L^{-H}), Phi the lower triangle with half its diagonal."""
    L_ = _mH(L) if upper else L
    dL = _solve_triangular(L_, dA, False, True)
    dL = _solve_triangular(_mH(L_), dL, True, False)
    dL = dL.tril() - (_diag(dL) * 0.5).diag_embed()
    dL = L_.matmul(dL)
    return _mH(dL) if upper else dL


def cholesky_backward(grad: Tensor | None, upper: bool, L: Tensor) -> Tensor | None:
    """gA = L^{-H} Phi(L^H gL) L^{-1}, Phi(X) = (X + X^H - diag X) / 2 on the lower
    triangle of L^H gL."""
    if grad is None:
        return None
    L_ = _mH(L) if upper else L
    gL = _mH(grad) if upper else grad
    gA = _mH(L_).matmul(gL).tril()
    gA = 0.5 * (gA + _mH(gA.tril(-1)))
    gA = _solve_triangular(_mH(L_), gA, True, True)
    return _solve_triangular(L_, gA, False, False)


# --- QR ---------------------------------------------------------------------------


def _qr_mode(mode: str) -> tuple[bool, bool]:
    """(compute_q, reduced) of a QR mode, with the errors of a derivative that needs
    Q."""
    compute_q, reduced = mode != "r", mode != "complete"
    if not compute_q:
        raise RuntimeError(
            "The derivative of linalg.qr depends on Q, which is not computed when "
            "mode='r'. Please use linalg.qr(A, mode='reduced') if you are going to "
            "differentiate through linalg.qr."
        )
    return compute_q, reduced


def _check_qr_differentiable(reduced: bool, m: int, n: int) -> None:
    if not reduced and m > n:
        raise RuntimeError(
            "The QR decomposition is not differentiable when mode='complete' and "
            "nrows > ncols."
        )


def linalg_qr_jvp(dA: Tensor, Q: Tensor, R: Tensor, mode: str) -> tuple[Tensor, Tensor]:
    """dQ, dR from dA = dQ R + Q dR: for m >= n, dR = syminv(sym(Q^H dA R^{-1})) R and
    dQ = dA R^{-1} - Q dR R^{-1}; for m < n, dQ from the leading square block."""
    _, reduced = _qr_mode(mode)
    m, n = dA.shape[-2], dA.shape[-1]
    _check_qr_differentiable(reduced, m, n)
    if m >= n:
        dARinv = _solve_triangular(R, dA, True, False)
        X = _mH(Q).matmul(dARinv)
        sym = X + _mH(X)
        dR = sym.triu() - (_diag(sym) * 0.5).diag_embed()
        dQ = dARinv - Q.matmul(dR)
        return dQ, dR.matmul(R)
    QHdA = _mH(Q).matmul(dA)
    X = _solve_triangular(R.narrow(-1, 0, m), QHdA.narrow(-1, 0, m), True, False)
    if X.is_complex():
        trilim = X.tril(-1) + (imag(_diag(X)) * 1j).diag_embed()
        dQ = trilim - _mH(trilim)
        dQ = dQ - (_diag(dQ) * 0.5).diag_embed()
    else:
        trilim = X.tril(-1)
        dQ = trilim - _mH(trilim)
    dR = QHdA - dQ.matmul(R)
    return Q.matmul(dQ), dR


def linalg_qr_backward(
    gQ: Tensor | None, gR: Tensor | None, Q: Tensor, R: Tensor, mode: str
) -> Tensor | None:
    """The adjoint of linalg_qr_jvp: gA = (gQ + Q syminvadj(triu(gR R^H - Q^H gQ)))
    R^{-H} for m >= n; the leading block's adjoint padded with zeros, plus Q gR,
    for m < n."""
    _, reduced = _qr_mode(mode)
    m, n = Q.shape[-2], R.shape[-1]
    _check_qr_differentiable(reduced, m, n)
    if gQ is None and gR is None:
        return None
    if gQ is None:
        assert gR is not None
        gA = gR.matmul(_mH(R))
    elif gR is None:
        gA = -_mH(Q).matmul(gQ)
    else:
        gA = gR.matmul(_mH(R)) - _mH(Q).matmul(gQ)
    if m >= n:
        upper = gA.triu()
        sym = upper + _mH(upper)
        sym = sym - (real(_diag(sym)) * 0.5).to(sym.dtype).diag_embed()
        gA = Q.matmul(sym)
        if gQ is not None:
            gA = gA + gQ
        return _solve_triangular(_mH(R), gA, False, False)
    skew = (-gA - _mH(-gA)).tril()
    if skew.is_complex():
        skew = skew - (imag(_diag(skew)) * 0.5j).diag_embed()
    gA = Q.matmul(skew)
    gA = _solve_triangular(_mH(R.narrow(-1, 0, m)), gA, False, False)
    zeros = R.narrow(-1, 0, n - m) * 0
    gA = cat([gA, zeros.expand(gA.shape[:-1] + (n - m,))], -1)
    if gR is not None:
        gA = gA + Q.matmul(gR)
    return gA


# --- SVD ---------------------------------------------------------------------------


def _svd_E(S: Tensor) -> Tensor:  # noqa: N802
    """E_jk = S_k^2 - S_j^2 off the diagonal, 1 on it."""
    S2 = S * S
    E = S2.unsqueeze(-2) - S2.unsqueeze(-1)
    eye = Tensor(np.eye(S.shape[-1], dtype=S._data.dtype))
    return E + eye


def linalg_svd_jvp(
    dA: Tensor, U_: Tensor, S: Tensor, Vh_: Tensor, full_matrices: bool
) -> tuple[Tensor, Tensor, Tensor]:
    """dU, dS, dVh from dP = U^H dA V: dS = Re diag dP and the off-diagonal parts
    divided by the gaps between squared singular values (see svd_backward)."""
    is_complex = dA.is_complex()
    m, n, k = dA.shape[-2], dA.shape[-1], S.shape[-1]
    U = U_.narrow(-1, 0, k) if full_matrices else U_
    Vh = Vh_.narrow(-2, 0, k) if full_matrices else Vh_
    V = _mH(Vh)
    dP = _mH(U).matmul(dA.matmul(V)) if m < n else _mH(U).matmul(dA).matmul(V)
    dS = real(_diag(dP)) if is_complex else _diag(dP)
    dP = dP - dS.diag_embed()
    E = _svd_E(S)
    dUaux = dP * S.unsqueeze(-2)
    dUaux = (dUaux + _mH(dUaux)) / E
    dVhaux = dP * (-S).unsqueeze(-1)
    dVhaux = (dVhaux + _mH(dVhaux)) / E
    if is_complex:
        diag_dP2S = (_diag(dP) / (2.0 * S)).diag_embed()
        dUaux, dVhaux = dUaux + diag_dP2S, dVhaux + diag_dP2S
    dU = U.matmul(dUaux)
    if m > n:
        dAVSinv = dA.matmul(V / S.unsqueeze(-2))
        dU = dU + dAVSinv - U.matmul(_mH(U).matmul(dAVSinv))
        if full_matrices:
            dU = cat([dU, (U_.narrow(-1, 0, m - n) * 0)], -1)
    dVh = dVhaux.matmul(Vh)
    if m < n:
        UHdASinv = (_mH(U) / S.unsqueeze(-1)).matmul(dA)
        dVh = dVh + UHdASinv - UHdASinv.matmul(V).matmul(Vh)
        if full_matrices:
            dVh = cat([dVh, (Vh_.narrow(-2, 0, n - m) * 0)], -2)
    return dU, dS, dVh


def _all_examples(tensor: Tensor) -> np.ndarray:
    """tensor's values in every example of the vmap levels open around it: vmap's
    BatchedTensor keeps example 0 in `_data` and the whole batch (batch dimension
    first) in `_value`, itself batched when levels nest. A check over this array
    fails when any example fails, as a loop over the examples would."""
    value = getattr(tensor, "_value", None)
    while isinstance(value, Tensor):
        tensor, value = value, getattr(value, "_value", None)
    return tensor._data


def _phase_free(imaginary_diagonal: Tensor) -> bool:
    """Whether a gauge term (imaginary parts, computed by operators so that vmap
    batches them) is zero, loosely, in every example."""
    return bool(np.allclose(_all_examples(imaginary_diagonal), 0, rtol=1e-2, atol=1e-2))


def _check_svd_gauge(UhgU: Tensor | None, VhgV: Tensor | None) -> None:
    """A loss of complex singular vectors must not depend on their phases:
    Im diag(U^H gU) + Im diag(V^H gV) = 0 (loosely)."""
    with no_grad():
        terms = [imag(_diag(skew)) for skew in (UhgU, VhgV) if skew is not None]
        total = terms[0] if len(terms) == 1 else terms[0] + terms[1]
    if not _phase_free(total):
        raise RuntimeError(
            "svd_backward: The singular vectors in the complex case are specified up "
            "to multiplication by e^{i phi}. The specified loss function depends on "
            "this phase term, making it ill-defined."
        )


def svd_backward(
    gU: Tensor | None,
    gS: Tensor | None,
    gVh: Tensor | None,
    U: Tensor,
    S: Tensor,
    Vh: Tensor,
) -> Tensor | None:
    """gA = U [(skew(U^H gU) / E) S + S (skew(V^H gV) / E) + diag(gS)
    (+ i Im diag(U^H gU) / 2S when complex)] V^H, plus (I - U U^H) gU S^{-1} V^H
    when m > n or U S^{-1} gV^H (I - V V^H) when m < n; E_jk = S_k^2 - S_j^2."""
    if gS is None and gU is None and gVh is None:
        return None
    m, n = U.shape[-2], Vh.shape[-1]
    if gU is None and gVh is None:
        assert gS is not None
        if m >= n:
            return U.matmul(gS.unsqueeze(-1) * Vh)
        return (U * gS.unsqueeze(-2)).matmul(Vh)
    is_complex = U.is_complex()
    UhgU = VhgV = None
    if gU is not None:
        X = _mH(U).matmul(gU)
        UhgU = X - _mH(X)
    if gVh is not None:
        Y = Vh.matmul(_mH(gVh))
        VhgV = Y - _mH(Y)
    if is_complex:
        _check_svd_gauge(UhgU, VhgV)
    E = _svd_E(S)
    if UhgU is not None and VhgV is not None:
        gA = (UhgU * S.unsqueeze(-2) + S.unsqueeze(-1) * VhgV) / E
    elif UhgU is not None:
        gA = (UhgU / E) * S.unsqueeze(-2)
    else:
        assert VhgV is not None
        gA = S.unsqueeze(-1) * (VhgV / E)
    if gS is not None:
        gA = gA + gS.diag_embed()
    if is_complex and UhgU is not None and VhgV is not None:
        gA = gA + (_diag(UhgU) / (2.0 * S)).diag_embed()
    if m > n and gU is not None:
        gA = U.matmul(gA)
        gUSinv = gU / S.unsqueeze(-2)
        gA = gA + gUSinv - U.matmul(_mH(U).matmul(gUSinv))
        return gA.matmul(Vh)
    if m < n and gVh is not None:
        gA = gA.matmul(Vh)
        SinvgVh = gVh / S.unsqueeze(-1)
        gA = gA + SinvgVh - SinvgVh.matmul(_mH(Vh)).matmul(Vh)
        return U.matmul(gA)
    return U.matmul(gA.matmul(Vh)) if m >= n else U.matmul(gA).matmul(Vh)


# --- eigendecompositions -----------------------------------------------------------


def _eig_gauge(diag_VhgV: Tensor, is_hermitian: bool) -> None:
    with no_grad():
        phase_free = _phase_free(imag(diag_VhgV))
    if not phase_free:
        name = "linalg_eigh_backward" if is_hermitian else "linalg_eig_backward"
        raise RuntimeError(
            f"{name}: The eigenvectors in the complex case are specified up to "
            "multiplication by e^{i phi}. The specified loss function depends on this "
            "quantity, so it is ill-defined."
        )


def linalg_eig_backward(
    gL: Tensor | None,
    gV: Tensor | None,
    L: Tensor,
    V: Tensor,
    is_hermitian: bool,
    symeig_eigenvectors: bool = True,
) -> Tensor | None:
    """gA = V^{-H} (diag(gL) + P(V^H gV) / conj(E)) V^H with E_ij = L_j - L_i, P the
    projection on skew-Hermitian matrices (Hermitian case) or the removal of the
    unit-norm direction of each eigenvector (general case)."""
    if not symeig_eigenvectors:
        raise RuntimeError(
            "linalg_eig_backward: torch.symeig(A, eigenvectors=False) is not "
            "differentiable. Use torch.linalg.eigvalsh(A) instead."
        )
    if gL is None and gV is None:
        return None
    if gV is None:
        assert gL is not None
        if is_hermitian:
            return (V * gL.unsqueeze(-2)).matmul(_mH(V))
        return _solve(_mH(V), gL.unsqueeze(-1) * _mH(V))
    VhgV = _mH(V).matmul(gV)
    diag_VhgV = _diag(VhgV)
    if V.is_complex():
        _eig_gauge(diag_VhgV, is_hermitian)
    if is_hermitian:
        VhgV = 0.5 * (VhgV - _mH(VhgV))
    else:
        VhgV = VhgV - _mH(V).matmul(V * real(diag_VhgV).unsqueeze(-2))
    Lconj = L.conj()
    Econj = Lconj.unsqueeze(-2) - Lconj.unsqueeze(-1)
    eye = Tensor(np.eye(L.shape[-1], dtype=L._data.dtype))
    gA = VhgV / (Econj + eye)
    if gL is not None:
        gA = gA - _diag(gA).diag_embed() + gL.to(gA.dtype).diag_embed()
    if is_hermitian:
        return V.matmul(gA.matmul(_mH(V)))
    return _solve(_mH(V), gA.matmul(_mH(V)))


def linalg_eig_jvp(
    dA: Tensor, L: Tensor, V: Tensor, is_hermitian: bool
) -> tuple[Tensor, Tensor]:
    """dL = diag(dP), dV = V ((dP - diag dP) / E) (minus its component along each
    unit-norm eigenvector in the general case), dP = V^{-1} dA V."""
    if is_hermitian:
        dP = _mH(V).matmul(dA).matmul(V)
    else:
        dP = _solve(V, dA.to(V.dtype).matmul(V))
    dL = real(_diag(dP)) if is_hermitian and dA.is_complex() else _diag(dP)
    eye = Tensor(np.eye(L.shape[-1], dtype=L._data.dtype))
    gaps = L.unsqueeze(-2) - L.unsqueeze(-1) + eye
    dX = dP / gaps
    dX = V.matmul(dX - _diag(dX).diag_embed())
    if is_hermitian:
        return dL, dX
    correction = real(_diag(_mH(V).matmul(dX))).unsqueeze(-2)
    return dL, dX - V * correction


# --- functions of matrices ---------------------------------------------------------


def linalg_matrix_exp_differential(self: Tensor, grad: Tensor, adjoint: bool) -> Tensor:
    """The differential of exp at `self` applied to `grad` (its adjoint when
    `adjoint`): the top-right block of exp([[A, G], [0, A]]) (Mathias, 1996)."""
    A = _mH(self) if adjoint else self
    n = A.shape[-1]
    G = grad.to(A.dtype) if grad.dtype != A.dtype else grad
    top = cat([A, G], -1)
    bottom = cat([A * 0, A], -1)
    meta = cat([top, bottom], -2)
    exp = operators.linalg_matrix_exp.call(meta)
    return exp.narrow(-2, 0, n).narrow(-1, n, n)  # type: ignore[no-any-return]


def pinv_jvp(A: Tensor, pinvA: Tensor, dA: Tensor) -> Tensor:
    """The differential of the pseudo-inverse (Golub and Pereyra), arranged to keep
    the products small."""
    m, n = A.shape[-2], A.shape[-1]
    dAh, pinvAh = _mH(dA), _mH(pinvA)
    if m <= n:
        K = pinvAh.matmul(dAh)
        return pinvA.matmul(K - _mH(K) - K.matmul(A.matmul(pinvA))) + (
            dAh - pinvA.matmul(A.matmul(dAh))
        ).matmul(pinvAh.matmul(pinvA))
    K = pinvA.matmul(dA)
    Kh = _mH(K)
    return (Kh - K - pinvA.matmul(A).matmul(Kh)).matmul(pinvA) + (
        pinvA.matmul(pinvAh)
    ).matmul(dAh - dAh.matmul(A).matmul(pinvA))


def pinv_backward(grad: Tensor | None, pinvA: Tensor, A: Tensor) -> Tensor | None:
    """The adjoint of pinv_jvp."""
    if grad is None:
        return None
    m, n = A.shape[-2], A.shape[-1]
    pinvAh, gradh = _mH(pinvA), _mH(grad)
    if m <= n:
        K = gradh.matmul(pinvA)
        KpinvAh = K.matmul(pinvAh)
        return (
            -_mH(pinvA.matmul(K))
            + KpinvAh
            - A.matmul(pinvA).matmul(KpinvAh)
            + pinvAh.matmul(pinvA).matmul(gradh - K.matmul(A))
        )
    K = pinvA.matmul(gradh)
    pinvAhK = pinvAh.matmul(K)
    return (
        -_mH(K.matmul(pinvA))
        + (gradh - A.matmul(K)).matmul(pinvA).matmul(pinvAh)
        + pinvAhK
        - pinvAhK.matmul(pinvA).matmul(A)
    )
