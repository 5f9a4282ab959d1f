"""numpy functions that native_functions.yaml kernel expressions may call.

A kernel expression is one Python expression over numpy arrays; where one numpy call
does not say it (negative sizes in `expand`, summing to a shape), the helper is here.
`__all__` is the list the generator allows in kernel expressions (it reads it without
importing this module).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = [
    "permute",
    "expand",
    "sum_to_size",
    "to_copy",
    "view",
    "squeeze",
    "unsqueeze",
    "transpose",
    "t",
    "select",
    "slice_",
    "split",
    "split_with_sizes",
    "unbind",
    "select_backward",
    "slice_backward",
    "reduce_sum",
    "reduce_mean",
]


def permute(self: np.ndarray, dims: Sequence[int]) -> np.ndarray:
    """A view with the dimensions reordered (PyTorch's checks and messages)."""
    if len(dims) != self.ndim:
        raise RuntimeError(
            "permute(sparse_coo): number of dimensions in the tensor input does not match "
            "the length of the desired ordering of dimensions i.e. input.dim() = "
            f"{self.ndim} is not equal to len(dims) = {len(dims)}"
        )
    wrapped = [d + self.ndim if d < 0 else d for d in dims]
    if sorted(wrapped) != list(range(self.ndim)):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return np.transpose(self, wrapped)


def expand(self: np.ndarray, size: Sequence[int]) -> np.ndarray:
    """A read-only broadcast view of `self` at `size`; -1 keeps a dimension's size."""
    if len(size) < self.ndim:
        raise RuntimeError(
            f"expand(torch.FloatTensor{{{list(self.shape)}}}, size={list(size)}): the "
            "number of sizes provided "
            f"({len(size)}) must be greater or equal to the number of dimensions in the "
            f"tensor ({self.ndim})"
        )
    leading = len(size) - self.ndim
    target = [
        self.shape[i - leading] if extent == -1 and i >= leading else extent
        for i, extent in enumerate(size)
    ]
    return np.broadcast_to(self, target)


def sum_to_size(self: np.ndarray, size: Sequence[int]) -> np.ndarray:
    """Sum `self` down to `size`, which must broadcast to `self`'s shape."""
    size = tuple(size)
    leading = self.ndim - len(size)
    if leading < 0 or any(
        s != 1 and s != self.shape[leading + i] for i, s in enumerate(size)
    ):
        raise RuntimeError(
            f"size {{{list(size)}}} is not expandable to size {{{list(self.shape)}}}."
        )
    axes = tuple(range(leading)) + tuple(
        leading + i for i, s in enumerate(size) if s == 1 and self.shape[leading + i] != 1
    )
    if not axes:
        return self
    return np.sum(self, axis=axes, keepdims=True).reshape(size)


def to_copy(self: np.ndarray, dtype: Any) -> np.ndarray:
    """A copy, converted to `dtype` (a gradgen dtype) when one is given."""
    if dtype is None:
        return self.copy()
    return self.astype(dtype.numpy)


def _wrap_dim(dim: int, ndim: int) -> int:
    """PyTorch's maybe_wrap_dim, with its error (a 0-d tensor accepts 0 and -1)."""
    low, high = (-ndim, ndim - 1) if ndim else (-1, 0)
    if not low <= dim <= high:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{low}, {high}], but "
            f"got {dim})"
        )
    return dim + ndim if dim < 0 and ndim else (0 if dim < 0 else dim)


def view(self: np.ndarray, size: Sequence[int]) -> np.ndarray:
    """A view with another shape; an error, as in PyTorch, when no view can have it."""
    shape = tuple(size)
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = int(np.prod([s for s in shape if s != -1]))
    if -1 in shape:
        if known == 0 or self.size % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {self.size}")
        shape = tuple(self.size // known if s == -1 else s for s in shape)
    elif known != self.size:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {self.size}")
    result = self.view()
    try:
        result.shape = shape
    except AttributeError:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least "
            "one dimension spans across two contiguous subspaces). Use .reshape(...) "
            "instead."
        ) from None
    return result


def squeeze(self: np.ndarray, dim: int | None = None) -> np.ndarray:
    """Drop dimensions of size 1 (only `dim`, and only if it has size 1, when given)."""
    if dim is None:
        return np.squeeze(self)
    dim = _wrap_dim(dim, self.ndim)
    if self.ndim == 0 or self.shape[dim] != 1:
        return self.view()
    return np.squeeze(self, axis=dim)


def unsqueeze(self: np.ndarray, dim: int) -> np.ndarray:
    return np.expand_dims(self, _wrap_dim(dim, self.ndim + 1))


def transpose(self: np.ndarray, dim0: int, dim1: int) -> np.ndarray:
    if self.ndim == 0:
        _wrap_dim(dim0, 0)  # checks the dims as PyTorch does, for the error
        _wrap_dim(dim1, 0)
        return self.view()
    return np.swapaxes(self, _wrap_dim(dim0, self.ndim), _wrap_dim(dim1, self.ndim))


def t(self: np.ndarray) -> np.ndarray:
    if self.ndim > 2:
        raise RuntimeError(
            f"t() expects a tensor with <= 2 dimensions, but self is {self.ndim}D"
        )
    return self.T


def select(self: np.ndarray, dim: int, index: int) -> np.ndarray:
    if self.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    dim = _wrap_dim(dim, self.ndim)
    size = self.shape[dim]
    if not -size <= index < size:
        raise IndexError(
            f"select(): index {index} out of range for tensor of size {list(self.shape)} "
            f"at dimension {dim}"
        )
    return self[(slice(None),) * dim + (index,)]


def _slice_bounds(size: int, start: int | None, end: int | None) -> tuple[int, int]:
    """PyTorch's clamping of slice bounds into [0, size]."""
    start = 0 if start is None else start
    end = size if end is None else end
    if start < 0:
        start += size
    if end < 0:
        end += size
    start = min(max(start, 0), size)
    end = min(max(end, start), size)
    return start, end


def slice_(
    self: np.ndarray, dim: int, start: int | None, end: int | None, step: int
) -> np.ndarray:
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    dim = _wrap_dim(dim, self.ndim)
    begin, stop = _slice_bounds(self.shape[dim], start, end)
    return self[(slice(None),) * dim + (slice(begin, stop, step),)]


def split(self: np.ndarray, split_size: int, dim: int) -> list[np.ndarray]:
    dim = _wrap_dim(dim, self.ndim)
    size = self.shape[dim]
    if split_size <= 0 and size:
        raise RuntimeError(
            f"split_size can only be 0 if dimension size is 0, but got dimension size of {size}"
        )
    bounds = list(range(0, size, split_size)) if split_size else [0]
    return [
        self[(slice(None),) * dim + (slice(start, min(start + split_size, size)),)]
        for start in bounds
    ]


def split_with_sizes(self: np.ndarray, split_sizes: Sequence[int], dim: int) -> list[np.ndarray]:
    dim = _wrap_dim(dim, self.ndim)
    if sum(split_sizes) != self.shape[dim]:
        raise RuntimeError(
            "split_with_sizes expects split_sizes to sum exactly to "
            f"{self.shape[dim]} (input tensor's size at dimension {dim}), but got "
            f"split_sizes={list(split_sizes)}"
        )
    pieces, start = [], 0
    for length in split_sizes:
        pieces.append(self[(slice(None),) * dim + (slice(start, start + length),)])
        start += length
    return pieces


def unbind(self: np.ndarray, dim: int) -> list[np.ndarray]:
    dim = _wrap_dim(dim, self.ndim)
    return [self[(slice(None),) * dim + (i,)] for i in range(self.shape[dim])]


def select_backward(
    grad_output: np.ndarray, input_sizes: Sequence[int], dim: int, index: int
) -> np.ndarray:
    """Zeros of the input's shape with `grad_output` at `index` along `dim`."""
    result = np.zeros(tuple(input_sizes), grad_output.dtype)
    select(result, dim, index)[...] = grad_output
    return result


def slice_backward(
    grad_output: np.ndarray,
    input_sizes: Sequence[int],
    dim: int,
    start: int,
    end: int,
    step: int,
) -> np.ndarray:
    """Zeros of the input's shape with `grad_output` in the sliced positions."""
    result = np.zeros(tuple(input_sizes), grad_output.dtype)
    slice_(result, dim, start, end, step)[...] = grad_output
    return result


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
        raise RuntimeError(f"dim {wrapped[0]} appears multiple times in the list of dims")
    return wrapped if ndim else None


def reduce_sum(
    self: np.ndarray, dim: Sequence[int] | None, keepdim: bool, dtype: Any
) -> np.ndarray:
    axes = _dims(dim, self.ndim)
    return np.sum(self, axis=axes, keepdims=keepdim, dtype=_reduced_dtype(self, dtype))


def reduce_mean(
    self: np.ndarray, dim: Sequence[int] | None, keepdim: bool, dtype: Any
) -> np.ndarray:
    if dtype is None and self.dtype.kind not in "fc":
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating "
            f"point or complex dtype. Got: {_TYPE_NAMES.get(self.dtype.name, self.dtype.name)}"
        )
    axes = _dims(dim, self.ndim)
    target = self.dtype if dtype is None else dtype.numpy
    return np.mean(self, axis=axes, keepdims=keepdim, dtype=target)


_TYPE_NAMES = {"int64": "Long", "int32": "Int", "bool": "Bool"}


# ---- batch A: unary elementwise ----
# (functions of this group go here; add their names with `__all__ += [...]`)
#


# ---- batch B: binary, comparison and logical ----
# (functions of this group go here; add their names with `__all__ += [...]`)
#


# ---- batch C: reductions, scans and indexing ----
# (functions of this group go here; add their names with `__all__ += [...]`)
#


# ---- batch D: linear algebra and losses ----
# (functions of this group go here; add their names with `__all__ += [...]`)
#
