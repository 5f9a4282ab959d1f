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
  for an operator argument; it never requires grad and ranks lowest in promotion. Only
  `wrap_number` makes one (with its `_number_casts`, which no other tensor has).

The operator methods (`add`, `mul`, `permute`, ...) are generated from
native_functions.yaml and installed by `install_methods`; the hand-written methods that
call operators (`to`, `new_*`, `.T`, Python's operators, `t[i]`, `backward`, ...) are in
tensor_api.py, installed by its `install` and declared at the end of the class for type
checkers. This file is floor 3 (docs/architecture.md): it imports nothing above it; what
it needs from above (remaking a view's grad_fn, the legacy constructor) reaches it
through `HOOKS`, filled when gradgen is imported.
"""

from __future__ import annotations

import _thread
import builtins
import threading
import warnings
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from . import devices, dtypes
from .formatting import format_tensor
from .graph import NO_EDGE, AccumulateGrad, Edge, Node, RemovableHandle
from .numpy_kernels import _wrap_dim  # PyTorch's maybe_wrap_dim, one definition

if TYPE_CHECKING:
    # types only: tensor_api sits above this module (floor 5), and the generated
    # methods are typed by generated/tensor_base.pyi, a stub only.
    from . import legacy_tensors as _legacy, random as _random, tensor_api as _api
    from .generated.tensor_base import TensorBase
    from .indexing import getitem as _getitem, setitem as _setitem
    from .norms import tensor_norm as _tensor_norm
    from .functional import nonzero as _nonzero
    from .functional import unique as _unique
    from .functional import unique_consecutive as _unique_consecutive
else:
    TensorBase = object  # the methods are attached at import (install_methods)

Number = int | float | complex | bool
_NDARRAY = np.ndarray


class Hooks:
    """What the Tensor core takes from higher floors, filled by `tensor_api.install`
    when gradgen is imported (as PyTorch's autograd registers its VariableHooks with
    the tensor core): calling them from here costs an attribute read, not an import."""

    # A view whose base changed in place remakes its grad_fn (view_history).
    refresh_view: Callable[[Tensor], None]
    # PyTorch's legacy constructor `Tensor([1, 2])`, `Tensor(2, 3)` (factories).
    legacy_data: Callable[[Any, Any, tuple[Any, ...]], np.ndarray]


HOOKS = Hooks()

# Guards the creation of a leaf's AccumulateGrad (PyTorch's autograd-meta mutex).
_ACCUMULATOR_LOCK = threading.Lock()
_acquire_accumulator_lock = _ACCUMULATOR_LOCK.acquire
_release_accumulator_lock = _ACCUMULATOR_LOCK.release
_weak_reference = weakref.ref
_RLock = _thread.RLock  # threading.RLock() without its Python wrapper


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


class Tensor(TensorBase):
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
        # A leaf's AccumulateGrad mutex, kept across its graphs (set with the leaf's
        # first AccumulateGrad; unset until then, so no constructor writes it).
        "_accumulator_mutex",
        # A wrapped number's array in other dtypes (NumberCasts; set by wrap_number,
        # unset on any other tensor).
        "_number_casts",
        "__weakref__",
    )
    _accumulator_mutex: threading.RLock
    _number_casts: NumberCasts

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
            data = HOOKS.legacy_data(data, requires_grad, sizes)
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
    def dtype(self) -> dtypes.dtype:
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
        return self._data.dtype.kind in "fV"  # V: ml_dtypes' bfloat16

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
            HOOKS.refresh_view(self)
        return self._grad_fn

    @property
    def output_nr(self) -> int:
        return self._output_nr

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
        if value and self._data.dtype.kind not in "fcV":
            raise RuntimeError(
                "only Tensors of floating point and complex dtype can require gradients"
            )
        self._requires_grad = bool(value)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        if self._grad_fn is not None and not requires_grad:
            self.requires_grad = requires_grad  # raises PyTorch's non-leaf error
        if requires_grad and self._data.dtype.kind not in "fcV":
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
        reference = self._grad_accumulator
        accumulator = reference() if reference is not None else None
        if accumulator is None:
            accumulator = self._new_grad_accumulator()
        return accumulator

    def _new_grad_accumulator(self) -> AccumulateGrad:
        """The AccumulateGrad of a leaf that requires grad and has none alive (what the
        generated fast paths call when they find none; another thread may have made
        one since, which is then the one)."""
        # Two threads recording on this leaf at once must get the same node (its mutex
        # guards `.grad`): create it under a lock, checking again inside.
        # (acquire and release, not `with`: half the cost, once per leaf and graph)
        _acquire_accumulator_lock()
        try:
            reference = self._grad_accumulator
            accumulator = reference() if reference is not None else None
            if accumulator is None:
                # The mutex outlives the node: a leaf gets a new AccumulateGrad per
                # graph but has at most one alive, so one mutex per leaf guards its
                # `.grad` as one per node does, made once.
                try:
                    mutex = self._accumulator_mutex
                except AttributeError:  # the leaf's first AccumulateGrad
                    mutex = self._accumulator_mutex = _RLock()
                accumulator = AccumulateGrad(self, mutex)
                self._grad_accumulator = _weak_reference(accumulator)
        finally:
            _release_accumulator_lock()
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
        extras = node._extra()  # (not `node._retains_grad =`: a custom ctx refuses it)
        if extras.retains_grad is None:
            extras.retains_grad = {}
        extras.retains_grad[self._output_nr] = weakref.ref(self)

    @property
    def retains_grad(self) -> bool:
        node = self._grad_fn
        if node is None or node._retains_grad is None:
            return False
        ref = node._retains_grad.get(self._output_nr)
        return ref is not None and ref() is self

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

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        """`np.asarray(t)`: the data, as `numpy()` (RuntimeError if it requires grad)."""
        data = self.numpy()
        if dtype is not None and np.dtype(dtype) != data.dtype:
            return data.astype(dtype)
        return data.copy() if copy else data

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return int(self._data.shape[0])

    def __index__(self) -> int:
        if self._data.dtype.kind not in "iu" or self._data.size != 1:
            raise TypeError(
                "only integer tensors of a single element can be converted to an index"
            )
        return int(self._data.reshape(()))

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise RuntimeError(
                "Boolean value of Tensor with more than one value is ambiguous"
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

    def __pos__(self) -> Tensor:
        return self

    # -- installed by tensor_api.install, declared here for type checkers (last in the
    # class: `float`, `int` and `bool` shadow the builtins) ------------------------------
    if TYPE_CHECKING:
        to = _api.to
        type_as = _api.type_as
        type = _legacy.tensor_type  # noqa: A003
        __format__ = _api.tensor_format
        uniform_ = _random.uniform_
        normal_ = _random.normal_
        bernoulli_ = _random.bernoulli_
        geometric_ = _random.geometric_
        log_normal_ = _random.log_normal_
        cauchy_ = _random.cauchy_
        random_ = _random.random_
        bernoulli = _random.bernoulli
        multinomial = _random.multinomial
        new_tensor = _api.new_tensor
        new_full = _api.new_full
        new_zeros = _api.new_zeros
        new_ones = _api.new_ones
        new_empty = _api.new_empty
        backward = _api.backward
        norm = _tensor_norm
        unique = _unique
        nonzero = _nonzero
        unique_consecutive = _unique_consecutive
        __iter__ = _api.iterate
        __getitem__ = _getitem
        __setitem__ = _setitem
        __array_ufunc__ = _api.array_ufunc
        __array_function__ = _api.array_function

        @property
        def T(self) -> Tensor: ...  # noqa: N802
        @property
        def mT(self) -> Tensor: ...  # noqa: N802
        @property
        def H(self) -> Tensor: ...  # noqa: N802
        @property
        def mH(self) -> Tensor: ...  # noqa: N802
        @property
        def real(self) -> Tensor: ...
        @property
        def imag(self) -> Tensor: ...

        __add__: _api.Binary
        __radd__: _api.Binary
        __sub__: _api.Binary
        __rsub__ = _api.reversed_sub
        __mul__: _api.Binary
        __rmul__: _api.Binary
        __pow__: _api.Binary
        __rpow__: _api.Binary
        __matmul__ = _api.matmul
        __rmatmul__ = _api.reversed_matmul
        __iadd__: _api.Binary
        __isub__: _api.Binary
        __imul__: _api.Binary
        __truediv__: _api.Binary
        __rtruediv__ = _api.reversed_true_divide
        __itruediv__: _api.Binary
        __floordiv__: _api.Binary
        __rfloordiv__: _api.Binary
        __mod__: _api.Binary
        __eq__: _api.Binary  # type: ignore[assignment]
        __ne__: _api.Binary  # type: ignore[assignment]
        __lt__: _api.Binary
        __le__: _api.Binary
        __gt__: _api.Binary
        __ge__: _api.Binary
        __and__: _api.Binary
        __rand__: _api.Binary
        __or__: _api.Binary
        __ror__: _api.Binary
        __xor__: _api.Binary
        __rxor__: _api.Binary
        __invert__ = _api.invert
        __neg__: _api.Unary
        __abs__: _api.Unary
        double: _api.Unary
        float: _api.Unary
        long: _api.Unary
        int: _api.Unary
        bool: _api.Unary
        cfloat: _api.Unary
        cdouble: _api.Unary
        half: _api.Unary
        bfloat16: _api.Unary  # installed when ml_dtypes is (dtypes.HAS_BFLOAT16)
        short: _api.Unary
        char: _api.Unary
        byte: _api.Unary


# `object.__new__`: an instance of a slotted class without its `__init__` call (the
# result tensors below, the generated fast paths' nodes).
new_object = object.__new__


def array_tensor(data: np.ndarray) -> Tensor:
    """`Tensor(data)` for an ndarray `data`, built without `__init__`'s call (its
    legacy-constructor check and keyword argument), at about two thirds of its cost:
    what the fast paths and kernels wrap their results with. It sets every slot
    `__init__` sets, to the same values (tests/test_fwd_s10.py compares the two)."""
    tensor: Tensor = new_object(Tensor)
    tensor._data = data
    tensor._requires_grad = False
    tensor._grad_fn = None
    tensor._output_nr = 0
    tensor._grad = None
    tensor._grad_accumulator = None
    tensor._version_counter = None
    tensor._hooks = None
    tensor._post_accumulate_grad_hooks = None
    tensor._base = None
    tensor._view_version = -1
    tensor._is_wrapped_number = False
    tensor._fw_grad = None
    return tensor


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
# The cached wrapped floats and ints again, by value alone (a dict of floats only and
# one of ints only, so 1.0 never meets 1 or True): the generated bindings read the
# floats inline for `x * 2.0` before they call tensor_argument, which reads both.
WRAPPED_FLOATS: dict[float, Tensor] = {}
WRAPPED_INTS: dict[int, Tensor] = {}


class NumberCasts(dict[np.dtype[Any], np.ndarray | None]):
    """A wrapped number's array cast to the dtype of a tensor it meets, each made on
    its first use: where a wrapped number of no higher category meets a float or
    complex tensor (`3 * x`, `x_float32 * 0.5`), promotion gives the tensor's dtype,
    and the generated fast paths' inline kernels take the number in it from here
    rather than by a cast per call (read-only, as the number's own array). None for
    any other dtype: the kernel's promotion decides."""

    __slots__ = ("number",)

    def __init__(self, number: np.ndarray) -> None:
        super().__init__()
        self.number = number

    def __missing__(self, dtype_: np.dtype[Any]) -> np.ndarray | None:
        cast = None
        # (not a bool number: `x - True` is the kernel's error, `x * True` its sum)
        if dtype_.kind in "fc" and self.number.dtype.kind in "iuf":
            with np.errstate(all="ignore"):
                cast = self.number.astype(dtype_)
            cast.flags.writeable = False
            if np.isinf(cast) and not np.isinf(self.number):
                # 1e5 is inf in float16: the kernel computes in float32 (PyTorch's
                # float arithmetic for half precision), variable_type_utils.promoted_array.
                cast = None
        self[dtype_] = cast
        return cast


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
        wrapped._number_casts = NumberCasts(wrapped._data)
        # nan != nan, and -0.0 == 0.0 with the same hash: neither is cached.
        if (
            len(_WRAPPED) < _WRAPPED_LIMIT
            and value == value
            and (value != 0 or type(value) in (int, bool))
        ):
            _WRAPPED[key] = wrapped
            if type(value) is float:
                WRAPPED_FLOATS[value] = wrapped
            elif type(value) is int:
                WRAPPED_INTS[value] = wrapped
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
    grad_fn = tensor.grad_fn
    if grad_fn is not None:
        return Edge(grad_fn, tensor._output_nr)
    accumulator = tensor._get_grad_accumulator()
    return NO_EDGE if accumulator is None else Edge(accumulator, 0)


def is_tensor(obj: Any) -> builtins.bool:
    """Whether `obj` is a gradgen Tensor (PyTorch's torch.is_tensor)."""
    return isinstance(obj, Tensor)
