"""Composites of the reduction family: var, std (and their _mean forms), any, all,
value-selecting backwards, argsort, msort, nanmean, diff, nonzero_numpy, argwhere,
quantile and nanquantile."""

from __future__ import annotations

import numpy as np

from ..dtypes import dtype, int64, spelling
from ..generated import ops  # functions read at call time (the generated tie)
from ..numpy_kernels import _wrap_dim
from ..tensor import Tensor
from ._common import _zeros

__all__ = [
    "var",
    "var_dim",
    "std",
    "std_dim",
    "any_elements",
    "all_elements",
    "value_selecting_reduction_backward",
    "var_mean",
    "var_mean_dim",
    "std_mean",
    "std_mean_dim",
    "argsort",
    "argsort_stable",
    "msort",
    "nanmean",
    "diff",
    "nonzero_numpy",
    "argwhere",
    "quantile",
    "quantile_scalar",
    "nanquantile",
    "nanquantile_scalar",
]


def var(self: Tensor, unbiased: bool = True) -> Tensor:
    """var(unbiased) is var.correction with correction 1 (unbiased) or 0."""
    return self.var(None, correction=1 if unbiased else 0)


def var_dim(
    self: Tensor,
    dim: tuple[int, ...] | None,
    unbiased: bool = True,
    keepdim: bool = False,
) -> Tensor:
    return self.var(dim, correction=1 if unbiased else 0, keepdim=keepdim)


def std(self: Tensor, unbiased: bool = True) -> Tensor:
    """std(unbiased) is std.correction with correction 1 (unbiased) or 0."""
    return self.std(None, correction=1 if unbiased else 0)


def std_dim(
    self: Tensor,
    dim: tuple[int, ...] | None,
    unbiased: bool = True,
    keepdim: bool = False,
) -> Tensor:
    return self.std(dim, correction=1 if unbiased else 0, keepdim=keepdim)


def value_selecting_reduction_backward(
    grad: Tensor, dim: int, indices: Tensor, sizes: tuple[int, ...], keepdim: bool
) -> Tensor:
    """The gradient of max.dim, min.dim, ...: each slice's gradient goes to the one
    position `indices` selected."""
    if not keepdim and len(sizes) > 0:
        grad = grad.unsqueeze(dim)
        indices = indices.unsqueeze(dim)
    return _zeros(sizes, grad).scatter(dim, indices, grad)


def any_elements(self: Tensor) -> Tensor:
    """any(): whether any element is non-zero (any.dims over every dim)."""
    return self.any(None)


def all_elements(self: Tensor) -> Tensor:
    """all(): whether every element is non-zero (all.dims over every dim)."""
    return self.all(None)


def var_mean(self: Tensor, unbiased: bool = True) -> tuple[Tensor, Tensor]:
    """var_mean(unbiased): var_mean.correction with correction 1 (unbiased) or 0."""
    return ops.var_mean(self, None, correction=1 if unbiased else 0)


def var_mean_dim(
    self: Tensor,
    dim: tuple[int, ...] | None,
    unbiased: bool = True,
    keepdim: bool = False,
) -> tuple[Tensor, Tensor]:
    return ops.var_mean(self, dim, correction=1 if unbiased else 0, keepdim=keepdim)


def std_mean(self: Tensor, unbiased: bool = True) -> tuple[Tensor, Tensor]:
    """std_mean(unbiased): std_mean.correction with correction 1 (unbiased) or 0."""
    return ops.std_mean(self, None, correction=1 if unbiased else 0)


def std_mean_dim(
    self: Tensor,
    dim: tuple[int, ...] | None,
    unbiased: bool = True,
    keepdim: bool = False,
) -> tuple[Tensor, Tensor]:
    return ops.std_mean(self, dim, correction=1 if unbiased else 0, keepdim=keepdim)


def argsort(self: Tensor, dim: int = -1, descending: bool = False) -> Tensor:
    """The indices that sort self along dim (sort's second output)."""
    return self.sort(dim, descending)[1]


def argsort_stable(
    self: Tensor, stable: bool, dim: int = -1, descending: bool = False
) -> Tensor:
    return self.sort(stable=stable, dim=dim, descending=descending)[1]


def msort(self: Tensor) -> Tensor:
    """self sorted along its first dimension."""
    return self.sort(0)[0]


def nanmean(
    self: Tensor,
    dim: tuple[int, ...] | None = None,
    keepdim: bool = False,
    dtype: dtype | None = None,
) -> Tensor:
    """The mean over dim of the values that are not NaN."""
    if not (self.is_floating_point() or self.is_complex()):
        raise RuntimeError(
            "nanmean(): expected input to have floating point or complex dtype but got "
            f"{spelling(self.dtype).scalar_type}"
        )
    count = self.isnan().logical_not().sum(dim, keepdim)
    return ops.nansum(self, dim, keepdim, dtype=dtype).div(count)


def diff(
    self: Tensor,
    n: int = 1,
    dim: int = -1,
    prepend: Tensor | None = None,
    append: Tensor | None = None,
) -> Tensor:
    """The n-th forward difference along dim, of self with prepend and append joined
    on each side (for bool, whether neighbours differ)."""
    if self.dim() == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    pieces = [t for t in (prepend, self, append) if t is not None]
    result = ops.cat(pieces, dim) if len(pieces) > 1 else self
    for _ in range(n):
        length = result.shape[dim]
        if length == 0:
            break
        later = result.narrow(dim, 1, length - 1)
        earlier = result.narrow(dim, 0, length - 1)
        result = (
            later.logical_xor(earlier)
            if result.dtype.numpy.kind == "b"
            else later - earlier
        )
    return result


def nonzero_numpy(self: Tensor) -> list[Tensor]:
    """The indices of the nonzero elements, one tensor per dimension (a 0-d tensor
    counts as one element of a vector)."""
    rows = self.unsqueeze(0) if self.dim() == 0 else self
    return list(ops.nonzero(rows).unbind(1))


def argwhere(self: Tensor) -> Tensor:
    """nonzero's indices, one row per nonzero element."""
    return ops.nonzero(self)


_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _check_quantile(
    self: Tensor, q: Tensor | float, interpolation: str, name: str
) -> None:
    """PyTorch's checks of quantile's arguments, in its order."""
    if self.numel() == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    if self.dtype.numpy.kind != "f":
        raise RuntimeError(
            f"{name}() input tensor must be either float or double dtype"
        )
    if isinstance(q, Tensor):
        if q.dtype != self.dtype:
            raise RuntimeError(
                f"{name}() q tensor must be same dtype as the input tensor"
            )
        if q.dim() > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
        if bool(((q < 0) | (q > 1)).any().item()):
            raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
    elif not 0 <= q <= 1:
        raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {q}")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(
            f"{name}() interpolation must be one of linear, lower, higher, midpoint or "
            f"nearest, but got {interpolation}"
        )


def _quantile_ranks(sorted_: Tensor, q: Tensor, ignore_nan: bool) -> Tensor:
    """Each q's position in the sorted rows (last dim): among the non-NaN values for
    nanquantile; at the last (a NaN) in a row with NaN for quantile."""
    last = sorted_.shape[-1] - 1
    if ignore_nan:
        count = sorted_.isnan().logical_not().sum(-1, True)
        among_valid: Tensor = q * (count - 1)
        return among_valid.masked_fill(among_valid < 0, 0)
    ranks: Tensor = (q * last).expand(list(sorted_.shape[:-1]) + [q.shape[0]])
    return ranks.masked_fill(sorted_.isnan().any(-1, True), last)


def _quantile(
    self: Tensor,
    q: Tensor | float,
    dim: int | None,
    keepdim: bool,
    interpolation: str,
    ignore_nan: bool,
) -> Tensor:
    """The q-th quantiles over dim (all elements when None), the rows sorted and read
    at rank q * (n - 1), between two values as `interpolation` says."""
    _check_quantile(self, q, interpolation, "quantile")  # nanquantile's words too
    scalar_q = not isinstance(q, Tensor) or q.dim() == 0
    if not isinstance(q, Tensor):
        q = Tensor(np.asarray(q, self.dtype.numpy))
    qs = q.reshape(-1)
    rows = (
        self.reshape(-1)
        if dim is None or self.dim() == 0
        else ops.movedim(self, dim, -1)
    )
    sorted_ = rows.sort(-1).values
    ranks = _quantile_ranks(sorted_, qs, ignore_nan)
    if interpolation in ("lower", "higher", "nearest"):
        rounded = {"lower": ranks.floor, "higher": ranks.ceil, "nearest": ranks.round}
        result = sorted_.gather(-1, rounded[interpolation]().to(int64))
    else:
        below = ranks.floor()
        above = sorted_.gather(-1, ranks.ceil().to(int64))
        weights = below * 0 + 0.5 if interpolation == "midpoint" else ranks - below
        result = sorted_.gather(-1, below.to(int64)).lerp(above, weights)
    result = ops.movedim(result, -1, 0)  # q's dimension first, as PyTorch's
    if keepdim:
        if dim is None or self.dim() == 0:
            result = result.reshape([qs.shape[0]] + [1] * self.dim())
        else:
            result = result.unsqueeze(_wrap_dim(dim, self.dim()) + 1)
    return result.squeeze(0) if scalar_q else result


def quantile(
    self: Tensor,
    q: Tensor,
    dim: int | None = None,
    keepdim: bool = False,
    interpolation: str = "linear",
) -> Tensor:
    """The q-th quantiles of self over dim (a NaN makes its row's quantile NaN)."""
    return _quantile(self, q, dim, keepdim, interpolation, False)


def quantile_scalar(
    self: Tensor,
    q: float,
    dim: int | None = None,
    keepdim: bool = False,
    interpolation: str = "linear",
) -> Tensor:
    return _quantile(self, q, dim, keepdim, interpolation, False)


def nanquantile(
    self: Tensor,
    q: Tensor,
    dim: int | None = None,
    keepdim: bool = False,
    interpolation: str = "linear",
) -> Tensor:
    """The q-th quantiles of self's non-NaN values over dim."""
    return _quantile(self, q, dim, keepdim, interpolation, True)


def nanquantile_scalar(
    self: Tensor,
    q: float,
    dim: int | None = None,
    keepdim: bool = False,
    interpolation: str = "linear",
) -> Tensor:
    return _quantile(self, q, dim, keepdim, interpolation, True)
