"""Shape kernels: views, reshapes, splits, flips, diagonals and padding."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..dtypes import spelling
from ._common import _along, _not_implemented_for, _reduction_dims, _wrap_dim

__all__ = [
    "repeat_interleave_counts",
    "permute",
    "expand",
    "sum_to_size",
    "view",
    "unsafe_view",
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
    "flip",
    "roll",
    "repeat",
    "diagonal",
    "diagonal_backward",
    "diag_embed",
    "view_as_real",
    "view_as_complex",
    "constant_pad_nd",
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
            f"expand({spelling(self).tensor_type}{{{list(self.shape)}}}, "
            f"size={list(size)}): the "
            "number of sizes provided "
            f"({len(size)}) must be greater or equal to the number of dimensions in the "
            f"tensor ({self.ndim})"
        )
    leading = len(size) - self.ndim
    target = []
    for i, extent in enumerate(size):
        if i < leading:
            if extent == -1:
                raise RuntimeError(
                    f"The expanded size of the tensor (-1) isn't allowed in a leading, "
                    f"non-existing dimension {i}"
                )
        else:
            existing = self.shape[i - leading]
            if extent == -1:
                extent = existing
            elif extent != existing and existing != 1:
                raise RuntimeError(
                    f"The expanded size of the tensor ({extent}) must match the existing "
                    f"size ({existing}) at non-singleton dimension {i}.  Target sizes: "
                    f"{list(size)}.  Tensor sizes: {list(self.shape)}"
                )
        if extent < 0:
            raise RuntimeError(
                f"Trying to create tensor with negative dimension {extent}: {list(size)}"
            )
        target.append(extent)
    return np.broadcast_to(self, target)


def sum_to_size(self: np.ndarray, size: Sequence[int]) -> np.ndarray:
    """Sum `self` down to `size`, which must broadcast to `self`'s shape."""
    size = tuple(size)
    leading = self.ndim - len(size)
    if leading > 0 and size == self.shape[leading:]:
        # The common case (a bias's gradient): sum over the leading dimensions only,
        # the reduction's own fresh array, which AccumulateGrad takes without a copy.
        reduced: np.ndarray = np.add.reduce(self, axis=tuple(range(leading)))
        return reduced
    if leading < 0 or any(
        s != 1 and s != self.shape[leading + i] for i, s in enumerate(size)
    ):
        raise RuntimeError(
            f"size {{{list(size)}}} is not expandable to size {{{list(self.shape)}}}."
        )
    axes = tuple(range(leading)) + tuple(
        leading + i
        for i, s in enumerate(size)
        if s == 1 and self.shape[leading + i] != 1
    )
    if not axes:
        # Nothing to sum; a new tensor must not share memory (and not its version
        # counter) with its input, so this is a copy.
        return self.reshape(size).copy()
    if len(axes) == leading:
        # Only leading dimensions go (the others are all 1 in both): a fresh array.
        fresh: np.ndarray = np.add.reduce(self, axis=axes)
        return fresh
    summed: np.ndarray = np.add.reduce(self, axis=axes, keepdims=True)
    return summed.reshape(size)


def view(self: np.ndarray, size: Sequence[int]) -> np.ndarray:
    """A view with another shape; an error, as in PyTorch, when no view can have it."""
    shape = tuple(size)
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = int(np.prod([s for s in shape if s != -1]))
    if -1 in shape:
        if known == 0 or self.size % known:
            raise RuntimeError(
                f"shape '{list(shape)}' is invalid for input of size {self.size}"
            )
        shape = tuple(self.size // known if s == -1 else s for s in shape)
    elif known != self.size:
        raise RuntimeError(
            f"shape '{list(shape)}' is invalid for input of size {self.size}"
        )
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
    """A view with a new dimension of size 1 at `dim`: np.expand_dims's reshape (the
    same strides), without its argument checks (a fifth of its time)."""
    shape = self.shape
    index = _wrap_dim(dim, self.ndim + 1)
    return self.reshape(shape[:index] + (1,) + shape[index:])


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
    # The Ellipsis keeps the result an array (a 0-d view for 1-d input), never a
    # numpy scalar copy, so the result shares memory with `self`.
    return self[(slice(None),) * dim + (index, Ellipsis)]


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


def split_with_sizes(
    self: np.ndarray, split_sizes: Sequence[int], dim: int
) -> list[np.ndarray]:
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
    if self.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
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


def _storage_offset(self: np.ndarray) -> int:
    """Where `self` starts in the memory of the array that owns it, in bytes."""
    root = self
    while isinstance(root.base, np.ndarray):
        root = root.base
    return self.__array_interface__["data"][0] - root.__array_interface__["data"][0]


def view_as_real(self: np.ndarray) -> np.ndarray:
    """A real view of a complex array with a last dimension of size 2: [real, imag]."""
    if self.dtype.kind != "c":
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return self[..., None].view(self.real.dtype)


def view_as_complex(self: np.ndarray) -> np.ndarray:
    """A complex view of a float array whose last dimension is [real, imag], with
    PyTorch's checks (strides and offset in whole complex elements)."""
    if self.dtype.kind != "f":
        name = spelling(self).scalar_type
        raise RuntimeError(
            "view_as_complex is only supported for half, float and double tensors, but "
            f"got a tensor of scalar type: {name}"
        )
    if self.ndim == 0:
        raise RuntimeError("Input tensor must have one or more dimensions")
    if self.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    complex_type = np.complex128 if self.dtype == np.float64 else np.complex64
    if self.size == 0:
        # numpy gives an empty array arbitrary strides; there is no element to share.
        return np.empty(self.shape[:-1], complex_type)
    item = self.itemsize
    if self.strides[-1] != item:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(stride % (2 * item) for stride in self.strides[:-1]):
        raise RuntimeError(
            "Tensor must have a stride divisible by 2 for all but last dimension"
        )
    if _storage_offset(self) % (2 * item):
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    return self.view(complex_type)[..., 0]


def flip(self: np.ndarray, dims: Sequence[int]) -> np.ndarray:
    """A copy reversed along every dim in `dims`."""
    wrapped = _reduction_dims(dims, self.ndim) if len(dims) else ()
    if self.ndim == 0 or not wrapped:
        return self.copy()
    return np.flip(self, axis=wrapped).copy()


def roll(self: np.ndarray, shifts: Sequence[int], dims: Sequence[int]) -> np.ndarray:
    """Roll along dims by shifts; with no dims, roll the flattened tensor."""
    if len(dims) == 0:
        if len(shifts) != 1:
            raise RuntimeError(
                f"shifts and dimensions must align. shifts: {len(shifts)}, dims:0"
            )
        return np.roll(self.reshape(-1), shifts[0]).reshape(self.shape)
    if len(shifts) != len(dims):
        raise RuntimeError(
            f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}"
        )
    if self.ndim == 0:
        raise IndexError(
            f"Dimension specified as {dims[0]} but tensor has no dimensions"
        )
    axes = tuple(_wrap_dim(d, self.ndim) for d in dims)
    return np.roll(self, tuple(shifts), axis=axes)


def repeat(self: np.ndarray, repeats: Sequence[int]) -> np.ndarray:
    """Tile `self` `repeats` times along each dim (leading new dims as needed)."""
    if len(repeats) < self.ndim:
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of "
            "dimensions of tensor"
        )
    padded = (1,) * (len(repeats) - self.ndim) + self.shape
    target = [size * count for size, count in zip(padded, repeats)]
    for extent in target:
        if extent < 0:
            raise RuntimeError(
                f"Trying to create tensor with negative dimension {extent}: {target}"
            )
    return np.tile(self.reshape(padded), tuple(repeats))


def unsafe_view(self: np.ndarray, size: Sequence[int]) -> np.ndarray:
    """`view` whose result autograd does not treat as a view (PyTorch's _unsafe_view,
    used on fresh results that nothing else refers to). An input whose memory is not
    C-ordered (a clone of a transposed or expanded tensor: gradgen's clone keeps the
    layout) is made so first, as PyTorch's reshape clones with contiguous format."""
    return view(np.ascontiguousarray(self), size)


def constant_pad_nd(self: np.ndarray, pad: Sequence[int], value: Any) -> np.ndarray:
    """`self` padded with `value`: pad = (before, after) pairs for the last dimension
    first, then the one before it, ...; a negative amount removes elements."""
    if len(pad) % 2:
        raise RuntimeError(
            f"Length of pad must be even but instead it equals {len(pad)}"
        )
    pairs = len(pad) // 2
    if self.ndim < pairs:
        raise RuntimeError(
            "Length of pad should be no more than twice the number of dimensions of the "
            f"input. Pad length is {len(pad)}while the input has {self.ndim}dimensions."
        )
    if isinstance(value, complex) and self.dtype.kind != "c":
        raise RuntimeError(
            f"value cannot be converted to type {spelling(self).cpp} "
            "without overflow"
        )
    cropped = self
    index: list[slice] = [slice(None)] * self.ndim
    positive = False
    for dim in range(self.ndim - pairs, self.ndim):
        before, after = (
            pad[2 * (self.ndim - dim - 1)],
            pad[2 * (self.ndim - dim - 1) + 1],
        )
        start, size = 0, self.shape[dim]
        for amount, at_start in ((before, True), (after, False)):
            if amount < 0:
                if size + amount < 0:
                    raise RuntimeError("narrow(): length must be non-negative.")
                if at_start:
                    start -= amount
                size += amount
            elif amount:
                positive = True
        index[dim] = slice(start, start + size)
    cropped = self[tuple(index)]
    if not positive:
        return cropped.copy()
    shape = list(self.shape)
    placed: list[slice] = [slice(None)] * self.ndim
    for dim in range(self.ndim - pairs, self.ndim):
        before, after = (
            pad[2 * (self.ndim - dim - 1)],
            pad[2 * (self.ndim - dim - 1) + 1],
        )
        shape[dim] = self.shape[dim] + before + after
        if shape[dim] < 0:
            raise RuntimeError(
                f"The input size {self.shape[dim]}, plus negative padding {before} and "
                f"{after} resulted in a negative output size, which is invalid. Check "
                f"dimension {dim} of your input."
            )
        start = max(before, 0)
        placed[dim] = slice(start, start + cropped.shape[dim])
    result = np.full(
        shape,
        np.array(value).astype(self.dtype) if self.dtype.kind != "c" else value,
        self.dtype,
    )
    result[tuple(placed)] = cropped
    return result


def _diagonal_dims(ndim: int, dim1: int, dim2: int) -> tuple[int, int]:
    first, second = _wrap_dim(dim1, ndim), _wrap_dim(dim2, ndim)
    if first == second:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return first, second


def diagonal(self: np.ndarray, offset: int, dim1: int, dim2: int) -> np.ndarray:
    """A view of the diagonal `offset` of the (dim1, dim2) planes, as a last dim (the
    other dims keep their order). Written through when the input is writable."""
    first, second = _diagonal_dims(self.ndim, dim1, dim2)
    if offset >= 0:
        start = _along(second, self.ndim, slice(min(offset, self.shape[second]), None))
    else:
        start = _along(first, self.ndim, slice(min(-offset, self.shape[first]), None))
    base = self[start]
    length = min(base.shape[first], base.shape[second])
    kept = [d for d in range(self.ndim) if d not in (first, second)]
    shape = tuple(base.shape[d] for d in kept) + (length,)
    strides = tuple(base.strides[d] for d in kept) + (
        base.strides[first] + base.strides[second],
    )
    return np.lib.stride_tricks.as_strided(
        base, shape, strides, writeable=bool(base.flags.writeable)
    )


def diagonal_backward(
    grad_output: np.ndarray,
    input_sizes: Sequence[int],
    offset: int,
    dim1: int,
    dim2: int,
) -> np.ndarray:
    """Zeros of the input's shape with `grad_output` written on the diagonal."""
    result = np.zeros(tuple(input_sizes), grad_output.dtype)
    diagonal(result, offset, dim1, dim2)[...] = grad_output
    return result


def diag_embed(self: np.ndarray, offset: int, dim1: int, dim2: int) -> np.ndarray:
    """A tensor with self's last dim on the diagonal `offset` of new (dim1, dim2)
    planes, zeros elsewhere."""
    ndim = self.ndim + 1
    first, second = _diagonal_dims(ndim, dim1, dim2)
    size = self.shape[-1] + abs(offset)
    leading = list(self.shape[:-1])
    shape = []
    for d in range(ndim):
        shape.append(size if d in (first, second) else leading.pop(0))
    result = np.zeros(tuple(shape), self.dtype)
    diagonal(result, offset, first, second)[...] = self
    return result


_INDEX_DTYPES = (np.dtype(np.int64), np.dtype(np.int32))


def repeat_interleave_counts(
    repeats: np.ndarray, output_size: int | None
) -> np.ndarray:
    """repeat_interleave(repeats): index i repeated repeats[i] times, in repeats'
    dtype (int64 or int32, the two PyTorch's CPU kernel is compiled for)."""
    if repeats.ndim != 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    if repeats.dtype not in _INDEX_DTYPES:
        raise _not_implemented_for("repeat_interleave_cpu", repeats)
    if (repeats < 0).any():
        raise RuntimeError("repeats can not be negative")
    result = np.repeat(np.arange(repeats.shape[0], dtype=repeats.dtype), repeats)
    if output_size is not None and output_size != result.shape[0]:
        raise RuntimeError("allocated size does not match required size")
    return result
