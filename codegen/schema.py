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

The parser in four modules, each importing only the ones before it: schema_types.py
(types, alias annotations, the shared parsing helpers), schema_defaults.py (a default's
text and its Python value), schema_arguments.py (arguments and returns) and this one
(the operator name and `FunctionSchema`), which re-exports the others' public names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from .errors import CodegenError
from .schema_arguments import (
    Argument,
    Arguments,
    Return,
    TensorOptionsArguments,
    _returns_str,
    parse_returns,
)
from .schema_defaults import default_to_python
from .schema_types import (
    Annotation,
    BaseTy,
    BaseType,
    CustomClassType,
    ListType,
    MAX_LIST_SIZE,
    MAX_TYPE_NESTING,
    OptionalType,
    TORCH_KEYWORDS,
    Type,
    _IDENTIFIER,
    _check_not_keyword,
    _check_round_trip,
    _is_identifier,
)

__all__ = [
    "Annotation",
    "Argument",
    "Arguments",
    "BaseOperatorName",
    "BaseTy",
    "BaseType",
    "CustomClassType",
    "default_to_python",
    "FunctionSchema",
    "ListType",
    "MAX_LIST_SIZE",
    "MAX_TYPE_NESTING",
    "OperatorName",
    "OptionalType",
    "parse_returns",
    "parse_schema",
    "Return",
    "SchemaKind",
    "TensorOptionsArguments",
    "TORCH_KEYWORDS",
    "Type",
]


_OVERLOAD_NAME = re.compile(r"[A-Za-z0-9_]+")

# The in-place dunder methods of PEP 203 (`__iadd__` ...) that PyTorch recognises.
_AUGMENTED_ASSIGNMENT_NAMES = frozenset(
    {"add", "sub", "mul", "div", "mod", "pow", "lshift", "rshift", "and", "xor", "or"}
)
_FUNCTIONAL_SUFFIX = "_functional"
_SCRATCH_PREFIX = "_scratch_"


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
