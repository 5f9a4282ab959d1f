"""Formula helpers of the shape family's strided and building operators (PyTorch's
FunctionsManual names): as_strided_backward, as_strided_scatter_backward (with
TensorGeometry, the sizes, strides and offset they need), block_diag_backward and
polar_backward."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from ..dtypes import dtype
from ..generated.ops import index_add, index_select, real, sgn
from ..numpy_kernels.shape import _storage_offset
from ..tensor import Tensor

__all__ = [
    "TensorGeometry",
    "as_strided_backward",
    "as_strided_scatter_backward",
    "block_diag_backward",
    "polar_backward",
]


class Geometry(NamedTuple):
    """A tensor's sizes, strides (in elements) and storage offset."""

    sizes: tuple[int, ...]
    strides: tuple[int, ...]
    storage_offset: int


def TensorGeometry(tensor: Tensor) -> Geometry:  # noqa: N802  (PyTorch's name)
    """The geometry of `tensor` in the memory it lives in."""
    data = tensor._data
    return Geometry(
        tuple(data.shape),
        tuple(s // data.itemsize for s in data.strides),
        _storage_offset(data) // data.itemsize,
    )


def _positions(sizes: Sequence[int], strides: Sequence[int], offset: int) -> np.ndarray:
    """The storage position of every element of a strided geometry, flattened."""
    positions = np.full(tuple(sizes), offset, np.int64)
    for dim, (size, stride) in enumerate(zip(sizes, strides)):
        shape = [1] * len(sizes)
        shape[dim] = size
        positions = positions + (np.arange(size) * stride).reshape(shape)
    return positions.reshape(-1)


def as_strided_backward(
    grad: Tensor | None,
    input_geometry: Geometry,
    sizes: Sequence[int],
    strides: Sequence[int],
    storage_offset: int | None,
) -> Tensor | None:
    """Scatter-add the output's gradient into the storage the output reads, then read
    it back at the input's geometry (divided where the input itself overlaps)."""
    if grad is None:
        return None
    offset = input_geometry.storage_offset if storage_offset is None else storage_offset
    out_pos = _positions(sizes, strides, offset)
    in_pos = _positions(*input_geometry)
    extent = int(max(out_pos.max(initial=-1), in_pos.max(initial=-1))) + 1
    zeros = Tensor(np.zeros((extent,), grad._data.dtype))
    storage = index_add(zeros, 0, Tensor(out_pos), grad.reshape(-1))
    counts = np.bincount(in_pos, minlength=extent)
    if counts.max(initial=0) > 1:
        storage = storage / Tensor(np.maximum(counts, 1).astype(grad._data.dtype))
    return index_select(storage, 0, Tensor(in_pos)).reshape(input_geometry.sizes)


def as_strided_scatter_backward(
    grad: Tensor | None,
    input_geometry: Geometry,
    src_geometry: Geometry,
    sizes: Sequence[int],
    strides: Sequence[int],
    storage_offset: int | None,
) -> Tensor | None:
    """`self`'s gradient: the output's, zero where src was written."""
    if grad is None:
        return None
    src = grad.new_zeros(tuple(src_geometry.sizes))
    return grad.contiguous().as_strided_scatter(src, sizes, strides, storage_offset)


def block_diag_backward(
    grad: Tensor | None, sizes: Sequence[Sequence[int]], dtypes: Sequence[dtype]
) -> list[Tensor | None]:
    """Each input's block of the gradient (its diagonal block), in its shape and
    dtype."""
    if grad is None:
        return [None] * len(sizes)
    grads: list[Tensor | None] = []
    row = col = 0
    for shape, kind in zip(sizes, dtypes):
        rows, cols = (1, shape[0] if shape else 1) if len(shape) < 2 else shape
        block = grad.narrow(0, row, rows).narrow(1, col, cols).reshape(tuple(shape))
        if block.is_complex() and not kind.is_complex:
            block = real(block)
        grads.append(block.to(kind))
        row, col = row + rows, col + cols
    return grads


def polar_backward(grad: Tensor | None, result: Tensor) -> tuple[Tensor | None, ...]:
    """result = abs e^(i angle): grad abs = Re(conj(grad) sgn(result)), grad angle =
    Re(conj(grad) i result)."""
    if grad is None:
        return None, None
    grad_conj = grad.conj()
    grad_abs = real(grad_conj * sgn(result))
    grad_angle = real(grad_conj * (result * 1j))
    return grad_abs, grad_angle
