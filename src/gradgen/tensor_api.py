"""The hand-written Tensor methods that call operators: PyTorch's Python-binding layer.

`tensor.py` holds what a tensor is (its data, autograd metadata, hooks, `.grad`); the
methods here build on the generated operators and on modules above it (indexing,
numpy_interop, factories, autograd), so they cannot live in tensor.py without it
importing upwards. `install` puts them on Tensor when gradgen is imported, as
`install_methods` puts the generated ones (tensor.py declares them for type checkers).

- conversions: `to` (PyTorch's THPVariable_to: three signatures), `type_as`, `double()`,
  `float()`, ... (a table of dtypes);
- new tensors like this one: `new_tensor`, `new_full`, `new_zeros`, `new_ones`,
  `new_empty`;
- views as properties: `T`, `mT`, `H`, `mH`, `real`, `imag`;
- Python's operators: a table says which operator each dunder calls and whether a
  TypeError (an operand that is neither a tensor nor a number) means NotImplemented;
  `**`, `/` by a tensor, `@`, `~` have bodies of their own;
- `t[index]`, `t[index] = v` (indexing), iteration (`unbind`), numpy's protocols
  (numpy_interop), `backward` (autograd), `norm` (norms), `unique` and
  `unique_consecutive` (functional).
"""

from __future__ import annotations

import operator
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple, TypeAlias

from . import devices, dtypes, indexing, numpy_interop
from .autograd import backward as _autograd_backward
from .composites import to_dtype
from .dtypes import dtype
from .factories import full, legacy_data
from .legacy_tensors import tensor_type
from .random import METHODS as RANDOM_METHODS
from .factories import tensor as _new_tensor
from .generated import operators, ops
from .functional import nonzero, unique, unique_consecutive
from .norms import tensor_norm
from .tensor import HOOKS, Number, Size, Tensor, wrap_number
from .view_history import refresh_view

# The types of the methods built from the tables below (tensor.py declares them).
Binary: TypeAlias = Callable[[Tensor, Any], Tensor]
Unary: TypeAlias = Callable[[Tensor], Tensor]

# -- conversions ----------------------------------------------------------------------


def to(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """PyTorch's Tensor.to: `to(dtype)`, `to(device, dtype=None)`, `to(other)`, with
    `non_blocking`, `copy` and `memory_format`. The tensor itself when nothing
    changes (and no copy is asked for), else a differentiable converted copy."""
    target, non_blocking, copy, memory_format = _to_arguments(self, args, kwargs)
    return to_dtype(self, target, non_blocking, copy, memory_format)


def _to_arguments(
    self: Tensor, arguments: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[dtype, bool, bool, Any]:
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
            if args and not isinstance(args[0], bool):
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
        bool(non_blocking),
        bool(copy),
        memory_format,
    )


def type_as(self: Tensor, other: Tensor) -> Tensor:
    return self.to(other.dtype)


def _conversion(target: dtype) -> Unary:
    def convert(self: Tensor) -> Tensor:
        return self.to(target)

    return convert


# `t.double()` is `t.to(gradgen.float64)`, ...
CONVERSIONS: dict[str, Unary] = {
    name: _conversion(target)
    for name, target in (
        ("double", dtypes.float64),
        ("float", dtypes.float32),
        ("long", dtypes.int64),
        ("int", dtypes.int32),
        ("bool", dtypes.bool),
        ("cfloat", dtypes.complex64),
        ("cdouble", dtypes.complex128),
        ("half", dtypes.float16),
        ("short", dtypes.int16),
        ("char", dtypes.int8),
        ("byte", dtypes.uint8),
    )
}
if dtypes.HAS_BFLOAT16:
    CONVERSIONS["bfloat16"] = _conversion(dtypes.bfloat16)


def tensor_format(self: Tensor, format_spec: str) -> str:
    """`format(t, spec)` and f-strings: a 0-d tensor formats as its number
    (`f"{loss:.4f}"`); any other tensor takes only the empty spec (its str), as
    PyTorch's Tensor.__format__."""
    if self._data.ndim == 0:  # (a subclass's item: vmap's BatchedTensor refuses it)
        value = self._data.item() if self.__class__ is Tensor else self.item()
        return format(value, format_spec)
    return object.__format__(self, format_spec)


# -- new tensors like this one (dtype from self unless given) -------------------------


def new_tensor(
    self: Tensor,
    data: Any,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    devices.check_device(device)
    return _new_tensor(
        data,
        dtype=self.dtype if dtype is None else dtype,
        requires_grad=requires_grad,
    )


def new_full(
    self: Tensor,
    size: Sequence[int],
    fill_value: Number,
    *,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    devices.check_device(device)
    return full(
        size,
        fill_value,
        dtype=self.dtype if dtype is None else dtype,
        requires_grad=requires_grad,
    )


def new_zeros(
    self: Tensor,
    *size: Any,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    return self.new_full(
        _size_argument(size),
        0,
        dtype=dtype,
        device=device,
        requires_grad=requires_grad,
    )


def new_ones(
    self: Tensor,
    *size: Any,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    return self.new_full(
        _size_argument(size),
        1,
        dtype=dtype,
        device=device,
        requires_grad=requires_grad,
    )


def new_empty(
    self: Tensor,
    *size: Any,
    dtype: Any = None,
    device: Any = None,
    requires_grad: bool = False,
) -> Tensor:
    """Zeros: gradgen never hands out uninitialised memory."""
    return self.new_zeros(
        *size, dtype=dtype, device=device, requires_grad=requires_grad
    )


def _size_argument(size: tuple[Any, ...]) -> tuple[int, ...]:
    """`new_zeros(2, 3)` and `new_zeros((2, 3))` alike."""
    if len(size) == 1 and isinstance(size[0], (tuple, list, Size)):
        size = tuple(size[0])
    return tuple(operator.index(extent) for extent in size)


# -- views as properties --------------------------------------------------------------


def T(self: Tensor) -> Tensor:  # noqa: N802  (PyTorch's name)
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
    return self.permute(tuple(range(self._data.ndim - 1, -1, -1)))


def mT(self: Tensor) -> Tensor:  # noqa: N802
    """The last two dimensions swapped (a transpose of each matrix in a batch)."""
    if self._data.ndim < 2:
        raise RuntimeError(
            "tensor.mT is only supported on matrices or batches of matrices. Got "
            f"{self._data.ndim}-D tensor."
        )
    return self.transpose(-2, -1)


def H(self: Tensor) -> Tensor:  # noqa: N802
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
    return self.T.conj()


def mH(self: Tensor) -> Tensor:  # noqa: N802
    """The conjugate transpose of each matrix in a batch."""
    if self._data.ndim < 2:
        raise RuntimeError(
            "tensor.mH is only supported on matrices or batches of matrices. Got "
            f"{self._data.ndim}-D tensor."
        )
    return self.mT.conj()


def real(self: Tensor) -> Tensor:
    """The real part (a view for complex tensors; the tensor itself otherwise)."""
    if not self.is_complex():
        return self
    return ops.real(self)


def imag(self: Tensor) -> Tensor:
    """The imaginary part, a view (an error for real tensors, as PyTorch)."""
    return ops.imag(self)


PROPERTIES: dict[str, Unary] = {
    "T": T,
    "mT": mT,
    "H": H,
    "mH": mH,
    "real": real,
    "imag": imag,
}


# -- Python's operators ---------------------------------------------------------------


class Dunder(NamedTuple):
    """A Python operator method of Tensor, as the operator it calls."""

    operator: str  # a Tensor method; with `reflected`, the function gradgen.NAME
    reflected: bool = False  # called as gradgen.NAME(other, self): a number on the left
    not_implemented: bool = False  # a TypeError (neither tensor nor number) gives it
    # The generated variable_type.dunder_NAME (in operators.DUNDERS) that is the method
    # itself: the method's binding and the fast path in one frame ("": the method).
    fused: str = ""


DUNDERS: dict[str, Dunder] = {
    "__add__": Dunder("add", fused="dunder_add_Tensor"),
    "__radd__": Dunder("add", fused="dunder_add_Tensor"),
    "__sub__": Dunder("sub", fused="dunder_sub_Tensor"),
    "__mul__": Dunder("mul", fused="dunder_mul_Tensor"),
    "__rmul__": Dunder("mul", fused="dunder_mul_Tensor"),
    "__truediv__": Dunder("div"),
    "__iadd__": Dunder("add_"),
    "__isub__": Dunder("sub_"),
    "__imul__": Dunder("mul_"),
    "__itruediv__": Dunder("div_"),
    "__pow__": Dunder("pow", fused="dunder_pow_Tensor_Scalar"),  # or pow.Tensor_Tensor
    "__rpow__": Dunder("pow", reflected=True),  # pow.Scalar: a number base
    "__floordiv__": Dunder("floor_divide", not_implemented=True),
    "__rfloordiv__": Dunder("floor_divide", reflected=True, not_implemented=True),
    "__mod__": Dunder("remainder", not_implemented=True),
    # Comparisons give bool tensors (never requiring grad); `t == None` is False, as
    # in PyTorch. Tensor keeps its identity `__hash__`, so tensors stay dict keys.
    "__eq__": Dunder("eq", not_implemented=True),
    "__ne__": Dunder("ne", not_implemented=True),
    "__lt__": Dunder("lt", not_implemented=True),
    "__le__": Dunder("le", not_implemented=True),
    "__gt__": Dunder("gt", not_implemented=True),
    "__ge__": Dunder("ge", not_implemented=True),
    # & | ^ are PyTorch's bitwise operators (logical ones on bool tensors).
    "__and__": Dunder("bitwise_and", not_implemented=True),
    "__rand__": Dunder("bitwise_and", not_implemented=True),
    "__or__": Dunder("bitwise_or", not_implemented=True),
    "__ror__": Dunder("bitwise_or", not_implemented=True),
    "__xor__": Dunder("bitwise_xor", not_implemented=True),
    "__rxor__": Dunder("bitwise_xor", not_implemented=True),
}

# -x and abs(x); +x (the tensor itself) is in tensor.py.
UNARY_DUNDERS: dict[str, str] = {"__neg__": "neg", "__abs__": "abs"}


def _dunder(spec: Dunder, cls: type) -> Binary:
    """The method for one row of DUNDERS: the operator looked up once, here, so that
    `x + y` costs what a hand-written `self.add(other)` does (or less: `fused`)."""
    if spec.fused:
        return operators.DUNDERS[spec.fused]
    call = (
        getattr(ops, spec.operator) if spec.reflected else getattr(cls, spec.operator)
    )
    if spec.reflected and spec.not_implemented:

        def method(self: Tensor, other: Any) -> Tensor:
            try:
                return call(other, self)  # type: ignore[no-any-return]
            except TypeError:
                return NotImplemented  # type: ignore[no-any-return]

    elif spec.reflected:

        def method(self: Tensor, other: Any) -> Tensor:
            return call(other, self)  # type: ignore[no-any-return]

    elif spec.not_implemented:

        def method(self: Tensor, other: Any) -> Tensor:
            try:
                return call(self, other)  # type: ignore[no-any-return]
            except TypeError:
                return NotImplemented  # type: ignore[no-any-return]

    else:
        # The Tensor method itself: `x * y` costs no frame more than `x.mul(y)`.
        return call  # type: ignore[no-any-return]

    return method


def _unary_dunder(name: str, cls: type) -> Unary:
    call = getattr(cls, name)

    def method(self: Tensor) -> Tensor:
        return call(self)  # type: ignore[no-any-return]

    return method


def reversed_sub(self: Tensor, other: Any) -> Tensor:
    return ops.rsub(self, other)


def reversed_true_divide(self: Tensor, other: Any) -> Tensor:
    # PyTorch's: `self.reciprocal() * other` (MulBackward0, and its rounding).
    try:
        wrapped = wrap_number(other)
    except TypeError:
        return NotImplemented  # type: ignore[no-any-return]
    return self.reciprocal().mul(wrapped)


def matmul(self: Tensor, other: Any) -> Tensor:
    if not isinstance(other, Tensor):
        return NotImplemented  # type: ignore[no-any-return]
    return self.matmul(other)


def reversed_matmul(self: Tensor, other: Any) -> Tensor:
    if not isinstance(other, Tensor):
        return NotImplemented  # type: ignore[no-any-return]
    return other.matmul(self)


def invert(self: Tensor) -> Tensor:
    if self._data.dtype.kind not in "biu":
        raise TypeError(
            "~ (operator.invert) is only implemented on integer and Boolean-type tensors"
        )
    return self.bitwise_not()


# -- indexing, iteration, numpy, backward ---------------------------------------------


def iterate(self: Tensor) -> Iterator[Tensor]:
    """The rows along dim 0, as PyTorch: `unbind(0)`, so they keep the graph."""
    if self._data.ndim == 0:
        raise TypeError("iteration over a 0-d tensor")
    return iter(self.unbind(0))


def array_ufunc(
    self: Tensor, ufunc: Any, method: str, *inputs: Any, **kwargs: Any
) -> Any:
    """`np.exp(t)`, `array * t`: the gradgen operator (see numpy_interop)."""
    return numpy_interop.array_ufunc(ufunc, method, inputs, kwargs)


def array_function(self: Tensor, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
    """`np.sum(t, axis=0)`: gradgen operators, or NotImplemented (see numpy_interop)."""
    return numpy_interop.array_function(func, types, args, kwargs)


def backward(
    self: Tensor,
    gradient: Tensor | None = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    inputs: Tensor | Sequence[Tensor] | None = None,
) -> None:
    """Accumulate d(self)/d(leaf) into every leaf's `.grad` (see autograd.backward)."""
    _autograd_backward(self, gradient, retain_graph, create_graph, inputs=inputs)


# -- installation ---------------------------------------------------------------------

# name -> method, each installed as it is.
METHODS: dict[str, Callable[..., Any]] = {
    "to": to,
    "type_as": type_as,
    **CONVERSIONS,
    "new_tensor": new_tensor,
    "new_full": new_full,
    "new_zeros": new_zeros,
    "new_ones": new_ones,
    "new_empty": new_empty,
    "type": tensor_type,
    "__format__": tensor_format,
    **RANDOM_METHODS,
    "__rsub__": reversed_sub,
    "__rtruediv__": reversed_true_divide,
    "__matmul__": matmul,
    "__rmatmul__": reversed_matmul,
    "__invert__": invert,
    "__iter__": iterate,
    "__getitem__": indexing.getitem,
    "__setitem__": indexing.setitem,
    "__array_ufunc__": array_ufunc,
    "__array_function__": array_function,
    "backward": backward,
    "unique": unique,
    "unique_consecutive": unique_consecutive,
}

# Generated methods that the hand-written ones here replace: PyTorch's Python-level
# norm (p optional with dim, "fro") over the schema overloads, and nonzero's as_tuple.
REPLACES_GENERATED: dict[str, Callable[..., Any]] = {
    "norm": tensor_norm,
    "nonzero": nonzero,  # as_tuple, a keyword of PyTorch's binding
}


def installed_names() -> set[str]:
    """Every name `install` sets on Tensor (tensor.py declares each for mypy)."""
    return {*METHODS, *PROPERTIES, *DUNDERS, *UNARY_DUNDERS, *REPLACES_GENERATED}


def install(cls: type[Tensor]) -> None:
    """Put the methods of this module on Tensor, after the generated ones (the
    dunders call those), and give the Tensor core what it takes from higher floors."""
    methods: dict[str, Any] = dict(METHODS)
    methods.update((name, property(fn)) for name, fn in PROPERTIES.items())
    methods.update((name, _dunder(spec, cls)) for name, spec in DUNDERS.items())
    methods.update((name, _unary_dunder(op, cls)) for name, op in UNARY_DUNDERS.items())
    for name, method in methods.items():
        if name in cls.__dict__:
            raise RuntimeError(
                f"generated Tensor method '{name}' clashes with a hand-written one"
            )
        setattr(cls, name, method)
    for name, method in REPLACES_GENERATED.items():
        setattr(cls, name, method)
    HOOKS.refresh_view = refresh_view
    HOOKS.legacy_data = legacy_data
