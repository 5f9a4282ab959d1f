"""Formula helpers of the indexing family: the gradients of advanced indexing,
masked_fill/select/scatter, take, and scatter_reduce's five reductions."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..generated.ops import cat, where
from ..numpy_kernels import _wrap_dim
from ..tensor import Tensor
from ._common import _full, _zeros

__all__ = [
    "index_backward",
    "masked_fill_backward",
    "masked_select_backward",
    "masked_scatter_backward_symint",
    "take_backward",
    "scatter_reduce_backward",
    "scatter_reduce_jvp",
    "index_reduce_backward",
]


def masked_fill_backward(grad: Tensor, mask: Tensor) -> Tensor:
    """The gradient of masked_fill's value: the sum of grad where mask is set."""
    return grad.masked_fill(mask.eq(False), 0).sum()


def index_backward(
    zeros: Tensor, indices: Sequence[Tensor | None], grad: Tensor
) -> Tensor:
    """The gradient of `self[indices]`: grad added into zeros of self's shape at the
    indexed places (an element indexed twice gets both gradients)."""
    return zeros.index_put(indices, grad, True)


def masked_select_backward(grad: Tensor, input: Tensor, mask: Tensor) -> Tensor:
    """The gradient of masked_select: grad's elements put back, in order, where mask is
    set, in zeros of input and mask broadcast together (the engine sums the broadcast
    dimensions back to input's shape)."""
    shape = np.broadcast_shapes(tuple(input.shape), tuple(mask.shape))
    return _zeros(shape, grad.dtype).masked_scatter(mask, grad)


def masked_scatter_backward_symint(
    grad: Tensor, mask: Tensor, sizes: Sequence[int]
) -> Tensor:
    """The gradient of masked_scatter's source: grad where mask is set, in order,
    followed by zeros for the source elements that were not used, in source's shape."""
    numel = int(np.prod(sizes))
    selected = grad.masked_select(mask)
    missing = numel - selected.numel()
    if missing > 0:
        selected = cat([selected, _zeros((missing,), grad.dtype)], 0)
    return selected.view(list(sizes))


def take_backward(grad: Tensor, input: Tensor, index: Tensor) -> Tensor:
    """The gradient of take: grad added into zeros of input's shape at the flat
    positions index names (a position taken twice gets both)."""
    return _zeros(tuple(input.shape), grad.dtype).put(index, grad, True)


# The forward also takes "max" and "min" (as amax and amin); the derivatives do not.
_UNKNOWN_REDUCTION = (
    "Expected 'reduce' to be one of 'sum', 'prod', 'mean', 'amax', 'amin' but got {}."
)


def _prod_backward(
    grad: Tensor,
    self: Tensor,
    dim: int,
    index: Tensor,
    src: Tensor,
    include_self: bool,
    result: Tensor,
) -> tuple[Tensor, Tensor]:
    """scatter_reduce(prod)'s gradients: the product of the other factors, computed by
    scattering again with a zero factor replaced by one, so a single zero at a position
    still passes a gradient to itself."""
    masked_self = self.masked_fill(self.eq(0), 1)
    masked_self_result = masked_self.scatter_reduce(
        dim, index, src, "prod", include_self=include_self
    )
    grad_self = grad * masked_self_result / masked_self
    src_zero = src.eq(0)
    src_num_zeros = (
        _zeros(tuple(self.shape), self.dtype)
        .scatter_add(dim, index, src_zero.to(self.dtype))
        .gather(dim, index)
    )
    src_single_zero = src_zero.logical_and(src_num_zeros.eq(1))
    masked_src = src.masked_fill(src_single_zero, 1)
    masked_src_result = self.scatter_reduce(
        dim, index, masked_src, "prod", include_self=include_self
    )
    grad_src = where(
        src_single_zero,
        (grad * masked_src_result).gather(dim, index),
        (grad * result).gather(dim, index) / src.masked_fill(src_zero, 1),
    )
    return grad_self, grad_src


def scatter_reduce_backward(
    grad: Tensor,
    self: Tensor,
    dim: int,
    index: Tensor,
    src: Tensor,
    reduce: str,
    include_self: bool,
    result: Tensor,
) -> tuple[Tensor | None, Tensor | None]:
    """The gradients of scatter_reduce for self and src: sum passes grad through, mean
    divides it by the count at each position, prod multiplies by the other factors,
    and amax/amin share it evenly among the values equal to the result."""
    if grad is None:
        return None, None
    if reduce == "sum":
        grad_self, grad_src = grad, grad.gather(dim, index)
    elif reduce == "mean":
        start = np.ones if include_self else np.zeros
        counts = Tensor(start(tuple(grad.shape), grad.dtype.numpy)).scatter_add(
            dim, index, Tensor(np.ones(tuple(src.shape), grad.dtype.numpy))
        )
        counts = counts.masked_fill(counts.eq(0), 1)
        grad_self = grad / counts
        grad_src = grad.gather(dim, index) / counts.gather(dim, index)
    elif reduce == "prod":
        grad_self, grad_src = _prod_backward(
            grad, self, dim, index, src, include_self, result
        )
    elif reduce in ("amax", "amin"):
        value = result.gather(dim, index)
        self_is_result = self.eq(result)
        src_is_result = src.eq(value)
        count = self_is_result.to(self.dtype).scatter_add(
            dim, index, src_is_result.to(self.dtype)
        )
        distributed = grad / count
        grad_self = self_is_result * distributed
        grad_src = src_is_result * distributed.gather(dim, index)
    else:
        raise RuntimeError(_UNKNOWN_REDUCTION.format(reduce))
    if not include_self:
        grad_self = grad_self.scatter(dim, index, 0)
    return grad_self, grad_src


def scatter_reduce_jvp(
    self_p: Tensor,
    self_t: Tensor,
    dim: int,
    index: Tensor,
    src_p: Tensor,
    src_t: Tensor,
    reduce: str,
    include_self: bool,
    result: Tensor,
) -> Tensor:
    """The tangent of scatter_reduce: linear for sum and mean; for amax/amin the mean
    of the tangents of the values equal to the result (as the backward shares the
    gradient); for prod the product rule, sum over factors of t_i / p_i times the
    result, with zero factors' tangents handled by `_prod_backward`'s masking."""
    if reduce in ("sum", "mean"):
        return self_t.scatter_reduce(
            dim, index, src_t, reduce, include_self=include_self
        )
    if reduce == "prod":
        grad_self, grad_src = _prod_backward(
            _full(tuple(result.shape), 1, result.dtype),
            self_p,
            dim,
            index,
            src_p,
            include_self,
            result,
        )
        own = grad_self * self_t
        if not include_self:
            own = own.scatter(dim, index, 0)
        return own.scatter_add(dim, index, grad_src * src_t)
    if reduce not in ("amax", "amin"):
        raise RuntimeError(_UNKNOWN_REDUCTION.format(reduce))
    value = result.gather(dim, index)
    self_is_result = self_p.eq(result)
    if not include_self:
        self_is_result = self_is_result.scatter(dim, index, False)
    src_is_result = src_p.eq(value)
    count = self_is_result.to(self_p.dtype).scatter_add(
        dim, index, src_is_result.to(self_p.dtype)
    )
    total = (self_t * self_is_result).scatter_add(dim, index, src_t * src_is_result)
    return total / count


def index_reduce_backward(
    grad: Tensor,
    self: Tensor,
    dim: int,
    index: Tensor,
    source: Tensor,
    reduce: str,
    include_self: bool,
    result: Tensor,
) -> tuple[Tensor | None, Tensor | None]:
    """The gradients of index_reduce: scatter_reduce's, with the index repeated across
    source's other dimensions (as the kernel does)."""
    if source.dim() == 0:
        return scatter_reduce_backward(
            grad,
            self,
            dim,
            index.reshape(-1),
            source.reshape(1),
            reduce,
            include_self,
            result,
        )
    along = [
        -1 if d == _wrap_dim(dim, source.dim()) else 1 for d in range(source.dim())
    ]
    expanded = index.reshape(along).expand(list(source.shape))
    return scatter_reduce_backward(
        grad, self, dim, expanded, source, reduce, include_self, result
    )
