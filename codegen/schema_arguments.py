"""An operator's arguments and returns: `Argument` (``Tensor(a!) out``, ``int[2]
stride=1``), the groups of `Arguments` (positional, keyword-only, out, tensor
options) and `Return`, each parsed from its text with its round trip checked.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .errors import CodegenError
from .schema_defaults import _check_default_text
from .schema_types import (
    Annotation,
    BaseTy,
    BaseType,
    OptionalType,
    Type,
    _annotated_type_str,
    _check_annotation_placement,
    _check_not_keyword,
    _check_round_trip,
    _excerpt,
    _in,
    _is_identifier,
    _parse_annotated_type,
    _split_declaration,
)

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
