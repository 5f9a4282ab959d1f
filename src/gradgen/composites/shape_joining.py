"""Composites of the shape family that build, split and tile tensors: atleast_*d,
broadcast_to/broadcast_tensors, the h/v/d/column stacks, tensor_split and the h/v/d
splits, unflatten, tile, fliplr/flipud, meshgrid, cartesian_prod, combinations and
repeat_interleave. PyTorch's CompositeImplicitAutograd functions of the same names:
autograd records the views, cats and index_selects they are made of."""

from __future__ import annotations

import itertools
import warnings

import numpy as np

from ..dtypes import int64, scalar_type_name
from ..factories import empty, tensor
from ..numpy_kernels import _wrap_dim
from ..tensor import Tensor
from ..generated import ops  # functions read at call time (the generated tie)
from ._common import unbatched

__all__ = [
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "atleast_1d_sequence",
    "atleast_2d_sequence",
    "atleast_3d_sequence",
    "broadcast_to",
    "broadcast_tensors",
    "hstack",
    "vstack",
    "dstack",
    "column_stack",
    "tensor_split_sections",
    "tensor_split_indices",
    "tensor_split_tensor",
    "hsplit",
    "vsplit",
    "dsplit",
    "unflatten",
    "tile",
    "fliplr",
    "flipud",
    "meshgrid",
    "meshgrid_indexing",
    "cartesian_prod",
    "combinations",
    "repeat_interleave_self_int",
    "repeat_interleave_self_tensor",
]


# -- at least n dimensions ------------------------------------------------------------


def atleast_1d(self: Tensor) -> Tensor:
    """`self`, or a 0-d tensor as shape (1,)."""
    return self.reshape((1,)) if self.dim() == 0 else self


def atleast_2d(self: Tensor) -> Tensor:
    """(1, 1) for a 0-d tensor, (1, n) for a vector, else `self`."""
    ndim = self.dim()
    if ndim == 0:
        return self.reshape((1, 1))
    return self.unsqueeze(0) if ndim == 1 else self


def atleast_3d(self: Tensor) -> Tensor:
    """(1, 1, 1), (1, n, 1) or (m, n, 1) for 0, 1 or 2 dims, else `self`."""
    ndim = self.dim()
    if ndim == 0:
        return self.reshape((1, 1, 1))
    if ndim == 1:
        return self.unsqueeze(0).unsqueeze(-1)
    return self.unsqueeze(-1) if ndim == 2 else self


def atleast_1d_sequence(tensors: list[Tensor]) -> list[Tensor]:
    return [atleast_1d(t) for t in tensors]


def atleast_2d_sequence(tensors: list[Tensor]) -> list[Tensor]:
    return [atleast_2d(t) for t in tensors]


def atleast_3d_sequence(tensors: list[Tensor]) -> list[Tensor]:
    return [atleast_3d(t) for t in tensors]


# -- broadcasting ---------------------------------------------------------------------


def broadcast_to(self: Tensor, size: tuple[int, ...]) -> Tensor:
    """An alias of expand (a view)."""
    return self.expand(size)


def _broadcast_shape(tensors: list[Tensor]) -> tuple[int, ...]:
    """The shape all of `tensors` broadcast to, with PyTorch's message when they do not."""
    shape: list[int] = []
    for t in tensors:
        other = list(t.shape)
        ndim = max(len(shape), len(other))
        shape = [1] * (ndim - len(shape)) + shape
        other = [1] * (ndim - len(other)) + other
        for i, (a, b) in enumerate(zip(shape, other)):
            if a != b and a != 1 and b != 1:
                raise RuntimeError(
                    f"The size of tensor a ({a}) must match the size of tensor b "
                    f"({b}) at non-singleton dimension {i}"
                )
            shape[i] = b if a == 1 else a
    return tuple(shape)


def broadcast_tensors(tensors: list[Tensor]) -> list[Tensor]:
    """Each tensor expanded to the shape they broadcast to together."""
    shape = _broadcast_shape(tensors)
    return [t.expand(shape) for t in tensors]


# -- stacking -------------------------------------------------------------------------


def _non_empty(tensors: list[Tensor], name: str) -> None:
    if not tensors:
        raise RuntimeError(f"{name} expects a non-empty TensorList")


def hstack(tensors: list[Tensor]) -> Tensor:
    """Concatenated along the columns (along dim 0 when they are vectors)."""
    _non_empty(tensors, "hstack")
    pieces = atleast_1d_sequence(tensors)
    return ops.cat(pieces, 0 if pieces[0].dim() == 1 else 1)


def vstack(tensors: list[Tensor]) -> Tensor:
    """Concatenated along the rows, vectors taken as rows (row_stack is its alias)."""
    _non_empty(tensors, "vstack")
    return ops.cat(atleast_2d_sequence(tensors), 0)


def dstack(tensors: list[Tensor]) -> Tensor:
    """Concatenated along the third dimension, after atleast_3d."""
    _non_empty(tensors, "dstack")
    return ops.cat(atleast_3d_sequence(tensors), 2)


def column_stack(tensors: list[Tensor]) -> Tensor:
    """Concatenated along dim 1, 0-d and 1-d tensors taken as columns."""
    _non_empty(tensors, "column_stack")
    columns = [t.reshape((t.numel(), 1)) if t.dim() <= 1 else t for t in tensors]
    return ops.cat(columns, 1)


# -- splitting ------------------------------------------------------------------------


def _slices(self: Tensor, bounds: list[int], dim: int) -> list[Tensor]:
    """The pieces of `self` between consecutive `bounds` along `dim` (slices: views)."""
    size = self.shape[dim]
    pieces = []
    for start, end in zip(bounds[:-1], bounds[1:]):
        start, end = min(max(start, 0), size), min(max(end, 0), size)
        pieces.append(self.slice(dim, start, max(start, end)))
    return pieces


def tensor_split_sections(self: Tensor, sections: int, dim: int = 0) -> list[Tensor]:
    """`sections` pieces, the first `size % sections` one element longer."""
    if self.dim() == 0:
        raise RuntimeError(
            "tensor_split expected at least a 1-dimensional tensor, but got a tensor "
            "with 0 dims"
        )
    if sections <= 0:
        raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
    dim = _wrap_dim(dim, self.dim())
    size = self.shape[dim]
    small, extra = divmod(size, sections)
    bounds = [0]
    for i in range(sections):
        bounds.append(bounds[-1] + small + (1 if i < extra else 0))
    return _slices(self, bounds, dim)


def tensor_split_indices(
    self: Tensor, indices: tuple[int, ...], dim: int = 0
) -> list[Tensor]:
    """The pieces before, between and after `indices` along `dim`."""
    if self.dim() == 0:
        raise RuntimeError(
            "tensor_split expected at least a 1-dimensional tensor, but got a tensor "
            "with 0 dims"
        )
    dim = _wrap_dim(dim, self.dim())
    size = self.shape[dim]
    bounds = [0] + [i + size if i < 0 else i for i in indices] + [size]
    return _slices(self, bounds, dim)


def tensor_split_tensor(
    self: Tensor, tensor_indices_or_sections: Tensor, dim: int = 0
) -> list[Tensor]:
    """A 0-d long tensor is a number of sections, a 1-d one a list of indices. Not
    under vmap (PyTorch's vmap has no rule nor fallback for it: the split is read from
    the values, which a BatchedTensor holds for example 0 only)."""
    split = tensor_indices_or_sections
    if not (unbatched(self) and unbatched(split)):
        raise RuntimeError(
            "Batching rule not implemented for "
            "aten::tensor_split.tensor_indices_or_sections. We could not generate a "
            "fallback."
        )
    if split.dtype != int64:
        raise RuntimeError(
            "tensor_split expected tensor_indices_or_sections to have dtype of long, "
            f"but got {scalar_type_name(split._data)}"
        )
    if split.dim() > 1:
        raise RuntimeError(
            "tensor_split expected tensor_indices_or_sections to be a "
            "zero-dimensional or one-dimensional tensor, but got a tensor with "
            f"{split.dim()} dims"
        )
    values = split._data.tolist()
    if split.dim() == 0:
        return tensor_split_sections(self, int(values), dim)
    return tensor_split_indices(self, tuple(values), dim)


def _split_along(
    self: Tensor, split: int | tuple[int, ...], name: str, min_dims: int, dim: int
) -> list[Tensor]:
    """hsplit, vsplit, dsplit: tensor_split along `dim`, a number of sections only
    when it divides the dimension."""
    if self.dim() < min_dims:
        raise RuntimeError(
            f"torch.{name} requires a tensor with at least {min_dims} dimension, but "
            f"got a tensor with {self.dim()} dimensions!"
        )
    if isinstance(split, tuple):
        return tensor_split_indices(self, split, dim)
    size = self.shape[dim]
    if split == 0 or size % split != 0:
        raise RuntimeError(
            f"torch.{name} attempted to split along dimension {dim}, but the size of "
            f"the dimension {size} is not divisible by the split_size {split}!"
        )
    return tensor_split_sections(self, split, dim)


def hsplit(self: Tensor, sections: int | tuple[int, ...]) -> list[Tensor]:
    """Split along the columns (dim 1; dim 0 for a vector)."""
    return _split_along(self, sections, "hsplit", 1, 0 if self.dim() == 1 else 1)


def vsplit(self: Tensor, sections: int | tuple[int, ...]) -> list[Tensor]:
    """Split along the rows (dim 0) of a tensor of 2 or more dims."""
    return _split_along(self, sections, "vsplit", 2, 0)


def dsplit(self: Tensor, sections: int | tuple[int, ...]) -> list[Tensor]:
    """Split along the depth (dim 2) of a tensor of 3 or more dims."""
    return _split_along(self, sections, "dsplit", 3, 2)


# -- reshaping and reordering ---------------------------------------------------------


def unflatten(self: Tensor, dim: int, sizes: tuple[int, ...]) -> Tensor:
    """Dimension `dim` viewed as `sizes` (one of them may be -1)."""
    dim = _wrap_dim(dim, self.dim())
    if len(sizes) == 0:
        raise RuntimeError("unflatten: sizes must be non-empty")
    size = self.shape[dim]
    known = [s for s in sizes if s != -1]
    product = 1
    for extent in known:
        product *= extent
    inferred = len(sizes) - len(known)
    if inferred > 1:
        raise RuntimeError("only one dimension can be inferred")
    if (inferred == 0 and product != size) or (
        inferred == 1 and (product == 0 or size % product != 0)
    ):
        raise RuntimeError(
            f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size "
            f"of dim {dim} ({size}) in the input tensor"
        )
    shape = tuple(self.shape)
    return self.view(shape[:dim] + tuple(sizes) + shape[dim + 1 :])


def tile(self: Tensor, dims: tuple[int, ...]) -> Tensor:
    """repeat, with `dims` padded with leading ones to the tensor's dimensions."""
    dims = tuple(dims)
    missing = self.dim() - len(dims)
    return self.repeat((1,) * missing + dims if missing > 0 else dims)


def fliplr(self: Tensor) -> Tensor:
    if self.dim() < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return self.flip((1,))


def flipud(self: Tensor) -> Tensor:
    if self.dim() < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return self.flip((0,))


# -- grids and combinations -----------------------------------------------------------


def meshgrid_indexing(tensors: list[Tensor], indexing: str) -> list[Tensor]:
    """Coordinate grids: tensor i varies along dim i ("ij"); "xy" swaps the first two."""
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    if indexing not in ("ij", "xy"):
        raise RuntimeError(
            'torch.meshgrid: indexing must be one of "xy" or "ij", but received: '
            f"{indexing}"
        )
    for t in tensors:
        if t.dim() > 1:
            raise RuntimeError(
                "torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: "
                f"{t}"
            )
        if t.dtype != tensors[0].dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    swap = indexing == "xy" and len(tensors) >= 2
    ordered = [tensors[1], tensors[0], *tensors[2:]] if swap else list(tensors)
    shape = tuple(t.numel() for t in ordered)
    grids = []
    for i, t in enumerate(ordered):
        view = [1] * len(shape)
        view[i] = -1
        grids.append(t.view(tuple(view)).expand(shape))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return grids


def meshgrid(tensors: list[Tensor]) -> list[Tensor]:
    """meshgrid without `indexing`: "ij", with PyTorch's warning that it will be needed."""
    warnings.warn(
        "torch.meshgrid: in an upcoming release, it will be required to pass the "
        "indexing argument.",
        UserWarning,
        stacklevel=3,
    )
    return meshgrid_indexing(tensors, "ij")


def cartesian_prod(tensors: list[Tensor]) -> Tensor:
    """Every combination of one element of each vector, as rows."""
    for t in tensors:
        if t.dim() != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid_indexing(tensors, "ij")
    return ops.stack([g.flatten() for g in grids], 1)


def combinations(self: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    """The length-`r` combinations of the vector's elements, as rows (itertools'
    order), with or without repeated elements."""
    if self.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(self.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return empty((0,), dtype=self.dtype)
    choose = (
        itertools.combinations_with_replacement
        if with_replacement
        else itertools.combinations
    )
    rows = list(choose(range(self.shape[0]), r))
    index = np.asarray(rows, dtype=np.int64).reshape(-1, r)
    columns = [self.index_select(0, tensor(index[:, k])) for k in range(r)]
    return ops.stack(columns, 1)


# -- repeat_interleave ----------------------------------------------------------------


def _repeated_along(self: Tensor, dim: int | None, counts: np.ndarray) -> Tensor:
    """index_select of each index along `dim` (of the flattened tensor without one)
    as many times as `counts` says."""
    if dim is None:
        self, dim = self.flatten(), 0
    dim = _wrap_dim(dim, self.dim())
    size = self.shape[dim]
    if counts.size == 1 and size != 1:
        counts = np.full(size, int(counts.reshape(())), dtype=np.int64)
    if counts.shape[0] != size:
        raise RuntimeError(
            "repeats must have the same size as input along dim, but got "
            f"repeats.size(0) = {counts.shape[0]} and input.size(0) = {size}"
        )
    if (counts < 0).any():
        raise RuntimeError("repeats can not be negative")
    index = np.repeat(np.arange(size, dtype=np.int64), counts)
    return self.index_select(dim, tensor(index))


def repeat_interleave_self_int(
    self: Tensor, repeats: int, dim: int | None = None, output_size: int | None = None
) -> Tensor:
    """Each element (each slice along `dim`) repeated `repeats` times in a row."""
    return _repeated_along(self, dim, np.asarray([repeats], dtype=np.int64))


def repeat_interleave_self_tensor(
    self: Tensor,
    repeats: Tensor,
    dim: int | None = None,
    output_size: int | None = None,
) -> Tensor:
    """Element (slice) i repeated `repeats[i]` times (a 0-d or 1-element `repeats`
    repeats every one equally). The counts go through the repeat_interleave operator
    (not read from the array), so that under vmap each example takes its own."""
    if repeats.dim() > 1:
        raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
    if dim is None:
        self, dim = self.flatten(), 0
    dim = _wrap_dim(dim, self.dim())
    size = self.shape[dim]
    repeats = repeats.reshape(-1)
    if repeats.shape[0] == 1 and size != 1:
        repeats = repeats.expand(size)
    if repeats.shape[0] != size:
        raise RuntimeError(
            "repeats must have the same size as input along dim, but got "
            f"repeats.size(0) = {repeats.shape[0]} and input.size(0) = {size}"
        )
    index = ops.repeat_interleave(repeats, output_size=output_size)
    return self.index_select(dim, index)
