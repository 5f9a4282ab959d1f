"""Tensor: a numpy array with its autograd metadata.

Invariants:
- `_data` is always a numpy ndarray (0-d for scalars), never a numpy scalar.
- `_grad_fn` is the Node that produced this tensor (None for leaves); `_output_nr` is
  which of that node's outputs it is. A tensor requires grad iff it is a leaf with
  `_requires_grad` set or it has a `_grad_fn`.
- `_grad` of a leaf is written only by its AccumulateGrad (or by the user's setter).
  A non-leaf's gradient lives in the engine's buffers unless `retain_grad()` was called.
- `_grad_accumulator` is a weak reference: the graph's edges keep the AccumulateGrad
  alive, the leaf does not.
- `_version_counter` is shared by every tensor over the same memory (views, detach(),
  saved outputs) and bumped by every in-place change; SavedVariable compares it.
- A wrapped number (`_is_wrapped_number`) is a Python number turned into a 0-d tensor
  for an operator argument; it never requires grad and ranks lowest in promotion.

The operator methods (`add`, `mul`, `permute`, ...) are generated from
native_functions.yaml and installed by `install_methods`; this file holds the
hand-written rest of PyTorch's Tensor API.
"""

from __future__ import annotations

import builtins
import operator
import threading
import warnings
import weakref
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from . import devices, dtypes
from .dtypes import dtype
from .formatting import format_tensor
from .graph import AccumulateGrad, Node, RemovableHandle
from .numpy_kernels import _wrap_dim  # PyTorch's maybe_wrap_dim, one definition

if TYPE_CHECKING:
    from .graph import Edge

Number = int | float | complex | bool
_NDARRAY = np.ndarray


# Guards the creation of a leaf's AccumulateGrad (PyTorch's autograd-meta mutex).
_ACCUMULATOR_LOCK = threading.Lock()


class VersionCounter:
    """How many in-place changes the memory of a group of tensors has seen."""

    __slots__ = ("version",)

    def __init__(self) -> None:
        self.version = 0


class Size(tuple):  # type: ignore[type-arg]
    """A tensor's shape: a tuple that prints as ``gradgen.Size([2, 3])``."""

    def __repr__(self) -> str:
        return f"gradgen.Size({list(self)})"

    def numel(self) -> int:
        count = 1
        for extent in self:
            count *= extent
        return count


NON_LEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its "
    ".grad attribute won't be populated during autograd.backward(). If you indeed want "
    "the .grad field to be populated for a non-leaf Tensor, use .retain_grad() on the "
    "non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure you access "
    "the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 for more "
    "information."
)


class Tensor:
    """A multi-dimensional array that records the operations applied to it."""

    __slots__ = (
        "_data",
        "_requires_grad",
        "_grad_fn",
        "_output_nr",
        "_grad",
        "_grad_accumulator",
        "_version_counter",
        "_hooks",
        "_post_accumulate_grad_hooks",
        "_base",
        "_view_version",
        "_is_wrapped_number",
        "_fw_grad",
        "__weakref__",
    )

    # numpy defers to us in `ndarray * tensor`.
    __array_priority__ = 1000

    def __init__(
        self,
        data: np.ndarray | Any = None,
        requires_grad: bool = False,
        *sizes: Any,
        version_counter: VersionCounter | None = None,
    ) -> None:
        if data.__class__ is not _NDARRAY:
            # PyTorch's legacy constructor: `Tensor([1, 2])`, `Tensor(2, 3)`, `Tensor()`
            # (gradgen's own calls always pass an array, and requires_grad by keyword).
            from .scalars import legacy_data

            data = legacy_data(data, requires_grad, sizes)
            requires_grad = False
        self._data = data
        self._requires_grad = requires_grad
        self._grad_fn: Node | None = None
        self._output_nr = 0
        self._grad: Tensor | None = None
        self._grad_accumulator: weakref.ref[AccumulateGrad] | None = None
        # Created on first use (a view, a save, an in-place change): most results never
        # need one.
        self._version_counter = version_counter
        self._hooks: list[Callable[..., Any]] | None = None
        self._post_accumulate_grad_hooks: list[Callable[..., Any]] | None = None
        self._base: Tensor | None = None
        # For a view: the version its grad_fn was made at (-1: never remade; see
        # view_history.refresh_view).
        self._view_version = -1
        self._is_wrapped_number = False
        # The forward-mode tangent while a dual level is open (see autograd.forward_ad).
        self._fw_grad: Tensor | None = None

    # -- metadata ---------------------------------------------------------------------
    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    def size(self, dim: int | None = None) -> Size | int:
        if dim is None:
            return Size(self._data.shape)
        extent: int = self._data.shape[_wrap_dim(dim, self._data.ndim)]
        return extent

    @property
    def dtype(self) -> dtype:
        return dtypes._FROM_NUMPY[self._data.dtype]

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def dim(self) -> int:
        return self._data.ndim

    def numel(self) -> int:
        return int(self._data.size)

    def is_complex(self) -> bool:
        return self._data.dtype.kind == "c"

    def is_floating_point(self) -> bool:
        return self._data.dtype.kind == "f"

    @property
    def _version(self) -> int:
        counter = self._version_counter
        return 0 if counter is None else counter.version

    def _counter(self) -> VersionCounter:
        """The version counter, created on first use and then shared by views."""
        counter = self._version_counter
        if counter is None:
            counter = self._version_counter = VersionCounter()
        return counter

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def grad_fn(self) -> Node | None:
        if self._base is not None:
            from .view_history import refresh_view

            refresh_view(self)
        return self._grad_fn

    @property
    def output_nr(self) -> int:
        return self._output_nr

    @property
    def real(self) -> Tensor:
        """The real part (a view for complex tensors; the tensor itself otherwise)."""
        if not self.is_complex():
            return self
        from .generated.ops import real

        return real(self)  # type: ignore[no-any-return]

    @property
    def imag(self) -> Tensor:
        """The imaginary part, a view (an error for real tensors, as PyTorch)."""
        from .generated.ops import imag

        return imag(self)  # type: ignore[no-any-return]

    @property
    def _is_view(self) -> bool:
        return self._base is not None

    # -- requires_grad ----------------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        return self._requires_grad or self.grad_fn is not None

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if self._grad_fn is not None:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want "
                "to use a computed variable in a subgraph that doesn't require "
                "differentiation use var_no_grad = var.detach()."
            )
        if value and self._data.dtype.kind not in "fc":
            raise RuntimeError(
                "only Tensors of floating point and complex dtype can require gradients"
            )
        self._requires_grad = bool(value)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        if self._grad_fn is not None and not requires_grad:
            self.requires_grad = requires_grad  # raises PyTorch's non-leaf error
        if requires_grad and self._data.dtype.kind not in "fc":
            raise RuntimeError(
                "only Tensors of floating point dtype can require gradients"
            )
        if self._grad_fn is None:
            self._requires_grad = bool(requires_grad)
        return self

    # -- grad -------------------------------------------------------------------------
    @property
    def grad(self) -> Tensor | None:
        if self._grad_fn is not None and self._grad is None and not self.retains_grad:
            warnings.warn(NON_LEAF_GRAD_WARNING, UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(
                    f"assigned grad expected to be a Tensor or None but got grad of "
                    f"type {type(value).__name__}"
                )
            if value._data.dtype != self._data.dtype:
                raise RuntimeError(
                    "attempting to assign a gradient with dtype "
                    f"'{dtypes.spelling(value).typeid}' to a tensor with "
                    f"grad_dtype '{dtypes.spelling(self).scalar_type}'. "
                    "The gradient must match the tensor's grad_dtype (defaults to the "
                    "tensor's dtype). You can set the tensor's grad_dtype attribute with "
                    "a specific dtype, or None to allow any dtype. Set grad_dtype with "
                    "caution. Diverging the dtypes of a tensor and its gradient may break "
                    "downstream systems that assume they match."
                )
            if value._data.shape != self._data.shape:
                raise RuntimeError(
                    f"attempting to assign a gradient of size '{list(value.shape)}' to a "
                    f"tensor of size '{list(self.shape)}'. Please ensure that the "
                    "gradient and the tensor are the same size"
                )
        self._grad = value

    # -- graph ------------------------------------------------------------------------
    def _get_grad_accumulator(self) -> AccumulateGrad | None:
        """The leaf's AccumulateGrad, created on first use and held weakly."""
        if not self._requires_grad:
            return None
        accumulator = self._grad_accumulator() if self._grad_accumulator else None
        if accumulator is None:
            # Two threads recording on this leaf at once must get the same node (its
            # mutex guards `.grad`): create it under a lock, checking again inside.
            with _ACCUMULATOR_LOCK:
                accumulator = (
                    self._grad_accumulator() if self._grad_accumulator else None
                )
                if accumulator is None:
                    accumulator = AccumulateGrad(self)
                    self._grad_accumulator = weakref.ref(accumulator)
        return accumulator

    def _shallow_copy(self) -> Tensor:
        """A tensor over the same data and version counter, with no history."""
        copy = Tensor(self._data, version_counter=self._counter())
        copy._base = self._base
        return copy

    def detach(self) -> Tensor:
        """The same data, cut from the graph (shares the version counter)."""
        return self._shallow_copy()

    def register_hook(self, hook: Callable[[Tensor], Tensor | None]) -> RemovableHandle:
        """`hook(grad)` runs when this tensor's gradient is computed; may replace it."""
        if not self.requires_grad:
            raise RuntimeError(
                "cannot register a hook on a tensor that doesn't require gradient"
            )
        if self._grad_fn is not None:
            return self._grad_fn._register_tensor_pre_hook(self._output_nr, hook)
        if self._hooks is None:
            self._hooks = []
        self._hooks.append(hook)
        return RemovableHandle(self._hooks, hook)

    def register_post_accumulate_grad_hook(
        self, hook: Callable[[Tensor], None]
    ) -> RemovableHandle:
        """`hook(tensor)` runs after this leaf's `.grad` was updated by backward."""
        if not self.requires_grad:
            raise RuntimeError(
                "cannot register a hook on a tensor that doesn't require gradient"
            )
        if self._grad_fn is not None:
            raise RuntimeError(
                "post accumulate grad hooks cannot be registered on non-leaf tensors"
            )
        if self._post_accumulate_grad_hooks is None:
            self._post_accumulate_grad_hooks = []
        self._post_accumulate_grad_hooks.append(hook)
        return RemovableHandle(self._post_accumulate_grad_hooks, hook)

    def retain_grad(self) -> None:
        """Keep this non-leaf's gradient in `.grad` during backward (no-op on leaves)."""
        if not self.requires_grad:
            raise RuntimeError(
                "can't retain_grad on Tensor that has requires_grad=False"
            )
        node = self._grad_fn
        if node is None:
            return
        if node._retains_grad is None:
            node._retains_grad = {}
        node._retains_grad[self._output_nr] = weakref.ref(self)

    @property
    def retains_grad(self) -> bool:
        node = self._grad_fn
        if node is None or node._retains_grad is None:
            return False
        ref = node._retains_grad.get(self._output_nr)
        return ref is not None and ref() is self

    def backward(
        self,
        gradient: Tensor | None = None,
        retain_graph: bool | None = None,
        create_graph: bool = False,
        inputs: Tensor | Sequence[Tensor] | None = None,
    ) -> None:
        """Accumulate d(self)/d(leaf) into every leaf's `.grad` (see autograd.backward)."""
        from .autograd import backward

        backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    # -- conversion -------------------------------------------------------------------
    def item(self) -> Number:
        if self._data.size != 1:
            raise RuntimeError(
                f"a Tensor with {self._data.size} elements cannot be converted to Scalar"
            )
        return self._data.reshape(()).item()  # type: ignore[no-any-return]

    def tolist(self) -> Any:
        return self._data.tolist()

    def numpy(self) -> np.ndarray:
        if self.requires_grad:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use "
                "tensor.detach().numpy() instead."
            )
        return self._data

    def to(self, *args: Any, **kwargs: Any) -> Tensor:
        """PyTorch's Tensor.to: `to(dtype)`, `to(device, dtype=None)`, `to(other)`, with
        `non_blocking`, `copy` and `memory_format`. The tensor itself when nothing
        changes (and no copy is asked for), else a differentiable converted copy."""
        target, non_blocking, copy, memory_format = _to_arguments(self, args, kwargs)
        from .composites import to_dtype

        return to_dtype(self, target, non_blocking, copy, memory_format)

    def type_as(self, other: Tensor) -> Tensor:
        return self.to(other.dtype)

    @property
    def device(self) -> devices.device:
        return devices.CPU

    @property
    def is_cuda(self) -> builtins.bool:
        return False

    def cpu(self) -> Tensor:
        return self

    def cuda(self, device: Any = None, non_blocking: builtins.bool = False) -> Tensor:
        devices.check_device("cuda" if device is None else device)
        return self

    def element_size(self) -> builtins.int:
        return builtins.int(self._data.itemsize)

    def stride(
        self, dim: builtins.int | None = None
    ) -> tuple[builtins.int, ...] | builtins.int:
        """Strides in elements (numpy counts bytes)."""
        itemsize = self._data.itemsize
        strides = tuple(s // itemsize for s in self._data.strides)
        return strides if dim is None else strides[_wrap_dim(dim, self._data.ndim)]

    def is_contiguous(self, memory_format: Any = None) -> builtins.bool:
        return builtins.bool(self._data.flags.c_contiguous)

    @property
    def data(self) -> Tensor:
        """The same memory as a tensor outside autograd: no history, no grad, and a
        version counter of its own, so changes through it go unnoticed (PyTorch's
        `.data`; `detach()` is the safe form)."""
        return Tensor(self._data)

    @data.setter
    def data(self, value: Tensor) -> None:
        if not isinstance(value, Tensor):
            raise TypeError(
                f"Variable data has to be a tensor, but got {type(value).__name__}"
            )
        self._data = value._data

    # -- new tensors like this one (dtype from self unless given) ---------------------
    def new_tensor(
        self,
        data: Any,
        dtype: Any = None,
        device: Any = None,
        requires_grad: builtins.bool = False,
    ) -> Tensor:
        from .factories import tensor

        devices.check_device(device)
        return tensor(
            data,
            dtype=self.dtype if dtype is None else dtype,
            requires_grad=requires_grad,
        )

    def new_full(
        self,
        size: Sequence[builtins.int],
        fill_value: Number,
        *,
        dtype: Any = None,
        device: Any = None,
        requires_grad: builtins.bool = False,
    ) -> Tensor:
        from .factories import full

        devices.check_device(device)
        return full(
            size,
            fill_value,
            dtype=self.dtype if dtype is None else dtype,
            requires_grad=requires_grad,
        )

    def new_zeros(
        self,
        *size: Any,
        dtype: Any = None,
        device: Any = None,
        requires_grad: builtins.bool = False,
    ) -> Tensor:
        return self.new_full(
            _size_argument(size),
            0,
            dtype=dtype,
            device=device,
            requires_grad=requires_grad,
        )

    def new_ones(
        self,
        *size: Any,
        dtype: Any = None,
        device: Any = None,
        requires_grad: builtins.bool = False,
    ) -> Tensor:
        return self.new_full(
            _size_argument(size),
            1,
            dtype=dtype,
            device=device,
            requires_grad=requires_grad,
        )

    def new_empty(
        self,
        *size: Any,
        dtype: Any = None,
        device: Any = None,
        requires_grad: builtins.bool = False,
    ) -> Tensor:
        """Zeros: gradgen never hands out uninitialised memory."""
        return self.new_zeros(
            *size, dtype=dtype, device=device, requires_grad=requires_grad
        )

    # -- transposes as properties ------------------------------------------------------
    @property
    def T(self) -> Tensor:  # noqa: N802  (PyTorch's name)
        """The dimensions reversed (a transpose for a matrix)."""
        if self._data.ndim not in (0, 2):
            warnings.warn(
                "The use of `x.T` on tensors of dimension other than 2 to reverse their "
                "shape is deprecated and it will throw an error in a future release. "
                "Consider `x.mT` to transpose batches of matrices or `x.permute(*torch."
                "arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a tensor.",
                UserWarning,
                stacklevel=2,
            )
        return self.permute(tuple(range(self._data.ndim - 1, -1, -1)))  # type: ignore[attr-defined,no-any-return]

    @property
    def mT(self) -> Tensor:  # noqa: N802
        """The last two dimensions swapped (a transpose of each matrix in a batch)."""
        if self._data.ndim < 2:
            raise RuntimeError(
                "tensor.mT is only supported on matrices or batches of matrices. Got "
                f"{self._data.ndim}-D tensor."
            )
        return self.transpose(-2, -1)  # type: ignore[attr-defined,no-any-return]

    @property
    def H(self) -> Tensor:  # noqa: N802
        """The conjugate transpose of a matrix."""
        if self._data.ndim not in (0, 2):
            raise RuntimeError(
                "tensor.H is only supported on matrices (2-D tensors). Got "
                f"{self._data.ndim}-D tensor."
                + (
                    " For batches of matrices, consider using tensor.mH"
                    if self._data.ndim > 2
                    else ""
                )
            )
        return self.T.conj()  # type: ignore[attr-defined,no-any-return]

    @property
    def mH(self) -> Tensor:  # noqa: N802
        """The conjugate transpose of each matrix in a batch."""
        if self._data.ndim < 2:
            raise RuntimeError(
                "tensor.mH is only supported on matrices or batches of matrices. Got "
                f"{self._data.ndim}-D tensor."
            )
        return self.mT.conj()  # type: ignore[attr-defined,no-any-return]

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        """`np.asarray(t)`: the data, as `numpy()` (RuntimeError if it requires grad)."""
        data = self.numpy()
        if dtype is not None and np.dtype(dtype) != data.dtype:
            return data.astype(dtype)
        return data.copy() if copy else data

    def __array_ufunc__(
        self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any
    ) -> Any:
        """`np.exp(t)`, `array * t`: the gradgen operator (see numpy_interop)."""
        from .numpy_interop import array_ufunc

        return array_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        """`np.sum(t, axis=0)`: gradgen operators, or NotImplemented (see numpy_interop)."""
        from .numpy_interop import array_function

        return array_function(func, types, args, kwargs)

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return int(self._data.shape[0])

    def __iter__(self) -> Iterator[Tensor]:
        """The rows along dim 0, as PyTorch: `unbind(0)`, so they keep the graph."""
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))  # type: ignore[attr-defined]

    def __getitem__(self, index: Any) -> Tensor:
        """Basic indexing gives a differentiable view, advanced indexing (tensors,
        lists, masks) a differentiable copy; see gradgen.indexing."""
        return indexing.getitem(self, index)

    def __setitem__(self, index: Any, value: Any) -> None:
        """`t[index] = value`, recorded as index_put_ when it needs to be."""
        indexing.setitem(self, index, value)

    def __index__(self) -> int:
        if self._data.dtype.kind not in "iu" or self._data.size != 1:
            raise TypeError(
                "only integer tensors of a single element can be converted to an index"
            )
        return int(self._data.reshape(()))

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise RuntimeError(
                f"Boolean value of Tensor with more than one value is ambiguous"
            )
        return bool(self._data)

    def __float__(self) -> float:
        return float(self.item())  # type: ignore[arg-type]

    def __int__(self) -> int:
        return int(self.item())  # type: ignore[arg-type]

    def __complex__(self) -> complex:
        return complex(self.item())

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        if self._grad_fn is not None:
            suffix: str | None = f"grad_fn=<{self._grad_fn.name()}>"
        elif self._requires_grad:
            suffix = "requires_grad=True"
        else:
            suffix = None
        return format_tensor(
            self._data,
            dtype_name=self._data.dtype.name,
            default_dtype_name=dtypes.get_default_dtype().name,
            suffix=suffix,
        )

    # -- Python operators (route to the generated operators) --------------------------
    def __add__(self, other: Any) -> Tensor:
        return self.add(other)  # type: ignore[attr-defined,no-any-return]

    __radd__ = __add__

    def __sub__(self, other: Any) -> Tensor:
        return self.sub(other)  # type: ignore[attr-defined,no-any-return]

    def __rsub__(self, other: Any) -> Tensor:
        from .generated.ops import rsub

        return rsub(self, other)  # type: ignore[no-any-return]

    def __mul__(self, other: Any) -> Tensor:
        return self.mul(other)  # type: ignore[attr-defined,no-any-return]

    __rmul__ = __mul__

    def __pow__(self, exponent: Any) -> Tensor:
        # Straight to the overload (x ** 2 is pow.Tensor_Scalar, x ** y pow.Tensor_Tensor)
        # rather than through overload resolution: this is on every `x ** n`.
        from .generated import operators

        if isinstance(exponent, Tensor):
            return operators.pow_Tensor_Tensor.call(self, exponent)  # type: ignore[no-any-return]
        if isinstance(exponent, (bool, int, float, complex, np.number)):
            return operators.pow_Tensor_Scalar.call(self, exponent)  # type: ignore[no-any-return]
        return self.pow(exponent)  # type: ignore[attr-defined,no-any-return]

    def __rpow__(self, base: Any) -> Tensor:
        from .generated.ops import pow  # pow.Scalar: a number base

        return pow(base, self)  # type: ignore[no-any-return]

    def __matmul__(self, other: Any) -> Tensor:
        if not isinstance(other, Tensor):
            return NotImplemented
        return self.matmul(other)  # type: ignore[attr-defined,no-any-return]

    def __rmatmul__(self, other: Any) -> Tensor:
        if not isinstance(other, Tensor):
            return NotImplemented
        return other.matmul(self)  # type: ignore[attr-defined,no-any-return]

    def __iadd__(self, other: Any) -> Tensor:
        return self.add_(other)  # type: ignore[attr-defined,no-any-return]

    def __isub__(self, other: Any) -> Tensor:
        return self.sub_(other)  # type: ignore[attr-defined,no-any-return]

    def __imul__(self, other: Any) -> Tensor:
        return self.mul_(other)  # type: ignore[attr-defined,no-any-return]

    def __truediv__(self, other: Any) -> Tensor:
        return self.div(other)  # type: ignore[attr-defined,no-any-return]

    def __rtruediv__(self, other: Any) -> Tensor:
        # PyTorch's: `self.reciprocal() * other` (MulBackward0, and its rounding).
        try:
            wrapped = wrap_number(other)
        except TypeError:
            return NotImplemented
        return self.reciprocal().mul(wrapped)  # type: ignore[attr-defined,no-any-return]

    def __itruediv__(self, other: Any) -> Tensor:
        return self.div_(other)  # type: ignore[attr-defined,no-any-return]

    def __floordiv__(self, other: Any) -> Tensor:
        try:
            return self.floor_divide(other)  # type: ignore[attr-defined,no-any-return]
        except TypeError:
            return NotImplemented

    def __rfloordiv__(self, other: Any) -> Tensor:
        from .generated.ops import floor_divide

        try:
            return floor_divide(other, self)  # type: ignore[no-any-return]
        except TypeError:
            return NotImplemented

    def __mod__(self, other: Any) -> Tensor:
        try:
            return self.remainder(other)  # type: ignore[attr-defined,no-any-return]
        except TypeError:
            return NotImplemented

    # Comparisons give bool tensors (never requiring grad); a value that is neither a
    # Tensor nor a number gives NotImplemented, so `t == None` is False as in PyTorch.
    # __hash__ stays identity-based (above), so tensors remain usable as dict keys.
    def __eq__(self, other: Any) -> Tensor:  # type: ignore[override]
        try:
            return self.eq(other)  # type: ignore[attr-defined,no-any-return]
        except TypeError:
            return NotImplemented

    def __ne__(self, other: Any) -> Tensor:  # type: ignore[override]
        try:
            return self.ne(other)  # type: ignore[attr-defined,no-any-return]
        except TypeError:
            return NotImplemented

    def __lt__(self, other: Any) -> Tensor:
        try:
            return self.lt(other)  # type: ignore[attr-defined,no-any-return]
        except TypeError:
            return NotImplemented

    def __le__(self, other: Any) -> Tensor:
        try:
            return self.le(other)  # type: ignore[attr-defined,no-any-return]
        except TypeError:
            return NotImplemented

    def __gt__(self, other: Any) -> Tensor:
        try:
            return self.gt(other)  # type: ignore[attr-defined,no-any-return]
        except TypeError:
            return NotImplemented

    def __ge__(self, other: Any) -> Tensor:
        try:
            return self.ge(other)  # type: ignore[attr-defined,no-any-return]
        except TypeError:
            return NotImplemented

    # & | ^ ~ are PyTorch's bitwise operators (logical ones on bool tensors).
    def __and__(self, other: Any) -> Tensor:
        try:
            return self.bitwise_and(other)  # type: ignore[attr-defined,no-any-return]
        except TypeError:
            return NotImplemented

    __rand__ = __and__

    def __or__(self, other: Any) -> Tensor:
        try:
            return self.bitwise_or(other)  # type: ignore[attr-defined,no-any-return]
        except TypeError:
            return NotImplemented

    __ror__ = __or__

    def __xor__(self, other: Any) -> Tensor:
        try:
            return self.bitwise_xor(other)  # type: ignore[attr-defined,no-any-return]
        except TypeError:
            return NotImplemented

    __rxor__ = __xor__

    def __invert__(self) -> Tensor:
        if self._data.dtype.kind not in "biu":
            raise TypeError(
                "~ (operator.invert) is only implemented on integer and Boolean-type tensors"
            )
        return self.bitwise_not()  # type: ignore[attr-defined,no-any-return]

    def __neg__(self) -> Tensor:
        return self.neg()  # type: ignore[attr-defined,no-any-return]

    def __abs__(self) -> Tensor:
        return self.abs()  # type: ignore[attr-defined,no-any-return]

    def __pos__(self) -> Tensor:
        return self

    # -- dtype conversions (last in the class: their names shadow the builtins) ------
    def double(self) -> Tensor:
        return self.to(dtypes.float64)

    def float(self) -> Tensor:
        return self.to(dtypes.float32)

    def long(self) -> Tensor:
        return self.to(dtypes.int64)

    def int(self) -> Tensor:
        return self.to(dtypes.int32)

    def bool(self) -> Tensor:
        return self.to(dtypes.bool)

    def cfloat(self) -> Tensor:
        return self.to(dtypes.complex64)

    def cdouble(self) -> Tensor:
        return self.to(dtypes.complex128)

    # -- pickle and copy.deepcopy: serialization.py (a higher floor) does the work ---
    def __reduce_ex__(self, protocol: Any) -> Any:
        from .serialization import reduce_tensor

        return reduce_tensor(self)

    def __deepcopy__(self, memo: dict[builtins.int, Any]) -> Tensor:
        from .serialization import deepcopy_tensor

        return deepcopy_tensor(self, memo)


def _size_argument(size: tuple[Any, ...]) -> tuple[builtins.int, ...]:
    """`new_zeros(2, 3)` and `new_zeros((2, 3))` alike."""
    if len(size) == 1 and isinstance(size[0], (tuple, list, Size)):
        size = tuple(size[0])
    return tuple(operator.index(extent) for extent in size)


def _to_arguments(
    self: Tensor, arguments: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[dtype, builtins.bool, builtins.bool, Any]:
    """Tensor.to's three signatures (PyTorch's Python binding), as what to_dtype takes."""
    args = list(arguments)
    target = kwargs.pop("dtype", None)
    device = kwargs.pop("device", None)
    if args:
        first = args.pop(0)
        if isinstance(first, Tensor):
            target = first.dtype
        elif isinstance(first, (str, devices.device)):
            device = first
            if args and not isinstance(args[0], builtins.bool):
                target = args.pop(0)
        else:
            target = first
    non_blocking = kwargs.pop("non_blocking", args.pop(0) if args else False)
    copy = kwargs.pop("copy", args.pop(0) if args else False)
    memory_format = kwargs.pop("memory_format", None)
    if args or kwargs:
        unexpected = [type(a).__name__ for a in args] + [f"{k}=" for k in kwargs]
        raise TypeError(
            f"to() received an invalid combination of arguments: {', '.join(unexpected)}"
        )
    devices.check_device(device)
    return (
        self.dtype if target is None else dtypes.as_dtype(target),
        builtins.bool(non_blocking),
        builtins.bool(copy),
        memory_format,
    )


def _is_integer_index(item: Any) -> bool:
    if isinstance(item, bool):
        return False
    if isinstance(item, (int, np.integer)):
        return True
    return (
        isinstance(item, Tensor)
        and item._data.dtype.kind in "iu"
        and item._data.ndim == 0
    )


# Wrapped numbers never require grad and are never written to, so the same one serves
# every `x * 2.0`: a small cache saves a tensor per operator call.
_WRAPPED: dict[tuple[type, Any], Tensor] = {}
_WRAPPED_LIMIT = 1024


def wrap_number(value: Any) -> Tensor:
    """A Python number as a 0-d 'wrapped number' tensor, or a Tensor unchanged."""
    if isinstance(value, Tensor):
        return value
    key = (type(value), value)
    try:
        cached = _WRAPPED.get(key)
    except TypeError:  # an unhashable numpy scalar: do without the cache
        cached = None
    if cached is not None:
        return cached
    if isinstance(value, (bool, int, float, complex, np.number, np.bool_)):
        wrapped = Tensor(
            np.asarray(value, dtype=dtypes.python_scalar_dtype(value).numpy)
        )
        wrapped._is_wrapped_number = True
        wrapped._data.flags.writeable = False
        # nan != nan, and -0.0 == 0.0 with the same hash: neither is cached.
        if (
            len(_WRAPPED) < _WRAPPED_LIMIT
            and value == value
            and (value != 0 or type(value) in (int, bool))
        ):
            _WRAPPED[key] = wrapped
        return wrapped
    raise TypeError(f"expected a Tensor or a number, but got {type(value).__name__}")


def install_methods(cls: type, methods: dict[str, Callable[..., Any]]) -> None:
    """Attach the generated operator methods to Tensor; a clash is a bug, not a choice."""
    for name, method in methods.items():
        if name in cls.__dict__:
            raise RuntimeError(
                f"generated Tensor method '{name}' clashes with a hand-written one"
            )
        setattr(cls, name, method)


def make_edge(tensor: Tensor) -> Edge:
    """Where `tensor`'s gradient goes (PyTorch's gradient_edge)."""
    from .graph import NO_EDGE, Edge

    grad_fn = tensor.grad_fn
    if grad_fn is not None:
        return Edge(grad_fn, tensor._output_nr)
    accumulator = tensor._get_grad_accumulator()
    return NO_EDGE if accumulator is None else Edge(accumulator, 0)


def is_tensor(obj: Any) -> builtins.bool:
    """Whether `obj` is a gradgen Tensor (PyTorch's torch.is_tensor)."""
    return isinstance(obj, Tensor)


# Indexing is a module of its own that builds on Tensor, so it is imported once Tensor
# exists.
from . import indexing  # noqa: E402
