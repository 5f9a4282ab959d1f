"""Operator-table lines of the linalg family of native_functions.yaml."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .common import Line, _aten, _aten_namespace, _hidden_overload, _vector_norms


def _f64(lib: Any, values: Any) -> Any:
    return lib.tensor(values, dtype=lib.float64)


def _chain_matmul(lib: Any, a: Any, b: Any) -> Any:
    """chain_matmul, without the deprecation warning both libraries give."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return lib.chain_matmul(a, b, b.t()) + lib.chain_matmul(a)


def _la(lib: Any, name: str) -> Any:
    """torch.linalg.NAME, and gradgen's."""
    return getattr(lib.linalg, name)


def _quiet(fn: Any) -> Any:
    """fn() without torch.cholesky's deprecation warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn()


def _eye(lib: Any, n: int) -> Any:
    return lib.eye(n, dtype=lib.float64)


def _spd(lib: Any, a: Any) -> Any:
    """A Hermitian positive-definite matrix (batch) made from a."""
    return a @ a.mH + 3.0 * _eye(lib, a.shape[-1])


def _qr(lib: Any, a: Any, mode: str = "reduced") -> Any:
    """Functions of Q and R that do not depend on the signs (phases) LAPACK picks for
    Q's columns and R's rows: q_j r_jj and |R|."""
    q, r = _la(lib, "qr")(a, mode)
    k = min(a.shape[-2], a.shape[-1])
    d = r.diagonal(0, -2, -1).unsqueeze(-2)
    return (q.narrow(-1, 0, k) * d).abs() * 2.0 + r.abs().sum(-2, True).narrow(-1, 0, k)


def _svd(lib: Any, u: Any, s: Any, vh: Any) -> Any:
    """Gauge-invariant functions of an SVD: |U| |Vh| scaled by S."""
    k = s.shape[-1]
    return (u.narrow(-1, 0, k).abs() * s.unsqueeze(-2)) @ vh.narrow(-2, 0, k).abs()


def _eigh(lib: Any, values: Any, vectors: Any) -> Any:
    return vectors.abs() * values.unsqueeze(-2)


def _lu_solves(lib: Any, a: Any, b: Any) -> Any:
    """linalg.lu_solve with every side and adjoint, its LU (recorded) from a's."""
    LU, pivots = _la(lib, "lu_factor")(a)
    solve = _la(lib, "lu_solve")
    return (
        solve(LU, pivots, b)
        + solve(LU, pivots, b, adjoint=True)
        + solve(LU, pivots, b.mT, left=False).mT
        + solve(LU, pivots, b.mT, left=False, adjoint=True).mT
    )


def _eig(lib: Any, a: Any) -> Any:
    values, vectors = _la(lib, "eig")(a)
    return vectors.abs() * values.abs().unsqueeze(-2) + values.real.unsqueeze(-2)


def _norm_dtype(lib: Any, overload: str, *args: Any) -> Any:
    """An ATen norm overload with dtype=float64 (keyword-only in torch.ops; gradgen's
    dispatcher entry takes it in its place)."""
    if lib.__name__ == "torch":
        return _hidden_overload(lib, overload)(*args, dtype=lib.float64)
    return _hidden_overload(lib, overload)(*args, lib.float64)


def _triangular_solves(lib: Any, a: Any, b: Any) -> Any:
    """triangular_solve with every triangle, transpose and unit diagonal; the cloned
    coefficient included."""
    x, m = lib.triangular_solve(b, a)
    y, _ = b.triangular_solve(a, upper=False, transpose=True)
    z, n = lib.triangular_solve(b, a, False, False, True)
    return x + y + z + (m + n).sum(-1, True)


LINES: dict[str, Line] = {
    # Products built from the others (composites/linalg_products.py) and distances.
    "kron": Line(lambda lib, a, b: lib.kron(a, b) * a.kron(b), ((2, 3), (3,))),
    "inner": Line(
        lambda lib, a, b: lib.inner(a, b) + a.inner(b[0, 0]).sum(), ((2, 3), (4, 3))
    ),
    "tensordot": Line(
        lambda lib, a, b: lib.tensordot(a, b, 1) * lib.tensordot(a, b, ([1], [0])),
        ((2, 3), (3, 4)),
    ),
    "einsum": Line(
        lambda lib, a, b: lib.einsum("ij,jk->ik", a, b)
        + lib.einsum("ii,jk", [a[:, :2], b]).sum()
        + lib.einsum(a, [0, 1], b, [1, 2], [0, 2]) * lib.einsum("ij->j", a)[0],
        ((2, 3), (3, 4)),
    ),
    "chain_matmul": Line(lambda lib, a, b: _chain_matmul(lib, a, b), ((2, 3), (3, 4))),
    "cdist": Line(
        lambda lib, a, b: lib.cdist(a, b) + lib.cdist(a, b, p=1.5) * 2.0,
        ((3, 2), (4, 2)),
        forward=False,
        double_backward=False,
    ),
    "_cdist_forward": Line(
        lambda lib, a, b: _aten(lib, "_cdist_forward")(a, b, 3.0, None),
        ((2, 3, 2), (1, 4, 2)),
        forward=False,
        double_backward=False,
    ),
    "_cdist_backward": Line(
        lambda lib, a: a
        * _aten(lib, "_cdist_backward")(
            _f64(lib, [[1.0, -2.0], [0.5, 3.0]]),
            _f64(lib, [[1.0, 2.0], [0.0, 1.0]]),
            _f64(lib, [[0.0, 1.0], [2.0, 2.0]]),
            2.0,
            lib.cdist(
                _f64(lib, [[1.0, 2.0], [0.0, 1.0]]), _f64(lib, [[0.0, 1.0], [2.0, 2.0]])
            ),
        ),
        ((2, 2),),
    ),
    "pdist": Line(
        lambda lib, a: lib.pdist(a) * lib.pdist(a, 1.5),
        ((4, 3),),
        forward=False,
        double_backward=False,
    ),
    "_pdist_forward": Line(
        lambda lib, a: _aten(lib, "_pdist_forward")(a, float("inf"))
        + _aten(lib, "_pdist_forward")(a, 1.0),
        ((4, 3),),
        forward=False,
        double_backward=False,
    ),
    "_pdist_backward": Line(
        lambda lib, a: a
        * _aten(lib, "_pdist_backward")(
            _f64(lib, [1.0, -2.0, 0.5]),
            _f64(lib, [[1.0, 2.0], [0.0, 1.0], [3.0, -1.0]]),
            2.0,
            lib.pdist(_f64(lib, [[1.0, 2.0], [0.0, 1.0], [3.0, -1.0]])),
        )[0],
        ((2,),),
    ),
    "trapezoid.x": Line(
        lambda lib, a, b: lib.trapezoid(a, b) * lib.trapezoid(a.t(), b, dim=0),
        ((2, 3), (3,)),
    ),
    "trapezoid.dx": Line(
        lambda lib, a: lib.trapezoid(a) + lib.trapezoid(a, dx=0.5, dim=0).sum(),
        ((2, 3),),
    ),
    "trapz.x": Line(lambda lib, a, b: lib.trapz(a, b) * 2.0, ((2, 3), (3,))),
    "trapz.dx": Line(lambda lib, a: lib.trapz(a, dx=2.0, dim=0), ((2, 3),)),
    "cumulative_trapezoid.x": Line(
        lambda lib, a, b: lib.cumulative_trapezoid(a, b) * 2.0, ((2, 3), (3,))
    ),
    "cumulative_trapezoid.dx": Line(
        lambda lib, a: lib.cumulative_trapezoid(a, dx=0.5, dim=0), ((3, 2),)
    ),
    "mm": Line(lambda lib, a, b: lib.mm(a, b), ((2, 3), (3, 4)), complex=True),
    "bmm": Line(lambda lib, a, b: a.bmm(b), ((2, 2, 3), (2, 3, 2)), complex=True),
    "dot": Line(lambda lib, a, b: lib.dot(a, b) * a, ((3,), (3,)), complex=True),
    "vdot": Line(lambda lib, a, b: lib.vdot(a, b) * a, ((3,), (3,)), complex=True),
    "mv": Line(lambda lib, a, b: lib.mv(a, b), ((2, 3), (3,)), complex=True),
    "outer": Line(lambda lib, a, b: lib.outer(a, b * b), ((3,), (2,))),
    "ger": Line(lambda lib, a, b: a.ger(b) * a.ger(b), ((3,), (2,))),
    # Batch-broadcasting cases are in tests/ops/test_linalg.py (their double backward
    # needs the shared reshape to copy non-contiguous gradients).
    "matmul": Line(
        lambda lib, a, b: lib.matmul(a, b), ((2, 2, 3), (2, 3, 2)), complex=True
    ),
    "addmm": Line(
        lambda lib, a, b, c: lib.addmm(a, b, c, beta=0.5, alpha=-2.0),
        ((3,), (2, 4), (4, 3)),
        complex=True,
    ),
    "linear": Line(
        lambda lib, a, b, c: _aten_namespace(lib).linear(a, b, c),
        ((2, 4, 3), (5, 3), (5,)),
    ),
    "tril": Line(lambda lib, a: lib.tril(a) * a.tril(-1) + a.tril(2), ((3, 4),)),
    "triu": Line(lambda lib, a: lib.triu(a, 1) * a.triu() + a.triu(-1), ((2, 3, 4),)),
    "tril_": Line(lambda lib, a: (a * a).tril_(1) * a, ((4, 3),)),
    "triu_": Line(lambda lib, a: (a * 1.0).triu_(-1) * a, ((4, 3),)),
    "trace": Line(lambda lib, a: lib.trace(a) * a + a.trace(), ((3, 4),)),
    "linalg_vector_norm": Line(_vector_norms, ((2, 3),)),
    # The ATen overloads (NormBackward0..3): gradgen.norm and torch.norm run
    # linalg_vector_norm (tests/ops/test_linalg_norms.py).
    "norm.Scalar": Line(
        lambda lib, a: _hidden_overload(lib, "norm.Scalar")(a, 2) * a
        + _hidden_overload(lib, "norm.Scalar")(a, 1)
        + _hidden_overload(lib, "norm.Scalar")(a, float("inf")),
        ((2, 3),),
        complex=True,
    ),
    "norm.ScalarOpt_dim": Line(
        lambda lib, a: _hidden_overload(lib, "norm.ScalarOpt_dim")(a, 2, [1], False)
        * _hidden_overload(lib, "norm.ScalarOpt_dim")(a, None, [0], True).sum()
        + _hidden_overload(lib, "norm.ScalarOpt_dim")(a, 3, [0, 1], False),
        ((3, 4),),
    ),
    "dist": Line(
        lambda lib, a, b: lib.dist(a, b) * a.dist(b, 3) + lib.dist(a, b, float("inf")),
        ((3, 1), (4,)),
    ),
    "linalg_inv_ex": Line(
        lambda lib, a: _la(lib, "inv_ex")(a)[0], ((2, 3, 3),), complex=True
    ),
    "_linalg_det": Line(
        lambda lib, a: lib._linalg_det(a)[0], ((2, 3, 3),), complex=True
    ),
    "_linalg_slogdet": Line(
        lambda lib, a: (lambda s, l, *_: l + s.real)(*lib._linalg_slogdet(a)),
        ((2, 3, 3),),
        complex=True,
    ),
    "_linalg_solve_ex": Line(
        lambda lib, a, b: lib._linalg_solve_ex(a, b)[0]
        + lib._linalg_solve_ex(a, b.mT, left=False)[0].mT,
        ((2, 3, 3), (2, 3, 3)),
        complex=True,
    ),
    "linalg_cholesky_ex": Line(
        lambda lib, a: _la(lib, "cholesky_ex")(_spd(lib, a))[0]
        + _la(lib, "cholesky_ex")(_spd(lib, a), upper=True)[0],
        ((2, 3, 3),),
        complex=True,
    ),
    "linalg_qr": Line(
        lambda lib, a: _qr(lib, a) + _qr(lib, a.mT).sum(), ((4, 3),), complex=True
    ),
    "_linalg_svd": Line(
        lambda lib, a: _svd(lib, *lib._linalg_svd(a))
        + _svd(lib, *lib._linalg_svd(a.mT, True)).sum(),
        ((2, 4, 3),),
        complex=True,
    ),
    "_linalg_eigh": Line(
        lambda lib, a: _eigh(lib, *lib._linalg_eigh(a + a.mH))
        + _eigh(lib, *lib._linalg_eigh(a + a.mH, "U")),
        ((2, 3, 3),),
        complex=True,
    ),
    "linalg_eig": Line(_eig, ((2, 3, 3),)),
    "linalg_solve_triangular": Line(
        lambda lib, a, b: _la(lib, "solve_triangular")(
            a + 4.0 * _eye(lib, 3), b, upper=True
        )
        + _la(lib, "solve_triangular")(
            a + 4.0 * _eye(lib, 3), b.mT, upper=False, left=False, unitriangular=True
        ).mT,
        ((3, 3), (3, 3)),
        complex=True,
    ),
    "linalg_cross": Line(
        lambda lib, a, b: _la(lib, "cross")(a, b)
        + _la(lib, "cross")(a, b.flip(-1), dim=0),
        ((3, 3), (3, 3)),
        complex=True,
    ),
    "linalg_matrix_exp": Line(
        lambda lib, a: _la(lib, "matrix_exp")(a), ((2, 3, 3),), complex=True
    ),
    "linalg_pinv.atol_rtol_tensor": Line(
        lambda lib, a: _la(lib, "pinv")(a, atol=lib.tensor(1e-3, dtype=lib.float64))
        + _la(lib, "pinv")(a.mT, hermitian=False).mT,
        ((2, 4, 3),),
        complex=True,
    ),
    "linalg_inv": Line(lambda lib, a: _la(lib, "inv")(a), ((2, 3, 3),), complex=True),
    "inverse": Line(lambda lib, a: lib.inverse(a) + a.inverse(), ((3, 3),)),
    "linalg_det": Line(lambda lib, a: _la(lib, "det")(a), ((2, 3, 3),), complex=True),
    "det": Line(lambda lib, a: lib.det(a) * a.det(), ((3, 3),)),
    "linalg_slogdet": Line(
        lambda lib, a: _la(lib, "slogdet")(a).logabsdet, ((2, 3, 3),), complex=True
    ),
    "slogdet": Line(
        lambda lib, a: lib.slogdet(a).logabsdet * a.slogdet()[0], ((2, 3, 3),)
    ),
    "logdet": Line(lambda lib, a: lib.logdet(_spd(lib, a)) + a.logdet(), ((3, 3),)),
    "linalg_solve_ex": Line(
        lambda lib, a, b: _la(lib, "solve_ex")(a, b).result,
        ((3, 3), (3,)),
        complex=True,
    ),
    "linalg_solve": Line(
        lambda lib, a, b: _la(lib, "solve")(a, b)
        + _la(lib, "solve")(a, b.unsqueeze(-2), left=False).squeeze(-2),
        ((2, 3, 3), (2, 3)),
    ),
    "linalg_cholesky": Line(
        lambda lib, a: _la(lib, "cholesky")(_spd(lib, a), upper=True), ((3, 3),)
    ),
    "linalg_svd": Line(
        lambda lib, a: _svd(lib, *_la(lib, "svd")(a, False)), ((3, 4),), complex=True
    ),
    "linalg_svdvals": Line(
        lambda lib, a: _la(lib, "svdvals")(a), ((2, 4, 3),), complex=True
    ),
    "svd": Line(lambda lib, a: _svd(lib, *lib.svd(a)[:2], a.svd()[2].mH), ((4, 3),)),
    "linalg_eigh": Line(
        lambda lib, a: _eigh(lib, *_la(lib, "eigh")(a + a.mT, UPLO="U")), ((3, 3),)
    ),
    "linalg_eigvalsh": Line(
        lambda lib, a: _la(lib, "eigvalsh")(a + a.mH), ((2, 3, 3),), complex=True
    ),
    "linalg_eigvals": Line(lambda lib, a: _la(lib, "eigvals")(a).abs(), ((3, 3),)),
    "linalg_pinv.atol_rtol_float": Line(
        lambda lib, a: _la(lib, "pinv")(a, rtol=1e-3), ((3, 4),), complex=True
    ),
    "linalg_pinv": Line(lambda lib, a: _la(lib, "pinv")(a, 1e-3), ((3, 4),)),
    "pinverse": Line(lambda lib, a: lib.pinverse(a) + a.pinverse(1e-3), ((3, 4),)),
    "linalg_matrix_norm": Line(
        lambda lib, a: _la(lib, "matrix_norm")(a, 1)
        + _la(lib, "matrix_norm")(a, -float("inf"), (0, 2)).sum()
        + _la(lib, "matrix_norm")(a, 2, keepdim=True).sum()
        + _la(lib, "matrix_norm")(a, -2, (2, 1)),
        ((2, 3, 4),),
    ),
    "linalg_matrix_norm.str_ord": Line(
        lambda lib, a: _la(lib, "matrix_norm")(a)
        + _la(lib, "matrix_norm")(a, "nuc", keepdim=True).sum(),
        ((2, 3, 4),),
        complex=True,
    ),
    "linalg_norm": Line(
        lambda lib, a: _la(lib, "norm")(a) * a
        + _la(lib, "norm")(a, float("inf"))
        + _la(lib, "norm")(a, 3, dim=(1,)).sum(),
        ((3, 4),),
    ),
    "linalg_norm.ord_str": Line(
        lambda lib, a: _la(lib, "norm")(a, "fro") + _la(lib, "norm")(a, "nuc"),
        ((3, 4),),
    ),
    "linalg_cond": Line(
        lambda lib, a: _la(lib, "cond")(a) + _la(lib, "cond")(a, -2), ((2, 3, 3),)
    ),
    # torch 2.13's linalg.cond for the other orders cannot be differentiated (its
    # inverse is modified in place: "output 0 of LinalgInvEx ... is at version 1").
    "linalg_cond.p_str": Line(
        lambda lib, a: _la(lib, "cond")(a, "fro") + _la(lib, "cond")(a, 1),
        ((3, 3),),
        compare=False,
    ),
    "linalg_matrix_rank.atol_rtol_float": Line(
        lambda lib, a: a * _la(lib, "matrix_rank")(a[:, :1] * a[:1]).to(a.dtype)
        + _la(lib, "matrix_rank")(a, hermitian=True).to(a.dtype),
        ((3, 3),),
    ),
    "linalg_matrix_power": Line(
        lambda lib, a: _la(lib, "matrix_power")(a, 3)
        + _la(lib, "matrix_power")(a + 3.0 * _eye(lib, 3), -2)
        + _la(lib, "matrix_power")(a, 0),
        ((2, 3, 3),),
        complex=True,
    ),
    "matrix_power": Line(
        lambda lib, a: lib.matrix_power(a, 2) + a.matrix_power(1), ((3, 3),)
    ),
    "matrix_exp": Line(lambda lib, a: lib.matrix_exp(a) + a.matrix_exp(), ((3, 3),)),
    "cross": Line(
        lambda lib, a, b: lib.cross(a, b, dim=1) + a.cross(b, 1), ((2, 3), (2, 3))
    ),
    "linalg_multi_dot": Line(
        lambda lib, a, b, c: _la(lib, "multi_dot")([a, b, c])
        + _la(lib, "multi_dot")([a[0], b, c, a[:, 1]]),
        ((2, 3), (3, 4), (4, 2)),
    ),
    "linalg_vander": Line(
        lambda lib, a: _la(lib, "vander")(a) + _la(lib, "vander")(a, N=3).sum(),
        ((2, 3),),
        complex=True,
    ),
    "linalg_tensorinv": Line(
        lambda lib, a: _la(lib, "tensorinv")(a, ind=1), ((4, 2, 2),)
    ),
    "linalg_tensorsolve": Line(
        lambda lib, a, b: _la(lib, "tensorsolve")(a, b), ((2, 3, 6), (2, 3))
    ),
    "linalg_lstsq": Line(
        lambda lib, a, b: _la(lib, "lstsq")(a, b).solution
        + _la(lib, "lstsq")(a, b, driver="gelsd").residuals.sum()
        + _la(lib, "lstsq")(a, b[..., 0], driver="gels").solution.unsqueeze(-1),
        ((2, 5, 3), (2, 5, 2)),
        complex=True,
    ),
    "linalg_lu_factor_ex": Line(
        lambda lib, a: _la(lib, "lu_factor_ex")(a).LU, ((2, 3, 3),), complex=True
    ),
    "linalg_lu": Line(
        lambda lib, a: (lambda p, l, u: p @ l + u)(*_la(lib, "lu")(a)),
        ((2, 3, 3),),
        complex=True,
    ),
    "linalg_lu_solve": Line(
        lambda lib, a, b: _lu_solves(lib, a, b), ((2, 3, 3), (2, 3, 2)), complex=True
    ),
    "linalg_lu_factor": Line(
        lambda lib, a: _la(lib, "lu_factor")(a).LU * 2.0, ((3, 3),), complex=True
    ),
    "cholesky": Line(
        lambda lib, a: _quiet(
            lambda: lib.cholesky(_spd(lib, a)) + _spd(lib, a).cholesky(True)
        ),
        ((3, 3),),
        forward=False,  # PyTorch's entry has no forward formula
    ),
    "linalg_householder_product": Line(
        lambda lib, a, t: _la(lib, "householder_product")(a, t),
        ((2, 4, 3), (2, 2)),
        complex=True,
    ),
    "linalg_matmul": Line(
        lambda lib, a, b: _la(lib, "matmul")(a, b), ((2, 2, 3), (3, 2)), complex=True
    ),
    "linalg_vecdot": Line(
        lambda lib, a, b: _la(lib, "vecdot")(a, b)
        + _la(lib, "vecdot")(a, b, dim=0).sum(),
        ((2, 3), (2, 3)),
        complex=True,
    ),
    "linalg_diagonal": Line(
        lambda lib, a: _la(lib, "diagonal")(a) * 2.0
        + _la(lib, "diagonal")(a, offset=1, dim1=0, dim2=2).sum(),
        ((3, 2, 3),),
        complex=True,
    ),
    "addmv": Line(
        lambda lib, a, m, v: lib.addmv(a, m, v) + a.addmv(m, v, beta=0.5, alpha=-2.0),
        ((2,), (2, 3), (3,)),
        complex=True,
    ),
    "addmv_": Line(
        lambda lib, a, m, v: (a * 1.0).addmv_(m, v, beta=2.0, alpha=0.5) * a,
        ((2,), (2, 3), (3,)),
    ),
    "addr": Line(
        lambda lib, a, u, v: lib.addr(a, u, v) + a.addr(u, v, beta=-1.0, alpha=3.0),
        ((3, 2), (3,), (2,)),
        complex=True,
    ),
    "addr_": Line(
        lambda lib, a, u, v: (a * 1.0).addr_(u, v, beta=0.5) * a, ((3, 2), (3,), (2,))
    ),
    "addbmm": Line(
        lambda lib, a, b, c: lib.addbmm(a, b, c) + a.addbmm(b, c, beta=0.5, alpha=-2.0),
        ((2, 4), (3, 2, 3), (3, 3, 4)),
        complex=True,
    ),
    "addbmm_": Line(
        lambda lib, a, b, c: (a * 1.0).addbmm_(b, c, alpha=2.0) * a,
        ((2, 4), (3, 2, 3), (3, 3, 4)),
    ),
    "baddbmm": Line(
        lambda lib, a, b, c: lib.baddbmm(a, b, c)
        + a.baddbmm(b, c, beta=2.0, alpha=0.5),
        ((2, 1, 4), (2, 3, 2), (2, 2, 4)),
        complex=True,
    ),
    "baddbmm_": Line(
        lambda lib, a, b, c: (a * 1.0).baddbmm_(b, c, beta=-1.0) * a,
        ((2, 3, 4), (2, 3, 2), (2, 2, 4)),
    ),
    "norm.ScalarOpt_dtype": Line(
        lambda lib, a: _norm_dtype(lib, "norm.ScalarOpt_dtype", a, 3) * a
        + _norm_dtype(lib, "norm.ScalarOpt_dtype", a, None),
        ((2, 3),),
    ),
    "norm.ScalarOpt_dim_dtype": Line(
        lambda lib, a: _norm_dtype(lib, "norm.ScalarOpt_dim_dtype", a, 1.5, [1], True)
        * a,
        ((2, 3),),
    ),
    "renorm": Line(
        lambda lib, a: lib.renorm(a, 2, 0, 1.0) + a.renorm(1, 1, 2.0),
        ((3, 4),),
        complex=True,
    ),
    "renorm_": Line(lambda lib, a: (a * 1.0).renorm_(3, -1, 1.5) * a, ((3, 4),)),
    # A factor with a real diagonal (LAPACK's potri reads a complex one as torch does
    # not document).
    "cholesky_inverse": Line(
        lambda lib, a: lib.cholesky_inverse(a.tril(-1) + 3.0 * _eye(lib, 3))
        + (a.triu(1) + 3.0 * _eye(lib, 3)).cholesky_inverse(True),
        ((2, 3, 3),),
        complex=True,
    ),
    "cholesky_solve": Line(
        lambda lib, a, b: lib.cholesky_solve(b, a.tril() + 3.0 * _eye(lib, 3))
        + b.cholesky_solve(a.triu() + 3.0 * _eye(lib, 3), True),
        ((2, 3, 3), (2, 3, 2)),
        complex=True,
    ),
    "triangular_solve": Line(
        lambda lib, a, b: _triangular_solves(lib, a + 3.0 * _eye(lib, 3), b),
        ((2, 3, 3), (2, 3, 2)),
        complex=True,
    ),
    "lu_unpack": Line(
        lambda lib, a: (lambda p, l, u: p @ l.sum(-1, True) * u.sum(-2, True))(
            *lib.lu_unpack(a, lib.tensor([[2, 3, 3], [1, 3, 3]], dtype=lib.int32))
        )
        + (lambda p, l, u: l.sum() + u.sum())(
            *lib.lu_unpack(a.mT, lib.tensor([[3, 2, 3], [2, 2, 4]], dtype=lib.int32))
        ),
        ((2, 3, 4),),
        complex=True,
    ),
    # geqrf has no derivative (PyTorch's is not_implemented too): its values, of a
    # constant, scale the input.
    "geqrf": Line(
        lambda lib, a: (lambda r, tau: a * r + tau.sum())(
            *lib.tensor(np.linspace(-2.0, 2.0, 12).reshape(4, 3) ** 2).geqrf()
        ),
        ((4, 3),),
    ),
    "ormqr": Line(
        lambda lib, a, t, c: lib.ormqr(a, t, c)
        + a.ormqr(t, c, transpose=True)
        + lib.ormqr(a, t, c.mT, left=False).mT
        + lib.ormqr(a, t, c.mT, left=False, transpose=True).mT,
        ((4, 3), (3,), (4, 2)),
        complex=True,
        forward=False,  # PyTorch's entry has no forward formula
    ),
}
