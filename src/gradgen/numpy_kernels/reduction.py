"""Reduction kernels: sums, means, extrema, variance, scans, comparisons of whole tensors, sorting."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..dtypes import get_default_dtype
from ..dtypes import scalar_type_name as _scalar_type_name
from ._common import _along, _check_broadcast, _reduction_dims, _silently, _wrap_dim

__all__ = [
    "reduce_sum",
    "reduce_mean",
    "reduce_prod",
    "max_all",
    "max_dim",
    "amax",
    "argmax",
    "logsumexp",
    "reduce_var",
    "cumsum",
    "cumprod",
    "logical_reduction",
    "allclose",
    "tensor_equal",
    "sort",
    "topk",
]


def _reduced_dtype(self: np.ndarray, dtype: Any) -> Any:
    """PyTorch's sum dtype: as given, else int64 for bool and integer input."""
    if dtype is not None:
        return dtype.numpy
    return np.int64 if self.dtype.kind in "biu" else self.dtype


def _dims(dim: Sequence[int] | None, ndim: int) -> tuple[int, ...] | None:
    if dim is None or len(dim) == 0:
        return None  # all dimensions, as PyTorch's empty/None dim list
    wrapped = tuple(_wrap_dim(d, ndim) for d in dim)
    if len(set(wrapped)) != len(wrapped):
        raise RuntimeError(
            f"dim {wrapped[0]} appears multiple times in the list of dims"
        )
    return wrapped if ndim else None


def reduce_sum(
    self: np.ndarray, dim: Sequence[int] | None, keepdim: bool, dtype: Any
) -> np.ndarray:
    axes = _dims(dim, self.ndim)
    # np.sum on an ndarray is this reduction behind two Python-level wrappers.
    return np.add.reduce(self, axis=axes, dtype=_reduced_dtype(self, dtype), keepdims=keepdim)  # type: ignore[call-overload]  # numpy's stubs miss this valid call


def reduce_mean(
    self: np.ndarray, dim: Sequence[int] | None, keepdim: bool, dtype: Any
) -> np.ndarray:
    if dtype is None and self.dtype.kind not in "fc":
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating "
            f"point or complex dtype. Got: {_scalar_type_name(self)}"
        )
    axes = _dims(dim, self.ndim)
    target = self.dtype if dtype is None else dtype.numpy
    count = self.size if axes is None else math.prod(self.shape[a] for a in axes)
    # np.mean's arithmetic (a sum in `target`, divided by the count), without its
    # Python-level wrappers; an empty reduction is nan, as PyTorch's.
    total = np.add.reduce(self, axis=axes, dtype=target, keepdims=keepdim)  # type: ignore[call-overload]  # numpy's stubs miss this valid call
    if count:
        return np.true_divide(total, count, dtype=target)
    with np.errstate(invalid="ignore"):
        return np.true_divide(total, 0.0).astype(target)


@_silently
def reduce_prod(
    self: np.ndarray, dim: int | None, keepdim: bool, dtype: Any
) -> np.ndarray:
    """prod over all elements (dim None) or one dim; int and bool give int64."""
    axis = None
    if dim is not None:
        wrapped = _wrap_dim(dim, self.ndim)
        axis = wrapped if self.ndim else None
    return np.prod(self, axis=axis, keepdims=keepdim, dtype=_reduced_dtype(self, dtype))


def max_all(self: np.ndarray, name: str) -> np.ndarray:
    """max()/min() of every element: NaN propagates; an empty input is an error."""
    if self.dtype.kind == "c":
        raise NotImplementedError(
            f"\"{name}_all\" not implemented for '{_scalar_type_name(self)}'"
        )
    if self.size == 0:
        raise RuntimeError(
            f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
            "Specify the reduction dim with the 'dim' argument."
        )
    return np.max(self) if name == "max" else np.min(self)


def _check_reduced_size(self: np.ndarray, dims: Sequence[int], name: str) -> None:
    for d in dims:
        if self.shape[d] == 0:
            raise IndexError(
                f"{name}(): Expected reduction dim {d} to have non-zero size."
            )


def _arg_extreme(self: np.ndarray, axis: int, name: str) -> np.ndarray:
    """The index of the first max (or min) along `axis`; NaN counts as the extreme and
    the first NaN wins, as in PyTorch."""
    return (
        np.argmax(self, axis=axis)
        if name in ("max", "argmax")
        else np.argmin(self, axis=axis)
    )


def max_dim(
    self: np.ndarray, dim: int, keepdim: bool, name: str
) -> tuple[np.ndarray, np.ndarray]:
    """max.dim / min.dim: (values, indices), ties going to the first index."""
    if self.dtype.kind == "c":
        raise RuntimeError(f"{name}(): does not support complex input")
    axis = _wrap_dim(dim, self.ndim)
    if self.ndim == 0:
        return self.copy(), np.zeros((), np.int64)
    _check_reduced_size(self, (axis,), name)
    indices = np.expand_dims(_arg_extreme(self, axis, name), axis)
    values = np.take_along_axis(self, indices, axis=axis)
    if not keepdim:
        values, indices = values.squeeze(axis), indices.squeeze(axis)
    return values, indices.astype(np.int64)


def amax(self: np.ndarray, dim: Sequence[int], keepdim: bool, name: str) -> np.ndarray:
    """amax/amin over `dim` (every dim when empty); NaN propagates."""
    if self.dtype.kind == "c":
        raise NotImplementedError(
            f"\"{name[1:]}_values_cpu\" not implemented for '{_scalar_type_name(self)}'"
        )
    dims = _reduction_dims(dim, self.ndim)
    if self.size == 0 and len(dim) == 0:
        raise RuntimeError(
            f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
            "Specify the reduction dim with the 'dim' argument."
        )
    _check_reduced_size(self, dims, name)
    reduce = np.max if name == "amax" else np.min
    return reduce(self, axis=dims if self.ndim else None, keepdims=keepdim)


def argmax(self: np.ndarray, dim: int | None, keepdim: bool, name: str) -> np.ndarray:
    """The int64 index of the first max (min) of all elements (flattened) or along dim."""
    if self.dtype.kind == "c":
        raise RuntimeError(f"{name}(): does not support complex input")
    if self.dtype.kind == "b":
        raise RuntimeError(f"{name}(): does not support bool input")
    if dim is None:
        if self.size == 0:
            raise IndexError(
                f"{name}(): Expected reduction dim to be specified for input.numel() == 0."
            )
        index = np.asarray(_arg_extreme(self.reshape(-1), 0, name), np.int64)
        return index.reshape((1,) * self.ndim) if keepdim else index
    axis = _wrap_dim(dim, self.ndim)
    if self.ndim == 0:
        return np.zeros((), np.int64)
    _check_reduced_size(self, (axis,), name)
    index = _arg_extreme(self, axis, name).astype(np.int64)
    return np.expand_dims(index, axis) if keepdim else index


def _as_float(self: np.ndarray) -> np.ndarray:
    """Integral and bool input of a floating operator, in the default float dtype."""
    if self.dtype.kind in "fc":
        return self
    return self.astype(get_default_dtype().numpy)


@_silently
def logsumexp(self: np.ndarray, dim: Sequence[int], keepdim: bool) -> np.ndarray:
    """log(sum(exp(self))) over `dim`, shifted by the max for stability (PyTorch's
    algorithm: an infinite max is not subtracted, so -inf rows give -inf)."""
    self = _as_float(self)
    if self.ndim == 0:
        _reduction_dims(dim, 0)
        return self.copy()
    if len(dim) == 0:
        # PyTorch reduces nothing and then fails to write the kept-dim result.
        raise RuntimeError(
            f"output with shape [] doesn't match the broadcast shape {[1] * self.ndim}"
        )
    dims = _reduction_dims(dim, self.ndim)
    if self.size == 0:
        maxes = np.zeros(
            [1 if d in dims else n for d, n in enumerate(self.shape)], self.dtype
        )
    else:
        maxes = np.max(self.real, axis=dims, keepdims=True).astype(self.dtype)
        maxes[np.isinf(maxes)] = 0
    result = np.log(np.sum(np.exp(self - maxes), axis=dims, keepdims=True)) + maxes
    return result if keepdim else result.squeeze(dims)


@_silently
def reduce_var(
    self: np.ndarray,
    dim: Sequence[int] | None,
    correction: float | None,
    keepdim: bool,
    name: str,
) -> np.ndarray:
    """var/std with `correction` (default 1) over `dim` (None or [] for all); the result
    is real for complex input. Degrees of freedom <= 0 warn and divide by zero."""
    if self.dtype.kind not in "fc":
        raise RuntimeError("std and var only support floating point and complex dtypes")
    correction = 1 if correction is None else correction
    dims = _reduction_dims(dim, self.ndim)
    count = int(np.prod([self.shape[d] for d in dims]))
    dof = max(0, count - correction)
    if dof <= 0:
        warnings.warn(
            f"{name}(): degrees of freedom is <= 0. Correction should be strictly less "
            "than the reduction factor (input numel divided by output numel).",
            UserWarning,
            stacklevel=2,
        )
    axis = dims if self.ndim else None
    centred = self - np.mean(self, axis=axis, keepdims=True)
    squares = (
        (centred * centred.conj()).real if self.dtype.kind == "c" else centred * centred
    )
    result = np.sum(squares, axis=axis, keepdims=keepdim) / np.asarray(
        dof, squares.dtype
    )
    return np.sqrt(result) if name == "std" else result


def _scan(self: np.ndarray, dim: int, dtype: Any, scan: Any) -> np.ndarray:
    target = _reduced_dtype(self, dtype)
    axis = _wrap_dim(dim, self.ndim)
    if self.ndim == 0:
        return self.astype(target)
    return scan(self, axis=axis, dtype=target)


def cumsum(self: np.ndarray, dim: int, dtype: Any) -> np.ndarray:
    """Cumulative sum along dim; int and bool give int64 unless `dtype` says."""
    return _scan(self, dim, dtype, np.cumsum)


@_silently
def cumprod(self: np.ndarray, dim: int, dtype: Any) -> np.ndarray:
    """Cumulative product along dim; int and bool give int64 unless `dtype` says."""
    return _scan(self, dim, dtype, np.cumprod)


def logical_reduction(
    self: np.ndarray, dim: int | Sequence[int] | None, keepdim: bool, name: str
) -> np.ndarray:
    """any/all ('any' or 'all') over every element (dim None), one dim, or a list of
    dims (an empty list reduces nothing); a bool result."""
    reduce = np.any if name == "any" else np.all
    if dim is None:
        axes: tuple[int, ...] = tuple(range(self.ndim))
    elif isinstance(dim, int):
        axes = (_wrap_dim(dim, self.ndim),) if self.ndim else ()
    else:
        axes = _reduction_dims(dim, self.ndim) if len(dim) else ()
        if not self.ndim:
            axes = ()
    return np.asarray(reduce(self, axis=axes, keepdims=keepdim), np.bool_)


def allclose(
    self: np.ndarray, other: np.ndarray, rtol: float, atol: float, equal_nan: bool
) -> bool:
    """Whether |self - other| <= atol + rtol * |other| everywhere (broadcast); both
    tensors must have the same dtype."""
    if self.dtype != other.dtype:
        raise RuntimeError(
            f"{_scalar_type_name(self)} did not match {_scalar_type_name(other)}"
        )
    for name, tolerance in (("rtol", rtol), ("atol", atol)):
        if tolerance < 0:
            raise RuntimeError(
                f"{name} must be greater than or equal to zero, but got "
                f"{tolerance:g}"
            )
    _check_broadcast(self, other)
    if self.dtype.kind == "b":
        return bool(np.all(self == other))
    with np.errstate(all="ignore"):
        return bool(np.all(np.isclose(self, other, rtol, atol, equal_nan)))


def tensor_equal(self: np.ndarray, other: np.ndarray) -> bool:
    """Whether both tensors have the same shape and the same values (NaN is never
    equal)."""
    return self.shape == other.shape and bool(np.all(self == other))


def _stable_order(self: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """The indices that sort `self` along `axis`, ties in their original order and NaN
    counted as the largest value."""
    if not descending:
        return np.argsort(self, axis=axis, kind="stable")
    size = self.shape[axis]
    flipped = np.argsort(np.flip(self, axis), axis=axis, kind="stable")
    return np.flip(size - 1 - flipped, axis)


def sort(
    self: np.ndarray, dim: int, descending: bool, stable: bool | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(values, indices) sorted along `dim`; ties keep their order (always stable)."""
    if self.dtype.kind == "c":
        raise RuntimeError(" Sort does not support complex dtypes on CPU")
    axis = _wrap_dim(dim, self.ndim)
    if self.ndim == 0:
        return self.copy(), np.zeros((), np.int64)
    indices = _stable_order(self, axis, descending).astype(np.int64)
    return np.take_along_axis(self, indices, axis), indices


def topk(
    self: np.ndarray, k: int, dim: int, largest: bool, sorted: bool
) -> tuple[np.ndarray, np.ndarray]:
    """(values, indices) of the k largest (or smallest) along `dim`, sorted (also
    when `sorted` is False, which allows any order); NaN counts as the largest."""
    if self.dtype.kind == "c":
        raise RuntimeError(" topk does not support complex dtypes on CPU")
    if self.dtype.kind == "b":
        raise RuntimeError("topk does not support bool dtypes on CPU")
    axis = _wrap_dim(dim, self.ndim)
    size = self.shape[axis] if self.ndim else 1
    if not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")
    if self.ndim == 0:
        return self.copy(), np.zeros((), np.int64)
    order = _stable_order(self, axis, largest).astype(np.int64)
    indices = np.ascontiguousarray(order[_along(axis, self.ndim, slice(0, k))])
    return np.take_along_axis(self, indices, axis), indices
