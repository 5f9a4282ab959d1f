"""Formula helpers of the shape family: concatenation, splits, slices, repeats."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..dtypes import dtype
from ..generated.ops import cat
from ..generated.ops import slice_backward
from ..generated.ops import stack
from ..numpy_kernels import _wrap_dim
from ..tensor import Tensor
from ._common import _full, _zeros, handle_r_to_c

__all__ = [
    "permute_backwards",
    "cat_tensors_backward",
    "stack_tensors_backward",
    "split_backward",
    "split_with_sizes_backward",
    "unbind_backward",
    "unsqueeze_to",
    "slice_backward_wrapper",
    "repeat_backward",
    "reverse_list",
    "reverse_list_symint",
    "fmap_neg",
]


def permute_backwards(grad: Tensor, dims: tuple[int, ...]) -> Tensor:
    """Undo a permutation: permute by the inverse of `dims`."""
    ndim = len(dims)
    inverse = [0] * ndim
    for position, dim in enumerate(dims):
        inverse[_wrap_dim(dim, ndim)] = position
    return grad.permute(inverse)


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
        pieces.append(handle_r_to_c(input_dtype, grad.narrow(dim, start, length)))
        start += length
    return pieces


def stack_tensors_backward(
    grad: Tensor | None, dim: int, dtypes: Sequence[dtype]
) -> list[Tensor | None]:
    """One slice of the gradient of `stack` per input."""
    if grad is None:
        return [None] * len(dtypes)
    slices = grad.unbind(dim)
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
    return cat(filled, dim)


def split_backward(
    grads: Sequence[Tensor | None],
    split_size: int,
    dim: int,
    sizes: tuple[int, ...],
    options: dtype,
) -> Tensor:
    dim = _wrap_dim(dim, len(sizes))
    size = sizes[dim]
    lengths = [
        min(split_size, size - start) for start in range(0, size, split_size)
    ] or [0]
    return split_with_sizes_backward(grads, lengths, dim, sizes, options)


def unbind_backward(grads: Sequence[Tensor | None], dim: int) -> Tensor:
    """Stack the slices' gradients; a slice without one contributes zeros."""
    defined = next((g for g in grads if g is not None), None)
    assert defined is not None, "the engine only runs a node that received a gradient"
    filled = [
        g if g is not None else _zeros(defined.shape, defined.dtype) for g in grads
    ]
    return stack(filled, dim)


def unsqueeze_to(grad: Tensor, *args: Any) -> Tensor:
    """`unsqueeze_to(grad, sizes)` or `unsqueeze_to(grad, dim, sizes)`: put back the
    size-1 dimensions that squeeze removed."""
    sizes = args[-1]
    return grad.reshape(sizes)


def slice_backward_wrapper(
    grad: Tensor,
    input_sizes: tuple[int, ...],
    dim: int,
    start: int | None,
    end: int | None,
    step: int,
) -> Tensor:
    """slice_backward with None bounds filled in, as PyTorch's wrapper does."""
    return slice_backward(
        grad,
        input_sizes,
        dim,
        0 if start is None else start,
        end if end is not None else 2**63 - 1,
        step,
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
        grad = grad.sum(0, False)
    grad_size: list[int] = []
    sum_dims: list[int] = []
    for dim in range(input_dims):
        repeat = repeats[dim + num_unsqueezed]
        if repeat != 1:
            grad_size.append(repeat)
            sum_dims.append(len(grad_size) - 1)
        grad_size.append(input_shape[dim])
    if sum_dims:
        grad = grad.reshape(grad_size).sum(sum_dims)
    return grad


def reverse_list(values: Sequence[int]) -> tuple[int, ...]:
    return tuple(reversed(values))


def reverse_list_symint(values: Sequence[int]) -> tuple[int, ...]:
    return tuple(reversed(values))


def fmap_neg(values: Sequence[int]) -> tuple[int, ...]:
    """PyTorch's `fmap(values, [](SymInt i) { return -i; })`."""
    return tuple(-value for value in values)
