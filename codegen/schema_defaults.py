"""An argument's default: the lexical checks on its text (a quoted string, a ``[..]``
list, a bare word; numbers in PyTorch's int64 and double range) and
`default_to_python`, which turns the text into Python source guided by the type.
"""

from __future__ import annotations

import ast
import re
import warnings

from .errors import CodegenError
from .schema_types import (
    BaseTy,
    BaseType,
    ListType,
    MAX_LIST_SIZE,
    OptionalType,
    Type,
    _excerpt,
    _in,
)

# A default that is neither a string nor a list: a number or a bare word.
_BARE_DEFAULT = re.compile(r"[A-Za-z0-9_.+\-]+")
_INT_LITERAL = re.compile(r"-?(?:0|[1-9][0-9]*)")
_FLOAT_LITERAL = re.compile(
    r"-?(?:[0-9]+\.[0-9]*(?:[eE][-+]?[0-9]+)?|[0-9]+[eE][-+]?[0-9]+)"
)


def _check_default_text(default: str) -> None:
    """Lexical shape of a default: a quoted string, a ``[..]`` list or a bare word.

    What the default *means* depends on the type and is `default_to_python`'s job.
    """
    if default[:1] in ("'", '"'):
        if not _is_string_literal(default):
            raise CodegenError(f"malformed string default {default}")
    elif default.startswith("["):
        if not default.endswith("]"):
            raise CodegenError(f"malformed list default '{default}'")
        if " " in default:
            compact = default.replace(" ", "")
            raise CodegenError(
                f"list default '{default}' must be written without spaces: "
                f"'{compact}'"
            )
        inner = default[1:-1]
        if inner and not all(_BARE_DEFAULT.fullmatch(e) for e in inner.split(",")):
            raise CodegenError(f"malformed list default '{default}'")
        if inner and inner.count(",") >= MAX_LIST_SIZE:
            raise CodegenError(
                f"list default '{_excerpt(default)}' has more than {MAX_LIST_SIZE} "
                "elements"
            )
        for element in inner.split(",") if inner else ():
            _check_number_range(element)
    elif _BARE_DEFAULT.fullmatch(default) is None:
        raise CodegenError(f"malformed default '{default}'")
    else:
        _check_number_range(default)


_INT64_DIGITS = len(str(2**63))


def _check_number_range(text: str) -> None:
    """A numeric default fits PyTorch's types: an int is an int64 (PyTorch's parser
    fails in `stoll` beyond it), a float a finite double that is not rounded to zero
    (`stod`). The length is checked before any conversion: Python refuses to convert
    an int of more than 4,300 digits, and such a literal would not compile."""
    if _INT_LITERAL.fullmatch(text):
        digits = text.lstrip("-")
        if len(digits) > _INT64_DIGITS or not -(2**63) <= int(text) < 2**63:
            raise CodegenError(
                f"integer default '{_excerpt(text)}' is out of range for a 64-bit int"
            )
    elif _FLOAT_LITERAL.fullmatch(text):
        if len(text) > 400:
            raise CodegenError(f"float default '{_excerpt(text)}' is too long")
        value = float(text)
        mantissa = text.lower().partition("e")[0]
        if value in (float("inf"), float("-inf")) or (
            value == 0.0 and mantissa.strip("-0.") != ""
        ):
            raise CodegenError(
                f"float default '{_excerpt(text)}' is out of range for a double"
            )


def _is_string_literal(text: str) -> bool:
    """``"..."`` or ``'...'`` with backslash escapes and no bare closing quote."""
    quote = text[:1]
    if len(text) < 2 or text[-1] != quote:
        return False
    escaped = False
    for char in text[1:-1]:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == quote:
            return False
    return not escaped


# ------------------------------------------------------------------------- defaults

_REDUCTIONS = {"Mean": "1", "Sum": "2"}  # at::Reduction; "None" (0) reads as None
_DTYPES = {
    "bool": "bool",
    "uint8": "uint8",
    "int8": "int8",
    "int16": "int16",
    "short": "int16",
    "int32": "int32",
    "int": "int32",
    "int64": "int64",
    "long": "int64",
    "float16": "float16",
    "half": "float16",
    "bfloat16": "bfloat16",
    "float32": "float32",
    "float": "float32",
    "float64": "float64",
    "double": "float64",
    "complex64": "complex64",
    "cfloat": "complex64",
    "complex128": "complex128",
    "cdouble": "complex128",
}
_MEMORY_FORMATS = frozenset(
    {"contiguous_format", "preserve_format", "channels_last", "channels_last_3d"}
)
_LAYOUTS = frozenset(
    {"strided", "sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc"}
)
_NON_FINITE = {"inf": "float('inf')", "-inf": "float('-inf')", "nan": "float('nan')"}
_INTEGER_TYS = (BaseTy.int, BaseTy.SymInt, BaseTy.DeviceIndex)
_REAL_TYS = (*_INTEGER_TYS, BaseTy.float, BaseTy.Scalar)


def default_to_python(default: str, type: Type) -> str:
    """A Python expression for a schema default of an argument of type `type`.

    ``None`` -> ``None``; ``True`` -> ``True``; numbers unchanged; ``[0,1]`` ->
    ``(0, 1)`` (lists become tuples: defaults must be immutable); a single value on a
    sized list (``int[2] padding=0``) -> ``(0, 0)``; strings -> Python string
    literals; ``Mean`` -> ``1`` (at::Reduction); dtype names -> numpy names
    (``long`` -> ``'int64'``); memory formats and layouts -> their name as a string.
    """
    with _in(f"for type '{type}'"):
        _check_default_text(default)
        if default == "None":
            if not isinstance(type, OptionalType):
                raise CodegenError("default None needs an optional type (add '?')")
            return "None"
        if isinstance(type, OptionalType):
            type = type.elem
        if isinstance(type, ListType):
            return _list_default_to_python(default, type)
        return _element_default_to_python(default, type)


def _list_default_to_python(default: str, type: ListType) -> str:
    if default.startswith("["):
        inner = default[1:-1]
        elements = inner.split(",") if inner else []
    elif type.size is not None:
        elements = [default] * type.size
    else:
        raise CodegenError(f"default '{default}' is not a list")
    values = [_element_default_to_python(e, type.elem) for e in elements]
    if len(values) == 1:
        return f"({values[0]},)"
    return "(" + ", ".join(values) + ")"


def _element_default_to_python(default: str, type: Type) -> str:
    if default == "None":
        if not type.is_nullable():
            raise CodegenError("default None needs an optional type (add '?')")
        return "None"
    if isinstance(type, OptionalType):
        type = type.elem
    if not isinstance(type, BaseType):
        raise CodegenError(f"unsupported default '{default}'")
    ty = type.name
    if default in ("True", "False") and ty in (BaseTy.bool, BaseTy.Scalar):
        return default
    if _INT_LITERAL.fullmatch(default) and ty in _REAL_TYS:
        return default
    if ty in (BaseTy.float, BaseTy.Scalar):
        if _FLOAT_LITERAL.fullmatch(default):
            return default
        if default in _NON_FINITE:
            return _NON_FINITE[default]
    if default in _REDUCTIONS and ty in _INTEGER_TYS:
        return _REDUCTIONS[default]
    if default in _DTYPES and ty is BaseTy.ScalarType:
        return repr(_DTYPES[default])
    if default in _MEMORY_FORMATS and ty is BaseTy.MemoryFormat:
        return repr(default)
    if default in _LAYOUTS and ty is BaseTy.Layout:
        return repr(default)
    if default[:1] in ("'", '"') and ty is BaseTy.str:
        return repr(_string_value(default))
    raise CodegenError(f"unrecognized default '{default}'")


def _string_value(literal: str) -> str:
    """The value of a quoted schema string; its escapes are Python's."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "invalid escape sequence"
            value = ast.literal_eval(literal)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        raise CodegenError(f"malformed string default {literal}") from None
    if not isinstance(value, str):
        raise CodegenError(f"malformed string default {literal}")
    return value
