"""The registry of numpy translations and the argument translation they share."""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import dtypes
from ..factories import tensor as _new_tensor
from ..generated import ops
from ..tensor import Tensor

# numpy ufunc name -> the gradgen operator computing the same function.
UFUNC_OPERATORS: dict[str, str] = {
    "add": "add",
    "subtract": "sub",
    "multiply": "mul",
    "true_divide": "div",
    "divide": "div",
    "power": "pow",
    "matmul": "matmul",
    "negative": "neg",
    "absolute": "abs",
    "sign": "sign",
    "exp": "exp",
    "exp2": "exp2",
    "expm1": "expm1",
    "log": "log",
    "log2": "log2",
    "log10": "log10",
    "log1p": "log1p",
    "sqrt": "sqrt",
    "square": "square",
    "reciprocal": "reciprocal",
    "sin": "sin",
    "cos": "cos",
    "tan": "tan",
    "arcsin": "asin",
    "arccos": "acos",
    "arctan": "atan",
    "arctan2": "atan2",
    "sinh": "sinh",
    "cosh": "cosh",
    "tanh": "tanh",
    "floor": "floor",
    "ceil": "ceil",
    "trunc": "trunc",
    "maximum": "maximum",
    "minimum": "minimum",
    "fmax": "fmax",
    "fmin": "fmin",
    "fmod": "fmod",
    "remainder": "remainder",
    "hypot": "hypot",
    "conjugate": "conj",
    "equal": "eq",
    "not_equal": "ne",
    "less": "lt",
    "less_equal": "le",
    "greater": "gt",
    "greater_equal": "ge",
    "logical_and": "logical_and",
    "logical_or": "logical_or",
    "logical_xor": "logical_xor",
    "logical_not": "logical_not",
    "isnan": "isnan",
    "isinf": "isinf",
    "isfinite": "isfinite",
    "floor_divide": "floor_divide",
}

# numpy function -> its translation into gradgen operators.
FUNCTIONS: dict[Callable[..., Any], Callable[..., Any]] = {}
# numpy function -> the gradgen operators its translation calls (for tests and readers).
FUNCTION_OPERATORS: dict[Callable[..., Any], tuple[str, ...]] = {}


def _implements(
    *functions: Callable[..., Any], operators: tuple[str, ...]
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated translation for numpy's `functions`."""

    def register(translation: Callable[..., Any]) -> Callable[..., Any]:
        for function in functions:
            FUNCTIONS[function] = translation
            FUNCTION_OPERATORS[function] = operators
        return translation

    return register


# -- argument translation --------------------------------------------------------------


class _NoValue:
    """numpy's "argument not given" for arguments whose absence means something."""

    def __repr__(self) -> str:
        return "<no value>"


_NO_VALUE: Any = _NoValue()


def _tensor(value: Any) -> Tensor:
    """A Tensor argument as is; an ndarray, list or number as a new tensor of its data
    (numpy's dtype kept: a float64 array stays float64)."""
    if isinstance(value, Tensor):
        return value
    return _new_tensor(np.asarray(value))


def _number_or_tensor(value: Any) -> Any:
    """Python and numpy numbers stay numbers (gradgen's Scalar overloads, with
    wrapped-number promotion); anything array-like becomes a tensor."""
    if isinstance(value, (bool, int, float, complex, np.number, np.bool_)):
        return value
    return _tensor(value)


def _refuse(function: str, **arguments: Any) -> None:
    """TypeError for arguments gradgen cannot honour (those not at their default)."""
    reasons = {
        "out": "gradgen operators return a new tensor; use the result instead of out=",
        "where": "gradgen has no masked reductions",
        "initial": "gradgen reductions take no initial value",
        "casting": "gradgen casts by its own promotion rules",
        "subok": "gradgen has no array subclasses",
        "mean": "gradgen computes the mean itself",
    }
    for name, value in arguments.items():
        if value is not None and value is not _NO_VALUE:
            if name == "casting" and value == "same_kind":
                continue
            if name == "subok" and value is False:
                continue
            raise TypeError(
                f"numpy.{function}() on a gradgen Tensor does not support "
                f"{name}={value!r}: {reasons.get(name, 'gradgen cannot honour it')}"
            )


def _dtype(value: Any) -> dtypes.dtype | None:
    """numpy's `dtype=` as a gradgen dtype (TypeError for dtypes gradgen lacks)."""
    return None if value is None else dtypes.as_dtype(value)


def _axis(value: Any, ndim: int) -> int:
    """One axis, negative ones counted from the end, checked as numpy does."""
    axis = operator.index(value)
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(axis, ndim)
    return axis % ndim


def _axes(value: Any, ndim: int) -> tuple[int, ...]:
    """An int or a sequence of ints as normalised axes; a repeated axis is numpy's
    ValueError."""
    items = value if isinstance(value, Sequence) else (value,)
    axes = tuple(_axis(item, ndim) for item in items)
    if len(set(axes)) != len(axes):
        raise ValueError("repeated axis")
    return axes


def _keepdims(value: Any) -> bool:
    return False if value is _NO_VALUE else bool(value)


def _flat(value: Tensor) -> Tensor:
    return ops.reshape(value, (-1,))
