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
from .devices import check_device
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
    data: Any, dtype: DTypeArgument = None, device: Any = None, requires_grad: builtins.bool = False
) -> Tensor:
    """A new leaf tensor holding a copy of `data` (number, nested lists, array, Tensor)."""
    check_device(device)
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
    *size: SizeArgument, dtype: DTypeArgument = None, device: Any = None, requires_grad: builtins.bool = False
) -> Tensor:
    check_device(device)
    return _finish(np.zeros(_size(size), _float_dtype(dtype).numpy), requires_grad)


def ones(
    *size: SizeArgument, dtype: DTypeArgument = None, device: Any = None, requires_grad: builtins.bool = False
) -> Tensor:
    check_device(device)
    return _finish(np.ones(_size(size), _float_dtype(dtype).numpy), requires_grad)


def full(
    size: Sequence[builtins.int],
    fill_value: Number,
    *,
    dtype: DTypeArgument = None,
    device: Any = None,
    requires_grad: builtins.bool = False,
) -> Tensor:
    check_device(device)
    if dtype is None:
        inferred = np.array(fill_value)
        target = _infer_dtype(fill_value, inferred)
    else:
        target = as_dtype(dtype)
    return _finish(np.full(_size((size,)), fill_value, target.numpy), requires_grad)


def zeros_like(
    input: Tensor, *, dtype: DTypeArgument = None, device: Any = None, requires_grad: builtins.bool = False
) -> Tensor:
    check_device(device)
    target = as_dtype(dtype).numpy if dtype is not None else input._data.dtype
    return _finish(np.zeros(input._data.shape, target), requires_grad)


def ones_like(
    input: Tensor, *, dtype: DTypeArgument = None, device: Any = None, requires_grad: builtins.bool = False
) -> Tensor:
    check_device(device)
    target = as_dtype(dtype).numpy if dtype is not None else input._data.dtype
    return _finish(np.ones(input._data.shape, target), requires_grad)


def arange(
    start: builtins.int | builtins.float,
    end: builtins.int | builtins.float | None = None,
    step: builtins.int | builtins.float = 1,
    *,
    dtype: DTypeArgument = None,
    device: Any = None,
    requires_grad: builtins.bool = False,
) -> Tensor:
    check_device(device)
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
    *size: SizeArgument, dtype: DTypeArgument = None, device: Any = None, requires_grad: builtins.bool = False
) -> Tensor:
    check_device(device)
    target = _float_dtype(dtype)
    return _finish(_generator.random(_size(size)).astype(target.numpy), requires_grad)


def randn(
    *size: SizeArgument, dtype: DTypeArgument = None, device: Any = None, requires_grad: builtins.bool = False
) -> Tensor:
    check_device(device)
    target = _float_dtype(dtype)
    return _finish(_generator.standard_normal(_size(size)).astype(target.numpy), requires_grad)


# -- more of PyTorch's factories ----------------------------------------------------------


def empty(
    *size: SizeArgument, dtype: DTypeArgument = None, device: Any = None, requires_grad: builtins.bool = False
) -> Tensor:
    """Zeros: gradgen never hands out uninitialised memory (PyTorch's values are
    whatever the memory held, so no program can rely on them)."""
    return zeros(*size, dtype=dtype, device=device, requires_grad=requires_grad)


def empty_like(
    input: Tensor, *, dtype: DTypeArgument = None, device: Any = None, requires_grad: builtins.bool = False
) -> Tensor:
    return zeros_like(input, dtype=dtype, device=device, requires_grad=requires_grad)


def full_like(
    input: Tensor,
    fill_value: Number,
    *,
    dtype: DTypeArgument = None,
    device: Any = None,
    requires_grad: builtins.bool = False,
) -> Tensor:
    check_device(device)
    target = as_dtype(dtype).numpy if dtype is not None else input._data.dtype
    return _finish(np.full(input._data.shape, fill_value, target), requires_grad)


def rand_like(
    input: Tensor, *, dtype: DTypeArgument = None, device: Any = None, requires_grad: builtins.bool = False
) -> Tensor:
    return rand(*input._data.shape, dtype=input.dtype if dtype is None else dtype,
                device=device, requires_grad=requires_grad)


def randn_like(
    input: Tensor, *, dtype: DTypeArgument = None, device: Any = None, requires_grad: builtins.bool = False
) -> Tensor:
    return randn(*input._data.shape, dtype=input.dtype if dtype is None else dtype,
                 device=device, requires_grad=requires_grad)


def randint(
    low: builtins.int,
    high: builtins.int | None = None,
    size: SizeArgument | None = None,
    *,
    dtype: DTypeArgument = None,
    device: Any = None,
    requires_grad: builtins.bool = False,
) -> Tensor:
    """Integers uniformly from [low, high) (`randint(high, size)` starts at 0); int64."""
    check_device(device)
    if size is None:  # randint(high, size)
        if high is None:
            raise TypeError("randint() missing required argument 'size'")
        low, high, size = 0, low, high
    elif high is None:
        low, high = 0, low
    if low >= high:
        raise RuntimeError(
            f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}"
        )
    target = as_dtype(dtype) if dtype is not None else dtypes.int64
    values = _generator.integers(low, high, _size((size,)))
    return _finish(values.astype(target.numpy), requires_grad)


def eye(
    n: builtins.int,
    m: builtins.int | None = None,
    *,
    dtype: DTypeArgument = None,
    device: Any = None,
    requires_grad: builtins.bool = False,
) -> Tensor:
    """The n x m identity (ones on the diagonal)."""
    check_device(device)
    for name, value in (("n", n), ("m", m)):
        if value is not None and value < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {value}")
    return _finish(np.eye(n, m, dtype=_float_dtype(dtype).numpy), requires_grad)


def linspace(
    start: Number,
    end: Number,
    steps: builtins.int,
    *,
    dtype: DTypeArgument = None,
    device: Any = None,
    requires_grad: builtins.bool = False,
) -> Tensor:
    """`steps` evenly spaced values from start to end, both included."""
    check_device(device)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    return _finish(np.linspace(start, end, steps).astype(_float_dtype(dtype).numpy), requires_grad)


def logspace(
    start: Number,
    end: Number,
    steps: builtins.int,
    base: builtins.float = 10.0,
    *,
    dtype: DTypeArgument = None,
    device: Any = None,
    requires_grad: builtins.bool = False,
) -> Tensor:
    """base ** linspace(start, end, steps)."""
    check_device(device)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    values = np.logspace(start, end, steps, base=base)
    return _finish(values.astype(_float_dtype(dtype).numpy), requires_grad)


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor over `array`'s memory (writes through either show in both)."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    _check_numpy_data(array)
    if array.dtype not in dtypes._FROM_NUMPY:
        raise TypeError(
            f"gradgen has no {array.dtype.name} dtype, so from_numpy cannot share this "
            "array's memory; gradgen.tensor(array) converts it (a copy)"
        )
    return Tensor(array)


def as_tensor(data: Any, dtype: DTypeArgument = None, device: Any = None) -> Tensor:
    """`data` as a tensor, sharing memory where it can: a tensor or a numpy array that
    already has the dtype is not copied."""
    check_device(device)
    if isinstance(data, Tensor):
        return data if dtype is None or as_dtype(dtype) is data.dtype else data.to(as_dtype(dtype))
    if isinstance(data, np.ndarray) and data.dtype in dtypes._FROM_NUMPY:
        if dtype is None or as_dtype(dtype).numpy == data.dtype:
            return from_numpy(data)
    return tensor(data, dtype=dtype)
