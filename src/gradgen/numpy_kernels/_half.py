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
