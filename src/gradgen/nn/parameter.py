"""torch.nn.Parameter: a leaf tensor that a Module registers as one of its parameters;
Buffer, one that it registers as a buffer;
UninitializedParameter and UninitializedBuffer, the placeholders of the lazy modules
until their first call tells the shapes."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, cast

import numpy as np

from gradgen.factories import empty
from gradgen.tensor import Size, Tensor

__all__ = [
    "Buffer",
    "Parameter",
    "UninitializedParameter",
    "UninitializedBuffer",
    "is_lazy",
]


class Parameter(Tensor):
    """A leaf Tensor that requires grad (by default) and that `Module.__setattr__`
    registers. As in PyTorch it shares its memory with `data`, has no history, and
    operators applied to it return plain Tensors.
    """

    __slots__ = ()

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True) -> None:
        if data is None:
            array = np.empty((0,), dtype=np.float32)
        elif isinstance(data, Tensor):
            array = data._data
        else:
            raise TypeError(
                f"Parameter(): data must be a Tensor, got {type(data).__name__}"
            )
        if requires_grad and array.dtype.kind not in "fc":
            raise RuntimeError(
                "Only Tensors of floating point and complex dtype can require gradients"
            )
        super().__init__(array, requires_grad=bool(requires_grad))

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()


class Buffer(Tensor):
    """A tensor that a Module registers as a buffer when it is assigned as an
    attribute (persistent in state_dict unless `persistent=False`); it shares
    `data`'s memory and keeps its requires_grad, without its history. (PyTorch's
    Buffer gives a plain Tensor marked as a buffer; gradgen's tensors take no marks,
    so this one is a Tensor subclass.)"""

    __slots__ = ("persistent",)

    def __init__(self, data: Tensor | None = None, *, persistent: bool = True) -> None:
        if data is None:
            data = empty(0)
        super().__init__(data._data, requires_grad=data.requires_grad)
        self.persistent = persistent


# The `_data` slot of Tensor itself: where an uninitialized tensor keeps its array.
_DATA_SLOT: Any = Tensor.__dict__["_data"]


def _caller_name() -> str:
    """The gradgen function the user called that read an uninitialized tensor's data
    (the outermost gradgen frame on the stack), for the error."""
    frame: Any = sys._getframe(2)
    name = frame.f_code.co_name
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if module == "gradgen" or module.startswith("gradgen."):
            name = frame.f_code.co_name
        frame = frame.f_back
    return f"<function {name}>"


def _converter(name: str) -> Callable[..., Tensor]:
    def convert(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        """Converted like PyTorch's, which lets uninitialized tensors convert."""
        method: Callable[..., Tensor] = getattr(self.data, name)
        return method(*args, **kwargs)

    convert.__name__ = name
    return convert


class UninitializedTensorMixin:
    """A tensor whose shape is not known yet: it holds an empty array of its dtype
    (so that dtype conversions work, as PyTorch's), refuses `shape`, and becomes
    `cls_to_become` when `materialize` gives it a shape.

    Operators refuse it (ValueError, PyTorch's words) without a check of their own:
    every kernel reads its tensors' arrays through `_data`, which this class turns
    into a property that raises; the array stays in Tensor's slot, where `dtype`,
    `data` and `materialize` reach it. Plain tensors keep the slot (no cost)."""

    __slots__ = ()
    cls_to_become: type[Tensor]

    @property
    def _data(self) -> np.ndarray:
        raise ValueError(
            f"Attempted to use an uninitialized parameter in {_caller_name()}. "
            "This error happens when you are using a `LazyModule` or explicitly "
            f"manipulating `torch.nn.parameter.{type(self).__name__}` objects. When "
            "using LazyModules Call `forward` with a dummy batch to initialize the "
            "parameters before calling torch functions"
        )

    @_data.setter
    def _data(self, value: np.ndarray) -> None:
        _DATA_SLOT.__set__(self, value)

    @property
    def dtype(self) -> Any:
        return self.data.dtype

    @property
    def data(self) -> Tensor:
        """The empty array (as PyTorch's `.data` of an uninitialized tensor)."""
        return Tensor(_DATA_SLOT.__get__(self))

    @data.setter
    def data(self, value: Tensor) -> None:
        Tensor.data.__set__(self, value)  # type: ignore[attr-defined]

    # What PyTorch lets an uninitialized tensor do (its `_allowed_methods`: these and
    # the conversions set below the class), and `detach` (Module._apply converts the
    # detached tensor).
    def size(self, dim: int | None = None) -> Any:
        return self.data.size(dim)

    def is_complex(self) -> bool:
        return self.data.is_complex()

    def is_floating_point(self) -> bool:
        return self.data.is_floating_point()

    def _shallow_copy(self) -> Tensor:
        return self.data

    def materialize(self, shape: Any, device: Any = None, dtype: Any = None) -> None:
        """Become a `cls_to_become` of `shape` (and this dtype, unless `dtype`)."""
        tensor = cast(Tensor, self)
        if dtype is None:
            dtype = tensor.dtype
        if isinstance(shape, int):
            shape = (shape,)
        tensor.data = empty(*shape, device=device, dtype=dtype)
        tensor.__class__ = self.cls_to_become

    @property
    def shape(self) -> Size:
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. This "
            "error usually happens in `load_state_dict` when trying to load an "
            "uninitialized parameter into an initialized one. Call `forward` to "
            "initialize the parameters before accessing their attributes."
        )

    def share_memory_(self) -> None:
        raise RuntimeError(
            "Can't share memory on an uninitialized parameter or buffer. Call "
            "`forward` to initialize the parameters before calling "
            "`module.share_memory()`."
        )

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        """A new uninitialized tensor of the same kind, dtype and requires_grad."""
        tensor = cast(Tensor, self)
        copy = memo.get(id(self))
        if copy is None:
            kind: Any = type(self)
            copy = kind(tensor.requires_grad, dtype=tensor.dtype)
            memo[id(self)] = copy
        return copy


for _name in ("half", "float", "double", "char", "short", "int", "long", "cpu", "to"):
    setattr(UninitializedTensorMixin, _name, _converter(_name))


def is_lazy(value: Any) -> bool:
    """Whether `value` is an UninitializedParameter or an UninitializedBuffer."""
    return isinstance(value, UninitializedTensorMixin)


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A Parameter whose shape the first call of its lazy module will give; only its
    dtype may change until then (Module.to, .double(), ...)."""

    __slots__ = ()
    cls_to_become = Parameter

    def __init__(
        self, requires_grad: bool = True, device: Any = None, dtype: Any = None
    ) -> None:
        super().__init__(empty(0, device=device, dtype=dtype), requires_grad)


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer whose shape the first call of its lazy module will give (PyTorch's
    `persistent=` argument is not taken: register_buffer says whether a buffer
    persists)."""

    __slots__ = ()
    cls_to_become = Tensor

    def __init__(
        self, requires_grad: bool = False, device: Any = None, dtype: Any = None
    ) -> None:
        super().__init__(empty(0, device=device, dtype=dtype)._data, requires_grad)
