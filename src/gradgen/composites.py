"""Composite operators: implemented with other operators, so they need no formula.

These are PyTorch's CompositeImplicitAutograd functions. native_functions.yaml names
them with ``composite: NAME``; the generated function and method call the function of
that name here, and autograd records whatever operators it calls.
"""

from __future__ import annotations

from .tensor import Tensor, _wrap_dim


def conj(self: Tensor) -> Tensor:
    """The complex conjugate; a real tensor is returned as it is (no graph node)."""
    if not self.is_complex():
        return self
    return self._conj()  # type: ignore[attr-defined,no-any-return]


def reshape(self: Tensor, shape: tuple[int, ...]) -> Tensor:
    """A view when the memory allows one, else a contiguous copy viewed (PyTorch)."""
    data = self._data
    if data.flags.c_contiguous or data.ndim < 2:
        return self.view(shape)  # type: ignore[attr-defined,no-any-return]
    try:
        return self.view(shape)  # type: ignore[attr-defined,no-any-return]
    except RuntimeError:
        return self.clone().view(shape)  # type: ignore[attr-defined,no-any-return]


def flatten(self: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Merge dimensions start_dim..end_dim into one."""
    ndim = self.dim()
    if ndim == 0:
        return self.reshape((1,))  # type: ignore[attr-defined,no-any-return]
    start, end = _wrap_dim(start_dim, ndim), _wrap_dim(end_dim, ndim)
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if start == end:
        return self
    shape = tuple(self.shape)
    merged = 1
    for extent in shape[start : end + 1]:
        merged *= extent
    return self.reshape(shape[:start] + (merged,) + shape[end + 1 :])  # type: ignore[attr-defined,no-any-return]


def contiguous(self: Tensor, memory_format: object = None) -> Tensor:
    """The tensor itself if its memory is C-contiguous, else a contiguous copy."""
    if self._data.flags.c_contiguous:
        return self
    return self.clone()  # type: ignore[attr-defined,no-any-return]


def narrow(self: Tensor, dim: int, start: int, length: int) -> Tensor:
    """`length` elements along `dim` from `start` (a slice, as in PyTorch)."""
    ndim = self.dim()
    if ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    dim = _wrap_dim(dim, ndim)
    size = self.shape[dim]
    if start < 0:
        start += size
    if not 0 <= start <= size or length < 0 or start + length > size:
        raise RuntimeError(
            f"start ({start}) + length ({length}) exceeds dimension size ({size})."
        )
    return self.slice(dim, start, start + length)  # type: ignore[attr-defined,no-any-return]


def split_sizes(self: Tensor, split_size: tuple[int, ...], dim: int = 0) -> list[Tensor]:
    """`split` with a list of sizes is split_with_sizes."""
    return self.split_with_sizes(split_size, dim)  # type: ignore[attr-defined,no-any-return]


def chunk(self: Tensor, chunks: int, dim: int = 0) -> list[Tensor]:
    """`chunks` pieces of (nearly) equal size along `dim`, as PyTorch splits them."""
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
    size = self.shape[_wrap_dim(dim, self.dim())]
    split_size = (size + chunks - 1) // chunks
    if split_size == 0 and size == 0:
        return self.split_with_sizes([0] * chunks, dim)  # type: ignore[attr-defined,no-any-return]
    return self.split(split_size, dim)  # type: ignore[attr-defined,no-any-return]


# ---- batch A: unary elementwise ----
# (functions of this group go here; add their names with `__all__ += [...]`)
#
def square(self: Tensor) -> Tensor:
    """self * self as PyTorch writes it: pow(self, 2) (so bool gives int64)."""
    return self.pow(2)  # type: ignore[attr-defined,no-any-return]


def imag(self: Tensor) -> Tensor:
    """The imaginary parts, a view of a complex tensor: view_as_real(self)[..., 1]."""
    if not self.is_complex():
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    from .generated.ops import view_as_real

    return view_as_real(self).select(-1, 1)  # type: ignore[no-any-return]



# ---- batch B: binary, comparison and logical ----
# (functions of this group go here; add their names with `__all__ += [...]`)
#

from .tensor import Number, wrap_number  # noqa: E402


def true_divide(self: Tensor, other: Tensor) -> Tensor:
    """An alias of `div` (true division), as PyTorch's true_divide."""
    return self.div(other)  # type: ignore[attr-defined,no-any-return]


def where_scalar_other(condition: Tensor, self: Tensor, other: Number) -> Tensor:
    """where(condition, self, number): the number as a wrapped-number tensor."""
    from .generated.ops import where

    return where(condition, self, wrap_number(other))  # type: ignore[no-any-return]


def where_scalar_self(condition: Tensor, self: Number, other: Tensor) -> Tensor:
    """where(condition, number, other): the number as a wrapped-number tensor."""
    from .generated.ops import where

    return where(condition, wrap_number(self), other)  # type: ignore[no-any-return]


def where_scalar(condition: Tensor, self: Number, other: Number) -> Tensor:
    """where(condition, number, number): both numbers as wrapped-number tensors."""
    from .generated.ops import where

    return where(condition, wrap_number(self), wrap_number(other))  # type: ignore[no-any-return]


def isfinite(self: Tensor) -> Tensor:
    """Neither NaN nor infinite (for complex: both parts finite)."""
    return self.isnan().logical_not().logical_and(self.isinf().logical_not())  # type: ignore[attr-defined,no-any-return]


# ---- batch C: reductions, scans and indexing ----
# (functions of this group go here; add their names with `__all__ += [...]`)
#

import numpy as np  # noqa: E402


def to_dtype(
    self: Tensor,
    dtype: object,
    non_blocking: bool = False,
    copy: bool = False,
    memory_format: object = None,
) -> Tensor:
    """`to(dtype)`: the tensor itself when it already has `dtype` (and no copy is
    asked for), else a converted copy (_to_copy, so differentiable)."""
    if self.dtype is dtype and not copy:
        return self
    return self._to_copy(dtype=dtype, non_blocking=non_blocking, memory_format=memory_format)  # type: ignore[attr-defined,no-any-return]


def var(self: Tensor, unbiased: bool = True) -> Tensor:
    """var(unbiased) is var.correction with correction 1 (unbiased) or 0."""
    return self.var(None, correction=1 if unbiased else 0)  # type: ignore[attr-defined,no-any-return]


def var_dim(
    self: Tensor,
    dim: tuple[int, ...] | None,
    unbiased: bool = True,
    keepdim: bool = False,
) -> Tensor:
    return self.var(dim, correction=1 if unbiased else 0, keepdim=keepdim)  # type: ignore[attr-defined,no-any-return]


def std(self: Tensor, unbiased: bool = True) -> Tensor:
    """std(unbiased) is std.correction with correction 1 (unbiased) or 0."""
    return self.std(None, correction=1 if unbiased else 0)  # type: ignore[attr-defined,no-any-return]


def std_dim(
    self: Tensor,
    dim: tuple[int, ...] | None,
    unbiased: bool = True,
    keepdim: bool = False,
) -> Tensor:
    return self.std(dim, correction=1 if unbiased else 0, keepdim=keepdim)  # type: ignore[attr-defined,no-any-return]


def softmax(self: Tensor, dim: int, dtype: object = None) -> Tensor:
    """_softmax of the input converted to `dtype` first when one is given."""
    from .generated.ops import _softmax

    converted = self if dtype is None else self.to(dtype)  # type: ignore[attr-defined]
    return _softmax(converted, dim, False)  # type: ignore[no-any-return]


def log_softmax(self: Tensor, dim: int, dtype: object = None) -> Tensor:
    """_log_softmax of the input converted to `dtype` first when one is given."""
    from .generated.ops import _log_softmax

    converted = self if dtype is None else self.to(dtype)  # type: ignore[attr-defined]
    return _log_softmax(converted, dim, False)  # type: ignore[no-any-return]


def _zeros(shape: tuple[int, ...], like: Tensor) -> Tensor:
    return Tensor(np.zeros(tuple(shape), like._data.dtype))


def index_select_backward(
    grad: Tensor, self_sizes: tuple[int, ...], dim: int, index: Tensor
) -> Tensor:
    """Zeros of the input's shape with the selected slices' gradients added back."""
    return _zeros(self_sizes, grad).index_add(dim, index, grad)  # type: ignore[attr-defined,no-any-return]


def gather_backward(
    grad: Tensor, self: Tensor, dim: int, index: Tensor, sparse_grad: bool
) -> Tensor:
    """Zeros of the input's shape with the gathered elements' gradients added back."""
    if sparse_grad:
        raise RuntimeError(
            "gather(..., sparse_grad=True) needs a sparse gradient, and gradgen has no "
            "sparse tensors; use sparse_grad=False"
        )
    return _zeros(tuple(self.shape), grad).scatter_add(dim, index, grad)  # type: ignore[attr-defined,no-any-return]


def value_selecting_reduction_backward(
    grad: Tensor, dim: int, indices: Tensor, sizes: tuple[int, ...], keepdim: bool
) -> Tensor:
    """The gradient of max.dim, min.dim, ...: each slice's gradient goes to the one
    position `indices` selected."""
    if not keepdim and len(sizes) > 0:
        grad = grad.unsqueeze(dim)  # type: ignore[attr-defined]
        indices = indices.unsqueeze(dim)  # type: ignore[attr-defined]
    return _zeros(sizes, grad).scatter(dim, indices, grad)  # type: ignore[attr-defined,no-any-return]


def expand_as(self: Tensor, other: Tensor) -> Tensor:
    return self.expand(tuple(other.shape))  # type: ignore[attr-defined,no-any-return]


def view_as(self: Tensor, other: Tensor) -> Tensor:
    return self.view(tuple(other.shape))  # type: ignore[attr-defined,no-any-return]


def reshape_as(self: Tensor, other: Tensor) -> Tensor:
    return self.reshape(tuple(other.shape))  # type: ignore[attr-defined,no-any-return]


# ---- batch D: linear algebra and losses ----
# (functions of this group go here; add their names with `__all__ += [...]`)
#
