"""Helper functions that derivatives.yaml formulas call (PyTorch's FunctionsManual).

Every helper is written with gradgen operators, never with raw numpy, so a formula
that calls it is itself differentiable: under ``create_graph=True`` the engine runs
formulas in grad mode and these calls record their own graph. Each follows the
PyTorch helper of the same name. `__all__` is the list of helper names a formula may
call; the generator reads it (without importing this module) to validate formulas.

An undefined gradient is None; helpers that take a gradient pass None through.
"""

from __future__ import annotations

import numpy as np

from collections.abc import Sequence
from typing import Any

from .dtypes import dtype
from .grad_mode import is_grad_enabled
from .generated.ops import cat, imag, real, slice_backward, stack, where
from .numpy_kernels import _wrap_dim
from .tensor import Tensor

__all__ = [
    "handle_r_to_c",
    "maybe_multiply",
    "mul_tensor_backward",
    "pow_backward",
    "permute_backwards",
    "sum_to",
    "zeros_like",
    "_to_copy_backward",
    "scalar_conj",
    "cat_tensors_backward",
    "stack_tensors_backward",
    "split_backward",
    "split_with_sizes_backward",
    "unbind_backward",
    "unsqueeze_to",
    "slice_backward_wrapper",
    "sum_backward",
    "mean_backward",
]

Number = int | float | complex | bool


def handle_r_to_c(self_type: dtype | Tensor, gradient_result: Tensor | None) -> Tensor | None:
    """Drop the imaginary part of a gradient whose input was real."""
    if gradient_result is None:
        return None
    is_complex = (
        self_type.is_complex() if isinstance(self_type, Tensor) else self_type.is_complex
    )
    if not is_complex and gradient_result.is_complex():
        return real(gradient_result)  # type: ignore[no-any-return]
    return gradient_result


def maybe_multiply(tensor: Tensor, scalar: Number) -> Tensor:
    """`tensor * scalar`, skipping the multiplication when the scalar is one."""
    if scalar == 1:
        return tensor
    return tensor * scalar


def mul_tensor_backward(grad: Tensor, other: Tensor, self_type: dtype) -> Tensor | None:
    """d(self * other)/d(self) applied to grad: grad * conj(other)."""
    return handle_r_to_c(self_type, grad * other.conj())  # type: ignore[attr-defined]


def pow_backward(grad: Tensor, self: Tensor, exponent: Number) -> Tensor | None:
    """d(self ** exponent)/d(self) applied to grad."""
    if exponent == 0:
        return zeros_like(self)
    # self ** 1 is self: the common square needs no power (a pass over the data) at all.
    power = self if exponent == 2 else self ** (exponent - 1)
    derivative = (exponent * power).conj()  # type: ignore[attr-defined]
    if is_grad_enabled() or derivative.shape != grad.shape or derivative.dtype != grad.dtype:
        grad_self = grad * derivative
    else:  # a temporary of our own: multiply in place, one array less to allocate
        grad_self = derivative.mul_(grad)
    return handle_r_to_c(self, grad_self)


def permute_backwards(grad: Tensor, dims: tuple[int, ...]) -> Tensor:
    """Undo a permutation: permute by the inverse of `dims`."""
    ndim = len(dims)
    inverse = [0] * ndim
    for position, dim in enumerate(dims):
        inverse[_wrap_dim(dim, ndim)] = position
    return grad.permute(inverse)  # type: ignore[attr-defined,no-any-return]


def sum_to(grad: Tensor, shape: tuple[int, ...]) -> Tensor:
    """Sum `grad` down to `shape` (the reverse of broadcasting `shape` up to grad's)."""
    if tuple(grad.shape) == tuple(shape):
        return grad
    return grad.sum_to_size(shape)  # type: ignore[attr-defined,no-any-return]


def zeros_like(tensor: Tensor) -> Tensor:
    """A tensor of zeros with `tensor`'s shape and dtype (not part of any graph)."""
    return Tensor(np.zeros_like(tensor._data))


def _to_copy_backward(grad: Tensor, self_options: dtype) -> Tensor:
    """Gradient of a dtype conversion: convert back (dropping an imaginary part)."""
    if grad.is_complex() and not self_options.is_complex:
        grad = real(grad)
    return grad._to_copy(dtype=self_options)  # type: ignore[attr-defined,no-any-return]


def scalar_conj(scalar: Number) -> Number:
    """The conjugate of a Scalar argument (PyTorch's ``Scalar::conj``)."""
    return scalar.conjugate() if isinstance(scalar, complex) else scalar


def _zeros(shape: Sequence[int], dtype: dtype) -> Tensor:
    return Tensor(np.zeros(tuple(shape), dtype.numpy))


def cat_tensors_backward(
    grad: Tensor | None,
    sizes: Sequence[tuple[int, ...]],
    dtypes: Sequence[dtype],
    dim: int,
) -> list[Tensor | None]:
    """Split the gradient of `cat` back into one piece per input."""
    if grad is None:
        return [None] * len(sizes)
    dim = _wrap_dim(dim, grad.dim())
    pieces: list[Tensor | None] = []
    start = 0
    for shape, input_dtype in zip(sizes, dtypes):
        if shape == (0,):  # PyTorch skips legacy empty 1-d inputs
            pieces.append(_zeros(shape, input_dtype))
            continue
        length = shape[dim]
        pieces.append(handle_r_to_c(input_dtype, grad.narrow(dim, start, length)))  # type: ignore[attr-defined]
        start += length
    return pieces


def stack_tensors_backward(
    grad: Tensor | None, dim: int, dtypes: Sequence[dtype]
) -> list[Tensor | None]:
    """One slice of the gradient of `stack` per input."""
    if grad is None:
        return [None] * len(dtypes)
    slices = grad.unbind(dim)  # type: ignore[attr-defined]
    return [handle_r_to_c(d, g) for d, g in zip(dtypes, slices)]


def split_with_sizes_backward(
    grads: Sequence[Tensor | None],
    split_sizes: Sequence[int],
    dim: int,
    sizes: tuple[int, ...],
    options: dtype,
) -> Tensor:
    """Concatenate the pieces' gradients; a piece without one contributes zeros."""
    dim = _wrap_dim(dim, len(sizes))
    filled = []
    for grad, length in zip(grads, split_sizes):
        if grad is None:
            shape = list(sizes)
            shape[dim] = length
            grad = _zeros(shape, options)
        filled.append(grad)
    return cat(filled, dim)  # type: ignore[no-any-return]


def split_backward(
    grads: Sequence[Tensor | None],
    split_size: int,
    dim: int,
    sizes: tuple[int, ...],
    options: dtype,
) -> Tensor:
    dim = _wrap_dim(dim, len(sizes))
    size = sizes[dim]
    lengths = [min(split_size, size - start) for start in range(0, size, split_size)] or [0]
    return split_with_sizes_backward(grads, lengths, dim, sizes, options)


def unbind_backward(grads: Sequence[Tensor | None], dim: int) -> Tensor:
    """Stack the slices' gradients; a slice without one contributes zeros."""
    defined = next((g for g in grads if g is not None), None)
    assert defined is not None, "the engine only runs a node that received a gradient"
    filled = [g if g is not None else _zeros(defined.shape, defined.dtype) for g in grads]
    return stack(filled, dim)  # type: ignore[no-any-return]


def unsqueeze_to(grad: Tensor, *args: Any) -> Tensor:
    """`unsqueeze_to(grad, sizes)` or `unsqueeze_to(grad, dim, sizes)`: put back the
    size-1 dimensions that squeeze removed."""
    sizes = args[-1]
    return grad.reshape(sizes)  # type: ignore[attr-defined,no-any-return]


def slice_backward_wrapper(
    grad: Tensor,
    input_sizes: tuple[int, ...],
    dim: int,
    start: int | None,
    end: int | None,
    step: int,
) -> Tensor:
    """slice_backward with None bounds filled in, as PyTorch's wrapper does."""
    return slice_backward(  # type: ignore[no-any-return]
        grad, input_sizes, dim, 0 if start is None else start, end if end is not None else 2**63 - 1, step
    )


def sum_backward(
    grad: Tensor, sizes: tuple[int, ...], dims: Sequence[int] | None, keepdim: bool
) -> Tensor:
    """Broadcast the gradient of a sum back over the summed dimensions."""
    if not keepdim and len(sizes) > 0:
        if dims is None or len(dims) == 0:
            return grad.expand(sizes)  # type: ignore[attr-defined,no-any-return]
        for dim in sorted(_wrap_dim(d, len(sizes)) for d in dims):
            grad = grad.unsqueeze(dim)  # type: ignore[attr-defined]
    return grad.expand(sizes)  # type: ignore[attr-defined,no-any-return]


def mean_backward(
    grad: Tensor,
    sizes: tuple[int, ...],
    dims: Sequence[int] | None,
    numel: int,
    keepdim: bool,
) -> Tensor:
    """The gradient of a mean: the sum's, divided by how many were averaged."""
    if dims is None or len(dims) == 0 or len(sizes) == 0:
        count = numel
    else:
        count = int(np.prod([sizes[_wrap_dim(d, len(sizes))] for d in dims]))
    return sum_backward(grad, sizes, dims, keepdim) * (1.0 / count if count else float("nan"))


# ---- batch A: unary elementwise ----
# (functions of this group go here; add their names with `__all__ += [...]`)
#
__all__ += [
    "is_grad_enabled",
    "log1p_backward",
    "sgn_backward",
    "angle_backward",
    "gelu_double_backward",
    "infinitely_differentiable_silu_backward",
]

def log1p_backward(grad: Tensor, self: Tensor) -> Tensor:
    """grad / (self.conj() + 1)."""
    return grad / (self.conj() + 1)  # type: ignore[attr-defined,no-any-return]


def sgn_backward(x: Tensor, gx: Tensor, sgn: Tensor) -> Tensor:
    """The derivative of sgn (z / |z|), which is not holomorphic: for complex x,
    (gx - sgn^2 * conj(gx)) / (2 |x|), 0 where x == 0; zero for real x."""
    if x.is_complex():
        magnitude = x.abs()  # type: ignore[attr-defined]
        value = (gx - (sgn * sgn) * gx.conj()) / (2.0 * magnitude)  # type: ignore[attr-defined]
        return value.masked_fill(magnitude == 0, 0)  # type: ignore[no-any-return]
    return _zeros(sgn.shape, sgn.dtype)  # PyTorch's _efficientzerotensor


def angle_backward(grad: Tensor, self: Tensor) -> Tensor:
    """The derivative of angle: grad * i * z / |z|^2 for complex z (0 at z == 0),
    zero for real input."""
    if self.is_complex():
        value = grad * self / self.abs().pow(2) * 1j  # type: ignore[attr-defined]
        return value.masked_fill(self == 0, 0)  # type: ignore[no-any-return]
    return zeros_like(self)


def gelu_double_backward(ggI: Tensor, gO: Tensor, input: Tensor, approximate: str) -> Tensor:
    """The derivative of gelu_backward(gO, input) with respect to input, applied to
    ggI: ggI * gO * gelu''(input)."""
    if approximate == "tanh":
        beta = 2.0**0.5 * _M_2_SQRTPI * 0.5
        kappa = 0.044715
        inner = beta * (input + kappa * input.pow(3))  # type: ignore[attr-defined]
        tanh_inner = inner.tanh()
        sech_inner = inner.cosh().reciprocal()

        f = 0.5 * input
        g = 1 - tanh_inner * tanh_inner
        h = beta * (1 + 3 * kappa * input * input)

        f_prime_gh = 0.5 * g * h

        g_prime = (2 * sech_inner) * (-sech_inner * tanh_inner) * h
        g_prime_fh = f * h * g_prime

        h_prime = 6 * kappa * input * beta
        h_prime_fg = f * g * h_prime

        # left derivative f'gh; right derivative f'gh + g'fh + h'fg
        return ggI * gO * (f_prime_gh + f_prime_gh + g_prime_fh + h_prime_fg)  # type: ignore[no-any-return]
    beta = _M_2_SQRTPI * _M_SQRT1_2 * 0.5
    input_sq = input * input
    pdf = beta * (-0.5 * input_sq).exp()  # type: ignore[attr-defined]
    dgrad_dinput = 2 * pdf - input_sq * pdf
    return ggI * gO * dgrad_dinput  # type: ignore[no-any-return]


def infinitely_differentiable_silu_backward(grad_output: Tensor, input: Tensor) -> Tensor:
    """grad_output * silu'(input), written with operators so it can be differentiated."""
    sigmoid = input.sigmoid()  # type: ignore[attr-defined]
    return grad_output * sigmoid * (1.0 + input * (1.0 - sigmoid))  # type: ignore[no-any-return]


_M_SQRT1_2 = 0.70710678118654752440  # 1/sqrt(2)
_M_2_SQRTPI = 1.12837916709551257390  # 2/sqrt(pi)



# ---- batch B: binary, comparison and logical ----
# (functions of this group go here; add their names with `__all__ += [...]`)
#


__all__ += ["pow_backward_self", "pow_backward_exponent"]


def pow_backward_self(grad: Tensor, self: Tensor, exponent: Tensor) -> Tensor | None:
    """d(self ** exponent)/d(self) for a tensor exponent (zero where exponent == 0)."""
    derivative = grad * (exponent * self ** (exponent - 1)).conj()  # type: ignore[attr-defined]
    return handle_r_to_c(self, where(exponent == 0, 0.0, derivative))


def _nonnegative_real(exponent: Tensor) -> Tensor:
    if exponent.is_complex():
        return (imag(exponent) == 0) & (real(exponent) >= 0)  # type: ignore[no-any-return]
    return exponent >= 0


def pow_backward_exponent(
    grad: Tensor, self: Tensor | Number, exponent: Tensor, result: Tensor
) -> Tensor | None:
    """d(self ** exponent)/d(exponent) = result * log(self), taken as 0 where the base
    is 0 and the exponent a nonnegative real (PyTorch's convention)."""
    if isinstance(self, Tensor):
        derivative = (result * self.log()).conj()  # type: ignore[attr-defined]
        zero = (self == 0) & _nonnegative_real(exponent)
        return handle_r_to_c(exponent, grad * where(zero, 0.0, derivative))
    base = complex(self) if exponent.is_complex() and not isinstance(self, complex) else self
    derivative = (result * _scalar_log(base)).conj()  # type: ignore[attr-defined]
    if base == 0:
        derivative = where(_nonnegative_real(exponent), 0.0, derivative)
    return handle_r_to_c(exponent, grad * derivative)


def _scalar_log(value: Number) -> Number:
    """log of a Scalar base; the log of 0 is -inf (the case handled by `where` above)."""
    import cmath
    import math

    if isinstance(value, complex):
        return cmath.log(value) if value != 0 else complex(-math.inf, 0)
    if value > 0:
        return math.log(value)
    return -math.inf if value == 0 else math.nan  # a negative real base: nan (C's log)


__all__ += [
    "div_tensor_self_backward",
    "div_tensor_other_backward",
    "atan2_backward",
    "clamp_backward",
    "clamp_backward_min_max",
]


def div_tensor_self_backward(
    grad: Tensor,
    other: Tensor | Number,
    self_st: dtype,
    rounding_mode: str | None = None,
) -> Tensor | None:
    """d(self / other)/d(self) applied to grad: grad / conj(other); zero when the
    quotient is rounded (its derivative is zero almost everywhere)."""
    if rounding_mode is not None:
        return _zeros(grad.shape, self_st)
    conj_other = other.conj() if isinstance(other, Tensor) else scalar_conj(other)  # type: ignore[attr-defined]
    return handle_r_to_c(self_st, grad / conj_other)


def div_tensor_other_backward(
    grad: Tensor, self: Tensor, other: Tensor, rounding_mode: str | None = None
) -> Tensor | None:
    """d(self / other)/d(other) applied to grad: -grad * conj(self / other / other)."""
    if rounding_mode is not None:
        return _zeros(grad.shape, other.dtype)
    result = -grad * ((self / other) / other).conj()  # type: ignore[attr-defined]
    return handle_r_to_c(other, result)


def atan2_backward(
    grad: Tensor | None, self: Tensor, other: Tensor, output_mask: Sequence[bool]
) -> tuple[Tensor | None, Tensor | None]:
    """Gradients of atan2(self, other): (other, -self) / (self^2 + other^2)."""
    if grad is None:
        return None, None
    recip = 1 / (self * self + other * other)
    return (
        grad * other * recip if output_mask[0] else None,
        grad * -self * recip if output_mask[1] else None,
    )


def clamp_backward(
    grad: Tensor,
    self: Tensor,
    min: Number | None,
    max: Number | None,
) -> Tensor:
    """grad where min <= self <= max, else zero (the subgradient 1 at the bounds)."""
    if max is not None and min is not None:
        return where((self >= min).logical_and(self <= max), grad, 0.0)  # type: ignore[attr-defined,no-any-return]
    if min is not None:
        return where(self >= min, grad, 0.0)  # type: ignore[no-any-return]
    if max is not None:
        return where(self <= max, grad, 0.0)  # type: ignore[no-any-return]
    return grad


def clamp_backward_min_max(
    grad: Tensor | None,
    self: Tensor,
    min: Tensor | None,
    max: Tensor | None,
    grad_input_mask: Sequence[bool],
) -> tuple[Tensor | None, Tensor | None]:
    """The gradients of clamp's Tensor bounds: each gets grad where it was the value
    taken (min when self < min, unless min > max; max when self > max or max < min)."""
    grad_min: Tensor | None = None
    grad_max: Tensor | None = None
    if grad is None:
        return grad_min, grad_max
    if max is not None and min is not None:
        if grad_input_mask[0]:
            grad_min = where((self < min).logical_and(min < max), grad, 0.0)  # type: ignore[attr-defined]
        if grad_input_mask[1]:
            grad_max = where((self > max).logical_or(max < min), grad, 0.0)  # type: ignore[attr-defined]
    elif min is not None and grad_input_mask[0]:
        grad_min = where(self < min, grad, 0.0)
    elif max is not None and grad_input_mask[1]:
        grad_max = where(self > max, grad, 0.0)
    return grad_min, grad_max


# ---- batch C: reductions, scans and indexing ----
# (functions of this group go here; add their names with `__all__ += [...]`)
#


__all__ += [
    "index_backward",
    "prod_backward",
    "restore_reduced_dims",
    "scale_grad_by_count",
    "evenly_distribute_backward",
    "logsumexp_backward",
    "var_backward",
    "std_backward",
    "cumsum_backward",
    "cumprod_backward",
    "softmax_double_backward",
    "repeat_backward",
    "masked_fill_backward",
    "reverse_list",
    "reverse_list_symint",
    "fmap_neg",
]


def _full(shape: Sequence[int], value: Number, dtype: dtype) -> Tensor:
    """A constant tensor (not part of any graph), as at::full / at::ones."""
    return Tensor(np.full(tuple(shape), value, dtype.numpy))


def _isnan(tensor: Tensor) -> Tensor:
    """NaN is the only value unequal to itself (eq is all this branch has of isnan)."""
    return tensor.eq(tensor).eq(False)  # type: ignore[attr-defined,no-any-return]


def _any_zero(tensor: Tensor) -> bool:
    """Whether any element is zero (PyTorch reads this off the data, as here)."""
    return bool(tensor.eq(0).sum().item())  # type: ignore[attr-defined]


def _unsqueeze_multiple(
    tensor: Tensor, dims: Sequence[int] | None, ndim: int
) -> Tensor:
    """Put back the (size-1) dims a reduction without keepdim removed."""
    if dims is not None and len(dims) == 0:
        return tensor
    wanted = range(ndim) if dims is None else sorted(_wrap_dim(d, ndim) for d in dims)
    for dim in wanted:
        tensor = tensor.unsqueeze(dim)  # type: ignore[attr-defined]
    return tensor


def _prod_safe_zeros_backward(grad: Tensor, inp: Tensor, dim: int) -> Tensor:
    """d prod / d x_i as the product of the others, by an exclusive cumprod from each
    side, which needs no division and so is right where inputs are zero."""
    if inp.numel() == 0:
        return grad.expand_as(inp)  # type: ignore[attr-defined,no-any-return]
    size = inp.shape[dim]
    if size == 1:
        return grad
    ones_size = list(inp.shape)
    ones_size[dim] = 1
    ones = _full(ones_size, 1, grad.dtype)
    exclusive_normal = cat([ones, inp.narrow(dim, 0, size - 1)], dim).cumprod(dim)  # type: ignore[attr-defined]
    narrow_reverse = inp.narrow(dim, 1, size - 1).flip([dim])  # type: ignore[attr-defined]
    exclusive_reverse = cat([ones, narrow_reverse], dim).cumprod(dim).flip([dim])
    return grad * (exclusive_normal * exclusive_reverse).conj()  # type: ignore[no-any-return]


def prod_backward(
    grad: Tensor,
    input: Tensor,
    result: Tensor,
    dim: int | None = None,
    keepdim: bool = False,
) -> Tensor:
    """The gradient of prod (over everything, or over `dim`): result / input where no
    input is zero, else the product of the other elements."""
    if input.dim() == 0:
        return grad
    if dim is None:
        zeros = int(input.eq(0).sum().item())  # type: ignore[attr-defined]
        if zeros == 0:
            return grad * result.div(input).conj()  # type: ignore[attr-defined,no-any-return]
        if not is_grad_enabled() and zeros > 1:
            return zeros_like(input)
        flat = input.contiguous().view(-1)  # type: ignore[attr-defined]
        return _prod_safe_zeros_backward(grad, flat, 0).view_as(input)  # type: ignore[attr-defined,no-any-return]
    dim = _wrap_dim(dim, input.dim())
    if not keepdim:
        grad = grad.unsqueeze(dim)  # type: ignore[attr-defined]
        result = result.unsqueeze(dim)  # type: ignore[attr-defined]
    if not _any_zero(input):
        return grad * result.div(input).conj()  # type: ignore[attr-defined,no-any-return]
    return _prod_safe_zeros_backward(grad, input, dim)


def restore_reduced_dims(output: Tensor, dims: Sequence[int], keepdim: bool) -> Tensor:
    """`output` of a reduction over `dims` without keepdim, reshaped as with keepdim."""
    if keepdim:
        return output
    total = output.dim() + len(dims)
    target = [0] * total
    for dim in dims:
        target[dim + total if dim < 0 else dim] = 1
    position = 0
    for size in output.shape:
        while target[position] > 0:
            position += 1
        target[position] = size
        position += 1
    return output.reshape(target)  # type: ignore[attr-defined,no-any-return]


def scale_grad_by_count(grad: Tensor, mask: Tensor, dims: Sequence[int]) -> Tensor:
    """Share the gradient evenly among the positions `mask` marks in each reduced slice."""
    return grad.div(mask.sum(dims, True)) * mask  # type: ignore[attr-defined,no-any-return]


def evenly_distribute_backward(grad: Tensor, input: Tensor, value: Tensor) -> Tensor:
    """The gradient of a full max/min: split evenly among every element equal to the
    result (every NaN when the result is NaN)."""
    mask = _isnan(input) if bool(_isnan(value).item()) else input.eq(value)  # type: ignore[attr-defined]
    zeros = _full(input.shape, 0, input.dtype)
    return zeros.masked_fill(mask, grad.div(mask.sum()))  # type: ignore[attr-defined,union-attr,no-any-return]


def logsumexp_backward(
    grad: Tensor, self: Tensor, result: Tensor, dim: Sequence[int], keepdim: bool
) -> Tensor:
    """grad * softmax(self) over the reduced dims."""
    if not keepdim and self.dim() != 0:
        grad = _unsqueeze_multiple(grad, dim, self.dim())
        result = _unsqueeze_multiple(result, dim, self.dim())
    return grad * (self - result).exp().conj()  # type: ignore[attr-defined,no-any-return]


def _double_division(numerator: float, denominator: float) -> float:
    """C++ double division: by zero gives inf (or nan for 0 / 0), never an error."""
    if denominator == 0:
        return float("nan") if numerator == 0 else float("inf") * numerator
    return numerator / denominator


def var_backward(
    grad: Tensor,
    self: Tensor,
    dim: Sequence[int] | None,
    correction: Number | None,
    keepdim: bool,
) -> Tensor:
    """The gradient of var: 2 / (n - correction) * grad * (self - mean)."""
    correction = 1.0 if correction is None else float(correction.real)
    if self.dim() == 0 or dim is None:
        dof = self.numel() - correction
        if dof <= 0:
            # 2 / dof is infinite: nan where self == mean (inf * 0), else inf.
            where = _full(self.shape, float("inf"), grad.dtype.to_real())
            return grad * where.masked_fill(self.eq(self.mean()), float("nan"))  # type: ignore[attr-defined,no-any-return]
        return _double_division(2.0, dof) * grad * (self - self.mean())  # type: ignore[attr-defined,no-any-return]
    if not keepdim and self.dim() > 1:
        grad = _unsqueeze_multiple(grad, dim, self.dim())
    count = 1
    for d in dim:
        count *= self.shape[_wrap_dim(d, self.dim())]
    scale = _double_division(2.0, count - correction)
    return scale * grad * (self - self.mean(dim, True))  # type: ignore[attr-defined,no-any-return]


def std_backward(
    result: Tensor,
    grad: Tensor,
    self: Tensor,
    dim: Sequence[int] | None,
    correction: Number | None,
    keepdim: bool,
) -> Tensor:
    """The gradient of std = sqrt(var): var's, scaled by 1 / (2 std) (0 where std is 0)."""
    grad_var = grad.div(result * 2).masked_fill(result.eq(0), 0)  # type: ignore[attr-defined]
    return var_backward(grad_var, self, dim, correction, keepdim)


def _reversed_cumsum(tensor: Tensor, dim: int) -> Tensor:
    return tensor.flip([dim]).cumsum(dim).flip([dim])  # type: ignore[attr-defined,no-any-return]


def cumsum_backward(grad: Tensor, dim: int) -> Tensor:
    """The gradient of cumsum: a cumsum from the other end."""
    if grad.numel() <= 1 or grad.shape[_wrap_dim(dim, grad.dim())] == 1:
        return grad
    return _reversed_cumsum(grad, dim)


def cumprod_backward(grad: Tensor, input: Tensor, dim: int, output: Tensor) -> Tensor:
    """The gradient of cumprod. Without zeros in the input it is a reversed cumsum of
    output * grad divided by the input; with zeros, each input's gradient is built from
    the products that omit it (PyTorch's differentiable O(n^2) formulation, which it
    uses under grad mode; its O(n) shortcut otherwise gives the same values)."""
    if input.numel() <= 1:
        return grad
    dim = _wrap_dim(dim, input.dim())
    dim_size = input.shape[dim]
    if dim_size == 1:
        return grad
    input_conj = input.conj()  # type: ignore[attr-defined]
    output_conj = output.conj()  # type: ignore[attr-defined]
    if not _any_zero(input):
        return _reversed_cumsum(output_conj * grad, dim).div(input_conj)  # type: ignore[attr-defined,no-any-return]
    ones_size = list(input.shape)
    ones_size[dim] = 1
    ones = _full(ones_size, 1, grad.dtype)
    slices = []
    for k in range(dim_size):
        if k == 0:
            omitted = cat([ones, input_conj.slice(dim, 1).cumprod(dim)], dim)
        elif k == dim_size - 1:
            omitted = input_conj.slice(dim, 0, k).prod(dim, True)
        else:
            until_k = input_conj.slice(dim, 0, k).prod(dim, True)
            from_k_plus_1 = input_conj.slice(dim, k + 1).cumprod(dim)
            omitted = cat(
                [until_k, until_k.expand_as(from_k_plus_1) * from_k_plus_1], dim
            )
        slices.append((grad.slice(dim, k) * omitted).sum(dim))  # type: ignore[attr-defined]
    return stack(slices, dim)  # type: ignore[no-any-return]


def softmax_double_backward(
    grad: Tensor, grad_output: Tensor, dim: int, output: Tensor
) -> Tensor:
    """The gradient of _softmax_backward_data with respect to the softmax output."""
    return (  # type: ignore[no-any-return]
        grad_output * grad
        - (output * grad_output).sum(dim, True) * grad  # type: ignore[attr-defined]
        - grad_output * (output * grad).sum(dim, True)  # type: ignore[attr-defined]
    )


def repeat_backward(
    grad: Tensor, repeats: Sequence[int], input_shape: Sequence[int]
) -> Tensor:
    """Sum the gradient of `repeat` over the copies: one reshape, one sum."""
    if 0 in repeats:
        return _full(input_shape, 0, grad.dtype)
    input_dims = len(input_shape)
    num_unsqueezed = grad.dim() - input_dims
    for _ in range(num_unsqueezed):
        grad = grad.sum(0, False)  # type: ignore[attr-defined]
    grad_size: list[int] = []
    sum_dims: list[int] = []
    for dim in range(input_dims):
        repeat = repeats[dim + num_unsqueezed]
        if repeat != 1:
            grad_size.append(repeat)
            sum_dims.append(len(grad_size) - 1)
        grad_size.append(input_shape[dim])
    if sum_dims:
        grad = grad.reshape(grad_size).sum(sum_dims)  # type: ignore[attr-defined]
    return grad


def masked_fill_backward(grad: Tensor, mask: Tensor) -> Tensor:
    """The gradient of masked_fill's value: the sum of grad where mask is set."""
    return grad.masked_fill(mask.eq(False), 0).sum()  # type: ignore[attr-defined,no-any-return]


def reverse_list(values: Sequence[int]) -> tuple[int, ...]:
    return tuple(reversed(values))


def reverse_list_symint(values: Sequence[int]) -> tuple[int, ...]:
    return tuple(reversed(values))


def fmap_neg(values: Sequence[int]) -> tuple[int, ...]:
    """PyTorch's `fmap(values, [](SymInt i) { return -i; })`."""
    return tuple(-value for value in values)


def index_backward(
    zeros: Tensor, indices: Sequence[Tensor | None], grad: Tensor
) -> Tensor:
    """The gradient of `self[indices]`: grad added into zeros of self's shape at the
    indexed places (an element indexed twice gets both gradients)."""
    return zeros.index_put(indices, grad, True)  # type: ignore[attr-defined,no-any-return]


# ---- batch D: linear algebra and losses ----
# (functions of this group go here; add their names with `__all__ += [...]`)
#

__all__ += [
    "mm_mat1_backward",
    "mm_mat2_backward",
    "apply_loss_reduction",
    "mse_loss_double_backward",
    "binary_cross_entropy_target_backward",
    "binary_cross_entropy_double_backward",
    "binary_cross_entropy_double_backward_target",
    "binary_cross_entropy_double_backward_grad_output",
]

_REDUCTION_MEAN, _REDUCTION_SUM = 1, 2  # at::Reduction (None is 0)
_BCE_EPS = 1e-12  # binary_cross_entropy's epsilon, for all dtypes (as PyTorch)


def mm_mat1_backward(
    grad: Tensor, mat2: Tensor, mat1_sizes: tuple[int, ...], alpha: Number
) -> Tensor:
    """d(alpha * mat1 @ mat2)/d(mat1) applied to grad: grad @ mat2^H * conj(alpha).

    PyTorch's helper also takes mat1's strides and layout, only to return a
    column-major gradient for a column-major mat1; the values are the same."""
    return maybe_multiply(grad.mm(mat2.t().conj()), scalar_conj(alpha))  # type: ignore[attr-defined]


def mm_mat2_backward(
    grad: Tensor, mat1: Tensor, mat2_sizes: tuple[int, ...], alpha: Number
) -> Tensor:
    """d(alpha * mat1 @ mat2)/d(mat2) applied to grad: mat1^H @ grad * conj(alpha)."""
    return maybe_multiply(mat1.t().conj().mm(grad), scalar_conj(alpha))  # type: ignore[attr-defined]


def apply_loss_reduction(unreduced: Tensor, reduction: int) -> Tensor:
    """The mean, the sum, or the loss unreduced, as `reduction` says."""
    if reduction == _REDUCTION_MEAN:
        return unreduced.mean()  # type: ignore[attr-defined,no-any-return]
    if reduction == _REDUCTION_SUM:
        return unreduced.sum()  # type: ignore[attr-defined,no-any-return]
    return unreduced


def _divide_by_numel(tensor: Tensor, numel: int) -> Tensor:
    """`tensor / numel` (a mean's scale; an empty input gives nan as 0/0 does)."""
    return tensor * (1.0 / numel if numel else float("nan"))


def mse_loss_double_backward(grad: Tensor, input: Tensor, reduction: int) -> Tensor:
    """The derivative of mse_loss_backward with respect to self: 2 * grad (/ numel)."""
    grad_input = 2 * grad
    if reduction == _REDUCTION_MEAN:
        grad_input = _divide_by_numel(grad_input, input.numel())
    return grad_input


def binary_cross_entropy_target_backward(
    grad: Tensor,
    self: Tensor,
    target: Tensor,
    weight: Tensor | None,
    reduction: int,
) -> Tensor:
    """d(binary_cross_entropy)/d(target) applied to grad: -logit(self) * grad, with
    logit(p) = log(p) - log1p(-p) (gradgen has no logit operator)."""
    logit = self.log() - self.neg().log1p()  # type: ignore[attr-defined]
    grad_target = logit.neg() * grad
    if weight is not None:
        grad_target = grad_target * weight
    if reduction == _REDUCTION_MEAN:
        grad_target = _divide_by_numel(grad_target, target.numel())
    return grad_target  # type: ignore[no-any-return]


def binary_cross_entropy_double_backward(
    grad_output: Tensor,
    grad: Tensor,
    input: Tensor,
    target: Tensor,
    weight: Tensor | None,
    reduction: int,
) -> Tensor:
    """The derivative of binary_cross_entropy_backward with respect to self."""
    eps = _BCE_EPS
    input_plus_eps = input + eps
    one_minus_input_plus_eps = 1 - input + eps
    numerator = input * input - 2 * input * target + target
    denominator = input_plus_eps.pow(2) * one_minus_input_plus_eps.pow(2)  # type: ignore[attr-defined]
    grad_input = numerator * denominator.pow(-1) * (grad * grad_output)
    if weight is not None:
        grad_input = grad_input * weight
    if reduction == _REDUCTION_MEAN:
        return _divide_by_numel(grad_input, input.numel())
    return grad_input  # type: ignore[no-any-return]


def binary_cross_entropy_double_backward_grad_output(
    grad: Tensor,
    input: Tensor,
    target: Tensor,
    weight: Tensor | None,
    reduction: int,
) -> Tensor:
    """The derivative of binary_cross_entropy_backward with respect to grad_output."""
    eps = _BCE_EPS
    grad_grad_output = (input - target) * ((input + eps) * (1 - input + eps)).pow(-1) * grad  # type: ignore[attr-defined]
    if weight is not None:
        grad_grad_output = grad_grad_output * weight
    if reduction == _REDUCTION_MEAN:
        return _divide_by_numel(grad_grad_output, input.numel())
    return grad_grad_output  # type: ignore[no-any-return]


def binary_cross_entropy_double_backward_target(
    grad: Tensor,
    grad_output: Tensor,
    self: Tensor,
    target: Tensor,
    weight: Tensor | None,
    reduction: int,
) -> Tensor:
    """The derivative of binary_cross_entropy_backward with respect to target:
    -grad * grad_output / max((1 - self) * self, eps).

    PyTorch clamps the denominator in place under no_grad, so the clamp changes its
    value but not its gradient; adding the (constant) difference does the same."""
    result = -grad * grad_output
    if weight is not None:
        result = result * weight
    denominator = (1 - self) * self
    clamped = np.maximum(denominator._data, _BCE_EPS)
    denominator = denominator + Tensor(clamped - denominator._data)
    result = result * denominator.pow(-1)  # type: ignore[attr-defined]
    if reduction == _REDUCTION_MEAN:
        result = _divide_by_numel(result, target.numel())
    return result


# ---- batch F: activations, losses, normalization, embedding ----
# (functions of this group go here; add their names with `__all__ += [...]`)
#

__all__ += [
    "elu_double_backward",
    "softplus_double_backward",
    "log_sigmoid_double_backward",
    "infinitely_differentiable_mish_backward",
    "smooth_l1_loss_double_backward",
    "huber_loss_double_backward",
    "huber_loss_double_backward_grad_output",
    "binary_cross_entropy_with_logits_backward",
    "binary_cross_entropy_with_logits_target_backward",
    "layer_norm_jvp",
    "layer_norm_double_backward",
    "embedding_dense_double_backward",
]

from .generated.ops import (  # noqa: E402
    elu_backward as _elu_backward,
    huber_loss_backward as _huber_loss_backward,
    log_sigmoid as _log_sigmoid,
    sigmoid_backward as _sigmoid_backward,
    softplus as _softplus,
)


def elu_double_backward(
    grad: Tensor,
    grad_output: Tensor,
    alpha: Number,
    scale: Number,
    input_scale: Number,
    is_result: bool,
    self_or_result: Tensor,
) -> Tensor:
    """The derivative of elu_backward with respect to self_or_result, applied to grad:
    where the input is negative, elu'' = input_scale * elu' (from the input) or
    d(input_scale * (y + alpha * scale))/dy = input_scale (from the result)."""
    negative: Tensor = self_or_result < 0
    scaled = grad * grad_output * input_scale
    if is_result:
        return scaled * negative
    derivative: Tensor = _elu_backward(
        scaled, alpha, scale, input_scale, is_result, self_or_result
    )
    return derivative * negative


def softplus_double_backward(
    grad: Tensor, input: Tensor, beta: Number, threshold: Number
) -> Tensor:
    """d(sigmoid(beta * x))/dx applied to grad: beta * sigmoid'(beta * x), 0 where
    beta * x is past the threshold (softplus is x there)."""
    x = input * beta
    return _sigmoid_backward(grad, x.sigmoid()) * (x < threshold) * beta  # type: ignore[attr-defined,no-any-return]


def log_sigmoid_double_backward(grad: Tensor, input: Tensor) -> Tensor:
    """d(1 - sigmoid(x))/dx applied to grad: (sigmoid(x) - 1) * sigmoid(x) * grad."""
    z = input.sigmoid()  # type: ignore[attr-defined]
    return grad * (z - 1) * z  # type: ignore[no-any-return]


def infinitely_differentiable_mish_backward(
    grad_output: Tensor, input: Tensor
) -> Tensor:
    """grad_output * mish'(input) with operators (so it can be differentiated):
    tanh(softplus(x)) + x * sigmoid(x) * (1 - tanh(softplus(x))^2)."""
    sigmoid = input.sigmoid()  # type: ignore[attr-defined]
    tanh_softplus = _softplus(input).tanh()
    return grad_output * (  # type: ignore[no-any-return]
        tanh_softplus + input * sigmoid * (1 - tanh_softplus * tanh_softplus)
    )


def smooth_l1_loss_double_backward(
    grad: Tensor, input: Tensor, target: Tensor, reduction: int, beta: float
) -> Tensor:
    """The derivative of smooth_l1_loss_backward with respect to self: grad / beta
    where |self - target| < beta, else 0 (all 0 for beta == 0), / numel for the mean."""
    if beta == 0:
        return _zeros(grad.shape, grad.dtype)
    inside = (input - target).abs() < beta  # type: ignore[attr-defined]
    grad_input = grad * inside * (1.0 / beta)
    if reduction == _REDUCTION_MEAN:
        grad_input = _divide_by_numel(grad_input, input.numel())
    return grad_input  # type: ignore[no-any-return]


def huber_loss_double_backward(
    grad: Tensor, input: Tensor, target: Tensor, reduction: int, delta: float
) -> Tensor:
    """The derivative of huber_loss_backward with respect to self: grad where
    |self - target| < delta, else 0, / numel for the mean."""
    grad_input = grad * ((input - target).abs() < delta)  # type: ignore[attr-defined]
    if reduction == _REDUCTION_MEAN:
        grad_input = _divide_by_numel(grad_input, input.numel())
    return grad_input  # type: ignore[no-any-return]


def huber_loss_double_backward_grad_output(
    grad: Tensor,
    grad_output: Tensor,
    input: Tensor,
    target: Tensor,
    reduction: int,
    delta: float,
) -> Tensor:
    """The derivative of huber_loss_backward with respect to grad_output: the backward
    applied to grad itself (unreduced), or, for a reduced (0-d) grad_output, the sum of
    grad times the backward of a unit grad_output."""
    if reduction == 0:
        return _huber_loss_backward(grad, input, target, reduction, delta)  # type: ignore[no-any-return]
    ones = Tensor(np.ones_like(grad_output._data))
    unit = _huber_loss_backward(ones, input, target, reduction, delta)
    return (unit * grad).sum()  # type: ignore[no-any-return]


def binary_cross_entropy_with_logits_backward(
    grad: Tensor,
    input: Tensor,
    target: Tensor,
    weight: Tensor | None,
    pos_weight: Tensor | None,
    reduction: int,
) -> Tensor:
    """d(binary_cross_entropy_with_logits)/d(self) applied to grad: sigmoid(x) - y, or
    with pos_weight p: (p * y + 1 - y) * sigmoid(x) - p * y; times weight, / numel
    of self for the mean."""
    if pos_weight is not None:
        t = pos_weight * target
        grad_input = (t + 1 - target) * input.sigmoid() - t  # type: ignore[attr-defined]
    else:
        grad_input = input.sigmoid() - target  # type: ignore[attr-defined]
    grad_input = grad_input * grad
    if weight is not None:
        grad_input = grad_input * weight
    if reduction == _REDUCTION_MEAN:
        grad_input = _divide_by_numel(grad_input, input.numel())
    return grad_input  # type: ignore[no-any-return]


def binary_cross_entropy_with_logits_target_backward(
    grad_output: Tensor,
    self: Tensor,
    target: Tensor,
    weight: Tensor | None,
    pos_weight: Tensor | None,
    reduction: int,
) -> Tensor:
    """d(binary_cross_entropy_with_logits)/d(target) applied to grad_output: -x, or
    with pos_weight p: log_sigmoid(-x) - p * log_sigmoid(x); times weight, / numel of
    target for the mean."""
    if pos_weight is not None:
        grad_target = _log_sigmoid(-self) - _log_sigmoid(self) * pos_weight
    else:
        grad_target = -self
    grad_target = grad_target * grad_output
    if weight is not None:
        grad_target = grad_target * weight
    if reduction == _REDUCTION_MEAN:
        grad_target = _divide_by_numel(grad_target, target.numel())
    return grad_target  # type: ignore[no-any-return]


def _normalized_dims(input: Tensor, normalized_shape: Sequence[int]) -> tuple[int, ...]:
    return tuple(range(input.dim() - len(normalized_shape), input.dim()))


def layer_norm_jvp(
    input_p: Tensor,
    input_t: Tensor,
    weight_p: Tensor | None,
    weight_t: Tensor | None,
    bias_p: Tensor | None,
    bias_t: Tensor | None,
    saved_mean: Tensor,
    saved_invstd: Tensor,
    normalized_shape: Sequence[int],
) -> Tensor:
    """The tangent of native_layer_norm's output. With x_hat = (x - mean) * rstd, the
    tangent of x_hat is rstd * (t - mean(t) - x_hat * mean(x_hat * t)) over the
    normalized dimensions; the affine part adds x_hat * weight_t + bias_t."""
    dims = _normalized_dims(input_p, normalized_shape)
    x_hat = (input_p - saved_mean) * saved_invstd
    x_hat_t = saved_invstd * (
        input_t
        - input_t.mean(dims, True)  # type: ignore[attr-defined]
        - x_hat * (x_hat * input_t).mean(dims, True)  # type: ignore[attr-defined]
    )
    out_t = x_hat_t if weight_p is None else x_hat_t * weight_p
    if weight_t is not None:
        out_t = out_t + x_hat * weight_t
    if bias_t is not None:
        out_t = out_t + bias_t
    return out_t  # type: ignore[no-any-return]


def layer_norm_double_backward(
    input: Tensor,
    gamma: Tensor | None,
    ggI: Tensor | None,
    ggG: Tensor | None,
    ggB: Tensor | None,
    gO: Tensor,
    save_mean: Tensor,
    save_invstd: Tensor,
    normalized_shape: Sequence[int],
    output_mask: Sequence[bool],
) -> tuple[Tensor | None, Tensor | None, Tensor | None]:
    """The gradients of native_layer_norm_backward (grad_input, grad_weight, grad_bias)
    for input, weight and grad_out, given the gradients ggI, ggG, ggB of its outputs
    (None when an output got none).

    Per row, with m() the mean over the normalized dimensions, r = rstd, x_hat =
    (x - mean) * r and a = gO * gamma, grad_input = r * (a - m(a) - x_hat * m(a * x_hat)),
    grad_weight = sum over rows of gO * x_hat, grad_bias = sum over rows of gO. mean
    and rstd are functions of x, differentiated as such: under grad mode (a third
    derivative) they are recomputed from `input` with operators, with the eps the saved
    rstd implies, so that the result is a differentiable function of `input`."""
    dims = _normalized_dims(input, normalized_shape)
    rows = tuple(range(input.dim() - len(normalized_shape)))
    if is_grad_enabled():
        x = input._data.astype(np.float64)
        variance = ((x - x.mean(axis=dims, keepdims=True)) ** 2).mean(
            axis=dims, keepdims=True
        )
        eps = save_invstd._data.astype(np.float64) ** -2 - variance
        mean = input.mean(dims, True)  # type: ignore[attr-defined]
        centered = input - mean
        invstd = (
            (centered * centered).mean(dims, True)
            + Tensor(eps.astype(input._data.dtype))
        ).rsqrt()
    else:
        mean, invstd = save_mean, save_invstd
    x_hat = (input - mean) * invstd

    def m(t: Tensor) -> Tensor:
        return t.mean(dims, True)  # type: ignore[attr-defined,no-any-return]

    def row_sum(t: Tensor) -> Tensor:
        return t.sum(rows) if rows else t  # type: ignore[attr-defined]

    a = gO if gamma is None else gO * gamma
    g_input: Tensor | None = None
    g_gamma: Tensor | None = None
    gg_out: Tensor | None = None
    if ggI is not None:
        # grad_input = r * P(a), P self-adjoint: the gradient for a is r * P(ggI).
        g_a = invstd * (ggI - m(ggI) - x_hat * m(x_hat * ggI))
        gg_out = g_a if gamma is None else g_a * gamma
        if gamma is not None:
            g_gamma = row_sum(g_a * gO)
        # grad_input's dependence on x through mean and r (a fixed).
        a_x_hat, c_x_hat = m(a * x_hat), m(ggI * x_hat)
        g_input = (invstd * invstd) * (
            -x_hat * (m(ggI * a) - m(ggI) * m(a))
            + 3 * x_hat * a_x_hat * c_x_hat
            - a_x_hat * (ggI - m(ggI))
            - (a - m(a)) * c_x_hat
        )
    if ggG is not None:
        # grad_weight = sum of gO * x_hat: through x_hat for x, directly for gO.
        c = gO * ggG
        through_x_hat = invstd * (c - m(c) - x_hat * m(c * x_hat))
        g_input = through_x_hat if g_input is None else g_input + through_x_hat
        term = ggG * x_hat
        gg_out = term if gg_out is None else gg_out + term
    if ggB is not None:
        term = ggB.expand(tuple(gO.shape))  # type: ignore[attr-defined]
        gg_out = term if gg_out is None else gg_out + term
    return (
        g_input if output_mask[0] else None,
        g_gamma if output_mask[1] else None,
        gg_out if output_mask[2] else None,
    )


def embedding_dense_double_backward(
    grad: Tensor, indices: Tensor, padding_idx: int, scale_grad_by_freq: bool = False
) -> Tensor:
    """The derivative of embedding_dense_backward with respect to grad_output: the rows
    of grad that the indices name (zero for padding_idx), scaled by 1 / count when
    scale_grad_by_freq, as the kernel scales them."""
    flat = indices.reshape(-1)  # type: ignore[attr-defined]
    rows = grad.index_select(0, flat)  # type: ignore[attr-defined]
    if scale_grad_by_freq:
        values = flat._data.astype(np.int64)
        counts = np.bincount(values, minlength=grad.shape[0])
        scale = (1.0 / counts[values]).astype(grad._data.dtype).reshape(-1, 1)
        rows = rows * Tensor(scale)
    if padding_idx >= 0:
        rows = rows.masked_fill((flat == padding_idx).reshape(-1, 1), 0)
    return rows.view(tuple(indices.shape) + (-1,))  # type: ignore[no-any-return]


# ---- batch E: in-place, masks, triangles, sorting, norms ----
# (functions of this group go here; add their names with `__all__ += [...]`)
#

__all__ += [
    "trace_backward",
    "norm_backward",
    "norm_jvp",
    "linalg_vector_norm_backward",
]


def trace_backward(grad: Tensor, sizes: Sequence[int]) -> Tensor:
    """The gradient of trace: grad on the diagonal of a matrix of `sizes`, zeros
    elsewhere (PyTorch's trace_backward_symint)."""
    if len(sizes) != 2:
        raise RuntimeError("expected matrix input")
    eye = Tensor(np.eye(sizes[0], sizes[1], dtype=grad._data.dtype))
    return grad * eye


def _norm_order(p: Number | None) -> float:
    """The order of a norm as a double (2 when None, PyTorch's p.value_or(2))."""
    if p is None:
        return 2.0
    return float(p.real if isinstance(p, complex) else p)


def _reduced_dims(dim: Sequence[int] | None) -> Sequence[int]:
    return () if dim is None else dim


def norm_backward(
    grad: Tensor | None,
    self: Tensor,
    p: Number | None,
    norm: Tensor,
    dim: Sequence[int] = (),
    keepdim: bool = False,
) -> Tensor | None:
    """The gradient of the p-norm of `self` over `dim` (every dim when empty), with
    PyTorch's cases: none for p = 0 (a count), sgn(self) for p = 1, self / norm for
    p = 2 (0 where the norm is 0), the elements of largest magnitude sharing it for
    p = inf, and sgn(self) |self|^(p-1) / norm^(p-1) otherwise."""
    if grad is None:
        return None
    ndim = self.dim()
    order = _norm_order(p)
    if not keepdim and ndim != 0:
        grad = _unsqueeze_multiple(grad, dim, ndim)
        norm = _unsqueeze_multiple(norm, dim, ndim)
    if order == 0.0:
        return None
    if order == 1.0:
        return self.sgn() * grad  # type: ignore[attr-defined,no-any-return]
    if order == 2.0:
        return grad * (self / norm).masked_fill(norm.eq(0), 0)  # type: ignore[attr-defined,no-any-return]
    if np.isinf(order):
        self_abs = self.abs()  # type: ignore[attr-defined]
        mask = self_abs.eq(norm).logical_or(self_abs.isnan())
        return self.sgn() * ((grad / mask.sum(dim, True)) * mask)  # type: ignore[attr-defined,no-any-return]
    if order < 1.0:
        self_scaled = self.sgn() * self.abs().pow(order - 1).masked_fill(self.eq(0), 0)  # type: ignore[attr-defined]
        return self_scaled * grad * norm.pow(1 - order)  # type: ignore[attr-defined,no-any-return]
    if order < 2.0:
        self_scaled = self.sgn() * self.abs().pow(order - 1)  # type: ignore[attr-defined]
    else:
        self_scaled = self * self.abs().pow(order - 2)  # type: ignore[attr-defined]
    scale_v = (grad / norm.pow(order - 1)).masked_fill(norm.eq(0), 0)  # type: ignore[attr-defined]
    return self_scaled * scale_v  # type: ignore[no-any-return]


def norm_jvp(
    self_p: Tensor,
    self_t: Tensor,
    p: Number | None,
    norm: Tensor,
    dim: Sequence[int] | None = (),
    keepdim: bool = False,
) -> Tensor:
    """The tangent of the p-norm of `self_p` over `dim` (every dim when None or empty)
    for the tangent `self_t`. (PyTorch's linalg_vector_norm_jvp is this with `dim`
    optional; a helper of that name would shadow the generated JVP function of
    linalg_vector_norm.)"""
    dim = _reduced_dims(dim)
    ndim = self_p.dim()
    order = _norm_order(p)
    if order == 0.0:
        return zeros_like(norm)
    if order == 1.0:
        return real(self_p.sgn() * self_t.conj()).sum(dim, keepdim)  # type: ignore[attr-defined,no-any-return]
    if order == 2.0:
        total = real(self_p * self_t.conj()).sum(dim, keepdim)  # type: ignore[attr-defined]
        return total.div(norm).masked_fill(norm.eq(0), 0)  # type: ignore[attr-defined,no-any-return]
    if np.isinf(order):
        if not keepdim and ndim != 0:
            norm = _unsqueeze_multiple(norm, dim, ndim)
        both_nan = self_p.isnan().logical_and(norm.isnan())  # type: ignore[attr-defined]
        is_eq_max = self_p.abs().eq(norm).logical_or(both_nan).to(norm.dtype)  # type: ignore[attr-defined]
        nb_max = is_eq_max.sum(dim, True)
        sgn_t = real(self_p.sgn() * self_t.conj())  # type: ignore[attr-defined]
        return (sgn_t * is_eq_max / nb_max).sum(dim, keepdim)  # type: ignore[no-any-return]
    if order < 1.0:
        weights = self_p.abs().pow(order - 1).masked_fill(self_p.eq(0), 0)  # type: ignore[attr-defined]
        total = (weights * real(self_p.sgn() * self_t.conj())).sum(dim, keepdim)  # type: ignore[attr-defined]
        return total * norm.pow(1 - order)  # type: ignore[attr-defined,no-any-return]
    if order < 2.0:
        weights = self_p.abs().pow(order - 1)  # type: ignore[attr-defined]
        total = (weights * real(self_p.sgn() * self_t.conj())).sum(dim, keepdim)  # type: ignore[attr-defined]
    else:
        weights = self_p.abs().pow(order - 2)  # type: ignore[attr-defined]
        total = (weights * real(self_p * self_t.conj())).sum(dim, keepdim)  # type: ignore[attr-defined]
    return (total / norm.pow(order - 1)).masked_fill(norm.eq(0), 0)  # type: ignore[attr-defined,no-any-return]


def linalg_vector_norm_backward(
    grad: Tensor | None,
    self: Tensor,
    ord: Number,
    norm: Tensor,
    dim: Sequence[int] | None,
    keepdim: bool,
) -> Tensor | None:
    """norm_backward over `dim` (every dim when None); `dtype` needs nothing: the
    engine converts the gradient to self's dtype."""
    return norm_backward(grad, self, ord, norm, _reduced_dims(dim), keepdim)
