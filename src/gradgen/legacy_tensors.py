"""PyTorch's legacy tensor types: `FloatTensor`, `LongTensor`, ... and `Tensor.type()`.

`FloatTensor([1, 2])` and `FloatTensor(2, 3)` construct tensors of that dtype (the
legacy constructor's two forms), `isinstance(t, FloatTensor)` is true for float32
tensors, and `t.type()` names the type as PyTorch does ('torch.FloatTensor'), since
programs compare it with those strings. Each type is a class whose metaclass answers
`isinstance` by dtype: the objects made are plain `Tensor`s, as in PyTorch.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import dtypes
from .dtypes import dtype
from .factories import legacy_data
from .tensor import Tensor


class _LegacyTensorType(type):
    """The metaclass of the legacy types: an instance is a Tensor of the type's dtype."""

    dtype: dtype

    def __instancecheck__(cls, instance: Any) -> bool:
        return isinstance(instance, Tensor) and instance.dtype is cls.dtype

    def __call__(cls, *args: Any) -> Tensor:
        return Tensor(_legacy_array(cls.dtype, args))

    def __repr__(cls) -> str:
        return f"<class 'gradgen.{cls.__name__}'>"


def _legacy_array(target: dtype, args: tuple[Any, ...]) -> np.ndarray:
    """The data of `XTensor(*args)`: sizes give zeros, a sequence or a numpy array its
    values converted, a tensor of the same dtype its values."""
    if len(args) == 1 and isinstance(args[0], (np.ndarray, np.generic)):
        return np.array(args[0], dtype=target.numpy)
    first = args[0] if args else None
    second = args[1] if len(args) > 1 else False
    return legacy_data(first, second, args[2:], target)


def _legacy_type(target: dtype) -> _LegacyTensorType:
    name = dtypes.spelling(target).legacy_tensor
    cls = _LegacyTensorType(name, (), {"dtype": target, "is_cuda": False})
    cls.__module__ = "gradgen"
    return cls


FloatTensor = _legacy_type(dtypes.float32)
DoubleTensor = _legacy_type(dtypes.float64)
HalfTensor = _legacy_type(dtypes.float16)
LongTensor = _legacy_type(dtypes.int64)
IntTensor = _legacy_type(dtypes.int32)
ShortTensor = _legacy_type(dtypes.int16)
CharTensor = _legacy_type(dtypes.int8)
ByteTensor = _legacy_type(dtypes.uint8)
BoolTensor = _legacy_type(dtypes.bool)

_BY_NAME = {
    "torch." + dtypes.spelling(d).legacy_tensor: d
    for d in dtypes.ALL_DTYPES
    if dtypes.spelling(d).legacy_tensor != d.name
}


def type_name(tensor: Tensor) -> str:
    """PyTorch's name of a tensor's type: 'torch.FloatTensor', 'torch.BoolTensor'."""
    return "torch." + dtypes.spelling(tensor._data).legacy_tensor


def tensor_type(
    self: Tensor, dtype: Any = None, non_blocking: bool = False, **kwargs: Any
) -> Any:
    """`t.type()`: the type's name; `t.type(T)`: t converted to T (a name such as
    'torch.LongTensor', a legacy type or a dtype), t itself when it already is."""
    if dtype is None:
        return type_name(self)
    if isinstance(dtype, str):
        if dtype.startswith("torch.cuda."):
            raise RuntimeError(
                "gradgen computes with numpy on the CPU: CUDA tensor types are not "
                "available"
            )
        if dtype not in _BY_NAME:
            raise ValueError(f"invalid type: '{dtype}'")
        target = _BY_NAME[dtype]
    elif isinstance(dtype, _LegacyTensorType):
        target = dtype.dtype
    elif isinstance(dtype, dtypes.dtype):
        target = dtype
    else:
        raise TypeError("dtype must be a type, str, or dtype object")
    return self if self.dtype is target else self.to(target)
