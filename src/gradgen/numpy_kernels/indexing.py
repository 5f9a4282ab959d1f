"""Indexing kernels: advanced indexing, index_put/add/copy/fill/select/reduce, gather,
scatter (and scatter_reduce), masks (fill, select, scatter), take and put, and the
scatters of a slice, a selected index and a diagonal."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..dtypes import scalar_type_name as _scalar_type_name
from ..dtypes import spelling
from ._common import OVERLAPPING_WRITE_ERROR, _along, _wrap_dim, broadcast_shape_error
from ._common import checked_scalar
from .shape import _slice_bounds, diagonal

__all__ = [
    "index_select",
    "advanced_index",
    "index_put",
    "index_add",
    "gather",
    "scatter",
    "masked_fill",
    "scatter_reduce",
    "index_copy",
    "index_fill",
    "masked_select",
    "masked_scatter",
    "take",
    "put",
    "index_reduce",
    "masked_scatter_backward",
    "slice_scatter",
    "select_scatter",
    "diagonal_scatter",
]


def _check_index_dtype(index: np.ndarray, message: str) -> None:
    if index.dtype.name not in ("int32", "int64"):
        raise RuntimeError(message)


def _check_bounds(index: np.ndarray, size: int, dim: int) -> None:
    """PyTorch's scatter/gather bounds check (negative indices are out of bounds)."""
    bad = (index < 0) | (index >= size)
    if bad.any():
        value = int(index[bad].reshape(-1)[0])
        raise RuntimeError(
            f"index {value} is out of bounds for dimension {dim} with size {size}"
        )


def _advanced_key(
    self: np.ndarray, indices: Sequence[np.ndarray | None]
) -> tuple[Any, ...]:
    """PyTorch's `index` indices as a numpy key (None takes its whole dimension), with
    PyTorch's checks and messages; numpy places the result's dimensions the same way."""
    if not indices:
        raise IndexError("at least one index must be provided")
    consumed = sum(1 if i is None or i.dtype.kind != "b" else i.ndim for i in indices)
    if consumed > self.ndim:
        raise IndexError(
            f"too many indices for tensor of dimension {self.ndim} (got {consumed})"
        )
    key: list[Any] = []
    dim = 0
    position = 0  # among the index tensors (PyTorch counts dimensions this way)
    shapes = []
    for index in indices:
        if index is None:
            key.append(slice(None))
            dim += 1
            continue
        if index.dtype.kind == "b":
            extent = self.shape[dim : dim + index.ndim]
            for offset, (got, wanted) in enumerate(zip(index.shape, extent)):
                if got != wanted:
                    raise IndexError(
                        f"The shape of the mask {list(index.shape)} at index {offset} does "
                        f"not match the shape of the indexed tensor {list(self.shape)} at "
                        f"index {dim + offset}"
                    )
            key.append(index)
            shapes.append([int(np.count_nonzero(index))])
            dim += index.ndim
        elif index.dtype.kind in "iu":
            size = self.shape[dim]
            bad = (index < -size) | (index >= size)
            if bad.any():
                value = int(index[bad].reshape(-1)[0])
                raise IndexError(
                    f"index {value} is out of bounds for dimension {position} with size {size}"
                )
            key.append(index)
            shapes.append(list(index.shape))
            dim += 1
        else:
            raise IndexError(
                "tensors used as indices must be long, int, byte or bool tensors"
            )
        position += 1
    try:
        np.broadcast_shapes(*(tuple(shape) for shape in shapes))
    except ValueError:
        raise IndexError(
            "shape mismatch: indexing tensors could not be broadcast together with shapes "
            + ", ".join(str(shape) for shape in shapes)
        ) from None
    return tuple(key)


def advanced_index(
    self: np.ndarray, indices: Sequence[np.ndarray | None]
) -> np.ndarray:
    """`self[indices]` with tensors, as PyTorch's `index` (always a copy)."""
    return np.array(self[_advanced_key(self, indices)])


def index_put(
    self: np.ndarray,
    indices: Sequence[np.ndarray | None],
    values: np.ndarray,
    accumulate: bool,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """self with `values` written (or, with accumulate, added: repeated indices add up)
    at `indices`; into `out` (self's memory) for index_put_, else into a copy."""
    if values.dtype != self.dtype:
        raise RuntimeError(
            "Index put requires the source and destination dtypes match, got "
            f"{_scalar_type_name(self)} for the destination and "
            f"{_scalar_type_name(values)} for the source."
        )
    key = _advanced_key(self, indices)
    if out is not None and not out.flags.writeable:
        raise RuntimeError(OVERLAPPING_WRITE_ERROR)
    result = self.copy() if out is None else out
    target_shape = np.empty(self.shape, dtype=np.bool_)[key].shape
    try:
        fits = np.broadcast_shapes(values.shape, target_shape) == target_shape
    except ValueError:
        fits = False
    if not fits:
        raise RuntimeError(
            f"shape mismatch: value tensor of shape {list(values.shape)} cannot be broadcast "
            f"to indexing result of shape {list(target_shape)}"
        )
    if accumulate:
        np.add.at(result, key, values)
    else:
        result[key] = values
    return result


def index_select(self: np.ndarray, dim: int, index: np.ndarray) -> np.ndarray:
    """The slices at `index` (a vector or a single index) along dim."""
    _check_index_dtype(index, "index_select(): Expected dtype int32 or int64 for index")
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    axis = _wrap_dim(dim, self.ndim)
    flat = index.reshape(-1)
    if self.ndim == 0:
        if flat.size != 1:
            raise RuntimeError(
                "index_select(): Index to scalar can have only 1 value, got "
                f"{flat.size} value(s)"
            )
        if flat[0] != 0:
            raise IndexError("index out of range in self")
        return self.copy()
    if ((flat < 0) | (flat >= self.shape[axis])).any():
        raise IndexError("index out of range in self")
    return np.take(self, flat, axis=axis)


def index_add(
    self: np.ndarray, dim: int, index: np.ndarray, source: np.ndarray, alpha: Any
) -> np.ndarray:
    """A copy of self with alpha * source's slices added at `index` along dim."""
    axis = _wrap_dim(dim, self.ndim)
    if index.dtype.name not in ("int32", "int64"):
        raise RuntimeError(
            "index_add_(): Expected dtype int32/int64 for index but got: "
            f"{_scalar_type_name(index)}"
        )
    if index.ndim > 1:
        raise IndexError(
            f"index_add_(): Index is supposed to be a vector, but got dim: {index.ndim} "
            f"with type: {_scalar_type_name(index)} and size: {list(index.shape)}"
        )
    if self.dtype != source.dtype:
        raise RuntimeError(
            f"index_add_(): self ({_scalar_type_name(self)}) and source "
            f"({_scalar_type_name(source)}) must have the same scalar type"
        )
    flat = index.reshape(-1)
    result = self.copy()
    if self.ndim == 0:
        source_slices = source.reshape(-1)
        if flat.size != source_slices.size:
            raise RuntimeError(
                f"index_add_(): Number of indices ({flat.size}) should be equal to "
                f"source.size(dim): ({source_slices.size}), for dim: {axis}"
            )
        if ((flat != 0)).any():
            raise IndexError("index out of range in self")
        result += alpha * source_slices.sum() if flat.size else 0
        return result
    if source.ndim != self.ndim or any(
        s != n for d, (s, n) in enumerate(zip(self.shape, source.shape)) if d != axis
    ):
        raise RuntimeError(
            "source tensor shape must match self tensor shape, excluding the specified "
            f"dimension. Got self.shape = {list(self.shape)} source.shape = "
            f"{list(source.shape)}"
        )
    if flat.size != source.shape[axis]:
        raise RuntimeError(
            f"index_add_(): Number of indices ({flat.size}) should be equal to "
            f"source.size(dim): ({source.shape[axis]}), for dim: {axis}"
        )
    if self.ndim == 1 and ((flat < 0) | (flat >= self.shape[0])).any():
        raise IndexError("index out of range in self")  # PyTorch's 1-d kernel's words
    _check_bounds(flat, self.shape[axis], axis)
    scaled = source if alpha == 1 else source * np.asarray(alpha).astype(source.dtype)
    np.add.at(np.moveaxis(result, axis, 0), flat, np.moveaxis(scaled, axis, 0))
    return result


def _scatter_gather_index(
    self: np.ndarray, dim: int, index: np.ndarray, name: str
) -> tuple[int, tuple[np.ndarray, ...]]:
    """Check `index` against self as gather/scatter do; return the wrapped dim and the
    full advanced index that addresses self at index's positions."""
    _check_index_dtype(index, f"{name}(): Expected dtype int32/int64 for index")
    axis = _wrap_dim(dim, self.ndim)
    if index.ndim != self.ndim and not (self.ndim <= 1 and index.ndim <= 1):
        what = "input" if name == "gather" else "self"
        raise RuntimeError(
            f"Index tensor must have the same number of dimensions as {what} tensor"
        )
    if self.ndim == 0:
        _check_bounds(index, 1, axis)
        return axis, (np.zeros(index.shape, np.intp),)
    _check_bounds(index, self.shape[axis], axis)
    grid = np.indices(index.shape, sparse=True) if index.ndim else ()
    positions = tuple(
        index.astype(np.intp) if d == axis else grid[d]
        for d in range(max(index.ndim, 1))
    )
    return axis, positions


def gather(self: np.ndarray, dim: int, index: np.ndarray) -> np.ndarray:
    """Elements of self picked along dim by `index` (result has index's shape)."""
    axis = _wrap_dim(dim, self.ndim)
    if index.ndim == self.ndim and self.ndim:
        for d in range(self.ndim):
            if d != axis and index.shape[d] > self.shape[d]:
                raise RuntimeError(
                    f"Size does not match at dimension {d} expected index "
                    f"{list(index.shape)} to be no larger than self {list(self.shape)} "
                    f"apart from dimension {axis}"
                )
    axis, positions = _scatter_gather_index(self, dim, index, "gather")
    if self.ndim == 0:
        return np.broadcast_to(self, index.shape).copy()
    return self[positions]


def scatter(
    self: np.ndarray, dim: int, index: np.ndarray, src: Any, reduce: str | None
) -> np.ndarray:
    """A copy of self with src (a tensor or a number) written (reduce None), added
    (reduce "add") or multiplied in (reduce "multiply") at index's positions along
    dim."""
    if reduce not in (None, "add", "multiply"):
        raise RuntimeError("reduce argument must be either add or multiply.")
    if isinstance(src, np.ndarray) and src.dtype != self.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    axis, positions = _scatter_gather_index(self, dim, index, "scatter")
    if isinstance(src, np.ndarray) and index.ndim == self.ndim and self.ndim:
        for d in range(self.ndim):
            if index.shape[d] > src.shape[d] or (
                d != axis and index.shape[d] > self.shape[d]
            ):
                raise RuntimeError(
                    f"Expected index {list(index.shape)} to be no larger than self "
                    f"{list(self.shape)} apart from dimension {axis} and to be no larger "
                    f"size than src {list(src.shape)}"
                )
    result = self.copy()
    if isinstance(src, np.ndarray):
        values = src[tuple(slice(0, n) for n in index.shape)] if src.ndim else src
    else:
        values = np.asarray(src).astype(self.dtype)
    target = result.reshape(1) if self.ndim == 0 else result
    if reduce == "add":
        np.add.at(target, positions, values)
    elif reduce == "multiply":
        np.multiply.at(target, positions, values)
    else:
        target[positions] = values
    return result


def masked_fill(self: np.ndarray, mask: np.ndarray, value: Any) -> np.ndarray:
    """self (broadcast with mask) with `value` where mask is True."""
    if mask.dtype != np.bool_:
        raise RuntimeError(
            "masked_fill_ only supports boolean masks, but got mask with dtype "
            f"{spelling(mask).typeid}"
        )
    if isinstance(value, np.ndarray):
        if value.ndim != 0:
            raise RuntimeError(
                "masked_fill_ only supports a 0-dimensional value tensor, but got tensor "
                f"with {value.ndim} dimension(s)."
            )
        value = value.item()
    if isinstance(value, complex) and self.dtype.kind != "c":
        raise RuntimeError(
            f"value cannot be converted to type {spelling(self).typeid} "
            "without overflow"
        )
    fill = np.asarray(checked_scalar(value, self.dtype), self.dtype)
    try:
        shape = np.broadcast_shapes(self.shape, mask.shape)
    except ValueError:
        raise broadcast_shape_error(mask.shape, self.shape) from None
    return np.where(mask, fill, np.broadcast_to(self, shape))


# The reductions of scatter_reduce: the ufunc whose `at` combines duplicates, and the
# value a position starts from when self is left out (include_self=False).
_SCATTER_REDUCTIONS: dict[str, np.ufunc] = {
    "sum": np.add,
    "mean": np.add,
    "prod": np.multiply,
    "amax": np.maximum,
    "amin": np.minimum,
}


def _reduction_identity(reduce: str, dtype: np.dtype) -> Any:
    """The value a position scattered to starts from when self is left out: the
    reduction's identity (the lowest value for amax, the highest for amin)."""
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if dtype.kind == "b":
        return reduce == "amin"
    if dtype.kind in "fc":
        return -np.inf if reduce == "amax" else np.inf
    info = np.iinfo(dtype)
    return info.min if reduce == "amax" else info.max


def scatter_reduce(
    self: np.ndarray,
    dim: int,
    index: np.ndarray,
    src: np.ndarray,
    reduce: str,
    include_self: bool,
) -> np.ndarray:
    """A copy of self where src's elements are combined (sum, prod, mean, amax, amin)
    into the positions `index` names along dim, with or without self's own value there;
    positions no index names keep self's value."""
    # PyTorch also takes "max" and "min" for amax and amin
    reduce = {"max": "amax", "min": "amin"}.get(reduce, reduce)
    if reduce not in _SCATTER_REDUCTIONS:
        raise RuntimeError(
            "reduce argument must be either sum, prod, mean, amax or amin, got "
            + reduce
        )
    if src.dtype != self.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    axis, positions = _scatter_gather_index(self, dim, index, "scatter")
    result = self.copy()
    target = result.reshape(1) if self.ndim == 0 else result
    values = src[tuple(slice(0, n) for n in index.shape)] if src.ndim else src
    if not include_self:
        target[positions] = _reduction_identity(reduce, self.dtype)
    _SCATTER_REDUCTIONS[reduce].at(target, positions, values)
    if reduce != "mean":
        return result
    counts = np.full(target.shape, 1 if include_self else 0, np.int64)
    np.add.at(counts, positions, 1)
    counts = np.maximum(counts, 1).reshape(self.shape)
    if self.dtype.kind in "biu":
        return np.floor_divide(result, counts).astype(self.dtype)
    return (result / counts).astype(self.dtype)


def _index_vector(
    self: np.ndarray, dim: int, index: np.ndarray, name: str
) -> tuple[int, np.ndarray]:
    """index_copy/index_fill's index (int64, at most one dimension) flattened, with
    the wrapped dim; a 0-d self counts as one slice."""
    if index.dtype != np.int64:
        if name == "index_copy_":
            raise RuntimeError(
                "index_copy_(): Expected a long tensor for index, but got "
                f"{_scalar_type_name(index)}"
            )
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if index.ndim > 1:
        if name == "index_copy_":
            raise IndexError(
                f"index_copy_(): Index should have dimension 1 or 0 (got {index.ndim})"
            )
        raise RuntimeError("Index has to be a vector/scalar")
    return _wrap_dim(dim, self.ndim), index.reshape(-1)


def index_copy(
    self: np.ndarray, dim: int, index: np.ndarray, source: np.ndarray
) -> np.ndarray:
    """A copy of self with source's slices along dim written at `index` (a repeated
    index keeps one of its slices)."""
    axis, flat = _index_vector(self, dim, index, "index_copy_")
    if source.dtype != self.dtype:
        raise RuntimeError(
            "index_copy_(): self and source expected to have the same dtype, but got "
            f"(self) {_scalar_type_name(self)} and (source) {_scalar_type_name(source)}"
        )
    result = self.copy()
    view = result.reshape(1) if self.ndim == 0 else result
    slices = source.reshape(-1) if self.ndim == 0 or source.ndim == 0 else source
    count = slices.shape[axis] if slices.ndim > axis else 1
    if flat.size != count:
        raise IndexError(
            f"index_copy_(): Number of indices ({flat.size}) should be equal to "
            f"source.size(dim) ({count})"
        )
    expected = view.shape[:axis] + view.shape[axis + 1 :]
    got = slices.shape[:axis] + slices.shape[axis + 1 :]
    if expected != got:
        raise RuntimeError(
            "index_copy_(): Source/destination tensor must have same slice shapes. "
            f"Destination slice shape: {' '.join(map(str, expected))} at dimension "
            f"{axis} and source slice shape: {' '.join(map(str, got))} at dimension "
            f"{axis}."
        )
    bad = (flat < 0) | (flat >= view.shape[axis])
    if bad.any():
        raise IndexError(
            f"index_copy_(): index {int(flat[bad][0])} is out of bounds for dimension "
            f"{axis} with size {view.shape[axis]}"
        )
    np.moveaxis(view, axis, 0)[flat] = np.moveaxis(slices, axis, 0)
    return result


def index_fill(self: np.ndarray, dim: int, index: np.ndarray, value: Any) -> np.ndarray:
    """A copy of self with the slices at `index` along dim set to value (a number or a
    0-d tensor); negative indices count from the end."""
    axis, flat = _index_vector(self, dim, index, "index_fill_")
    if isinstance(value, np.ndarray):
        if value.ndim != 0:
            raise RuntimeError(
                "index_fill_ only supports a 0-dimensional value tensor, but got tensor "
                f"with {value.ndim} dimension(s)."
            )
        value = value.item()
    result = self.copy()
    view = result.reshape(1) if self.ndim == 0 else result
    size = view.shape[axis]
    bad = (flat < -size) | (flat >= size)
    if bad.any():
        raise IndexError(
            f"index {int(flat[bad][0])} is out of bounds for dimension {axis} with "
            f"size {size}"
        )
    np.moveaxis(view, axis, 0)[flat] = np.asarray(
        checked_scalar(value, self.dtype), self.dtype
    )
    return result


def _bool_mask(mask: np.ndarray, message: str) -> None:
    if mask.dtype != np.bool_:
        raise RuntimeError(message)


def masked_select(self: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """The elements of self (broadcast with mask) where mask is True, as a vector."""
    _bool_mask(mask, "masked_select: expected BoolTensor for mask")
    try:
        shape = np.broadcast_shapes(self.shape, mask.shape)
    except ValueError:
        raise broadcast_shape_error(mask.shape, self.shape) from None
    return np.broadcast_to(self, shape)[np.broadcast_to(mask, shape)]


def masked_scatter(
    self: np.ndarray, mask: np.ndarray, source: np.ndarray
) -> np.ndarray:
    """self (broadcast with mask) with source's first elements, in order, written where
    mask is True."""
    _bool_mask(
        mask,
        "masked_scatter_ only supports boolean masks, but got mask with dtype "
        f"{_scalar_type_name(mask)}",
    )
    if source.dtype != self.dtype:
        raise RuntimeError(
            "masked_scatter: expected self and source to have same dtypes but got"
            f"{_scalar_type_name(self)} and {_scalar_type_name(source)}"
        )
    try:
        shape = np.broadcast_shapes(self.shape, mask.shape)
    except ValueError:
        raise broadcast_shape_error(mask.shape, self.shape) from None
    where = np.broadcast_to(mask, shape)
    count = int(np.count_nonzero(where))
    if count > source.size:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    result = np.array(np.broadcast_to(self, shape))
    result[where] = source.reshape(-1)[:count]
    return result


def _flat_index(self: np.ndarray, index: np.ndarray, name: str) -> np.ndarray:
    """take/put's index into self's elements in row-major order (negative ones count
    from the end), with PyTorch's checks."""
    if index.dtype != np.int64:
        raise RuntimeError(
            f"{name}(): Expected a long tensor for index, but got "
            f"{_scalar_type_name(index)}"
        )
    flat = index.reshape(-1)
    if flat.size and self.size == 0:
        raise IndexError(f"{name}(): tried to take from an empty tensor")
    bad = (flat < -self.size) | (flat >= self.size)
    if bad.any():
        raise IndexError(
            f"out of range: tried to access index {int(flat[bad][0])} on a tensor of "
            f"{self.size} elements."
        )
    return np.where(flat < 0, flat + self.size, flat)


def take(self: np.ndarray, index: np.ndarray) -> np.ndarray:
    """self's elements, counted in row-major order, at `index` (result has its shape)."""
    return self.reshape(-1)[_flat_index(self, index, "take")].reshape(index.shape)


def put(
    self: np.ndarray, index: np.ndarray, source: np.ndarray, accumulate: bool
) -> np.ndarray:
    """A copy of self with source's elements written (or added) at the row-major
    positions `index`."""
    if index.dtype == np.int64 and index.size != source.size:
        raise IndexError(
            "put_(): Expected source and index to have the same number of elements, "
            f"but got source.numel() = {source.size}, index.numel() = {index.size}"
        )
    flat = _flat_index(self, index, "put_")
    if source.dtype != self.dtype:
        raise RuntimeError(
            "put_(): self and source expected to have the same dtype, but got "
            f"self.dtype = {_scalar_type_name(self)} and source.dtype = "
            f"{_scalar_type_name(source)}"
        )
    result = self.copy()
    target = result.reshape(-1)
    if accumulate:
        np.add.at(target, flat, source.reshape(-1))
    else:
        target[flat] = source.reshape(-1)
    return result


_INDEX_REDUCTIONS = ("prod", "mean", "amax", "amin")


def index_reduce(
    self: np.ndarray,
    dim: int,
    index: np.ndarray,
    source: np.ndarray,
    reduce: str,
    include_self: bool,
) -> np.ndarray:
    """A copy of self where the slices of source along dim are combined (prod, mean,
    amax, amin) into the slices `index` names: scatter_reduce with the index repeated
    across source's other dimensions."""
    if reduce not in _INDEX_REDUCTIONS:
        raise RuntimeError(
            "index_reduce(): Expected reduce to be one of prod, mean, amax or amin but "
            f"got {reduce}."
        )
    _check_index_dtype(index, "index_reduce_(): Expected dtype int32/int64 for index")
    axis = _wrap_dim(dim, self.ndim)
    flat = index.reshape(-1)
    size = self.shape[axis] if self.ndim else 1
    if ((flat < 0) | (flat >= size)).any():
        raise IndexError("index out of range in self")
    if source.ndim == 0:
        return scatter_reduce(self, dim, flat, source.reshape(1), reduce, include_self)
    along = [-1 if d == axis else 1 for d in range(source.ndim)]
    expanded = np.broadcast_to(flat.reshape(along), source.shape)
    return scatter_reduce(self, dim, expanded, source, reduce, include_self)


def masked_scatter_backward(
    grad_output: np.ndarray, mask: np.ndarray, sizes: Sequence[int]
) -> np.ndarray:
    """masked_scatter's source gradient: grad_output where mask is set, in order,
    then zeros, in source's shape."""
    selected = masked_select(grad_output, mask)
    numel = int(np.prod(sizes))
    if selected.size > numel:
        raise RuntimeError(
            f"shape '{list(sizes)}' is invalid for input of size {selected.size}"
        )
    padded = np.zeros(numel, grad_output.dtype)
    padded[: selected.size] = selected
    return padded.reshape(tuple(sizes))


def _scatter_into(self: np.ndarray, src: np.ndarray, key: Any) -> np.ndarray:
    """A copy of self with src written into the part `key` names (of src's shape)."""
    result = self.copy()
    part = result[key]
    if part.shape != src.shape:
        raise RuntimeError(
            "expected src to have a size equal to the slice of self. src size = "
            f"{list(src.shape)}, slice size = {list(part.shape)}"
        )
    result[key] = src
    return result


def slice_scatter(
    self: np.ndarray,
    src: np.ndarray,
    dim: int,
    start: int | None,
    end: int | None,
    step: int,
) -> np.ndarray:
    """A copy of self with src written into self[start:end:step] along dim."""
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    axis = _wrap_dim(dim, self.ndim)
    begin, stop = _slice_bounds(self.shape[axis], start, end)
    return _scatter_into(self, src, _along(axis, self.ndim, slice(begin, stop, step)))


def select_scatter(
    self: np.ndarray, src: np.ndarray, dim: int, index: int
) -> np.ndarray:
    """A copy of self with src written into the slice at `index` along dim."""
    axis = _wrap_dim(dim, self.ndim)
    size = self.shape[axis]
    if not -size <= index < size:
        raise IndexError(
            f"select(): index {index} out of range for tensor of size "
            f"{list(self.shape)} at dimension {axis}"
        )
    return _scatter_into(self, src, _along(axis, self.ndim, index))


def diagonal_scatter(
    self: np.ndarray, src: np.ndarray, offset: int, dim1: int, dim2: int
) -> np.ndarray:
    """A copy of self with src written into the diagonal `offset` of the (dim1, dim2)
    planes."""
    result = self.copy()
    target = diagonal(result, offset, dim1, dim2)
    if target.shape != src.shape:
        raise RuntimeError(
            "expected src to have a size equal to the slice of self. src size = "
            f"{list(src.shape)}, slice size = {list(target.shape)}"
        )
    target[...] = src
    return result
