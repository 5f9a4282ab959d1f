"""Tensor factories with PyTorch's signatures: tensor, zeros, ones, full, arange, ...

Default dtypes follow PyTorch: a Python float gives the default dtype (float32 unless
`set_default_dtype` changed it), an int int64, a bool bool, a complex the default
complex dtype; a numpy array keeps its dtype. Only floating and complex tensors may
require grad.
"""

from __future__ import annotations

import builtins
import math
import operator
import warnings
from collections.abc import Sequence
from typing import Any, TypeAlias

import numpy as np

from . import dtypes
from .dtypes import as_dtype, dtype, spelling
from .grad_mode import is_grad_enabled
from .devices import check_device
from .scalars import COMPLEX_DISCARDED, python_type_name, array_from_data, checked_value
from .numpy_kernels._common import checked_scalar
from .tensor import Number, Size, Tensor

# What `dtype=` accepts (dtypes.as_dtype): a gradgen dtype, a numpy dtype, a scalar
# type (np.float64, float) or a dtype name; None means the factory's default.
DTypeArgument: TypeAlias = "dtype | np.dtype[Any] | type[Any] | str | None"
# A tensor's size, as PyTorch takes it: `zeros(2, 3)` or `zeros((2, 3))`.
SizeArgument: TypeAlias = "builtins.int | Sequence[builtins.int]"

REQUIRES_GRAD_DTYPE_ERROR = (
    "Only Tensors of floating point and complex dtype can require gradients"
)

# The numpy dtypes PyTorch converts from (torch.tensor / from_numpy), in its words; the
# ones gradgen lacks (int8, float16, ...) become the closest gradgen dtype.
NUMPY_CONVERTIBLE = (
    "float64, float32, float16, complex64, complex128, int64, int32, int16, int8, "
    "uint64, uint32, uint16, uint8, and bool"
)
_CONVERTIBLE = frozenset(
    np.dtype(name) for name in NUMPY_CONVERTIBLE.replace("and ", "").split(", ")
)


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
    if requires_grad and data.dtype.kind not in "fcV":  # V: ml_dtypes' bfloat16
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
    return {
        "b": dtypes.bool,
        "i": dtypes.int64,
        "u": dtypes.int64,
        "f": dtypes.float64,
        "c": dtypes.complex128,
    }[np_dtype.kind]


def tensor(
    data: Any,
    dtype: DTypeArgument = None,
    device: Any = None,
    requires_grad: builtins.bool = False,
) -> Tensor:
    """A new leaf tensor holding a copy of `data` (number, nested lists, array, Tensor)."""
    check_device(device)
    if isinstance(data, Tensor):
        data = data._data
    _check_numpy_data(data)
    if not isinstance(data, (np.ndarray, np.generic)):
        # Python data: PyTorch's checks (no silent overflow, no dropped imaginary part).
        return _finish(
            array_from_data(data, None if dtype is None else as_dtype(dtype)),
            requires_grad,
        )
    array = np.array(data)
    target = as_dtype(dtype) if dtype is not None else _infer_dtype(data, array)
    if array.dtype.kind == "u" and target.numpy.kind in "iu" and array.size:
        # gradgen has no uint64: a value above the target's range must not wrap around.
        if int(array.max()) > np.iinfo(target.numpy).max:
            raise RuntimeError(
                f"value cannot be converted to type {target.numpy.name} without overflow"
            )
    if (
        isinstance(data, np.ndarray)
        and array.dtype.kind == "c"
        and target.numpy.kind != "c"
    ):
        warnings.warn(COMPLEX_DISCARDED, UserWarning, stacklevel=2)
        array = array.real
    with np.errstate(over="ignore"):
        return _finish(np.array(array, dtype=target.numpy), requires_grad)


def _is_int(value: Any) -> builtins.bool:
    """An int as a size: Python and numpy ints, 0-d integer tensors (not bools)."""
    if isinstance(value, Tensor):
        return value._data.ndim == 0 and value._data.dtype.kind in "iu"
    return isinstance(value, (builtins.int, np.integer)) and not isinstance(
        value, builtins.bool
    )


def _size(function: str, size: tuple[Any, ...]) -> tuple[builtins.int, ...]:
    """A factory's `*size` (``zeros(2, 3)`` or ``zeros((2, 3))``) as PyTorch's binding
    reads it: ints only (TypeError otherwise), none negative (RuntimeError)."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        items = tuple(size[0])
    elif size and not _is_int(size[0]):
        raise TypeError(
            f"{function}(): argument 'size' (position 1) must be tuple of ints, not "
            f"{python_type_name(size[0])}"
        )
    else:
        items = size
    for position, item in enumerate(items, 1):
        # Inside a sequence PyTorch takes a bool as an int.
        if not (_is_int(item) or isinstance(item, builtins.bool)):
            if position == 1:
                raise TypeError(
                    f"{function}(): argument 'size' (position 1) must be tuple of ints, "
                    f"but found element of type {python_type_name(item)} at pos 0"
                )
            raise TypeError(
                f"{function}(): argument 'size' failed to unpack the object at pos "
                f'{position} with error "type must be tuple of ints,but got '
                f'{python_type_name(item)}"'
            )
    return _non_negative(function, tuple(operator.index(item) for item in items))


def _non_negative(
    function: str, shape: tuple[builtins.int, ...]
) -> tuple[builtins.int, ...]:
    for extent in shape:
        if extent < 0:
            if function == "zeros":
                raise RuntimeError("zeros: Dimension size must be non-negative.")
            raise RuntimeError(
                f"Trying to create tensor with negative dimension {extent}: {list(shape)}"
            )
    return shape


def _size_sequence(function: str, size: Any) -> tuple[builtins.int, ...]:
    """A `size` that must be a sequence of ints (full, randint)."""
    if not isinstance(size, (tuple, list)):
        raise TypeError(
            f"{function}(): argument 'size' (position 1) must be tuple of ints, not "
            f"{python_type_name(size)}"
        )
    for position, item in enumerate(size):
        if not (_is_int(item) or isinstance(item, builtins.bool)):
            raise TypeError(
                f"{function}(): argument 'size' (position 1) must be tuple of ints, but "
                f"found element of type {python_type_name(item)} at pos {position}"
            )
    return _non_negative(function, tuple(operator.index(item) for item in size))


def _float_dtype(dtype: DTypeArgument) -> dtype:
    return as_dtype(dtype) if dtype is not None else dtypes.get_default_dtype()


# -- out= on the factories ----------------------------------------------------------------


def out_dtype(function: str, dtype: DTypeArgument, out: Any) -> dtype:
    """The dtype a factory computes in when given `out=`: out's, which an explicit
    dtype must equal (PyTorch's check)."""
    if not isinstance(out, Tensor):
        raise TypeError(
            f"{function}(): argument 'out' must be Tensor, not {type(out).__name__}"
        )
    target = dtypes.from_numpy(out._data.dtype)
    if dtype is not None and as_dtype(dtype) is not target:
        raise RuntimeError(
            f"dtype {spelling(as_dtype(dtype)).scalar_type} does not match dtype of "
            f"out parameter ({spelling(target).scalar_type})"
        )
    return target


def into_out(function: str, out: Tensor, result: Tensor) -> Tensor:
    """A factory's result written into `out`: resized to the result's shape without a
    warning (the factories' out= resize as PyTorch's do), version bumped."""
    if is_grad_enabled() and out.requires_grad:
        raise RuntimeError(
            f"aten::{function}(): functions with out=... arguments don't support "
            "automatic differentiation, but one of the arguments requires grad."
        )
    if out._data.shape == result._data.shape:
        out._data[...] = result._data
    else:
        out._data = result._data
    out._counter().version += 1
    return out


def zeros(
    *size: SizeArgument,
    out: Tensor | None = None,
    dtype: DTypeArgument = None,
    device: Any = None,
    requires_grad: builtins.bool = False,
) -> Tensor:
    if out is not None:
        dtype = out_dtype("zeros", dtype, out)
        return into_out("zeros", out, zeros(*size, dtype=dtype, device=device))
    check_device(device)
    return _finish(
        np.zeros(_size("zeros", size), _float_dtype(dtype).numpy), requires_grad
    )


def ones(
    *size: SizeArgument,
    out: Tensor | None = None,
    dtype: DTypeArgument = None,
    device: Any = None,
    requires_grad: builtins.bool = False,
) -> Tensor:
    if out is not None:
        dtype = out_dtype("ones", dtype, out)
        return into_out("ones", out, ones(*size, dtype=dtype, device=device))
    check_device(device)
    return _finish(
        np.ones(_size("ones", size), _float_dtype(dtype).numpy), requires_grad
    )


def full(
    size: Sequence[builtins.int],
    fill_value: Number,
    *,
    out: Tensor | None = None,
    dtype: DTypeArgument = None,
    device: Any = None,
    requires_grad: builtins.bool = False,
) -> Tensor:
    if out is not None:
        dtype = out_dtype("full", dtype, out)
        return into_out("full", out, full(size, fill_value, dtype=dtype, device=device))
    check_device(device)
    if dtype is None:
        inferred = np.array(fill_value)
        target = _infer_dtype(fill_value, inferred)
    else:
        target = as_dtype(dtype)
    fill = checked_value(fill_value, target.numpy, unpack=False)
    return _finish(
        np.full(_size_sequence("full", size), fill, target.numpy), requires_grad
    )


def zeros_like(
    input: Tensor,
    *,
    dtype: DTypeArgument = None,
    device: Any = None,
    requires_grad: builtins.bool = False,
) -> Tensor:
    check_device(device)
    target = as_dtype(dtype).numpy if dtype is not None else input._data.dtype
    return _finish(np.zeros(input._data.shape, target), requires_grad)


def ones_like(
    input: Tensor,
    *,
    dtype: DTypeArgument = None,
    device: Any = None,
    requires_grad: builtins.bool = False,
) -> Tensor:
    check_device(device)
    target = as_dtype(dtype).numpy if dtype is not None else input._data.dtype
    return _finish(np.ones(input._data.shape, target), requires_grad)


def arange(
    start: builtins.int | builtins.float,
    end: builtins.int | builtins.float | None = None,
    step: builtins.int | builtins.float = 1,
    *,
    out: Tensor | None = None,
    dtype: DTypeArgument = None,
    device: Any = None,
    requires_grad: builtins.bool = False,
) -> Tensor:
    if out is not None:
        dtype = out_dtype("arange", dtype, out)
        result = arange(start, end, step, dtype=dtype, device=device)
        _warn_arange_resize(out, result)
        return into_out("arange", out, result)
    check_device(device)
    if end is None:
        start, end = 0, start
    values = (start, end, step)
    size = _arange_size(start, end, step)
    if dtype is not None:
        target = as_dtype(dtype)
    elif all(isinstance(v, (builtins.int, np.integer)) for v in values):
        target = dtypes.int64
    else:
        target = dtypes.get_default_dtype()
    return _finish(
        np.arange(start, end, step)[:size].astype(target.numpy), requires_grad
    )


def _warn_arange_resize(out: Tensor, result: Tensor) -> None:
    """arange's own warning when an `out` with elements has another number of them."""
    have, want = out._data.size, result._data.size
    if have and have != want:
        warnings.warn(
            f"The number of elements in the out tensor of shape {list(out.shape)} is "
            f"{have} which does not match the computed number of elements {want}. "
            "Note that this may occur as a result of rounding error. The out tensor "
            f"will be resized to a tensor of shape ({want},).",
            stacklevel=3,
        )


def _arange_size(start: Any, end: Any, step: Any) -> builtins.int:
    """How many values arange gives, with PyTorch's checks of its arguments."""
    for value in (start, end, step):
        if isinstance(value, (complex, np.complexfloating)):
            raise RuntimeError(
                "value cannot be converted to type double without overflow"
            )
        if (
            isinstance(value, (builtins.int, np.integer))
            and not -(2**63) <= value < 2**63
        ):
            raise RuntimeError(
                "value cannot be converted to type int64_t without overflow"
            )
    start_d, end_d, step_d = (
        builtins.float(start),
        builtins.float(end),
        builtins.float(step),
    )
    if not (step_d > 0 or step_d < 0):
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(start_d) and math.isfinite(end_d)):
        raise RuntimeError(
            f"unsupported range: {_scalar_text(start)} -> {_scalar_text(end)}"
        )
    if (step_d > 0 and end_d < start_d) or (step_d < 0 and end_d > start_d):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    size = math.ceil((end_d - start_d) / step_d)
    if size > 2**63 - 1:
        raise RuntimeError("invalid size, possible overflow?")
    return size


def _scalar_text(value: Any) -> str:
    """A number as c10 prints a Scalar: ints in full, floats with 6 significant digits."""
    if isinstance(value, (builtins.int, np.integer)):
        return str(builtins.int(value))
    return f"{builtins.float(value):g}"


# -- more of PyTorch's factories ----------------------------------------------------------


def empty(
    *size: SizeArgument,
    out: Tensor | None = None,
    dtype: DTypeArgument = None,
    device: Any = None,
    requires_grad: builtins.bool = False,
) -> Tensor:
    """Zeros: gradgen never hands out uninitialised memory (PyTorch's values are
    whatever the memory held, so no program can rely on them)."""
    if out is not None:
        dtype = out_dtype("empty", dtype, out)
        return into_out("empty", out, empty(*size, dtype=dtype, device=device))
    return zeros(
        _size("empty", size), dtype=dtype, device=device, requires_grad=requires_grad
    )


def empty_like(
    input: Tensor,
    *,
    dtype: DTypeArgument = None,
    device: Any = None,
    requires_grad: builtins.bool = False,
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
    fill = checked_value(fill_value, target, unpack=False)
    return _finish(np.full(input._data.shape, fill, target), requires_grad)


def eye(
    n: builtins.int,
    m: builtins.int | None = None,
    *,
    out: Tensor | None = None,
    dtype: DTypeArgument = None,
    device: Any = None,
    requires_grad: builtins.bool = False,
) -> Tensor:
    """The n x m identity (ones on the diagonal)."""
    if out is not None:
        dtype = out_dtype("eye", dtype, out)
        return into_out("eye", out, eye(n, m, dtype=dtype, device=device))
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
    out: Tensor | None = None,
    dtype: DTypeArgument = None,
    device: Any = None,
    requires_grad: builtins.bool = False,
) -> Tensor:
    """`steps` evenly spaced values from start to end, both included."""
    if out is not None:
        dtype = out_dtype("linspace", dtype, out)
        return into_out(
            "linspace", out, linspace(start, end, steps, dtype=dtype, device=device)
        )
    check_device(device)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    target = _float_dtype(dtype).numpy
    for bound in (start, end):  # as PyTorch converts them to the result's dtype
        checked_scalar(bound, target)
    return _finish(np.linspace(start, end, steps).astype(target), requires_grad)


def logspace(
    start: Number,
    end: Number,
    steps: builtins.int,
    base: builtins.float = 10.0,
    *,
    out: Tensor | None = None,
    dtype: DTypeArgument = None,
    device: Any = None,
    requires_grad: builtins.bool = False,
) -> Tensor:
    """base ** linspace(start, end, steps)."""
    if out is not None:
        dtype = out_dtype("logspace", dtype, out)
        return into_out(
            "logspace",
            out,
            logspace(start, end, steps, base, dtype=dtype, device=device),
        )
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
        return (
            data
            if dtype is None or as_dtype(dtype) is data.dtype
            else data.to(as_dtype(dtype))
        )
    if isinstance(data, np.ndarray) and data.dtype in dtypes._FROM_NUMPY:
        if dtype is None or as_dtype(dtype).numpy == data.dtype:
            return from_numpy(data)
    return tensor(data, dtype=dtype)


# -- Tensor(...), the legacy constructor --------------------------------------------------


def legacy_data(
    data: Any, second: Any, sizes: tuple[Any, ...], default: dtype | None = None
) -> np.ndarray:
    """What `Tensor(...)` (PyTorch's legacy constructor) holds, in the default dtype:
    `Tensor()` an empty tensor, `Tensor(2, 3)` or `Tensor(Size([2, 3]))` zeros of
    that shape (PyTorch leaves them uninitialised), `Tensor([1, 2])` the data. A numpy
    array is wrapped as it is (gradgen's internal form), keeping its dtype."""
    if isinstance(data, np.ndarray):  # a subclass (memmap, ...): its memory, as is
        return data.view(np.ndarray)
    if isinstance(data, np.generic):  # a numpy scalar: a 0-d array of its dtype
        return np.asarray(data)
    if default is None:  # `default`: a legacy type's dtype (FloatTensor(...))
        default = dtypes.get_default_dtype()
    # `second` is the second positional argument, a size in `Tensor(2, 3)`.
    more = sizes if second is False else (second, *sizes)
    if data is None and not more:
        return np.zeros(0, default.numpy)
    if isinstance(data, (int, np.integer)) and not isinstance(data, bool):
        return np.zeros(_size("new", (data, *more)), default.numpy)
    if more:
        raise TypeError(
            "new() received an invalid combination of arguments: the legacy constructor "
            "takes sizes (`Tensor(2, 3)`) or one sequence of data (`Tensor([1, 2])`)"
        )
    if isinstance(data, Size):
        return np.zeros(_size("new", (data,)), default.numpy)
    if isinstance(data, Tensor):
        if data._data.dtype != default.numpy:
            raise TypeError(
                f"expected {dtypes.spelling(default).scalar_type} (got "
                f"{dtypes.spelling(data).scalar_type})"
            )
        return data._data
    if isinstance(data, str):
        raise TypeError("new(): invalid data type 'str'")
    if not isinstance(data, (list, tuple, range)):
        raise TypeError(
            f"new(): data must be a sequence (got {python_type_name(data)})"
        )
    return array_from_data(data, default)
