"""Kernels of the shape family that build a tensor from others: block_diag, rot90,
and complex numbers from two real tensors (complex, polar). PyTorch's checks and
messages."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ._common import _check_broadcast, _scalar_type, _wrap_dim

__all__ = ["block_diag", "rot90", "make_complex", "polar"]


def block_diag(tensors: Sequence[np.ndarray]) -> np.ndarray:
    """The tensors on the diagonal of one matrix (0-d as 1 x 1, 1-d as a row), zeros
    elsewhere; the operands are already of their common dtype."""
    matrices = []
    for i, tensor in enumerate(tensors):
        if tensor.ndim > 2:
            raise RuntimeError(
                "torch.block_diag: Input tensors must have 2 or fewer dimensions. Input "
                f"{i} has {tensor.ndim} dimensions"
            )
        matrices.append(tensor.reshape((1, -1)) if tensor.ndim < 2 else tensor)
    dtype = matrices[0].dtype if matrices else np.dtype(np.float32)
    rows = sum(m.shape[0] for m in matrices)
    cols = sum(m.shape[1] for m in matrices)
    result = np.zeros((rows, cols), dtype)
    row = col = 0
    for m in matrices:
        result[row : row + m.shape[0], col : col + m.shape[1]] = m
        row, col = row + m.shape[0], col + m.shape[1]
    return result


def rot90(self: np.ndarray, k: int, dims: Sequence[int]) -> np.ndarray:
    """`self` turned k quarter turns in the plane of `dims`, from the first dim
    towards the second."""
    if len(dims) != 2:
        raise RuntimeError(
            f"expected total rotation dims == 2, but got dims = {len(dims)}"
        )
    if self.ndim < 2:
        raise RuntimeError(
            f"expected total dims >= 2, but got total dims = {self.ndim}"
        )
    if dims[0] == dims[1] or abs(dims[0] - dims[1]) == self.ndim:
        raise RuntimeError(
            "expected rotation dims to be different, but got dim0 = "
            f"{dims[0]} and dim1 = {dims[1]}"
        )
    first, second = _wrap_dim(dims[0], self.ndim), _wrap_dim(dims[1], self.ndim)
    return np.array(np.rot90(self, k, axes=(first, second)), copy=True)


def _check_real_pair(a: np.ndarray, b: np.ndarray) -> None:
    """complex and polar: two floating tensors of one dtype that broadcast."""
    if a.dtype.kind != "f" or b.dtype.kind != "f":
        raise RuntimeError(
            "Expected both inputs to be Half, Float or Double tensors but got "
            f"{_scalar_type(a)} and {_scalar_type(b)}"
        )
    if a.dtype != b.dtype:
        raise RuntimeError(
            f"Expected object of scalar type {_scalar_type(a)} but got scalar type "
            f"{_scalar_type(b)} for second argument"
        )
    _check_broadcast(a, b)


def _complex_of(dtype: np.dtype) -> np.dtype:
    return np.dtype(np.complex64 if dtype == np.float32 else np.complex128)


def make_complex(real: np.ndarray, imag: np.ndarray) -> np.ndarray:
    """real + i imag, broadcast (torch.complex)."""
    _check_real_pair(real, imag)
    shape = np.broadcast_shapes(real.shape, imag.shape)
    result = np.empty(shape, _complex_of(real.dtype))
    result.real, result.imag = real, imag
    return result


def polar(abs: np.ndarray, angle: np.ndarray) -> np.ndarray:
    """abs (cos angle + i sin angle), broadcast."""
    _check_real_pair(abs, angle)
    shape = np.broadcast_shapes(abs.shape, angle.shape)
    result = np.empty(shape, _complex_of(abs.dtype))
    result.real, result.imag = abs * np.cos(angle), abs * np.sin(angle)
    return result
