"""Composites of the linalg family: outer, matmul (folded and batched), linear."""

from __future__ import annotations

import numpy as np

from ..numpy_kernels import broadcast_shape_error
from ..tensor import Tensor
from ..generated import ops  # functions read at call time (the generated tie)
from ._common import BATCHED
from .shape import reshape as _reshape

__all__ = ["outer", "ger", "matmul", "linear"]


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
    dim1, dim2 = self._data.ndim, other._data.ndim
    if dim1 == 2 and dim2 == 2:  # the common case first
        return self.mm(other)
    if dim1 == 0 or dim2 == 0:
        raise RuntimeError(
            "both arguments to matmul need to be at least 1D, but they are "
            f"{dim1}D and {dim2}D"
        )
    if dim1 == 1 and dim2 == 1:
        return self.dot(other)
    if dim1 == 2 and dim2 == 1:
        return self.mv(other)
    if dim1 == 1 and dim2 == 2:
        # PyTorch squeezes in place (squeeze_, SqueezeBackward4); gradgen has no squeeze_.
        return self.unsqueeze(0).mm(other).squeeze(0)
    if _should_fold(self, other):
        return _matmul_folded(self, other)
    return _matmul_batched(self, other)


def _matmul_folded(tensor1: Tensor, tensor2: Tensor) -> Tensor:
    """One operand has >= 3 dimensions and the other <= 2: fold the larger one's batch
    into the rows of a matrix and use mm or mv."""
    transpose = tensor2.dim() > tensor1.dim()
    t1 = tensor2.transpose(-2, -1) if transpose else tensor1
    if not transpose:
        t2 = tensor2
    else:
        t2 = tensor1.t() if tensor1.dim() == 2 else tensor1
    sizes = tuple(t1.shape)
    output_shape = sizes[:-1]
    folded = 1
    for extent in output_shape:
        folded *= extent
    t1_folded = _reshape(t1, (folded, sizes[-1]))
    if t2.dim() == 2:
        output = ops._unsafe_view(t1_folded.mm(t2), output_shape + (t2.shape[1],))
        return output.transpose(-2, -1).contiguous() if transpose else output
    return ops._unsafe_view(t1_folded.mv(t2), output_shape)


def _broadcast_batch(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """PyTorch's infer_size of two batch shapes, with its error."""
    try:
        return tuple(np.broadcast_shapes(a, b))
    except ValueError:
        raise broadcast_shape_error(a, b) from None


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
            return matmul(tensor1.squeeze(0), tensor2)
        if batch2[0] == 1 and tensor2.requires_grad:
            return matmul(tensor1, tensor2.squeeze(0))
    output_shape = _broadcast_batch(batch1, batch2)
    product = 1
    for extent in output_shape:
        product *= extent
    expanded1 = _reshape(tensor1.expand(output_shape + (n, m1)), (product, n, m1))
    vector_rhs = dim2 == 1
    if vector_rhs:
        expanded2 = _reshape(tensor2.expand(output_shape + (m2,)), (product, m2))
        expanded2 = expanded2.unsqueeze(2)
    else:
        expanded2 = _reshape(tensor2.expand(output_shape + (m2, p)), (product, m2, p))
    if dim1 > 1:
        output_shape += (n,)
    if dim2 > 1:
        output_shape += (p,)
    result = expanded1.bmm(expanded2)
    if vector_rhs:
        result = result.squeeze(-1)
    return ops._unsafe_view(result, output_shape)


def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """input @ weight.T + bias, through addmm where PyTorch's linear uses it."""
    input_dim, weight_dim = input.dim(), weight.dim()
    if input_dim == 0 or weight_dim == 0:
        raise RuntimeError(
            "both arguments to linear need to be at least 1D, but they are "
            f"{input_dim}D and {weight_dim}D"
        )
    if input_dim == 2 and bias is not None:
        if input.__class__ is not Tensor and BATCHED.linear is not None:
            result = BATCHED.linear(input, weight, bias)  # inside vmap
            if result is not NotImplemented:
                return result  # type: ignore[no-any-return]
        return ops.addmm(bias, input, weight.t())
    if (
        bias is not None
        and input._data.flags.c_contiguous
        and bias.dim() >= 1
        and bias.numel() == bias.shape[-1]
    ):
        return _flatten_nd_linear(input, weight, bias)
    output = matmul(input, weight.t())
    if bias is None:
        return output
    if output._base is None:
        return output.add_(bias)
    # A view (1-d input): add out of place, with add_'s shape check.
    shape = _broadcast_batch(tuple(output.shape), tuple(bias.shape))
    if shape != tuple(output.shape):
        raise RuntimeError(
            f"output with shape {list(output.shape)} doesn't match the broadcast shape "
            f"{list(shape)}"
        )
    return output + bias


def _flatten_nd_linear(input: Tensor, weight: Tensor, bias: Tensor) -> Tensor:
    """linear as one addmm on the input flattened to a matrix, viewed back."""
    sizes = tuple(input.shape)
    flattened = 1
    for extent in sizes[:-1]:
        flattened *= extent
    folded = _reshape(input, (flattened, sizes[-1]))
    result: Tensor = ops.addmm(bias, folded, weight.t())
    return result.view(sizes[:-1] + (result.shape[1],))
