"""The batching rule of as_strided (a `custom` declaration), as torch.func's.

Each example's sizes and strides address the memory the batch lives in, with the
example's own start: one as_strided of the batch's value with the batch's stride in
front. An explicit storage_offset is example 0's and moves by the batch stride for
each example (torch.func's reading; the per-example loop would give every example
the same memory). As torch.func, a result that reaches memory outside the example
(the span from its first to its last element) raises; a batch whose memory is not
one block of its dtype (a copy then, in as_strided's kernel), a negative or odd
stride, or nested levels fall back to the loop.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..dispatch import OperatorHandle
from ..numpy_kernels.shape import _storage_offset
from .batching import BatchedTensor, Rule, batch_size, call_plain

OUTSIDE_ERROR = (
    "result = tensor.as_strided({size}, {stride}, {offset}) can access memory outside "
    "of `tensor`. `result` can access some memory in range [{low}, {high}], but "
    "`tensor` can only access some memory in range [{start}, {end}]. This is not "
    "supported inside of vmap, please try to rewrite the `as_strided` call as a "
    "sequence of PyTorch view operations"
)


def _elements(data: np.ndarray) -> tuple[list[int], int] | None:
    """The strides of `data` and its offset in its memory, in elements (None: not
    one C-contiguous block of its dtype, or a stride that is not whole elements)."""
    root = data
    while isinstance(root.base, np.ndarray):
        root = root.base
    item = data.itemsize
    if not root.flags.c_contiguous or root.nbytes % item:
        return None
    if any(s < 0 or s % item for s in data.strides):
        return None
    offset = _storage_offset(data)
    if offset % item:
        return None
    return [s // item for s in data.strides], offset // item


def _span(size: Sequence[int], stride: Sequence[int], offset: int) -> tuple[int, int]:
    """The memory a geometry reaches, as torch.func writes it: [first, last + 1]."""
    return offset, offset + sum((n - 1) * s for n, s in zip(size, stride)) + 1


def _as_strided(handle: OperatorHandle, level: int, args: tuple[Any, ...]) -> Any:
    self, size, stride = args[0], list(args[1]), list(args[2])
    value = self._value
    found = None if isinstance(value, BatchedTensor) else _elements(value._data)
    if found is None or len(size) != len(stride) or min(stride, default=0) < 0:
        return NotImplemented
    strides, start = found
    offset = start if len(args) < 4 or args[3] is None else args[3]
    example = value._data.shape[1:]
    if min(size, default=1) > 0 and 0 not in example:
        low, high = _span(size, stride, offset)
        first, end = _span(example, strides[1:], start)
        if low < first or high > end:
            raise RuntimeError(
                OUTSIDE_ERROR.format(
                    size=size,
                    stride=stride,
                    offset=offset,
                    low=low,
                    high=high,
                    start=first,
                    end=end,
                )
            )
    shape = [batch_size(level), *size]
    result = call_plain(handle, value, shape, [strides[0], *stride], offset)
    return BatchedTensor(result, level)


STRIDED_CUSTOM: dict[str, Rule] = {"as_strided": _as_strided}

__all__ = ["STRIDED_CUSTOM"]
