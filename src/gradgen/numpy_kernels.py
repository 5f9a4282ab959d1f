"""numpy functions that native_functions.yaml kernel expressions may call.

A kernel expression is one Python expression over numpy arrays; where one numpy call
does not say it (negative sizes in `expand`, summing to a shape), the helper is here.
`__all__` is the list the generator allows in kernel expressions (it reads it without
importing this module).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from .dtypes import get_default_dtype
from .dtypes import SCALAR_TYPE_NAMES as _SCALAR_TYPE_NAMES
from .dtypes import scalar_type_name as _scalar_type_name

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


# PyTorch's refusal to write into memory that several elements share (an expanded
# tensor): in-place kernels, copy_into and Tensor.__setitem__ all say it this way.
OVERLAPPING_WRITE_ERROR = (
    "unsupported operation: more than one element of the written-to tensor refers to a "
    "single memory location. Please clone() the tensor before performing the operation."
)


def broadcastable(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    """Whether shapes `a` and `b` broadcast together."""
    try:
        np.broadcast_shapes(a, b)
    except ValueError:
        return False
    return True


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
    target = []
    for i, extent in enumerate(size):
        if i < leading:
            if extent == -1:
                raise RuntimeError(
                    f"The expanded size of the tensor (-1) isn't allowed in a leading, "
                    f"non-existing dimension {i}"
                )
        else:
            existing = self.shape[i - leading]
            if extent == -1:
                extent = existing
            elif extent != existing and existing != 1:
                raise RuntimeError(
                    f"The expanded size of the tensor ({extent}) must match the existing "
                    f"size ({existing}) at non-singleton dimension {i}.  Target sizes: "
                    f"{list(size)}.  Tensor sizes: {list(self.shape)}"
                )
        if extent < 0:
            raise RuntimeError(
                f"Trying to create tensor with negative dimension {extent}: {list(size)}"
            )
        target.append(extent)
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
        leading + i
        for i, s in enumerate(size)
        if s == 1 and self.shape[leading + i] != 1
    )
    if not axes:
        # Nothing to sum; a new tensor must not share memory (and not its version
        # counter) with its input, so this is a copy.
        return self.reshape(size).copy()
    summed: np.ndarray = np.add.reduce(self, axis=axes, keepdims=True)
    return summed.reshape(size)


def to_copy(self: np.ndarray, dtype: Any) -> np.ndarray:
    """A copy, converted to `dtype` (a gradgen dtype) when one is given."""
    if dtype is None:
        return self.copy()
    if self.dtype.kind == "c" and dtype.numpy.kind != "c":
        # PyTorch's warning (a UserWarning), not numpy's ComplexWarning.
        warnings.warn(
            "Casting complex values to real discards the imaginary part",
            UserWarning,
            stacklevel=2,
        )
        self = self.real
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
            raise RuntimeError(
                f"shape '{list(shape)}' is invalid for input of size {self.size}"
            )
        shape = tuple(self.size // known if s == -1 else s for s in shape)
    elif known != self.size:
        raise RuntimeError(
            f"shape '{list(shape)}' is invalid for input of size {self.size}"
        )
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
    # The Ellipsis keeps the result an array (a 0-d view for 1-d input), never a
    # numpy scalar copy, so the result shares memory with `self`.
    return self[(slice(None),) * dim + (index, Ellipsis)]


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


def split_with_sizes(
    self: np.ndarray, split_sizes: Sequence[int], dim: int
) -> list[np.ndarray]:
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
    if self.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
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
        raise RuntimeError(
            f"dim {wrapped[0]} appears multiple times in the list of dims"
        )
    return wrapped if ndim else None


def reduce_sum(
    self: np.ndarray, dim: Sequence[int] | None, keepdim: bool, dtype: Any
) -> np.ndarray:
    axes = _dims(dim, self.ndim)
    # np.sum on an ndarray is this reduction behind two Python-level wrappers.
    return np.add.reduce(self, axis=axes, dtype=_reduced_dtype(self, dtype), keepdims=keepdim)  # type: ignore[call-overload]  # numpy's stubs miss this valid call


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
    count = self.size if axes is None else math.prod(self.shape[a] for a in axes)
    # np.mean's arithmetic (a sum in `target`, divided by the count), without its
    # Python-level wrappers; an empty reduction is nan, as PyTorch's.
    total = np.add.reduce(self, axis=axes, dtype=target, keepdims=keepdim)  # type: ignore[call-overload]  # numpy's stubs miss this valid call
    if count:
        return np.true_divide(total, count, dtype=target)
    with np.errstate(invalid="ignore"):
        return np.true_divide(total, 0.0).astype(target)


_TYPE_NAMES = {"int64": "Long", "int32": "Int", "bool": "Bool"}


# ---- batch A: unary elementwise ----
# (functions of this group go here; add their names with `__all__ += [...]`)
#
__all__ += [
    "int_to_float",
    "absolute",
    "absolute_",
    "sign",
    "sgn",
    "sigmoid",
    "relu",
    "gelu",
    "silu",
    "erf",
    "rounding",
    "round_decimals",
    "angle",
    "view_as_real",
    "view_as_complex",
    "sigmoid_backward",
    "tanh_backward",
    "threshold_backward",
    "gelu_backward",
    "silu_backward",
]

# Like the generated kernels, these helpers produce inf and nan silently (PyTorch
# does); numpy's floating-point warnings raised in this module are ignored.
warnings.filterwarnings(
    "ignore",
    message="(divide by zero|invalid value|overflow|underflow) encountered",
    category=RuntimeWarning,
    module=__name__,
)


_M_SQRT1_2 = 0.70710678118654752440  # 1/sqrt(2)
_M_2_SQRTPI = 1.12837916709551257390  # 2/sqrt(pi)
_GELU_BETA = 2.0**0.5 * _M_2_SQRTPI * 0.5  # sqrt(2/pi), PyTorch's kBeta for 'tanh'
_GELU_KAPPA = 0.044715


def int_to_float(self: np.ndarray) -> np.ndarray:
    """Bool and integer input of a floating-point function, in the default float dtype
    (PyTorch's promote_integer_inputs_to_float); other dtypes unchanged."""
    if self.dtype.kind in "biu":
        return self.astype(get_default_dtype().numpy)
    return self


def absolute(self: np.ndarray) -> np.ndarray:
    """|self|; complex input gives the real dtype of the same precision."""
    if self.dtype.kind == "b":
        raise _not_implemented_for("abs_cpu", self)
    return np.abs(self)


def absolute_(self: np.ndarray) -> np.ndarray:
    """abs_: complex tensors cannot hold their (real) absolute value in place."""
    if self.dtype.kind == "c":
        raise RuntimeError("In-place abs is not supported for complex tensors.")
    return absolute(self)


def sign(self: np.ndarray) -> np.ndarray:
    """-1, 0 or 1 in self's dtype, as PyTorch's (0 < x) - (x < 0): NaN and -0.0 give
    0 (numpy's sign gives NaN and -0.0)."""
    if self.dtype.kind == "c":
        raise NotImplementedError(
            "Unlike NumPy, torch.sign is not intended to support complex numbers. "
            "Please use torch.sgn instead."
        )
    if self.dtype.kind == "b":
        return self.copy()
    return (self > 0).astype(self.dtype) - (self < 0).astype(self.dtype)


def sgn(self: np.ndarray) -> np.ndarray:
    """sign for real input; z / |z| for complex input, 0 where z == 0."""
    if self.dtype.kind != "c":
        return sign(self)
    magnitude = np.abs(self)
    return np.where(magnitude == 0, 0, self / magnitude).astype(self.dtype)


def sigmoid(self: np.ndarray) -> np.ndarray:
    """1 / (1 + exp(-x)), PyTorch's formula (real and complex)."""
    return np.reciprocal(1 + np.exp(-self))


def relu(self: np.ndarray) -> np.ndarray:
    """max(x, 0), keeping NaN and -0.0 (PyTorch's clamp_min(0)); dtype kept."""
    if self.dtype.kind == "b":
        raise RuntimeError("Boolean inputs not supported for relu")
    if self.dtype.kind == "c":
        raise NotImplementedError("clamp is not supported for complex types")
    return np.where(self < 0, np.zeros((), self.dtype), self)


_ERF = np.frompyfunc(math.erf, 1, 1)


def _erf_float64(x: np.ndarray) -> np.ndarray:
    """erf in float64, element by element (0-d arrays and empty arrays included)."""
    return np.asarray(_ERF(np.asarray(x, np.float64)), dtype=np.float64)


def erf(self: np.ndarray) -> np.ndarray:
    """The error function (numpy has none: math.erf per element), int to float."""
    if self.dtype.kind == "c":
        raise _not_implemented_for("erf_vml_cpu", self)
    x = int_to_float(self)
    return _erf_float64(x).astype(x.dtype)


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


def sigmoid_backward(grad_output: np.ndarray, output: np.ndarray) -> np.ndarray:
    """grad_output * conj((1 - output) * output), output being sigmoid(x)."""
    if output.dtype.kind not in "fc":
        raise _not_implemented_for("sigmoid_backward_cpu", output)
    return grad_output * np.conjugate((1 - output) * output)


def tanh_backward(grad_output: np.ndarray, output: np.ndarray) -> np.ndarray:
    """grad_output * conj(1 - output**2), output being tanh(x)."""
    if output.dtype.kind not in "fc":
        raise _not_implemented_for("tanh_backward_cpu", output)
    return grad_output * np.conjugate(1 - output * output)


def threshold_backward(
    grad_output: np.ndarray, self: np.ndarray, threshold: Any
) -> np.ndarray:
    """grad_output where self > threshold, else 0 (NaN in self lets the gradient
    through, as PyTorch's `self <= threshold ? 0 : grad`)."""
    if self.dtype.kind in "bc":
        raise _not_implemented_for("threshold_cpu", self)
    return np.where(self <= threshold, np.zeros((), grad_output.dtype), grad_output)


_ROUNDING = {"floor": np.floor, "ceil": np.ceil, "round": np.rint, "trunc": np.trunc}


def rounding(self: np.ndarray, name: str) -> np.ndarray:
    """floor, ceil, round (half to even) or trunc; integers are returned unchanged."""
    kind = self.dtype.kind
    if kind == "b":
        raise _not_implemented_for(f"{name}_vml_cpu", self)
    if kind == "c":
        if name == "round":
            raise _not_implemented_for("round_vml_cpu", self)
        raise NotImplementedError(f"{name} is not supported for complex inputs")
    if kind in "iu":
        return self.copy()
    return _ROUNDING[name](self)


def round_decimals(self: np.ndarray, decimals: int) -> np.ndarray:
    """Round half to even at `decimals` digits (negative: left of the point), as
    PyTorch: nearbyint(x * 10**d) / 10**d, or nearbyint(x / 10**-d) * 10**-d."""
    if self.dtype.kind != "f":
        raise _not_implemented_for("round_cpu", self)
    if decimals >= 0:
        scale = self.dtype.type(10.0**decimals)
        return np.rint(self * scale) / scale
    scale = self.dtype.type(10.0 ** (-decimals))
    return np.rint(self / scale) * scale


def angle(self: np.ndarray) -> np.ndarray:
    """The argument of complex input; for real input pi where x < 0, NaN where x is
    NaN, else 0 (so -0.0 gives 0, unlike numpy's arctan2)."""
    if self.dtype.kind == "c":
        return np.angle(self)
    x = int_to_float(self)
    return np.where(x < 0, x.dtype.type(np.pi), np.where(np.isnan(x), x, 0)).astype(
        x.dtype
    )


def _storage_offset(self: np.ndarray) -> int:
    """Where `self` starts in the memory of the array that owns it, in bytes."""
    root = self
    while isinstance(root.base, np.ndarray):
        root = root.base
    return self.__array_interface__["data"][0] - root.__array_interface__["data"][0]


def view_as_real(self: np.ndarray) -> np.ndarray:
    """A real view of a complex array with a last dimension of size 2: [real, imag]."""
    if self.dtype.kind != "c":
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return self[..., None].view(self.real.dtype)


def view_as_complex(self: np.ndarray) -> np.ndarray:
    """A complex view of a float array whose last dimension is [real, imag], with
    PyTorch's checks (strides and offset in whole complex elements)."""
    if self.dtype.kind != "f":
        name = _SCALAR_TYPE_NAMES.get(self.dtype.name, self.dtype.name)
        raise RuntimeError(
            "view_as_complex is only supported for half, float and double tensors, but "
            f"got a tensor of scalar type: {name}"
        )
    if self.ndim == 0:
        raise RuntimeError("Input tensor must have one or more dimensions")
    if self.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    complex_type = np.complex128 if self.dtype == np.float64 else np.complex64
    if self.size == 0:
        # numpy gives an empty array arbitrary strides; there is no element to share.
        return np.empty(self.shape[:-1], complex_type)
    item = self.itemsize
    if self.strides[-1] != item:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(stride % (2 * item) for stride in self.strides[:-1]):
        raise RuntimeError(
            "Tensor must have a stride divisible by 2 for all but last dimension"
        )
    if _storage_offset(self) % (2 * item):
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    return self.view(complex_type)[..., 0]


# ---- batch B: binary, comparison and logical ----
# (functions of this group go here; add their names with `__all__ += [...]`)
#

__all__ += [
    "into",
    "div_true",
    "div_mode",
    "div_floor",
    "reverse_subtract",
    "extremum",
    "atan2_floating",
    "hypot_floating",
    "where_select",
    "clamp_scalars",
    "clamp_tensors",
    "modulo",
    "compare",
    "logical",
    "bitwise",
]


def _cpu_kernel_missing(kernel: str, array: np.ndarray) -> NotImplementedError:
    """PyTorch's dispatch error for a dtype a kernel does not handle."""
    return NotImplementedError(
        f"\"{kernel}_cpu\" not implemented for '{_scalar_type_name(array)}'"
    )


def _is_integral(array: np.ndarray) -> bool:
    """Bool or integer (PyTorch's isIntegralType with includeBool=True)."""
    return np.asarray(array).dtype.kind in "biu"


def _check_broadcast(*operands: Any) -> None:
    """PyTorch's error when the (array) operands of an elementwise kernel do not
    broadcast; numbers and None are skipped."""
    arrays = [a for a in operands if isinstance(a, np.ndarray)]
    try:
        np.broadcast_shapes(*(a.shape for a in arrays))
    except ValueError as error:
        from .variable_type_utils import broadcast_error

        raise broadcast_error(error, *arrays) from None


class _Operand:
    """An array as `dtypes.result_type` sees a tensor: a genuine (not wrapped) tensor."""

    __slots__ = ("_data", "_is_wrapped_number")

    def __init__(self, data: np.ndarray) -> None:
        self._data = data
        self._is_wrapped_number = False


def _common_dtype(*operands: Any) -> np.dtype:
    """PyTorch's result_type of arrays (tensors) and Python numbers (wrapped numbers),
    for kernels whose result dtype is not the common dtype (comparisons, clamp with
    optional bounds). None operands are skipped."""
    from .dtypes import result_type

    present = [
        _Operand(o) if isinstance(o, np.ndarray) else o
        for o in operands
        if o is not None
    ]
    return result_type(*present).numpy


def into(out: np.ndarray, ufunc: np.ufunc, *operands: Any) -> np.ndarray:
    """`ufunc(*operands)` computed straight into `out`, an in-place operator's memory
    (no temporary, no copy). When numpy cannot (a result dtype `out` cannot hold, a
    shape that does not match, read-only memory) it computes a new array instead,
    and the in-place kernel's copy_into rejects it with PyTorch's message; numpy checks
    all three before it writes anything."""
    try:
        return ufunc(*operands, out=out, casting="same_kind")
    except (TypeError, ValueError):
        return ufunc(*operands)


def div_true(self: np.ndarray, other: Any) -> np.ndarray:
    """True division of operands already in their (floating or complex) common dtype:
    the YAML entries promote integer inputs to float, as PyTorch does."""
    return np.true_divide(self, other)


def _check_integer_divisor(other: Any) -> None:
    if np.any(np.asarray(other) == 0):
        raise RuntimeError("ZeroDivisionError")


def div_floor(self: np.ndarray, other: Any) -> np.ndarray:
    """Division rounded down (PyTorch's div_floor: Python's `//` for floats, including
    its results for zero and infinite divisors)."""
    if self.dtype.kind in "bc":
        raise _cpu_kernel_missing("div_floor", self)
    if _is_integral(self):
        _check_integer_divisor(other)
        return np.floor_divide(self, other)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return np.floor_divide(self, other)


def _div_trunc(self: np.ndarray, other: Any) -> np.ndarray:
    """Division rounded toward zero (PyTorch's div_trunc)."""
    if self.dtype.kind in "bc":
        raise _cpu_kernel_missing("div_trunc", self)
    if _is_integral(self):
        _check_integer_divisor(other)
        quotient = np.floor_divide(self, other)
        # floor and trunc differ where the division is inexact and the signs differ
        inexact = np.remainder(self, other) != 0
        return quotient + (inexact & ((self < 0) != (np.asarray(other) < 0)))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return np.trunc(np.true_divide(self, other))


def div_mode(self: np.ndarray, other: Any, rounding_mode: str | None) -> np.ndarray:
    """`div` with rounding_mode None (true division), 'trunc' or 'floor'."""
    if rounding_mode is None:
        return div_true(self, other)
    if rounding_mode == "trunc":
        return _div_trunc(self, other)
    if rounding_mode == "floor":
        return div_floor(self, other)
    raise RuntimeError(
        "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
        f"'{rounding_mode}'"
    )


def _check_alpha(common: np.dtype, alpha: Any) -> None:
    """PyTorch's alpha_check: alpha's kind must fit the result dtype."""
    if isinstance(alpha, (bool, np.bool_)) and common.kind != "b":
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if isinstance(alpha, (float, np.floating)) and common.kind in "biu":
        raise RuntimeError(
            "For integral input tensors, argument alpha must not be a floating point number."
        )
    if isinstance(alpha, (complex, np.complexfloating)) and common.kind != "c":
        raise RuntimeError(
            "For non-complex input tensors, argument alpha must not be a complex number."
        )


def reverse_subtract(self: np.ndarray, other: Any, alpha: Any) -> np.ndarray:
    """`other - alpha * self` in the operands' common dtype, with PyTorch's sub_check
    (bool tensors cannot be subtracted)."""
    if self.dtype == np.bool_ or np.asarray(other).dtype == np.bool_:
        if self.dtype == np.bool_ and np.asarray(other).dtype == np.bool_:
            raise RuntimeError(
                "Subtraction, the `-` operator, with two bool tensors is not supported. "
                "Use the `^` or `logical_xor()` operator instead."
            )
        raise RuntimeError(
            "Subtraction, the `-` operator, with a bool tensor is not supported. If you "
            "are trying to invert a mask, use the `~` or `logical_not()` operator instead."
        )
    common = _common_dtype(self, other)
    _check_alpha(common, alpha)
    _check_broadcast(self, other)
    minuend = np.asarray(other).astype(common, copy=False)
    subtrahend = self.astype(common, copy=False)
    if alpha != 1:
        subtrahend = subtrahend * np.asarray(alpha).astype(common)
    return np.subtract(minuend, subtrahend)


def extremum(name: str, ufunc: Any, self: np.ndarray, other: np.ndarray) -> np.ndarray:
    """maximum / minimum (NaN-propagating) and fmax / fmin (NaN-ignoring)."""
    if self.dtype.kind == "c":
        raise RuntimeError(f"{name} not implemented for complex tensors.")
    return ufunc(self, other)


def atan2_floating(self: np.ndarray, other: np.ndarray) -> np.ndarray:
    """atan2 of floating operands (in their common dtype)."""
    if self.dtype.kind == "c":
        raise _cpu_kernel_missing("atan2", self)
    return np.arctan2(self, other)


def hypot_floating(self: np.ndarray, other: np.ndarray) -> np.ndarray:
    """hypot, which PyTorch has for floating dtypes only."""
    if self.dtype.kind not in "f":
        raise _cpu_kernel_missing("hypot", self)
    return np.hypot(self, other)


def where_select(
    condition: np.ndarray, self: np.ndarray, other: np.ndarray
) -> np.ndarray:
    """`self` where `condition` holds, else `other` (broadcast together)."""
    if condition.dtype != np.bool_:
        raise RuntimeError(
            "where expected condition to be a boolean tensor, but got a tensor with dtype "
            f"{_scalar_type_name(condition)}"
        )
    _check_broadcast(condition, self, other)
    return np.where(condition, self, other)


def clamp_scalars(self: np.ndarray, min: Any, max: Any) -> np.ndarray:
    """clamp with Scalar bounds (either may be None), in PyTorch's result dtype."""
    if min is None and max is None:
        raise RuntimeError(
            "torch.clamp: At least one of 'min' or 'max' must not be None"
        )
    common = _common_dtype(self, min, max)
    if common.kind == "c":
        raise NotImplementedError("clamp is not supported for complex types")
    result = self.astype(common, copy=False)
    if min is not None:
        result = np.maximum(result, np.asarray(min, common))
    if max is not None:
        result = np.minimum(result, np.asarray(max, common))
    return np.array(result, common)


def clamp_tensors(
    self: np.ndarray, min: np.ndarray | None, max: np.ndarray | None
) -> np.ndarray:
    """clamp with Tensor bounds (either may be None), broadcast with `self`."""
    if min is None and max is None:
        raise RuntimeError(
            "torch.clamp: At least one of 'min' or 'max' must not be None"
        )
    if self.dtype.kind == "c":
        raise NotImplementedError("clamp is not supported for complex types")
    common = _common_dtype(self, min, max)
    if common.kind == "c":  # a complex bound: the kernel's dispatch error
        raise NotImplementedError(
            f"\"clamp_cpu\" not implemented for '{_SCALAR_TYPE_NAMES[common.name]}'"
        )
    _check_broadcast(self, min, max)
    result = self.astype(common, copy=False)
    if min is not None:
        result = np.maximum(result, min.astype(common, copy=False))
    if max is not None:
        result = np.minimum(result, max.astype(common, copy=False))
    return np.array(result, common)


def modulo(name: str, ufunc: Any, self: np.ndarray, other: Any) -> np.ndarray:
    """fmod (sign of the dividend) and remainder (sign of the divisor), with PyTorch's
    error for an integer division by zero."""
    if self.dtype.kind in "bc":
        raise _cpu_kernel_missing(name, self)
    if _is_integral(self):
        _check_integer_divisor(other)
    with np.errstate(divide="ignore", invalid="ignore"):
        return ufunc(self, other)


def compare(name: str, ufunc: Any, self: np.ndarray, other: Any) -> np.ndarray:
    """A comparison computed in the operands' common dtype, as a bool array.

    `other` is an array (a Tensor argument) or a Python number (a Scalar argument,
    which promotes as a wrapped number does)."""
    common = _common_dtype(self, other)
    if common.kind == "c" and name not in ("eq", "ne"):
        raise NotImplementedError(
            f"\"{name}_cpu\" not implemented for '{_SCALAR_TYPE_NAMES[common.name]}'"
        )
    _check_broadcast(self, other)
    return ufunc(self.astype(common, copy=False), np.asarray(other).astype(common, copy=False))


def logical(ufunc: Any, self: np.ndarray, other: np.ndarray) -> np.ndarray:
    """logical_and / or / xor: truth values of any dtype, a bool result."""
    _check_broadcast(self, other)
    return ufunc(self, other)


def bitwise(name: str, ufunc: Any, *operands: np.ndarray) -> np.ndarray:
    """Bitwise operations, for bool and integer dtypes only (as PyTorch)."""
    if not _is_integral(operands[0]):
        raise _cpu_kernel_missing(name, operands[0])
    return ufunc(*operands)


# ---- batch C: reductions, scans and indexing ----
# (functions of this group go here; add their names with `__all__ += [...]`)
#

__all__ += [
    "reduce_prod",
    "max_all",
    "max_dim",
    "amax",
    "argmax",
    "logsumexp",
    "reduce_var",
    "cumsum",
    "cumprod",
    "softmax",
    "softmax_backward_data",
    "flip",
    "roll",
    "repeat",
    "index_select",
    "advanced_index",
    "index_put",
    "index_add",
    "gather",
    "scatter",
    "masked_fill",
]

_C10_TYPE_NAMES = {
    "bool": "bool",
    "int32": "int",
    "int64": "long int",
    "uint8": "unsigned char",
    "float32": "float",
    "float64": "double",
    "complex64": "c10::complex<float>",
    "complex128": "c10::complex<double>",
}


def _silently(kernel: Any) -> Any:
    """Run `kernel` with numpy's floating-point warnings off: like PyTorch, these
    kernels make inf and nan (log of 0, inf - inf, overflow) without a word."""

    def silent(*args: Any) -> Any:
        with np.errstate(all="ignore"):
            return kernel(*args)

    silent.__name__ = kernel.__name__
    silent.__doc__ = kernel.__doc__
    return silent


def _along(dim: int, ndim: int, item: Any) -> tuple[Any, ...]:
    """An index tuple selecting `item` along `dim` and everything elsewhere."""
    return (slice(None),) * dim + (item,) + (slice(None),) * (ndim - dim - 1)


def _reduction_dims(dim: Sequence[int] | None, ndim: int) -> tuple[int, ...]:
    """The wrapped dims of a reduction; None or [] is every dim (PyTorch's rule)."""
    if dim is None or len(dim) == 0:
        return tuple(range(ndim))
    seen: set[int] = set()
    for d in dim:
        wrapped = _wrap_dim(d, ndim)
        if wrapped in seen:
            raise RuntimeError(
                f"dim {wrapped} appears multiple times in the list of dims"
            )
        seen.add(wrapped)
    return tuple(sorted(seen)) if ndim else ()


@_silently
def reduce_prod(
    self: np.ndarray, dim: int | None, keepdim: bool, dtype: Any
) -> np.ndarray:
    """prod over all elements (dim None) or one dim; int and bool give int64."""
    axis = None
    if dim is not None:
        wrapped = _wrap_dim(dim, self.ndim)
        axis = wrapped if self.ndim else None
    return np.prod(self, axis=axis, keepdims=keepdim, dtype=_reduced_dtype(self, dtype))


def max_all(self: np.ndarray, name: str) -> np.ndarray:
    """max()/min() of every element: NaN propagates; an empty input is an error."""
    if self.dtype.kind == "c":
        raise NotImplementedError(
            f"\"{name}_all\" not implemented for '{_scalar_type_name(self)}'"
        )
    if self.size == 0:
        raise RuntimeError(
            f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
            "Specify the reduction dim with the 'dim' argument."
        )
    return np.max(self) if name == "max" else np.min(self)


def _check_reduced_size(self: np.ndarray, dims: Sequence[int], name: str) -> None:
    for d in dims:
        if self.shape[d] == 0:
            raise IndexError(
                f"{name}(): Expected reduction dim {d} to have non-zero size."
            )


def _arg_extreme(self: np.ndarray, axis: int, name: str) -> np.ndarray:
    """The index of the first max (or min) along `axis`; NaN counts as the extreme and
    the first NaN wins, as in PyTorch."""
    return (
        np.argmax(self, axis=axis)
        if name in ("max", "argmax")
        else np.argmin(self, axis=axis)
    )


def max_dim(
    self: np.ndarray, dim: int, keepdim: bool, name: str
) -> tuple[np.ndarray, np.ndarray]:
    """max.dim / min.dim: (values, indices), ties going to the first index."""
    if self.dtype.kind == "c":
        raise RuntimeError(f"{name}(): does not support complex input")
    axis = _wrap_dim(dim, self.ndim)
    if self.ndim == 0:
        return self.copy(), np.zeros((), np.int64)
    _check_reduced_size(self, (axis,), name)
    indices = np.expand_dims(_arg_extreme(self, axis, name), axis)
    values = np.take_along_axis(self, indices, axis=axis)
    if not keepdim:
        values, indices = values.squeeze(axis), indices.squeeze(axis)
    return values, indices.astype(np.int64)


def amax(self: np.ndarray, dim: Sequence[int], keepdim: bool, name: str) -> np.ndarray:
    """amax/amin over `dim` (every dim when empty); NaN propagates."""
    if self.dtype.kind == "c":
        raise NotImplementedError(
            f"\"{name[1:]}_values_cpu\" not implemented for '{_scalar_type_name(self)}'"
        )
    dims = _reduction_dims(dim, self.ndim)
    if self.size == 0 and len(dim) == 0:
        raise RuntimeError(
            f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
            "Specify the reduction dim with the 'dim' argument."
        )
    _check_reduced_size(self, dims, name)
    reduce = np.max if name == "amax" else np.min
    return reduce(self, axis=dims if self.ndim else None, keepdims=keepdim)


def argmax(self: np.ndarray, dim: int | None, keepdim: bool, name: str) -> np.ndarray:
    """The int64 index of the first max (min) of all elements (flattened) or along dim."""
    if self.dtype.kind == "c":
        raise RuntimeError(f"{name}(): does not support complex input")
    if self.dtype.kind == "b":
        raise RuntimeError(f"{name}(): does not support bool input")
    if dim is None:
        if self.size == 0:
            raise IndexError(
                f"{name}(): Expected reduction dim to be specified for input.numel() == 0."
            )
        index = np.asarray(_arg_extreme(self.reshape(-1), 0, name), np.int64)
        return index.reshape((1,) * self.ndim) if keepdim else index
    axis = _wrap_dim(dim, self.ndim)
    if self.ndim == 0:
        return np.zeros((), np.int64)
    _check_reduced_size(self, (axis,), name)
    index = _arg_extreme(self, axis, name).astype(np.int64)
    return np.expand_dims(index, axis) if keepdim else index


def _as_float(self: np.ndarray) -> np.ndarray:
    """Integral and bool input of a floating operator, in the default float dtype."""
    if self.dtype.kind in "fc":
        return self
    from .dtypes import get_default_dtype

    return self.astype(get_default_dtype().numpy)


@_silently
def logsumexp(self: np.ndarray, dim: Sequence[int], keepdim: bool) -> np.ndarray:
    """log(sum(exp(self))) over `dim`, shifted by the max for stability (PyTorch's
    algorithm: an infinite max is not subtracted, so -inf rows give -inf)."""
    self = _as_float(self)
    if self.ndim == 0:
        _reduction_dims(dim, 0)
        return self.copy()
    if len(dim) == 0:
        # PyTorch reduces nothing and then fails to write the kept-dim result.
        raise RuntimeError(
            f"output with shape [] doesn't match the broadcast shape {[1] * self.ndim}"
        )
    dims = _reduction_dims(dim, self.ndim)
    if self.size == 0:
        maxes = np.zeros(
            [1 if d in dims else n for d, n in enumerate(self.shape)], self.dtype
        )
    else:
        maxes = np.max(self.real, axis=dims, keepdims=True).astype(self.dtype)
        maxes[np.isinf(maxes)] = 0
    result = np.log(np.sum(np.exp(self - maxes), axis=dims, keepdims=True)) + maxes
    return result if keepdim else result.squeeze(dims)


@_silently
def reduce_var(
    self: np.ndarray,
    dim: Sequence[int] | None,
    correction: float | None,
    keepdim: bool,
    name: str,
) -> np.ndarray:
    """var/std with `correction` (default 1) over `dim` (None or [] for all); the result
    is real for complex input. Degrees of freedom <= 0 warn and divide by zero."""
    if self.dtype.kind not in "fc":
        raise RuntimeError("std and var only support floating point and complex dtypes")
    correction = 1 if correction is None else correction
    dims = _reduction_dims(dim, self.ndim)
    count = int(np.prod([self.shape[d] for d in dims]))
    dof = max(0, count - correction)
    if dof <= 0:
        import warnings

        warnings.warn(
            f"{name}(): degrees of freedom is <= 0. Correction should be strictly less "
            "than the reduction factor (input numel divided by output numel).",
            UserWarning,
            stacklevel=2,
        )
    axis = dims if self.ndim else None
    centred = self - np.mean(self, axis=axis, keepdims=True)
    squares = (
        (centred * centred.conj()).real if self.dtype.kind == "c" else centred * centred
    )
    result = np.sum(squares, axis=axis, keepdims=keepdim) / np.asarray(
        dof, squares.dtype
    )
    return np.sqrt(result) if name == "std" else result


def _scan(self: np.ndarray, dim: int, dtype: Any, scan: Any) -> np.ndarray:
    target = _reduced_dtype(self, dtype)
    axis = _wrap_dim(dim, self.ndim)
    if self.ndim == 0:
        return self.astype(target)
    return scan(self, axis=axis, dtype=target)


def cumsum(self: np.ndarray, dim: int, dtype: Any) -> np.ndarray:
    """Cumulative sum along dim; int and bool give int64 unless `dtype` says."""
    return _scan(self, dim, dtype, np.cumsum)


@_silently
def cumprod(self: np.ndarray, dim: int, dtype: Any) -> np.ndarray:
    """Cumulative product along dim; int and bool give int64 unless `dtype` says."""
    return _scan(self, dim, dtype, np.cumprod)


@_silently
def softmax(self: np.ndarray, dim: int, half_to_float: bool, log: bool) -> np.ndarray:
    """_softmax / _log_softmax along dim, shifted by the max (floating input only)."""
    name = "log_softmax" if log else "softmax"
    if half_to_float:
        raise RuntimeError(
            "softmax with half to float conversion is not supported on CPU"
        )
    axis = _wrap_dim(dim, self.ndim)
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
    axis = _wrap_dim(dim, grad_output.ndim)
    g = grad_output.reshape(1) if grad_output.ndim == 0 else grad_output
    y = output.reshape(g.shape)
    if log:
        result = g - np.exp(y) * np.sum(g, axis=axis, keepdims=True)
    else:
        result = y * (g - np.sum(g * y, axis=axis, keepdims=True))
    return result.reshape(grad_output.shape).astype(grad_output.dtype, copy=False)


def flip(self: np.ndarray, dims: Sequence[int]) -> np.ndarray:
    """A copy reversed along every dim in `dims`."""
    wrapped = _reduction_dims(dims, self.ndim) if len(dims) else ()
    if self.ndim == 0 or not wrapped:
        return self.copy()
    return np.flip(self, axis=wrapped).copy()


def roll(self: np.ndarray, shifts: Sequence[int], dims: Sequence[int]) -> np.ndarray:
    """Roll along dims by shifts; with no dims, roll the flattened tensor."""
    if len(dims) == 0:
        if len(shifts) != 1:
            raise RuntimeError(
                f"shifts and dimensions must align. shifts: {len(shifts)}, dims:0"
            )
        return np.roll(self.reshape(-1), shifts[0]).reshape(self.shape)
    if len(shifts) != len(dims):
        raise RuntimeError(
            f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}"
        )
    if self.ndim == 0:
        raise IndexError(
            f"Dimension specified as {dims[0]} but tensor has no dimensions"
        )
    axes = tuple(_wrap_dim(d, self.ndim) for d in dims)
    return np.roll(self, tuple(shifts), axis=axes)


def repeat(self: np.ndarray, repeats: Sequence[int]) -> np.ndarray:
    """Tile `self` `repeats` times along each dim (leading new dims as needed)."""
    if len(repeats) < self.ndim:
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of "
            "dimensions of tensor"
        )
    padded = (1,) * (len(repeats) - self.ndim) + self.shape
    target = [size * count for size, count in zip(padded, repeats)]
    for extent in target:
        if extent < 0:
            raise RuntimeError(
                f"Trying to create tensor with negative dimension {extent}: {target}"
            )
    return np.tile(self.reshape(padded), tuple(repeats))


def _check_index_dtype(index: np.ndarray, message: str) -> None:
    if index.dtype.name not in ("int32", "int64"):
        raise RuntimeError(message)


def _check_bounds(index: np.ndarray, size: int, dim: int) -> None:
    """PyTorch's scatter/gather bounds check (negative indices are out of bounds)."""
    bad = (index < 0) | (index >= size)
    if bad.any():
        value = int(index[bad].reshape(-1)[0])
        raise RuntimeError(
            f"index {value} is out of bounds for dimension {dim} with size {size}"
        )


def _advanced_key(self: np.ndarray, indices: Sequence[np.ndarray | None]) -> tuple[Any, ...]:
    """PyTorch's `index` indices as a numpy key (None takes its whole dimension), with
    PyTorch's checks and messages; numpy places the result's dimensions the same way."""
    if not indices:
        raise IndexError("at least one index must be provided")
    consumed = sum(1 if i is None or i.dtype.kind != "b" else i.ndim for i in indices)
    if consumed > self.ndim:
        raise IndexError(
            f"too many indices for tensor of dimension {self.ndim} (got {consumed})"
        )
    key: list[Any] = []
    dim = 0
    position = 0  # among the index tensors (PyTorch counts dimensions this way)
    shapes = []
    for index in indices:
        if index is None:
            key.append(slice(None))
            dim += 1
            continue
        if index.dtype.kind == "b":
            extent = self.shape[dim : dim + index.ndim]
            for offset, (got, wanted) in enumerate(zip(index.shape, extent)):
                if got != wanted:
                    raise IndexError(
                        f"The shape of the mask {list(index.shape)} at index {offset} does "
                        f"not match the shape of the indexed tensor {list(self.shape)} at "
                        f"index {dim + offset}"
                    )
            key.append(index)
            shapes.append([int(np.count_nonzero(index))])
            dim += index.ndim
        elif index.dtype.kind in "iu":
            size = self.shape[dim]
            bad = (index < -size) | (index >= size)
            if bad.any():
                value = int(index[bad].reshape(-1)[0])
                raise IndexError(
                    f"index {value} is out of bounds for dimension {position} with size {size}"
                )
            key.append(index)
            shapes.append(list(index.shape))
            dim += 1
        else:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        position += 1
    try:
        np.broadcast_shapes(*(tuple(shape) for shape in shapes))
    except ValueError:
        raise IndexError(
            "shape mismatch: indexing tensors could not be broadcast together with shapes "
            + ", ".join(str(shape) for shape in shapes)
        ) from None
    return tuple(key)


def advanced_index(self: np.ndarray, indices: Sequence[np.ndarray | None]) -> np.ndarray:
    """`self[indices]` with tensors, as PyTorch's `index` (always a copy)."""
    return np.array(self[_advanced_key(self, indices)])


def index_put(
    self: np.ndarray,
    indices: Sequence[np.ndarray | None],
    values: np.ndarray,
    accumulate: bool,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """self with `values` written (or, with accumulate, added: repeated indices add up)
    at `indices`; into `out` (self's memory) for index_put_, else into a copy."""
    if values.dtype != self.dtype:
        raise RuntimeError(
            "Index put requires the source and destination dtypes match, got "
            f"{_scalar_type_name(self)} for the destination and "
            f"{_scalar_type_name(values)} for the source."
        )
    key = _advanced_key(self, indices)
    if out is not None and not out.flags.writeable:
        raise RuntimeError(OVERLAPPING_WRITE_ERROR)
    result = self.copy() if out is None else out
    target_shape = np.empty(self.shape, dtype=np.bool_)[key].shape
    try:
        fits = np.broadcast_shapes(values.shape, target_shape) == target_shape
    except ValueError:
        fits = False
    if not fits:
        raise RuntimeError(
            f"shape mismatch: value tensor of shape {list(values.shape)} cannot be broadcast "
            f"to indexing result of shape {list(target_shape)}"
        )
    if accumulate:
        np.add.at(result, key, values)
    else:
        result[key] = values
    return result


def index_select(self: np.ndarray, dim: int, index: np.ndarray) -> np.ndarray:
    """The slices at `index` (a vector or a single index) along dim."""
    _check_index_dtype(index, "index_select(): Expected dtype int32 or int64 for index")
    if index.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    axis = _wrap_dim(dim, self.ndim)
    flat = index.reshape(-1)
    if self.ndim == 0:
        if flat.size != 1:
            raise RuntimeError(
                "index_select(): Index to scalar can have only 1 value, got "
                f"{flat.size} value(s)"
            )
        if flat[0] != 0:
            raise IndexError("index out of range in self")
        return self.copy()
    if ((flat < 0) | (flat >= self.shape[axis])).any():
        raise IndexError("index out of range in self")
    return np.take(self, flat, axis=axis)


def index_add(
    self: np.ndarray, dim: int, index: np.ndarray, source: np.ndarray, alpha: Any
) -> np.ndarray:
    """A copy of self with alpha * source's slices added at `index` along dim."""
    axis = _wrap_dim(dim, self.ndim)
    if index.dtype.name not in ("int32", "int64"):
        raise RuntimeError(
            "index_add_(): Expected dtype int32/int64 for index but got: "
            f"{_scalar_type_name(index)}"
        )
    if index.ndim > 1:
        raise IndexError(
            f"index_add_(): Index is supposed to be a vector, but got dim: {index.ndim} "
            f"with type: {_scalar_type_name(index)} and size: {list(index.shape)}"
        )
    if self.dtype != source.dtype:
        raise RuntimeError(
            f"index_add_(): self ({_scalar_type_name(self)}) and source "
            f"({_scalar_type_name(source)}) must have the same scalar type"
        )
    flat = index.reshape(-1)
    result = self.copy()
    if self.ndim == 0:
        source_slices = source.reshape(-1)
        if flat.size != source_slices.size:
            raise RuntimeError(
                f"index_add_(): Number of indices ({flat.size}) should be equal to "
                f"source.size(dim): ({source_slices.size}), for dim: {axis}"
            )
        if ((flat != 0)).any():
            raise IndexError("index out of range in self")
        result += alpha * source_slices.sum() if flat.size else 0
        return result
    if source.ndim != self.ndim or any(
        s != n for d, (s, n) in enumerate(zip(self.shape, source.shape)) if d != axis
    ):
        raise RuntimeError(
            "source tensor shape must match self tensor shape, excluding the specified "
            f"dimension. Got self.shape = {list(self.shape)} source.shape = "
            f"{list(source.shape)}"
        )
    if flat.size != source.shape[axis]:
        raise RuntimeError(
            f"index_add_(): Number of indices ({flat.size}) should be equal to "
            f"source.size(dim): ({source.shape[axis]}), for dim: {axis}"
        )
    if ((flat < 0) | (flat >= self.shape[axis])).any():
        raise IndexError("index out of range in self")
    scaled = source if alpha == 1 else source * np.asarray(alpha).astype(source.dtype)
    np.add.at(np.moveaxis(result, axis, 0), flat, np.moveaxis(scaled, axis, 0))
    return result


def _scatter_gather_index(
    self: np.ndarray, dim: int, index: np.ndarray, name: str
) -> tuple[int, tuple[np.ndarray, ...]]:
    """Check `index` against self as gather/scatter do; return the wrapped dim and the
    full advanced index that addresses self at index's positions."""
    _check_index_dtype(index, f"{name}(): Expected dtype int32/int64 for index")
    axis = _wrap_dim(dim, self.ndim)
    if index.ndim != self.ndim and not (self.ndim <= 1 and index.ndim <= 1):
        what = "input" if name == "gather" else "self"
        raise RuntimeError(
            f"Index tensor must have the same number of dimensions as {what} tensor"
        )
    if self.ndim == 0:
        _check_bounds(index, 1, axis)
        return axis, (np.zeros(index.shape, np.intp),)
    _check_bounds(index, self.shape[axis], axis)
    grid = np.indices(index.shape, sparse=True) if index.ndim else ()
    positions = tuple(
        index.astype(np.intp) if d == axis else grid[d]
        for d in range(max(index.ndim, 1))
    )
    return axis, positions


def gather(self: np.ndarray, dim: int, index: np.ndarray) -> np.ndarray:
    """Elements of self picked along dim by `index` (result has index's shape)."""
    axis = _wrap_dim(dim, self.ndim)
    if index.ndim == self.ndim and self.ndim:
        for d in range(self.ndim):
            if d != axis and index.shape[d] > self.shape[d]:
                raise RuntimeError(
                    f"Size does not match at dimension {d} expected index "
                    f"{list(index.shape)} to be no larger than self {list(self.shape)} "
                    f"apart from dimension {axis}"
                )
    axis, positions = _scatter_gather_index(self, dim, index, "gather")
    if self.ndim == 0:
        return np.broadcast_to(self, index.shape).copy()
    return self[positions]


def scatter(
    self: np.ndarray, dim: int, index: np.ndarray, src: Any, reduce: str | None
) -> np.ndarray:
    """A copy of self with src (a tensor or a number) written (reduce None) or added
    (reduce "add") at index's positions along dim."""
    if isinstance(src, np.ndarray) and src.dtype != self.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    axis, positions = _scatter_gather_index(self, dim, index, "scatter")
    if isinstance(src, np.ndarray) and index.ndim == self.ndim and self.ndim:
        for d in range(self.ndim):
            if index.shape[d] > src.shape[d] or (
                d != axis and index.shape[d] > self.shape[d]
            ):
                raise RuntimeError(
                    f"Expected index {list(index.shape)} to be no larger than self "
                    f"{list(self.shape)} apart from dimension {axis} and to be no larger "
                    f"size than src {list(src.shape)}"
                )
    result = self.copy()
    if isinstance(src, np.ndarray):
        values = src[tuple(slice(0, n) for n in index.shape)] if src.ndim else src
    else:
        values = np.asarray(src).astype(self.dtype)
    target = result.reshape(1) if self.ndim == 0 else result
    if reduce == "add":
        np.add.at(target, positions, values)
    else:
        target[positions] = values
    return result


def masked_fill(self: np.ndarray, mask: np.ndarray, value: Any) -> np.ndarray:
    """self (broadcast with mask) with `value` where mask is True."""
    if mask.dtype != np.bool_:
        raise RuntimeError(
            "masked_fill_ only supports boolean masks, but got mask with dtype "
            f"{_C10_TYPE_NAMES.get(mask.dtype.name, mask.dtype.name)}"
        )
    if isinstance(value, np.ndarray):
        if value.ndim != 0:
            raise RuntimeError(
                "masked_fill_ only supports a 0-dimensional value tensor, but got tensor "
                f"with {value.ndim} dimension(s)."
            )
        value = value.item()
    if isinstance(value, complex) and self.dtype.kind != "c":
        raise RuntimeError(
            f"value cannot be converted to type {_C10_TYPE_NAMES[self.dtype.name]} "
            "without overflow"
        )
    fill = np.asarray(value).astype(self.dtype)
    try:
        shape = np.broadcast_shapes(self.shape, mask.shape)
    except ValueError:
        raise _size_mismatch(mask.shape, self.shape) from None
    return np.where(mask, fill, np.broadcast_to(self, shape))


def _size_mismatch(a: tuple[int, ...], b: tuple[int, ...]) -> RuntimeError:
    """PyTorch's broadcast error for shapes a and b (the first mismatch from the end)."""
    for offset in range(1, max(len(a), len(b)) + 1):
        sa = a[-offset] if offset <= len(a) else 1
        sb = b[-offset] if offset <= len(b) else 1
        if sa != sb and sa != 1 and sb != 1:
            return RuntimeError(
                f"The size of tensor a ({sa}) must match the size of tensor b ({sb}) at "
                f"non-singleton dimension {max(len(a), len(b)) - offset}"
            )
    return RuntimeError("shapes cannot be broadcast")


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
    """PyTorch's error for a dtype a kernel is not compiled for."""
    return NotImplementedError(
        f"\"{kernel}\" not implemented for '{_scalar_type(array)}'"
    )


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
    rows, targets = (
        (self[None], target.reshape(1)) if self.ndim == 1 else (self, target)
    )
    if reduction == _NONE and self.ndim == 2:
        return _nll_unreduced(rows, targets, weight, ignore_index), np.zeros(
            (), self.dtype
        )
    return _nll_reduced(rows, targets, weight, reduction, ignore_index)


def _check_nll_shapes(
    self: np.ndarray, target: np.ndarray, weight: np.ndarray | None
) -> None:
    if not 0 < self.ndim <= 2:
        raise RuntimeError("input tensor should be 1D or 2D")
    if target.ndim > 1:
        raise RuntimeError(
            "0D or 1D target tensor expected, multi-target not supported"
        )
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
    rows, targets = (
        (self[None], target.reshape(1)) if self.ndim == 1 else (self, target)
    )
    grad_rows = _nll_grad_rows(
        grad_output,
        rows,
        targets,
        weight,
        reduction,
        ignore_index,
        total_weight,
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


def _check_nll2d(
    self: np.ndarray, target: np.ndarray, weight: np.ndarray | None
) -> None:
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
        raise RuntimeError(
            "weight tensor should be defined either for all or no classes"
        )
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
        grad_output,
        rows,
        targets,
        weight,
        reduction,
        ignore_index,
        total_weight,
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
        shape = (
            np.broadcast_shapes(self.shape, weight.shape)
            if broadcastable(self.shape, weight.shape)
            else None
        )
        if shape is None:
            raise _broadcast_error(self.shape, weight.shape)
        if shape != self.shape:
            raise RuntimeError(
                f"output with shape {list(self.shape)} doesn't match the broadcast shape "
                f"{list(shape)}"
            )
        weight = np.broadcast_to(weight.astype(self.dtype, copy=False), self.shape)
    return target, weight


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
    grad_input = (
        grad_output * (self - target) / np.maximum((1 - self) * self, _BCE_EPSILON)
    )
    if weight is not None:
        grad_input = grad_input * weight
    if reduction == _MEAN and self.size:
        grad_input = grad_input / self.size
    return np.broadcast_to(grad_input, self.shape).astype(self.dtype)


# ---- batch F: activations, losses, normalization, embedding ----
# (functions of this group go here; add their names with `__all__ += [...]`)
#

__all__ += [
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
    "smooth_l1_loss",
    "smooth_l1_loss_backward",
    "huber_loss",
    "huber_loss_backward",
    "binary_cross_entropy_with_logits",
    "native_layer_norm",
    "native_layer_norm_backward",
    "embedding",
    "embedding_dense_backward",
    "one_hot",
    "constant_pad_nd",
]


def _same_dtype(result: Any, like: np.ndarray) -> np.ndarray:
    """`result` as an array of `like`'s dtype (Python scalars in the formulas must not
    widen a float32 computation)."""
    return np.asarray(result).astype(like.dtype, copy=False)


def leaky_relu(self: np.ndarray, negative_slope: Any) -> np.ndarray:
    """x where x > 0, else x * negative_slope (NaN stays NaN)."""
    _check_floating("leaky_relu_cpu", self)
    return _same_dtype(np.where(self > 0, self, self * negative_slope), self)


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
    return _same_dtype(
        np.where(self > 0, grad_output, grad_output * negative_slope), grad_output
    )


def elu(self: np.ndarray, alpha: Any, scale: Any, input_scale: Any) -> np.ndarray:
    """scale * x for x > 0, else scale * alpha * (exp(input_scale * x) - 1)."""
    _check_floating("elu_cpu", self)
    negative = np.expm1(np.minimum(self, 0) * input_scale) * (alpha * scale)
    return _same_dtype(np.where(self <= 0, negative, self * scale), self)


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
    negative_coefficient = alpha * scale
    if is_result:
        negative = grad_output * input_scale * (x + negative_coefficient)
    else:
        negative = (
            grad_output
            * (input_scale * negative_coefficient)
            * np.exp(np.minimum(x, 0) * input_scale)
        )
    return _same_dtype(np.where(x <= 0, negative, grad_output * scale), grad_output)


def softplus(self: np.ndarray, beta: Any, threshold: Any) -> np.ndarray:
    """log(1 + exp(beta * x)) / beta, and x itself where beta * x > threshold."""
    _check_floating("softplus_cpu", self)
    scaled = self * beta
    smooth = np.log1p(np.exp(np.minimum(scaled, threshold))) / beta
    return _same_dtype(np.where(scaled > threshold, self, smooth), self)


def softplus_backward(
    grad_output: np.ndarray, self: np.ndarray, beta: Any, threshold: Any
) -> np.ndarray:
    """grad_output * sigmoid(beta * x), and grad_output where beta * x > threshold."""
    _check_floating("softplus_backward_cpu", self)
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
    return _same_dtype(np.minimum(np.maximum(self, min_val), max_val), self)


def hardtanh_backward(
    grad_output: np.ndarray, self: np.ndarray, min_val: Any, max_val: Any
) -> np.ndarray:
    """grad_output, except 0 where x <= min_val or x >= max_val (NaN lets it through)."""
    _check_floating("hardtanh_backward_cpu", self)
    outside = (self <= min_val) | (self >= max_val)
    return np.where(outside, np.zeros((), grad_output.dtype), grad_output)


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


def _loss_norm(self: np.ndarray, reduction: int) -> float:
    """The mean's 1 / numel (of self, as PyTorch), or 1."""
    if reduction == _MEAN:
        return 1.0 / self.size if self.size else math.nan
    return 1.0


def smooth_l1_loss(
    self: np.ndarray, target: np.ndarray, reduction: int, beta: float
) -> np.ndarray:
    """0.5 * d^2 / beta where d = |x - y| < beta, else d - 0.5 * beta; reduced."""
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    _check_floating("smooth_l1_cpu", self)
    z = np.abs(self - target)
    loss = np.where(z < beta, 0.5 * z * z / (beta if beta else 1.0), z - 0.5 * beta)
    return _reduce_loss(_same_dtype(loss, self), reduction)


def smooth_l1_loss_backward(
    grad_output: np.ndarray,
    self: np.ndarray,
    target: np.ndarray,
    reduction: int,
    beta: float,
) -> np.ndarray:
    """norm * grad * clamp((x - y) / beta, -1, 1) (norm = 1 / numel for the mean)."""
    _check_floating("smooth_l1_backward_cpu_out", self)
    norm = _loss_norm(self, reduction)
    x = self - target
    inside = norm * x * grad_output / (beta if beta else 1.0)
    grad = np.where(
        x <= -beta, -norm * grad_output, np.where(x >= beta, norm * grad_output, inside)
    )
    return _same_dtype(grad, self)


def _check_reduction(reduction: int) -> None:
    if reduction not in (_NONE, _MEAN, _SUM):
        raise RuntimeError(
            "reduction == Reduction::Mean || reduction == Reduction::Sum INTERNAL ASSERT "
            "FAILED"
        )


def huber_loss(
    self: np.ndarray, target: np.ndarray, reduction: int, delta: float
) -> np.ndarray:
    """0.5 * d^2 where d = |x - y| < delta, else delta * (d - 0.5 * delta); reduced."""
    if not delta > 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    _check_floating("huber_cpu", self)
    _check_reduction(reduction)
    if not broadcastable(self.shape, target.shape):
        raise _broadcast_error(self.shape, target.shape)
    z = np.abs(self - target)
    loss = np.where(z < delta, 0.5 * z * z, delta * (z - 0.5 * delta))
    return _reduce_loss(_same_dtype(loss, self), reduction)


def huber_loss_backward(
    grad_output: np.ndarray,
    self: np.ndarray,
    target: np.ndarray,
    reduction: int,
    delta: float,
) -> np.ndarray:
    """norm * grad * clamp(x - y, -delta, delta) (norm = 1 / numel for the mean)."""
    _check_floating("huber_backward_cpu_out", self)
    for other in (target, grad_output):
        if not broadcastable(self.shape, other.shape):
            raise _broadcast_error(self.shape, other.shape)
    norm = _loss_norm(self, reduction)
    x = self - target
    grad = np.where(
        x < -delta,
        -norm * grad_output * delta,
        np.where(x > delta, norm * grad_output * delta, norm * x * grad_output),
    )
    return _same_dtype(grad, self)


def _check_in_place_broadcast(output: tuple[int, ...], other: tuple[int, ...]) -> None:
    """PyTorch's error for an in-place operation whose operand broadcasts its output."""
    if not broadcastable(output, other):
        raise _broadcast_error(output, other)
    shape = np.broadcast_shapes(output, other)
    if shape != output:
        raise RuntimeError(
            f"output with shape {list(output)} doesn't match the broadcast shape "
            f"{list(shape)}"
        )


def binary_cross_entropy_with_logits(
    self: np.ndarray,
    target: np.ndarray,
    weight: np.ndarray | None,
    pos_weight: np.ndarray | None,
    reduction: int,
) -> np.ndarray:
    """(1 - y) * x - log_sigmoid(x) * (1 + (pos_weight - 1) * y), times weight, reduced.

    PyTorch computes it in place in 1 - target, whence the result's shape and dtype
    (target's) and its broadcasting and casting errors."""
    _check_floating("log_sigmoid_cpu", self)
    if target.dtype.kind == "b":
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use "
            "the `^` or `logical_xor()` operator instead."
        )
    if target.dtype.kind != "f":
        raise RuntimeError(
            f"result type {_scalar_type(self)} can't be cast to the desired output type "
            f"{_scalar_type(target)}"
        )
    dtype = target.dtype
    log_sigmoid_input = np.minimum(self, 0) - np.log1p(np.exp(-np.abs(self)))
    if pos_weight is not None:
        log_weight = (pos_weight - 1) * target + 1
        _check_in_place_broadcast(self.shape, log_weight.shape)
        log_sigmoid_input = log_sigmoid_input * log_weight
    _check_in_place_broadcast(target.shape, self.shape)
    loss = (1 - target) * self - log_sigmoid_input
    if weight is not None:
        _check_in_place_broadcast(target.shape, weight.shape)
        loss = loss * weight
    return _reduce_loss(np.asarray(loss).astype(dtype, copy=False), reduction)


def _layer_norm_axis(
    input: np.ndarray,
    normalized_shape: Sequence[int],
    weight: np.ndarray | None,
    bias: np.ndarray | None,
) -> int:
    """PyTorch's checks of layer_norm's arguments; the first normalized dimension."""
    normalized = list(normalized_shape)
    if not normalized:
        raise RuntimeError(
            "Expected normalized_shape to be at least 1-dimensional, i.e., containing at "
            f"least one element, but got normalized_shape = {normalized}"
        )
    for name, parameter in (("weight", weight), ("bias", bias)):
        if parameter is not None and list(parameter.shape) != normalized:
            raise RuntimeError(
                f"Expected {name} to be of same shape as normalized_shape, but got "
                f"{name} of shape {list(parameter.shape)} and normalized_shape = "
                f"{normalized}"
            )
    axis = input.ndim - len(normalized)
    if axis < 0 or list(input.shape[axis:]) != normalized:
        expected = ", ".join(["*"] + [str(n) for n in normalized])
        raise RuntimeError(
            f"Given normalized_shape={normalized}, expected input with shape [{expected}], "
            f"but got input of size{list(input.shape)}"
        )
    _check_floating("LayerNormKernelImpl", input)
    parameters = [p for p in (weight, bias) if p is not None]
    if any(p.dtype != input.dtype for p in parameters):
        if input.dtype == np.float32:
            raise RuntimeError(
                "mixed dtype (CPU): expect parameter to have scalar type of Float"
            )
        raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
    return axis


def native_layer_norm(
    input: np.ndarray,
    normalized_shape: Sequence[int],
    weight: np.ndarray | None,
    bias: np.ndarray | None,
    eps: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(out, mean, rstd): each row over the normalized (last) dimensions minus its mean,
    times rstd = 1 / sqrt(biased variance + eps), then times weight plus bias. mean and
    rstd keep the normalized dimensions with size 1."""
    axis = _layer_norm_axis(input, normalized_shape, weight, bias)
    dims = tuple(range(axis, input.ndim))
    stats_shape = input.shape[:axis] + (1,) * len(dims)
    x = input.astype(np.float64)
    if 0 in input.shape[axis:]:  # rows of no elements: mean 0, variance 0 / 0
        mean = np.zeros(stats_shape)
        variance = np.full(stats_shape, np.nan)
    else:
        mean = x.mean(axis=dims, keepdims=True)
        variance = ((x - mean) ** 2).mean(axis=dims, keepdims=True)
    rstd = 1.0 / np.sqrt(variance + eps)
    out = (x - mean) * rstd
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    dtype = input.dtype
    return out.astype(dtype), mean.astype(dtype), rstd.astype(dtype)


def native_layer_norm_backward(
    grad_out: np.ndarray,
    input: np.ndarray,
    normalized_shape: Sequence[int],
    mean: np.ndarray,
    rstd: np.ndarray,
    weight: np.ndarray | None,
    bias: np.ndarray | None,
    output_mask: Sequence[bool],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(grad_input, grad_weight, grad_bias) of native_layer_norm. With x_hat = (x - mean)
    * rstd and g = grad_out * weight, per row: grad_input = rstd * (g - mean(g) - x_hat *
    mean(g * x_hat)); grad_weight = sum over rows of grad_out * x_hat; grad_bias = sum
    over rows of grad_out. An output output_mask leaves out is zeros (PyTorch's is
    undefined)."""
    axis = _layer_norm_axis(input, normalized_shape, weight, None)
    dims = tuple(range(axis, input.ndim))
    rows = tuple(range(axis))
    dtype = np.result_type(grad_out, input)
    parameter_shape = tuple(normalized_shape)
    x_hat = (input - mean) * rstd
    if output_mask[0]:
        g = grad_out if weight is None else grad_out * weight
        if input.size:
            grad_input = rstd * (
                g
                - g.mean(axis=dims, keepdims=True)
                - x_hat * (g * x_hat).mean(axis=dims, keepdims=True)
            )
        else:
            grad_input = np.zeros(input.shape)
    else:
        grad_input = np.zeros(input.shape)
    grad_weight = (
        np.sum(grad_out * x_hat, axis=rows).reshape(parameter_shape)
        if output_mask[1]
        else np.zeros(parameter_shape)
    )
    grad_bias = (
        np.sum(np.broadcast_to(grad_out, input.shape), axis=rows).reshape(
            parameter_shape
        )
        if output_mask[2]
        else np.zeros(parameter_shape)
    )
    return (
        np.asarray(grad_input).astype(dtype),
        np.asarray(grad_weight).astype(dtype),
        np.asarray(grad_bias).astype(dtype),
    )


_LEGACY_TENSOR_TYPES = {
    "bool": "CPUBoolType",
    "float32": "torch.FloatTensor",
    "float64": "torch.DoubleTensor",
    "complex64": "CPUComplexFloatType",
    "complex128": "CPUComplexDoubleType",
}


def _check_indices(indices: np.ndarray, argument: int, function: str) -> None:
    """PyTorch's checkScalarTypes: embedding indices are int64 or int32."""
    if indices.dtype not in (np.int64, np.int32):
        name = _LEGACY_TENSOR_TYPES.get(indices.dtype.name, indices.dtype.name)
        raise RuntimeError(
            f"Expected tensor for argument #{argument} 'indices' to have one of the "
            f"following scalar types: Long, Int; but got {name} instead (while checking "
            f"arguments for {function})"
        )


def embedding(
    weight: np.ndarray,
    indices: np.ndarray,
    padding_idx: int,
    scale_grad_by_freq: bool,
    sparse: bool,
) -> np.ndarray:
    """The rows of `weight` that `indices` pick: shape indices.shape + (dim,)."""
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    _check_indices(indices, 1, "embedding")
    if indices.size and (indices.min() < 0 or indices.max() >= weight.shape[0]):
        raise IndexError("index out of range in self")
    return np.take(weight, indices.astype(np.int64), axis=0)


def embedding_dense_backward(
    grad_output: np.ndarray,
    indices: np.ndarray,
    num_weights: int,
    padding_idx: int,
    scale_grad_by_freq: bool,
) -> np.ndarray:
    """The gradient of `embedding` for its weight: each row of grad_output added into
    the row its index names (none for padding_idx), divided by how often that index
    occurs when scale_grad_by_freq."""
    _check_indices(indices, 2, "embedding_backward")
    flat = indices.reshape(-1).astype(np.int64)
    if flat.size and (flat.min() < 0 or flat.max() >= num_weights):
        raise IndexError("index out of range in self")
    rows = grad_output.reshape((flat.size,) + grad_output.shape[indices.ndim :])
    result = np.zeros((num_weights,) + rows.shape[1:], grad_output.dtype)
    if scale_grad_by_freq:
        counts = np.bincount(flat, minlength=num_weights)
        scale = 1.0 / counts[flat]
        rows = rows * scale.reshape((-1,) + (1,) * (rows.ndim - 1)).astype(rows.dtype)
    keep = flat != padding_idx
    np.add.at(result, flat[keep], rows[keep])
    return result


def one_hot(self: np.ndarray, num_classes: int) -> np.ndarray:
    """int64 zeros of shape self.shape + (num_classes,) with a 1 at each value;
    num_classes=-1 means one more than the largest value."""
    if self.dtype != np.int64:
        raise RuntimeError(
            "one_hot is only applicable to index tensor of type LongTensor."
        )
    if self.size == 0:
        if num_classes <= 0:
            raise RuntimeError(
                "Can not infer total number of classes from empty tensor."
            )
        return np.zeros(self.shape + (num_classes,), np.int64)
    if self.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        num_classes = int(self.max()) + 1
    elif not num_classes > self.max():
        raise RuntimeError("Class values must be smaller than num_classes.")
    return (self[..., None] == np.arange(num_classes)).astype(np.int64)


_CPP_VALUE_TYPES = {
    "bool": "bool",
    "int32": "int",
    "int64": "int64_t",
    "float32": "float",
    "float64": "double",
}


def constant_pad_nd(self: np.ndarray, pad: Sequence[int], value: Any) -> np.ndarray:
    """`self` padded with `value`: pad = (before, after) pairs for the last dimension
    first, then the one before it, ...; a negative amount removes elements."""
    if len(pad) % 2:
        raise RuntimeError(
            f"Length of pad must be even but instead it equals {len(pad)}"
        )
    pairs = len(pad) // 2
    if self.ndim < pairs:
        raise RuntimeError(
            "Length of pad should be no more than twice the number of dimensions of the "
            f"input. Pad length is {len(pad)}while the input has {self.ndim}dimensions."
        )
    if isinstance(value, complex) and self.dtype.kind != "c":
        raise RuntimeError(
            f"value cannot be converted to type {_CPP_VALUE_TYPES[self.dtype.name]} "
            "without overflow"
        )
    cropped = self
    index: list[slice] = [slice(None)] * self.ndim
    positive = False
    for dim in range(self.ndim - pairs, self.ndim):
        before, after = (
            pad[2 * (self.ndim - dim - 1)],
            pad[2 * (self.ndim - dim - 1) + 1],
        )
        start, size = 0, self.shape[dim]
        for amount, at_start in ((before, True), (after, False)):
            if amount < 0:
                if size + amount < 0:
                    raise RuntimeError("narrow(): length must be non-negative.")
                if at_start:
                    start -= amount
                size += amount
            elif amount:
                positive = True
        index[dim] = slice(start, start + size)
    cropped = self[tuple(index)]
    if not positive:
        return cropped.copy()
    shape = list(self.shape)
    placed: list[slice] = [slice(None)] * self.ndim
    for dim in range(self.ndim - pairs, self.ndim):
        before, after = (
            pad[2 * (self.ndim - dim - 1)],
            pad[2 * (self.ndim - dim - 1) + 1],
        )
        shape[dim] = self.shape[dim] + before + after
        if shape[dim] < 0:
            raise RuntimeError(
                f"The input size {self.shape[dim]}, plus negative padding {before} and "
                f"{after} resulted in a negative output size, which is invalid. Check "
                f"dimension {dim} of your input."
            )
        start = max(before, 0)
        placed[dim] = slice(start, start + cropped.shape[dim])
    result = np.full(
        shape,
        np.array(value).astype(self.dtype) if self.dtype.kind != "c" else value,
        self.dtype,
    )
    result[tuple(placed)] = cropped
    return result


# ---- batch E: in-place, masks, triangles, sorting, norms ----
# (functions of this group go here; add their names with `__all__ += [...]`)
#

__all__ += [
    "copy_from",
    "fill",
    "lerp",
    "addcmul",
    "addcdiv",
    "nan_to_num",
    "tril",
    "triu",
    "diagonal",
    "diagonal_backward",
    "diag_embed",
    "trace",
    "logical_reduction",
    "allclose",
    "tensor_equal",
    "sort",
    "topk",
    "vector_norm",
    "dist",
]

# c10's names in "value cannot be converted to type ... without overflow".
_OVERFLOW_TYPE_NAMES = {
    "bool": "bool",
    "int32": "int",
    "int64": "int64_t",
    "float32": "float",
    "float64": "double",
    "complex64": "c10::complex<float>",
    "complex128": "c10::complex<double>",
}


def _checked_scalar(value: Any, dtype: np.dtype) -> Any:
    """A Scalar converted to `dtype` as c10's checked_convert does: an error when the
    value does not fit (a complex into a real type, inf or an out-of-range value into
    an integer, a finite value that overflows a float)."""
    kind = dtype.kind
    if kind == "b":
        return bool(value)
    overflow = RuntimeError(
        f"value cannot be converted to type {_OVERFLOW_TYPE_NAMES[dtype.name]} "
        "without overflow"
    )
    if isinstance(value, complex) and kind != "c":
        if value.imag != 0:
            raise overflow
        value = value.real
    if kind in "iu":
        if isinstance(value, float) and not math.isfinite(value):
            raise overflow
        info = np.iinfo(dtype)
        if not info.min <= int(value) <= info.max:
            raise overflow
        return int(value)
    if kind == "f":
        finite = math.isfinite(float(value))
        converted = dtype.type(value)
        if finite and not np.isfinite(converted):
            raise overflow
        return converted
    return dtype.type(value)


def _scalar_dtype_name(array: np.ndarray) -> str:
    """`float`, `double`, `long int`: the dtype as lerp's messages print it."""
    return _CPP_TYPE_NAMES.get(array.dtype.name, array.dtype.name)


def copy_from(self: np.ndarray, src: np.ndarray) -> np.ndarray:
    """copy_: `src` broadcast to self's shape and converted to self's dtype (any
    conversion; a complex source into a real tensor keeps the real part, with
    PyTorch's warning)."""
    if src.shape != self.shape:
        _check_broadcast(self, src)
        shape = np.broadcast_shapes(self.shape, src.shape)
        if shape != self.shape:
            raise RuntimeError(
                f"output with shape {list(self.shape)} doesn't match the broadcast "
                f"shape {list(shape)}"
            )
        src = np.broadcast_to(src, self.shape)
    if src.dtype.kind == "c" and self.dtype.kind != "c":
        warnings.warn(
            "Casting complex values to real discards the imaginary part",
            UserWarning,
            stacklevel=2,
        )
        src = src.real
    with np.errstate(invalid="ignore", over="ignore"):
        return src.astype(self.dtype)


def fill(self: np.ndarray, value: Any) -> np.ndarray:
    """A tensor of self's shape and dtype holding `value` (a Scalar, or a 0-d tensor
    whose value is converted like a copy)."""
    if isinstance(value, np.ndarray):
        if value.ndim != 0:
            raise RuntimeError(
                "fill_ only supports 0-dimension value tensor but got tensor with "
                f"{value.ndim} dimensions."
            )
        with np.errstate(invalid="ignore", over="ignore"):
            source = value.real if value.dtype.kind == "c" and self.dtype.kind != "c" else value
            return np.full(self.shape, source.astype(self.dtype), self.dtype)
    return np.full(self.shape, _checked_scalar(value, self.dtype), self.dtype)


@_silently
def lerp(self: np.ndarray, end: np.ndarray, weight: Any) -> np.ndarray:
    """self + weight * (end - self), computed as PyTorch's kernel does it (from `end`
    when |weight| >= 0.5, for accuracy near weight 1). All tensors share self's dtype;
    a 0-d weight is taken as a number."""
    scalar_weight = not isinstance(weight, np.ndarray)
    if end.dtype != self.dtype:
        raise RuntimeError(
            f"expected dtype {_scalar_dtype_name(self)} for `end` but got dtype "
            f"{_scalar_dtype_name(end)}"
        )
    if not scalar_weight and weight.ndim and weight.dtype != self.dtype:
        raise RuntimeError(
            f"expected dtype {_scalar_dtype_name(self)} for `weight` but got dtype "
            f"{_scalar_dtype_name(weight)}"
        )
    if self.dtype.kind not in "fc":
        kernel = "lerp_kernel_scalar" if scalar_weight else "lerp_kernel_tensor"
        raise NotImplementedError(
            f"\"{kernel}\" not implemented for '{_scalar_type_name(self)}'"
        )
    if scalar_weight:
        weight = _checked_scalar(weight, self.dtype)
    else:
        _check_broadcast(self, end, weight)
        weight = weight.astype(self.dtype, copy=False)
    _check_broadcast(self, end)
    diff = end - self
    small = np.abs(weight) < 0.5
    result = np.where(small, self + weight * diff, end - diff * (1 - weight))
    return np.asarray(result, self.dtype)


def _pointwise_common(kernel: str, *operands: np.ndarray) -> list[np.ndarray]:
    """The operands in their common dtype (bool has no kernel here)."""
    _check_broadcast(*operands)
    common = _common_dtype(*operands)
    if common.kind == "b":
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")
    return [o.astype(common, copy=False) for o in operands]


def addcmul(
    self: np.ndarray, tensor1: np.ndarray, tensor2: np.ndarray, value: Any
) -> np.ndarray:
    """self + value * tensor1 * tensor2 in the operands' common dtype."""
    self, tensor1, tensor2 = _pointwise_common("addcmul_cpu_out", self, tensor1, tensor2)
    scale = _checked_scalar(value, self.dtype)
    return np.asarray(self + scale * tensor1 * tensor2, self.dtype)


_ADDCDIV_INTEGER_ERROR = (
    "Integer division with addcdiv is no longer supported, and in a future  release "
    "addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv "
    "behavior can be implemented as (input + value * torch.trunc(tensor1 / tensor2))"
    ".to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) "
    "for float inputs. The future addcdiv behavior is just the latter implementation: "
    "(input + value * tensor1 / tensor2), for all dtypes."
)


@_silently
def addcdiv(
    self: np.ndarray, tensor1: np.ndarray, tensor2: np.ndarray, value: Any
) -> np.ndarray:
    """self + value * tensor1 / tensor2 in the operands' common dtype; an error when
    both tensor1 and tensor2 are integral (PyTorch's)."""
    if _is_integral(tensor1) and _is_integral(tensor2):
        raise RuntimeError(_ADDCDIV_INTEGER_ERROR)
    self, tensor1, tensor2 = _pointwise_common("addcdiv_cpu_out", self, tensor1, tensor2)
    scale = _checked_scalar(value, self.dtype)
    return np.asarray(self + scale * tensor1 / tensor2, self.dtype)


def nan_to_num(
    self: np.ndarray, nan: float | None, posinf: float | None, neginf: float | None
) -> np.ndarray:
    """NaN, +inf and -inf replaced (by 0 and the dtype's largest and lowest finite
    values unless given); integral tensors are copied unchanged."""
    if self.dtype.kind not in "fc":
        return self.copy()
    info = np.finfo(self.dtype)
    with np.errstate(over="ignore"):
        return np.nan_to_num(
            self,
            copy=True,
            nan=0.0 if nan is None else nan,
            posinf=info.max if posinf is None else posinf,
            neginf=info.min if neginf is None else neginf,
        )


def _check_matrices(self: np.ndarray, name: str) -> None:
    if self.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")


def tril(self: np.ndarray, diagonal: int) -> np.ndarray:
    """The lower triangle of the last two dims (on and below `diagonal`), zeros above."""
    _check_matrices(self, "tril")
    return np.tril(self, diagonal)


def triu(self: np.ndarray, diagonal: int) -> np.ndarray:
    """The upper triangle of the last two dims (on and above `diagonal`), zeros below."""
    _check_matrices(self, "triu")
    return np.triu(self, diagonal)


def _diagonal_dims(ndim: int, dim1: int, dim2: int) -> tuple[int, int]:
    first, second = _wrap_dim(dim1, ndim), _wrap_dim(dim2, ndim)
    if first == second:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return first, second


def diagonal(self: np.ndarray, offset: int, dim1: int, dim2: int) -> np.ndarray:
    """A view of the diagonal `offset` of the (dim1, dim2) planes, as a last dim (the
    other dims keep their order). Written through when the input is writable."""
    first, second = _diagonal_dims(self.ndim, dim1, dim2)
    if offset >= 0:
        start = _along(second, self.ndim, slice(min(offset, self.shape[second]), None))
    else:
        start = _along(first, self.ndim, slice(min(-offset, self.shape[first]), None))
    base = self[start]
    length = min(base.shape[first], base.shape[second])
    kept = [d for d in range(self.ndim) if d not in (first, second)]
    shape = tuple(base.shape[d] for d in kept) + (length,)
    strides = tuple(base.strides[d] for d in kept) + (
        base.strides[first] + base.strides[second],
    )
    return np.lib.stride_tricks.as_strided(
        base, shape, strides, writeable=bool(base.flags.writeable)
    )


def diagonal_backward(
    grad_output: np.ndarray,
    input_sizes: Sequence[int],
    offset: int,
    dim1: int,
    dim2: int,
) -> np.ndarray:
    """Zeros of the input's shape with `grad_output` written on the diagonal."""
    result = np.zeros(tuple(input_sizes), grad_output.dtype)
    diagonal(result, offset, dim1, dim2)[...] = grad_output
    return result


def diag_embed(self: np.ndarray, offset: int, dim1: int, dim2: int) -> np.ndarray:
    """A tensor with self's last dim on the diagonal `offset` of new (dim1, dim2)
    planes, zeros elsewhere."""
    ndim = self.ndim + 1
    first, second = _diagonal_dims(ndim, dim1, dim2)
    size = self.shape[-1] + abs(offset)
    leading = list(self.shape[:-1])
    shape = []
    for d in range(ndim):
        shape.append(size if d in (first, second) else leading.pop(0))
    result = np.zeros(tuple(shape), self.dtype)
    diagonal(result, offset, first, second)[...] = self
    return result


def trace(self: np.ndarray) -> np.ndarray:
    """The sum of a matrix's diagonal; integral input gives int64."""
    if self.ndim != 2:
        raise RuntimeError(
            f"trace: expected a matrix, but got tensor with dim {self.ndim}"
        )
    if self.dtype.kind == "b":
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    dtype = np.int64 if self.dtype.kind in "iu" else self.dtype
    return np.asarray(np.trace(self, dtype=dtype))


def logical_reduction(
    self: np.ndarray, dim: int | Sequence[int] | None, keepdim: bool, name: str
) -> np.ndarray:
    """any/all ('any' or 'all') over every element (dim None), one dim, or a list of
    dims (an empty list reduces nothing); a bool result."""
    reduce = np.any if name == "any" else np.all
    if dim is None:
        axes: tuple[int, ...] = tuple(range(self.ndim))
    elif isinstance(dim, int):
        axes = (_wrap_dim(dim, self.ndim),) if self.ndim else ()
    else:
        axes = _reduction_dims(dim, self.ndim) if len(dim) else ()
        if not self.ndim:
            axes = ()
    return np.asarray(reduce(self, axis=axes, keepdims=keepdim), np.bool_)


def allclose(
    self: np.ndarray, other: np.ndarray, rtol: float, atol: float, equal_nan: bool
) -> bool:
    """Whether |self - other| <= atol + rtol * |other| everywhere (broadcast); both
    tensors must have the same dtype."""
    if self.dtype != other.dtype:
        raise RuntimeError(
            f"{_scalar_type_name(self)} did not match {_scalar_type_name(other)}"
        )
    for name, tolerance in (("rtol", rtol), ("atol", atol)):
        if tolerance < 0:
            raise RuntimeError(
                f"{name} must be greater than or equal to zero, but got "
                f"{tolerance:g}"
            )
    _check_broadcast(self, other)
    if self.dtype.kind == "b":
        return bool(np.all(self == other))
    with np.errstate(all="ignore"):
        return bool(np.all(np.isclose(self, other, rtol, atol, equal_nan)))


def tensor_equal(self: np.ndarray, other: np.ndarray) -> bool:
    """Whether both tensors have the same shape and the same values (NaN is never
    equal)."""
    return self.shape == other.shape and bool(np.all(self == other))


def _stable_order(self: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    """The indices that sort `self` along `axis`, ties in their original order and NaN
    counted as the largest value."""
    if not descending:
        return np.argsort(self, axis=axis, kind="stable")
    size = self.shape[axis]
    flipped = np.argsort(np.flip(self, axis), axis=axis, kind="stable")
    return np.flip(size - 1 - flipped, axis)


def sort(
    self: np.ndarray, dim: int, descending: bool, stable: bool | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(values, indices) sorted along `dim`; ties keep their order (always stable)."""
    if self.dtype.kind == "c":
        raise RuntimeError(" Sort does not support complex dtypes on CPU")
    axis = _wrap_dim(dim, self.ndim)
    if self.ndim == 0:
        return self.copy(), np.zeros((), np.int64)
    indices = _stable_order(self, axis, descending).astype(np.int64)
    return np.take_along_axis(self, indices, axis), indices


def topk(
    self: np.ndarray, k: int, dim: int, largest: bool, sorted: bool
) -> tuple[np.ndarray, np.ndarray]:
    """(values, indices) of the k largest (or smallest) along `dim`, sorted (also
    when `sorted` is False, which allows any order); NaN counts as the largest."""
    if self.dtype.kind == "c":
        raise RuntimeError(" topk does not support complex dtypes on CPU")
    if self.dtype.kind == "b":
        raise RuntimeError("topk does not support bool dtypes on CPU")
    axis = _wrap_dim(dim, self.ndim)
    size = self.shape[axis] if self.ndim else 1
    if not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")
    if self.ndim == 0:
        return self.copy(), np.zeros((), np.int64)
    order = _stable_order(self, axis, largest).astype(np.int64)
    indices = np.ascontiguousarray(order[_along(axis, self.ndim, slice(0, k))])
    return np.take_along_axis(self, indices, axis), indices


def _check_vector_norm_dtype(self: np.ndarray, dtype: Any) -> np.ndarray:
    """linalg.vector_norm's checks of the input and `dtype`; the input converted."""
    if self.dtype.kind not in "fc":
        raise RuntimeError(
            "linalg.vector_norm: Expected a floating point or complex tensor as input. "
            f"Got {_scalar_type_name(self)}"
        )
    if dtype is None:
        return self
    wanted = np.dtype(dtype.numpy)
    if wanted.kind not in "fc":
        raise RuntimeError(
            "linalg.vector_norm: dtype should be floating point or complex, but got "
            f"{_SCALAR_TYPE_NAMES.get(wanted.name, wanted.name)}"
        )
    if (self.dtype.kind == "c") != (wanted.kind == "c"):
        kind = "complex" if self.dtype.kind == "c" else "real"
        raise RuntimeError(
            f"linalg.vector_norm: dtype should be {kind} for {kind} inputs, but got "
            f"{_SCALAR_TYPE_NAMES.get(wanted.name, wanted.name)}"
        )
    if wanted.itemsize < self.dtype.itemsize:
        raise RuntimeError(
            f"linalg.vector_norm: the dtype of the input ({_scalar_type_name(self)}) "
            "should be convertible without narrowing to the specified dtype "
            f"({_SCALAR_TYPE_NAMES.get(wanted.name, wanted.name)})"
        )
    return self.astype(wanted)


@_silently
def vector_norm(
    self: np.ndarray,
    ord: Any,
    dim: Sequence[int] | None,
    keepdim: bool,
    dtype: Any,
) -> np.ndarray:
    """The `ord`-norm of the elements over `dim` (every dim when None or empty): the
    count of non-zeros for 0, the largest (smallest) magnitude for inf (-inf), else
    sum(|x|^ord)^(1/ord). The result is real."""
    self = _check_vector_norm_dtype(self, dtype)
    if isinstance(ord, complex):
        raise RuntimeError(
            "linalg.vector_norm: Expected a non-complex scalar as the order of norm."
        )
    axes = _reduction_dims(dim, self.ndim)
    p = float(ord)
    if math.isinf(p):
        name = "inf" if p > 0 else "-inf"
        if self.size == 0 and (dim is None or len(dim) == 0):
            raise RuntimeError(
                f"linalg.vector_norm cannot compute the {name} norm on an empty tensor "
                "because the operation does not have an identity"
            )
        for d in axes:
            if self.shape[d] == 0:
                raise RuntimeError(
                    f"linalg.vector_norm cannot compute the {name} norm on the "
                    f"dimension {d}because this dimension is empty and the operation "
                    "does not have an identity"
                )
    magnitude = np.abs(self)
    real = magnitude.dtype
    if p == 0:
        result = np.sum(magnitude != 0, axis=axes, keepdims=keepdim, dtype=real)
    elif p == math.inf:
        result = np.max(magnitude, axis=axes, keepdims=keepdim)
    elif p == -math.inf:
        result = np.min(magnitude, axis=axes, keepdims=keepdim)
    elif p == 1:
        result = np.sum(magnitude, axis=axes, keepdims=keepdim)
    elif p == 2:
        result = np.sqrt(np.sum(magnitude * magnitude, axis=axes, keepdims=keepdim))
    else:
        powered = np.sum(magnitude**p, axis=axes, keepdims=keepdim)
        result = powered ** (1.0 / p)
    return np.asarray(result, real)


def dist(self: np.ndarray, other: np.ndarray, p: Any) -> np.ndarray:
    """The p-norm of self - other (broadcast), in their common (floating) dtype; the
    result is real."""
    common = _common_dtype(self, other)
    self, other = self.astype(common, copy=False), other.astype(common, copy=False)
    if self.dtype.kind == "b" and other.dtype.kind == "b":
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. "
            "Use the `^` or `logical_xor()` operator instead."
        )
    if self.dtype.kind not in "fc":
        raise RuntimeError(
            "norm(): input dtype should be either floating point or complex. Got "
            f"{_scalar_type_name(self)} instead."
        )
    _check_broadcast(self, other)
    return vector_norm(self - other, p, None, False, None)


# ---- kernels that check their arguments as PyTorch does (see checked_kernels) ----
from .checked_kernels import (  # noqa: E402  (re-exported for kernel expressions)
    cat_arrays,
    negative,
    power,
    stack_arrays,
    subtract,
)

__all__ += ["cat_arrays", "stack_arrays", "negative", "subtract", "power"]
