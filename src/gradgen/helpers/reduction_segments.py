"""The formula helper of segment_reduce under PyTorch's name, _segment_reduce_backward
(an operator in PyTorch, without a derivative of its own). Here it is computed with
gradgen operators, so segment_reduce has a double backward: each element takes its
segment's gradient through a gather by segment number."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..generated.ops import gather, where
from ..numpy_kernels import _wrap_dim
from ..numpy_kernels.reduction_segments import _segment_lengths
from ..tensor import Tensor

__all__ = ["_segment_reduce_backward"]


def _segment_index(lengths: np.ndarray, data_shape: tuple[int, ...], axis: int) -> Any:
    """The segment number of every element of data, in data's shape (an index for
    gather along `axis`)."""
    flat = lengths.reshape((-1, lengths.shape[-1]))
    rows = [np.repeat(np.arange(row.size), row) for row in flat]
    ids = np.stack(rows).reshape(data_shape[: axis + 1])
    ids = ids.reshape(ids.shape + (1,) * (len(data_shape) - axis - 1))
    return np.ascontiguousarray(np.broadcast_to(ids, data_shape))


def _per_segment(values: np.ndarray, grad: Tensor, axis: int) -> Tensor:
    """A lengths-shaped array as a tensor that broadcasts against grad."""
    extra = grad.dim() - values.ndim
    return Tensor(values.reshape(values.shape + (1,) * extra).astype(grad._data.dtype))


def _segment_reduce_backward(
    grad: Tensor | None,
    output: Tensor,
    data: Tensor,
    reduce: str,
    lengths: Tensor | None = None,
    offsets: Tensor | None = None,
    axis: int = 0,
    initial: Any = None,
) -> Tensor | None:
    """The gradient of segment_reduce's data: the segment's gradient for sum, divided
    by its length for mean, shared by the elements equal to the result for max and
    min, times the product of the others for prod."""
    if grad is None:
        return None
    reduce = {"amax": "max", "amin": "min"}.get(reduce, reduce)
    axis = _wrap_dim(axis, data.dim())
    given = _segment_lengths(
        data._data,
        None if lengths is None else lengths._data,
        None,
        None if offsets is None else offsets._data,
        axis,
        True,
    )
    index = Tensor(_segment_index(given, tuple(data.shape), axis))
    if reduce == "sum":
        return gather(grad, axis, index)
    if reduce == "mean":
        count = given + (initial is not None)
        return gather(
            grad / _per_segment(np.maximum(count, 1), grad, axis), axis, index
        )
    spread = gather(output, axis, index)
    if reduce in ("max", "min"):
        hit = (data._data == spread._data) | (
            np.isnan(data._data) & np.isnan(spread._data)
        )
        ties = np.zeros(grad.shape, np.int64)
        np.add.at(ties, _scatter_positions(index._data, axis), hit)
        shared = grad / Tensor(np.maximum(ties, 1).astype(grad._data.dtype))
        return gather(shared, axis, index) * Tensor(hit.astype(grad._data.dtype))
    # prod: the product of the others is output / x where x is not zero.
    nonzero = data._data != 0
    safe = where(Tensor(nonzero), data, Tensor(np.ones((), data._data.dtype)))
    others = gather(grad * output, axis, index) / safe
    if nonzero.all():
        return others
    exact = _products_of_others(data._data, given, axis, initial)
    zero_part = gather(grad, axis, index) * Tensor(exact)
    return where(Tensor(nonzero), others, zero_part)


def _scatter_positions(index: np.ndarray, axis: int) -> tuple[np.ndarray, ...]:
    """Where each element of data lands in a lengths-shaped array (for np.add.at)."""
    grids: list[Any] = list(np.indices(index.shape, sparse=True))
    grids[axis] = index
    return tuple(np.broadcast_arrays(*grids))


def _products_of_others(
    data: np.ndarray, lengths: np.ndarray, axis: int, initial: Any
) -> np.ndarray:
    """For each element, the product of the other elements of its segment (times
    `initial`), computed directly (where an element is zero)."""
    result = np.ones(data.shape, data.dtype)
    scale = 1 if initial is None else initial
    moved = np.moveaxis(data, axis, -1)
    out = np.moveaxis(result, axis, -1)
    for outer in np.ndindex(*data.shape[:axis]):
        start = 0
        for length in lengths[outer]:
            stop = start + int(length)
            segment = moved[outer][..., start:stop]
            for i in range(stop - start):
                others = np.delete(segment, i, axis=-1).prod(-1)
                out[outer][..., start + i] = others * scale
            start = stop
    return result
