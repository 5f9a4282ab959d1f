"""numpy functions that native_functions.yaml kernel expressions may call.

A kernel expression is one Python expression over numpy arrays; where one numpy call
does not say it (negative sizes in `expand`, summing to a shape), the helper is here.
`__all__` is the list the generator allows in kernel expressions (it reads it without
importing this module).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = [
    "permute",
    "expand",
    "sum_to_size",
    "to_copy",
    "view",
    "squeeze",
    "unsqueeze",
    "transpose",
    "t",
    "select",
    "slice_",
    "split",
    "split_with_sizes",
    "unbind",
    "select_backward",
    "slice_backward",
    "reduce_sum",
    "reduce_mean",
]


def permute(self: np.ndarray, dims: Sequence[int]) -> np.ndarray:
    """A view with the dimensions reordered (PyTorch's checks and messages)."""
    if len(dims) != self.ndim:
        raise RuntimeError(
            "permute(sparse_coo): number of dimensions in the tensor input does not match "
            "the length of the desired ordering of dimensions i.e. input.dim() = "
            f"{self.ndim} is not equal to len(dims) = {len(dims)}"
        )
    wrapped = [d + self.ndim if d < 0 else d for d in dims]
    if sorted(wrapped) != list(range(self.ndim)):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return np.transpose(self, wrapped)


def expand(self: np.ndarray, size: Sequence[int]) -> np.ndarray:
    """A read-only broadcast view of `self` at `size`; -1 keeps a dimension's size."""
    if len(size) < self.ndim:
        raise RuntimeError(
            f"expand(torch.FloatTensor{{{list(self.shape)}}}, size={list(size)}): the "
            "number of sizes provided "
            f"({len(size)}) must be greater or equal to the number of dimensions in the "
            f"tensor ({self.ndim})"
        )
    leading = len(size) - self.ndim
    target = [
        self.shape[i - leading] if extent == -1 and i >= leading else extent
        for i, extent in enumerate(size)
    ]
    return np.broadcast_to(self, target)


def sum_to_size(self: np.ndarray, size: Sequence[int]) -> np.ndarray:
    """Sum `self` down to `size`, which must broadcast to `self`'s shape."""
    size = tuple(size)
    leading = self.ndim - len(size)
    if leading < 0 or any(
        s != 1 and s != self.shape[leading + i] for i, s in enumerate(size)
    ):
        raise RuntimeError(
            f"size {{{list(size)}}} is not expandable to size {{{list(self.shape)}}}."
        )
    axes = tuple(range(leading)) + tuple(
        leading + i for i, s in enumerate(size) if s == 1 and self.shape[leading + i] != 1
    )
    if not axes:
        return self
    return np.sum(self, axis=axes, keepdims=True).reshape(size)


def to_copy(self: np.ndarray, dtype: Any) -> np.ndarray:
    """A copy, converted to `dtype` (a gradgen dtype) when one is given."""
    if dtype is None:
        return self.copy()
    return self.astype(dtype.numpy)


def _wrap_dim(dim: int, ndim: int) -> int:
    """PyTorch's maybe_wrap_dim, with its error (a 0-d tensor accepts 0 and -1)."""
    low, high = (-ndim, ndim - 1) if ndim else (-1, 0)
    if not low <= dim <= high:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{low}, {high}], but "
            f"got {dim})"
        )
    return dim + ndim if dim < 0 and ndim else (0 if dim < 0 else dim)


def view(self: np.ndarray, size: Sequence[int]) -> np.ndarray:
    """A view with another shape; an error, as in PyTorch, when no view can have it."""
    shape = tuple(size)
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = int(np.prod([s for s in shape if s != -1]))
    if -1 in shape:
        if known == 0 or self.size % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {self.size}")
        shape = tuple(self.size // known if s == -1 else s for s in shape)
    elif known != self.size:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {self.size}")
    result = self.view()
    try:
        result.shape = shape
    except AttributeError:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least "
            "one dimension spans across two contiguous subspaces). Use .reshape(...) "
            "instead."
        ) from None
    return result


def squeeze(self: np.ndarray, dim: int | None = None) -> np.ndarray:
    """Drop dimensions of size 1 (only `dim`, and only if it has size 1, when given)."""
    if dim is None:
        return np.squeeze(self)
    dim = _wrap_dim(dim, self.ndim)
    if self.ndim == 0 or self.shape[dim] != 1:
        return self.view()
    return np.squeeze(self, axis=dim)


def unsqueeze(self: np.ndarray, dim: int) -> np.ndarray:
    return np.expand_dims(self, _wrap_dim(dim, self.ndim + 1))


def transpose(self: np.ndarray, dim0: int, dim1: int) -> np.ndarray:
    if self.ndim == 0:
        _wrap_dim(dim0, 0)  # checks the dims as PyTorch does, for the error
        _wrap_dim(dim1, 0)
        return self.view()
    return np.swapaxes(self, _wrap_dim(dim0, self.ndim), _wrap_dim(dim1, self.ndim))


def t(self: np.ndarray) -> np.ndarray:
    if self.ndim > 2:
        raise RuntimeError(
            f"t() expects a tensor with <= 2 dimensions, but self is {self.ndim}D"
        )
    return self.T


def select(self: np.ndarray, dim: int, index: int) -> np.ndarray:
    if self.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    dim = _wrap_dim(dim, self.ndim)
    size = self.shape[dim]
    if not -size <= index < size:
        raise IndexError(
            f"select(): index {index} out of range for tensor of size {list(self.shape)} "
            f"at dimension {dim}"
        )
    return self[(slice(None),) * dim + (index,)]


def _slice_bounds(size: int, start: int | None, end: int | None) -> tuple[int, int]:
    """PyTorch's clamping of slice bounds into [0, size]."""
    start = 0 if start is None else start
    end = size if end is None else end
    if start < 0:
        start += size
    if end < 0:
        end += size
    start = min(max(start, 0), size)
    end = min(max(end, start), size)
    return start, end


def slice_(
    self: np.ndarray, dim: int, start: int | None, end: int | None, step: int
) -> np.ndarray:
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    dim = _wrap_dim(dim, self.ndim)
    begin, stop = _slice_bounds(self.shape[dim], start, end)
    return self[(slice(None),) * dim + (slice(begin, stop, step),)]


def split(self: np.ndarray, split_size: int, dim: int) -> list[np.ndarray]:
    dim = _wrap_dim(dim, self.ndim)
    size = self.shape[dim]
    if split_size <= 0 and size:
        raise RuntimeError(
            f"split_size can only be 0 if dimension size is 0, but got dimension size of {size}"
        )
    bounds = list(range(0, size, split_size)) if split_size else [0]
    return [
        self[(slice(None),) * dim + (slice(start, min(start + split_size, size)),)]
        for start in bounds
    ]


def split_with_sizes(self: np.ndarray, split_sizes: Sequence[int], dim: int) -> list[np.ndarray]:
    dim = _wrap_dim(dim, self.ndim)
    if sum(split_sizes) != self.shape[dim]:
        raise RuntimeError(
            "split_with_sizes expects split_sizes to sum exactly to "
            f"{self.shape[dim]} (input tensor's size at dimension {dim}), but got "
            f"split_sizes={list(split_sizes)}"
        )
    pieces, start = [], 0
    for length in split_sizes:
        pieces.append(self[(slice(None),) * dim + (slice(start, start + length),)])
        start += length
    return pieces


def unbind(self: np.ndarray, dim: int) -> list[np.ndarray]:
    dim = _wrap_dim(dim, self.ndim)
    return [self[(slice(None),) * dim + (i,)] for i in range(self.shape[dim])]


def select_backward(
    grad_output: np.ndarray, input_sizes: Sequence[int], dim: int, index: int
) -> np.ndarray:
    """Zeros of the input's shape with `grad_output` at `index` along `dim`."""
    result = np.zeros(tuple(input_sizes), grad_output.dtype)
    select(result, dim, index)[...] = grad_output
    return result


def slice_backward(
    grad_output: np.ndarray,
    input_sizes: Sequence[int],
    dim: int,
    start: int,
    end: int,
    step: int,
) -> np.ndarray:
    """Zeros of the input's shape with `grad_output` in the sliced positions."""
    result = np.zeros(tuple(input_sizes), grad_output.dtype)
    slice_(result, dim, start, end, step)[...] = grad_output
    return result


def _reduced_dtype(self: np.ndarray, dtype: Any) -> Any:
    """PyTorch's sum dtype: as given, else int64 for bool and integer input."""
    if dtype is not None:
        return dtype.numpy
    return np.int64 if self.dtype.kind in "biu" else self.dtype


def _dims(dim: Sequence[int] | None, ndim: int) -> tuple[int, ...] | None:
    if dim is None or len(dim) == 0:
        return None  # all dimensions, as PyTorch's empty/None dim list
    wrapped = tuple(_wrap_dim(d, ndim) for d in dim)
    if len(set(wrapped)) != len(wrapped):
        raise RuntimeError(f"dim {wrapped[0]} appears multiple times in the list of dims")
    return wrapped if ndim else None


def reduce_sum(
    self: np.ndarray, dim: Sequence[int] | None, keepdim: bool, dtype: Any
) -> np.ndarray:
    axes = _dims(dim, self.ndim)
    return np.sum(self, axis=axes, keepdims=keepdim, dtype=_reduced_dtype(self, dtype))


def reduce_mean(
    self: np.ndarray, dim: Sequence[int] | None, keepdim: bool, dtype: Any
) -> np.ndarray:
    if dtype is None and self.dtype.kind not in "fc":
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating "
            f"point or complex dtype. Got: {_TYPE_NAMES.get(self.dtype.name, self.dtype.name)}"
        )
    axes = _dims(dim, self.ndim)
    target = self.dtype if dtype is None else dtype.numpy
    return np.mean(self, axis=axes, keepdims=keepdim, dtype=target)


_TYPE_NAMES = {"int64": "Long", "int32": "Int", "bool": "Bool"}


# ---- batch A: unary elementwise ----
# (functions of this group go here; add their names with `__all__ += [...]`)
#


# ---- batch B: binary, comparison and logical ----
# (functions of this group go here; add their names with `__all__ += [...]`)
#


# ---- batch C: reductions, scans and indexing ----
# (functions of this group go here; add their names with `__all__ += [...]`)
#


# ---- batch D: linear algebra and losses ----
# (functions of this group go here; add their names with `__all__ += [...]`)
#

__all__ += [
    "mm",
    "bmm",
    "dot",
    "vdot",
    "mv",
    "addmm",
    "unsafe_view",
    "mse_loss",
    "mse_loss_backward",
    "nll_loss_forward",
    "nll_loss_backward",
    "nll_loss2d_forward",
    "nll_loss2d_backward",
    "binary_cross_entropy",
    "binary_cross_entropy_backward",
]

# PyTorch's names of the scalar types: ScalarType (`Float`) and C++ (`float`), as its
# messages print them.
_SCALAR_TYPE_NAMES = {
    "bool": "Bool",
    "int32": "Int",
    "int64": "Long",
    "float32": "Float",
    "float64": "Double",
    "complex64": "ComplexFloat",
    "complex128": "ComplexDouble",
}
_CPP_TYPE_NAMES = {
    "bool": "bool",
    "int32": "int",
    "int64": "long int",
    "float32": "float",
    "float64": "double",
    "complex64": "c10::complex<float>",
    "complex128": "c10::complex<double>",
}
# at::Reduction
_NONE, _MEAN, _SUM = 0, 1, 2
_BCE_EPSILON = float(np.float32(1e-12))


def _scalar_type(array: np.ndarray) -> str:
    return _SCALAR_TYPE_NAMES.get(array.dtype.name, array.dtype.name)


def _not_implemented_for(kernel: str, array: np.ndarray) -> NotImplementedError:
    return NotImplementedError(f'"{kernel}" not implemented for \'{_scalar_type(array)}\'')


def _check_not_bool(kernel: str, array: np.ndarray) -> None:
    if array.dtype.kind == "b":
        raise _not_implemented_for(kernel, array)


def _check_floating(kernel: str, array: np.ndarray) -> None:
    """PyTorch's AT_DISPATCH_FLOATING_TYPES: anything else is not implemented."""
    if array.dtype.kind != "f":
        raise _not_implemented_for(kernel, array)


def mm(self: np.ndarray, mat2: np.ndarray) -> np.ndarray:
    """A matrix product of two matrices of one dtype (PyTorch's checks and messages)."""
    if self.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    if self.shape[1] != mat2.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({self.shape[0]}x{self.shape[1]} "
            f"and {mat2.shape[0]}x{mat2.shape[1]})"
        )
    if self.dtype != mat2.dtype:
        raise RuntimeError(
            "expected m1 and m2 to have the same dtype, but got: "
            f"{_CPP_TYPE_NAMES[self.dtype.name]} != {_CPP_TYPE_NAMES[mat2.dtype.name]}"
        )
    _check_not_bool("addmm_impl_cpu_", self)
    return np.matmul(self, mat2)


def bmm(self: np.ndarray, mat2: np.ndarray) -> np.ndarray:
    """Matrix products of two batches of matrices, batch by batch."""
    if self.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if mat2.shape[0] != self.shape[0] or mat2.shape[1] != self.shape[2]:
        raise RuntimeError(
            "Expected size for first two dimensions of batch2 tensor to be: "
            f"[{self.shape[0]}, {self.shape[2]}] but got: [{mat2.shape[0]}, {mat2.shape[1]}]."
        )
    if self.dtype != mat2.dtype:
        raise RuntimeError(
            f"expected scalar type {_scalar_type(self)} but found {_scalar_type(mat2)}"
        )
    _check_not_bool("bmm", self)
    return np.matmul(self, mat2)


def _check_dot(self: np.ndarray, other: np.ndarray) -> None:
    if self.ndim != 1 or other.ndim != 1:
        raise RuntimeError(
            f"1D tensors expected, but got {self.ndim}D and {other.ndim}D tensors"
        )
    if self.dtype != other.dtype:
        raise RuntimeError(
            "dot : expected both vectors to have same dtype, but found "
            f"{_scalar_type(self)} and {_scalar_type(other)}"
        )
    if self.shape[0] != other.shape[0]:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{self.shape[0]}] and src "
            f"[{other.shape[0]}] to have the same number of elements, but got "
            f"{self.shape[0]} and {other.shape[0]} elements respectively"
        )
    _check_not_bool("dot", self)


def dot(self: np.ndarray, tensor: np.ndarray) -> np.ndarray:
    """The inner product of two vectors, without conjugation; a 0-d result."""
    _check_dot(self, tensor)
    return np.asarray(np.dot(self, tensor), dtype=self.dtype)


def vdot(self: np.ndarray, other: np.ndarray) -> np.ndarray:
    """The inner product conjugating the first vector; a 0-d result."""
    _check_dot(self, other)
    return np.asarray(np.vdot(self, other), dtype=self.dtype)


def mv(self: np.ndarray, vec: np.ndarray) -> np.ndarray:
    """A matrix times a vector (PyTorch computes it as addmv, hence its messages)."""
    if self.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(
            f"vector + matrix @ vector expected, got 1, {self.ndim}, {vec.ndim}"
        )
    if self.shape[1] != vec.shape[0]:
        raise RuntimeError(
            f"size mismatch, got input ({self.shape[0]}), mat "
            f"({self.shape[0]}x{self.shape[1]}), vec ({vec.shape[0]})"
        )
    if self.dtype != vec.dtype:
        raise RuntimeError(
            "addmv input tensors must have the same dtype, but got "
            f"{_scalar_type(vec)}, {_scalar_type(self)}, and {_scalar_type(vec)}"
        )
    _check_not_bool("addmv_impl_cpu", self)
    return np.matmul(self, vec)


def _scalar_as(value: Any, array: np.ndarray) -> Any:
    """A Scalar argument converted to the tensor's type, as the kernel reads it."""
    if array.dtype.kind in "iu":
        return int(value.real if isinstance(value, complex) else value)
    if array.dtype.kind == "f":
        if isinstance(value, complex):
            if value.imag != 0:
                raise RuntimeError(
                    f"value cannot be converted to type {_CPP_TYPE_NAMES[array.dtype.name]} "
                    "without overflow"
                )
            value = value.real
        return array.dtype.type(value)
    return array.dtype.type(value)


def addmm(
    self: np.ndarray, mat1: np.ndarray, mat2: np.ndarray, beta: Any, alpha: Any
) -> np.ndarray:
    """beta * self + alpha * (mat1 @ mat2), `self` broadcast to the product's shape.

    As in BLAS, beta == 0 ignores `self` (nan and inf included) and alpha == 0 the
    product."""
    if self.dtype != mat2.dtype:
        raise RuntimeError(
            "self and mat2 must have the same dtype, but got "
            f"{_scalar_type(self)} and {_scalar_type(mat2)}"
        )
    if mat1.dtype != mat2.dtype:
        raise RuntimeError(
            "mat1 and mat2 must have the same dtype, but got "
            f"{_scalar_type(mat1)} and {_scalar_type(mat2)}"
        )
    for name, mat in (("mat1", mat1), ("mat2", mat2)):
        if mat.ndim != 2:
            raise RuntimeError(f"{name} must be a matrix, got {mat.ndim}-D tensor")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(
            f"mat1 and mat2 shapes cannot be multiplied ({mat1.shape[0]}x{mat1.shape[1]} "
            f"and {mat2.shape[0]}x{mat2.shape[1]})"
        )
    _check_not_bool("addmm_impl_cpu_", mat1)
    shape = (mat1.shape[0], mat2.shape[1])
    base = _expand_size(self, shape)
    beta, alpha = _scalar_as(beta, self), _scalar_as(alpha, self)
    if alpha == 0:
        product = np.zeros(shape, self.dtype)
    else:
        product = np.matmul(mat1, mat2)
        if alpha != 1:
            product = product * alpha
    if beta == 0:
        return product.astype(self.dtype, copy=False)
    return (base * beta + product if beta != 1 else base + product).astype(
        self.dtype, copy=False
    )


def _expand_size(self: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """`self` broadcast to `shape` (PyTorch's expand_size, with its messages)."""
    if self.ndim > len(shape):
        expand(self, shape)  # raises PyTorch's "number of sizes provided" error
    leading = len(shape) - self.ndim
    for i, extent in enumerate(self.shape):
        target = shape[leading + i]
        if extent != 1 and extent != target:
            raise RuntimeError(
                f"The expanded size of the tensor ({target}) must match the existing size "
                f"({extent}) at non-singleton dimension {leading + i}.  Target sizes: "
                f"{list(shape)}.  Tensor sizes: {list(self.shape)}"
            )
    return np.broadcast_to(self, shape)


def unsafe_view(self: np.ndarray, size: Sequence[int]) -> np.ndarray:
    """`view` whose result autograd does not treat as a view (PyTorch's _unsafe_view,
    used on fresh results that nothing else refers to). An input whose memory is not
    C-ordered (a clone of a transposed or expanded tensor: gradgen's clone keeps the
    layout) is made so first, as PyTorch's reshape clones with contiguous format."""
    return view(np.ascontiguousarray(self), size)


def _reduce_loss(loss: np.ndarray, reduction: int) -> np.ndarray:
    """PyTorch's apply_loss_reduction: mean, sum, or the loss unreduced."""
    if reduction == _MEAN:
        if loss.size == 0:
            return np.asarray(np.nan, loss.dtype)
        return np.asarray(np.sum(loss) / loss.size, loss.dtype)
    if reduction == _SUM:
        return np.asarray(np.sum(loss), loss.dtype)
    return loss


def mse_loss(self: np.ndarray, target: np.ndarray, reduction: int) -> np.ndarray:
    """(self - target) ** 2, reduced (inputs already promoted to one dtype)."""
    _check_floating("mse_cpu", self)
    if reduction not in (_NONE, _MEAN, _SUM):
        raise RuntimeError(
            "reduction == Reduction::Mean || reduction == Reduction::Sum INTERNAL ASSERT "
            "FAILED"
        )
    difference = self - target
    return _reduce_loss(difference * difference, reduction)


def mse_loss_backward(
    grad_output: np.ndarray, self: np.ndarray, target: np.ndarray, reduction: int
) -> np.ndarray:
    """2 * (self - target) * grad_output, divided by self's numel for the mean (as
    PyTorch: self's own numel, even when target broadcasts it to more elements)."""
    _check_floating("mse_backward_cpu_out", self)
    norm = 2.0 / self.size if reduction == _MEAN and self.size else 2.0
    return (norm * (self - target) * grad_output).astype(self.dtype, copy=False)


def _check_nll_dtypes(
    kernel: str, self: np.ndarray, target: np.ndarray, weight: np.ndarray | None
) -> None:
    if target.dtype != np.int64:
        raise RuntimeError(
            f"expected target dtype to be Long or Byte, but got {_scalar_type(target)}"
        )
    _check_floating(kernel, self)
    if weight is not None and weight.dtype != self.dtype:
        raise RuntimeError(
            f"expected scalar type {_scalar_type(self)} but found {_scalar_type(weight)}"
        )


def _nll_rows(
    rows: np.ndarray, targets: np.ndarray, weight: np.ndarray | None, ignore_index: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For (N, C) rows and N targets: the ignored mask, the targets made safe to index
    with, and each row's weight (0 where ignored); out-of-range targets raise."""
    ignored = targets == ignore_index
    n_classes = rows.shape[-1]
    bad = ~ignored & ((targets < 0) | (targets >= n_classes))
    if bad.any():
        raise IndexError(f"Target {targets[bad][0]} is out of bounds.")
    safe = np.where(ignored, 0, targets)
    if weight is None:
        weights = np.ones(targets.shape, rows.dtype)
    else:
        weights = weight[safe]
    return ignored, safe, np.where(ignored, 0, weights).astype(rows.dtype, copy=False)


def _nll_reduced(
    rows: np.ndarray,
    targets: np.ndarray,
    weight: np.ndarray | None,
    reduction: int,
    ignore_index: int,
) -> tuple[np.ndarray, np.ndarray]:
    """The reduced loss and the total weight of (N, C) rows."""
    dtype = rows.dtype
    if targets.size == 0:
        output = np.nan if reduction == _MEAN else 0.0
        return np.asarray(output, dtype), np.asarray(0.0, dtype)
    ignored, safe, weights = _nll_rows(rows, targets, weight, ignore_index)
    picked = rows[np.arange(len(safe)), safe]
    loss = -np.sum(np.where(ignored, 0, picked * weights))
    total_weight = np.sum(weights)
    if reduction == _MEAN:
        with np.errstate(divide="ignore", invalid="ignore"):
            loss = loss / total_weight
    return np.asarray(loss, dtype), np.asarray(total_weight, dtype)


def _nll_unreduced(
    rows: np.ndarray, targets: np.ndarray, weight: np.ndarray | None, ignore_index: int
) -> np.ndarray:
    """-weight[t] * row[t] per row, 0 for ignored rows."""
    ignored, safe, weights = _nll_rows(rows, targets, weight, ignore_index)
    picked = rows[np.arange(len(safe)), safe]
    return np.where(ignored, 0, -picked * weights).astype(rows.dtype, copy=False)


def nll_loss_forward(
    self: np.ndarray,
    target: np.ndarray,
    weight: np.ndarray | None,
    reduction: int,
    ignore_index: int,
) -> tuple[np.ndarray, np.ndarray]:
    """The negative log likelihood of 1-d or (N, C) log-probabilities, and the total
    weight of the targets counted (PyTorch's nll_loss_forward)."""
    _check_nll_shapes(self, target, weight)
    _check_nll_dtypes("nll_loss_out_frame", self, target, weight)
    rows, targets = (self[None], target.reshape(1)) if self.ndim == 1 else (self, target)
    if reduction == _NONE and self.ndim == 2:
        return _nll_unreduced(rows, targets, weight, ignore_index), np.zeros((), self.dtype)
    return _nll_reduced(rows, targets, weight, reduction, ignore_index)


def _check_nll_shapes(
    self: np.ndarray, target: np.ndarray, weight: np.ndarray | None
) -> None:
    if not 0 < self.ndim <= 2:
        raise RuntimeError("input tensor should be 1D or 2D")
    if target.ndim > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if self.ndim == 1 and target.ndim == 1 and target.shape[0] != 1:
        raise ValueError(
            "For 1D input, 1D target must have size 1, but got target size: "
            f"{target.shape[0]}"
        )
    if self.ndim == 2:
        if target.ndim == 0:
            raise IndexError("Dimension specified as 0 but tensor has no dimensions")
        if self.shape[0] != target.shape[0]:
            raise RuntimeError(
                f"size mismatch (got input: {list(self.shape)}, target: "
                f"{list(target.shape)})"
            )
    n_classes = self.shape[-1]
    if weight is not None and (weight.ndim != 1 or weight.size != n_classes):
        raise RuntimeError(
            f"weight tensor should be defined either for all {n_classes} classes or no "
            f"classes but got weight tensor of shape: {list(weight.shape)}"
        )


def nll_loss_backward(
    grad_output: np.ndarray,
    self: np.ndarray,
    target: np.ndarray,
    weight: np.ndarray | None,
    reduction: int,
    ignore_index: int,
    total_weight: np.ndarray,
) -> np.ndarray:
    """Zeros of self's shape with -weight[t] * grad (over the total weight for the
    mean) at each counted target."""
    _check_nll_shapes(self, target, weight)
    _check_nll_dtypes("nll_loss_backward_out_frame", self, target, weight)
    rows, targets = (self[None], target.reshape(1)) if self.ndim == 1 else (self, target)
    grad_rows = _nll_grad_rows(
        grad_output, rows, targets, weight, reduction, ignore_index, total_weight,
        unreduced=reduction == _NONE and self.ndim == 2,
    )
    return grad_rows.reshape(self.shape)


def _nll_grad_rows(
    grad_output: np.ndarray,
    rows: np.ndarray,
    targets: np.ndarray,
    weight: np.ndarray | None,
    reduction: int,
    ignore_index: int,
    total_weight: np.ndarray,
    unreduced: bool,
) -> np.ndarray:
    """The gradient of the loss of (N, C) rows: -weight[t] * grad at each counted
    target (grad over the total weight for the mean), zeros elsewhere."""
    if total_weight.size != 1:
        raise RuntimeError(
            "expected total_weight to be a  single element tensor, got: "
            f"{list(total_weight.shape)} ({total_weight.size} elements)"
        )
    if unreduced:
        if grad_output.size != len(targets):
            raise RuntimeError(
                f"Expected a tensor of {len(targets)} elements for grad_output, but got: "
                f"{list(grad_output.shape)}"
            )
    elif grad_output.size != 1:
        raise RuntimeError(
            "Expected a single element grad_output tensor, but got: "
            f"{list(grad_output.shape)}"
        )
    grad_rows = np.zeros(rows.shape, rows.dtype)
    if targets.size == 0:
        return grad_rows
    ignored, safe, weights = _nll_rows(rows, targets, weight, ignore_index)
    kept = ~ignored
    with np.errstate(divide="ignore", invalid="ignore"):
        if unreduced:
            values = -weights[kept] * grad_output.reshape(-1)[kept]
        else:
            scale = grad_output.reshape(())
            if reduction == _MEAN:
                scale = scale / total_weight.reshape(())
            values = weights[kept] * -scale
    grad_rows[np.arange(len(safe))[kept], safe[kept]] = values
    return grad_rows


def _check_nll2d(self: np.ndarray, target: np.ndarray, weight: np.ndarray | None) -> None:
    if target.ndim != 3:
        raise RuntimeError(
            "only batches of spatial targets supported (3D tensors) but got targets of "
            f"dimension: {target.ndim}"
        )
    if self.ndim != 4:
        raise RuntimeError(
            "only batches of spatial inputs supported (4D tensors), but got input of "
            f"dimension: {self.ndim}"
        )
    if weight is not None and weight.size != self.shape[1]:
        raise RuntimeError("weight tensor should be defined either for all or no classes")
    if (self.shape[0], self.shape[2], self.shape[3]) != target.shape:
        raise RuntimeError(
            f"size mismatch (got input: {list(self.shape)} , target: {list(target.shape)}"
        )


def _nll2d_rows(self: np.ndarray, target: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(N, C, H, W) as (N*H*W, C) rows and (N, H, W) targets as N*H*W targets."""
    return np.moveaxis(self, 1, -1).reshape(-1, self.shape[1]), target.reshape(-1)


def nll_loss2d_forward(
    self: np.ndarray,
    target: np.ndarray,
    weight: np.ndarray | None,
    reduction: int,
    ignore_index: int,
) -> tuple[np.ndarray, np.ndarray]:
    """nll_loss_forward for (N, C, H, W) inputs and (N, H, W) targets."""
    _check_nll2d(self, target, weight)
    _check_nll_dtypes("nll_loss2d_forward_out_frame", self, target, weight)
    rows, targets = _nll2d_rows(self, target)
    if reduction == _NONE:
        loss = _nll_unreduced(rows, targets, weight, ignore_index)
        return loss.reshape(target.shape), np.zeros((), self.dtype)
    return _nll_reduced(rows, targets, weight, reduction, ignore_index)


def nll_loss2d_backward(
    grad_output: np.ndarray,
    self: np.ndarray,
    target: np.ndarray,
    weight: np.ndarray | None,
    reduction: int,
    ignore_index: int,
    total_weight: np.ndarray,
) -> np.ndarray:
    _check_nll2d(self, target, weight)
    _check_nll_dtypes("nll_loss2d_backward_out_frame", self, target, weight)
    rows, targets = _nll2d_rows(self, target)
    grad_rows = _nll_grad_rows(
        grad_output, rows, targets, weight, reduction, ignore_index, total_weight,
        unreduced=reduction == _NONE,
    )
    n, c, h, w = self.shape
    return np.moveaxis(grad_rows.reshape(n, h, w, c), -1, 1).copy()


def _check_bce(
    self: np.ndarray, target: np.ndarray, weight: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray | None]:
    """PyTorch's checks of binary_cross_entropy's inputs; target and weight broadcast
    to self's shape (weight in self's dtype)."""
    _check_floating("binary_cross_entropy", self)
    if target.dtype != self.dtype:
        raise RuntimeError(
            f"Found dtype {_scalar_type(target)} but expected {_scalar_type(self)}"
        )
    try:
        target = np.broadcast_to(target, self.shape)
    except ValueError:
        raise _broadcast_error(self.shape, target.shape) from None
    if weight is not None:
        shape = np.broadcast_shapes(self.shape, weight.shape) if _broadcasts(
            self.shape, weight.shape
        ) else None
        if shape is None:
            raise _broadcast_error(self.shape, weight.shape)
        if shape != self.shape:
            raise RuntimeError(
                f"output with shape {list(self.shape)} doesn't match the broadcast shape "
                f"{list(shape)}"
            )
        weight = np.broadcast_to(weight.astype(self.dtype, copy=False), self.shape)
    return target, weight


def _broadcasts(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    try:
        np.broadcast_shapes(a, b)
    except ValueError:
        return False
    return True


def _broadcast_error(a: tuple[int, ...], b: tuple[int, ...]) -> RuntimeError:
    for offset in range(1, min(len(a), len(b)) + 1):
        size_a, size_b = a[-offset], b[-offset]
        if size_a != size_b and size_a != 1 and size_b != 1:
            return RuntimeError(
                f"The size of tensor a ({size_a}) must match the size of tensor b "
                f"({size_b}) at non-singleton dimension {max(len(a), len(b)) - offset}"
            )
    return RuntimeError(f"shapes {list(a)} and {list(b)} do not broadcast")


def binary_cross_entropy(
    self: np.ndarray, target: np.ndarray, weight: np.ndarray | None, reduction: int
) -> np.ndarray:
    """-weight * (target * log(self) + (1 - target) * log(1 - self)), each logarithm
    clamped at -100 as PyTorch does, reduced."""
    target, weight = _check_bce(self, target, weight)
    if not np.all((self >= 0) & (self <= 1)):
        raise RuntimeError("all elements of input should be between 0 and 1")
    if not np.all((target >= 0) & (target <= 1)):
        raise RuntimeError("all elements of target should be between 0 and 1")
    with np.errstate(divide="ignore"):
        log_self = np.maximum(np.log(self), -100)
        log_one_minus_self = np.maximum(np.log1p(-self), -100)
    loss = (target - 1) * log_one_minus_self - target * log_self
    if weight is not None:
        loss = loss * weight
    return _reduce_loss(loss.astype(self.dtype, copy=False), reduction)


def binary_cross_entropy_backward(
    grad_output: np.ndarray,
    self: np.ndarray,
    target: np.ndarray,
    weight: np.ndarray | None,
    reduction: int,
) -> np.ndarray:
    """grad * (self - target) / max((1 - self) * self, 1e-12), times weight, divided by
    the number of elements for the mean."""
    target, weight = _check_bce(self, target, weight)
    # PyTorch's EPSILON is the float 1e-12, also in double kernels.
    grad_input = grad_output * (self - target) / np.maximum((1 - self) * self, _BCE_EPSILON)
    if weight is not None:
        grad_input = grad_input * weight
    if reduction == _MEAN and self.size:
        grad_input = grad_input / self.size
    return np.broadcast_to(grad_input, self.shape).astype(self.dtype)
