"""Array twins of the elementwise operators and helpers a formula calls: each computes
what its tensor form computes (the same numpy kernel, the same promotion), over arrays.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...dtypes import dtype
from ...numpy_kernels import (
    compare,
    logical,
    masked_fill as _masked_fill,
    sign as _sign,
    where_select,
    div_mode,
    div_true,
    int_to_float,
    negative,
    power,
    reverse_subtract,
    sgn as _sgn,
    sigmoid as _sigmoid,
    sigmoid_backward as _sigmoid_backward,
    subtract,
    tanh_backward as _tanh_backward,
    to_copy,
)
from ._common import (
    FLOAT16,
    FLOAT16_LIMIT,
    _NDARRAY,
    as_array,
    float_dtype,
    in_dtype,
    is_array,
    promoted,
    result_dtype,
    scalar_conj,
)

__all__ = [
    "add",
    "sub",
    "mul",
    "div",
    "neg",
    "pow",
    "conj",
    "real",
    "sgn",
    "exp",
    "log",
    "sin",
    "cos",
    "sqrt",
    "reciprocal",
    "rsqrt",
    "sinh",
    "cosh",
    "sign",
    "isnan",
    "logical_not",
    "logical_and",
    "logical_or",
    "where",
    "masked_fill",
    "masked_fill_",
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "to",
    "zeros_like",
    "type_and_size_zeros",
    "handle_r_to_c",
    "maybe_multiply",
    "mul_tensor_backward",
    "div_tensor_self_backward",
    "div_tensor_other_backward",
    "pow_backward",
    "tanh_backward",
    "sigmoid_backward",
    "log1p_backward",
    "sigmoid",
    "clamp_backward",
    "clamp_backward_min_max",
]


# -- operators ------------------------------------------------------------------------


def _same_dtype(self: Any, other: Any) -> bool:
    """Two arrays (ndarrays or numpy floating scalars) of one dtype: the kernels'
    promotion does nothing (the fast path)."""
    return (
        self.__class__ in _FLOAT_ARRAYS
        and other.__class__ in _FLOAT_ARRAYS
        and self.dtype is other.dtype
    )


# Python numbers that a real floating array takes in its own dtype (NEP 50): the
# kernels' promotion of `array OP number` changes neither operand then.
_REAL_NUMBERS = (int, float)
# ndarrays and the numpy scalars a 0-d array's arithmetic returns (which the engine
# hands on as they are: 0-d gradients without a 0-d array made for each).
_FLOAT_ARRAYS: frozenset[Any] = frozenset(
    {np.ndarray, np.float16, np.float32, np.float64}
)


# The real floating dtypes (a set look-up is cheaper than `.kind == "f"`).
_FLOAT_DTYPES: frozenset[np.dtype[Any]] = frozenset(
    np.dtype(t) for t in (np.float16, np.float32, np.float64)
)


def _float_and_number(self: Any, other: Any) -> bool:
    """A real floating ndarray and a Python int or float (not a bool): the fast path
    of the arithmetic twins, computing what their general path computes."""
    return (
        self.__class__ in _FLOAT_ARRAYS
        and other.__class__ in _REAL_NUMBERS
        and self.dtype.kind == "f"
        and (self.dtype is not FLOAT16 or -FLOAT16_LIMIT < other < FLOAT16_LIMIT)
    )


def add(self: Any, other: Any, alpha: Any = 1) -> np.ndarray:
    """add.Tensor / add.Scalar (`x + y`, `1 + x`)."""
    if alpha == 1 and (_same_dtype(self, other) or _float_and_number(self, other)):
        return as_array(self + other)
    if not is_array(self):  # a number on the left: Tensor.__radd__, other + self
        self, other = other, self
    common = result_dtype(self, other)
    a, b = promoted(self, common), promoted(other, common)
    return in_dtype(a + b if alpha == 1 else a + alpha * b, common)


def sub(self: Any, other: Any, alpha: Any = 1) -> np.ndarray:
    """sub.Tensor / sub.Scalar (`x - y`); `1 - x` is rsub, as Tensor.__rsub__."""
    if _same_dtype(self, other) and self.dtype.kind != "b":
        return as_array(self - other if alpha == 1 else self - alpha * other)
    if alpha == 1 and _float_and_number(self, other):
        return as_array(self - other)
    if not is_array(self):
        return as_array(reverse_subtract(as_array(other), self, alpha))
    common = result_dtype(self, other)
    a = promoted(self, common)
    if is_array(other):
        return in_dtype(subtract(a, promoted(other, common), alpha), common)
    return in_dtype(a - other if alpha == 1 else a - alpha * other, common)


def mul(self: Any, other: Any) -> np.ndarray:
    """mul.Tensor / mul.Scalar (`x * y`, `2 * x`)."""
    if _same_dtype(self, other) or _float_and_number(self, other):
        return as_array(self * other)
    common = result_dtype(self, other)
    return in_dtype(promoted(self, common) * promoted(other, common), common)


def div(self: Any, other: Any, rounding_mode: str | None = None) -> np.ndarray:
    """div.Tensor / div.Scalar (`x / y`) and div.Tensor_mode; `2 / x` is
    `x.reciprocal() * 2`, as Tensor.__rtruediv__."""
    if (
        self.__class__ is _NDARRAY
        and self.base.__class__ in _FLOAT_SCALARS
        and other.__class__ in _REAL_NUMBERS
        and self.dtype is self.base.dtype
        and rounding_mode is None
    ):
        # A number spread over a shape in its own dtype (mean's backward: the seed
        # expanded, then divided by numel): every element's quotient is the number's,
        # so the number is divided once and spread, read-only, as expand spreads it.
        return _spread_quotient(self, other)
    if rounding_mode is None and (
        (_same_dtype(self, other) and self.dtype.kind in "fc")
        or _float_and_number(self, other)
    ):
        return as_array(np.true_divide(self, other))
    if not is_array(self):
        return mul(reciprocal(other), self)
    if rounding_mode is not None:
        common = result_dtype(self, other)
        return in_dtype(
            div_mode(promoted(self, common), promoted(other, common), rounding_mode),
            common,
        )
    common = float_dtype(result_dtype(self, other))
    return in_dtype(div_true(promoted(self, common), promoted(other, common)), common)


def _spread_quotient(spread: np.ndarray, divisor: int | float) -> np.ndarray:
    """`spread / divisor` for a stride-0 view of a numpy floating number: the same
    quotient (numpy's division loop, in the number's dtype), computed once."""
    number: Any = spread.base  # a numpy floating scalar of its dtype (div checked)
    if any(spread.strides) or not spread.size:
        # Not the number spread, or nothing to divide.
        return as_array(np.true_divide(spread, divisor))
    # numpy's scalar division: np.true_divide's quotient (the same loop arithmetic
    # in the number's dtype, NEP 50), without the ufunc call.
    if number.dtype is FLOAT16 and not -FLOAT16_LIMIT < divisor < FLOAT16_LIMIT:
        # float16 cannot hold the divisor: float32 arithmetic, rounded to float16
        # (PyTorch's for half precision; `promoted`).
        with np.errstate(over="ignore"):
            quotient = np.float16(np.float32(number) / np.float32(divisor))
    else:
        quotient = number / divisor
    # (read-only: a numpy scalar lends its buffer read-only)
    result: np.ndarray = np.ndarray(
        spread.shape, spread.dtype, quotient, 0, spread.strides
    )
    return result


# The numpy numbers a spread (expand of a 0-d gradient) is a view of.
_FLOAT_SCALARS = frozenset({np.float16, np.float32, np.float64})


def neg(self: np.ndarray) -> np.ndarray:
    if self.__class__ in _FLOAT_ARRAYS and self.dtype.kind == "f":
        # The kernel's negative without its bool check: an ndarray's `-` is numpy's
        # negative, a numpy scalar's is its own (the same sign flip, a tenth of the
        # ufunc's cost; a 0-d array's result is a numpy scalar, handed on as it is).
        result: np.ndarray = -self
        return result
    return as_array(negative(self))


def pow(self: Any, exponent: Any) -> np.ndarray:  # noqa: A001  (PyTorch's name)
    """pow.Tensor_Scalar, pow.Tensor_Tensor and pow.Scalar (a number base)."""
    if _float_and_number(self, exponent):
        # power's own branch for a floating base: numpy's `**`.
        return as_array(self**exponent)
    common = result_dtype(self, exponent)
    return in_dtype(power(promoted(self, common), promoted(exponent, common)), common)


def conj(self: Any) -> np.ndarray | Any:
    """A real array is returned as it is, as the composite conj does (a wrapped
    number is conjugated as a Scalar)."""
    if self.__class__ is _NDARRAY and self.dtype.kind != "c":
        return self
    if not is_array(self):
        return scalar_conj(self)
    if self.dtype.kind != "c":
        return self
    return as_array(np.conjugate(self))


def real(self: np.ndarray) -> np.ndarray:
    return as_array(np.real(self))


def sgn(self: np.ndarray) -> np.ndarray:
    return as_array(_sgn(as_array(self)))


def exp(self: np.ndarray) -> np.ndarray:
    return as_array(np.exp(int_to_float(as_array(self))))


def log(self: np.ndarray) -> np.ndarray:
    return as_array(np.log(int_to_float(as_array(self))))


def sin(self: np.ndarray) -> np.ndarray:
    return as_array(np.sin(int_to_float(as_array(self))))


def cos(self: np.ndarray) -> np.ndarray:
    return as_array(np.cos(int_to_float(as_array(self))))


def sqrt(self: np.ndarray) -> np.ndarray:
    return as_array(np.sqrt(int_to_float(as_array(self))))


def reciprocal(self: np.ndarray) -> np.ndarray:
    return as_array(np.reciprocal(int_to_float(as_array(self))))


def rsqrt(self: np.ndarray) -> np.ndarray:
    return as_array(np.reciprocal(np.sqrt(int_to_float(as_array(self)))))


def sinh(self: np.ndarray) -> np.ndarray:
    return as_array(np.sinh(int_to_float(as_array(self))))


def cosh(self: np.ndarray) -> np.ndarray:
    return as_array(np.cosh(int_to_float(as_array(self))))


def sign(self: np.ndarray) -> np.ndarray:
    return as_array(_sign(as_array(self)))


def isnan(self: np.ndarray) -> np.ndarray:
    return as_array(np.isnan(self))


def logical_not(self: np.ndarray) -> np.ndarray:
    return as_array(np.logical_not(self))


def logical_and(self: np.ndarray, other: np.ndarray) -> np.ndarray:
    return as_array(logical(np.logical_and, as_array(self), as_array(other)))


def logical_or(self: np.ndarray, other: np.ndarray) -> np.ndarray:
    return as_array(logical(np.logical_or, as_array(self), as_array(other)))


def where(condition: np.ndarray, self: Any, other: Any) -> np.ndarray:
    """where.self, and its Scalar overloads (a number is a wrapped number)."""
    common = result_dtype(self, other)
    return in_dtype(
        where_select(
            as_array(condition),
            np.asarray(promoted(self, common), common),
            np.asarray(promoted(other, common), common),
        ),
        common,
    )


def masked_fill(self: np.ndarray, mask: np.ndarray, value: Any) -> np.ndarray:
    return as_array(_masked_fill(as_array(self), as_array(mask), value))


def masked_fill_(self: np.ndarray, mask: np.ndarray, value: Any) -> np.ndarray:
    """In a formula, on a temporary of the formula's own: the values of masked_fill."""
    return masked_fill(self, mask, value)


def _comparison(name: str, ufunc: Any, self: Any, other: Any) -> np.ndarray:
    """The array comes first: the generator writes `0 < x` as `gt(x, 0)`."""
    return as_array(compare(name, ufunc, as_array(self), other))


def eq(self: Any, other: Any) -> np.ndarray:
    return _comparison("eq", np.equal, self, other)


def ne(self: Any, other: Any) -> np.ndarray:
    return _comparison("ne", np.not_equal, self, other)


def lt(self: Any, other: Any) -> np.ndarray:
    return _comparison("lt", np.less, self, other)


def le(self: Any, other: Any) -> np.ndarray:
    return _comparison("le", np.less_equal, self, other)


def gt(self: Any, other: Any) -> np.ndarray:
    return _comparison("gt", np.greater, self, other)


def ge(self: Any, other: Any) -> np.ndarray:
    return _comparison("ge", np.greater_equal, self, other)


def to(self: np.ndarray, dtype: dtype) -> np.ndarray:
    """`x.to(dtype)`: the array itself when it has the dtype, else a converted copy."""
    if self.dtype == dtype.numpy:
        return self
    return as_array(to_copy(as_array(self), dtype))


def zeros_like(self: np.ndarray) -> np.ndarray:
    return np.zeros(self.shape, self.dtype)


def type_and_size_zeros(info: Any) -> np.ndarray:
    """`zeros_like(x)` of a formula, from the TypeAndSize saved instead of x."""
    return np.zeros(info.shape, info.dtype)


# -- helpers (PyTorch's FunctionsManual names) -----------------------------------------


def handle_r_to_c(self_type: Any, gradient: np.ndarray | None) -> np.ndarray | None:
    """Drop the imaginary part of a gradient whose input was real."""
    if gradient is None or gradient.dtype.kind != "c":
        return gradient
    if is_array(self_type):
        is_complex = self_type.dtype.kind == "c"
    elif isinstance(self_type, dtype):
        is_complex = self_type.is_complex
    else:  # a wrapped number
        is_complex = isinstance(self_type, complex)
    return gradient if is_complex else real(gradient)


def maybe_multiply(tensor: np.ndarray, scalar: Any) -> np.ndarray:
    if scalar == 1:
        return tensor
    return mul(tensor, scalar)


def mul_tensor_backward(
    grad: np.ndarray, other: np.ndarray, self_type: dtype
) -> np.ndarray | None:
    # _same_dtype (not complex) or _float_and_number, inline: every mul node runs it.
    # (grad is an ndarray or a numpy scalar: it has a dtype.)
    cls = other.__class__
    if cls is _NDARRAY:
        dtype = other.dtype
        if grad.dtype is dtype and dtype in _FLOAT_DTYPES:
            if not other.ndim:
                # A 0-d array times a numpy scalar costs ten times its numpy scalar's
                # product, the same multiplication.
                other = other[()]
            product: np.ndarray = grad * other  # real: conj, handle_r_to_c: nothing
            return product
    elif (
        (cls is float or cls is int)
        and grad.__class__ in _FLOAT_ARRAYS
        and grad.dtype.kind == "f"
        and (grad.dtype is not FLOAT16 or -FLOAT16_LIMIT < other < FLOAT16_LIMIT)
    ) or (
        cls in _FLOAT_ARRAYS
        and grad.dtype is other.dtype
        and grad.__class__ in _FLOAT_ARRAYS
    ):
        return grad * other  # type: ignore[no-any-return]
    return handle_r_to_c(self_type, mul(grad, conj(other)))


def div_tensor_self_backward(
    grad: np.ndarray, other: Any, self_st: dtype, rounding_mode: str | None = None
) -> np.ndarray | None:
    if rounding_mode is not None:
        return np.zeros(grad.shape, self_st.numpy)
    conj_other = conj(other) if is_array(other) else scalar_conj(other)
    return handle_r_to_c(self_st, div(grad, conj_other))


def div_tensor_other_backward(
    grad: np.ndarray,
    self: np.ndarray,
    other: np.ndarray,
    rounding_mode: str | None = None,
) -> np.ndarray | None:
    if rounding_mode is not None:
        return np.zeros(grad.shape, other.dtype)
    return handle_r_to_c(other, mul(neg(grad), conj(div(div(self, other), other))))


def _spread_of_one(grad: np.ndarray) -> bool:
    """Whether `grad` is a read-only stride-0 view of the number 1 (what sum's and
    expand's backward make of a seed of ones), with at least one element."""
    return (
        grad.base is not None
        and not grad.flags.writeable
        and grad.size > 0
        and not any(grad.strides)
        and grad.item(0) == 1
    )


def pow_backward(
    grad: np.ndarray, self: np.ndarray, exponent: Any
) -> np.ndarray | None:
    if exponent == 0:
        return zeros_like(self)
    if (
        self.__class__ in _FLOAT_ARRAYS  # _float_and_number, inline
        and exponent.__class__ in _REAL_NUMBERS
        and self.dtype.kind == "f"
        and grad.__class__ in _FLOAT_ARRAYS
        and grad.dtype is self.dtype
        and grad.shape == self.shape
    ):
        # The common case (`x ** 3` on a real floating x): the steps below, each on
        # its fast path, without their checks (the same numpy calls, the same bits).
        if not self.ndim:  # 0-d: numpy's scalar arithmetic, a numpy scalar out
            if exponent == 2 or exponent == 3:
                # On self's numpy scalar (a tenth of a 0-d array's cost): x, or
                # x * x, which is what `x ** 2` computes (numpy's square).
                scalar = self[()]
                powered = scalar if exponent == 2 else scalar * scalar
            else:
                powered = self ** (exponent - 1)
            return powered * exponent * grad  # type: ignore[no-any-return]
        powered = self if exponent == 2 else as_array(self ** (exponent - 1))
        derivative = as_array(powered * exponent)
        if _spread_of_one(grad):
            # `sum(x ** 2).backward()`: grad is sum's seed of ones spread over x's
            # shape, and derivative, a product's result, holds no signalling NaN, so
            # `derivative * 1` is derivative bit for bit: the pass is skipped.
            return derivative
        product: np.ndarray = np.multiply(derivative, grad, out=derivative)
        return product
    powered = self if exponent == 2 else pow(self, exponent - 1)
    derivative = conj(mul(powered, exponent))
    if derivative.shape != grad.shape or derivative.dtype != grad.dtype:
        return handle_r_to_c(self, mul(grad, derivative))
    # The tensor form's order: a temporary of its own, multiplied in place.
    return handle_r_to_c(self, np.multiply(derivative, grad, out=derivative))


def tanh_backward(grad_output: np.ndarray, output: np.ndarray) -> np.ndarray:
    common = result_dtype(grad_output, output)
    return in_dtype(
        _tanh_backward(promoted(grad_output, common), promoted(output, common)), common
    )


def sigmoid_backward(grad_output: np.ndarray, output: np.ndarray) -> np.ndarray:
    common = result_dtype(grad_output, output)
    return in_dtype(
        _sigmoid_backward(promoted(grad_output, common), promoted(output, common)),
        common,
    )


def log1p_backward(grad: np.ndarray, self: np.ndarray) -> np.ndarray:
    return div(grad, add(conj(self), 1))


def sigmoid(self: np.ndarray) -> np.ndarray:
    return as_array(_sigmoid(int_to_float(as_array(self))))


def clamp_backward(
    grad: np.ndarray, self: np.ndarray, min: Any, max: Any  # noqa: A002
) -> np.ndarray:
    """grad where min <= self <= max, else zero (the tensor helper's steps)."""
    if max is not None and min is not None:
        return where(logical_and(ge(self, min), le(self, max)), grad, 0.0)
    if min is not None:
        return where(ge(self, min), grad, 0.0)
    if max is not None:
        return where(le(self, max), grad, 0.0)
    return grad


def clamp_backward_min_max(
    grad: np.ndarray | None,
    self: np.ndarray,
    min: np.ndarray | None,  # noqa: A002
    max: np.ndarray | None,  # noqa: A002
    grad_input_mask: Any,
) -> tuple[np.ndarray | None, np.ndarray | None]:
    """The gradients of clamp's Tensor bounds (the tensor helper's steps)."""
    grad_min: np.ndarray | None = None
    grad_max: np.ndarray | None = None
    if grad is None:
        return grad_min, grad_max
    if max is not None and min is not None:
        if grad_input_mask[0]:
            grad_min = where(logical_and(lt(self, min), lt(min, max)), grad, 0.0)
        if grad_input_mask[1]:
            grad_max = where(logical_or(gt(self, max), lt(max, min)), grad, 0.0)
    elif min is not None and grad_input_mask[0]:
        grad_min = where(lt(self, min), grad, 0.0)
    elif max is not None and grad_input_mask[1]:
        grad_max = where(gt(self, max), grad, 0.0)
    return grad_min, grad_max
