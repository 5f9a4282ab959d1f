"""Kernels of the shape family that address memory by strides (as_strided,
as_strided_scatter, Tensor.unfold and unfold_backward, alias, lift_fresh) and the
copying forms of views (narrow_copy, unsafe_split, unsafe_split_with_sizes, lift).

Strides and storage offsets are PyTorch's: counted in elements, from the start of the
memory the tensor's data lives in (the numpy array that owns it)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ._common import _wrap_dim
from .shape import _storage_offset, split, split_with_sizes

__all__ = [
    "alias",
    "as_strided",
    "as_strided_scatter",
    "unfold",
    "unfold_backward",
    "narrow_copy",
    "unsafe_split",
    "unsafe_split_with_sizes",
    "lift",
]


def alias(self: np.ndarray) -> np.ndarray:
    """A view of all of `self` (a new tensor sharing its memory)."""
    return self.view()


def lift(self: np.ndarray) -> np.ndarray:
    """A copy of `self` (eager mode has nothing to lift)."""
    return np.array(self, copy=True)


def _storage(self: np.ndarray) -> tuple[np.ndarray, int]:
    """The memory `self` lives in as a flat array of its dtype, and where `self`
    starts in it: the owning array, or `self` copied (at 0) when that memory is not
    one contiguous block of its dtype."""
    root = self
    while isinstance(root.base, np.ndarray):
        root = root.base
    if not root.flags.c_contiguous or root.nbytes % self.itemsize:
        return np.array(self, copy=True).reshape(-1), 0
    flat = root.reshape(-1)
    flat = flat.view(self.dtype) if flat.dtype != self.dtype else flat
    return flat, _storage_offset(self) // self.itemsize


def _check_geometry(
    size: Sequence[int],
    stride: Sequence[int],
    offset: int,
    storage_size: int,
    item: int,
) -> None:
    """PyTorch's checks of an as_strided geometry against the storage's size."""
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError(
            f"as_strided: Negative strides are not supported at the moment, got "
            f"strides: {list(stride)}"
        )
    if any(n < 0 for n in size):
        raise RuntimeError(
            f"Storage size calculation overflowed with sizes={list(size)} and "
            f"strides={list(stride)}"
        )
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    needed = (
        0 if 0 in size else offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))
    )
    if needed > storage_size:
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset "
            f"{offset}, and itemsize {item} requiring a storage size of {needed * item} "
            f"are out of bounds for storage of size {storage_size * item}"
        )


def _strided_view(
    flat: np.ndarray, size: Sequence[int], stride: Sequence[int], offset: int
) -> np.ndarray:
    item = flat.itemsize
    _check_geometry(size, stride, offset, flat.size, item)
    start = flat[offset:] if offset < flat.size else flat[:0]
    return np.lib.stride_tricks.as_strided(
        start,
        tuple(size),
        tuple(s * item for s in stride),
        writeable=bool(flat.flags.writeable),
    )


def as_strided(
    self: np.ndarray,
    size: Sequence[int],
    stride: Sequence[int],
    storage_offset: int | None,
) -> np.ndarray:
    """A view of `self`'s memory with the given sizes, strides (in elements) and
    offset (self's own when None)."""
    flat, own_offset = _storage(self)
    offset = own_offset if storage_offset is None else storage_offset
    return _strided_view(flat, size, stride, offset)


def as_strided_scatter(
    self: np.ndarray,
    src: np.ndarray,
    size: Sequence[int],
    stride: Sequence[int],
    storage_offset: int | None,
) -> np.ndarray:
    """A contiguous copy of `self` with `src` written where as_strided(size, stride,
    storage_offset) of it points."""
    out = np.array(self, copy=True, order="C")
    view = _strided_view(out.reshape(-1), size, stride, storage_offset or 0)
    if tuple(src.shape) != tuple(view.shape):
        raise RuntimeError(
            "expected src to have a size equal to the slice of self. src size = "
            f"{list(src.shape)}, slice size = {list(view.shape)}"
        )
    view[...] = src
    return out


def _windows(length: int, dim: int, size: int, step: int) -> int:
    """How many windows of `size` every `step` fit in `length` (PyTorch's checks)."""
    if size > length:
        raise RuntimeError(
            f"maximum size for tensor at dimension {dim} is {length} but size is {size}"
        )
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    return (length - size) // step + 1


def unfold(self: np.ndarray, dimension: int, size: int, step: int) -> np.ndarray:
    """A view of every window of `size` elements along `dimension`, `step` apart: that
    dimension counts the windows and a new last one holds each window."""
    dim = _wrap_dim(dimension, max(self.ndim, 1))
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if self.ndim == 0:
        _windows(1, dim, size, step)
        return self.reshape(1)
    count = _windows(self.shape[dim], dim, size, step)
    shape = self.shape[:dim] + (count,) + self.shape[dim + 1 :] + (size,)
    strides = (
        self.strides[:dim]
        + (self.strides[dim] * step,)
        + self.strides[dim + 1 :]
        + (self.strides[dim],)
    )
    return np.lib.stride_tricks.as_strided(
        self, shape, strides, writeable=bool(self.flags.writeable)
    )


def unfold_backward(
    grad_in: np.ndarray, input_sizes: Sequence[int], dim: int, size: int, step: int
) -> np.ndarray:
    """The input's gradient of unfold: each window's gradient added back where the
    window was taken."""
    sizes = tuple(input_sizes)
    result = np.zeros(sizes, grad_in.dtype)
    if not sizes:
        return grad_in.reshape(()).copy()
    dim = _wrap_dim(dim, len(sizes))
    for j in range(grad_in.shape[dim]):
        window = np.moveaxis(np.take(grad_in, j, axis=dim), -1, dim)
        where = (slice(None),) * dim + (slice(j * step, j * step + size),)
        result[where] += window
    return result


def narrow_copy(self: np.ndarray, dim: int, start: int, length: int) -> np.ndarray:
    """A copy of `length` elements from `start` along `dim` (a negative start counts
    from the end)."""
    if self.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    dim = _wrap_dim(dim, self.ndim)
    extent = self.shape[dim]
    if not -extent <= start <= extent:
        raise IndexError(
            f"start out of range (expected to be in range of [{-extent}, {extent}], "
            f"but got {start})"
        )
    if start < 0:
        start += extent
    if length < 0 or start + length > extent:
        raise RuntimeError(
            f"start ({start}) + length ({length}) exceeds dimension size ({extent})."
        )
    where = (slice(None),) * dim + (slice(start, start + length),)
    return np.array(self[where], copy=True)


def unsafe_split(self: np.ndarray, split_size: int, dim: int) -> list[np.ndarray]:
    """split's pieces, as copies (PyTorch's are views autograd does not track)."""
    return [np.array(piece, copy=True) for piece in split(self, split_size, dim)]


def unsafe_split_with_sizes(
    self: np.ndarray, split_sizes: Sequence[int], dim: int
) -> list[np.ndarray]:
    """split_with_sizes's pieces, as copies."""
    return [
        np.array(piece, copy=True) for piece in split_with_sizes(self, split_sizes, dim)
    ]
