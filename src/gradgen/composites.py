"""Composite operators: implemented with other operators, so they need no formula.

These are PyTorch's CompositeImplicitAutograd functions. native_functions.yaml names
them with ``composite: NAME``; the generated function and method call the function of
that name here, and autograd records whatever operators it calls.
"""

from __future__ import annotations

from .numpy_kernels import _wrap_dim
from .tensor import Tensor
from .dtypes import SCALAR_TYPE_NAMES as _SCALAR_TYPE_NAMES


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
        contiguous = self.clone(memory_format="contiguous_format")  # type: ignore[attr-defined]
        return contiguous.view(shape)  # type: ignore[no-any-return]


def flatten(self: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Merge dimensions start_dim..end_dim into one."""
    ndim = self.dim()
    if ndim == 0:
        return self.reshape((1,))  # type: ignore[attr-defined,no-any-return]
    start, end = _wrap_dim(start_dim, ndim), _wrap_dim(end_dim, ndim)
    if start > end:
        raise RuntimeError(
            "flatten() has invalid args: start_dim cannot come after end_dim"
        )
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
    return self.clone(memory_format="contiguous_format")  # type: ignore[attr-defined,no-any-return]


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


def split_sizes(
    self: Tensor, split_size: tuple[int, ...], dim: int = 0
) -> list[Tensor]:
    """`split` with a list of sizes is split_with_sizes."""
    return self.split_with_sizes(split_size, dim)  # type: ignore[attr-defined,no-any-return]


def chunk(self: Tensor, chunks: int, dim: int = 0) -> list[Tensor]:
    """`chunks` pieces of (nearly) equal size along `dim`, as PyTorch splits them."""
    if chunks <= 0:
        raise RuntimeError(
            "chunk expects `chunks` to be greater than 0, got: " + str(chunks)
        )
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
        raise RuntimeError(
            "imag is not implemented for tensors with non-complex dtypes."
        )
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
    if not (dtype.is_floating_point or dtype.is_complex):  # type: ignore[attr-defined]
        # An integer or bool result has no gradient: no graph, as PyTorch's _to_copy
        # (its output is differentiable only for a differentiable dtype).
        self = self.detach()
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

    converted = self if dtype is None else self.to(dtype)
    return _softmax(converted, dim, False)  # type: ignore[no-any-return]


def log_softmax(self: Tensor, dim: int, dtype: object = None) -> Tensor:
    """_log_softmax of the input converted to `dtype` first when one is given."""
    from .generated.ops import _log_softmax

    converted = self if dtype is None else self.to(dtype)
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

from typing import Any  # noqa: E402

import numpy as np  # noqa: E402


def _ops() -> Any:
    """The generated function namespace (imported late: it imports this module).

    `Any`: mypy does not follow gradgen.generated (see pyproject.toml)."""
    from .generated import ops

    return ops


def _reshape(self: Tensor, shape: tuple[int, ...]) -> Tensor:
    """PyTorch's reshape: a view when the memory allows one, else _unsafe_view of a
    clone (UnsafeViewBackward0 <- CloneBackward0, as PyTorch records it).

    The shared `reshape` above views a clone instead, and gradgen's clone keeps a
    transposed or expanded layout, so that view fails; `_unsafe_view`'s kernel makes
    its input C-ordered, as PyTorch's reshape clones with contiguous memory format."""
    try:
        return self.view(shape)  # type: ignore[attr-defined,no-any-return]
    except RuntimeError:
        return _ops()._unsafe_view(self.clone(), shape)  # type: ignore[attr-defined,no-any-return]


def outer(self: Tensor, vec2: Tensor) -> Tensor:
    """The outer product of two vectors: a column times a row (PyTorch's outer)."""
    for name, tensor in (("self", self), ("vec2", vec2)):
        if tensor.dim() != 1:
            raise RuntimeError(
                f"outer: Expected 1-D argument {name}, but got {tensor.dim()}-D"
            )
    return _reshape(self, (self.shape[0], 1)) * vec2


def ger(self: Tensor, vec2: Tensor) -> Tensor:
    """The old name of `outer`."""
    return outer(self, vec2)


def _should_fold(tensor1: Tensor, tensor2: Tensor) -> bool:
    """Whether matmul folds the batch of the larger tensor into a matrix and calls
    mm/mv instead of bmm (PyTorch's should_fold, without out=)."""
    larger_first = tensor1.dim() >= tensor2.dim()
    big = tensor1._data if larger_first else np.swapaxes(tensor2._data, -1, -2)
    small = tensor2 if larger_first else tensor1
    if not (big.ndim >= 3 and small.dim() <= 2):
        return False
    if small.requires_grad:
        return True
    if tensor1.dim() == 2:
        return False
    if big.size == 0:
        return True
    shape, strides = big.shape, big.strides
    return all(strides[i] == strides[i + 1] * shape[i + 1] for i in range(big.ndim - 2))


def matmul(self: Tensor, other: Tensor) -> Tensor:
    """The matrix product with NumPy's rank rules, built as PyTorch's _matmul_impl
    builds it from dot, mv, mm and bmm (so grad_fn names follow PyTorch's)."""
    dim1, dim2 = self.dim(), other.dim()
    if dim1 == 0 or dim2 == 0:
        raise RuntimeError(
            "both arguments to matmul need to be at least 1D, but they are "
            f"{dim1}D and {dim2}D"
        )
    t: Any = self  # the generated methods are attached at import time
    if dim1 == 1 and dim2 == 1:
        return t.dot(other)  # type: ignore[no-any-return]
    if dim1 == 2 and dim2 == 1:
        return t.mv(other)  # type: ignore[no-any-return]
    if dim1 == 1 and dim2 == 2:
        # PyTorch squeezes in place (squeeze_, SqueezeBackward4); gradgen has no squeeze_.
        return t.unsqueeze(0).mm(other).squeeze(0)  # type: ignore[no-any-return]
    if dim1 == 2 and dim2 == 2:
        return t.mm(other)  # type: ignore[no-any-return]
    if _should_fold(self, other):
        return _matmul_folded(self, other)
    return _matmul_batched(self, other)


def _matmul_folded(tensor1: Tensor, tensor2: Tensor) -> Tensor:
    """One operand has >= 3 dimensions and the other <= 2: fold the larger one's batch
    into the rows of a matrix and use mm or mv."""
    ops = _ops()
    transpose = tensor2.dim() > tensor1.dim()
    t1: Any = tensor2.transpose(-2, -1) if transpose else tensor1  # type: ignore[attr-defined]
    if not transpose:
        t2: Any = tensor2
    else:
        t2 = tensor1.t() if tensor1.dim() == 2 else tensor1  # type: ignore[attr-defined]
    sizes = tuple(t1.shape)
    output_shape = sizes[:-1]
    folded = 1
    for extent in output_shape:
        folded *= extent
    t1_folded: Any = _reshape(t1, (folded, sizes[-1]))
    if t2.dim() == 2:
        output = ops._unsafe_view(t1_folded.mm(t2), output_shape + (t2.shape[1],))
        return output.transpose(-2, -1).contiguous() if transpose else output  # type: ignore[no-any-return]
    return ops._unsafe_view(t1_folded.mv(t2), output_shape)  # type: ignore[no-any-return]


def _broadcast_batch(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """PyTorch's infer_size of two batch shapes, with its error."""
    ndim = max(len(a), len(b))
    shape = []
    for i in range(ndim):
        offset = ndim - 1 - i
        dim_a = len(a) - 1 - offset
        dim_b = len(b) - 1 - offset
        size_a = a[dim_a] if dim_a >= 0 else 1
        size_b = b[dim_b] if dim_b >= 0 else 1
        if size_a != size_b and size_a != 1 and size_b != 1:
            raise RuntimeError(
                f"The size of tensor a ({size_a}) must match the size of tensor b "
                f"({size_b}) at non-singleton dimension {i}"
            )
        shape.append(size_b if size_a == 1 else size_a)
    return tuple(shape)


def _matmul_batched(tensor1: Tensor, tensor2: Tensor) -> Tensor:
    """Batched matmul: broadcast the batch dimensions, flatten them, and use bmm."""
    dim1, dim2 = tensor1.dim(), tensor2.dim()
    shape1, shape2 = tuple(tensor1.shape), tuple(tensor2.shape)
    n = shape1[-2] if dim1 > 1 else 1
    m1 = shape1[-1]
    batch1 = shape1[: max(dim1 - 2, 0)]
    m2 = shape2[-2] if dim2 > 1 else shape2[0]
    p = shape2[-1] if dim2 > 1 else 1
    batch2 = shape2[: max(dim2 - 2, 0)]
    if dim1 == 3 and dim2 == 3 and batch1[0] != batch2[0]:
        if batch1[0] == 1 and tensor1.requires_grad:
            return matmul(tensor1.squeeze(0), tensor2)  # type: ignore[attr-defined]
        if batch2[0] == 1 and tensor2.requires_grad:
            return matmul(tensor1, tensor2.squeeze(0))  # type: ignore[attr-defined]
    output_shape = _broadcast_batch(batch1, batch2)
    product = 1
    for extent in output_shape:
        product *= extent
    t1: Any = tensor1
    t2: Any = tensor2
    expanded1: Any = _reshape(t1.expand(output_shape + (n, m1)), (product, n, m1))
    vector_rhs = dim2 == 1
    if vector_rhs:
        expanded2: Any = _reshape(t2.expand(output_shape + (m2,)), (product, m2))
        expanded2 = expanded2.unsqueeze(2)
    else:
        expanded2 = _reshape(t2.expand(output_shape + (m2, p)), (product, m2, p))
    if dim1 > 1:
        output_shape += (n,)
    if dim2 > 1:
        output_shape += (p,)
    result = expanded1.bmm(expanded2)
    if vector_rhs:
        result = result.squeeze(-1)
    return _ops()._unsafe_view(result, output_shape)  # type: ignore[no-any-return]


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """input @ weight.T + bias, through addmm where PyTorch's linear uses it."""
    ops = _ops()
    input_dim, weight_dim = input.dim(), weight.dim()
    if input_dim == 0 or weight_dim == 0:
        raise RuntimeError(
            "both arguments to linear need to be at least 1D, but they are "
            f"{input_dim}D and {weight_dim}D"
        )
    w: Any = weight
    if input_dim == 2 and bias is not None:
        return ops.addmm(bias, input, w.t())  # type: ignore[no-any-return]
    if (
        bias is not None
        and input._data.flags.c_contiguous
        and bias.dim() >= 1
        and bias.numel() == bias.shape[-1]
    ):
        return _flatten_nd_linear(input, weight, bias)
    output: Any = matmul(input, w.t())
    if bias is None:
        return output  # type: ignore[no-any-return]
    if output._base is None:
        return output.add_(bias)  # type: ignore[no-any-return]
    # A view (1-d input): add out of place, with add_'s shape check.
    shape = _broadcast_batch(tuple(output.shape), tuple(bias.shape))
    if shape != tuple(output.shape):
        raise RuntimeError(
            f"output with shape {list(output.shape)} doesn't match the broadcast shape "
            f"{list(shape)}"
        )
    return output + bias  # type: ignore[no-any-return]


def _flatten_nd_linear(input: Tensor, weight: Tensor, bias: Tensor) -> Tensor:
    """linear as one addmm on the input flattened to a matrix, viewed back."""
    sizes = tuple(input.shape)
    flattened = 1
    for extent in sizes[:-1]:
        flattened *= extent
    folded: Any = _reshape(input, (flattened, sizes[-1]))
    result: Any = _ops().addmm(bias, folded, weight.t())  # type: ignore[attr-defined]
    return result.view(sizes[:-1] + (result.shape[1],))  # type: ignore[no-any-return]


_REDUCTION_NONE, _REDUCTION_MEAN, _REDUCTION_SUM = 0, 1, 2


def nll_loss(
    self: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    reduction: int = _REDUCTION_MEAN,
    ignore_index: int = -100,
) -> Tensor:
    """The loss output of nll_loss_forward."""
    return _ops().nll_loss_forward(self, target, weight, reduction, ignore_index)[0]  # type: ignore[no-any-return]


def nll_loss2d(
    self: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    reduction: int = _REDUCTION_MEAN,
    ignore_index: int = -100,
) -> Tensor:
    """The loss output of nll_loss2d_forward."""
    return _ops().nll_loss2d_forward(self, target, weight, reduction, ignore_index)[0]  # type: ignore[no-any-return]


def nll_loss_nd(
    self: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    reduction: int = _REDUCTION_MEAN,
    ignore_index: int = -100,
) -> Tensor:
    """nll_loss for inputs of any rank >= 1, class dimension 1 (PyTorch's nll_loss_nd:
    (C,) and (N, C) go to nll_loss, the rest to nll_loss2d)."""
    ops = _ops()
    ndim = self.dim()
    if ndim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {ndim})")
    # PyTorch reads size 0 for the batch of a 0-d target.
    target_batch = target.shape[0] if target.dim() > 0 else 0
    if ndim != 1 and self.shape[0] != target_batch:
        raise ValueError(
            f"Expected input batch_size ({self.shape[0]}) to match target batch_size "
            f"({target_batch})."
        )
    if ndim in (1, 2):
        return ops.nll_loss(self, target, weight, reduction, ignore_index)  # type: ignore[no-any-return]
    if ndim == 4:
        return ops.nll_loss2d(self, target, weight, reduction, ignore_index)  # type: ignore[no-any-return]
    n, c = self.shape[0], self.shape[1]
    out_size = (n,) + tuple(self.shape[2:])
    if tuple(target.shape[1:]) != tuple(self.shape[2:]):
        raise RuntimeError(
            f"Expected target size {list(out_size)}, got {list(target.shape)}"
        )
    # PyTorch: contiguous() then view(). gradgen's contiguous() clones keeping a
    # transposed layout, which view() cannot take: reshape instead (the same for a
    # contiguous input; UnsafeViewBackward0 <- CloneBackward0 for another).
    input_ = _reshape(self, (n, c, 1, -1) if self.numel() > 0 else (n, c, 0, 0))
    target_ = _reshape(target, (n, 1, -1) if target.numel() > 0 else (n, 0, 0))
    out = ops.nll_loss2d(input_, target_, weight, reduction, ignore_index)
    if reduction != _REDUCTION_NONE:
        return out  # type: ignore[no-any-return]
    return out.view(out_size)  # type: ignore[no-any-return]


def cross_entropy_loss(
    self: Tensor,
    target: Tensor,
    weight: Tensor | None = None,
    reduction: int = _REDUCTION_MEAN,
    ignore_index: int = -100,
    label_smoothing: float = 0.0,
) -> Tensor:
    """log_softmax over the class dimension, then nll_loss_nd; or, for a target of
    class probabilities (the input's shape), -sum(target * log_softmax(input))
    (PyTorch's cross_entropy_loss, with its label smoothing)."""
    if tuple(self.shape) == tuple(target.shape):
        if not target.is_floating_point():
            raise RuntimeError(
                "Expected floating point type for target with class probabilities, got "
                + _SCALAR_TYPE_NAMES.get(target.dtype.name, target.dtype.name)
            )
        if ignore_index >= 0:
            raise RuntimeError(
                "ignore_index is not supported for floating point target"
            )
        return _cross_entropy_loss_prob_target(
            self, target, weight, reduction, label_smoothing
        )
    if label_smoothing > 0.0:
        _check_label_smoothing(label_smoothing)
        return _cross_entropy_loss_label_smoothing(
            self, target, weight, reduction, ignore_index, label_smoothing
        )
    class_dim = 0 if self.dim() == 1 else 1
    log_probabilities = self.log_softmax(class_dim)  # type: ignore[attr-defined]
    return _ops().nll_loss_nd(log_probabilities, target, weight, reduction, ignore_index)  # type: ignore[no-any-return]


def _check_label_smoothing(label_smoothing: float) -> None:
    if label_smoothing > 1.0:
        raise RuntimeError(
            f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing:g}"
        )


def _class_weight(weight: Tensor, ndim: int, class_dim: int) -> Tensor:
    """The class weights viewed to broadcast along `class_dim` of an ndim-d input."""
    if ndim <= 1:
        return weight
    shape = [1] * ndim
    shape[class_dim] = weight.shape[0]
    return weight.view(tuple(shape))  # type: ignore[attr-defined,no-any-return]


def _cross_entropy_loss_prob_target(
    self: Tensor,
    target: Tensor,
    weight: Tensor | None,
    reduction: int,
    label_smoothing: float,
) -> Tensor:
    class_dim = 0 if self.dim() == 1 else 1
    n_classes = self.shape[class_dim]
    if weight is not None and (weight.dim() != 1 or weight.numel() != n_classes):
        raise RuntimeError(
            f"cross_entropy: weight tensor should be defined either for all {n_classes} "
            "classes or no classes but got weight tensor of shape: "
            f"{list(weight.shape)}"
        )
    input: Any = self.log_softmax(class_dim)  # type: ignore[attr-defined]
    if label_smoothing > 0.0:
        _check_label_smoothing(label_smoothing)
        target = target * (1 - label_smoothing) + label_smoothing / n_classes
    terms = input * target
    if weight is not None:
        terms = terms * _class_weight(weight, input.dim(), 1)
    if reduction == _REDUCTION_MEAN:
        if input.numel() == 0:
            return -terms.sum() * float("nan")  # type: ignore[no-any-return]
        return -terms.sum() * (1.0 / (input.numel() // n_classes))  # type: ignore[no-any-return]
    if reduction == _REDUCTION_SUM:
        return -terms.sum()  # type: ignore[no-any-return]
    if reduction == _REDUCTION_NONE:
        return -terms.sum(class_dim)  # type: ignore[no-any-return]
    raise RuntimeError(
        f"Invalid reduction type encountered in cross_entropy: {reduction}"
    )


def _cross_entropy_loss_label_smoothing(
    self: Tensor,
    target: Tensor,
    weight: Tensor | None,
    reduction: int,
    ignore_index: int,
    label_smoothing: float,
) -> Tensor:
    """(1 - s) * nll_loss + s / C * (the loss against uniform targets), ignored targets
    contributing nothing. The ignored mask is data of the (integer, never
    differentiable) target, applied as a 0/1 factor where PyTorch uses masked_fill_."""
    class_dim = 0 if self.dim() == 1 else 1
    input: Any = self.log_softmax(class_dim)  # type: ignore[attr-defined]
    nll = _ops().nll_loss_nd(input, target, weight, reduction, ignore_index)
    n_classes = input.shape[class_dim]
    if weight is not None:
        smooth_loss = -(input * _class_weight(weight, input.dim(), class_dim)).sum(
            class_dim
        )
    else:
        smooth_loss = -input.sum(class_dim)
    ignored = target._data == ignore_index
    smooth_loss = smooth_loss * Tensor((~ignored).astype(smooth_loss._data.dtype))
    if reduction == _REDUCTION_MEAN:
        if weight is not None:
            counted = target._data[~ignored].reshape(-1)
            denominator = float(np.sum(weight._data[counted]))
        else:
            denominator = float(np.sum(~ignored))
        scale = 1.0 / denominator if denominator else float("nan")
        ret = smooth_loss.sum() * scale
    elif reduction == _REDUCTION_SUM:
        ret = smooth_loss.sum()
    elif reduction == _REDUCTION_NONE:
        ret = smooth_loss
    else:
        raise RuntimeError(
            f"Invalid reduction type encountered in cross_entropy: {reduction}"
        )
    return (1 - label_smoothing) * nll + ret * (label_smoothing / n_classes)  # type: ignore[no-any-return]


# ---- batch F: activations, losses, normalization, embedding ----
# (functions of this group go here)
#


def log_sigmoid(self: Tensor) -> Tensor:
    """log(sigmoid(self)): the first output of log_sigmoid_forward (whose node is
    LogSigmoidBackward0, as in PyTorch)."""
    return _ops().log_sigmoid_forward(self)[0]  # type: ignore[no-any-return]


def l1_loss(self: Tensor, target: Tensor, reduction: int = _REDUCTION_MEAN) -> Tensor:
    """|self - target|, averaged, summed or unreduced (PyTorch's l1_loss: the nodes
    are SubBackward0, AbsBackward0 and MeanBackward0 or SumBackward0)."""
    loss = (self - target).abs()  # type: ignore[attr-defined]
    if reduction == _REDUCTION_MEAN:
        return loss.mean()  # type: ignore[no-any-return]
    if reduction == _REDUCTION_SUM:
        return loss.sum()  # type: ignore[no-any-return]
    return loss  # type: ignore[no-any-return]


def kl_div(
    self: Tensor,
    target: Tensor,
    reduction: int = _REDUCTION_MEAN,
    log_target: bool = False,
) -> Tensor:
    """The pointwise KL divergence of log-probabilities `self` from `target`:
    exp(target) * (target - self) for log_target, else xlogy(target, target) -
    target * self (0 * log 0 taken as 0), then reduced."""
    if self.is_complex() or target.is_complex():
        raise RuntimeError("kl_div: Complex inputs not supported.")
    if not self.is_floating_point() or not target.is_floating_point():
        raise RuntimeError("kl_div: Integral inputs not supported.")
    ops = _ops()
    if log_target:
        output = target.exp() * (target - self)  # type: ignore[attr-defined]
    else:
        # xlogy(target, target), which gradgen lacks: where(target == 0, 0, t * log t).
        xlogy = ops.where(target == 0, 0.0, target * target.log())  # type: ignore[attr-defined]
        output = xlogy - target * self
    if reduction == _REDUCTION_MEAN:
        return output.mean()  # type: ignore[no-any-return]
    if reduction == _REDUCTION_SUM:
        return output.sum()  # type: ignore[no-any-return]
    return output  # type: ignore[no-any-return]


def layer_norm(
    input: Tensor,
    normalized_shape: tuple[int, ...],
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-05,
    cudnn_enable: bool = True,
) -> Tensor:
    """The first output of native_layer_norm (NativeLayerNormBackward0)."""
    return _ops().native_layer_norm(input, normalized_shape, weight, bias, eps)[0]  # type: ignore[no-any-return]


def embedding_backward(
    grad: Tensor,
    indices: Tensor,
    num_weights: int,
    padding_idx: int,
    scale_grad_by_freq: bool,
    sparse: bool,
) -> Tensor:
    """embedding's weight gradient: embedding_dense_backward (gradgen has no sparse
    tensors, so sparse=True is NotImplementedError)."""
    if sparse:
        raise NotImplementedError(
            "embedding(sparse=True): gradgen has no sparse tensors for the gradient"
        )
    return _ops().embedding_dense_backward(  # type: ignore[no-any-return]
        grad, indices, num_weights, padding_idx, scale_grad_by_freq
    )


def dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """input * mask / (1 - p), the mask drawn from gradgen's generator with P(1) = 1 - p
    (PyTorch's CPU dropout, MulBackward0); the input itself when p == 0, when not
    training or when it is empty; input * 0 when p == 1."""
    if not 0 <= p <= 1:
        raise RuntimeError(
            f"dropout probability has to be between 0 and 1, but got {p}"
        )
    if p == 0 or not train or input.numel() == 0:
        return input
    if p == 1:
        return input * Tensor(np.zeros((), input._data.dtype))
    return input * _dropout_noise(input, p)


def _dropout_noise(input: Tensor, p: float) -> Tensor:
    """A tensor of input's shape and dtype: 1 / (1 - p) with probability 1 - p, else 0,
    from gradgen's generator (gradgen.rand, so gradgen.manual_seed applies)."""
    from .factories import rand

    keep = rand(*input.shape, dtype="float64")._data < 1 - p
    return Tensor((keep / (1 - p)).astype(input._data.dtype))
# ---- batch E: in-place, masks, triangles, sorting, norms ----
# (functions of this group go here; add their names with `__all__ += [...]`)
#


def detach_(self: Tensor) -> Tensor:
    """Cut `self` from the graph in place: no grad_fn, no longer requiring grad, no
    tangent (PyTorch resets the same autograd metadata and keeps hooks). A view
    cannot be detached in place."""
    if self._base is not None:
        raise RuntimeError(
            "Can't detach views in-place. Use detach() instead. If you are using "
            "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is "
            "set as True, gradients are views of DDP buckets, and hence detach_() "
            "cannot be called on these gradients. To fix this error, please refer to "
            "the Optimizer.zero_grad() function in torch/optim/optimizer.py as the "
            "solution."
        )
    self._requires_grad = False
    self._grad_fn = None
    self._output_nr = 0
    self._fw_grad = None
    return self


def any_elements(self: Tensor) -> Tensor:
    """any(): whether any element is non-zero (any.dims over every dim)."""
    return self.any(None)  # type: ignore[attr-defined,no-any-return]


def all_elements(self: Tensor) -> Tensor:
    """all(): whether every element is non-zero (all.dims over every dim)."""
    return self.all(None)  # type: ignore[attr-defined,no-any-return]


def clip(self: Tensor, min: Number | None = None, max: Number | None = None) -> Tensor:
    """clip is clamp (ClampBackward1)."""
    return self.clamp(min, max)  # type: ignore[attr-defined,no-any-return]


def clip_tensor(
    self: Tensor, min: Tensor | None = None, max: Tensor | None = None
) -> Tensor:
    """clip.Tensor is clamp.Tensor (ClampBackward0)."""
    return self.clamp(min, max)  # type: ignore[attr-defined,no-any-return]


def clip_(self: Tensor, min: Number | None = None, max: Number | None = None) -> Tensor:
    """clip_ is clamp_."""
    return self.clamp_(min, max)  # type: ignore[attr-defined,no-any-return]


def clip_tensor_(
    self: Tensor, min: Tensor | None = None, max: Tensor | None = None
) -> Tensor:
    """clip_.Tensor is clamp_.Tensor."""
    return self.clamp_(min, max)  # type: ignore[attr-defined,no-any-return]


def diag(self: Tensor, diagonal: int = 0) -> Tensor:
    """A vector's diagonal matrix (diag_embed), or a matrix's diagonal as a new
    vector (diagonal_copy)."""
    ndim = self.dim()
    if ndim == 1:
        return self.diag_embed(diagonal)  # type: ignore[attr-defined,no-any-return]
    if ndim == 2:
        return _ops().diagonal_copy(self, diagonal)  # type: ignore[no-any-return]
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {ndim}D")


def _linalg_vector_norm(
    self: Tensor, ord: Number, dim: tuple[int, ...] | None, keepdim: bool
) -> Tensor:
    """linalg_vector_norm, through the dispatcher (it has no Python binding)."""
    from .generated import operators

    return operators.linalg_vector_norm.call(self, ord, dim, keepdim, None)  # type: ignore[no-any-return]


def norm(self: Tensor, p: Number = 2) -> Tensor:
    """The p-norm of every element: linalg_vector_norm (as torch.norm calls it)."""
    return _linalg_vector_norm(self, p, None, False)


def norm_dim(
    self: Tensor, p: Number | None, dim: tuple[int, ...], keepdim: bool = False
) -> Tensor:
    """The p-norm (2 when p is None) over `dim`: linalg_vector_norm."""
    return _linalg_vector_norm(self, 2 if p is None else p, dim, keepdim)
