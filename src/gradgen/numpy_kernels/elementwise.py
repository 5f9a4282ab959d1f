"""Elementwise kernels: unary and binary math, comparisons, clamps, copies and fills."""

from __future__ import annotations

import numbers
import warnings
from typing import Any

import numpy as np

from ..dtypes import get_default_dtype
from ..dtypes import spelling
from ..dtypes import scalar_type_name as _scalar_type_name
from ._checked import alpha_check
from ._common import (
    check_p,
    check_probabilities,
    _check_broadcast,
    _common_dtype,
    _erf_float64,
    _not_implemented_for,
    _silently,
    checked_scalar,
    opmath_checked_scalar,
)

# The smallest positive float64 (a subnormal): what a draw of exactly 0 becomes.
_SMALLEST_FLOAT64 = float(np.nextafter(0.0, 1.0))

__all__ = [
    "logaddexp",
    "poisson",
    "bernoulli_tensor",
    "bernoulli_float",
    "exponential",
    "to_copy",
    "int_to_float",
    "absolute",
    "absolute_",
    "sign",
    "sgn",
    "sigmoid",
    "erf",
    "rounding",
    "round_decimals",
    "angle",
    "sigmoid_backward",
    "tanh_backward",
    "into",
    "div_true",
    "div_mode",
    "div_floor",
    "reverse_subtract",
    "extremum",
    "atan2_floating",
    "hypot_floating",
    "where_select",
    "clamp_scalars",
    "clamp_tensors",
    "modulo",
    "compare",
    "logical",
    "bitwise",
    "copy_from",
    "fill",
    "lerp",
    "addcmul",
    "addcdiv",
    "nan_to_num",
    "degrees_radians",
    "signbit",
    "frac",
    "frexp",
    "heaviside",
    "floating_binary",
    "ldexp",
    "clamp_bound",
]


def to_copy(self: np.ndarray, dtype: Any) -> np.ndarray:
    """A copy, converted to `dtype` (a gradgen dtype) when one is given."""
    if dtype is None:
        return self.copy()
    if self.dtype.kind == "c" and dtype.numpy.kind != "c":
        # PyTorch's warning (a UserWarning), not numpy's ComplexWarning.
        warnings.warn(
            "Casting complex values to real discards the imaginary part",
            UserWarning,
            stacklevel=2,
        )
        self = self.real
    return self.astype(dtype.numpy)


def int_to_float(self: np.ndarray) -> np.ndarray:
    """Bool and integer input of a floating-point function, in the default float dtype
    (PyTorch's promote_integer_inputs_to_float); other dtypes unchanged."""
    if self.dtype.kind in "biu":
        return self.astype(get_default_dtype().numpy)
    return self


def absolute(self: np.ndarray) -> np.ndarray:
    """|self|; complex input gives the real dtype of the same precision."""
    if self.dtype.kind == "b":
        raise _not_implemented_for("abs_cpu", self)
    return np.abs(self)


def absolute_(self: np.ndarray) -> np.ndarray:
    """abs_: complex tensors cannot hold their (real) absolute value in place."""
    if self.dtype.kind == "c":
        raise RuntimeError("In-place abs is not supported for complex tensors.")
    return absolute(self)


def sign(self: np.ndarray) -> np.ndarray:
    """-1, 0 or 1 in self's dtype, as PyTorch's (0 < x) - (x < 0): NaN and -0.0 give
    0 (numpy's sign gives NaN and -0.0)."""
    if self.dtype.kind == "c":
        raise NotImplementedError(
            "Unlike NumPy, torch.sign is not intended to support complex numbers. "
            "Please use torch.sgn instead."
        )
    if self.dtype.kind == "b":
        return self.copy()
    return (self > 0).astype(self.dtype) - (self < 0).astype(self.dtype)


def sgn(self: np.ndarray) -> np.ndarray:
    """sign for real input; z / |z| for complex input, 0 where z == 0."""
    if self.dtype.kind != "c":
        return sign(self)
    magnitude = np.abs(self)
    return np.where(magnitude == 0, 0, self / magnitude).astype(self.dtype)


def sigmoid(self: np.ndarray) -> np.ndarray:
    """1 / (1 + exp(-x)), PyTorch's formula (real and complex)."""
    return np.reciprocal(1 + np.exp(-self))


def erf(self: np.ndarray) -> np.ndarray:
    """The error function (numpy has none: math.erf per element), int to float."""
    if self.dtype.kind == "c":
        raise _not_implemented_for("erf_vml_cpu", self)
    x = int_to_float(self)
    return _erf_float64(x).astype(x.dtype)


def sigmoid_backward(grad_output: np.ndarray, output: np.ndarray) -> np.ndarray:
    """grad_output * conj((1 - output) * output), output being sigmoid(x)."""
    if output.dtype.kind not in "fc":
        raise _not_implemented_for("sigmoid_backward_cpu", output)
    return grad_output * np.conjugate((1 - output) * output)


def tanh_backward(grad_output: np.ndarray, output: np.ndarray) -> np.ndarray:
    """grad_output * conj(1 - output**2), output being tanh(x)."""
    if output.dtype.kind not in "fc":
        raise _not_implemented_for("tanh_backward_cpu", output)
    return grad_output * np.conjugate(1 - output * output)


_ROUNDING = {"floor": np.floor, "ceil": np.ceil, "round": np.rint, "trunc": np.trunc}


def rounding(self: np.ndarray, name: str) -> np.ndarray:
    """floor, ceil, round (half to even) or trunc; integers are returned unchanged."""
    kind = self.dtype.kind
    if kind == "b":
        raise _not_implemented_for(f"{name}_vml_cpu", self)
    if kind == "c":
        if name == "round":
            raise _not_implemented_for("round_vml_cpu", self)
        raise NotImplementedError(f"{name} is not supported for complex inputs")
    if kind in "iu":
        return self.copy()
    return _ROUNDING[name](self)


def round_decimals(self: np.ndarray, decimals: int) -> np.ndarray:
    """Round half to even at `decimals` digits (negative: left of the point), as
    PyTorch: nearbyint(x * 10**d) / 10**d, or nearbyint(x / 10**-d) * 10**-d."""
    if self.dtype.kind != "f":
        raise _not_implemented_for("round_cpu", self)
    if decimals >= 0:
        scale = self.dtype.type(10.0**decimals)
        return np.rint(self * scale) / scale
    scale = self.dtype.type(10.0 ** (-decimals))
    return np.rint(self / scale) * scale


def angle(self: np.ndarray) -> np.ndarray:
    """The argument of complex input; for real input pi where x < 0, NaN where x is
    NaN, else 0 (so -0.0 gives 0, unlike numpy's arctan2)."""
    if self.dtype.kind == "c":
        return np.angle(self)
    x = int_to_float(self)
    return np.where(x < 0, x.dtype.type(np.pi), np.where(np.isnan(x), x, 0)).astype(
        x.dtype
    )


def _cpu_kernel_missing(kernel: str, array: np.ndarray) -> NotImplementedError:
    """PyTorch's dispatch error for a dtype a kernel does not handle."""
    return NotImplementedError(
        f"\"{kernel}_cpu\" not implemented for '{_scalar_type_name(array)}'"
    )


def _is_integral(array: np.ndarray) -> bool:
    """Bool or integer (PyTorch's isIntegralType with includeBool=True)."""
    return np.asarray(array).dtype.kind in "biu"


def into(out: np.ndarray, ufunc: np.ufunc, *operands: Any) -> np.ndarray:
    """`ufunc(*operands)` computed straight into `out`, an in-place operator's memory
    (no temporary, no copy). When numpy cannot (a result dtype `out` cannot hold, a
    shape that does not match, read-only memory) it computes a new array instead,
    and the in-place kernel's copy_into rejects it with PyTorch's message; numpy checks
    all three before it writes anything."""
    try:
        # `out` positional, casting numpy's default ("same_kind"): the same call as
        # `out=out, casting="same_kind"`, without parsing keywords (~0.3 us a call).
        return ufunc(*operands, out)
    except (TypeError, ValueError):
        return ufunc(*operands)


def div_true(self: np.ndarray, other: Any) -> np.ndarray:
    """True division of operands already in their (floating or complex) common dtype:
    the YAML entries promote integer inputs to float, as PyTorch does."""
    return np.true_divide(self, other)


def _check_integer_divisor(other: Any) -> None:
    if np.any(np.asarray(other) == 0):
        raise RuntimeError("ZeroDivisionError")


def div_floor(self: np.ndarray, other: Any) -> np.ndarray:
    """Division rounded down (PyTorch's div_floor: Python's `//` for floats, including
    its results for zero and infinite divisors)."""
    if self.dtype.kind in "bc":
        raise _cpu_kernel_missing("div_floor", self)
    if _is_integral(self):
        _check_integer_divisor(other)
        return np.floor_divide(self, other)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return np.floor_divide(self, other)


def _div_trunc(self: np.ndarray, other: Any) -> np.ndarray:
    """Division rounded toward zero (PyTorch's div_trunc)."""
    if self.dtype.kind in "bc":
        raise _cpu_kernel_missing("div_trunc", self)
    if _is_integral(self):
        _check_integer_divisor(other)
        quotient = np.floor_divide(self, other)
        # floor and trunc differ where the division is inexact and the signs differ
        inexact = np.remainder(self, other) != 0
        return quotient + (inexact & ((self < 0) != (np.asarray(other) < 0)))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return np.trunc(np.true_divide(self, other))


def div_mode(self: np.ndarray, other: Any, rounding_mode: str | None) -> np.ndarray:
    """`div` with rounding_mode None (true division), 'trunc' or 'floor'."""
    if rounding_mode is None:
        return div_true(self, other)
    if rounding_mode == "trunc":
        return _div_trunc(self, other)
    if rounding_mode == "floor":
        return div_floor(self, other)
    raise RuntimeError(
        "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
        f"'{rounding_mode}'"
    )


def reverse_subtract(self: np.ndarray, other: Any, alpha: Any) -> np.ndarray:
    """`other - alpha * self` in the operands' common dtype, with PyTorch's sub_check
    (bool tensors cannot be subtracted)."""
    if self.dtype == np.bool_ or np.asarray(other).dtype == np.bool_:
        if self.dtype == np.bool_ and np.asarray(other).dtype == np.bool_:
            raise RuntimeError(
                "Subtraction, the `-` operator, with two bool tensors is not supported. "
                "Use the `^` or `logical_xor()` operator instead."
            )
        raise RuntimeError(
            "Subtraction, the `-` operator, with a bool tensor is not supported. If you "
            "are trying to invert a mask, use the `~` or `logical_not()` operator instead."
        )
    common = _common_dtype(self, other)
    alpha_check(common, alpha)
    _check_broadcast(self, other)
    minuend = np.asarray(other).astype(common, copy=False)
    subtrahend = self.astype(common, copy=False)
    if alpha != 1:
        subtrahend = subtrahend * np.asarray(checked_scalar(alpha, common), common)
    return np.subtract(minuend, subtrahend)


def extremum(name: str, ufunc: Any, self: np.ndarray, other: np.ndarray) -> np.ndarray:
    """maximum / minimum (NaN-propagating) and fmax / fmin (NaN-ignoring)."""
    if self.dtype.kind == "c":
        raise RuntimeError(f"{name} not implemented for complex tensors.")
    return ufunc(self, other)


def atan2_floating(self: np.ndarray, other: np.ndarray) -> np.ndarray:
    """atan2 of floating operands (in their common dtype)."""
    if self.dtype.kind == "c":
        raise _cpu_kernel_missing("atan2", self)
    return np.arctan2(self, other)


def hypot_floating(self: np.ndarray, other: np.ndarray) -> np.ndarray:
    """hypot, which PyTorch has for floating dtypes only."""
    if self.dtype.kind not in "f":
        raise _cpu_kernel_missing("hypot", self)
    return np.hypot(self, other)


def where_select(
    condition: np.ndarray, self: np.ndarray, other: np.ndarray
) -> np.ndarray:
    """`self` where `condition` holds, else `other` (broadcast together)."""
    if condition.dtype != np.bool_:
        raise RuntimeError(
            "where expected condition to be a boolean tensor, but got a tensor with dtype "
            f"{_scalar_type_name(condition)}"
        )
    _check_broadcast(condition, self, other)
    return np.where(condition, self, other)


def clamp_scalars(self: np.ndarray, min: Any, max: Any) -> np.ndarray:
    """clamp with Scalar bounds (either may be None), in PyTorch's result dtype."""
    if min is None and max is None:
        raise RuntimeError(
            "torch.clamp: At least one of 'min' or 'max' must not be None"
        )
    common = _common_dtype(self, min, max)
    if common.kind == "c":
        raise NotImplementedError("clamp is not supported for complex types")
    result = self.astype(common, copy=False)
    if min is not None:
        result = np.maximum(result, np.asarray(checked_scalar(min, common), common))
    if max is not None:
        result = np.minimum(result, np.asarray(checked_scalar(max, common), common))
    return np.array(result, common)


def clamp_tensors(
    self: np.ndarray, min: np.ndarray | None, max: np.ndarray | None
) -> np.ndarray:
    """clamp with Tensor bounds (either may be None), broadcast with `self`."""
    if min is None and max is None:
        raise RuntimeError(
            "torch.clamp: At least one of 'min' or 'max' must not be None"
        )
    if self.dtype.kind == "c":
        raise NotImplementedError("clamp is not supported for complex types")
    common = _common_dtype(self, min, max)
    if common.kind == "c":  # a complex bound: the kernel's dispatch error
        raise NotImplementedError(
            f"\"clamp_cpu\" not implemented for '{spelling(common).scalar_type}'"
        )
    _check_broadcast(self, min, max)
    result = self.astype(common, copy=False)
    if min is not None:
        result = np.maximum(result, min.astype(common, copy=False))
    if max is not None:
        result = np.minimum(result, max.astype(common, copy=False))
    return np.array(result, common)


def modulo(name: str, ufunc: Any, self: np.ndarray, other: Any) -> np.ndarray:
    """fmod (sign of the dividend) and remainder (sign of the divisor), with PyTorch's
    error for an integer division by zero."""
    if self.dtype.kind in "bc":
        raise _cpu_kernel_missing(name, self)
    if _is_integral(self):
        _check_integer_divisor(other)
    with np.errstate(divide="ignore", invalid="ignore"):
        return ufunc(self, other)


def compare(name: str, ufunc: Any, self: np.ndarray, other: Any) -> np.ndarray:
    """A comparison computed in the operands' common dtype, as a bool array.

    `other` is an array (a Tensor argument) or a Python number (a Scalar argument,
    which promotes as a wrapped number does)."""
    common = _common_dtype(self, other)
    if common.kind == "c" and name not in ("eq", "ne"):
        raise NotImplementedError(
            f"\"{name}_cpu\" not implemented for '{spelling(common).scalar_type}'"
        )
    _check_broadcast(self, other)
    return ufunc(
        self.astype(common, copy=False), np.asarray(other).astype(common, copy=False)
    )


def logical(ufunc: Any, self: np.ndarray, other: np.ndarray) -> np.ndarray:
    """logical_and / or / xor: truth values of any dtype, a bool result."""
    _check_broadcast(self, other)
    return ufunc(self, other)


def bitwise(name: str, ufunc: Any, *operands: np.ndarray) -> np.ndarray:
    """Bitwise operations, for bool and integer dtypes only (as PyTorch)."""
    if not _is_integral(operands[0]):
        raise _cpu_kernel_missing(name, operands[0])
    return ufunc(*operands)


def _scalar_dtype_name(array: np.ndarray) -> str:
    """`float`, `double`, `long int`: the dtype as lerp's messages print it."""
    return spelling(array).typeid


def copy_from(self: np.ndarray, src: np.ndarray) -> np.ndarray:
    """copy_: `src` broadcast to self's shape and converted to self's dtype (any
    conversion; a complex source into a real tensor keeps the real part, with
    PyTorch's warning)."""
    if src.shape != self.shape:
        _check_broadcast(self, src)
        shape = np.broadcast_shapes(self.shape, src.shape)
        if shape != self.shape:
            raise RuntimeError(
                f"output with shape {list(self.shape)} doesn't match the broadcast "
                f"shape {list(shape)}"
            )
        src = np.broadcast_to(src, self.shape)
    if src.dtype.kind == "c" and self.dtype.kind != "c":
        warnings.warn(
            "Casting complex values to real discards the imaginary part",
            UserWarning,
            stacklevel=2,
        )
        src = src.real
    with np.errstate(invalid="ignore", over="ignore"):
        return src.astype(self.dtype)


def fill(self: np.ndarray, value: Any) -> np.ndarray:
    """A tensor of self's shape and dtype holding `value` (a Scalar, or a 0-d tensor
    whose value is converted like a copy)."""
    if isinstance(value, np.ndarray):
        if value.ndim != 0:
            raise RuntimeError(
                "fill_ only supports 0-dimension value tensor but got tensor with "
                f"{value.ndim} dimensions."
            )
        with np.errstate(invalid="ignore", over="ignore"):
            source = (
                value.real
                if value.dtype.kind == "c" and self.dtype.kind != "c"
                else value
            )
            return np.full(self.shape, source.astype(self.dtype), self.dtype)
    return np.full(self.shape, checked_scalar(value, self.dtype), self.dtype)


@_silently
def lerp(self: np.ndarray, end: np.ndarray, weight: Any) -> np.ndarray:
    """self + weight * (end - self), computed as PyTorch's kernel does it (from `end`
    when |weight| >= 0.5, for accuracy near weight 1). All tensors share self's dtype;
    a 0-d weight is taken as a number."""
    scalar_weight = not isinstance(weight, np.ndarray)
    if end.dtype != self.dtype:
        raise RuntimeError(
            f"expected dtype {_scalar_dtype_name(self)} for `end` but got dtype "
            f"{_scalar_dtype_name(end)}"
        )
    if not scalar_weight and weight.ndim and weight.dtype != self.dtype:
        raise RuntimeError(
            f"expected dtype {_scalar_dtype_name(self)} for `weight` but got dtype "
            f"{_scalar_dtype_name(weight)}"
        )
    if self.dtype.kind not in "fc":
        kernel = "lerp_kernel_scalar" if scalar_weight else "lerp_kernel_tensor"
        raise NotImplementedError(
            f"\"{kernel}\" not implemented for '{_scalar_type_name(self)}'"
        )
    if scalar_weight:
        weight = opmath_checked_scalar(weight, self.dtype)
    else:
        _check_broadcast(self, end, weight)
        weight = weight.astype(self.dtype, copy=False)
    _check_broadcast(self, end)
    diff = end - self
    small = np.abs(weight) < 0.5
    result = np.where(small, self + weight * diff, end - diff * (1 - weight))
    return np.asarray(result, self.dtype)


def _pointwise_common(kernel: str, *operands: np.ndarray) -> list[np.ndarray]:
    """The operands in their common dtype (bool has no kernel here)."""
    _check_broadcast(*operands)
    common = _common_dtype(*operands)
    if common.kind == "b":
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")
    return [o.astype(common, copy=False) for o in operands]


def addcmul(
    self: np.ndarray, tensor1: np.ndarray, tensor2: np.ndarray, value: Any
) -> np.ndarray:
    """self + value * tensor1 * tensor2 in the operands' common dtype."""
    self, tensor1, tensor2 = _pointwise_common(
        "addcmul_cpu_out", self, tensor1, tensor2
    )
    scale = opmath_checked_scalar(value, self.dtype)
    return np.asarray(self + scale * tensor1 * tensor2, self.dtype)


_ADDCDIV_INTEGER_ERROR = (
    "Integer division with addcdiv is no longer supported, and in a future  release "
    "addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv "
    "behavior can be implemented as (input + value * torch.trunc(tensor1 / tensor2))"
    ".to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) "
    "for float inputs. The future addcdiv behavior is just the latter implementation: "
    "(input + value * tensor1 / tensor2), for all dtypes."
)


@_silently
def addcdiv(
    self: np.ndarray, tensor1: np.ndarray, tensor2: np.ndarray, value: Any
) -> np.ndarray:
    """self + value * tensor1 / tensor2 in the operands' common dtype; an error when
    both tensor1 and tensor2 are integral (PyTorch's)."""
    if _is_integral(tensor1) and _is_integral(tensor2):
        raise RuntimeError(_ADDCDIV_INTEGER_ERROR)
    self, tensor1, tensor2 = _pointwise_common(
        "addcdiv_cpu_out", self, tensor1, tensor2
    )
    scale = opmath_checked_scalar(value, self.dtype)
    return np.asarray(self + scale * tensor1 / tensor2, self.dtype)


def nan_to_num(
    self: np.ndarray, nan: float | None, posinf: float | None, neginf: float | None
) -> np.ndarray:
    """NaN, +inf and -inf replaced (by 0 and the dtype's largest and lowest finite
    values unless given); integral tensors are copied unchanged."""
    if self.dtype.kind not in "fc":
        return self.copy()
    info = np.finfo(self.dtype)
    with np.errstate(over="ignore"):
        return np.nan_to_num(
            self,
            copy=True,
            nan=0.0 if nan is None else nan,
            posinf=info.max if posinf is None else posinf,
            neginf=info.min if neginf is None else neginf,
        )


def degrees_radians(name: str, ufunc: Any, self: np.ndarray) -> np.ndarray:
    """deg2rad / rad2deg: integers in the default float dtype, complex refused."""
    if self.dtype.kind == "c":
        raise RuntimeError(f"{name} is not supported for complex tensors.")
    return ufunc(int_to_float(self))


def signbit(self: np.ndarray) -> np.ndarray:
    """Whether the sign bit is set (-0.0 and NaNs with it included); real only."""
    if self.dtype.kind == "c":
        raise NotImplementedError("signbit is not implemented for complex tensors.")
    return np.signbit(self)


def frac(self: np.ndarray) -> np.ndarray:
    """self - trunc(self), for floating dtypes only."""
    if self.dtype.kind != "f":
        raise _cpu_kernel_missing("frac", self)
    return self - np.trunc(self)


def frexp(self: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mantissa in (-1, -0.5] or [0.5, 1) (or 0) and int32 exponent."""
    if self.dtype.kind != "f":
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    mantissa, exponent = np.frexp(self)
    return mantissa, exponent.astype(np.int32)


def heaviside(self: np.ndarray, values: np.ndarray) -> np.ndarray:
    """0 below 0, 1 above, `values` where self == 0; both of one real dtype."""
    if self.dtype.kind == "c" or values.dtype.kind == "c":
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    if self.dtype != values.dtype:
        raise RuntimeError(
            "heaviside is not yet implemented for tensors with different dtypes."
        )
    _check_broadcast(self, values)
    return np.where(self == 0, values, self > 0).astype(self.dtype)


def floating_binary(name: str, ufunc: Any, self: np.ndarray, other: Any) -> np.ndarray:
    """A numpy ufunc of operands already in their common dtype, which PyTorch's
    kernel has for floating dtypes only (nextafter, logaddexp2, copysign)."""
    if self.dtype.kind != "f":
        raise _cpu_kernel_missing(name, self)
    return ufunc(self, other)


def ldexp(self: np.ndarray, other: np.ndarray) -> np.ndarray:
    """self * 2 ** other as PyTorch: a floating self with an integer exponent is C's
    ldexp (exact, in self's dtype; a bool exponent is refused), anything else the
    product with pow(2, other), that power computed in other's own floating dtype
    (integers in the default one)."""
    _check_broadcast(self, other)
    if self.dtype.kind == "f" and other.dtype.kind in "biu":
        if other.dtype.kind == "b":
            raise _not_implemented_for("ldexp_cpu_exp", other)
        exponent = np.clip(other, -(2**31), 2**31 - 1).astype(np.int32)
        return np.ldexp(self, exponent).astype(self.dtype, copy=False)
    power = np.exp2(int_to_float(other))
    common = _common_dtype(self, power)
    return self.astype(common, copy=False) * power.astype(common, copy=False)


def clamp_bound(
    name: str, self: np.ndarray, min: np.ndarray | None, max: np.ndarray | None
) -> np.ndarray:
    """clamp_min / clamp_max with a Tensor bound: clamp_tensors, with the error of
    PyTorch's maximum / minimum kernel (`name`) for complex operands."""
    common = _common_dtype(self, min, max)
    if common.kind == "c":
        raise NotImplementedError(
            f"\"{name}_cpu\" not implemented for '{spelling(common).scalar_type}'"
        )
    return clamp_tensors(self, min, max)


def logaddexp(self: np.ndarray, other: np.ndarray) -> np.ndarray:
    """log(exp(self) + exp(other)) in the operands' common dtype, floating or complex
    (complex: shifted by the operand of larger real part)."""
    if self.dtype.kind not in "fc":
        raise _cpu_kernel_missing("logaddexp", self)
    if self.dtype.kind == "f":
        return np.logaddexp(self, other)
    larger = np.where(self.real >= other.real, self, other)
    smaller = np.where(self.real >= other.real, other, self)
    return larger + np.log1p(np.exp(smaller - larger))


def poisson(self: np.ndarray, generator: np.random.Generator) -> np.ndarray:
    """Poisson draws with rate `self` (elementwise), in self's dtype."""
    if self.dtype.kind != "f":
        raise _not_implemented_for("poisson_cpu", self)
    if self.size and not (self >= 0).all():
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    return np.asarray(generator.poisson(self), self.dtype)


def bernoulli_tensor(self: np.ndarray, generator: np.random.Generator) -> np.ndarray:
    """1 with probability `self` (elementwise), else 0, in self's dtype."""
    if self.dtype.kind != "f":
        raise _not_implemented_for("bernoulli_tensor_cpu_p_", self)
    check_probabilities(self)
    return (generator.random(self.shape) < self).astype(self.dtype)


def bernoulli_float(
    self: np.ndarray, p: float, generator: np.random.Generator
) -> np.ndarray:
    """1 with probability `p`, else 0, in self's shape and dtype."""
    check_p(p)
    return (generator.random(self.shape) < p).astype(self.dtype)


def _float_argument(function: str, name: str, position: int, value: Any) -> float:
    """A `float` argument as PyTorch's binding takes it: a real number or a 0-d real
    tensor, else its TypeError."""
    if isinstance(value, numbers.Real):
        return float(value)
    data = getattr(value, "_data", None)
    if isinstance(data, np.ndarray) and data.ndim == 0 and data.dtype.kind in "biuf":
        return float(data)
    raise TypeError(
        f"{function}(): argument '{name}' (position {position}) must be float, not "
        f"{type(value).__name__}"
    )


def exponential(
    self: np.ndarray,
    lambd: Any,
    generator: np.random.Generator,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """Exponential(lambd) draws in self's shape and dtype, into `out` when given (the
    in-place exponential_). Drawn in float64 and never 0 there (as PyTorch's, whose
    support is (0, inf); a float16 draw may still round to 0); lambd = inf gives 0."""
    if self.dtype.kind != "f":
        raise RuntimeError(
            "Exponential distribution is a continuous probability distribution. dtype "
            f"must be a floating point but you specified {spelling(self).scalar_type}"
        )
    lambd = _float_argument("exponential_", "lambd", 1, lambd)
    if not lambd > 0.0:
        raise RuntimeError(
            f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}"
        )
    draws = np.asarray(generator.standard_exponential(self.shape))
    np.maximum(draws, _SMALLEST_FLOAT64, out=draws)  # a 0 has probability 2**-53
    np.divide(draws, lambd, out=draws)
    if out is None:
        return draws.astype(self.dtype, copy=False)
    np.copyto(out, draws, casting="unsafe")
    return out
