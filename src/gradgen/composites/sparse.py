"""Composites of the sparse family: embedding's backward, embedding_bag."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ..dtypes import spelling
from ._common import BATCHED, unbatched
from ..tensor import Tensor
from ..generated import ops  # functions read at call time (the generated tie)

__all__ = ["embedding_backward", "embedding_bag", "embedding_bag_padding_idx"]


def embedding_backward(
    grad: Tensor,
    indices: Tensor,
    num_weights: int,
    padding_idx: int,
    scale_grad_by_freq: bool,
    sparse: bool,
) -> Tensor:
    """embedding's weight gradient: embedding_dense_backward (gradgen has no sparse
    tensors, so sparse=True is NotImplementedError)."""
    if sparse:
        raise NotImplementedError(
            "embedding(sparse=True): gradgen has no sparse tensors for the gradient"
        )
    return ops.embedding_dense_backward(
        grad, indices, num_weights, padding_idx, scale_grad_by_freq
    )


# -- embedding_bag ------------------------------------------------------------------------
#
# PyTorch computes embedding_bag with its own kernel (_embedding_bag, whose backward
# operators have no formulas of their own). Here it is a composite: the rows are picked
# by `embedding` and summed into their bags by `embedding_dense_backward` (a sum by
# index), and max mode gathers each bag's largest value per column, so the gradients,
# double backward and forward mode are those operators'. The three index outputs are
# PyTorch's CPU ones for float64 weights (its float32 sum mode may leave offset2bag
# empty).

_SUM, _MEAN, _MAX = 0, 1, 2


class _Bags(NamedTuple):
    """Which bag each index goes to, and the indices that count (not padding_idx)."""

    number: int  # of bags
    offset2bag: np.ndarray  # (n,): the bag of each index
    kept: np.ndarray  # (n,) bool: the index is not padding_idx
    bag_size: np.ndarray  # (count,): indices that count in each bag


def _check_bag_inputs(
    weight: Tensor, indices: Tensor, offsets: Tensor, per_sample_weights: Tensor | None
) -> None:
    """PyTorch's checks of embedding_bag's tensors (its messages)."""
    for tensor in (indices, offsets):
        if tensor._data.dtype not in (np.int64, np.int32):
            raise RuntimeError(
                "Expected tensor for argument #1 'indices' to have one of the following "
                f"scalar types: Long, Int; but got {spelling(tensor._data).tensor_type} "
                "instead (while checking arguments for embedding_bag)"
            )
    if per_sample_weights is None:
        return
    if per_sample_weights.dtype != weight.dtype:
        raise RuntimeError(
            "Expected tensor for argument #1 'weight' to have the same type as tensor "
            "for argument #1 'per_sample_weights'; but type "
            f"{spelling(weight._data).tensor_type} does not equal "
            f"{spelling(per_sample_weights._data).tensor_type} (while checking "
            "arguments for embedding_bag)"
        )
    if per_sample_weights.numel() != indices.numel():
        raise RuntimeError(
            "Expected per_sample_weights.value().numel() == indices.numel() to be "
            "true, but got false.  (Could this error message be improved?  If so, "
            "please report an enhancement request to PyTorch.)"
        )


def _check_bag_indices(indices: np.ndarray, num_weights: int, float32: bool) -> None:
    """Every index a row of the weight (PyTorch's message depends on its kernel: the
    float32 one names the position)."""
    outside = np.nonzero((indices < 0) | (indices >= num_weights))[0]
    if not outside.size:
        return
    at = int(outside[0])
    if float32:
        raise RuntimeError(
            f"Index {at} of input takes value {indices[at]} which is not in the valid "
            f"range [0, {num_weights})"
        )
    raise RuntimeError(
        "embedding_bag: Expected idx >= 0 && idx < num_embeddings but found idx to be "
        f"{indices[at]}"
    )


def _bags(
    indices: np.ndarray,
    offsets: np.ndarray,
    include_last_offset: bool,
    padding_idx: int,
    num_weights: int,
    float32: bool,
) -> _Bags:
    """The bags that `offsets` start (with include_last_offset, the last offset only
    closes them: the last bag still runs to the end of the indices)."""
    n = indices.size
    count = max(offsets.size - 1, 0) if include_last_offset else offsets.size
    if offsets.size:
        if offsets[0] != 0:
            raise RuntimeError(
                "offsets[0] has to be 0, i.e., the first sequence in the mini-batch "
                f"has to start from position 0. However, got {offsets[0]}"
            )
        if offsets[-1] > n:
            raise RuntimeError(
                f"offsets[-1] can not be greater than input's length {n} but got "
                f"offsets[-1] of {offsets[-1]}"
            )
        drops = np.nonzero(np.diff(offsets) < 0)[0]
        if drops.size:
            at = int(drops[0]) + 1
            raise RuntimeError(
                "embedding_bag: offsets must be non-decreasing, but offsets"
                f"[{at}] = {offsets[at]} follows {offsets[at - 1]}"
            )
    _check_bag_indices(indices, num_weights, float32)
    starts = offsets[:count].astype(np.int64)
    offset2bag = np.searchsorted(starts, np.arange(n), side="right") - 1
    kept = (indices != padding_idx) & (offset2bag >= 0)  # no bag without offsets
    bag_size = np.bincount(offset2bag[kept], minlength=count)[:count]
    return _Bags(count, offset2bag, kept, bag_size)


def _bag_max(
    weight: Tensor, indices: np.ndarray, bags: _Bags
) -> tuple[Tensor, np.ndarray]:
    """max mode: per bag and column the largest value (its first row on ties), and
    those rows; an empty bag gives zeros."""
    rows = indices[bags.kept].astype(np.int64)
    owner = bags.offset2bag[bags.kept]
    dim = weight.shape[1]
    max_indices = np.zeros((bags.number, dim), np.int64)
    if rows.size:
        values = weight._data[rows]
        filled, starts = np.unique(owner, return_index=True)
        group = np.searchsorted(filled, owner)
        largest = np.maximum.reduceat(values, starts, axis=0)
        position = np.arange(rows.size)[:, None]
        first = np.where(values == largest[group], position, rows.size)
        max_indices[filled] = rows[np.minimum.reduceat(first, starts, axis=0)]
    empty = Tensor((bags.bag_size == 0).reshape(-1, 1))
    output = weight.gather(0, Tensor(max_indices)).masked_fill(empty, 0.0)
    return output, max_indices


def _bag_sum(
    weight: Tensor,
    indices: np.ndarray,
    bags: _Bags,
    scale_grad_by_freq: bool,
    per_sample_weights: Tensor | None,
) -> Tensor:
    """sum mode: each bag's rows (times their per_sample_weights) added up."""
    rows = ops.embedding(
        weight, Tensor(indices[bags.kept]), -1, scale_grad_by_freq, False
    )
    if per_sample_weights is not None:
        positions = Tensor(np.nonzero(bags.kept)[0])
        factors = per_sample_weights.reshape(-1).index_select(0, positions)
        rows = rows * factors.unsqueeze(1)
    owners = Tensor(bags.offset2bag[bags.kept])
    return ops.embedding_dense_backward(rows, owners, bags.number, -1, False)


def embedding_bag_padding_idx(
    weight: Tensor,
    indices: Tensor,
    offsets: Tensor,
    scale_grad_by_freq: bool,
    mode: int,
    sparse: bool,
    per_sample_weights: Tensor | None,
    include_last_offset: bool,
    padding_idx: int | None,
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """(bags (B, dim), offset2bag, bag_size, max_indices): the rows of weight that the
    1-D `indices` pick, reduced (sum, mean or max: mode 0, 1, 2) over the bags that
    `offsets` start; padding_idx's rows left out (of the mean's count too)."""
    num_weights = weight.shape[0]
    padding = -1
    if padding_idx is not None:
        if not -num_weights <= padding_idx < num_weights:
            raise RuntimeError(
                "padding_idx must be within the number of embeddings, "
                f"-{num_weights} through {num_weights - 1}, but got {padding_idx}"
            )
        padding = padding_idx % num_weights
    if mode not in (_SUM, _MEAN, _MAX):
        raise RuntimeError("`mode` must be sum, mean, or max.")
    if sparse:
        raise NotImplementedError(
            "embedding_bag(sparse=True): gradgen has no sparse tensors for the gradient"
        )
    _check_bag_inputs(weight, indices, offsets, per_sample_weights)
    if not (unbatched(indices) and unbatched(offsets)) or (
        mode == _MAX and not unbatched(weight)
    ):  # the bags (and max mode's rows) read from the values: inside vmap
        return _each_example(
            weight,
            indices,
            offsets,
            (scale_grad_by_freq, mode, sparse),
            per_sample_weights,
            (include_last_offset, padding_idx),
        )
    flat = indices._data.reshape(-1)
    float32 = weight._data.dtype == np.float32
    offset_values = offsets._data.reshape(-1)
    bags = _bags(
        flat, offset_values, include_last_offset, padding, num_weights, float32
    )
    dtype = flat.dtype
    # Sum mode's kernel leaves bag_size and max_indices zero, one per offset.
    unused = np.zeros(offsets.numel(), dtype)
    size = unused if mode == _SUM else bags.bag_size.astype(dtype)
    if mode == _MAX:
        output, max_indices = _bag_max(weight, flat, bags)
        extra = max_indices.astype(dtype)
    else:
        output = _bag_sum(weight, flat, bags, scale_grad_by_freq, per_sample_weights)
        if mode == _MEAN:
            divisor = np.maximum(bags.bag_size, 1).astype(weight._data.dtype)
            output = output / Tensor(divisor.reshape(-1, 1))
        extra = size
    offset2bag = Tensor(bags.offset2bag.astype(dtype))
    return output, offset2bag, Tensor(size), Tensor(extra)


def _each_example(
    weight: Tensor,
    indices: Tensor,
    offsets: Tensor,
    flags: tuple[bool, int, bool],
    per_sample_weights: Tensor | None,
    last: tuple[bool, int | None],
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """embedding_bag once per example of vmap (as PyTorch's fallback runs it)."""
    assert BATCHED.per_example is not None  # a BatchedTensor: gradgen.func loaded

    def one(w: Tensor, i: Tensor, o: Tensor, p: Tensor | None) -> Any:
        return embedding_bag_padding_idx(w, i, o, *flags, p, *last)

    args = (weight, indices, offsets, per_sample_weights)
    return BATCHED.per_example(  # type: ignore[no-any-return]
        "embedding_bag.padding_idx", one, args
    )


def embedding_bag(
    weight: Tensor,
    indices: Tensor,
    offsets: Tensor,
    scale_grad_by_freq: bool = False,
    mode: int = 0,
    sparse: bool = False,
    per_sample_weights: Tensor | None = None,
    include_last_offset: bool = False,
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """embedding_bag without padding_idx."""
    return embedding_bag_padding_idx(
        weight,
        indices,
        offsets,
        scale_grad_by_freq,
        mode,
        sparse,
        per_sample_weights,
        include_last_offset,
        None,
    )
