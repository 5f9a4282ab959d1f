"""The type grammar of PyTorch's schemas: `Type` (``Tensor?[]``, ``int[2]``,
``__torch__.torch.classes.x.Y``) and alias `Annotation` (``(a!)``, ``(a -> *)``),
with the small parsing helpers every part of the schema parser shares (names,
keywords, round trips, error context). See schema.py for the invariants.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from enum import Enum

from .errors import CodegenError

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_LIST_SIZE = re.compile(r"[1-9][0-9]*")
# Fixed list sizes are small (PyTorch's own schemas go up to 6: `SymInt[6] padding`);
# a sized default is expanded into a tuple of that many elements.
MAX_LIST_SIZE = 64
# Optionals and lists around a base type (`Tensor?[]` is 2); PyTorch's schemas need 2.
MAX_TYPE_NESTING = 4
_CUSTOM_CLASS_PREFIX = "__torch__.torch.classes."
_CUSTOM_CLASS_NAME = re.compile(r"[A-Za-z0-9_.]+")
_ALIAS_LETTER = re.compile(r"[a-z]")
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
