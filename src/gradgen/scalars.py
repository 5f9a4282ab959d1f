"""Python data into arrays, with PyTorch's checks: no silent overflow or narrowing.

numpy wraps `np.array(2**63, np.int64)`-like conversions, turns `[1, 2**63]` into
floats and drops imaginary parts with a warning; PyTorch raises instead. This module
is the one place where Python numbers and nested lists become tensor data:

- `array_from_data` for `tensor(data)`: numpy converts, then the result is checked
  (vectorised); only data numpy cannot hold exactly (ints beyond int64, ragged lists)
  is walked element by element, as PyTorch's own conversion does.
- `checked_value` for a scalar written into a tensor (`t[i] = v`).
"""

from __future__ import annotations

import math
import operator
import warnings
from typing import Any

import numpy as np

from . import dtypes
from .dtypes import dtype
from .tensor import Tensor

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
OVERFLOW_UNPACK = "Overflow when unpacking long long"
COMPLEX_DISCARDED = "Casting complex values to real discards the imaginary part"


def python_type_name(value: object) -> str:
    """A type as PyTorch's errors print it: `int`, `Tensor`, `numpy.float32`."""
    cls = type(value)
    return f"numpy.{cls.__name__}" if cls.__module__ == "numpy" else cls.__name__


def _overflow(type_name: str) -> RuntimeError:
    return RuntimeError(
        f"value cannot be converted to type {type_name} without overflow"
    )


def unpack_int(value: Any) -> int:
    """A Python (or numpy) integer as int64 does: ValueError beyond its range."""
    number = operator.index(value)
    if not INT64_MIN <= number <= INT64_MAX:
        raise ValueError(OVERFLOW_UNPACK)
    return number


def checked_value(
    value: Any, target: np.dtype[Any], unpack: bool = True, to_inf: bool = False
) -> Any:
    """A Python number converted to `target` as c10's checked_convert does: a complex
    with an imaginary part into a real type, a non-finite or out-of-range value into
    an integer type, a finite value that overflows a float type are errors.

    `unpack`: an int beyond int64 is PyTorch's ValueError (as `t[i] = v` unpacks it)
    rather than the conversion's RuntimeError (as `full` reports it). `to_inf`: a
    value beyond float16's or bfloat16's range is inf, not an error (as `t[i] = v`
    writes it into those dtypes; float32 and float64 still refuse it)."""
    kind = target.kind
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        value = unpack_int(value) if unpack else int(value)
    if kind == "b":
        return bool(value)
    overflow = _overflow(dtypes.spelling(target).cpp)
    if isinstance(value, complex):
        if kind != "c":
            if value.imag != 0:
                raise overflow
            value = value.real
        else:
            parts = (value.real, value.imag)
            converted = target.type(value)
            if any(
                math.isfinite(p) and not math.isfinite(c)
                for p, c in zip(parts, (converted.real, converted.imag))
            ):
                raise overflow
            return converted
    if kind in "iu":
        if isinstance(value, float) and not math.isfinite(value):
            raise overflow
        info = np.iinfo(target)
        if not info.min <= int(value) <= info.max:
            raise overflow
        return int(value)
    with np.errstate(over="ignore"):
        converted = target.type(value)
    real = converted.real if kind == "c" else converted
    if to_inf and target.itemsize == 2:
        return converted
    if math.isfinite(float(value)) and not np.isfinite(real):
        raise overflow
    return converted


# -- tensor(data) ------------------------------------------------------------------------


def array_from_data(data: Any, target: dtype | None) -> np.ndarray:
    """Python data (numbers, nested lists or tuples, 0-d tensors) as an array of
    `target` (None: inferred as PyTorch infers it)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            array = np.array(data)
    except (ValueError, TypeError, OverflowError):
        array = None
    if (
        array is None
        or array.dtype.kind not in "biufc"
        or array.dtype.kind == "u"
        or (array.dtype.kind == "f" and array.size and np.abs(array).max() >= 2.0**63)
    ):
        # numpy could not hold it exactly (or at all): PyTorch's element-wise path.
        return _array_by_elements(data, target)
    inferred = _inferred(array.dtype.kind)
    result = inferred if target is None else target
    _check_narrowing(array, result)
    with np.errstate(over="ignore", invalid="ignore"):
        return array.astype(result.numpy)


def _inferred(kind: str) -> dtype:
    if kind == "b":
        return dtypes.bool
    if kind in "iu":
        return dtypes.int64
    if kind == "f":
        return dtypes.get_default_dtype()
    return dtypes.default_complex_dtype()


def _check_narrowing(array: np.ndarray, target: dtype) -> None:
    """PyTorch's errors for Python values that `target` cannot hold."""
    kind, wanted = array.dtype.kind, target.numpy
    if wanted.kind == "b" or wanted.kind == "c" or not array.size:
        return
    if kind == "c":
        raise TypeError(_complex_error(wanted))
    if wanted.kind in "iu" and kind in "fiu" and array.dtype != wanted:
        info = np.iinfo(wanted)
        low, high = array.min(), array.max()
        finite = kind != "f" or bool(np.isfinite(array).all())
        if not finite or low < info.min or high > info.max:
            # `tensor(data, dtype=...)` names the type as numpy does (int64, int32).
            raise _overflow(wanted.name)


def _complex_error(wanted: np.dtype[Any]) -> str:
    if wanted.kind in "iu":
        return "'complex' object cannot be interpreted as an integer"
    return "must be real number, not complex"


def _array_by_elements(data: Any, target: dtype | None) -> np.ndarray:
    """Walk `data` as PyTorch does: the shape from the first element at each depth,
    then every element checked and converted on its own."""
    shape: list[int] = []
    probe = data
    while _is_sequence(probe):
        shape.append(len(probe))
        if not len(probe):
            break
        probe = probe[0]
    values: list[Any] = []
    _collect(data, shape, 0, values)
    inferred = target if target is not None else _infer(values)
    wanted = inferred.numpy
    converted = [_convert(value, wanted) for value in values]
    with np.errstate(over="ignore"):
        return np.array(converted, dtype=wanted).reshape(shape)


def _is_sequence(value: Any) -> bool:
    if isinstance(value, Tensor):
        return value._data.ndim > 0
    return isinstance(value, (list, tuple, range, np.ndarray))


def _collect(data: Any, shape: list[int], depth: int, values: list[Any]) -> None:
    if depth == len(shape):
        if _is_sequence(data):
            raise TypeError(
                f"'{type(data).__name__}' object cannot be interpreted as an integer"
            )
        values.append(data)
        return
    if not _is_sequence(data):
        raise TypeError("not a sequence")
    if len(data) != shape[depth]:
        raise ValueError(
            f"expected sequence of length {shape[depth]} at dim {depth} (got {len(data)})"
        )
    for item in data:
        _collect(item, shape, depth + 1, values)


def _infer(values: list[Any]) -> dtype:
    """bool < int < float < complex over the elements, as PyTorch infers."""
    rank = 0
    for value in values:
        if isinstance(value, Tensor):
            value = value._data.reshape(()).item()
        if isinstance(value, (bool, np.bool_)):
            continue
        if isinstance(value, (int, np.integer)):
            rank = max(rank, 1)
        elif isinstance(value, (float, np.floating)):
            rank = max(rank, 2)
        elif isinstance(value, (complex, np.complexfloating)):
            rank = 3
        elif isinstance(value, str):
            raise TypeError("new(): invalid data type 'str'")
        else:
            raise RuntimeError(f"Could not infer dtype of {type(value).__name__}")
    return _inferred("bifc"[rank])


def _convert(value: Any, wanted: np.dtype[Any]) -> Any:
    """One element of `tensor(data)` converted to `wanted` (PyTorch's store_scalar)."""
    if isinstance(value, Tensor):
        value = value._data.reshape(()).item()
    kind = wanted.kind
    if kind == "b":
        return bool(value)
    if isinstance(value, str):
        raise TypeError(f"must be real number, not {type(value).__name__}")
    if kind in "iu":
        if isinstance(value, complex):
            raise TypeError(_complex_error(wanted))
        if isinstance(value, float):
            if not math.isfinite(value) or not INT64_MIN <= value < 2.0**63:
                raise _overflow(wanted.name)
            value = int(value)
        number = unpack_int(value)
        info = np.iinfo(wanted)
        if not info.min <= number <= info.max:
            raise _overflow(wanted.name)
        return number
    if kind in "fV":  # bfloat16 is ml_dtypes' kind "V"
        if isinstance(value, complex):
            raise TypeError(_complex_error(wanted))
        return float(value)  # an int too large: OverflowError, as PyTorch's
    return complex(value)
