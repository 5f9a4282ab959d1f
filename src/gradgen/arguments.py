"""Argument checks of the generated public functions and methods.

PyTorch's Python binding layer turns Python values into operator arguments before
dispatch: a number given for a Tensor argument becomes a wrapped-number tensor, an int
list may be given as varargs (``t.permute(2, 0, 1)``), and a value of the wrong type is
a TypeError naming the function, the argument and its position. Those rules live here.
"""

from __future__ import annotations

import dis
import sys
import warnings
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

import numpy as np

from .dtypes import as_dtype, dtype
from .grad_mode import _state as _grad_mode_state
from .tensor import WRAPPED_FLOATS, WRAPPED_INTS, Tensor, wrap_number
from .variable_type_utils import copy_into, increment_version

_NUMBER_TYPES = (bool, int, float, complex, np.number, np.bool_)


def tensor_argument(
    value: Any,
    function: str,
    argument: str,
    position: int,
    accepts_numbers: bool = True,
) -> Tensor:
    """A Tensor argument; a Python number becomes a wrapped number where allowed."""
    kind = value.__class__
    if (kind is float or kind is int) and accepts_numbers:
        # wrap_number's cache inline: `x * 2.0`, `z + 0.5`, `3 * x` (nan and 0.0 are
        # not in it); first, as a binding passes a plain Tensor on without calling this.
        cached = (WRAPPED_FLOATS if kind is float else WRAPPED_INTS).get(value)
        if cached is not None:
            return cached
    if isinstance(value, Tensor):
        return value
    if accepts_numbers and isinstance(value, _NUMBER_TYPES):
        return wrap_number(value)
    raise TypeError(
        f"{function}(): argument '{argument}' (position {position}) must be Tensor, not "
        f"{type(value).__name__}"
    )


# The operators PyTorch refuses an empty Tensor[] for, with its errors.
_EMPTY_LIST_ERRORS: dict[str, tuple[type[Exception], str]] = {
    "cat": (ValueError, "torch.cat(): expected a non-empty list of Tensors"),
    "concat": (ValueError, "torch.cat(): expected a non-empty list of Tensors"),
    "concatenate": (ValueError, "torch.cat(): expected a non-empty list of Tensors"),
    "stack": (RuntimeError, "stack expects a non-empty TensorList"),
}


def tensor_list_argument(
    value: Any, function: str, argument: str, position: int, allow_none: bool = False
) -> list[Any]:
    """A Tensor[] argument (Tensor?[] with `allow_none`) as a list of its tensors."""
    if isinstance(value, Tensor) or not isinstance(value, (list, tuple)):
        raise TypeError(
            f"{function}(): argument '{argument}' (position {position}) must be tuple of "
            f"Tensors, not {type(value).__name__}"
        )
    if not value and function in _EMPTY_LIST_ERRORS:
        error, message = _EMPTY_LIST_ERRORS[function]
        raise error(message)
    for index, item in enumerate(value):
        if not (isinstance(item, Tensor) or (allow_none and item is None)):
            raise TypeError(
                f"expected Tensor as element {index} in argument {position - 1}, but got "
                f"{type(item).__name__}"
            )
    return list(value)


def int_list_argument(value: Any, function: str, argument: str) -> tuple[int, ...]:
    """An int[] argument as a tuple of ints (a single int means a one-element list)."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return (int(value),)
    if isinstance(value, Tensor):
        value = value.tolist()
    try:
        items = tuple(value)
    except TypeError:
        raise TypeError(
            f"{function}(): argument '{argument}' must be tuple of ints, not "
            f"{type(value).__name__}"
        ) from None
    for item in items:
        if isinstance(item, bool) or not isinstance(item, (int, np.integer)):
            raise TypeError(
                f"{function}(): argument '{argument}' must be tuple of ints, but found "
                f"element of type {type(item).__name__}"
            )
    return tuple(int(item) for item in items)


def int_list_varargs(
    values: Sequence[Any], function: str, argument: str
) -> tuple[int, ...]:
    """Varargs of a method whose int[] may be spread: ``(2, 0, 1)`` or ``((2, 0, 1),)``."""
    if len(values) == 1 and not isinstance(values[0], (int, np.integer)):
        return int_list_argument(values[0], function, argument)
    return int_list_argument(values, function, argument)


def dtype_argument(value: Any) -> dtype | None:
    """A ScalarType? argument: None, or anything `as_dtype` accepts."""
    return None if value is None else as_dtype(value)


# -- checks after a failed call ----------------------------------------------------------

# What PyTorch's argument parser takes for each kind (a Tensor is checked by its shape
# and dtype below): a Scalar is any number, an int no bool, a float no complex.
_ACCEPTED: dict[str, tuple[type, ...]] = {
    "Scalar": _NUMBER_TYPES,
    "int": (int, np.integer),
    "float": (bool, int, float, np.integer, np.floating, np.bool_),
    "bool": (bool,),
    "str": (str,),
}
_REFUSED: dict[str, tuple[type, ...]] = {"int": (bool,)}
# The names PyTorch's messages give the kinds.
_SHOWN = {
    "Scalar": "Number",
    "int": "int",
    "float": "float",
    "bool": "bool",
    "str": "str",
}


def _fits(value: Any, kind: str) -> bool:
    """Whether PyTorch's argument parser takes `value` for an argument of `kind`."""
    if kind.endswith("?"):
        if value is None:
            return True
        kind = kind[:-1]
    if kind not in _ACCEPTED:
        return True  # not a kind checked here
    if isinstance(value, Tensor):
        # a 0-d tensor is a number; a one-element integer tensor is an int
        if kind == "Scalar" or kind == "float":
            return value._data.ndim == 0
        if kind == "int":
            return value._data.size == 1 and value._data.dtype.kind in "iu"
        return False
    return isinstance(value, _ACCEPTED[kind]) and not isinstance(
        value, _REFUSED.get(kind, ())
    )


def _type_name(value: Any) -> str:
    """A type as PyTorch's messages name it (numpy's scalars with their module)."""
    kind = type(value)
    if kind.__module__ == "numpy":
        return f"numpy.{kind.__name__}"
    return kind.__name__


def _keywords_of_call(depth: int) -> tuple[str, ...]:
    """The keyword names of the call a frame `depth` levels up is making (none when its
    bytecode does not say): Python 3.11 and 3.12 name them in a KW_NAMES before the
    CALL, 3.13 in the constant loaded just before its CALL_KW."""
    frame = sys._getframe(depth + 1)
    last = current = None  # the call instruction (f_lasti may point into its caches)
    for instruction in dis.get_instructions(frame.f_code):
        if instruction.offset > frame.f_lasti:
            break
        if instruction.opname not in ("PRECALL", "CACHE"):
            last, current = current, instruction
    names: Any = ()
    if last is not None and last.opname == "KW_NAMES" and last.arg is not None:
        names = frame.f_code.co_consts[last.arg]  # dis leaves its argval unset
    elif last is not None and current is not None and current.opname == "CALL_KW":
        names = last.argval
    return names if isinstance(names, tuple) else ()


def _refuse(function: str, name: str, kind: str, position: int, value: Any) -> NoReturn:
    """PyTorch's TypeError for `value`, of the wrong type for argument `name`; a
    positional argument given by keyword is named without its position."""
    # the binding's caller is three frames up from here (this, the check, the binding)
    if position and name not in _keywords_of_call(3):
        where = f" (position {position})"
    else:
        where = ""
    raise TypeError(
        f"{function}(): argument '{name}'{where} must be "
        f"{_SHOWN[kind.rstrip('?')]}, not {_type_name(value)}"
    ) from None


def check_arguments(
    function: str,
    params: tuple[tuple[str, str, int], ...],
    values: tuple[Any, ...],
) -> None:
    """After an operator call raised: PyTorch's TypeError for the first argument of the
    wrong type (`params` are (name, kind, position) of `values`, position 0 for a
    keyword-only one); nothing when all fit, and the caller re-raises its error."""
    for (name, kind, position), value in zip(params, values):
        if not _fits(value, kind):
            _refuse(function, name, kind, position, value)


def int_argument(value: Any, function: str, name: str, position: int) -> int:
    """An int argument that is not a Python int: a numpy integer, or a one-element
    integer tensor, as PyTorch's parser takes them; anything else (a float, a bool:
    numpy would take them silently) is PyTorch's TypeError."""
    if not _fits(value, "int"):
        _refuse(function, name, "int", position, value)
    return int(value._data.item()) if isinstance(value, Tensor) else int(value)


def bool_argument(value: Any, function: str, name: str, position: int) -> NoReturn:
    """A bool argument that is not a Python bool: PyTorch refuses it (an int, a string
    or None would otherwise be taken silently for its truth)."""
    _refuse(function, name, "bool", position, value)


# -- out= ---------------------------------------------------------------------------------

OUT_REQUIRES_GRAD = (
    "{}(): functions with out=... arguments don't support automatic differentiation, "
    "but one of the arguments requires grad."
)
OUT_RESIZED = (
    "An output with one or more elements was resized since it had shape {}, which does "
    "not match the required output shape {}. This behavior is deprecated, and in a "
    "future PyTorch release outputs will not be resized unless they have zero elements. "
    "You can explicitly reuse an out tensor t by resizing it, inplace, to zero elements "
    "with t.resize_(0)."
)


def _any_requires_grad(values: Sequence[Any]) -> bool:
    for value in values:
        if isinstance(value, Tensor) and value.requires_grad:
            return True
        if isinstance(value, list) and _any_requires_grad(value):
            return True
    return False


def write_out(
    function: str,
    out: Any,
    operator: Callable[..., Any],
    arguments: tuple[Any, ...],
    stacklevel: int = 3,
) -> Any:
    """`gradgen.NAME(..., out=out)`, as PyTorch's out= overloads behave: the result is
    computed, then written into `out` (resized when its shape differs, with PyTorch's
    warning unless `out` is empty; cast to out's dtype where PyTorch's casting rule
    allows), and `out` is returned with its version bumped. Under grad mode no argument
    may require grad: out= functions are not differentiable."""
    outs = _out_tensors(function, out)
    if _grad_mode_state.enabled and _any_requires_grad((*outs, *arguments)):
        raise RuntimeError(OUT_REQUIRES_GRAD.format(function))
    result = operator(*arguments)
    if isinstance(result, Tensor):
        if not isinstance(out, Tensor):
            raise TypeError(
                f"{function}(): argument 'out' must be Tensor, not {type(out).__name__}"
            )
        _write(out, result._data, stacklevel)
        return out
    if len(result) != len(outs):
        raise TypeError(f"expected tuple of {len(result)} elements but got {len(outs)}")
    for target, value in zip(outs, result):
        _write(target, value._data, stacklevel)
    return type(result)(*outs)  # the operator's named tuple, of the out tensors


def _out_tensors(function: str, out: Any) -> tuple[Tensor, ...]:
    """`out` as a tuple of tensors (a Tensor, or a tuple or list of them)."""
    if isinstance(out, Tensor):
        return (out,)
    if isinstance(out, (tuple, list)) and all(isinstance(o, Tensor) for o in out):
        return tuple(out)
    raise TypeError(
        f"{function}(): argument 'out' must be Tensor, not {type(out).__name__}"
    )


def _write(out: Tensor, value: np.ndarray, stacklevel: int) -> None:
    """One result into its out tensor: resized (warning unless empty), cast, bumped;
    `stacklevel` as write_out's caller gave it (this frame is one more)."""
    shape = value.shape
    if out._data.shape != shape:
        if out._data.size != 0:
            warnings.warn(
                OUT_RESIZED.format(list(out._data.shape), list(shape)),
                stacklevel=stacklevel + 1,
            )
        out._data = np.empty(shape, dtype=out._data.dtype)
    copy_into(out, value)
    increment_version(out)
