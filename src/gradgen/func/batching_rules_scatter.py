"""Batching rules of masked_scatter and masked_scatter_ (the `custom` declarations).

Each example writes its `source` from its start, as far as its mask's count of True,
which differs by example. The batch is one call: self and mask expanded to the
batch, and a source of each example's first `count` elements in turn (masked_select
of the batch's sources by `position < count`), which one masked_scatter over the
batch consumes in that order. So the values are the per-example loop's, and the
node is masked_scatter's own (its source gradient reaches each example's source
through masked_select).

A mask that is not bool, shapes that do not broadcast, a source too short for some
example's count, or a level nested in another fall back to the loop (whose calls
raise the operator's own errors). In place into an unbatched `self` is torch.func's
error.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..dispatch import OperatorHandle
from ..generated import ops
from ..tensor import Tensor
from .batching import (
    HANDLES,
    BatchedTensor,
    Rule,
    batch_size,
    broadcast_value,
    call_plain,
    is_batched,
    mutates_self,
    unwrap,
)
from .batching_schema import pad

INPLACE_ERROR = (
    "vmap: aten::masked_scatter_(self, *extra_args) is not possible because there "
    "exists a Tensor `other` in extra_args that has more elements than `self`. This "
    "happened due to `other` being vmapped over but `self` not being vmapped over at "
    "level {level}. Please try to use out-of-place operators instead of "
    "aten::masked_scatter_. If said operator is being called inside the PyTorch "
    "framework, please file a bug report instead."
)


def _expanded(x: Tensor, level: int, full: list[int]) -> Tensor:
    """`x`'s value (batched or not) expanded to the batch shape `full`."""
    value = pad(unwrap(x, level), x.dim(), len(full) - 1) if is_batched(x, level) else x
    expanded: Tensor = call_plain(HANDLES["expand"], value, full, False)
    return expanded


def _firsts(source: Tensor, level: int, counts: np.ndarray) -> Tensor | None:
    """Each example's first counts[b] elements of `source`, one after another (None:
    some example's source is too short)."""
    rows = ops.reshape(broadcast_value(source, level), [len(counts), -1])
    length = rows.shape[1]
    if counts.size and counts.max() > length:
        return None
    keep = Tensor(np.arange(length) < counts[:, None])
    firsts: Tensor = call_plain(HANDLES["masked_select"], rows, keep)
    return firsts


def _masked_scatter(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    self, mask, source = args
    if any(isinstance(unwrap(a, level), BatchedTensor) for a in args):
        return NotImplemented  # nested levels: the loop
    inplace = mutates_self(handle)
    if inplace and not is_batched(self, level):
        raise RuntimeError(INPLACE_ERROR.format(level=level))
    if mask._data.dtype != np.bool_:
        return NotImplemented
    try:
        shape = np.broadcast_shapes(tuple(self.shape), tuple(mask.shape))
    except ValueError:
        return NotImplemented
    if inplace and shape != tuple(self.shape):
        return NotImplemented
    full = [batch_size(level), *shape]
    where = _expanded(mask, level, full)
    counts = np.count_nonzero(where._data.reshape(full[0], -1), axis=1)
    firsts = _firsts(source, level, counts)
    if firsts is None:
        return NotImplemented
    if inplace:
        call_plain(handle, self._value, where, firsts)
        return self
    result = call_plain(handle, _expanded(self, level, full), where, firsts)
    return BatchedTensor(result, level)


SCATTER_CUSTOM: dict[str, Rule] = {
    "masked_scatter": _masked_scatter,
    "masked_scatter_": _masked_scatter,
}

__all__ = ["SCATTER_CUSTOM"]
