"""Formula helpers of the reduction family: sums, means, products, variance, scans,
selections (kthvalue, median, mode: the gradient goes to the selected index)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..grad_mode import is_grad_enabled
from ..generated.ops import cat
from ..generated.ops import gather
from ..generated.ops import stack
from ..generated.ops import value_selecting_reduction_backward, where
from ..numpy_kernels import _wrap_dim
from ..tensor import Tensor
from ._common import Number, _full, _unsqueeze_multiple, zeros_like

__all__ = [
    "sum_backward",
    "mean_backward",
    "prod_backward",
    "restore_reduced_dims",
    "scale_grad_by_count",
    "evenly_distribute_backward",
    "evenly_read_jvp",
    "gather_with_keepdimed_indices",
    "amaxamin_jvp",
    "logsumexp_jvp",
    "logsumexp_backward",
    "var_backward",
    "std_backward",
    "cumsum_backward",
    "cumprod_backward",
    "logcumsumexp_backward",
    "logcumsumexp_jvp",
    "cummaxmin_backward",
    "value_selecting_reduction_backward_symint",
    "aminmax_backward",
    "aminmax_jvp",
    "nansum_backward",
    "var_mean_backward",
    "std_mean_backward",
]


def sum_backward(
    grad: Tensor, sizes: tuple[int, ...], dims: Sequence[int] | None, keepdim: bool
) -> Tensor:
    """Broadcast the gradient of a sum back over the summed dimensions."""
    if not keepdim and len(sizes) > 0:
        if dims is None or len(dims) == 0:
            return grad.expand(sizes)
        for dim in sorted(_wrap_dim(d, len(sizes)) for d in dims):
            grad = grad.unsqueeze(dim)
    return grad.expand(sizes)


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
    return sum_backward(grad, sizes, dims, keepdim) * (
        1.0 / count if count else float("nan")
    )


def _isnan(tensor: Tensor) -> Tensor:
    """NaN is the only value unequal to itself (eq is all this branch has of isnan)."""
    return tensor.eq(tensor).eq(False)


def _any_zero(tensor: Tensor) -> bool:
    """Whether any element is zero (PyTorch reads this off the data, as here)."""
    return bool(tensor.eq(0).sum().item())


def _prod_safe_zeros_backward(grad: Tensor, inp: Tensor, dim: int) -> Tensor:
    """d prod / d x_i as the product of the others, by an exclusive cumprod from each
    side, which needs no division and so is right where inputs are zero."""
    if inp.numel() == 0:
        return grad.expand_as(inp)
    size = inp.shape[dim]
    if size == 1:
        return grad
    ones_size = list(inp.shape)
    ones_size[dim] = 1
    ones = _full(ones_size, 1, grad.dtype)
    exclusive_normal = cat([ones, inp.narrow(dim, 0, size - 1)], dim).cumprod(dim)
    narrow_reverse = inp.narrow(dim, 1, size - 1).flip([dim])
    exclusive_reverse = cat([ones, narrow_reverse], dim).cumprod(dim).flip([dim])
    return grad * (exclusive_normal * exclusive_reverse).conj()


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
        zeros = int(input.eq(0).sum())
        if zeros == 0:
            return grad * result.div(input).conj()
        if not is_grad_enabled() and zeros > 1:
            return zeros_like(input)
        flat = input.contiguous().view(-1)
        return _prod_safe_zeros_backward(grad, flat, 0).view_as(input)
    dim = _wrap_dim(dim, input.dim())
    if not keepdim:
        grad = grad.unsqueeze(dim)
        result = result.unsqueeze(dim)
    if not _any_zero(input):
        return grad * result.div(input).conj()
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
    return output.reshape(target)


def scale_grad_by_count(grad: Tensor, mask: Tensor, dims: Sequence[int]) -> Tensor:
    """Share the gradient evenly among the positions `mask` marks in each reduced slice."""
    return grad.div(mask.sum(dims, True)) * mask


def evenly_distribute_backward(grad: Tensor, input: Tensor, value: Tensor) -> Tensor:
    """The gradient of a full max/min: split evenly among every element equal to the
    result (every NaN when the result is NaN)."""
    mask = _isnan(input) if bool(_isnan(value).item()) else input.eq(value)
    zeros = _full(input.shape, 0, input.dtype)
    return zeros.masked_fill(mask, grad.div(mask.sum()))


def evenly_read_jvp(fw_grad: Tensor, input: Tensor, value: Tensor) -> Tensor:
    """The tangent of a full max/min: the mean of the input's tangent over the elements
    equal to the result (the forward counterpart of evenly_distribute_backward)."""
    mask = _isnan(input) if bool(_isnan(value).item()) else input.eq(value)
    return fw_grad.masked_fill(mask.logical_not(), 0).sum() / mask.sum()


def gather_with_keepdimed_indices(
    input: Tensor, dim: int, indices: Tensor, keepdim: bool
) -> Tensor:
    """`input` at the positions of a reduction's `indices` along `dim` (the tangent of
    max.dim, sort, kthvalue, ...), the indices without the reduced dim unless keepdim;
    a 0-d input's is the input itself (a copy)."""
    if input.dim() == 0:
        return input.clone()
    full_indices = indices if keepdim else indices.unsqueeze(dim)
    gathered = gather(input, dim, full_indices)
    return gathered if keepdim else gathered.squeeze(dim)


def amaxamin_jvp(
    x: Tensor, dx: Tensor, result: Tensor, dim: Sequence[int], keepdim: bool
) -> Tensor:
    """The tangent of amax/amin: the mean of dx over the ties of each reduced slice."""
    mask = x.eq(restore_reduced_dims(result, dim, keepdim))
    return dx.masked_fill(mask.logical_not(), 0).sum(dim, keepdim) / mask.sum(
        dim, keepdim
    )


def logsumexp_jvp(
    self_p: Tensor, self_t: Tensor, dim: Sequence[int], keepdim: bool
) -> Tensor:
    """The tangent of logsumexp: the softmax-weighted sum of the tangent, the
    exponentials shifted by the maximum so that they cannot overflow."""
    shifted = self_p - self_p.amax(dim, True) if self_p.numel() > 0 else self_p
    weights = shifted.exp()
    return (weights * self_t).sum(dim, keepdim) / weights.sum(dim, keepdim)


def logsumexp_backward(
    grad: Tensor, self: Tensor, result: Tensor, dim: Sequence[int], keepdim: bool
) -> Tensor:
    """grad * softmax(self) over the reduced dims."""
    if not keepdim and self.dim() != 0:
        grad = _unsqueeze_multiple(grad, dim, self.dim())
        result = _unsqueeze_multiple(result, dim, self.dim())
    return grad * (self - result).exp().conj()


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
            infinite = _full(self.shape, float("inf"), grad.dtype.to_real())
            return grad * infinite.masked_fill(self.eq(self.mean()), float("nan"))
        return _double_division(2.0, dof) * grad * (self - self.mean())
    if not keepdim and self.dim() > 1:
        grad = _unsqueeze_multiple(grad, dim, self.dim())
    count = 1
    for d in dim:
        count *= self.shape[_wrap_dim(d, self.dim())]
    scale = _double_division(2.0, count - correction)
    return scale * grad * (self - self.mean(dim, True))


def std_backward(
    result: Tensor,
    grad: Tensor,
    self: Tensor,
    dim: Sequence[int] | None,
    correction: Number | None,
    keepdim: bool,
) -> Tensor:
    """The gradient of std = sqrt(var): var's, scaled by 1 / (2 std) (0 where std is 0)."""
    grad_var = grad.div(result * 2).masked_fill(result.eq(0), 0)
    return var_backward(grad_var, self, dim, correction, keepdim)


def _reversed_cumsum(tensor: Tensor, dim: int) -> Tensor:
    return tensor.flip([dim]).cumsum(dim).flip([dim])


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
    input_conj = input.conj()
    output_conj = output.conj()
    if not _any_zero(input):
        return _reversed_cumsum(output_conj * grad, dim).div(input_conj)
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
        slices.append((grad.slice(dim, k) * omitted).sum(dim))
    return stack(slices, dim)


def _reverse_logcumsumexp(tensor: Tensor, dim: int) -> Tensor:
    return tensor.flip([dim]).logcumsumexp(dim).flip([dim])


def logcumsumexp_backward(
    grad: Tensor, self: Tensor, result: Tensor, dim: int
) -> Tensor:
    """d self_j = sum over i >= j of grad_i * exp(self_j - result_i), computed as
    reversed logcumsumexps of log|grad| - result, one for the positive and one for
    the negative part of grad (so nothing overflows)."""
    if grad.dim() == 0 or grad.numel() == 0:
        return grad
    if grad.is_complex():
        return (_reverse_logcumsumexp(grad.log() - result, dim) + self).exp()
    lowest = float(np.finfo(grad.dtype.numpy).min)
    log_abs_grad = grad.abs().log()
    positive = where(grad > 0, log_abs_grad, lowest)
    negative = where(grad < 0, log_abs_grad, lowest)
    output_positive = (_reverse_logcumsumexp(positive - result, dim) + self).exp()
    output_negative = (_reverse_logcumsumexp(negative - result, dim) + self).exp()
    return output_positive - output_negative


def logcumsumexp_jvp(self_p: Tensor, self_t: Tensor, dim: int) -> Tensor:
    """The tangent of logcumsumexp: running means of the tangent weighted by
    exp(self), each weight shifted by the max along dim."""
    if self_p.dim() == 0:
        return self_t
    if self_p.is_complex():
        weights = self_p.exp()
    else:
        weights = (self_p - self_p.amax(dim, True)).exp()
    return (weights * self_t).cumsum(dim) / weights.cumsum(dim)


def cummaxmin_backward(
    grad: Tensor, input: Tensor, indices: Tensor, dim: int
) -> Tensor:
    """The gradient of cummax/cummin: each output's gradient added at the index its
    value came from."""
    if input.numel() == 0:
        return input
    return _full(input.shape, 0, grad.dtype).scatter_add(dim, indices, grad)


def value_selecting_reduction_backward_symint(
    grad: Tensor, dim: int, indices: Tensor, sizes: Sequence[int], keepdim: bool
) -> Tensor:
    """The gradient of a reduction that picks one element per slice (kthvalue,
    median, mode): grad put at the picked index."""
    return value_selecting_reduction_backward(grad, dim, indices, sizes, keepdim)


def _one_dim(dim: int | None) -> list[int]:
    return [] if dim is None else [dim]


def aminmax_backward(
    self: Tensor,
    dim: int | None,
    keepdim: bool,
    grad_min: Tensor | None,
    grad_max: Tensor | None,
    min: Tensor,
    max: Tensor,
) -> Tensor:
    """The gradient of aminmax: each output's gradient shared evenly among the
    elements equal to it, as amin's and amax's."""
    dims = _one_dim(dim)
    total: Tensor | None = None
    for grad, value in ((grad_min, min), (grad_max, max)):
        if grad is None:
            continue
        mask = restore_reduced_dims(value, dims, keepdim).eq(self)
        part = scale_grad_by_count(
            restore_reduced_dims(grad, dims, keepdim), mask, dims
        )
        total = part if total is None else total + part
    return total if total is not None else zeros_like(self)


def aminmax_jvp(
    self_p: Tensor, self_t: Tensor, result: Tensor, dim: int | None, keepdim: bool
) -> Tensor:
    """The tangent of amin or amax: the mean tangent of the elements equal to it."""
    dims = _one_dim(dim)
    mask = self_p.eq(restore_reduced_dims(result, dims, keepdim))
    return (self_t * mask).sum(dims, keepdim) / mask.sum(dims, keepdim)


def nansum_backward(
    grad: Tensor, self: Tensor, dims: Sequence[int] | None, keepdim: bool
) -> Tensor:
    """The gradient of nansum: the sum's, zero at the NaNs."""
    return (
        sum_backward(grad, tuple(self.shape), dims, keepdim)
        * self.isnan().logical_not()
    )


def var_mean_backward(
    gvar: Tensor | None,
    gmean: Tensor | None,
    self: Tensor,
    dim: Sequence[int] | None,
    correction: Number | None,
    keepdim: bool,
) -> Tensor | None:
    """The gradient of var_mean: var's and mean's, added."""
    gself = None if gvar is None else var_backward(gvar, self, dim, correction, keepdim)
    if gmean is not None:
        part = mean_backward(gmean, tuple(self.shape), dim or [], self.numel(), keepdim)
        gself = part if gself is None else gself + part
    return gself


def std_mean_backward(
    gstd: Tensor | None,
    gmean: Tensor | None,
    self: Tensor,
    std: Tensor,
    dim: Sequence[int] | None,
    correction: Number | None,
    keepdim: bool,
) -> Tensor | None:
    """The gradient of std_mean: std's and mean's, added."""
    gself = (
        None
        if gstd is None
        else std_backward(std, gstd, self, dim, correction, keepdim)
    )
    if gmean is not None:
        part = mean_backward(gmean, tuple(self.shape), dim or [], self.numel(), keepdim)
        gself = part if gself is None else gself + part
    return gself
