"""Tensor factories with PyTorch's signatures: tensor, zeros, ones, full, arange, ...

Default dtypes follow PyTorch: a Python float gives the default dtype (float32 unless
`set_default_dtype` changed it), an int int64, a bool bool, a complex the default
complex dtype; a numpy array keeps its dtype. Only floating and complex tensors may
require grad.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any, TypeAlias

import numpy as np

from . import dtypes
from .dtypes import as_dtype, dtype
from .tensor import Number, Tensor

# What `dtype=` accepts (dtypes.as_dtype): a gradgen dtype, a numpy dtype, a scalar
# type (np.float64, float) or a dtype name; None means the factory's default.
DTypeArgument: TypeAlias = "dtype | np.dtype[Any] | type[Any] | str | None"
# A tensor's size, as PyTorch takes it: `zeros(2, 3)` or `zeros((2, 3))`.
SizeArgument: TypeAlias = "builtins.int | Sequence[builtins.int]"

REQUIRES_GRAD_DTYPE_ERROR = (
    "Only Tensors of floating point and complex dtype can require gradients"
)

_generator = np.random.default_rng()

# The numpy dtypes PyTorch converts from (torch.tensor / from_numpy), in its words; the
# ones gradgen lacks (int8, float16, ...) become the closest gradgen dtype.
NUMPY_CONVERTIBLE = (
    "float64, float32, float16, complex64, complex128, int64, int32, int16, int8, "
    "uint64, uint32, uint16, uint8, and bool"
)
_CONVERTIBLE = frozenset(np.dtype(name) for name in NUMPY_CONVERTIBLE.replace("and ", "").split(", "))


def _check_numpy_data(data: Any) -> None:
    """PyTorch's TypeError for a numpy array (or scalar) of a dtype it cannot hold:
    strings, objects, datetimes, long doubles, structured arrays."""
    if isinstance(data, (np.ndarray, np.generic)) and data.dtype not in _CONVERTIBLE:
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{data.dtype.type.__name__}. "
            f"The only supported types are: {NUMPY_CONVERTIBLE}."
        )


def _finish(data: np.ndarray, requires_grad: builtins.bool) -> Tensor:
    if data.dtype not in dtypes._FROM_NUMPY:
        raise TypeError(f"unsupported dtype {data.dtype}")
    if requires_grad and data.dtype.kind not in "fc":
        raise RuntimeError(REQUIRES_GRAD_DTYPE_ERROR)
    return Tensor(data, requires_grad=builtins.bool(requires_grad))


def _infer_dtype(data: Any, array: np.ndarray) -> dtype:
    """PyTorch's inference for Python data; numpy data keeps its numpy dtype."""
    if isinstance(data, np.ndarray) or isinstance(data, np.generic):
        return dtypes._FROM_NUMPY.get(array.dtype) or _closest(array.dtype)
    kind = array.dtype.kind
    if kind == "b":
        return dtypes.bool
    if kind in "iu":
        return dtypes.int64
    if kind == "f":
        return dtypes.get_default_dtype()
    if kind == "c":
        return dtypes.default_complex_dtype()
    raise TypeError(f"Could not infer dtype of {type(data).__name__}")


def _closest(np_dtype: np.dtype) -> dtype:
    return {"b": dtypes.bool, "i": dtypes.int64, "u": dtypes.int64, "f": dtypes.float64, "c": dtypes.complex128}[np_dtype.kind]


def tensor(
    data: Any, dtype: DTypeArgument = None, requires_grad: builtins.bool = False
) -> Tensor:
    """A new leaf tensor holding a copy of `data` (number, nested lists, array, Tensor)."""
    if isinstance(data, Tensor):
        data = data._data
    _check_numpy_data(data)
    array = np.array(data)
    if array.dtype == object:
        raise TypeError(f"Could not infer dtype of {type(data).__name__}")
    target = as_dtype(dtype) if dtype is not None else _infer_dtype(data, array)
    return _finish(np.array(array, dtype=target.numpy), requires_grad)


def _size(size: tuple[Any, ...]) -> tuple[builtins.int, ...]:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    return tuple(builtins.int(s) for s in size)


def _float_dtype(dtype: DTypeArgument) -> dtype:
    return as_dtype(dtype) if dtype is not None else dtypes.get_default_dtype()


def zeros(
    *size: SizeArgument, dtype: DTypeArgument = None, requires_grad: builtins.bool = False
) -> Tensor:
    return _finish(np.zeros(_size(size), _float_dtype(dtype).numpy), requires_grad)


def ones(
    *size: SizeArgument, dtype: DTypeArgument = None, requires_grad: builtins.bool = False
) -> Tensor:
    return _finish(np.ones(_size(size), _float_dtype(dtype).numpy), requires_grad)


def full(
    size: Sequence[builtins.int],
    fill_value: Number,
    *,
    dtype: DTypeArgument = None,
    requires_grad: builtins.bool = False,
) -> Tensor:
    if dtype is None:
        inferred = np.array(fill_value)
        target = _infer_dtype(fill_value, inferred)
    else:
        target = as_dtype(dtype)
    return _finish(np.full(_size((size,)), fill_value, target.numpy), requires_grad)


def zeros_like(
    input: Tensor, *, dtype: DTypeArgument = None, requires_grad: builtins.bool = False
) -> Tensor:
    target = as_dtype(dtype).numpy if dtype is not None else input._data.dtype
    return _finish(np.zeros(input._data.shape, target), requires_grad)


def ones_like(
    input: Tensor, *, dtype: DTypeArgument = None, requires_grad: builtins.bool = False
) -> Tensor:
    target = as_dtype(dtype).numpy if dtype is not None else input._data.dtype
    return _finish(np.ones(input._data.shape, target), requires_grad)


def arange(
    start: builtins.int | builtins.float,
    end: builtins.int | builtins.float | None = None,
    step: builtins.int | builtins.float = 1,
    *,
    dtype: DTypeArgument = None,
    requires_grad: builtins.bool = False,
) -> Tensor:
    if end is None:
        start, end = 0, start
    values = (start, end, step)
    if dtype is not None:
        target = as_dtype(dtype)
    elif all(isinstance(v, builtins.int) for v in values):
        target = dtypes.int64
    else:
        target = dtypes.get_default_dtype()
    return _finish(np.arange(start, end, step).astype(target.numpy), requires_grad)


def manual_seed(seed: builtins.int) -> None:
    """Seed the generator behind rand and randn."""
    global _generator
    _generator = np.random.default_rng(seed)


def rand(
    *size: SizeArgument, dtype: DTypeArgument = None, requires_grad: builtins.bool = False
) -> Tensor:
    target = _float_dtype(dtype)
    return _finish(_generator.random(_size(size)).astype(target.numpy), requires_grad)


def randn(
    *size: SizeArgument, dtype: DTypeArgument = None, requires_grad: builtins.bool = False
) -> Tensor:
    target = _float_dtype(dtype)
    return _finish(_generator.standard_normal(_size(size)).astype(target.numpy), requires_grad)
