"""The data model of PyTorch's operator schemas, and their parser.

A schema is the ``func:`` line of a native_functions.yaml entry::

    add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor

`parse_schema` turns it into a `FunctionSchema`: frozen dataclasses for the operator
name, the arguments (positional, keyword-only, out) and the returns, down to types and
alias annotations.

Invariants:

- Lossless: ``str(parse_schema(text)) == text`` for every schema PyTorch's grammar
  accepts. Each sub-parser (`Type`, `Annotation`, `Argument`, `Return`, `Arguments`,
  `OperatorName`) checks its own round trip, so text that means the same thing but is
  not written canonically (``-> (Tensor)`` for one return, ``Tensor self,int x``,
  ``int[2] x=[0, 1]``, ``int[02] x``) is rejected rather than silently normalised.
- Closed: every malformed input raises `CodegenError` naming what is wrong, never any
  other exception. The dataclasses check their own rules in ``__post_init__``, so a
  schema built in code obeys the same rules as one parsed from text.
- Stored fields are exactly what the text says; everything derived (the ``self``
  argument, tensor options, the schema kind, return names) is a property or method.
- Defaults stay the exact text of the schema (``1e-05``, ``[0,1]``, ``'linear'``);
  `default_to_python` turns one into Python source, guided by the argument's type.

Names (operators, overloads, arguments, returns) must be identifiers, as in PyTorch's
C++ schema parser; torchgen's regexes are looser there but no real schema needs it.
A few spellings torchgen refuses only by accident of its regexes are accepted, since
they round-trip: a string default containing ``", "`` or ``=``, an alias set of more
than two letters (``a|b|c``) and an unnamed return ``Tensor(a -> *)``.
"""

from __future__ import annotations

import ast
import keyword
import re
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from enum import Enum

from .errors import CodegenError

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_OVERLOAD_NAME = re.compile(r"[A-Za-z0-9_]+")
_LIST_SIZE = re.compile(r"[1-9][0-9]*")
# Fixed list sizes are small (PyTorch's own schemas go up to 6: `SymInt[6] padding`);
# a sized default is expanded into a tuple of that many elements.
MAX_LIST_SIZE = 64
# Optionals and lists around a base type (`Tensor?[]` is 2); PyTorch's schemas need 2.
MAX_TYPE_NESTING = 4
_CUSTOM_CLASS_PREFIX = "__torch__.torch.classes."
_CUSTOM_CLASS_NAME = re.compile(r"[A-Za-z0-9_.]+")
_ALIAS_LETTER = re.compile(r"[a-z]")
# A default that is neither a string nor a list: a number or a bare word.
_BARE_DEFAULT = re.compile(r"[A-Za-z0-9_.+\-]+")
_INT_LITERAL = re.compile(r"-?(?:0|[1-9][0-9]*)")
_FLOAT_LITERAL = re.compile(
    r"-?(?:[0-9]+\.[0-9]*(?:[eE][-+]?[0-9]+)?|[0-9]+[eE][-+]?[0-9]+)"
)

# The in-place dunder methods of PEP 203 (`__iadd__` ...) that PyTorch recognises.
_AUGMENTED_ASSIGNMENT_NAMES = frozenset(
    {"add", "sub", "mul", "div", "mod", "pow", "lshift", "rshift", "and", "xor", "or"}
)
_FUNCTIONAL_SUFFIX = "_functional"
_SCRATCH_PREFIX = "_scratch_"
_ANNOTATABLE_TYPES = ("Tensor", "Tensor?", "Tensor[]")
_ANNOTATION_RULE = "alias annotations are only allowed on Tensor, Tensor? and Tensor[]"


def _is_identifier(text: str) -> bool:
    return _IDENTIFIER.fullmatch(text) is not None


# The Python keywords that PyTorch's schema lexer (TorchScript's) reads as tokens,
# never as names. PyTorch's own schemas use the others as argument names
# (`Tensor from`); generated code spells such an argument `from_`.
TORCH_KEYWORDS = frozenset(keyword.kwlist) - {
    "async",
    "await",
    "except",
    "finally",
    "from",
    "lambda",
    "nonlocal",
    "try",
    "yield",
}


def _check_not_keyword(what: str, name: str, python_name: bool = False) -> None:
    """Refuse what PyTorch's parser refuses ("expected ident but found 'None'"), and,
    for a name generated code uses as is (`python_name`: an operator's function, a
    named tuple's field), every Python keyword."""
    if name in TORCH_KEYWORDS:
        raise CodegenError(
            f"{what} '{name}' is a keyword (PyTorch: expected ident but found "
            f"'{name}')"
        )
    if python_name and keyword.iskeyword(name):
        raise CodegenError(
            f"{what} '{name}' is a Python keyword: generated code uses the name as is"
        )


def _excerpt(text: str, limit: int = 60) -> str:
    """`text`, or its start and a count of what was left out, for error messages."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text) - limit} more characters)"


def _check_round_trip(what: str, parsed: object, text: str) -> None:
    """The safety net behind every sub-parser: printing must give back the input."""
    if str(parsed) != text:
        raise CodegenError(f"{what} '{text}' is not canonical; write '{parsed}'")


@contextmanager
def _in(context: str) -> Iterator[None]:
    """Append `context` (e.g. "in argument 'int x'") to any CodegenError raised."""
    try:
        yield
    except CodegenError as error:
        raise CodegenError(f"{error.message} {context}") from None


# --------------------------------------------------------------------------- types


class BaseTy(Enum):
    """The atomic types of the schema language (``Dimname`` is gone since torch 2.x)."""

    Generator = "Generator"
    ScalarType = "ScalarType"
    Tensor = "Tensor"
    int = "int"
    DimVector = "DimVector"
    float = "float"
    str = "str"
    bool = "bool"
    Layout = "Layout"
    Device = "Device"
    DeviceIndex = "DeviceIndex"
    Scalar = "Scalar"
    MemoryFormat = "MemoryFormat"
    QScheme = "QScheme"
    Storage = "Storage"
    Stream = "Stream"
    SymInt = "SymInt"
    SymBool = "SymBool"
    GraphModule = "GraphModule"


@dataclass(frozen=True)
class Type:
    """A schema type: `BaseType`, `OptionalType`, `ListType` or `CustomClassType`."""

    @staticmethod
    def parse(text: str) -> Type:
        """``Tensor``, ``int[2]``, ``SymInt[]?``, ``Tensor?[]``, ``__torch__...X``."""
        # Suffixes are peeled from the right without recursion, so a pathological
        # ``int????...`` cannot exhaust the stack.
        rest = text
        wrappers: list[int | None | str] = []  # "?" or a list size (None: unsized)
        while rest.endswith(("?", "]")):
            if len(wrappers) == MAX_TYPE_NESTING:
                raise CodegenError(
                    f"type '{_excerpt(text)}' nests more than {MAX_TYPE_NESTING} "
                    "optionals and lists"
                )
            if rest.endswith("?"):
                wrappers.append("?")
                rest = rest[:-1]
                continue
            opening = rest.rfind("[")
            if opening == -1:
                raise CodegenError(f"unbalanced ']' in type '{text}'")
            size_text = rest[opening + 1 : -1]
            if size_text and (
                _LIST_SIZE.fullmatch(size_text) is None or len(size_text) > 9
            ):
                raise CodegenError(
                    f"list size '{size_text}' of type '{text}' is not a positive "
                    "integer"
                )
            wrappers.append(int(size_text) if size_text else None)
            rest = rest[:opening]
        parsed: Type = _parse_atomic_type(rest, text)
        for wrapper in reversed(wrappers):
            if wrapper == "?":
                parsed = OptionalType(parsed)
            else:
                assert not isinstance(wrapper, str)
                parsed = ListType(parsed, wrapper)
        _check_round_trip("type", parsed, text)
        return parsed

    def __str__(self) -> str:
        raise NotImplementedError

    def is_base_ty_like(self, ty: BaseTy) -> bool:
        """Whether this is `ty`, possibly inside optionals and lists."""
        raise NotImplementedError

    def is_tensor_like(self) -> bool:
        """Tensor, Tensor?, Tensor[], Tensor?[]."""
        return self.is_base_ty_like(BaseTy.Tensor)

    def is_nullable(self) -> bool:
        """Whether None is a value of this type (or of its list elements)."""
        raise NotImplementedError

    def is_list_like(self) -> ListType | None:
        """The list type this is, possibly inside an optional, or None."""
        raise NotImplementedError


def _parse_atomic_type(text: str, whole: str) -> Type:
    if text.startswith(_CUSTOM_CLASS_PREFIX):
        class_name = text[len(_CUSTOM_CLASS_PREFIX) :]
        if _CUSTOM_CLASS_NAME.fullmatch(class_name) is None:
            raise CodegenError(f"invalid custom class name '{class_name}'")
        return CustomClassType(class_name)
    if not text:
        raise CodegenError(f"type '{whole}' has no base type")
    base_ty = BaseTy.__members__.get(text)
    if base_ty is None:
        raise CodegenError(f"unrecognized type '{text}'")
    return BaseType(base_ty)


@dataclass(frozen=True)
class BaseType(Type):
    name: BaseTy

    def __str__(self) -> str:
        return self.name.value

    def is_base_ty_like(self, ty: BaseTy) -> bool:
        return self.name is ty

    def is_nullable(self) -> bool:
        return False

    def is_list_like(self) -> ListType | None:
        return None


@dataclass(frozen=True)
class OptionalType(Type):
    elem: Type

    def __post_init__(self) -> None:
        if isinstance(self.elem, OptionalType):
            # PyTorch reads `int??` as `int?`; a lossless parser cannot.
            raise CodegenError(
                f"optional of an optional type '{self}': write '{self.elem}'"
            )

    def __str__(self) -> str:
        return f"{self.elem}?"

    def is_base_ty_like(self, ty: BaseTy) -> bool:
        return self.elem.is_base_ty_like(ty)

    def is_nullable(self) -> bool:
        return True

    def is_list_like(self) -> ListType | None:
        return self.elem.is_list_like()


@dataclass(frozen=True)
class ListType(Type):
    """``T[]`` (size None) or ``T[N]``; the size only documents the expected length."""

    elem: Type
    size: int | None

    def __post_init__(self) -> None:
        if self.size is not None and self.size < 1:
            raise CodegenError(f"list size {self.size} is not a positive integer")
        inner = self.elem.elem if isinstance(self.elem, OptionalType) else self.elem
        if isinstance(inner, ListType) and inner.size is not None:
            # PyTorch: "expected ident but found '['" after `int[2]`
            raise CodegenError(
                f"a list of the sized list '{inner}': only the outermost list may "
                "have a size"
            )
        if self.size is not None and self.size > MAX_LIST_SIZE:
            raise CodegenError(
                f"list size {self.size} is larger than {MAX_LIST_SIZE}, the largest "
                "fixed list size a schema may declare"
            )

    def __str__(self) -> str:
        return f"{self.elem}[{'' if self.size is None else self.size}]"

    def is_base_ty_like(self, ty: BaseTy) -> bool:
        return self.elem.is_base_ty_like(ty)

    def is_nullable(self) -> bool:
        return self.elem.is_nullable()

    def is_list_like(self) -> ListType | None:
        return self


@dataclass(frozen=True)
class CustomClassType(Type):
    """A TorchScript class, written ``__torch__.torch.classes.<class_name>``."""

    class_name: str

    def __str__(self) -> str:
        return f"{_CUSTOM_CLASS_PREFIX}{self.class_name}"

    def is_base_ty_like(self, ty: BaseTy) -> bool:
        return False

    def is_nullable(self) -> bool:
        return False

    def is_list_like(self) -> ListType | None:
        return None


# ---------------------------------------------------------------------- annotations


@dataclass(frozen=True)
class Annotation:
    """An alias annotation, the part in parentheses of ``Tensor(a!)``.

    ``a``: aliases set a (a view); ``a!``: aliases a and writes to it; ``a|b``: may
    alias either; ``a -> *``: what aliases a before the call may alias anything after
    (``split`` returning views in a list).
    """

    alias_set: tuple[str, ...]
    is_write: bool
    alias_set_after: tuple[str, ...]

    def __post_init__(self) -> None:
        if not self.alias_set:
            raise CodegenError("alias annotation has an empty alias set")
        if self.is_write and len(self.alias_set) > 1:
            raise CodegenError(
                f"mutable alias annotation '{self}' must name a single alias set"
            )
        if len(self.alias_set) > 1 and len(self.alias_set_after) > 1:
            raise CodegenError(
                f"alias annotation '{self}' cannot have several alias sets both "
                "before and after '->'"
            )

    @staticmethod
    def parse(text: str) -> Annotation:
        before, arrow, after = text.partition(" -> ")
        is_write = before.endswith("!")
        if is_write:
            before = before[:-1]
        alias_set = tuple(before.split("|"))
        for alias in alias_set:
            if _ALIAS_LETTER.fullmatch(alias) is None:
                raise CodegenError(
                    f"alias set '{alias}' of annotation '{text}' is not a lowercase "
                    "letter"
                )
        alias_set_after: tuple[str, ...] = ()
        if arrow:
            alias_set_after = tuple(after.split("|"))
            if alias_set_after != ("*",) and not all(
                _ALIAS_LETTER.fullmatch(alias) for alias in alias_set_after
            ):
                raise CodegenError(
                    f"alias set '{after}' after '->' of annotation '{text}' is "
                    "neither '*' nor lowercase letters"
                )
        annotation = Annotation(alias_set, is_write, alias_set_after)
        _check_round_trip("alias annotation", annotation, text)
        return annotation

    def __str__(self) -> str:
        text = "|".join(self.alias_set) + ("!" if self.is_write else "")
        if self.alias_set_after:
            text += " -> " + "|".join(self.alias_set_after)
        return text


def _split_declaration(text: str) -> tuple[str, str | None]:
    """``Tensor(a -> *) self`` -> (``Tensor(a -> *)``, ``self``); no name -> None.

    The name is after the last space, except that the spaces of an alias annotation
    do not count (an unnamed return can be ``Tensor(a -> *)``).
    """
    start = 0
    if text.startswith("Tensor("):
        start = text.find(")") + 1  # 0 when unclosed; _parse_annotated_type says so
    space = text.rfind(" ", start)
    if space == -1:
        return text, None
    return text[:space], text[space + 1 :]


def _parse_annotated_type(text: str) -> tuple[Type, Annotation | None]:
    """``Tensor(a!)?`` -> (Tensor?, a!); an annotation only binds to ``Tensor``."""
    if text.startswith("Tensor("):
        closing = text.find(")")
        if closing == -1:
            raise CodegenError(f"unclosed alias annotation '{text}'")
        annotation = Annotation.parse(text[len("Tensor(") : closing])
        type_text = "Tensor" + text[closing + 1 :]
        if type_text not in _ANNOTATABLE_TYPES:
            raise CodegenError(f"{_ANNOTATION_RULE}, not on '{type_text}'")
        return Type.parse(type_text), annotation
    if "(" in text or ")" in text:
        before_parenthesis = re.split(r"[()]", text, maxsplit=1)[0]
        if not before_parenthesis:
            raise CodegenError(f"unexpected parenthesis in type '{text}'")
        raise CodegenError(f"{_ANNOTATION_RULE}, not on '{before_parenthesis}'")
    return Type.parse(text), None


def _annotated_type_str(type_: Type, annotation: Annotation | None) -> str:
    text = str(type_)
    if annotation is None:
        return text
    return text.replace("Tensor", f"Tensor({annotation})", 1)


def _check_annotation_placement(type_: Type, annotation: Annotation | None) -> None:
    if annotation is not None and str(type_) not in _ANNOTATABLE_TYPES:
        raise CodegenError(f"{_ANNOTATION_RULE}, not on '{type_}'")


# ------------------------------------------------------------------------ arguments


@dataclass(frozen=True)
class Argument:
    """``Type[(annotation)] name[=default]``; the default is kept as written."""

    name: str
    type: Type
    default: str | None
    annotation: Annotation | None

    def __post_init__(self) -> None:
        if not _is_identifier(self.name):
            raise CodegenError(f"argument name '{self.name}' is not an identifier")
        _check_not_keyword("argument name", self.name)
        _check_annotation_placement(self.type, self.annotation)
        if self.default is not None:
            _check_default_text(self.default)

    @staticmethod
    def parse(text: str) -> Argument:
        """``Tensor(a!) out``, ``int[2] stride=1``, ``str mode='linear'``."""
        declaration, equals, default = text.partition("=")
        if equals and "=" in default and not default.startswith(("'", '"')):
            raise CodegenError(f"argument '{text}' has more than one '='")
        if equals and not default:
            raise CodegenError(f"argument '{text}' has an empty default")
        if "," in declaration:
            raise CodegenError(f"arguments must be separated by ', ': '{text}'")
        if declaration != declaration.strip(" ") or "  " in declaration:
            raise CodegenError(f"unexpected spaces in argument '{text}'")
        type_text, name = _split_declaration(declaration)
        if name is None:
            raise CodegenError(f"argument '{text}' has no name")
        with _in(f"in argument '{_excerpt(text)}'"):
            type_, annotation = _parse_annotated_type(type_text)
            argument = Argument(name, type_, default if equals else None, annotation)
        _check_round_trip("argument", argument, text)
        return argument

    @property
    def is_write(self) -> bool:
        """Whether the operator writes to this argument (``Tensor(a!)``)."""
        return self.annotation is not None and self.annotation.is_write

    def __str__(self) -> str:
        default = "" if self.default is None else f"={self.default}"
        return f"{_annotated_type_str(self.type, self.annotation)} {self.name}{default}"


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


def _split_arguments(text: str) -> list[str]:
    """Split on ``", "`` outside brackets and string literals.

    The schema grammar separates arguments by exactly ``", "``; brackets and quotes
    are respected so that ``int[2] x=[0, 1]`` is reported as one badly written
    default instead of an argument named ``1]``.
    """
    pieces: list[str] = []
    depth = 0
    quote = ""
    escaped = False
    start = 0
    for index, char in enumerate(text):
        if quote:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = ""
        elif char in "'\"" and text[index - 1 : index] == "=":
            quote = char  # only a default can be a string
        elif char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
            if depth < 0:
                raise CodegenError(f"unbalanced ']' in arguments '{text}'")
        elif char == "," and depth == 0 and text.startswith(", ", index):
            pieces.append(text[start:index])
            start = index + 2
    if quote:
        raise CodegenError(f"unterminated string in arguments '{text}'")
    if depth:
        raise CodegenError(f"unbalanced '[' in arguments '{text}'")
    pieces.append(text[start:])
    return pieces


@dataclass(frozen=True)
class TensorOptionsArguments:
    """The ``dtype, layout, device, pin_memory`` keyword arguments of a factory."""

    dtype: Argument
    layout: Argument
    device: Argument
    pin_memory: Argument

    def all(self) -> tuple[Argument, ...]:
        return (self.dtype, self.layout, self.device, self.pin_memory)


_TENSOR_OPTIONS = (
    ("dtype", BaseTy.ScalarType),
    ("layout", BaseTy.Layout),
    ("device", BaseTy.Device),
    ("pin_memory", BaseTy.bool),
)


def _is_tensor_option(argument: Argument, name: str, ty: BaseTy) -> bool:
    return argument.name == name and argument.type in (
        BaseType(ty),
        OptionalType(BaseType(ty)),
    )


@dataclass(frozen=True)
class Arguments:
    """An operator's arguments, in the three groups the text distinguishes.

    ``positional`` come before ``*``; after it, the arguments are keyword-only until
    the first mutable one (``Tensor(a!) out``), which starts ``out``. Finer groups
    (``self``, tensor options) are derived.
    """

    positional: tuple[Argument, ...]
    kwarg_only: tuple[Argument, ...]
    out: tuple[Argument, ...]

    def __post_init__(self) -> None:
        seen: set[str] = set()
        for argument in self.flat_all:
            if argument.name in seen:
                raise CodegenError(f"duplicate argument name '{argument.name}'")
            seen.add(argument.name)
        for argument in self.kwarg_only:
            if argument.is_write:
                raise CodegenError(
                    f"mutable keyword-only argument '{argument.name}' must be in out"
                )
        for argument in self.out:
            if not argument.is_write:
                raise CodegenError(
                    f"non-mutable argument '{argument.name}' cannot follow mutable "
                    "out arguments"
                )
        for argument in self.pre_self_positional:
            if argument.is_write:
                raise CodegenError(
                    f"mutable argument '{argument.name}' cannot come before self"
                )
        with_default = None
        for argument in self.positional:
            if argument.default is not None:
                with_default = with_default or argument
            elif with_default is not None:
                # PyTorch: "!seen_default_arg || arg.kwarg_only() INTERNAL ASSERT FAILED"
                raise CodegenError(
                    f"argument '{argument.name}' without a default follows argument "
                    f"'{with_default.name}' with a default; give it a default or put "
                    "it after '*' (keyword-only)"
                )

    @staticmethod
    def parse(text: str) -> Arguments:
        """``Tensor self, Tensor other, *, Scalar alpha=1``."""
        positional: list[Argument] = []
        kwarg_only: list[Argument] = []
        out: list[Argument] = []
        seen_star = False
        pieces = _split_arguments(text) if text else []
        for piece in pieces:
            if not piece:
                raise CodegenError(f"empty argument in '{text}'")
            if piece == "*":
                if seen_star:
                    raise CodegenError(
                        f"keyword-only marker '*' appears more than once in '{text}'"
                    )
                seen_star = True
                continue
            argument = Argument.parse(piece)
            if not seen_star:
                positional.append(argument)
            elif argument.is_write:
                out.append(argument)
            elif out:
                raise CodegenError(
                    f"non-mutable argument '{argument.name}' cannot follow mutable "
                    "out arguments"
                )
            else:
                kwarg_only.append(argument)
        if seen_star and not (kwarg_only or out):
            raise CodegenError(
                f"keyword-only marker '*' is not followed by any argument in '{text}'"
            )
        arguments = Arguments(tuple(positional), tuple(kwarg_only), tuple(out))
        _check_round_trip("arguments", arguments, text)
        return arguments

    def __str__(self) -> str:
        pieces = [str(argument) for argument in self.positional]
        if self.kwarg_only or self.out:
            pieces.append("*")
        pieces.extend(str(argument) for argument in self.kwarg_only + self.out)
        return ", ".join(pieces)

    @property
    def flat_all(self) -> tuple[Argument, ...]:
        """Every argument, in declaration order."""
        return self.positional + self.kwarg_only + self.out

    @property
    def flat_non_out(self) -> tuple[Argument, ...]:
        return self.positional + self.kwarg_only

    @property
    def self_arg(self) -> Argument | None:
        """The positional argument named ``self`` (not always the first one)."""
        for argument in self.positional:
            if argument.name == "self":
                return argument
        return None

    @property
    def pre_self_positional(self) -> tuple[Argument, ...]:
        """Positional arguments before ``self`` (``where.self``'s ``condition``)."""
        for index, argument in enumerate(self.positional):
            if argument.name == "self":
                return self.positional[:index]
        return ()

    @property
    def post_self_positional(self) -> tuple[Argument, ...]:
        """Positional arguments after ``self``; all of them when there is no self."""
        for index, argument in enumerate(self.positional):
            if argument.name == "self":
                return self.positional[index + 1 :]
        return self.positional

    @property
    def tensor_options(self) -> TensorOptionsArguments | None:
        """Consecutive keyword-only ``dtype, layout, device, pin_memory``, if any."""
        width = len(_TENSOR_OPTIONS)
        for start in range(len(self.kwarg_only) - width + 1):
            window = self.kwarg_only[start : start + width]
            if all(
                _is_tensor_option(argument, name, ty)
                for argument, (name, ty) in zip(window, _TENSOR_OPTIONS)
            ):
                return TensorOptionsArguments(*window)
        return None

    @property
    def tensor_args(self) -> tuple[Argument, ...]:
        """The arguments of tensor-like type, in declaration order."""
        return tuple(a for a in self.flat_all if a.type.is_tensor_like())

    @property
    def mutable_args(self) -> tuple[Argument, ...]:
        return tuple(a for a in self.flat_all if a.is_write)


# -------------------------------------------------------------------------- returns


@dataclass(frozen=True)
class Return:
    """``Type[(annotation)] [name]``."""

    name: str | None
    type: Type
    annotation: Annotation | None

    def __post_init__(self) -> None:
        if self.name is not None and not _is_identifier(self.name):
            raise CodegenError(f"return name '{self.name}' is not an identifier")
        if self.name is not None:
            _check_not_keyword("return name", self.name, python_name=True)
            if self.name.startswith("_"):
                raise CodegenError(
                    f"return name '{self.name}' starts with '_': named returns are the "
                    "fields of a named tuple (as torch.return_types), which cannot "
                    "start with '_'"
                )
        _check_annotation_placement(self.type, self.annotation)

    @staticmethod
    def parse(text: str) -> Return:
        with _in(f"in return '{_excerpt(text)}'"):
            if text != text.strip(" ") or "  " in text:
                raise CodegenError("unexpected spaces")
            type_text, name = _split_declaration(text)
            type_, annotation = _parse_annotated_type(type_text)
            parsed = Return(name, type_, annotation)
            _check_round_trip("return", parsed, text)
            return parsed

    @property
    def is_write(self) -> bool:
        return self.annotation is not None and self.annotation.is_write

    def __str__(self) -> str:
        text = _annotated_type_str(self.type, self.annotation)
        return text if self.name is None else f"{text} {self.name}"


def parse_returns(text: str) -> tuple[Return, ...]:
    """``()`` for none, ``Tensor`` for one, ``(Tensor values, Tensor indices)``."""
    if not text:
        raise CodegenError("missing returns after ' -> '; write '()' for none")
    if text == "()":
        return ()
    parenthesized = text.startswith("(")
    if parenthesized:
        if not text.endswith(")"):
            raise CodegenError(f"unbalanced parentheses in returns '{text}'")
        text = text[1:-1]
    pieces = text.split(", ")
    if "" in pieces:
        raise CodegenError(f"empty return in '{text}'")
    returns = tuple(Return.parse(piece) for piece in pieces)
    if parenthesized and len(returns) == 1:
        raise CodegenError(
            f"a single return is written without parentheses: '{text}', not '({text})'"
        )
    if not parenthesized and len(returns) > 1:
        raise CodegenError(f"several returns must be parenthesized: '({text})'")
    return returns


def _returns_str(returns: Sequence[Return]) -> str:
    if len(returns) == 1:
        return str(returns[0])
    return "(" + ", ".join(str(r) for r in returns) + ")"


# ---------------------------------------------------------------------------- names


@dataclass(frozen=True)
class BaseOperatorName:
    """The operator name without overload: ``add``, ``add_``, ``__iand__``.

    ``base`` is stripped of what the other fields say: the in-place ``_``, the dunder
    underscores, the ``_functional`` suffix and the ``namespace::`` prefix.
    """

    base: str
    inplace: bool
    dunder_method: bool
    functional_overload: bool = False
    namespace: str | None = None

    def __post_init__(self) -> None:
        if self.namespace is not None and not all(
            _is_identifier(part) for part in self.namespace.split("::")
        ):
            raise CodegenError(f"invalid namespace '{self.namespace}'")
        for part in (self.namespace or "").split("::"):
            _check_not_keyword("namespace", part)
        if self.dunder_method:
            if _IDENTIFIER.fullmatch(self.base) is None or "_" in self.base:
                raise CodegenError(f"invalid dunder method name '{self}'")
            if self.inplace and self.base not in _AUGMENTED_ASSIGNMENT_NAMES:
                raise CodegenError(
                    f"'{self}' is not an in-place dunder method PyTorch knows"
                )
            if not self.inplace and self.base.startswith("i"):
                raise CodegenError(
                    f"unexpected dunder method starting with 'i': {self}"
                )
        else:
            if not _is_identifier(self.base):
                raise CodegenError(f"operator name '{self}' is not an identifier")
            _check_not_keyword("operator name", self.base, python_name=True)
            # A base that ends like a suffix would print as that suffix.
            if self.base.endswith("_") and not (
                self.inplace or self.functional_overload
            ):
                raise CodegenError(f"operator base name '{self.base}' ends with '_'")
            if self.base.endswith(_FUNCTIONAL_SUFFIX) and not self.functional_overload:
                raise CodegenError(
                    f"operator base name '{self.base}' ends with '{_FUNCTIONAL_SUFFIX}'"
                )
        if self.functional_overload and (self.inplace or self.dunder_method):
            raise CodegenError(
                f"functional overload '{self.base}{_FUNCTIONAL_SUFFIX}' cannot be a "
                "dunder method or in-place"
            )
        written = str(self).rpartition("::")[2]
        if written.endswith("_out"):
            raise CodegenError(
                f"operator name '{self}' ends with '_out', which is reserved; "
                "use an out overload name instead (e.g. 'foo.out')"
            )

    @staticmethod
    def parse(text: str) -> BaseOperatorName:
        if not text:
            raise CodegenError("operator name is empty")
        namespace: str | None = None
        name = text
        if "::" in text:
            namespace, _, name = text.rpartition("::")
            if not namespace:
                raise CodegenError(f"empty namespace in operator name '{text}'")
        if not _is_identifier(name):
            raise CodegenError(f"operator name '{text}' is not an identifier")
        dunder = re.fullmatch(r"__([^_]+)__", name)
        inplace = False
        functional_overload = False
        if dunder is not None:
            base = dunder.group(1)
            if base.startswith("i") and base[1:] in _AUGMENTED_ASSIGNMENT_NAMES:
                inplace = True
                base = base[1:]
        else:
            base = name
            if base.endswith("_"):
                inplace = True
                base = base[:-1]
            # `foo_functional_` is parsed as an in-place functional overload, which
            # __post_init__ rejects, as PyTorch does.
            if base.endswith(_FUNCTIONAL_SUFFIX):
                functional_overload = True
                base = base[: -len(_FUNCTIONAL_SUFFIX)]
        parsed = BaseOperatorName(
            base, inplace, dunder is not None, functional_overload, namespace
        )
        _check_round_trip("operator name", parsed, text)
        return parsed

    def __str__(self) -> str:
        prefix = "" if self.namespace is None else f"{self.namespace}::"
        if self.dunder_method:
            return f"{prefix}__{'i' if self.inplace else ''}{self.base}__"
        if self.inplace:
            return f"{prefix}{self.base}_"
        if self.functional_overload:
            return f"{prefix}{self.base}{_FUNCTIONAL_SUFFIX}"
        return f"{prefix}{self.base}"


@dataclass(frozen=True)
class OperatorName:
    """``add.Tensor``: a base name and an overload name ("" for none)."""

    name: BaseOperatorName
    overload_name: str

    def __post_init__(self) -> None:
        if self.overload_name and _OVERLOAD_NAME.fullmatch(self.overload_name) is None:
            raise CodegenError(
                f"overload name '{self.overload_name}' is not made of letters, "
                "digits and '_'"
            )
        _check_not_keyword("overload name", self.overload_name)

    @staticmethod
    def parse(text: str) -> OperatorName:
        name, dot, overload_name = text.partition(".")
        if dot and not overload_name:
            raise CodegenError(f"empty overload name in '{text}'")
        parsed = OperatorName(BaseOperatorName.parse(name), overload_name)
        _check_round_trip("operator name", parsed, text)
        return parsed

    def __str__(self) -> str:
        if self.overload_name:
            return f"{self.name}.{self.overload_name}"
        return str(self.name)

    @property
    def unambiguous_name(self) -> str:
        """``add_Tensor``: unique per overload and usable as a Python identifier."""
        base = str(self.name).replace("::", "_")
        return f"{base}_{self.overload_name}" if self.overload_name else base


# --------------------------------------------------------------------------- schema


class SchemaKind(Enum):
    """What an operator does with its outputs."""

    functional = "functional"  # returns new tensors
    inplace = "inplace"  # ``foo_``: writes into self and returns it
    out = "out"  # writes into keyword-only out arguments
    mutable = "mutable"  # writes into some positional argument
    scratch = "scratch"  # an out variant with ``_scratch_*`` work buffers


@dataclass(frozen=True)
class FunctionSchema:
    """``name(arguments) -> returns``, with PyTorch's rules on how they fit together."""

    name: OperatorName
    arguments: Arguments
    returns: tuple[Return, ...]

    def __post_init__(self) -> None:
        return_names = [ret.name for ret in self.returns if ret.name is not None]
        for index, name in enumerate(return_names):
            if name in return_names[:index]:
                raise CodegenError(f"duplicate return name '{name}'")
        self._check_out_arguments()
        self._check_mutable_returns()
        self._check_inplace()
        kind = self.kind()
        functional = kind is SchemaKind.functional
        if self.arguments.tensor_options is not None and not functional:
            raise CodegenError(
                "tensor options arguments (dtype, layout, device, pin_memory) are "
                f"only allowed on functional operators; {self.name} is {kind.value}"
            )
        if "functional" in self.name.overload_name and not functional:
            raise CodegenError(
                f"overload name '{self.name.overload_name}' contains 'functional', "
                f"which is reserved for functional variants; {self.name} is "
                f"{kind.value}"
            )

    def _check_out_arguments(self) -> None:
        out = self.arguments.out
        for index, (argument, ret) in enumerate(zip(out, self.returns)):
            if argument.annotation != ret.annotation:
                raise CodegenError(
                    f"out argument '{argument.name}' must match return {index}: "
                    f"annotation {_show(argument.annotation)} != "
                    f"{_show(ret.annotation)}; the i-th out argument is the i-th "
                    "return"
                )
        if not out:
            return
        if self.name.name.inplace:
            raise CodegenError(f"Inplace op {self.name} cannot have out arguments")
        if any(argument.type != BaseType(BaseTy.Tensor) for argument in out):
            if self.returns:
                raise CodegenError(
                    "out operators with non-Tensor out arguments must return nothing "
                    "('-> ()')"
                )
            return
        returned = [a for a in out if not a.name.startswith(_SCRATCH_PREFIX)]
        if len(returned) != len(self.returns):
            raise CodegenError(
                f"out operator must return its {len(returned)} out argument(s) "
                f"(scratch ones excepted), not {len(self.returns)} value(s)"
            )

    def _check_mutable_returns(self) -> None:
        for argument in self.arguments.post_self_positional:
            if argument.is_write and any(
                argument.annotation == ret.annotation for ret in self.returns
            ):
                raise CodegenError(
                    f"mutable positional argument '{argument.name}' must not be "
                    "returned"
                )
        writes = [ret.is_write for ret in self.returns]
        if any(writes) and not all(writes):
            raise CodegenError(
                "returns must be all mutable or all immutable, got "
                f"'{_returns_str(self.returns)}'"
            )
        aliasable = list(self.arguments.out)
        if self.arguments.self_arg is not None:
            aliasable.append(self.arguments.self_arg)
        for ret in self.returns:
            if ret.is_write and not any(
                ret.annotation == argument.annotation for argument in aliasable
            ):
                raise CodegenError(
                    f"mutable return '{ret}' must alias self or an out argument "
                    "(out arguments are keyword-only: put them after '*')"
                )

    def _check_inplace(self) -> None:
        if not self.name.name.inplace:
            return
        self_arg = self.arguments.self_arg
        if self_arg is None or not self_arg.is_write:
            raise CodegenError(
                f"Inplace op {self.name} must have a self argument with a mutable "
                "annotation"
            )
        if self_arg.type == BaseType(BaseTy.Tensor):
            if not (
                len(self.returns) == 1
                and self.returns[0].annotation == self_arg.annotation
            ):
                raise CodegenError(
                    f"Inplace op {self.name} with Tensor self must return self"
                )
        elif self.returns:
            raise CodegenError(
                f"Inplace op {self.name} with non-Tensor self must have no returns"
            )

    @staticmethod
    def parse(text: str) -> FunctionSchema:
        if not isinstance(text, str):
            raise CodegenError(f"a schema is a string, not {type(text).__name__}")
        opening = text.find("(")
        if opening == -1:
            raise CodegenError("expected '(' after the operator name")
        # The last ") -> " ends the arguments: a string default may contain one, a
        # valid returns text cannot.
        separator = text.rfind(") -> ", opening)
        if separator == -1:
            if ")" not in text[opening:]:
                raise CodegenError("expected ')' after the arguments")
            raise CodegenError("expected ' -> ' between arguments and returns")
        name = OperatorName.parse(text[:opening])
        arguments = Arguments.parse(text[opening + 1 : separator])
        returns = parse_returns(text[separator + len(") -> ") :])
        schema = FunctionSchema(name, arguments, returns)
        _check_round_trip("schema", schema, text)
        return schema

    def __str__(self) -> str:
        return f"{self.name}({self.arguments}) -> {_returns_str(self.returns)}"

    def kind(self) -> SchemaKind:
        """in-place (``foo_``) > scratch > out > mutable > functional."""
        if self.name.name.inplace:
            return SchemaKind.inplace
        if any(a.name.startswith(_SCRATCH_PREFIX) for a in self.arguments.out):
            return SchemaKind.scratch
        if self.arguments.out:
            return SchemaKind.out
        if any(a.is_write for a in self.arguments.post_self_positional):
            return SchemaKind.mutable
        return SchemaKind.functional

    @property
    def is_view_op(self) -> bool:
        """Whether a return aliases an input without writing to it (a view).

        ``permute(Tensor(a) self, int[] dims) -> Tensor(a)``, or an input whose
        aliases flow into the outputs (``split``'s ``Tensor(a -> *) self``). Views
        that PyTorch knows only from the ``inplace_view`` tag are not seen here.
        """
        if any(r.annotation is not None and not r.is_write for r in self.returns):
            return True
        return any(
            a.annotation is not None and "*" in a.annotation.alias_set_after
            for a in self.arguments.flat_all
        )

    def return_names(self) -> list[str]:
        """The returns' names in PyTorch's C++ API.

        ``self`` for in-place, the out arguments' names for out variants, the written
        name (with ``_return`` appended when an argument has it), else ``result`` or
        ``result0``, ``result1``...
        """
        argument_names = {a.name for a in self.arguments.flat_all}
        names: list[str] = []
        for index, ret in enumerate(self.returns):
            if self.name.name.inplace:
                names.append("self")
            elif self.arguments.out:
                names.append(self.arguments.out[index].name)
            elif ret.name is not None:
                clash = ret.name in argument_names
                names.append(f"{ret.name}_return" if clash else ret.name)
            elif len(self.returns) == 1:
                names.append("result")
            else:
                names.append(f"result{index}")
        return names


def _show(annotation: Annotation | None) -> str:
    return "none" if annotation is None else f"'{annotation}'"


def parse_schema(text: str) -> FunctionSchema:
    """Parse one ``func:`` schema; raises CodegenError naming what is malformed."""
    return FunctionSchema.parse(text)


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
