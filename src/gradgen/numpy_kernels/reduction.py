"""Reduction kernels: sums, means, extrema, variance, scans, comparisons of whole
tensors, sorting and selection (kthvalue, median, mode), counting and binning
(searchsorted, bucketize, unique, nonzero, histc, bincount)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..dtypes import HAS_BFLOAT16, get_default_dtype
from ..dtypes import scalar_type_name as _scalar_type_name
from ._half import is_half, is_half_dtype, rounded
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
    "logcumsumexp",
    "cummax",
    "kthvalue",
    "median_all",
    "median_dim",
    "mode",
    "searchsorted",
    "bucketize",
    "unique_sorted",
    "unique_consecutive",
    "nonzero",
    "histc",
    "bincount",
    "count_nonzero",
    "aminmax",
    "nansum",
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


# Half precision is summed in float32 and rounded once, as PyTorch's reductions
# accumulate it (_half). (numpy's dtypes of builtin and ml_dtypes' types are
# singletons: told by identity)
_FLOAT16 = np.dtype("float16")
_BFLOAT16 = np.dtype("bfloat16") if HAS_BFLOAT16 else _FLOAT16


def reduce_sum(
    self: np.ndarray, dim: Sequence[int] | None, keepdim: bool, dtype: Any
) -> np.ndarray:
    axes = _dims(dim, self.ndim)
    reduced = _reduced_dtype(self, dtype)
    if reduced is _FLOAT16 or reduced is _BFLOAT16:
        total = np.add.reduce(self, axis=axes, dtype=np.float32, keepdims=keepdim)  # type: ignore[call-overload]
        return rounded(total, reduced)
    # np.sum on an ndarray is this reduction behind two Python-level wrappers.
    return np.add.reduce(self, axis=axes, dtype=reduced, keepdims=keepdim)  # type: ignore[call-overload]  # numpy's stubs miss this valid call


def reduce_mean(
    self: np.ndarray, dim: Sequence[int] | None, keepdim: bool, dtype: Any
) -> np.ndarray:
    if (
        dim is None
        and dtype is None
        and not keepdim
        and self.dtype in _MEAN_FAST
        and self.size
    ):
        # The mean of everything (a loss): the steps below, the division by numpy's
        # scalar arithmetic (np.true_divide's quotient in the sum's dtype).
        everything: Any = np.add.reduce(self, None)
        return everything / self.size
    if dtype is None and self.dtype.kind not in "fcV":  # V: ml_dtypes' bfloat16
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating "
            f"point or complex dtype. Got: {_scalar_type_name(self)}"
        )
    axes = _dims(dim, self.ndim)
    target = self.dtype if dtype is None else dtype.numpy
    count = self.size if axes is None else math.prod(self.shape[a] for a in axes)
    # np.mean's arithmetic (a sum in `target`, divided by the count), without its
    # Python-level wrappers; an empty reduction is nan, as PyTorch's.
    if (target is _FLOAT16 or target is _BFLOAT16) and count:
        total = np.add.reduce(self, axis=axes, dtype=np.float32, keepdims=keepdim)  # type: ignore[call-overload]
        return rounded(np.true_divide(total, count, dtype=np.float32), target)
    total = np.add.reduce(self, axis=axes, dtype=target, keepdims=keepdim)  # type: ignore[call-overload]  # numpy's stubs miss this valid call
    if count:
        return np.true_divide(total, count, dtype=target)
    with np.errstate(invalid="ignore"):
        return np.true_divide(total, 0.0).astype(target)


# The dtypes whose sum is a numpy scalar that divides as np.true_divide in the dtype.
_MEAN_FAST = frozenset({np.dtype(np.float32), np.dtype(np.float64)})


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
    if self.dtype.kind in "fcV":  # V: ml_dtypes' bfloat16
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
    exps = np.exp(self - maxes)
    if is_half(
        self
    ):  # PyTorch's steps in the half dtype; its sum accumulates in float32
        total = rounded(
            np.sum(exps, axis=dims, keepdims=True, dtype=np.float32), exps.dtype
        )
    else:
        total = np.sum(exps, axis=dims, keepdims=True)
    result = np.log(total) + maxes
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
    if self.dtype.kind not in "fcV":  # V: ml_dtypes' bfloat16
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
    if is_half(self):  # after the warning, which names the caller
        return rounded(
            _variance(self.astype(np.float32), dims, dof, keepdim, name), self.dtype
        )
    return _variance(self, dims, dof, keepdim, name)


def _variance(
    self: np.ndarray, dims: tuple[int, ...], dof: float, keepdim: bool, name: str
) -> np.ndarray:
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
    if is_half_dtype(target):  # in float32, each partial result rounded once
        return rounded(scan(self.astype(target), axis, np.float32), target)
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


# -- Scans --------------------------------------------------------------------------------


@_silently
def logcumsumexp(self: np.ndarray, dim: int) -> np.ndarray:
    """log(cumsum(exp(self))) along dim, accumulated as logaddexp (no overflow)."""
    if self.dtype.kind not in "fc":
        raise NotImplementedError(
            f"\"logcumsumexp_out_cpu\" not implemented for '{_scalar_type_name(self)}'"
        )
    axis = _wrap_dim(dim, self.ndim)
    if self.ndim == 0 or self.size == 0:
        return self.copy()
    if self.dtype.kind == "c":
        return np.log(np.cumsum(np.exp(self), axis=axis))
    return np.logaddexp.accumulate(self, axis=axis)


def cummax(self: np.ndarray, dim: int, name: str) -> tuple[np.ndarray, np.ndarray]:
    """cummax/cummin ('max' or 'min'): the running extreme along dim and the index of
    its last occurrence (a tie moves the index on; NaN, once met, stays)."""
    if self.dtype.kind == "c":
        raise NotImplementedError(
            f"\"cum{name}_cpu\" not implemented for '{_scalar_type_name(self)}'"
        )
    axis = _wrap_dim(dim, self.ndim)
    if self.ndim == 0:
        return self.copy(), np.zeros((), np.int64)
    ufunc = np.maximum if name == "max" else np.minimum
    values = ufunc.accumulate(self, axis=axis) if self.size else self.copy()
    reached = self == values
    if self.dtype.kind == "f":
        reached |= np.isnan(self)
    positions = np.arange(self.shape[axis]).reshape(
        [-1 if d == axis else 1 for d in range(self.ndim)]
    )
    indices = np.where(reached, positions, 0).astype(np.int64)
    if self.size:
        indices = np.maximum.accumulate(indices, axis=axis)
    return values, indices


# -- Selection: kthvalue, median, mode ----------------------------------------------------


def _select_sorted(
    self: np.ndarray, axis: int, position: np.ndarray | int, keepdim: bool
) -> tuple[np.ndarray, np.ndarray]:
    """(values, indices) of the element at `position` of the stable ascending order
    along axis (NaN last), keepdim as asked."""
    order = np.argsort(self, axis=axis, kind="stable")
    kept = [1 if d == axis else n for d, n in enumerate(self.shape)]
    where = np.broadcast_to(
        np.asarray(position, np.intp).reshape(kept if np.ndim(position) else ()), kept
    )
    indices = np.take_along_axis(order, where, axis).astype(np.int64)
    values = np.take_along_axis(self, indices, axis)
    if not keepdim:
        values, indices = values.squeeze(axis), indices.squeeze(axis)
    return values, indices


def _check_selectable(self: np.ndarray, dim: int, name: str) -> int:
    if self.dtype.kind == "c":
        raise RuntimeError(f"{name}() does not support complex input")
    axis = _wrap_dim(dim, self.ndim)
    if self.ndim and self.shape[axis] == 0:
        raise IndexError(
            f"{name}(): Expected reduction dim {axis} to have non-zero size."
        )
    return axis


def kthvalue(
    self: np.ndarray, k: int, dim: int, keepdim: bool
) -> tuple[np.ndarray, np.ndarray]:
    """The k-th smallest value along dim (k from 1) and its index."""
    axis = _wrap_dim(dim, self.ndim)
    size = self.shape[axis] if self.ndim else 1
    if not 1 <= k <= size:
        raise RuntimeError(
            f"kthvalue(): selected number k out of range for dimension {axis}"
        )
    if self.ndim == 0:
        return self.copy(), np.zeros((), np.int64)
    return _select_sorted(self, axis, k - 1, keepdim)


def _nan_aware_position(self: np.ndarray, axis: int, ignore_nan: bool) -> Any:
    """The position of the lower median in the sorted order along axis: of the
    non-NaN values for nanmedian; for median a NaN, when there is one, at its first
    place (NaN sorts last)."""
    nans = np.isnan(self).sum(axis=axis) if self.dtype.kind == "f" else 0
    size = self.shape[axis]
    if ignore_nan:
        return np.maximum(size - nans - 1, 0) // 2
    return np.where(nans > 0, size - nans, (size - 1) // 2)


def median_dim(
    self: np.ndarray, dim: int, keepdim: bool, ignore_nan: bool
) -> tuple[np.ndarray, np.ndarray]:
    """median.dim / nanmedian.dim: the lower median along dim and its index."""
    name = "nanmedian" if ignore_nan else "median"
    axis = _check_selectable(self, dim, name)
    if self.ndim == 0:
        return self.copy(), np.zeros((), np.int64)
    position = _nan_aware_position(self, axis, ignore_nan)
    if not ignore_nan and self.dtype.kind == "f":
        # median's NaN is the first NaN in the input, not in sorted order
        first_nan = np.argmax(np.isnan(self), axis=axis)
        values, indices = _select_sorted(self, axis, position, keepdim)
        has_nan = np.isnan(self).any(axis=axis, keepdims=keepdim)
        indices = np.where(has_nan, first_nan.reshape(has_nan.shape), indices)
        return values, indices.astype(np.int64)
    return _select_sorted(self, axis, position, keepdim)


def median_all(self: np.ndarray, ignore_nan: bool) -> np.ndarray:
    """median() / nanmedian() of every element: the lower median (NaN for an empty
    input; median's NaN when there is one)."""
    if self.dtype.kind == "c":
        name = "nanmedian" if ignore_nan else "median"
        raise RuntimeError(f"{name}() does not support complex input")
    if self.size == 0:
        return np.asarray(np.nan, self.dtype) if self.dtype.kind == "f" else self.sum()
    flat = self.reshape(-1)
    return median_dim(flat, 0, False, ignore_nan)[0]


def mode(self: np.ndarray, dim: int, keepdim: bool) -> tuple[np.ndarray, np.ndarray]:
    """The most frequent value along dim (the smallest among equally frequent ones)
    and the index of its last occurrence."""
    axis = _check_selectable(self, dim, "mode")
    if self.ndim == 0:
        return self.copy(), np.zeros((), np.int64)
    moved = np.moveaxis(self, axis, -1)
    order = np.argsort(moved, axis=-1, kind="stable")
    ordered = np.take_along_axis(moved, order, -1)
    size = ordered.shape[-1]
    # run lengths in the sorted rows: where each run starts, and each position's run
    starts = np.ones(ordered.shape, np.bool_)
    starts[..., 1:] = ordered[..., 1:] != ordered[..., :-1]
    run_start = np.maximum.accumulate(np.where(starts, np.arange(size), 0), axis=-1)
    run_length = np.arange(size) - run_start + 1
    # the first run reaching the greatest length: the smallest most frequent value,
    # and its last element is the value's last occurrence (the sort is stable)
    best = np.argmax(run_length, axis=-1)[..., None]
    values = np.take_along_axis(ordered, best, -1)[..., 0]
    indices = np.take_along_axis(order, best, -1)[..., 0].astype(np.int64)
    if keepdim:
        values, indices = np.expand_dims(values, axis), np.expand_dims(indices, axis)
    return values, indices


# -- Counting and binning -----------------------------------------------------------------


def _side(right: bool, side: str | None) -> str:
    if side is not None and side not in ("left", "right"):
        raise RuntimeError(
            f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}"
        )
    if side == "left" and right:
        raise RuntimeError(
            "torch.searchsorted(): side and right can't be set to opposites, got side "
            "of left while right was True"
        )
    return side or ("right" if right else "left")


def searchsorted(
    sorted_sequence: np.ndarray,
    self: Any,
    out_int32: bool,
    right: bool,
    side: str | None,
    sorter: np.ndarray | None,
) -> np.ndarray:
    """Where each value of self would be inserted into sorted_sequence (1-d, or rows
    matching self's leading dimensions) to keep it sorted."""
    which = _side(right, side)
    values = np.asarray(self)
    if sorter is not None:
        sorted_sequence = np.take_along_axis(sorted_sequence, sorter, -1)
    if sorted_sequence.ndim > 1 and (
        sorted_sequence.shape[:-1] != values.shape[:-1] or values.ndim == 0
    ):
        raise RuntimeError(
            "torch.searchsorted(): boundaries tensor should be 1 dimension or the first "
            "N-1 dimensions of boundaries tensor and input value tensor must match, but "
            f"we got boundaries tensor {list(sorted_sequence.shape)} and input value "
            f"tensor {list(values.shape)}"
        )
    dtype = np.int32 if out_int32 else np.int64
    if sorted_sequence.ndim <= 1:
        return np.searchsorted(sorted_sequence, values, side=which).astype(dtype)  # type: ignore[call-overload]  # side is "left" or "right"
    return _searchsorted_rows(sorted_sequence, values, which).astype(dtype)


def _searchsorted_rows(
    boundaries: np.ndarray, values: np.ndarray, side: str
) -> np.ndarray:
    """searchsorted row by row, in one sort: boundaries and values of all rows sorted
    together by (row, value, which comes first on a tie), the boundaries counted
    before each value, less the boundaries of the rows before its own."""
    rows, width = int(np.prod(boundaries.shape[:-1])), boundaries.shape[-1]
    per_row = values.shape[-1]
    data = np.concatenate(
        [boundaries.reshape(rows, width), values.reshape(rows, -1)], 1
    )
    row = np.repeat(np.arange(rows), width + per_row).reshape(rows, -1)
    is_boundary = np.zeros(data.shape, np.bool_)
    is_boundary[:, :width] = True
    # on a tie, "left" puts a value before equal boundaries, "right" after them
    tie = is_boundary if side == "left" else ~is_boundary
    order = np.lexsort((tie.ravel(), data.ravel(), row.ravel()))
    counted = np.cumsum(is_boundary.ravel()[order])
    before = np.empty(order.size, np.int64)
    before[order] = counted
    found = before.reshape(rows, -1)[:, width:] - np.arange(rows)[:, None] * width
    return found.reshape(values.shape)


def bucketize(
    self: Any, boundaries: np.ndarray, out_int32: bool, right: bool
) -> np.ndarray:
    """The bucket of each value of self among 1-d boundaries."""
    if boundaries.ndim != 1:
        raise RuntimeError(
            f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})"
        )
    return searchsorted(boundaries, self, out_int32, right, None, None)


def unique_sorted(
    self: np.ndarray, return_inverse: bool, return_counts: bool, dim: int | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The sorted distinct elements (or slices along dim), the index of each
    element's (slice's) value among them, and their counts; the last two are empty
    unless asked for."""
    axis = None if dim is None else _wrap_dim(dim, self.ndim)
    values, inverse, counts = np.unique(
        self, return_inverse=True, return_counts=True, axis=axis
    )
    shape = self.shape if axis is None else (self.shape[axis],)
    empty = np.zeros(0, np.int64)
    return (
        values,
        inverse.reshape(shape).astype(np.int64) if return_inverse else empty,
        counts.astype(np.int64) if return_counts else empty,
    )


def unique_consecutive(
    self: np.ndarray, return_inverse: bool, return_counts: bool, dim: int | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The elements (or slices along dim) that differ from the one before them, each
    element's group number, and the groups' lengths."""
    axis = 0 if dim is None else _wrap_dim(dim, self.ndim)
    moved = self.reshape(-1) if dim is None else np.moveaxis(self, axis, 0)
    size = moved.shape[0]
    starts = np.ones(size, np.bool_)
    if size > 1:
        changed = moved[1:] != moved[:-1]
        starts[1:] = changed.reshape(size - 1, -1).any(axis=1)
    group = np.cumsum(starts) - 1
    values = moved[starts] if dim is None else np.moveaxis(moved[starts], 0, axis)
    counts = np.diff(np.append(np.flatnonzero(starts), size))
    empty = np.zeros(0, np.int64)
    shape = self.shape if dim is None else (size,)
    return (
        values,
        group.reshape(shape).astype(np.int64) if return_inverse else empty,
        counts.astype(np.int64) if return_counts else empty,
    )


def nonzero(self: np.ndarray) -> np.ndarray:
    """The indices of the nonzero elements, one row each (n x ndim, int64)."""
    return np.argwhere(self).astype(np.int64)


def histc(self: np.ndarray, bins: int, min: Any, max: Any) -> np.ndarray:
    """Counts of self's values in `bins` equal bins over [min, max] (the data's range
    when both are 0); values outside are left out."""
    if self.dtype.kind != "f":
        raise NotImplementedError(
            f"\"histogram_cpu\" not implemented for '{_scalar_type_name(self)}'"
        )
    if bins <= 0:
        raise RuntimeError(
            "torch.histc(): bins must be > 0, but got " f"{bins} for bins"
        )
    low, high = float(min), float(max)
    if low > high:
        raise RuntimeError("torch.histc: max must be larger than min")
    if low == high and self.size:
        low, high = float(np.min(self)), float(np.max(self))
    if low == high:
        low, high = low - 1, high + 1
    counts, _ = np.histogram(self, bins=bins, range=(low, high))
    return counts.astype(self.dtype)


def bincount(
    self: np.ndarray, weights: np.ndarray | None, minlength: int
) -> np.ndarray:
    """How often each non-negative integer occurs in self (1-d), or the sum of the
    weights at its occurrences."""
    if self.dtype.kind not in "iub":
        raise NotImplementedError(
            f"\"bincount_cpu\" not implemented for '{_scalar_type_name(self)}'"
        )
    if self.ndim != 1 or (self.size and self.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is not None and weights.shape != self.shape:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    counts = np.bincount(self, weights, minlength)
    if weights is None:
        return counts.astype(np.int64)
    return counts.astype(weights.dtype if weights.dtype.kind == "f" else np.float64)


def count_nonzero(self: np.ndarray, dim: int | Sequence[int] | None) -> np.ndarray:
    """The number of nonzero elements over dim (one, a list, or all), as int64."""
    dims = (dim,) if isinstance(dim, int) else dim
    axes = _reduction_dims(dims, self.ndim) if dims is not None else None
    if dims is not None and len(dims) == 0:
        axes = None
    return np.asarray(np.count_nonzero(self, axis=axes), np.int64)


def aminmax(
    self: np.ndarray, dim: int | None, keepdim: bool
) -> tuple[np.ndarray, np.ndarray]:
    """(amin, amax) over one dim or every element; NaN propagates."""
    if self.dtype.kind == "c":
        raise RuntimeError("aminmax(): does not support complex input")
    if dim is None:
        if self.size == 0:
            raise RuntimeError(
                "aminmax(): cannot compute aminmax over an empty dimension as the "
                "operation has no identity."
            )
        axes: Any = None
    else:
        axes = _wrap_dim(dim, self.ndim) if self.ndim else None
        if self.ndim and self.shape[axes] == 0:
            raise IndexError(
                f"aminmax: Expected reduction dim {axes} to have non-zero size."
            )
    keep = keepdim and (dim is not None or self.ndim > 0)
    low, high = np.min(self, axis=axes, keepdims=keep), np.max(
        self, axis=axes, keepdims=keep
    )
    return np.asarray(low), np.asarray(high)


def nansum(
    self: np.ndarray, dim: Sequence[int] | None, keepdim: bool, dtype: Any
) -> np.ndarray:
    """The sum over dim (None or [] for all) with NaN counted as zero."""
    if self.dtype.kind == "c":
        raise RuntimeError("nansum does not support complex inputs")
    zeroed = np.where(np.isnan(self), 0, self) if self.dtype.kind == "f" else self
    return reduce_sum(zeroed.astype(self.dtype), dim, keepdim, dtype)
