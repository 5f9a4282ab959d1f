"""Half precision (float16; ml_dtypes' bfloat16 when installed) as PyTorch computes
it: a reduction, scan or product accumulates in float32 (PyTorch's acc_type) and the
result is rounded once to the half dtype, where numpy would round every partial sum
(numpy's float16 sum of [60000, 10000, -10000] is inf; PyTorch's is 60000).

A kernel starts with `if is_half(self): return in_float32(kernel, self, ...)`: one
itemsize comparison on the float32 and float64 paths."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__: list[str] = []  # kernel expressions do not call these

FLOAT32 = np.dtype(np.float32)


def is_half(array: Any) -> bool:
    """Whether an array is float16 or bfloat16 (the two-byte floating dtypes; ml_dtypes'
    bfloat16 is of numpy kind "V")."""
    return array.itemsize == 2 and array.dtype.kind in "fV"


def is_half_dtype(dtype: Any) -> bool:
    return dtype.itemsize == 2 and dtype.kind in "fV"


def rounded(result: Any, dtype: Any) -> Any:
    """A float32 result in the half dtype, rounded once (too large: inf, silently)."""
    with np.errstate(over="ignore"):
        if isinstance(result, tuple):
            return tuple(np.asarray(item).astype(dtype) for item in result)
        return np.asarray(result).astype(dtype)


def in_float32(kernel: Callable[..., Any], self: Any, *rest: Any) -> Any:
    """`kernel` on `self` in float32, its result (or each of its results) rounded once
    to self's half dtype."""
    return rounded(kernel(self.astype(FLOAT32), *rest), self.dtype)


def with_float32(kernel: Callable[..., Any], dtype: Any, *args: Any) -> Any:
    """`kernel` with every array argument of the half `dtype` in float32 (the others
    as given: running statistics updated in place stay themselves), its results
    rounded once to `dtype`."""
    widened = [
        (
            arg.astype(FLOAT32)
            if isinstance(arg, np.ndarray) and arg.dtype == dtype
            else arg
        )
        for arg in args
    ]
    return rounded(kernel(*widened), dtype)


def _running_total(values: np.ndarray) -> Any:
    """values added one by one from 0, each partial sum rounded to their half dtype."""
    if values.shape[-1] == 0:
        return np.zeros(values.shape[:-1], values.dtype)
    return np.add.accumulate(values, axis=-1, dtype=values.dtype)[..., -1]


def cascade_sum(values: np.ndarray, kept: np.ndarray | None, levels: int = 8) -> Any:
    """The sum of half-precision `values` (one per batch row; rows not `kept` are
    skipped) as PyTorch's nll_loss adds its rows: row b enters partial sum 0; then,
    for j = 0, 1, ..., while b % 2^(p(j+1)) == 0 (p = max(4, ceil(log2(rows)) //
    levels)), level j passes its sum up to level j + 1 and restarts from 0. At the end
    the levels are added in order. Every addition rounds to the half dtype."""
    rows = values.size
    power = max(4, (max(rows, 1) - 1).bit_length() // levels)
    times = np.arange(rows)
    flushes = np.ones(rows, bool) if kept is None else kept
    if kept is not None:
        values = np.where(kept, values, values.dtype.type(0))
    partials = []
    for level in range(levels - 1):
        ends = np.flatnonzero(flushes & (times % (1 << (power * (level + 1))) == 0))
        pieces = np.split(values, ends + 1)
        partials.append(_running_total(pieces[-1]))
        values = np.array(
            [_running_total(piece) for piece in pieces[:-1]], values.dtype
        )
        times, flushes = times[ends], flushes[ends]
    partials.append(_running_total(values))
    return _running_total(np.array(partials, values.dtype))
