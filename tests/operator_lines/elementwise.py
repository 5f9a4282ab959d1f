"""Operator-table lines of the elementwise family of native_functions.yaml."""

from __future__ import annotations

from typing import Any

from .common import (
    Line,
    _aten,
    _f64,
    _dispatcher,
    _hidden_overload,
    _nan_where_negative,
)

# Values on both sides of the quantized range and between grid points.
_QUANTIZED = [-3.0, -0.6, 0.1, 0.37, 1.2, 2.6]


def _masked(a: Any, output: Any, mask: Any) -> Any:
    return a * output + a * mask


def _channel_qparams(lib: Any) -> tuple[Any, Any]:
    """A single-precision scale and an int32 zero point per channel."""
    scale = lib.tensor([0.25, 0.5], dtype=lib.float32)
    return scale, lib.tensor([0, 1], dtype=lib.int32)


LINES: dict[str, Line] = {
    # Fake quantization: piecewise constant in its input (the straight-through
    # gradient is no derivative gradcheck could confirm), so the lines run it on
    # constants; tests/ops/test_fake_quantize.py compares its gradients with torch's.
    "fake_quantize_per_tensor_affine_cachemask": Line(
        lambda lib, a: _masked(
            a,
            *_aten(lib, "fake_quantize_per_tensor_affine_cachemask")(
                _f64(lib, _QUANTIZED), 0.25, 1, -6, 5
            ),
        ),
        ((6,),),
    ),
    "fake_quantize_per_tensor_affine_cachemask_backward": Line(
        lambda lib, a: _aten(lib, "fake_quantize_per_tensor_affine_cachemask_backward")(
            _f64(lib, _QUANTIZED), _f64(lib, _QUANTIZED) > 0
        )
        * a,
        ((6,),),
    ),
    "fake_quantize_per_tensor_affine": Line(
        lambda lib, a: lib.fake_quantize_per_tensor_affine(
            _f64(lib, _QUANTIZED), 0.25, 1, -6, 5
        )
        * a,
        ((6,),),
    ),
    "fake_quantize_per_channel_affine_cachemask": Line(
        lambda lib, a: _masked(
            a,
            *_aten(lib, "fake_quantize_per_channel_affine_cachemask")(
                _f64(lib, _QUANTIZED).view(3, 2), *_channel_qparams(lib), 1, -6, 5
            ),
        ),
        ((3, 2),),
    ),
    "fake_quantize_per_channel_affine_cachemask_backward": Line(
        lambda lib, a: _aten(
            lib, "fake_quantize_per_channel_affine_cachemask_backward"
        )(_f64(lib, _QUANTIZED), _f64(lib, _QUANTIZED) < 1)
        * a,
        ((6,),),
    ),
    "fake_quantize_per_channel_affine": Line(
        lambda lib, a: lib.fake_quantize_per_channel_affine(
            _f64(lib, _QUANTIZED).view(3, 2), *_channel_qparams(lib), 1, -6, 5
        )
        * a,
        ((3, 2),),
    ),
    "add.Tensor": Line(lambda lib, a, b: lib.add(a, b, alpha=2.5), ((3, 1), (1, 4))),
    "sub.Tensor": Line(lambda lib, a, b: lib.sub(a, b, alpha=-0.5), ((2, 3, 4), (4,))),
    "mul.Tensor": Line(lambda lib, a, b: lib.mul(a, b), ((3, 1), (1, 4))),
    "pow.Tensor_Scalar": Line(lambda lib, a: lib.pow(a, 2.5), ((5,),), positive=True),
    "neg": Line(lambda lib, a: lib.neg(a), ((3,),)),
    "conj": Line(lambda lib, a: lib.conj(a) * a, ((3,),), complex=True),
    "_conj": Line(
        lambda lib, a: lib._conj(a) * a, ((3,),), complex=True, compare=False
    ),
    "real": Line(lambda lib, a: lib.real(a * a), ((3,),), complex=True),
    "clone": Line(lambda lib, a: lib.clone(a) * a, ((3,),)),
    "_to_copy": Line(
        lambda lib, a: lib._to_copy(a, dtype=lib.complex128) * 1j,
        ((3,),),
        compare=False,
    ),
    "add_.Tensor": Line(
        lambda lib, a, b: (a * 1.0).add_(b * b, alpha=2.0), ((3,), (3,))
    ),
    "sub_.Tensor": Line(lambda lib, a, b: (a * 1.0).sub_(b * b), ((3,), (3,))),
    "mul_.Tensor": Line(lambda lib, a, b: (a * a).mul_(b), ((3,), (3,))),
    "exp": Line(lambda lib, a: lib.exp(a) * a.exp(), ((3, 2),), complex=True),
    "exp2": Line(lambda lib, a: lib.exp2(a), ((4,),), complex=True),
    "log": Line(lambda lib, a: lib.log(a) * a.log(), ((4,),), complex=True),
    "log2": Line(lambda lib, a: lib.log2(a), ((4,),), complex=True),
    "log10": Line(lambda lib, a: a.log10(), ((4,),), complex=True),
    "log1p": Line(lambda lib, a: lib.log1p(a), ((4,),), complex=True),
    "expm1": Line(lambda lib, a: lib.expm1(a), ((4,),), complex=True),
    "sqrt": Line(lambda lib, a: lib.sqrt(a) * a.sqrt(), ((4,),), complex=True),
    "rsqrt": Line(lambda lib, a: lib.rsqrt(a), ((4,),), complex=True),
    "reciprocal": Line(lambda lib, a: a.reciprocal(), ((4,),), complex=True),
    "square": Line(lambda lib, a: lib.square(a) * a.square(), ((4,),), complex=True),
    "abs": Line(lambda lib, a: lib.abs(a) * a.abs(), ((4,),), complex=True),
    "sgn": Line(lambda lib, a: lib.sgn(a) * a, ((4,),), complex=True),
    "sign": Line(lambda lib, a: lib.sign(a) * a.sign() * a, ((4,),)),
    "sin": Line(lambda lib, a: lib.sin(a) * a.sin(), ((4,),), complex=True),
    "cos": Line(lambda lib, a: lib.cos(a), ((4,),), complex=True),
    "tan": Line(lambda lib, a: lib.tan(a * 0.5), ((4,),), complex=True),
    "asin": Line(lambda lib, a: lib.asin(a * 0.4), ((4,),), complex=True),
    "acos": Line(lambda lib, a: (a * 0.4).acos(), ((4,),), complex=True),
    "atan": Line(lambda lib, a: lib.atan(a * 0.4), ((4,),), complex=True),
    "sinh": Line(lambda lib, a: lib.sinh(a), ((4,),), complex=True),
    "cosh": Line(lambda lib, a: lib.cosh(a), ((4,),), complex=True),
    "tanh": Line(lambda lib, a: lib.tanh(a) * a.tanh(), ((4,),), complex=True),
    "sigmoid": Line(lambda lib, a: lib.sigmoid(a) * a.sigmoid(), ((4,),), complex=True),
    "erf": Line(lambda lib, a: lib.erf(a) * a.erf(), ((5,),)),
    "floor": Line(lambda lib, a: lib.floor(a) * a.floor() * a, ((5,),)),
    "ceil": Line(lambda lib, a: lib.ceil(a) * a, ((5,),)),
    "round": Line(lambda lib, a: lib.round(a) * a.round() * a, ((5,),)),
    "round.decimals": Line(
        lambda lib, a: lib.round(a, decimals=2) * a.round(decimals=-1) * a, ((5,),)
    ),
    "trunc": Line(lambda lib, a: lib.trunc(a) * a, ((5,),)),
    "angle": Line(lambda lib, a: lib.angle(a) * a.angle(), ((4,),), complex=True),
    "imag": Line(lambda lib, a: lib.imag(a * a), ((3, 2),), complex=True),
    "sigmoid_backward": Line(
        lambda lib, a, b: _aten(lib, "sigmoid_backward")(a, b * b),
        ((3,), (3,)),
        complex=True,
    ),
    "tanh_backward": Line(
        lambda lib, a, b: _aten(lib, "tanh_backward")(a, b * b),
        ((3,), (3,)),
        complex=True,
    ),
    "exp_": Line(
        lambda lib, a: (a * 1.0).exp_() * lib.exp_(a * 2.0), ((4,),), complex=True
    ),
    "log_": Line(lambda lib, a: lib.log_(a * 1.0) * a, ((4,),), complex=True),
    "sqrt_": Line(lambda lib, a: (a * 1.0).sqrt_() * a, ((4,),), complex=True),
    "neg_": Line(lambda lib, a: lib.neg_(a * a), ((4,),), complex=True),
    "abs_": Line(lambda lib, a: (a * 1.0).abs_() * lib.abs_(a * a), ((5,),)),
    "sigmoid_": Line(lambda lib, a: lib.sigmoid_(a * 1.0) * a, ((4,),), complex=True),
    "tanh_": Line(lambda lib, a: (a * 1.0).tanh_() * a, ((4,),), complex=True),
    "add.Scalar": Line(
        lambda lib, a: _hidden_overload(lib, "add.Scalar")(a, 2.5 - 1j, 2) * a,
        ((3,),),
        complex=True,
    ),
    "sub.Scalar": Line(
        lambda lib, a: _hidden_overload(lib, "sub.Scalar")(a, 1.5, -0.5) * a,
        ((3,),),
    ),
    "mul.Scalar": Line(
        lambda lib, a: _hidden_overload(lib, "mul.Scalar")(a, 2.0 - 1.5j),
        ((3,),),
        complex=True,
    ),
    "div.Tensor": Line(
        lambda lib, a, b: lib.div(a, b),
        ((3, 1), (1, 4)),
        complex=True,
        positive=True,
    ),
    "div.Scalar": Line(
        lambda lib, a: _hidden_overload(lib, "div.Scalar")(a, -2.5) * a, ((3,),)
    ),
    "div.Tensor_mode": Line(
        lambda lib, a, b: lib.div(a * 3.0, b, rounding_mode="floor") * a
        + a.div(b, rounding_mode="trunc") * b
        + lib.div(a, b, rounding_mode=None),
        ((4,), (4,)),
        positive=True,
    ),
    "true_divide.Tensor": Line(
        lambda lib, a, b: lib.true_divide(a, b) * a.true_divide(b),
        ((3,), (3,)),
        positive=True,
    ),
    "div_.Tensor": Line(lambda lib, a, b: (a * a).div_(b), ((3,), (3,)), positive=True),
    "div_.Tensor_mode": Line(
        lambda lib, a, b: (a * 3.0).div_(b, rounding_mode="floor") * a,
        ((3,), (3,)),
        positive=True,
    ),
    "floor_divide": Line(  # not differentiable (PyTorch has no formula): forward only
        lambda lib, a, b: lib.floor_divide(a.detach() * 3.0, b.detach()) * (a + b),
        ((4,), (4,)),
    ),
    "floor_divide.Scalar": Line(
        lambda lib, a: a.detach().floor_divide(0.3) * a, ((4,),)
    ),
    "rsub.Tensor": Line(
        lambda lib, a, b: lib.rsub(a, b * b, alpha=2.0 + 1j),
        ((3, 1), (4,)),
        complex=True,
    ),
    "rsub.Scalar": Line(lambda lib, a: lib.rsub(a, 2.5, 3) * a, ((3,),)),
    "maximum": Line(lambda lib, a, b: lib.maximum(a, b) * a.maximum(b), ((3, 1), (4,))),
    "minimum": Line(lambda lib, a, b: lib.minimum(a, b) * a.minimum(b), ((3, 1), (4,))),
    "fmax": Line(lambda lib, a, b: lib.fmax(a, b * 2.0), ((3, 1), (4,))),
    "fmin": Line(lambda lib, a, b: lib.fmin(a, b * 2.0), ((3, 1), (4,))),
    "atan2": Line(lambda lib, a, b: lib.atan2(a, b) * a.atan2(b), ((3, 1), (4,))),
    "hypot": Line(lambda lib, a, b: lib.hypot(a, b) * a.hypot(b), ((3, 1), (4,))),
    "where.self": Line(
        lambda lib, a, b: lib.where(lib.eq(a, a[0]), a * a, b),
        ((3,), (2, 3)),
        complex=True,
    ),
    "where.ScalarOther": Line(lambda lib, a: lib.where(a > 0, a * a, 2.5), ((5,),)),
    "where.ScalarSelf": Line(lambda lib, a: lib.where(a > 0, 2.5, a * a), ((5,),)),
    "where.Scalar": Line(lambda lib, a: lib.where(a > 0, 2.5, -1) * a, ((5,),)),
    "clamp.Tensor": Line(
        lambda lib, a, b, c: lib.clamp(a, b, c) * a.clamp(c, b),
        ((3, 4), (4,), (3, 1)),
    ),
    "clamp": Line(lambda lib, a: lib.clamp(a, -0.5, 0.7) * a.clamp(max=0.2), ((6,),)),
    "clamp_": Line(
        lambda lib, a: lib.clamp_(a * 1.0, min=-0.5) * (a * a).clamp_(0.3, 1.5),
        ((6,),),
    ),
    "clamp_min": Line(
        lambda lib, a: lib.clamp_min(a, -0.5) * a.clamp_min(0.2), ((6,),)
    ),
    "clamp_max": Line(
        lambda lib, a: lib.clamp_max(a, -0.5) * a.clamp_max(0.2), ((6,),)
    ),
    "fmod.Tensor": Line(
        lambda lib, a, b: lib.fmod(a * 3.0, b), ((4,), (4,)), positive=True
    ),
    "fmod.Scalar": Line(lambda lib, a: lib.fmod(a * 3.0, -0.7) * a, ((6,),)),
    "remainder.Tensor": Line(
        lambda lib, a, b: lib.remainder(a * 3.0, b) * a.remainder(-b),
        ((4,), (4,)),
        positive=True,
    ),
    "remainder.Scalar": Line(lambda lib, a: lib.remainder(a * 3.0, -0.7) * a, ((6,),)),
    "eq.Tensor": Line(lambda lib, a: a * lib.eq(a, a[1]), ((4,),)),
    "eq.Scalar": Line(lambda lib, a: a * lib.eq(a > 0, True), ((6,),)),
    "ne.Tensor": Line(lambda lib, a: a * lib.ne(a, a[1]), ((4,),)),
    "ne.Scalar": Line(lambda lib, a: a * lib.ne(a > 0, True), ((6,),)),
    "lt.Tensor": Line(lambda lib, a, b: a * b * lib.lt(a, b), ((6,), (6,))),
    "lt.Scalar": Line(lambda lib, a: a * lib.lt(a, 0.3), ((6,),)),
    "le.Tensor": Line(lambda lib, a, b: a * b * lib.le(a, b), ((6,), (6,))),
    "le.Scalar": Line(lambda lib, a: a * lib.le(a, 0.3), ((6,),)),
    "gt.Tensor": Line(lambda lib, a, b: a * b * lib.gt(a, b), ((6,), (6,))),
    "gt.Scalar": Line(lambda lib, a: a * lib.gt(a, 0.3), ((6,),)),
    "ge.Tensor": Line(lambda lib, a, b: a * b * lib.ge(a, b), ((6,), (6,))),
    "ge.Scalar": Line(lambda lib, a: a * lib.ge(a, 0.3), ((6,),)),
    "logical_and": Line(
        lambda lib, a, b: a * b * lib.logical_and(a > 0, b), ((6,), (6,))
    ),
    "logical_or": Line(
        lambda lib, a, b: a * b * lib.logical_or(a > 0, b > 0), ((6,), (6,))
    ),
    "logical_xor": Line(
        lambda lib, a, b: a * b * lib.logical_xor(a > 0, b > 0), ((6,), (6,))
    ),
    "logical_not": Line(lambda lib, a: a * lib.logical_not(a > 0), ((6,),)),
    "bitwise_and.Tensor": Line(
        lambda lib, a, b: a * b * lib.bitwise_and(a > 0, b > 0), ((6,), (6,))
    ),
    "bitwise_or.Tensor": Line(
        lambda lib, a, b: a * b * lib.bitwise_or(a > 0, b > 0), ((6,), (6,))
    ),
    "bitwise_xor.Tensor": Line(
        lambda lib, a, b: a * b * lib.bitwise_xor(a > 0, b > 0), ((6,), (6,))
    ),
    "bitwise_not": Line(lambda lib, a: a * lib.bitwise_not(a > 0), ((6,),)),
    "isnan": Line(
        lambda lib, a, b: a * b * lib.isnan(_nan_where_negative(lib, b)),
        ((6,), (6,)),
    ),
    "isinf": Line(
        lambda lib, a, b: a
        * b
        * lib.isinf(a.detach() / lib.clamp_min(b.detach(), 0.0)),
        ((6,), (6,)),
    ),
    "isfinite": Line(
        lambda lib, a, b: a
        * b
        * lib.isfinite(a.detach() / _nan_where_negative(lib, b)),
        ((6,), (6,)),
    ),
    "pow.Tensor_Tensor": Line(
        lambda lib, a, b: lib.pow(a, b) * a**b, ((3, 2), (2,)), positive=True
    ),
    "pow.Scalar": Line(lambda lib, a: lib.pow(2.5, a) * 2.0**a, ((4,),)),
    "to.dtype": Line(
        lambda lib, a: a.to(lib.complex128) * a + a.to(lib.float64), ((3,),)
    ),
    "copy": Line(
        lambda lib, a, b: _dispatcher(lib, "copy")(a * 1.0, b * b, False) * a,
        ((2, 3), (3,)),
        compare=False,  # PyTorch has no formula for the functional copy
    ),
    "copy_": Line(
        lambda lib, a, b: (a * 1.0).copy_(b * b) * a, ((2, 3), (3,)), complex=True
    ),
    "zero": Line(lambda lib, a: _dispatcher(lib, "zero")(a * a) + a * a, ((2, 3),)),
    "zero_": Line(
        lambda lib, a: lib.zero_(a * 1.0) + (a * a).zero_() * a + a * a, ((2, 3),)
    ),
    "fill.Scalar": Line(lambda lib, a: lib.fill(a * a, 2.5) * a, ((2, 3),)),
    "fill.Tensor": Line(lambda lib, a, v: lib.fill(a * a, v * v) * a, ((2, 3), ())),
    # No forward formula: an in-place entry's `result:` key is not available here
    # (see derivatives.yaml); PyTorch has one.
    "fill_.Scalar": Line(
        lambda lib, a: (a * 1.0).fill_(2.5) * a + lib.fill_(a * a, -1.0),
        ((2, 3),),
        forward=False,
    ),
    "fill_.Tensor": Line(
        lambda lib, a, v: (a * 1.0).fill_(v * v) * a + lib.fill_(a * a, v),
        ((2, 3), ()),
        forward=False,
    ),
    "lerp.Scalar": Line(
        lambda lib, a, b: lib.lerp(a, b, 0.3) * a.lerp(b * b, 0.8),
        ((2, 3), (3,)),
        complex=True,
    ),
    "lerp.Tensor": Line(
        lambda lib, a, b, w: lib.lerp(a, b, w) * a.lerp(b, w * 0.2),
        ((2, 3), (3,), (2, 1)),
        complex=True,
    ),
    "lerp_.Scalar": Line(lambda lib, a, b: (a * 1.0).lerp_(b * b, 0.6), ((2, 3), (3,))),
    "lerp_.Tensor": Line(
        lambda lib, a, b, w: (a * a).lerp_(b, w), ((2, 3), (2, 3), (3,))
    ),
    "addcmul": Line(
        lambda lib, a, b, c: lib.addcmul(a, b, c, value=0.5) + a.addcmul(b, c),
        ((2, 3), (3,), (2, 1)),
        complex=True,
    ),
    "addcmul_": Line(
        lambda lib, a, b, c: (a * 1.0).addcmul_(b, c * c, value=-2.0),
        ((2, 3), (2, 3), (3,)),
    ),
    "addcdiv": Line(
        lambda lib, a, b, c: lib.addcdiv(a, b, c, value=0.5) + a.addcdiv(b, c),
        ((2, 3), (3,), (2, 1)),
        complex=True,
        positive=True,
    ),
    "addcdiv_": Line(
        lambda lib, a, b, c: (a * 1.0).addcdiv_(b, c * c, value=-2.0),
        ((2, 3), (2, 3), (3,)),
        positive=True,
    ),
    "clip.Tensor": Line(
        lambda lib, a, b, c: lib.clip(a, b, c) * a.clip(c, b),
        ((3, 4), (4,), (3, 1)),
    ),
    "clip": Line(lambda lib, a: lib.clip(a, -0.5, 0.7) * a.clip(max=0.2), ((6,),)),
    "clamp_.Tensor": Line(
        lambda lib, a, b, c: lib.clamp_(a * 1.0, b, c) * (a * a).clamp_(min=b),
        ((3, 4), (4,), (3, 1)),
    ),
    "clip_.Tensor": Line(
        lambda lib, a, b: lib.clip_(a * 1.0, max=b) * (a * a).clip_(b),
        ((3, 4), (4,)),
    ),
    "clip_": Line(
        lambda lib, a: lib.clip_(a * 1.0, min=-0.5) * (a * a).clip_(0.3, 1.5),
        ((6,),),
    ),
    "nan_to_num": Line(
        lambda lib, a: lib.nan_to_num(a) * a.nan_to_num(1.0, 2.0, -3.0),
        ((2, 3),),
    ),
    "nan_to_num_": Line(
        lambda lib, a: lib.nan_to_num_(a * 1.0) * (a * a).nan_to_num_(0.0),
        ((2, 3),),
    ),
    "greater.Tensor": Line(
        lambda lib, a, b: a * b * lib.greater(a, b) + a.greater(b * 0.5),
        ((6,), (6,)),
    ),
    "greater.Scalar": Line(
        lambda lib, a: a * lib.greater(a, 0.3) * a.greater(-0.5), ((6,),)
    ),
    "greater_equal.Tensor": Line(
        lambda lib, a, b: a * b * lib.greater_equal(a, b) + a.greater_equal(b * 0.5),
        ((6,), (6,)),
    ),
    "greater_equal.Scalar": Line(
        lambda lib, a: a * lib.greater_equal(a, 0.3) * a.greater_equal(-0.5),
        ((6,),),
    ),
    "less.Tensor": Line(
        lambda lib, a, b: a * b * lib.less(a, b) + a.less(b * 0.5), ((6,), (6,))
    ),
    "less.Scalar": Line(lambda lib, a: a * lib.less(a, 0.3) * a.less(-0.5), ((6,),)),
    "less_equal.Tensor": Line(
        lambda lib, a, b: a * b * lib.less_equal(a, b) + a.less_equal(b * 0.5),
        ((6,), (6,)),
    ),
    "less_equal.Scalar": Line(
        lambda lib, a: a * lib.less_equal(a, 0.3) * a.less_equal(-0.5), ((6,),)
    ),
    "not_equal.Tensor": Line(
        lambda lib, a, b: a * b * lib.not_equal(a, b) + a.not_equal(b * 0.5),
        ((6,), (6,)),
    ),
    "not_equal.Scalar": Line(
        lambda lib, a: a * lib.not_equal(a, 0.3) * a.not_equal(-0.5), ((6,),)
    ),
    "absolute": Line(lambda lib, a: lib.absolute(a) * a.absolute(), ((4,),)),
    "negative": Line(lambda lib, a: lib.negative(a) * a.negative(), ((4,),)),
    "arccos": Line(lambda lib, a: lib.arccos(a * 0.4) * (a * 0.3).arccos(), ((4,),)),
    "arcsin": Line(lambda lib, a: lib.arcsin(a * 0.4) * (a * 0.3).arcsin(), ((4,),)),
    "arctan": Line(lambda lib, a: lib.arctan(a) * a.arctan(), ((4,),)),
    "arctan2": Line(lambda lib, a, b: lib.arctan2(a, b) * a.arctan2(b), ((3, 1), (4,))),
    "fix": Line(lambda lib, a: lib.fix(a) * a.fix() * a, ((5,),)),
    "multiply.Tensor": Line(
        lambda lib, a, b: lib.multiply(a, b) * a.multiply(b), ((3, 1), (1, 4))
    ),
    "multiply.Scalar": Line(
        lambda lib, a: lib.multiply(a, -1.5) * a.multiply(2),
        ((3,),),
    ),
    "divide.Tensor": Line(
        lambda lib, a, b: lib.divide(a, b) * a.divide(b),
        ((3, 1), (1, 4)),
        positive=True,
    ),
    "divide.Scalar": Line(lambda lib, a: lib.divide(a, -2.5) * a.divide(2), ((3,),)),
    "divide.Tensor_mode": Line(
        lambda lib, a, b: lib.divide(a * 3.0, b, rounding_mode="floor") * a
        + a.divide(b, rounding_mode=None),
        ((4,), (4,)),
        positive=True,
    ),
    "subtract.Tensor": Line(
        lambda lib, a, b: lib.subtract(a, b, alpha=-0.5) * a.subtract(b),
        ((2, 3), (3,)),
    ),
    "subtract.Scalar": Line(
        lambda lib, a: lib.subtract(a, 1.5, alpha=-0.5) * a.subtract(2),
        ((3,),),
    ),
    "acosh": Line(
        lambda lib, a: lib.acosh(a * a + 1.5) * (a * a + 1.2).acosh(),
        ((4,),),
        complex=True,
    ),
    "acosh_": Line(  # PyTorch's backward is not implemented: forward only
        lambda lib, a: _f64(lib, [1.5, 2.0, 3.0, 1.25]).acosh_() * a, ((4,),)
    ),
    "asinh": Line(lambda lib, a: lib.asinh(a) * a.asinh(), ((4,),), complex=True),
    "asinh_": Line(
        lambda lib, a: lib.asinh_(_f64(lib, [-1.5, 0.0, 2.0, 0.5])) * a, ((4,),)
    ),
    "atanh": Line(lambda lib, a: lib.atanh(a * 0.4), ((4,),), complex=True),
    "atanh_": Line(
        lambda lib, a: _f64(lib, [-0.5, 0.0, 0.25, 0.75]).atanh_() * a, ((4,),)
    ),
    "arccosh": Line(lambda lib, a: lib.arccosh(a * a + 1.5), ((4,),)),
    "arcsinh": Line(lambda lib, a: lib.arcsinh(a) * a.arcsinh(), ((4,),)),
    "arctanh": Line(lambda lib, a: lib.arctanh(a * 0.4) * (a * 0.3).arctanh(), ((4,),)),
    "deg2rad": Line(lambda lib, a: lib.deg2rad(a) * a.deg2rad(), ((4,),)),
    "deg2rad_": Line(lambda lib, a: lib.deg2rad_(a * 1.0) * a, ((4,),)),
    "rad2deg": Line(lambda lib, a: lib.rad2deg(a) * a.rad2deg(), ((4,),)),
    "rad2deg_": Line(lambda lib, a: (a * 1.0).rad2deg_() * a, ((4,),)),
    "copysign.Tensor": Line(
        lambda lib, a, b: lib.copysign(a, b) * a.copysign(b), ((3, 1), (4,))
    ),
    "copysign_.Tensor": Line(lambda lib, a, b: (a * 1.0).copysign_(b), ((4,), (4,))),
    "copysign.Scalar": Line(
        lambda lib, a: lib.copysign(a, -1.5) * a.copysign(2), ((4,),)
    ),
    "copysign_.Scalar": Line(lambda lib, a: (a * a).copysign_(-1.0), ((4,),)),
    "frac": Line(lambda lib, a: lib.frac(a * 2.0) * a.frac(), ((5,),)),
    "frac_": Line(lambda lib, a: lib.frac_(a * 2.0) * a, ((5,),)),
    "frexp.Tensor": Line(
        lambda lib, a: lib.frexp(a).mantissa * a.frexp()[0] * a.frexp().exponent,
        ((5,),),
    ),
    "ldexp.Tensor": Line(lambda lib, a, b: lib.ldexp(a, b) * a, ((3, 1), (4,))),
    "ldexp_": Line(
        lambda lib, a, b: (a * 1.0).ldexp_(b) + lib.ldexp_(a * a, b), ((4,), (4,))
    ),
    "heaviside": Line(  # not differentiable (PyTorch has no formula): forward only
        lambda lib, a, b: lib.heaviside(a.detach(), b.detach()) * (a + b),
        ((3, 1), (4,)),
    ),
    "heaviside_": Line(
        lambda lib, a, b: (a.detach() * 1.0).heaviside_(b.detach()) * (a + b),
        ((4,), (4,)),
    ),
    "nextafter": Line(
        lambda lib, a, b: lib.nextafter(a, b) * a.nextafter(b), ((3, 1), (4,))
    ),
    "nextafter_": Line(lambda lib, a, b: (a * 1.0).nextafter_(b), ((4,), (4,))),
    "logaddexp2": Line(
        lambda lib, a, b: lib.logaddexp2(a, b) * a.logaddexp2(b), ((3, 1), (4,))
    ),
    "clamp_min.Tensor": Line(
        lambda lib, a, b: lib.clamp_min(a, b) + a.clamp_min(b * 0.5), ((3, 1), (4,))
    ),
    "clamp_max.Tensor": Line(
        lambda lib, a, b: lib.clamp_max(a, b) + a.clamp_max(b * 0.5), ((3, 1), (4,))
    ),
    "clamp_min_": Line(
        lambda lib, a: (a * 1.0).clamp_min_(0.2) * lib.clamp_min_(a * 1.0, -0.5),
        ((6,),),
    ),
    "clamp_min_.Tensor": Line(
        lambda lib, a, b: (a * 1.0).clamp_min_(b) + lib.clamp_min_(a * 1.0, b * 0.5),
        ((4,), (4,)),
    ),
    "clamp_max_": Line(
        lambda lib, a: (a * 1.0).clamp_max_(0.2) * lib.clamp_max_(a * 1.0, -0.5),
        ((6,),),
    ),
    "clamp_max_.Tensor": Line(
        lambda lib, a, b: (a * 1.0).clamp_max_(b) + lib.clamp_max_(a * 1.0, b * 0.5),
        ((4,), (4,)),
    ),
    "signbit": Line(lambda lib, a: a * lib.signbit(a) + a.signbit() * a, ((5,),)),
    "pow_.Scalar": Line(lambda lib, a: (a * 1.0).pow_(2.5), ((4,),), positive=True),
    "pow_.Tensor": Line(
        lambda lib, a, b: (a * 1.0).pow_(b), ((4,), (4,)), positive=True
    ),
    "float_power.Tensor_Tensor": Line(
        lambda lib, a, b: lib.float_power(a, b) * a.float_power(b),
        ((3, 1), (4,)),
        positive=True,
    ),
    "float_power.Scalar": Line(lambda lib, a: lib.float_power(2.5, a), ((4,),)),
    "float_power.Tensor_Scalar": Line(
        lambda lib, a: lib.float_power(a, 2) * a.float_power(1.5),
        ((4,),),
        positive=True,
    ),
    "float_power_.Scalar": Line(
        lambda lib, a: (a * 1.0).float_power_(2), ((4,),), positive=True
    ),
    "float_power_.Tensor": Line(
        lambda lib, a, b: (a * 1.0).float_power_(b), ((4,), (4,)), positive=True
    ),
    "exp2_": Line(lambda lib, a: lib.exp2_(a * 1.0) * (a * 1.0).exp2_(), ((4,),)),
    "expm1_": Line(lambda lib, a: lib.expm1_(a * 1.0) * a, ((4,),), complex=True),
    "log1p_": Line(lambda lib, a: (a * 1.0).log1p_(), ((4,),), positive=True),
    "log2_": Line(lambda lib, a: lib.log2_(a * 1.0), ((4,),), positive=True),
    "log10_": Line(lambda lib, a: (a * 1.0).log10_(), ((4,),), positive=True),
    "rsqrt_": Line(lambda lib, a: lib.rsqrt_(a * 1.0), ((4,),), positive=True),
    "reciprocal_": Line(lambda lib, a: (a * 1.0).reciprocal_(), ((4,),), positive=True),
    "sin_": Line(lambda lib, a: lib.sin_(a * 1.0) * a, ((4,),), complex=True),
    "cos_": Line(lambda lib, a: (a * 1.0).cos_(), ((4,),), complex=True),
    "tan_": Line(lambda lib, a: lib.tan_(a * 0.5), ((4,),)),
    "sinh_": Line(lambda lib, a: (a * 1.0).sinh_() * a, ((4,),)),
    "cosh_": Line(lambda lib, a: lib.cosh_(a * 1.0), ((4,),)),
    "sgn_": Line(lambda lib, a: (a * 1.0).sgn_() * a, ((4,),), complex=True),
    "trunc_": Line(lambda lib, a: lib.trunc_(a * 2.0) * a, ((5,),)),
    "floor_": Line(lambda lib, a: (a * 2.0).floor_() * a, ((5,),)),
    "ceil_": Line(lambda lib, a: lib.ceil_(a * 2.0) * a, ((5,),)),
    "square_": Line(
        lambda lib, a: lib.square_(a * 1.0) * (a * 1.0).square_(), ((4,),), complex=True
    ),
    "arccosh_": Line(
        lambda lib, a: _f64(lib, [1.5, 2.0, 3.0, 1.25]).arccosh_() * a, ((4,),)
    ),
    "arcsinh_": Line(
        lambda lib, a: lib.arcsinh_(_f64(lib, [-1.5, 0.0, 2.0, 0.5])) * a, ((4,),)
    ),
    "arctanh_": Line(
        lambda lib, a: _f64(lib, [-0.5, 0.0, 0.25, 0.75]).arctanh_() * a, ((4,),)
    ),
    "fix_": Line(lambda lib, a: lib.fix_(a * 2.0) * (a * 2.0).fix_() * a, ((5,),)),
    "acos_": Line(lambda lib, a: lib.acos_(a * 0.4) * (a * 0.3).acos_(), ((4,),)),
    "asin_": Line(lambda lib, a: (a * 0.4).asin_() * lib.asin_(a * 0.3), ((4,),)),
    "atan_": Line(lambda lib, a: lib.atan_(a * 1.0) * a, ((4,),), complex=True),
    "erf_": Line(lambda lib, a: (a * 1.0).erf_() * lib.erf_(a * 0.5), ((5,),)),
    "round_": Line(
        lambda lib, a: lib.round_(a * 2.0) * (a * 2.0).round_() * a, ((5,),)
    ),
    "round_.decimals": Line(
        lambda lib, a: (a * 1.0).round_(decimals=1)
        * lib.round_(a * 1.0, decimals=2)
        * a,
        ((5,),),
    ),
    "sign_": Line(lambda lib, a: (a * 1.0).sign_() * a, ((5,),)),
    "atan2_": Line(lambda lib, a, b: (a * 1.0).atan2_(b), ((4,), (4,))),
    "fmod_.Scalar": Line(lambda lib, a: (a * 3.0).fmod_(-0.7) * a, ((6,),)),
    "fmod_.Tensor": Line(
        lambda lib, a, b: (a * 3.0).fmod_(b), ((4,), (4,)), positive=True
    ),
    "hypot_": Line(lambda lib, a, b: (a * 1.0).hypot_(b), ((4,), (4,))),
    "remainder_.Scalar": Line(lambda lib, a: (a * 3.0).remainder_(0.7) * a, ((6,),)),
    "remainder_.Tensor": Line(
        lambda lib, a, b: (a * 3.0).remainder_(b), ((4,), (4,)), positive=True
    ),
    "absolute_": Line(lambda lib, a: (a * 1.0).absolute_() * a, ((5,),)),
    "arccos_": Line(lambda lib, a: lib.arccos_(a * 0.4) * (a * 0.3).arccos_(), ((4,),)),
    "arcsin_": Line(lambda lib, a: (a * 0.4).arcsin_() * lib.arcsin_(a * 0.3), ((4,),)),
    "arctan_": Line(lambda lib, a: lib.arctan_(a * 1.0) * (a * 1.0).arctan_(), ((4,),)),
    "arctan2_": Line(lambda lib, a, b: (a * 1.0).arctan2_(b), ((4,), (4,))),
    "negative_": Line(
        lambda lib, a: lib.negative_(a * a) * (a * 1.0).negative_(), ((4,),)
    ),
}

LINES["logaddexp"] = Line(
    lambda lib, a, b: lib.logaddexp(a, b) * a.logaddexp(b * 3.0), ((3, 1), (4,))
)

# Rate 0 draws 0 (deterministic); the gradient through the draw is zero.
LINES["poisson"] = Line(lambda lib, a: lib.poisson(a * 0.0) * a + a, ((4,),))

# Probabilities 0 and 1 draw deterministically; bernoulli's gradient is zero, and
# bernoulli.p has none (NotImplemented, as PyTorch's): its input is detached.
LINES["bernoulli"] = Line(
    lambda lib, a: lib.bernoulli((a > 0).to(a.dtype) * 1.0 + a * 0.0) * a + a, ((6,),)
)
LINES["bernoulli.p"] = Line(
    lambda lib, a: lib.bernoulli(a.detach(), 1.0) * a + lib.bernoulli(a.detach(), 0.0),
    ((6,),),
)


def _exponential(lib: Any, a: Any) -> Any:
    """The functional exponential (torch.ops.aten's; gradgen's dispatcher entry takes
    the generator too) with lambd = inf, whose draws are all 0 (deterministic)."""
    if lib.__name__ == "torch":
        return lib.ops.aten.exponential(a, float("inf"))
    return _dispatcher(lib, "exponential")(a, float("inf"), None)


# lambd = inf draws zeros (deterministic, as PyTorch's); the gradient is zero.
LINES["exponential_"] = Line(
    lambda lib, a: (a * a).exponential_(float("inf")) * a + a, ((4,),)
)
LINES["exponential"] = Line(lambda lib, a: _exponential(lib, a * a) * a + a, ((4,),))
