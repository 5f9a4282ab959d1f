"""Composites of torch.linalg (PyTorch's CompositeImplicitAutograd functions): the
public functions over the operators that carry the formulas (linalg_det over
_linalg_det, linalg_svd over _linalg_svd, ...), the norms, powers and products of
matrices, and the torch.* spellings (det, inverse, slogdet, logdet, svd, pinverse,
matrix_power, matrix_exp, cross)."""

from __future__ import annotations

import math
import warnings
from collections import namedtuple
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..dtypes import dtype as _dtype
from ..dtypes import scalar_type_name
from ..generated import operators
from ..generated import ops  # functions read at call time (the generated tie)
from ..grad_mode import is_grad_enabled
from ..numpy_kernels.linalg_decompositions import _lu_factor_errors
from ..tensor import Number, Tensor
from ._common import unbatched, whole_array

__all__ = [
    "linalg_inv",
    "inverse",
    "linalg_det",
    "det",
    "linalg_slogdet",
    "slogdet",
    "logdet",
    "linalg_solve_ex",
    "linalg_solve",
    "linalg_cholesky",
    "linalg_svd",
    "linalg_svdvals",
    "svd",
    "linalg_eigh",
    "linalg_eigvalsh",
    "linalg_eigvals",
    "linalg_pinv_atol_rtol_float",
    "linalg_pinv",
    "pinverse",
    "linalg_matrix_norm",
    "linalg_matrix_norm_str_ord",
    "linalg_norm",
    "linalg_norm_ord_str",
    "linalg_matrix_power",
    "matrix_power",
    "matrix_exp",
    "cross",
    "linalg_multi_dot",
    "linalg_cond",
    "linalg_matrix_rank_atol_rtol_float",
    "linalg_vander",
    "linalg_tensorinv",
    "linalg_tensorsolve",
    "linalg_lu_factor",
    "linalg_matmul",
    "linalg_vecdot",
    "linalg_diagonal",
]

# The named tuples of torch.return_types, for the composites' several outputs.
linalg_slogdet_return = namedtuple("linalg_slogdet", ["sign", "logabsdet"])  # type: ignore[name-match]
slogdet_return = namedtuple("slogdet", ["sign", "logabsdet"])  # type: ignore[name-match]
linalg_solve_ex_return = namedtuple("linalg_solve_ex", ["result", "info"])  # type: ignore[name-match]
linalg_svd_return = namedtuple("linalg_svd", ["U", "S", "Vh"])  # type: ignore[name-match]
svd_return = namedtuple("svd", ["U", "S", "V"])  # type: ignore[name-match]
linalg_lu_factor_return = namedtuple("linalg_lu_factor", ["LU", "pivots"])  # type: ignore[name-match]
linalg_eigh_return = namedtuple("linalg_eigh", ["eigenvalues", "eigenvectors"])  # type: ignore[name-match]


def _may_require_grad(A: Tensor) -> bool:
    """Whether a result computed from A may be differentiated (backward or forward):
    then the SVD and eigh compute their vectors, which their formulas need."""
    return (is_grad_enabled() and A.requires_grad) or A._fw_grad is not None


def _mH(A: Tensor) -> Tensor:  # noqa: N802  (PyTorch's name)
    return A.transpose(-2, -1).conj()


# --- inverse and determinants ------------------------------------------------------


def linalg_inv(A: Tensor) -> Tensor:
    """The inverse of (a batch of) square matrices; a LinAlgError when singular."""
    return operators.linalg_inv_ex.call(A, True)[0]  # type: ignore[no-any-return]


def inverse(self: Tensor) -> Tensor:
    """torch.inverse: linalg.inv."""
    return linalg_inv(self)


def linalg_det(A: Tensor) -> Tensor:
    """The determinant of (a batch of) square matrices."""
    return operators._linalg_det.call(A)[0]  # type: ignore[no-any-return]


def det(self: Tensor) -> Tensor:
    """torch.det: linalg.det."""
    return linalg_det(self)


def linalg_slogdet(A: Tensor) -> Any:
    """(sign, log|det|) of (a batch of) square matrices."""
    sign, logabsdet, _, _ = operators._linalg_slogdet.call(A)
    return linalg_slogdet_return(sign, logabsdet)


def slogdet(self: Tensor) -> Any:
    """torch.slogdet: linalg.slogdet, as torch.return_types.slogdet."""
    sign, logabsdet = linalg_slogdet(self)
    return slogdet_return(sign, logabsdet)


def logdet(self: Tensor) -> Tensor:
    """log(det): nan for a negative determinant of a real matrix, -inf when singular."""
    sign, logabsdet = linalg_slogdet(self)
    if self.is_complex():
        return sign.log() + logabsdet  # type: ignore[no-any-return]
    return ops.where(sign.eq(-1.0), math.nan, logabsdet)


# --- solves and factorisations ------------------------------------------------------


def linalg_solve_ex(
    A: Tensor, B: Tensor, left: bool = True, check_errors: bool = False
) -> Any:
    """(X, info) with AX = B (XA = B when not `left`)."""
    result, _, _, info = operators._linalg_solve_ex.call(A, B, left, check_errors)
    return linalg_solve_ex_return(result, info)


def linalg_solve(A: Tensor, B: Tensor, left: bool = True) -> Tensor:
    """X with AX = B (XA = B when not `left`); a LinAlgError when A is singular."""
    return operators._linalg_solve_ex.call(A, B, left, True)[0]  # type: ignore[no-any-return]


def linalg_cholesky(self: Tensor, upper: bool = False) -> Tensor:
    """L with A = L L^H (U = L^H when `upper`); a LinAlgError when A is not
    positive-definite."""
    return operators.linalg_cholesky_ex.call(self, upper, True)[0]  # type: ignore[no-any-return]


def linalg_svd(A: Tensor, full_matrices: bool = True, driver: str | None = None) -> Any:
    """(U, S, Vh) with A = U diag(S) Vh."""
    U, S, Vh = operators._linalg_svd.call(A, full_matrices, True, driver)
    return linalg_svd_return(U, S, Vh)


def linalg_svdvals(A: Tensor, driver: str | None = None) -> Tensor:
    """The singular values, descending (the vectors are computed only when a
    derivative may need them)."""
    compute_uv = _may_require_grad(A)
    return operators._linalg_svd.call(A, False, compute_uv, driver)[1]  # type: ignore[no-any-return]


def svd(self: Tensor, some: bool = True, compute_uv: bool = True) -> Any:
    """torch.svd: (U, S, V) with V = Vh^H (reduced when `some`); zeros for U and V
    when not `compute_uv`."""
    if self.dim() < 2:
        raise RuntimeError(
            "linalg.svd: input should have at least 2 dimensions, but has "
            f"{self.dim()} dimensions instead"
        )
    if compute_uv:
        U, S, Vh = linalg_svd(self, not some)
        return svd_return(U, S, _mH(Vh))
    S = linalg_svdvals(self)
    m, n = self.shape[-2], self.shape[-1]
    zeros_u = Tensor(np.zeros(self.shape[:-1] + (m,), self._data.dtype))
    zeros_v = Tensor(np.zeros(self.shape[:-2] + (n, n), self._data.dtype))
    return svd_return(zeros_u, S, zeros_v)


def linalg_eigh(self: Tensor, UPLO: str = "L") -> Any:  # noqa: N803
    """(eigenvalues ascending, eigenvectors as columns) of a Hermitian matrix."""
    L, V = operators._linalg_eigh.call(self, UPLO, True)
    return linalg_eigh_return(L, V)


def linalg_eigvalsh(self: Tensor, UPLO: str = "L") -> Tensor:  # noqa: N803
    """The eigenvalues of a Hermitian matrix, ascending."""
    compute_v = _may_require_grad(self)
    return operators._linalg_eigh.call(self, UPLO, compute_v)[0]  # type: ignore[no-any-return]


def linalg_eigvals(self: Tensor) -> Tensor:
    """The (complex) eigenvalues of a square matrix."""
    return operators.linalg_eig.call(self)[0]  # type: ignore[no-any-return]


# --- pseudo-inverse -------------------------------------------------------------------


def _real_tensor(A: Tensor, value: float | None) -> Tensor | None:
    if value is None:
        return None
    real = np.abs(np.zeros((), A._data.dtype)).dtype
    return Tensor(np.asarray(value, real))


def linalg_pinv_atol_rtol_float(
    self: Tensor,
    atol: float | None = None,
    rtol: float | None = None,
    hermitian: bool = False,
) -> Tensor:
    """The pseudo-inverse, singular values below max(atol, rtol * largest) dropped."""
    return operators.linalg_pinv_atol_rtol_tensor.call(  # type: ignore[no-any-return]
        self, _real_tensor(self, atol), _real_tensor(self, rtol), hermitian
    )


def linalg_pinv(self: Tensor, rcond: float, hermitian: bool = False) -> Tensor:
    """The pseudo-inverse with a relative cut-off `rcond` (no absolute one)."""
    return linalg_pinv_atol_rtol_float(self, 0.0, rcond, hermitian)


def pinverse(self: Tensor, rcond: float = 1e-15) -> Tensor:
    """torch.pinverse: linalg.pinv with `rcond`."""
    return linalg_pinv(self, rcond)


# --- norms ----------------------------------------------------------------------------


def _vector_norm(
    A: Tensor, ord: Number, dim: Sequence[int] | None, keepdim: bool, dtype: Any
) -> Tensor:
    return operators.linalg_vector_norm.call(A, ord, dim, keepdim, dtype)  # type: ignore[no-any-return]


def _check_matrix_norm_input(A: Tensor, dim: Sequence[int]) -> list[int]:
    if A.dim() < 2:
        raise RuntimeError(
            "linalg.matrix_norm: The input tensor A must have at least 2 dimensions."
        )
    if A._data.dtype.kind not in "fc":
        raise RuntimeError(
            "linalg.matrix_norm: Expected a floating point or complex tensor as input. "
            f"Got {scalar_type_name(A._data)}"
        )
    if len(dim) != 2:
        raise RuntimeError(
            f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(map(str, dim))}"
        )
    wrapped = [d + A.dim() if d < 0 else d for d in dim]
    if wrapped[0] == wrapped[1]:
        raise RuntimeError(
            f"linalg.matrix_norm: dims must be different. Got ({dim[0]}, {dim[1]})"
        )
    return wrapped


def _svdvals_last(A: Tensor, dim: list[int], dtype: Any) -> Tensor:
    """The singular values of the matrices spanning `dim`, those dims moved last."""
    order = [d for d in range(A.dim()) if d not in dim] + dim
    A_ = A.to(dtype) if dtype is not None else A
    return linalg_svdvals(A_.permute(order))


def _restore(result: Tensor, dim: list[int], ndim: int, keepdim: bool) -> Tensor:
    if not keepdim:
        return result
    for d in sorted(dim):
        result = result.unsqueeze(d)
    return result


def linalg_matrix_norm(
    self: Tensor,
    ord: Number,
    dim: Sequence[int] = (-2, -1),
    keepdim: bool = False,
    dtype: _dtype | None = None,
) -> Tensor:
    """The matrix norm of order `ord` (±1, ±2, ±inf) over the two dims `dim`."""
    wrapped = _check_matrix_norm_input(self, dim)
    order = float(ord.real if isinstance(ord, complex) else ord)
    if abs(order) not in (1.0, 2.0, math.inf):
        raise RuntimeError(
            "linalg.matrix_norm: Order " + _format_order(order) + " not supported."
        )

    def max_min(t: Tensor, d: int) -> Tensor:
        return ops.amax(t, [d], keepdim) if order > 0 else ops.amin(t, [d], keepdim)

    if abs(order) == 2.0:
        S = _svdvals_last(self, wrapped, dtype)
        result = ops.amax(S, [-1]) if order > 0 else ops.amin(S, [-1])
        return _restore(result, wrapped, self.dim(), keepdim)
    first, second = wrapped if abs(order) != math.inf else wrapped[::-1]
    if not keepdim and first < second:
        second -= 1
    return max_min(_vector_norm(self, 1.0, [first], keepdim, dtype), second)


def _format_order(order: float) -> str:
    if math.isinf(order):
        return "inf" if order > 0 else "-inf"
    return f"{order:g}"


def linalg_matrix_norm_str_ord(
    self: Tensor,
    ord: str = "fro",
    dim: Sequence[int] = (-2, -1),
    keepdim: bool = False,
    dtype: _dtype | None = None,
) -> Tensor:
    """The Frobenius ('fro') or nuclear ('nuc') norm over the two dims `dim`."""
    if ord not in ("fro", "nuc"):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    wrapped = _check_matrix_norm_input(self, dim)
    if ord == "fro":
        return _vector_norm(self, 2, wrapped, keepdim, dtype)
    S = _svdvals_last(self, wrapped, dtype)
    return _restore(S.sum(-1), wrapped, self.dim(), keepdim)


def linalg_norm(
    self: Tensor,
    ord: Number | None = None,
    dim: Sequence[int] | None = None,
    keepdim: bool = False,
    dtype: _dtype | None = None,
) -> Tensor:
    """A vector norm, or a matrix norm when `ord` is given with two dims (or a 2-D
    input without `dim`); the 2-norm of everything when neither is given."""
    if dim is not None:
        if len(dim) not in (1, 2):
            raise RuntimeError(
                "linalg.norm: If dim is specified, it must be of length 1 or 2. Got "
                f"{list(dim)}"
            )
    elif ord is not None and self.dim() not in (1, 2):
        raise RuntimeError(
            "linalg.norm: If dim is not specified but ord is, the input must be 1D or "
            f"2D. Got {self.dim()}D."
        )
    if ord is not None and (
        (dim is not None and len(dim) == 2) or (dim is None and self.dim() == 2)
    ):
        return linalg_matrix_norm(
            self, ord, (0, 1) if dim is None else dim, keepdim, dtype
        )
    return _vector_norm(self, 2 if ord is None else ord, dim, keepdim, dtype)


def linalg_norm_ord_str(
    self: Tensor,
    ord: str,
    dim: Sequence[int] | None = None,
    keepdim: bool = False,
    dtype: _dtype | None = None,
) -> Tensor:
    """The Frobenius or nuclear norm (of a 2-D input, or over two dims `dim`)."""
    if dim is not None:
        if len(dim) not in (1, 2):
            raise RuntimeError(
                "linalg.norm: If dim is specified, it mut be of length 1 or 2. Got "
                f"{list(dim)}"
            )
    elif self.dim() not in (1, 2):
        raise RuntimeError(
            "linalg.norm: If dim is not specified but ord is, the input must be 1D or "
            f"2D. Got {self.dim()}D."
        )
    return linalg_matrix_norm_str_ord(
        self, ord, (0, 1) if dim is None else dim, keepdim, dtype
    )


def linalg_cond(self: Tensor, p: Number | str | None = None) -> Tensor:
    """The condition number ||A|| ||A^{-1}|| for the norm `p` (the ratio of the
    extreme singular values for None and ±2)."""
    if self.dim() < 2:
        raise RuntimeError(
            "linalg.cond: The input tensor must have at least 2 dimensions."
        )
    if p is None or p in (2, -2):
        S = linalg_svdvals(self)
        first, last = S.narrow(-1, 0, 1), S.narrow(-1, S.shape[-1] - 1, 1)
        ratio = first / last if p != -2 else last / first
        return ratio.squeeze(-1)
    inverse_ = linalg_inv(self)
    if isinstance(p, str):
        return linalg_matrix_norm_str_ord(self, p) * linalg_matrix_norm_str_ord(
            inverse_, p
        )
    return linalg_matrix_norm(self, p) * linalg_matrix_norm(inverse_, p)


def linalg_matrix_rank_atol_rtol_float(
    self: Tensor,
    atol: float | None = None,
    rtol: float | None = None,
    hermitian: bool = False,
) -> Tensor:
    """The number of singular values (|eigenvalues| when `hermitian`) above
    max(atol, rtol * largest); int64, not differentiable."""
    if self.dim() < 2:
        raise RuntimeError(
            "torch.linalg.matrix_rank: The input tensor input must have at least 2 "
            "dimensions."
        )
    if not unbatched(self):  # inside vmap: by operators, each example its own
        return _batched_matrix_rank(self.detach(), atol, rtol, hermitian)
    data = self.detach()._data
    if hermitian:
        S = np.abs(np.linalg.eigvalsh(data))
    else:
        S = np.linalg.svd(data, compute_uv=False)
    real = S.dtype
    if rtol is None:
        rtol = (
            0.0
            if atol is not None and atol > 0
            else float(np.finfo(real).eps * max(self.shape[-2:]))
        )
    largest = np.max(S, axis=-1, keepdims=True) if S.shape[-1] else np.zeros(S.shape)
    cutoff = np.maximum(0.0 if atol is None else atol, rtol * largest)
    return Tensor(np.sum(S > cutoff, axis=-1).astype(np.int64))


def _batched_matrix_rank(
    self: Tensor, atol: float | None, rtol: float | None, hermitian: bool
) -> Tensor:
    """linalg_matrix_rank_atol_rtol_float by operators (for a BatchedTensor)."""
    S = linalg_eigvalsh(self).abs() if hermitian else linalg_svdvals(self)
    if not S.shape[-1]:
        return (S > 0).sum(-1)
    if rtol is None:
        eps = np.finfo(S._data.dtype).eps
        rtol = (
            0.0 if atol is not None and atol > 0 else float(eps * max(self.shape[-2:]))
        )
    cutoff = (S.amax(-1, keepdim=True) * rtol).clamp_min(0.0 if atol is None else atol)
    return (S > cutoff).sum(-1)


# --- powers, products, exponentials ------------------------------------------------------


def linalg_matrix_power(self: Tensor, n: int) -> Tensor:
    """A^n by repeated squaring (A^-n = (A^-1)^n; A^0 the identity)."""
    if self.dim() < 2:
        raise RuntimeError(
            "linalg.matrix_power: The input tensor A must have at least 2 dimensions."
        )
    if self.shape[-1] != self.shape[-2]:
        raise RuntimeError(
            "linalg.matrix_power: A must be batches of square matrices, but they are "
            f"{self.shape[-2]} by {self.shape[-1]} matrices"
        )
    if n == 0:
        eye = np.broadcast_to(
            np.eye(self.shape[-1], dtype=self._data.dtype), self.shape
        )
        # PyTorch copies the identity into a clone of A: A's graph, zero gradients.
        everywhere = Tensor(np.ones(self.shape, np.bool_))
        return ops.where(everywhere, Tensor(np.array(eye)), self)
    base = linalg_inv(self) if n < 0 else self
    n = abs(n)
    if n == 1:
        return base.clone()
    result: Tensor | None = None
    while n:
        if n & 1:
            result = base if result is None else result.matmul(base)
        n >>= 1
        if n:
            base = base.matmul(base)
    assert result is not None
    return result


def matrix_power(self: Tensor, n: int) -> Tensor:
    """torch.matrix_power: linalg.matrix_power."""
    return linalg_matrix_power(self, n)


def matrix_exp(self: Tensor) -> Tensor:
    """torch.matrix_exp: linalg.matrix_exp."""
    return operators.linalg_matrix_exp.call(self)  # type: ignore[no-any-return]


def cross(self: Tensor, other: Tensor, dim: int | None = None) -> Tensor:
    """torch.cross: linalg.cross along `dim`, by default the first dim of size 3
    (deprecated, with PyTorch's warning)."""
    if dim is None:
        warnings.warn(
            "Using torch.cross without specifying the dim arg is deprecated.\n"
            "Please either pass the dim explicitly or simply use torch.linalg.cross.\n"
            "The default value of dim will change to agree with that of "
            "linalg.cross in a future release.",
            UserWarning,
            stacklevel=3,
        )
        shape = np.broadcast_shapes(self.shape, other.shape)
        dim = next((d for d, size in enumerate(shape) if size == 3), -1)
    return operators.linalg_cross.call(self, other, dim)  # type: ignore[no-any-return]


def linalg_multi_dot(tensors: Sequence[Tensor]) -> Tensor:
    """The product of a chain of matrices (the first may be a row vector, the last a
    column vector), multiplied in the order with the fewest operations."""
    if len(tensors) < 2:
        raise RuntimeError(
            f"multi_dot(): expected at least 2 tensors but got {len(tensors)}"
        )
    first, last = tensors[0].dim(), tensors[-1].dim()
    for i, t in enumerate(tensors):
        allowed = (1, 2) if i in (0, len(tensors) - 1) else (2,)
        if t.dim() not in allowed:
            which = "first" if i == 0 else "last" if i == len(tensors) - 1 else None
            if which is None:
                raise RuntimeError(
                    f"multi_dot(): tensor {i} must be 2D but got {t.dim()}D"
                )
            raise RuntimeError(
                f"multi_dot(): the {which} tensor must be 1D or 2D but got {t.dim()}D"
            )
    chain = list(tensors)
    if first == 1:
        chain[0] = chain[0].unsqueeze(0)
    if last == 1:
        chain[-1] = chain[-1].unsqueeze(-1)
    result = _chain_product(chain, _chain_order(chain), 0, len(chain) - 1)
    if first == 1:
        result = result.squeeze(0)
    if last == 1:
        result = result.squeeze(-1)
    return result


def _chain_order(chain: list[Tensor]) -> list[list[int]]:
    """The split points of the cheapest parenthesisation (the textbook dynamic
    programme over the matrices' sizes)."""
    n = len(chain)
    sizes = [chain[0].shape[0]] + [t.shape[1] for t in chain]
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = -1
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + sizes[i] * sizes[k + 1] * sizes[j + 1]
                if cost[i][j] < 0 or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def _chain_product(
    chain: list[Tensor], split: list[list[int]], i: int, j: int
) -> Tensor:
    if i == j:
        return chain[i]
    k = split[i][j]
    return _chain_product(chain, split, i, k).mm(_chain_product(chain, split, k + 1, j))


def linalg_vander(x: Tensor, N: int | None = None) -> Tensor:
    """The Vandermonde matrix of x: columns x^0, x^1, ..., x^(N-1) (N = len(x))."""
    if x.dim() < 1:
        raise RuntimeError("linalg.vander: x must have at least 1 dimension")
    n = x.shape[-1] if N is None else N
    if n < 2:
        raise RuntimeError("linalg.vander: N must be greater than 1.")
    ones = x.unsqueeze(-1) * 0 + 1
    powers = x.unsqueeze(-1).expand(tuple(x.shape) + (n - 1,))
    return ops.cat([ones, powers], -1).cumprod(-1)


def linalg_tensorinv(self: Tensor, ind: int = 2) -> Tensor:
    """The inverse with respect to tensordot over the first `ind` dims."""
    if ind <= 0:
        raise RuntimeError(
            f"Expected a strictly positive integer for 'ind', but got {ind}"
        )
    outer, inner = self.shape[:ind], self.shape[ind:]
    rows = int(np.prod(outer))
    if rows != int(np.prod(inner)):
        raise RuntimeError(
            "Expected self to satisfy the requirement prod(self.shape[ind:]) == "
            "prod(self.shape[:ind]), but got "
            f"{int(np.prod(inner))} != {rows}"
        )
    inverse_ = linalg_inv(self.reshape((rows, rows)))
    return inverse_.reshape(tuple(inner) + tuple(outer))


def linalg_tensorsolve(
    self: Tensor, other: Tensor, dims: Sequence[int] | None = None
) -> Tensor:
    """X with tensordot(self, X, X.dim()) = other (dims of self moved last first)."""
    if dims is not None:
        wrapped = [d + self.dim() if d < 0 else d for d in dims]
        order = [d for d in range(self.dim()) if d not in wrapped] + wrapped
        self = self.permute(order)
    result_shape = self.shape[other.dim() :]
    rows = int(np.prod(other.shape))
    cols = int(np.prod(result_shape))
    if rows != cols:
        raise RuntimeError(
            "Expected self to satisfy the requirement "
            "prod(self.shape[other.ndim:]) == prod(self.shape[:other.ndim]), but got "
            f"{cols} != {rows}"
        )
    solution = linalg_solve(self.reshape((rows, cols)), other.reshape((rows,)))
    return solution.reshape(tuple(result_shape))


def linalg_lu_factor(A: Tensor, pivot: bool = True) -> Any:
    """(LU, pivots) of A; an error naming the first zero pivot of U."""
    LU, pivots, info = operators.linalg_lu_factor_ex.call(A, pivot, False)
    _lu_factor_errors(whole_array(info), "torch.linalg.lu_factor")
    return linalg_lu_factor_return(LU, pivots)


def linalg_matmul(self: Tensor, other: Tensor) -> Tensor:
    """linalg.matmul: matmul."""
    return ops.matmul(self, other)


def linalg_vecdot(x: Tensor, y: Tensor, dim: int = -1) -> Tensor:
    """The dot product along `dim`, conjugating x (inputs broadcast)."""
    if x.is_complex() or y.is_complex():
        return (x.conj() * y).sum(dim)
    return (x * y).sum(dim)


def linalg_diagonal(
    A: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1
) -> Tensor:
    """linalg.diagonal: diagonal, over the last two dims by default."""
    return A.diagonal(offset, dim1, dim2)
