"""Choosing an operator overload from Python arguments (PyTorch's python_arg_parser).

`gradgen.pow(x, 2)` is `pow.Tensor_Scalar`, `gradgen.pow(x, y)` is `pow.Tensor_Tensor`
and `gradgen.pow(2, x)` is `pow.Scalar`. The generated binding of a name with several
overloads is an `Overloads` object: it tries each `Signature` in order, first taking
arguments only at their own types, then a second time letting a Python number stand
for a Tensor (a wrapped number, as PyTorch does), and calls the first that binds. A
name with a single overload is generated as a plain function instead, with no
matching cost.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .arguments import write_out
from .dtypes import as_dtype, dtype
from .tensor import Tensor, wrap_number

_NUMBERS = (bool, int, float, complex, np.number, np.bool_)
_INTEGERS = (int, np.integer)


class _NoMatch(Exception):
    """An argument does not fit a parameter (internal to binding)."""


def _integer(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, _INTEGERS):
        raise _NoMatch
    return int(value)


def _int_list(value: Any) -> tuple[int, ...]:
    if isinstance(value, _INTEGERS) and not isinstance(value, bool):
        return (int(value),)
    if isinstance(value, (list, tuple)):
        return tuple(_integer(item) for item in value)
    raise _NoMatch


def _scalar(value: Any, lenient: bool = False) -> Any:
    """A number; in the lenient pass also a 0-d tensor that needs no gradient (after a
    Tensor overload had its chance to take it)."""
    if isinstance(value, _NUMBERS):
        return value
    if (
        lenient
        and isinstance(value, Tensor)
        and value._data.ndim == 0
        and not value.requires_grad
        and value._fw_grad is None
    ):
        return value.item()
    raise _NoMatch


def _tensor(value: Any, numbers_as_tensors: bool) -> Tensor:
    if isinstance(value, Tensor):
        return value
    if numbers_as_tensors and isinstance(value, _NUMBERS):
        return wrap_number(value)
    raise _NoMatch


def _tensor_list(value: Any) -> list[Tensor]:
    if isinstance(value, (list, tuple)) and all(isinstance(t, Tensor) for t in value):
        return list(value)
    raise _NoMatch


def _dtype(value: Any) -> dtype:
    if isinstance(value, dtype):
        return value
    try:
        return as_dtype(value)
    except TypeError:
        raise _NoMatch from None


def _float(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(
        value, (float, int, np.floating, np.integer)
    ):
        raise _NoMatch
    return float(value)


def _bool(value: Any) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise _NoMatch
    return bool(value)


def _str(value: Any) -> str:
    if not isinstance(value, str):
        raise _NoMatch
    return value


_CONVERTERS: dict[str, Callable[[Any], Any]] = {
    "int": _integer,
    "int[]": _int_list,
    "Scalar": _scalar,
    "Tensor[]": _tensor_list,
    "ScalarType": _dtype,
    "float": _float,
    "bool": _bool,
    "str": _str,
    "any": lambda value: value,
}


@dataclass(frozen=True)
class Param:
    """One parameter: its Python name, kind (schema type family), and default."""

    name: str
    kind: str  # "Tensor", "Tensor?", "int[]", "Scalar", ... ("?" means None is allowed)
    keyword_only: bool = False
    has_default: bool = False
    default: Any = None

    def convert(self, value: Any, numbers_as_tensors: bool) -> Any:
        kind = self.kind
        if kind.endswith("?"):
            if value is None:
                return None
            kind = kind[:-1]
        if kind == "Tensor":
            return _tensor(value, numbers_as_tensors)
        if kind == "Scalar":
            return _scalar(value, numbers_as_tensors)
        return _CONVERTERS[kind](value)


@dataclass(frozen=True)
class Signature:
    """One overload: how to call it once the arguments are bound, and its parameters."""

    function: Callable[..., Any]
    text: str  # as shown in errors: "Tensor input, Scalar exponent"
    params: tuple[Param, ...]
    accepts_out: bool = False  # PyTorch has an out= overload of it

    def __post_init__(self) -> None:
        # What binding asks on every call, worked out once.
        positional = sum(1 for p in self.params if not p.keyword_only)
        object.__setattr__(self, "_positional", positional)
        object.__setattr__(self, "_names", frozenset(p.name for p in self.params))

    def bind(
        self, args: Sequence[Any], kwargs: dict[str, Any], numbers_as_tensors: bool
    ) -> list[Any] | None:
        """The converted arguments in parameter order, or None when they do not fit."""
        # A method passes its tensor as self=..., wherever `self` stands in the schema
        # (where.self(Tensor condition, Tensor self, Tensor other)).
        self_by_keyword = "self" in kwargs
        positional: int = self._positional - self_by_keyword  # type: ignore[attr-defined]
        if len(args) > positional:
            return None
        names: frozenset[str] = self._names  # type: ignore[attr-defined]
        for name in kwargs:
            if name not in names:
                return None
        bound = []
        taken = 0  # positional arguments used so far
        try:
            for param in self.params:
                name = param.name
                if (
                    taken < len(args)
                    and not param.keyword_only
                    and not (self_by_keyword and name == "self")
                ):
                    if name in kwargs:
                        return None  # given twice
                    bound.append(param.convert(args[taken], numbers_as_tensors))
                    taken += 1
                elif name in kwargs:
                    bound.append(param.convert(kwargs[name], numbers_as_tensors))
                elif param.has_default:
                    bound.append(param.default)
                else:
                    return None
        except _NoMatch:
            return None
        return bound


def tuple_result(function: Callable[..., Any]) -> Callable[..., tuple[Any, ...]]:
    """`function` returning a tuple: an overload returning Tensor[] (PyTorch's Python
    bindings give a tuple where the operator gives a list)."""

    def call(*args: Any) -> tuple[Any, ...]:
        return tuple(function(*args))

    call.__name__ = getattr(function, "__name__", "call")
    return call


class Overloads:
    """A public function over several overloads; calls the first whose signature binds."""

    def __init__(self, name: str, signatures: Sequence[Signature]) -> None:
        self.__name__ = name
        self.signatures = tuple(signatures)
        self.__doc__ = f"{name}: one of\n" + "\n".join(
            f"    {name}({s.text})" for s in self.signatures
        )

    def __call__(self, /, *args: Any, **kwargs: Any) -> Any:
        for numbers_as_tensors in (False, True):
            for signature in self.signatures:
                bound = signature.bind(args, kwargs, numbers_as_tensors)
                if bound is not None:
                    return signature.function(*bound)
        raise TypeError(self._mismatch(args, kwargs))

    def _mismatch(self, args: Sequence[Any], kwargs: dict[str, Any]) -> str:
        got = [
            type(a).__name__ if not isinstance(a, Tensor) else "Tensor" for a in args
        ]
        got += [
            f"{k}={type(v).__name__ if not isinstance(v, Tensor) else 'Tensor'}"
            for k, v in kwargs.items()
        ]
        expected = "\n".join(f" * ({s.text})" for s in self.signatures)
        return (
            f"{self.__name__}() received an invalid combination of arguments - got "
            f"({', '.join(got)}), but expected one of:\n{expected}"
        )

    def __repr__(self) -> str:
        return f"<gradgen overloads of {self.__name__}>"


class OutOverloads(Overloads):
    """Overloads of which some take `out=` (see `arguments.write_out`)."""

    def __call__(self, /, *args: Any, **kwargs: Any) -> Any:
        if "out" in kwargs:
            return self._call_out(args, kwargs)
        # Overloads.__call__'s loop, inlined: calls without out= pay one dict lookup.
        for numbers_as_tensors in (False, True):
            for signature in self.signatures:
                bound = signature.bind(args, kwargs, numbers_as_tensors)
                if bound is not None:
                    return signature.function(*bound)
        raise TypeError(self._mismatch(args, kwargs))

    def _call_out(self, args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
        others = {k: v for k, v in kwargs.items() if k != "out"}
        for numbers_as_tensors in (False, True):
            for signature in self.signatures:
                if not signature.accepts_out:
                    continue
                bound = signature.bind(args, others, numbers_as_tensors)
                if bound is not None:
                    out = kwargs["out"]
                    # stacklevel 4: the user's line, past __call__ and this method
                    return write_out(
                        self.__name__, out, signature.function, tuple(bound), 4
                    )
        raise TypeError(self._mismatch(args, kwargs))
