"""Batching rules of whole-tensor reductions, indexing and the add-a-product
contractions (the `custom` and `contraction` declarations of those families):

- reductions over the whole example (median, norm, trace, dist, count_nonzero,
  aminmax) run over the example's elements flattened to one dim after the batch;
- flat indices (take, put, embedding_dense_backward) get each example's offset into
  the batch flattened as one;
- index / index_put with batched indices index the batch dim too (by arange);
  index_add / index_copy / index_fill / index_reduce shift `dim` while the index is
  one for the whole batch;
- addmv, addr, baddbmm, addbmm: the product by the batched matrix products, then the
  added term.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..dispatch import OperatorHandle
from ..factories import zeros_like
from ..generated import ops
from ..tensor import Tensor
from .batching import (
    HANDLES,
    Rule,
    batch_size,
    broadcast_value,
    inplace_error,
    is_batched,
    mutates_self,
    wrap,
)
from .batching_schema import pad, wrap_dim

# -- whole-tensor reductions -------------------------------------------------------------


def _rows(value: Tensor, size: int) -> Tensor:
    """A batch as (B, elements of one example)."""
    return ops.reshape(value, [size, max(value.numel() // max(size, 1), 1)])


def _median(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    """median / nanmedian: the `dim` overload over each flattened example."""
    rows = _rows(broadcast_value(args[0], level), batch_size(level))
    values, _ = HANDLES[handle.name + ".dim"].call(rows, 1, False)
    return wrap(values, level)


def _norm(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    """norm.Scalar / norm.ScalarOpt_dtype: over each flattened example."""
    rows = _rows(broadcast_value(args[0], level), batch_size(level))
    p = args[1] if len(args) > 1 else 2
    if handle.name == "norm.ScalarOpt_dtype":
        target = HANDLES["norm.ScalarOpt_dim_dtype"]
        return wrap(target.call(rows, p, [1], False, args[2]), level)
    return wrap(HANDLES["norm.ScalarOpt_dim"].call(rows, p, [1], False), level)


def _dist(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    difference = HANDLES["sub.Tensor"].call(args[0], args[1], 1)
    p = args[2] if len(args) > 2 else 2
    return HANDLES["norm.Scalar"].call(difference, p)


def _trace(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    diagonal = HANDLES["diagonal"].call(args[0]._value, 0, 1, 2)
    return wrap(HANDLES["sum.dim_IntList"].call(diagonal, [-1], False, None), level)


def _count_nonzero(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    self = args[0]
    dim = args[1] if len(args) > 1 else None
    value = broadcast_value(self, level)
    if dim is None:
        counted = HANDLES["count_nonzero.dim_IntList"].call(
            _rows(value, batch_size(level)), [1]
        )
        return wrap(counted, level)
    return wrap(handle.call(value, wrap_dim(dim, self.dim()) + 1), level)


def _aminmax(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    self, dim = args[0], args[1] if len(args) > 1 else None
    keepdim = bool(args[2]) if len(args) > 2 else False
    value = broadcast_value(self, level)
    size = batch_size(level)
    if dim is not None:
        return wrap(handle.call(value, wrap_dim(dim, self.dim()) + 1, keepdim), level)
    found = handle.call(_rows(value, size), 1, False)
    if keepdim:
        shape = [size] + [1] * self.dim()
        found = type(found)(*(ops.reshape(t, shape) for t in found))
    return wrap(found, level)


# -- flat indices ------------------------------------------------------------------------


def offsets(size: int, stride: int, rank: int) -> Tensor:
    """Each example's offset (b * stride) as a (B, 1, ..., 1) integer tensor."""
    return Tensor(np.arange(size, dtype=np.int64).reshape([size] + [1] * rank) * stride)


def _flat_index(index: Tensor, level: int, numel: int) -> Tensor:
    """An index into one flattened example as one into the flattened batch."""
    value = broadcast_value(index, level)
    wrapped: Tensor = HANDLES["remainder.Scalar"].call(value, max(numel, 1))
    return wrapped + offsets(batch_size(level), numel, index.dim())


def _take(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    self, index = args
    flat = ops.reshape(broadcast_value(self, level), [-1])
    return wrap(handle.call(flat, _flat_index(index, level, self.numel())), level)


def _put(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    self, index, source = args[0], args[1], args[2]
    accumulate = bool(args[3]) if len(args) > 3 else False
    if mutates_self(handle) and not is_batched(self, level):
        inplace_error(self, level)
    value = broadcast_value(self, level)
    flat_source = ops.reshape(broadcast_value(source, level), [-1])
    put = HANDLES["put"].call(
        ops.reshape(value, [-1]),
        _flat_index(index, level, self.numel()),
        flat_source,
        accumulate,
    )
    result = ops.reshape(put, list(value.shape))
    if mutates_self(handle):
        HANDLES["copy_"].call(value, result, False)
        return self
    return wrap(result, level)


def _embedding_backward(
    handle: OperatorHandle, level: int, args: tuple[Any, ...]
) -> Any:
    """embedding_dense_backward: example b's rows are b * num_weights + index (the
    padding index stays itself, which the kernel skips)."""
    grad, indices, num_weights, padding_idx, scale = args
    size = batch_size(level)
    index = broadcast_value(indices, level)
    shifted = index + offsets(size, num_weights, indices.dim())
    if padding_idx >= 0:
        shifted = HANDLES["where.self"].call(ops.eq(index, padding_idx), index, shifted)
    grads = handle.call(
        broadcast_value(grad, level), shifted, num_weights * size, padding_idx, scale
    )
    return wrap(ops.reshape(grads, [size, num_weights, grads.shape[-1]]), level)


def _masked_select(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    """masked_select with one mask for the batch: the same count in every example."""
    self, mask = args
    if is_batched(mask, level):
        return NotImplemented
    rank = max(self.dim(), mask.dim())
    selected = handle.call(pad(broadcast_value(self, level), self.dim(), rank), mask)
    size = batch_size(level)
    return wrap(ops.reshape(selected, [size, selected.numel() // size]), level)


# -- index / index_put -------------------------------------------------------------------


def _batched_indices(level: int, indices: list[Any]) -> list[Tensor] | None:
    """`indices` (no None, no bool masks) with an arange for the batch dim in front,
    every index over the batch too; None when that cannot be done."""
    if any(i is None or i.dtype.category == 0 for i in indices):
        return None
    rank = max(i.dim() for i in indices)
    size = batch_size(level)
    values = [pad(broadcast_value(i, level), i.dim(), rank) for i in indices]
    return [offsets(size, 1, rank), *values]


def _index(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    self, indices = args[0], list(args[1])
    if any(is_batched(i, level) for i in indices if i is not None):
        batched = _batched_indices(level, indices)
        if batched is None:
            return NotImplemented
        return wrap(handle.call(broadcast_value(self, level), batched), level)
    used = [k for k, i in enumerate(indices) if i is not None]
    if used and used != list(range(used[0], used[-1] + 1)):
        return NotImplemented  # apart, the indexed dims go first: before the batch
    return wrap(handle.call(broadcast_value(self, level), [None, *indices]), level)


def _index_put(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    self, indices, values = args[0], list(args[1]), args[2]
    batched = _batched_indices(level, indices)
    if batched is None:
        return NotImplemented
    if mutates_self(handle) and not is_batched(self, level):
        inplace_error(self, level)
    index_rank = batched[1].dim() - 1
    target = index_rank + self.dim() - len(indices)
    if values.dim() > target:
        return NotImplemented
    value = pad(broadcast_value(values, level), values.dim(), target)
    result = handle.call(broadcast_value(self, level), batched, value, *args[3:])
    return self if mutates_self(handle) else wrap(result, level)


def _index_dim(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    """index_add / index_copy / index_fill / index_reduce with one index for the
    batch: `dim` shifts, self and source are batched."""
    self, dim, index = args[0], args[1], args[2]
    if is_batched(index, level):
        return NotImplemented
    if mutates_self(handle) and not is_batched(self, level):
        inplace_error(self, level)
    if handle.name.startswith("index_fill") and is_batched(args[3], level):
        return _index_fill_each(handle, level, args)
    rest = list(args[3:])
    if rest and isinstance(rest[0], Tensor) and rest[0].dim() > 0:
        rest[0] = broadcast_value(rest[0], level)
    value = broadcast_value(self, level)
    result = handle.call(value, wrap_dim(dim, self.dim()) + 1, index, *rest)
    return self if mutates_self(handle) else wrap(result, level)


def _index_fill_each(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    """index_fill with a 0-d value per example: where(filled positions, value, self)."""
    self, dim, index, fill = args[0], args[1], args[2], args[3]
    value = broadcast_value(self, level)
    shifted = wrap_dim(dim, self.dim()) + 1
    marks = HANDLES["index_fill.int_Scalar"].call(zeros_like(value), shifted, index, 1)
    filled = HANDLES["where.self"].call(
        ops.ne(marks, 0),
        pad(broadcast_value(fill, level), 0, self.dim()).to(self.dtype),
        value,
    )
    if mutates_self(handle):
        HANDLES["copy_"].call(value, filled, False)
        return self
    return wrap(filled, level)


# -- contractions with an added term ----------------------------------------------------


def _outer(a: Tensor, b: Tensor) -> Tensor:
    column = HANDLES["unsqueeze"].call(a, 1)
    product: Tensor = HANDLES["mul.Tensor"].call(column, b)
    return product


def _summed_bmm(a: Tensor, b: Tensor) -> Tensor:
    product = HANDLES["bmm"].call(a, b)
    summed: Tensor = HANDLES["sum.dim_IntList"].call(product, [0], False, None)
    return summed


PRODUCTS = {
    "addmv": lambda a, b: HANDLES["mv"].call(a, b),
    "addr": _outer,
    "baddbmm": lambda a, b: HANDLES["bmm"].call(a, b),
    "addbmm": _summed_bmm,
}


def _add_product(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    """beta * self + alpha * (a @ b), the product by the batched rules."""
    self, a, b = args[0], args[1], args[2]
    beta = args[3] if len(args) > 3 else 1
    alpha = args[4] if len(args) > 4 else 1
    if mutates_self(handle) and not is_batched(self, level):
        inplace_error(self, level)
    result = PRODUCTS[handle.name.split(".")[0].rstrip("_")](a, b)
    if alpha != 1:
        result = HANDLES["mul.Scalar"].call(result, alpha)
    if beta != 0:
        scaled = self if beta == 1 else HANDLES["mul.Scalar"].call(self, beta)
        result = HANDLES["add.Tensor"].call(result, scaled, 1)
    if mutates_self(handle):
        HANDLES["copy_"].call(self, result, False)
        return self
    return result


INDEX_CUSTOM: dict[str, Rule] = {
    "median": _median,
    "nanmedian": _median,
    "norm.Scalar": _norm,
    "norm.ScalarOpt_dtype": _norm,
    "dist": _dist,
    "trace": _trace,
    "count_nonzero": _count_nonzero,
    "aminmax": _aminmax,
    "take": _take,
    "put": _put,
    "put_": _put,
    "embedding_dense_backward": _embedding_backward,
    "masked_select": _masked_select,
    "index.Tensor": _index,
    "_unsafe_index.Tensor": _index,
    "index_put": _index_put,
    "index_put_": _index_put,
    "_index_put_impl_": _index_put,
    "_unsafe_index_put": _index_put,
    **{
        name: _index_dim
        for name in (
            "index_add",
            "index_add_",
            "index_copy",
            "index_copy_",
            "index_fill.int_Scalar",
            "index_fill.int_Tensor",
            "index_fill_.int_Scalar",
            "index_fill_.int_Tensor",
            "index_reduce",
            "index_reduce_",
        )
    },
}
ADD_PRODUCTS: dict[str, Rule] = {
    name: _add_product for name in [*PRODUCTS, *(name + "_" for name in PRODUCTS)]
}
