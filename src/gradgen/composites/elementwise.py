"""Composites of the elementwise family: conj, square, true_divide, where with numbers, clip, to(dtype),
and PyTorch's other aliases (greater, multiply, arccos, fix, ...)."""

from __future__ import annotations


from typing import Any

from ..dtypes import complex128, float64, spelling
from ..dtypes import dtype as _dtype
from ..tensor import Number, Tensor, wrap_number
from ..generated import ops  # functions read at call time (the generated tie)

__all__ = [
    "fake_quantize_per_tensor_affine",
    "fake_quantize_per_channel_affine",
    "conj",
    "square",
    "imag",
    "true_divide",
    "where_scalar_other",
    "where_scalar_self",
    "where_scalar",
    "isfinite",
    "to_dtype",
    "clip",
    "clip_tensor",
    "clip_",
    "clip_tensor_",
    "greater",
    "greater_equal",
    "less",
    "less_equal",
    "not_equal",
    "absolute",
    "negative",
    "multiply",
    "divide",
    "divide_mode",
    "subtract",
    "arccos",
    "arcsin",
    "arctan",
    "arctan2",
    "fix",
    "arccosh",
    "arcsinh",
    "arctanh",
    "arccosh_",
    "arcsinh_",
    "arctanh_",
    "fix_",
    "absolute_",
    "arccos_",
    "arcsin_",
    "arctan_",
    "arctan2_",
    "negative_",
    "float_power",
    "float_power_",
    "square_",
]


def conj(self: Tensor) -> Tensor:
    """The complex conjugate; a real tensor is returned as it is (no graph node)."""
    if not self.is_complex():
        return self
    return self._conj()


def square(self: Tensor) -> Tensor:
    """self * self as PyTorch writes it: pow(self, 2) (so bool gives int64)."""
    return self.pow(2)


def imag(self: Tensor) -> Tensor:
    """The imaginary parts, a view of a complex tensor: view_as_real(self)[..., 1]."""
    if not self.is_complex():
        raise RuntimeError(
            "imag is not implemented for tensors with non-complex dtypes."
        )
    return ops.view_as_real(self).select(-1, 1)


def true_divide(self: Tensor, other: Tensor) -> Tensor:
    """An alias of `div` (true division), as PyTorch's true_divide."""
    return self.div(other)


def where_scalar_other(condition: Tensor, self: Tensor, other: Number) -> Tensor:
    """where(condition, self, number): the number as a wrapped-number tensor."""
    return ops.where(condition, self, wrap_number(other))


def where_scalar_self(condition: Tensor, self: Number, other: Tensor) -> Tensor:
    """where(condition, number, other): the number as a wrapped-number tensor."""
    return ops.where(condition, wrap_number(self), other)


def where_scalar(condition: Tensor, self: Number, other: Number) -> Tensor:
    """where(condition, number, number): both numbers as wrapped-number tensors."""
    return ops.where(condition, wrap_number(self), wrap_number(other))


def isfinite(self: Tensor) -> Tensor:
    """Neither NaN nor infinite (for complex: both parts finite)."""
    return self.isnan().logical_not().logical_and(self.isinf().logical_not())


def to_dtype(
    self: Tensor,
    dtype: _dtype,
    non_blocking: bool = False,
    copy: bool = False,
    memory_format: object = None,
) -> Tensor:
    """`to(dtype)`: the tensor itself when it already has `dtype` (and no copy is
    asked for), else a converted copy (_to_copy, so differentiable)."""
    if self.dtype is dtype and not copy:
        return self
    if not (dtype.is_floating_point or dtype.is_complex):
        # An integer or bool result has no gradient: no graph, as PyTorch's _to_copy
        # (its output is differentiable only for a differentiable dtype).
        self = self.detach()
    return self._to_copy(
        dtype=dtype, non_blocking=non_blocking, memory_format=memory_format
    )


def clip(self: Tensor, min: Number | None = None, max: Number | None = None) -> Tensor:
    """clip is clamp (ClampBackward1)."""
    return self.clamp(min, max)


def clip_tensor(
    self: Tensor, min: Tensor | None = None, max: Tensor | None = None
) -> Tensor:
    """clip.Tensor is clamp.Tensor (ClampBackward0)."""
    return self.clamp(min, max)


def clip_(self: Tensor, min: Number | None = None, max: Number | None = None) -> Tensor:
    """clip_ is clamp_."""
    return self.clamp_(min, max)


def clip_tensor_(
    self: Tensor, min: Tensor | None = None, max: Tensor | None = None
) -> Tensor:
    """clip_.Tensor is clamp_.Tensor."""
    return self.clamp_(min, max)


# -- PyTorch's aliases: another name for an operator, recording that operator's node --


def greater(self: Tensor, other: Any) -> Tensor:
    """An alias of gt."""
    return self.gt(other)


def greater_equal(self: Tensor, other: Any) -> Tensor:
    """An alias of ge."""
    return self.ge(other)


def less(self: Tensor, other: Any) -> Tensor:
    """An alias of lt."""
    return self.lt(other)


def less_equal(self: Tensor, other: Any) -> Tensor:
    """An alias of le."""
    return self.le(other)


def not_equal(self: Tensor, other: Any) -> Tensor:
    """An alias of ne."""
    return self.ne(other)


def absolute(self: Tensor) -> Tensor:
    """An alias of abs."""
    return self.abs()


def negative(self: Tensor) -> Tensor:
    """An alias of neg."""
    return self.neg()


def multiply(self: Tensor, other: Any) -> Tensor:
    """An alias of mul."""
    return self.mul(other)


def divide(self: Tensor, other: Any) -> Tensor:
    """An alias of div."""
    return self.div(other)


def arccos(self: Tensor) -> Tensor:
    """An alias of acos."""
    return self.acos()


def arcsin(self: Tensor) -> Tensor:
    """An alias of asin."""
    return self.asin()


def arctan(self: Tensor) -> Tensor:
    """An alias of atan."""
    return self.atan()


def arctan2(self: Tensor, other: Any) -> Tensor:
    """An alias of atan2."""
    return self.atan2(other)


def fix(self: Tensor) -> Tensor:
    """An alias of trunc."""
    return self.trunc()


def divide_mode(self: Tensor, other: Any, rounding_mode: str | None) -> Tensor:
    """divide with rounding_mode, an alias of div.Tensor_mode."""
    return self.div(other, rounding_mode=rounding_mode)


def subtract(self: Tensor, other: Any, alpha: Number = 1) -> Tensor:
    """An alias of sub."""
    return self.sub(other, alpha=alpha)


def arccosh(self: Tensor) -> Tensor:
    """An alias of acosh."""
    return self.acosh()


def arcsinh(self: Tensor) -> Tensor:
    """An alias of asinh."""
    return self.asinh()


def arctanh(self: Tensor) -> Tensor:
    """An alias of atanh."""
    return self.atanh()


def arccosh_(self: Tensor) -> Tensor:
    """An alias of acosh_."""
    return self.acosh_()


def arcsinh_(self: Tensor) -> Tensor:
    """An alias of asinh_."""
    return self.asinh_()


def arctanh_(self: Tensor) -> Tensor:
    """An alias of atanh_."""
    return self.atanh_()


def fix_(self: Tensor) -> Tensor:
    """An alias of trunc_."""
    return self.trunc_()


def absolute_(self: Tensor) -> Tensor:
    """An alias of abs_."""
    return self.abs_()


def arccos_(self: Tensor) -> Tensor:
    """An alias of acos_."""
    return self.acos_()


def arcsin_(self: Tensor) -> Tensor:
    """An alias of asin_."""
    return self.asin_()


def arctan_(self: Tensor) -> Tensor:
    """An alias of atan_."""
    return self.atan_()


def arctan2_(self: Tensor, other: Tensor) -> Tensor:
    """An alias of atan2_."""
    return self.atan2_(other)


def negative_(self: Tensor) -> Tensor:
    """An alias of neg_."""
    return self.neg_()


def _float_power_dtype(*operands: Tensor | Number) -> _dtype:
    """float_power's dtype: complex128 when an operand is complex, else float64."""
    for operand in operands:
        if isinstance(operand, complex) or (
            isinstance(operand, Tensor) and operand.is_complex()
        ):
            return complex128
    return float64


def _as(value: Tensor | Number, wanted: _dtype) -> Any:
    """A tensor converted to `wanted`; a number as a Python complex or float."""
    if isinstance(value, Tensor):
        return value.to(wanted)
    if wanted is complex128:
        return complex(value)
    return float(value.real) if isinstance(value, complex) else float(value)


def float_power(self: Tensor | Number, exponent: Tensor | Number) -> Tensor:
    """pow computed in float64 (complex128 when an operand is complex)."""
    wanted = _float_power_dtype(self, exponent)
    return ops.pow(_as(self, wanted), _as(exponent, wanted))


def float_power_(self: Tensor, exponent: Tensor | Number) -> Tensor:
    """pow_ in float64 (or complex128), which self must already have."""
    wanted = _float_power_dtype(self, exponent)
    if self.dtype is not wanted:
        raise RuntimeError(
            f"the base given to float_power_ has dtype {spelling(self.dtype).scalar_type}"
            f" but the operation's result requires dtype {spelling(wanted).scalar_type}"
        )
    return self.pow_(_as(exponent, wanted))


def square_(self: Tensor) -> Tensor:
    """self.pow_(2), as PyTorch's square_."""
    return self.pow_(2)


def fake_quantize_per_tensor_affine(
    self: Tensor, scale: float, zero_point: int, quant_min: int, quant_max: int
) -> Tensor:
    """The values rounded onto the quantized grid and back (the cachemask operator's
    output; its mask stays with the backward)."""
    output, _ = ops.fake_quantize_per_tensor_affine_cachemask(
        self, scale, zero_point, quant_min, quant_max
    )
    return output


def fake_quantize_per_channel_affine(
    self: Tensor,
    scale: Tensor,
    zero_point: Tensor,
    axis: int,
    quant_min: int,
    quant_max: int,
) -> Tensor:
    """Per-channel fake quantization along `axis` (the cachemask operator's output)."""
    output, _ = ops.fake_quantize_per_channel_affine_cachemask(
        self, scale, zero_point, axis, quant_min, quant_max
    )
    return output
