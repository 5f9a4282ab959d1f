"""Activation kernels (torch.nn.functional's activations) and softmax, with their backwards."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..dtypes import scalar_type_name as _scalar_type_name
from ._half import in_float32, is_half, rounded
from ._common import (
    checked_scalar,
    _check_floating,
    _erf_float64,
    _not_implemented_for,
    _same_dtype,
    _silently,
    _wrap_dim,
)

__all__ = [
    "relu",
    "gelu",
    "silu",
    "threshold_backward",
    "gelu_backward",
    "silu_backward",
    "leaky_relu",
    "leaky_relu_backward",
    "elu",
    "elu_backward",
    "softplus",
    "softplus_backward",
    "log_sigmoid_forward",
    "log_sigmoid_backward",
    "hardtanh",
    "hardtanh_backward",
    "mish",
    "mish_backward",
    "softmax",
    "softmax_backward_data",
    "celu",
    "glu",
    "glu_backward",
    "hardshrink",
    "hardshrink_backward",
    "softshrink",
    "softshrink_backward",
    "hardsigmoid",
    "hardsigmoid_backward",
    "hardswish",
    "hardswish_backward",
    "threshold_kernel",
    "rrelu_with_noise",
    "rrelu_with_noise_backward",
    "prelu_kernel",
    "prelu_kernel_backward",
    "native_dropout",
    "native_dropout_backward",
]


_M_SQRT1_2 = 0.70710678118654752440  # 1/sqrt(2)


_M_2_SQRTPI = 1.12837916709551257390  # 2/sqrt(pi)


_GELU_BETA = 2.0**0.5 * _M_2_SQRTPI * 0.5  # sqrt(2/pi), PyTorch's kBeta for 'tanh'


_GELU_KAPPA = 0.044715


# np.where(drop, 0, values) takes a branch per element, which mispredicts about half
# the time on data of random sign (a relu's input): ~8 ns an element. From this many
# elements on, _zeroed_where selects with an integer AND instead (measured on fresh
# random data: even at 256 elements, 7x faster at 64x128, 20x at 1e6 float32).
_SELECT_MIN_SIZE = 256


# _selected's two-sided select costs four ufunc calls (~3 us of overhead): np.where on
# fresh data of random sign is as fast up to about this many elements (measured with
# leaky_relu float32: 1.8 against 7.3 us at 256, 8.4 against 7.8 at 1024).
_SELECT_BOTH_MIN_SIZE = 1024


# The integer of a floating dtype's size, to select its bits with.
_SAME_SIZE_INTS: dict[np.dtype[Any], np.dtype[Any]] = {
    np.dtype(np.float16): np.dtype(np.int16),
    np.dtype(np.float32): np.dtype(np.int32),
    np.dtype(np.float64): np.dtype(np.int64),
}


def _zeroed_where(drop: np.ndarray, values: np.ndarray) -> np.ndarray:
    """np.where(drop, 0, values) in values' dtype, bit for bit (values' -0.0, NaN and
    subnormals kept), as a new array; branchless for float16/32/64 arrays of the
    mask's shape: values' bits AND (0 where dropped, all ones where kept)."""
    ints = _SAME_SIZE_INTS.get(values.dtype)
    if ints is None or values.size < _SELECT_MIN_SIZE or drop.shape != values.shape:
        return np.where(drop, np.zeros((), values.dtype), values)
    bits = np.subtract(drop, 1, dtype=ints)
    np.bitwise_and(values.view(ints), bits, out=bits)
    return bits.view(values.dtype)


def _selected(
    condition: np.ndarray, chosen: Any, other: Any, like: np.ndarray
) -> np.ndarray:
    """np.where(condition, chosen, other) in like's dtype (as `_same_dtype` of it), bit
    for bit; branchless for float16/32/64 results of the condition's shape from
    _SELECT_BOTH_MIN_SIZE elements: chosen's bits XOR ((chosen XOR other) AND a mask
    that is 0 where the condition holds, all ones elsewhere). Each side is first cast
    to the dtype np.where would give (a Python number rounds as there), then to like's:
    casts are elementwise, so selecting after them picks the same bits."""
    ints = _SAME_SIZE_INTS.get(like.dtype)
    if ints is None or condition.size < _SELECT_BOTH_MIN_SIZE:
        return _same_dtype(np.where(condition, chosen, other), like)
    dtype = like.dtype
    if (
        getattr(chosen, "dtype", None) is dtype
        and getattr(other, "dtype", None) is dtype
    ):
        first, second = chosen, other
    else:
        common = np.result_type(chosen, other)
        first = np.asarray(chosen, common).astype(dtype, copy=False)
        second = np.asarray(other, common).astype(dtype, copy=False)
    shape = condition.shape
    if first.shape != shape or second.shape != shape:
        if np.broadcast_shapes(shape, first.shape, second.shape) != shape:
            return _same_dtype(np.where(condition, chosen, other), like)
    bits = np.subtract(condition, 1, dtype=ints)
    np.bitwise_and(bits, np.bitwise_xor(first.view(ints), second.view(ints)), out=bits)
    np.bitwise_xor(bits, first.view(ints), out=bits)
    return bits.view(like.dtype)


def relu(self: np.ndarray) -> np.ndarray:
    """max(x, 0), keeping NaN and -0.0 (PyTorch's clamp_min(0)); dtype kept."""
    dtype = self.dtype
    if (
        self.ndim
        and self.flags.c_contiguous
        and (
            dtype in _RELU_BY_MAXIMUM
            or (dtype in _RELU_UNPROBED and _probe_maximum(dtype))
        )
    ):
        return _maximum_of_zero(self)
    if dtype.kind == "b":
        raise RuntimeError("Boolean inputs not supported for relu")
    if dtype.kind == "c":
        raise NotImplementedError("clamp is not supported for complex types")
    return _zeroed_where(self < 0, self)


def _maximum_of_zero(x: np.ndarray) -> np.ndarray:
    """np.maximum(0, x) for a C-contiguous x, in one pass over memory: into a fresh
    array of zeros (contiguous operands take numpy's plain vector loop; a broadcast 0
    takes its strided one, a few times slower)."""
    zeros = np.zeros(x.shape, x.dtype)
    result: np.ndarray = np.maximum(zeros, x, out=zeros)
    return result


# The floating dtypes where relu is _maximum_of_zero (probed), and those not probed.
_RELU_BY_MAXIMUM: set[np.dtype[Any]] = set()
_RELU_UNPROBED = {np.dtype(np.float32), np.dtype(np.float64)}

# The values where a maximum may differ from relu's select: signed zeros, NaNs of
# both signs with payloads (a select keeps their bits), infinities, subnormals.
_RELU_PROBE = (-0.0, 0.0, 1.5, -2.5, float("inf"), float("-inf"), 5e-324, -5e-324)
_RELU_PROBE_NANS = (0x7FF8000000000123, -0x0007FFFFFFFFFEDD, 0x7FF0000000000001)


def _probe_maximum(dtype: np.dtype[Any]) -> bool:
    """Whether _maximum_of_zero is relu's select `x < 0 ? 0 : x` bit for bit in `dtype`
    on this numpy build and CPU, decided once by trying each probe value at each
    position of numpy's vector loop and its scalar tail. On x86 it is: the max
    instructions return their second operand for two zeros and for a NaN, and numpy's
    maximum checks only the first for NaN. A maximum that orders -0.0 below 0.0 or
    quiets NaNs (other CPUs, builds without SIMD) keeps the select."""
    _RELU_UNPROBED.discard(dtype)
    with np.errstate(all="ignore"):  # (the values underflow, compare NaNs)
        same = _maximum_is_select(dtype)
    if same:
        _RELU_BY_MAXIMUM.add(dtype)
    return same


def _maximum_is_select(dtype: np.dtype[Any]) -> bool:
    zero = np.zeros((), dtype)
    ints = _SAME_SIZE_INTS[dtype]
    nans = np.array(_RELU_PROBE_NANS, np.int64).view(np.float64)
    values = np.concatenate([np.array(_RELU_PROBE), nans]).astype(dtype)
    size = values.size
    probes = [np.resize(values, 1031), np.resize(values, (37, 29))]
    for length in range(1, 6 * size):  # each value in each lane and tail position
        for shift in range(size if length <= size else 1):
            probes.append(np.resize(np.roll(values, shift), length))
    for probe in probes:
        expected = np.where(probe < 0, zero, probe).view(ints)
        if not np.array_equal(_maximum_of_zero(probe).view(ints), expected):
            return False
    return True


def _check_gelu(self: np.ndarray, approximate: str, kernel: str) -> None:
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    if self.dtype.kind not in "f":
        raise _not_implemented_for(kernel, self)


def gelu(self: np.ndarray, approximate: str) -> np.ndarray:
    """x * Phi(x), or its tanh approximation (PyTorch's GeluKernelImpl)."""
    _check_gelu(self, approximate, "GeluKernelImpl")
    x = self
    if approximate == "tanh":
        inner = _GELU_BETA * (x + _GELU_KAPPA * (x * x * x))
        return (0.5 * x * (1 + np.tanh(inner))).astype(x.dtype)
    return (x * 0.5 * (1 + _erf_float64(x * _M_SQRT1_2))).astype(x.dtype)


def gelu_backward(
    grad_output: np.ndarray, self: np.ndarray, approximate: str
) -> np.ndarray:
    """grad_output * gelu'(self) (PyTorch's GeluBackwardKernelImpl)."""
    _check_gelu(self, approximate, "GeluBackwardKernelImpl")
    x = self
    if approximate == "tanh":
        x_sq = x * x
        inner = _GELU_BETA * (x + _GELU_KAPPA * x_sq * x)
        tanh_inner = np.tanh(inner)
        left_derivative = 0.5 * (1 + tanh_inner)
        right_derivative = (
            0.5
            * x
            * (1 - tanh_inner * tanh_inner)
            * _GELU_BETA
            * (1 + 3 * _GELU_KAPPA * x_sq)
        )
        return grad_output * (left_derivative + right_derivative)
    cdf = 0.5 * (1 + _erf_float64(x * _M_SQRT1_2)).astype(x.dtype)
    pdf = _M_2_SQRTPI * _M_SQRT1_2 * 0.5 * np.exp(-0.5 * x * x)
    return grad_output * (cdf + x * pdf)


def silu(self: np.ndarray) -> np.ndarray:
    """x * sigmoid(x), as PyTorch computes it: x / (1 + exp(-x))."""
    if self.dtype.kind not in "fc":
        raise _not_implemented_for("silu_cpu", self)
    return self / (1 + np.exp(-self))


def silu_backward(grad_output: np.ndarray, self: np.ndarray) -> np.ndarray:
    """grad_output * silu'(self) (PyTorch's silu_backward kernel)."""
    if self.dtype.kind not in "fc":
        raise _not_implemented_for("silu_backward_cpu", self)
    sigmoid_x = np.reciprocal(1 + np.exp(-self))
    return grad_output * sigmoid_x * (1 + self * (1 - sigmoid_x))


def threshold_backward(
    grad_output: np.ndarray, self: np.ndarray, threshold: Any
) -> np.ndarray:
    """grad_output where self > threshold, else 0 (NaN in self lets the gradient
    through, as PyTorch's `self <= threshold ? 0 : grad`)."""
    if self.dtype.kind in "bc":
        raise _not_implemented_for("threshold_cpu", self)
    return _zeroed_where(self <= threshold, grad_output)


@_silently
def softmax(self: np.ndarray, dim: int, half_to_float: bool, log: bool) -> np.ndarray:
    """_softmax / _log_softmax along dim, shifted by the max (floating input only)."""
    name = "log_softmax" if log else "softmax"
    if half_to_float:
        raise RuntimeError(
            "softmax with half to float conversion is not supported on CPU"
        )
    axis = _wrap_dim(dim, self.ndim)
    if is_half(self):  # in float32, rounded once
        if log and axis >= self.ndim - 1:
            return _half_log_softmax_lastdim(self)
        return in_float32(softmax, self, dim, half_to_float, log)
    if self.dtype.kind != "f":
        kernel = "lastdim_kernel_impl" if axis >= self.ndim - 1 else "kernel_impl"
        raise NotImplementedError(
            f"\"{name}_{kernel}\" not implemented for '{_scalar_type_name(self)}'"
        )
    x = self.reshape(1) if self.ndim == 0 else self
    if x.size == 0:
        return self.copy()
    shifted = x - np.max(x, axis=axis, keepdims=True)
    exps = np.exp(shifted)
    sums = np.sum(exps, axis=axis, keepdims=True)
    result = shifted - np.log(sums) if log else exps / sums
    return result.reshape(self.shape)


def _half_log_softmax_lastdim(self: np.ndarray) -> np.ndarray:
    """PyTorch's log_softmax of half precision along the last dim: in float32, but the
    sum of the exponentials and its log are each rounded to the half dtype (70000 ones
    in float16 give -inf, where other dims give -11.16)."""
    x = self.astype(np.float32).reshape(self.shape or (1,))
    shifted = x - np.max(x, axis=-1, keepdims=True)
    sums = rounded(np.sum(np.exp(shifted), axis=-1, keepdims=True), self.dtype)
    logs = rounded(np.log(sums.astype(np.float32)), self.dtype)
    return rounded(shifted - logs.astype(np.float32), self.dtype).reshape(self.shape)


@_silently
def softmax_backward_data(
    grad_output: np.ndarray, output: np.ndarray, dim: int, log: bool
) -> np.ndarray:
    """The gradient of _softmax (`log` False) or _log_softmax from its output."""
    if grad_output.shape != output.shape:
        raise RuntimeError(
            f"Expected size {list(grad_output.shape)} but got size {list(output.shape)} "
            "for argument #2 'output' (while checking arguments for softmax_backward)"
        )
    if is_half(grad_output):  # in float32, rounded once
        narrow = output.astype(np.float32)
        return in_float32(softmax_backward_data, grad_output, narrow, dim, log)
    axis = _wrap_dim(dim, grad_output.ndim)
    g = grad_output.reshape(1) if grad_output.ndim == 0 else grad_output
    y = output.reshape(g.shape)
    if log:
        result = g - np.exp(y) * np.sum(g, axis=axis, keepdims=True)
    else:
        result = y * (g - np.sum(g * y, axis=axis, keepdims=True))
    return result.reshape(grad_output.shape).astype(grad_output.dtype, copy=False)


# PyTorch computes float16 in float32 (its opmath type) and rounds once: elu and
# softplus (and their backwards) do the same here, leaky_relu takes its slope as a
# float32 (_opmath).
_HALF = np.dtype(np.float16)


def _opmath(scalar: Any, like: np.ndarray) -> Any:
    """A Python scalar as PyTorch's kernels use it with like's dtype: float16 computes
    in float32 (its opmath type) with the scalar as a float32, where numpy would round
    the scalar to float16 first."""
    return np.float32(scalar) if like.dtype == np.float16 else scalar


def leaky_relu(self: np.ndarray, negative_slope: Any) -> np.ndarray:
    """x where x > 0, else x * negative_slope (NaN stays NaN)."""
    _check_floating("leaky_relu_cpu", self)
    slope = _opmath(negative_slope, self)
    return _selected(self > 0, self, self * slope, self)


_LEAKY_RELU_INPLACE_NEGATIVE_SLOPE = (
    "In-place leakyReLu backward calculation is triggered with a negative slope which "
    "is not supported. This is caused by calling in-place forward function with a "
    "negative slope, please call out-of-place version instead. File an issue at "
    "https://github.com/pytorch/pytorch if you do require supporting in-place leakRelu "
    "backward calculation with negative slope"
)


def leaky_relu_backward(
    grad_output: np.ndarray, self: np.ndarray, negative_slope: Any, self_is_result: bool
) -> np.ndarray:
    """grad_output where self > 0, else grad_output * negative_slope. With
    `self_is_result` (after leaky_relu_) the slope must be positive, as PyTorch checks.
    """
    if self_is_result and negative_slope < 0:
        raise RuntimeError(_LEAKY_RELU_INPLACE_NEGATIVE_SLOPE)
    _check_floating("leaky_relu_backward_cpu", self)
    slope = _opmath(negative_slope, grad_output)
    return _selected(self > 0, grad_output, grad_output * slope, grad_output)


def elu(self: np.ndarray, alpha: Any, scale: Any, input_scale: Any) -> np.ndarray:
    """scale * x for x > 0, else scale * alpha * (exp(input_scale * x) - 1)."""
    _check_floating("elu_cpu", self)
    if self.dtype == _HALF:
        return elu(self.astype(np.float32), alpha, scale, input_scale).astype(_HALF)
    # min(x, 0) keeps exp from overflowing where x > 0 (not selected there); copysign
    # gives x = -0.0 back its sign, so elu(-0.0) is -0.0 as PyTorch's.
    below = np.copysign(np.minimum(self, 0), self)
    scale, input_scale, coefficient = _elu_coefficients(self, alpha, scale, input_scale)
    negative = np.expm1(below * input_scale) * coefficient
    return _selected(self <= 0, negative, self * scale, self)


def _elu_coefficients(
    like: np.ndarray, alpha: Any, scale: Any, input_scale: Any
) -> tuple[Any, Any, Any]:
    """(scale, input_scale, alpha * scale) as PyTorch's kernels compute them: each in
    the computation's type first (float32 for a float32 array), the product there."""
    if like.dtype == np.float32:
        alpha, scale, input_scale = (np.float32(v) for v in (alpha, scale, input_scale))
    return scale, input_scale, alpha * scale


_ELU_INPLACE_NEGATIVE_SLOPE = (
    "In-place elu backward calculation is triggered with a negative slope which is not "
    "supported. This is caused by calling in-place forward function with a negative "
    "slope, please call out-of-place version instead."
)


def elu_backward(
    grad_output: np.ndarray,
    alpha: Any,
    scale: Any,
    input_scale: Any,
    is_result: bool,
    self_or_result: np.ndarray,
) -> np.ndarray:
    """grad_output * elu'(x), from the input x or (is_result) from the result y:
    input_scale * (y + alpha * scale) where y <= 0, scale elsewhere."""
    if is_result and alpha < 0:
        raise RuntimeError(_ELU_INPLACE_NEGATIVE_SLOPE)
    _check_floating("elu_backward_cpu", self_or_result)
    x = self_or_result
    if x.dtype == _HALF and grad_output.dtype == _HALF:
        single = grad_output.astype(np.float32)
        result = elu_backward(
            single, alpha, scale, input_scale, is_result, x.astype(np.float32)
        )
        return result.astype(_HALF)
    scale, input_scale, coefficient = _elu_coefficients(x, alpha, scale, input_scale)
    if is_result:
        negative = grad_output * input_scale * (x + coefficient)
    else:
        exponential = np.exp(np.minimum(x, 0) * input_scale)
        negative = grad_output * input_scale * coefficient * exponential
    # x <= 0 as PyTorch's scalar loop: a NaN x lets grad_output * scale through (its
    # vectorised loop tests x > 0 and gives NaN there: the answer depends on position).
    return _selected(x <= 0, negative, grad_output * scale, grad_output)


# softplus keeps np.where: beta * x > threshold (20) is rare in practice, so its branch
# is predicted well and np.where beats the bit select (bench/select_activations.py:
# 0.7x at 1e6 float64, even at float32).


def softplus(self: np.ndarray, beta: Any, threshold: Any) -> np.ndarray:
    """log(1 + exp(beta * x)) / beta, and x itself where beta * x > threshold."""
    _check_floating("softplus_cpu", self)
    if self.dtype == _HALF:
        return softplus(self.astype(np.float32), beta, threshold).astype(_HALF)
    scaled = self * beta
    smooth = np.log1p(np.exp(np.minimum(scaled, threshold))) / beta
    return _same_dtype(np.where(scaled > threshold, self, smooth), self)


def softplus_backward(
    grad_output: np.ndarray, self: np.ndarray, beta: Any, threshold: Any
) -> np.ndarray:
    """grad_output * sigmoid(beta * x), and grad_output where beta * x > threshold."""
    _check_floating("softplus_backward_cpu", self)
    if self.dtype == _HALF and grad_output.dtype == _HALF:
        single = grad_output.astype(np.float32)
        result = softplus_backward(single, self.astype(np.float32), beta, threshold)
        return result.astype(_HALF)
    scaled = self * beta
    z = np.exp(np.minimum(scaled, threshold))
    return _same_dtype(
        np.where(scaled > threshold, grad_output, grad_output * z / (z + 1)),
        grad_output,
    )


def log_sigmoid_forward(self: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(log(sigmoid(x)), buffer) computed stably as min(x, 0) - log1p(exp(-|x|)); the
    buffer holds exp(-|x|) for the backward, as PyTorch's CPU kernel keeps it."""
    _check_floating("log_sigmoid_cpu", self)
    buffer = _same_dtype(np.exp(-np.abs(self)), self)
    return _same_dtype(np.minimum(self, 0) - np.log1p(buffer), self), buffer


def log_sigmoid_backward(
    grad_output: np.ndarray, self: np.ndarray, buffer: np.ndarray
) -> np.ndarray:
    """grad_output * (1 - sigmoid(x)), from the forward's buffer exp(-|x|) (recomputed
    when the buffer is empty, as PyTorch's CUDA kernel leaves it)."""
    _check_floating("log_sigmoid_backward_cpu", self)
    z = np.exp(-np.abs(self)) if buffer.size == 0 else buffer
    negative = self < 0
    derivative = np.where(negative, 1 - z / (1 + z), z / (1 + z))
    return _same_dtype(derivative * grad_output, grad_output)


def hardtanh(self: np.ndarray, min_val: Any, max_val: Any) -> np.ndarray:
    """x clamped to [min_val, max_val], in x's dtype (integers too)."""
    if self.dtype.kind == "b":
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if self.dtype.kind == "c":
        raise NotImplementedError("clamp is not supported for complex types")
    low = checked_scalar(min_val, self.dtype)
    high = checked_scalar(max_val, self.dtype)
    return _same_dtype(np.minimum(np.maximum(self, low), high), self)


def hardtanh_backward(
    grad_output: np.ndarray, self: np.ndarray, min_val: Any, max_val: Any
) -> np.ndarray:
    """grad_output, except 0 where x <= min_val or x >= max_val (NaN lets it through)."""
    _check_floating("hardtanh_backward_cpu", self)
    outside = (self <= min_val) | (self >= max_val)
    return _zeroed_where(outside, grad_output)


def _softplus_unit(x: np.ndarray) -> np.ndarray:
    """log(1 + exp(x)) without overflow."""
    return np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))


def mish(self: np.ndarray) -> np.ndarray:
    """x * tanh(softplus(x))."""
    _check_floating("mish_cpu", self)
    return _same_dtype(self * np.tanh(_softplus_unit(self)), self)


def mish_backward(grad_output: np.ndarray, self: np.ndarray) -> np.ndarray:
    """grad_output * (tanh(sp) + x * sigmoid(x) * (1 - tanh(sp)^2)), sp = softplus(x)."""
    _check_floating("mish_backward_cpu", self)
    sigmoid_x = 1 / (1 + np.exp(-self))
    tanh_softplus = np.tanh(_softplus_unit(self))
    derivative = tanh_softplus + self * sigmoid_x * (1 - tanh_softplus * tanh_softplus)
    return _same_dtype(grad_output * derivative, grad_output)


def celu(self: np.ndarray, alpha: Any) -> np.ndarray:
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1)): elu with input_scale 1/alpha."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    _check_floating("elu_cpu", self)
    return elu(self, alpha, 1, 1.0 / alpha)


def _glu_halves(self: np.ndarray, dim: int) -> tuple[np.ndarray, np.ndarray, int]:
    """The two halves of `self` along `dim` (wrapped), with PyTorch's checks."""
    if self.ndim == 0:
        raise RuntimeError(
            "glu does not support scalars because halving size must be even"
        )
    axis = _wrap_dim(dim, self.ndim)
    size = self.shape[axis]
    if size % 2:
        raise RuntimeError(
            f"Halving dimension must be even, but dimension {axis} is size {size}"
        )
    first, second = np.split(self, 2, axis=axis)
    return first, second, axis


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return _same_dtype(1 / (1 + np.exp(-x)), x)


def glu(self: np.ndarray, dim: int) -> np.ndarray:
    """a * sigmoid(b), a and b the first and second halves of `self` along `dim`."""
    _check_floating("glu_cpu", self)
    first, second, _ = _glu_halves(self, dim)
    return _same_dtype(first * _sigmoid(second), self)


def glu_backward(grad_output: np.ndarray, self: np.ndarray, dim: int) -> np.ndarray:
    """[gO * sigmoid(b), gO * a * sigmoid(b) * (1 - sigmoid(b))] along `dim`."""
    _check_floating("glu_backward_cpu", self)
    first, second, axis = _glu_halves(self, dim)
    sigmoid = _sigmoid(second)
    grad_first = grad_output * sigmoid
    grad_second = grad_first * first * (1 - sigmoid)
    return _same_dtype(np.concatenate([grad_first, grad_second], axis), grad_output)


def _check_lambd(self: np.ndarray, lambd: Any) -> None:
    """softshrink's lambda: in [0, the dtype's largest value]."""
    if self.dtype.kind == "f" and not lambd >= 0:
        largest = float(np.finfo(self.dtype).max)
        raise RuntimeError(
            f"lambda must be in range [0, {largest:g}] for input dtype "
            f"{_scalar_type_name(self)}, but found {lambd:g}"
        )


def _inside(self: np.ndarray, lambd: Any) -> np.ndarray:
    """-lambd <= x <= lambd (False for NaN, which passes through)."""
    return (self >= -lambd) & (self <= lambd)


def hardshrink(self: np.ndarray, lambd: Any) -> np.ndarray:
    """0 where -lambd <= x <= lambd, else x."""
    _check_floating("hardshrink_cpu", self)
    return _zeroed_where(_inside(self, lambd), self)


def hardshrink_backward(
    grad_out: np.ndarray, self: np.ndarray, lambd: Any
) -> np.ndarray:
    """grad_out, except 0 where -lambd <= x <= lambd."""
    _check_floating("hardshrink_backward_cpu", self)
    return _zeroed_where(_inside(self, lambd), grad_out)


def softshrink(self: np.ndarray, lambd: Any) -> np.ndarray:
    """x - lambd above lambd, x + lambd below -lambd, 0 between (NaN stays NaN)."""
    _check_lambd(self, lambd)
    _check_floating("softshrink_cpu", self)
    shrunk = np.where(self < -lambd, self + lambd, self * 0)
    return _same_dtype(np.where(self > lambd, self - lambd, shrunk), self)


def softshrink_backward(
    grad_output: np.ndarray, self: np.ndarray, lambd: Any
) -> np.ndarray:
    """grad_output, except 0 where -lambd <= x <= lambd."""
    _check_floating("softshrink_backward_cpu", self)
    return _zeroed_where(_inside(self, lambd), grad_output)


# PyTorch's CPU backward kernel multiplies by 1/6 rounded to float32 (`1.0f / 6.0f`),
# also in double precision.
_ONE_SIXTH = float(np.float32(1.0) / np.float32(6.0))


def hardsigmoid(self: np.ndarray) -> np.ndarray:
    """min(max(x + 3, 0), 6) / 6."""
    _check_floating("hardsigmoid_cpu", self)
    return _same_dtype(np.minimum(np.maximum(self + 3, 0), 6) / 6, self)


def hardsigmoid_backward(grad_output: np.ndarray, self: np.ndarray) -> np.ndarray:
    """grad_output / 6 where -3 < x < 3, else 0."""
    _check_floating("hardsigmoid_backward", self)
    inside = (self > -3) & (self < 3)
    return _same_dtype(_zeroed_where(~inside, grad_output * _ONE_SIXTH), grad_output)


def hardswish(self: np.ndarray) -> np.ndarray:
    """0 below -3, x above 3, x * (x + 3) / 6 between."""
    _check_floating("hardswish_cpu", self)
    middle = np.where(self <= 3, self * (self + 3) / 6, self)
    return _same_dtype(_zeroed_where(self < -3, middle), self)


def hardswish_backward(grad_output: np.ndarray, self: np.ndarray) -> np.ndarray:
    """0 below -3, grad_output above 3, grad_output * (x / 3 + 0.5) between."""
    _check_floating("hardswish_backward_cpu", self)
    middle = np.where(self <= 3, grad_output * (self / 3 + 0.5), grad_output)
    return _same_dtype(_zeroed_where(self < -3, middle), grad_output)


def threshold_kernel(self: np.ndarray, threshold: Any, value: Any) -> np.ndarray:
    """value where x <= threshold, else x (NaN stays), in x's dtype."""
    if self.dtype.kind in "bc":
        raise _not_implemented_for("threshold_cpu", self)
    filled = np.asarray(value).astype(self.dtype)
    return np.where(self <= threshold, filled, self)


def rrelu_with_noise(
    self: np.ndarray,
    noise: np.ndarray,
    lower: Any,
    upper: Any,
    training: bool,
    generator: Any,
) -> np.ndarray:
    """Randomized leaky ReLU. Training: each negative x times a slope drawn uniformly
    from [lower, upper], the slopes (1 for the others) written into `noise`, as
    PyTorch's kernel writes them; otherwise leaky_relu with slope (lower + upper) / 2.
    """
    _check_floating("rrelu_with_noise_out_cpu", self)
    if not training:
        return leaky_relu(self, (lower + upper) / 2)
    if noise.shape != self.shape:
        raise RuntimeError(
            f"noise tensor shape must match self tensor shape. Got noise.shape() == "
            f"{list(noise.shape)} and self.shape() == {list(self.shape)}"
        )
    slopes = generator.uniform(lower, upper, self.shape)
    noise[...] = np.where(self <= 0, slopes, 1)
    return _same_dtype(self * noise, self)


def rrelu_with_noise_backward(
    grad_output: np.ndarray,
    self: np.ndarray,
    noise: np.ndarray,
    lower: Any,
    upper: Any,
    training: bool,
    self_is_result: bool,
) -> np.ndarray:
    """grad_output * noise after a random training pass (upper - lower > 1e-6),
    else leaky_relu's gradient with slope (lower + upper) / 2."""
    if training and upper - lower > 1e-6:
        return _same_dtype(grad_output * noise, grad_output)
    return leaky_relu_backward(grad_output, self, (lower + upper) / 2, self_is_result)


def prelu_kernel(self: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """x where x > 0, else weight * x (weight broadcast against x): PyTorch's
    comparison, so -0.0, 0.0 and NaN take weight * x (0.0 * -0.25 is -0.0)."""
    _check_floating("prelu_cpu", self)
    return _selected(self > 0, self, weight * self, self)


def prelu_kernel_backward(
    grad_output: np.ndarray, self: np.ndarray, weight: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(grad_output where x > 0 else grad_output * weight, 0 where x > 0 else
    grad_output * x), both of the broadcast shape (the engine sums a gradient down to
    its input's shape, as PyTorch's; its comparison too, as prelu_kernel's)."""
    _check_floating("prelu_backward_cpu", self)
    shape = np.broadcast_shapes(self.shape, weight.shape, grad_output.shape)
    positive = np.broadcast_to(self > 0, shape)
    grad_self = _selected(positive, grad_output, grad_output * weight, grad_output)
    grad_weight = _selected(positive, 0, grad_output * self, grad_output)
    return grad_self, grad_weight


def native_dropout(
    input: np.ndarray, p: float, train: bool | None, generator: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """(input * mask / (1 - p), mask), the boolean mask kept with probability 1 - p
    (0 for the output when p == 1); without training (train False) the input and an
    all-true mask."""
    if train is not None and not train:
        return input.copy(), np.ones(input.shape, bool)
    if not 0 <= 1 - p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={1 - p:g}")
    mask = generator.random(input.shape) < 1 - p
    scale = 0.0 if p == 1 else 1.0 / (1.0 - p)
    return _same_dtype(input * mask * scale, input), mask


def native_dropout_backward(
    grad_output: np.ndarray, mask: np.ndarray, scale: float
) -> np.ndarray:
    """grad_output * mask * scale."""
    return _same_dtype(grad_output * mask * scale, grad_output)
