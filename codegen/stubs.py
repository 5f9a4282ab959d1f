"""The type stubs of the generated package: every operator and Tensor method with its
signature, for mypy and editors (PyTorch's _VariableFunctions.pyi and TensorBase).

The generated modules attach Tensor methods with setattr and resolve overloaded names
at call time (`gradgen.overloads.Overloads`), which a type checker cannot follow. So the
generator also writes, beside the code, `.pyi` files that say the same from the same
schemas:

- `ops.pyi`: each public function, `@overload`-ed when the name has several schemas;
- `tensor_base.pyi`: `class TensorBase` declaring every generated Tensor method, which
  `gradgen.Tensor` inherits from under TYPE_CHECKING only (no such module at runtime),
  and the named tuples of operators with named returns (`x.max(0).values`);
- `__init__.pyi`: the package, without the kernel and autograd modules.

An annotation says what the binding accepts at runtime: a Tensor argument after the
first also takes a Python number (a wrapped number), `int[]` also a single int, a
`ScalarType` anything `dtypes.as_dtype` takes; an overloaded name types each overload
as the first, exact pass of `Overloads` matches it (a Tensor as a Tensor). Defaults
are `...`. The annotations are code built here from a fixed vocabulary; names (of
functions, parameters and named tuples) come from the schemas and reach the stubs only
through the `identifier` filter of literals.py.
"""

from __future__ import annotations

from dataclasses import dataclass

from .formulas import python_identifier
from .ir import return_type_name
from .model import NAMESPACES, Model, NativeFunction, Variant
from .schema import Argument, BaseTy, Type

# The stub's spelling of each schema base type (builtins under aliases: a stub defines
# functions and methods named `float`, `int`, `bool`, ... that would shadow them).
_BASE_ANNOTATIONS = {
    BaseTy.Tensor: "Tensor",
    BaseTy.Scalar: "_Number",
    BaseTy.int: "_int",
    BaseTy.SymInt: "_int",
    BaseTy.float: "_float",
    BaseTy.bool: "_bool",
    BaseTy.str: "_str",
    BaseTy.ScalarType: "_DType",
}


@dataclass(frozen=True)
class StubParameter:
    name: str  # a Python identifier, printed through the `identifier` filter
    annotation: str  # code
    has_default: bool
    keyword_only: bool  # the first keyword-only parameter gets a `*` before it
    varargs: bool = False  # `*dims: int | Sequence[int]` (a method's spread int[])


@dataclass(frozen=True)
class StubSignature:
    schema: str  # text, printed through the `comment` filter
    parameters: tuple[StubParameter, ...]
    returns: str  # code: an annotation of the vocabulary above
    returns_named: str | None  # or a named tuple's class (a name)


@dataclass(frozen=True)
class StubFunction:
    """A function or method name with its signatures (several: `@overload`)."""

    name: str
    signatures: tuple[StubSignature, ...]

    @property
    def overloaded(self) -> bool:
        return len(self.signatures) > 1


@dataclass(frozen=True)
class StubField:
    name: str
    annotation: str  # code


@dataclass(frozen=True)
class StubNamedTuple:
    name: str
    fields: tuple[StubField, ...]


@dataclass(frozen=True)
class StubIR:
    functions: tuple[StubFunction, ...]
    methods: tuple[StubFunction, ...]
    named_tuples: tuple[StubNamedTuple, ...]
    # python_module: namespaces, each with its functions (linalg.pyi, ...)
    namespaces: tuple[tuple[str, tuple[StubFunction, ...]], ...] = ()


def annotation(type_: Type, numbers: bool) -> str:
    """The stub annotation of a parameter of schema type `type_`; `numbers`: a Python
    number may stand for a Tensor (a wrapped number)."""
    listed = type_.is_list_like()
    if listed is not None:
        element = _element(listed.elem, numbers=False)
        if element == "_int":
            text = "_int | Sequence[_int]"  # int_list_argument takes a single int too
        else:
            if listed.elem.is_nullable():  # Tensor?[]
                element += " | None"
            text = f"Sequence[{element}]"
        nullable = type_ is not listed  # T[]?: the list itself may be None
    else:
        text = _element(type_, numbers)
        nullable = type_.is_nullable()
    return f"{text} | None" if nullable and not text.endswith("| None") else text


def _element(type_: Type, numbers: bool) -> str:
    for base, name in _BASE_ANNOTATIONS.items():
        if type_.is_base_ty_like(base):
            return "Tensor | _Number" if numbers and name == "Tensor" else name
    return "Any"


def _return_annotation(type_: Type) -> str:
    listed = type_.is_list_like()
    if listed is not None:  # Tensor[] and int[] come back as lists
        return f"_list[{_element(listed.elem, numbers=False)}]"
    text = _element(type_, numbers=False)
    return f"{text} | None" if type_.is_nullable() else text


def _named_tuple(function: NativeFunction) -> StubNamedTuple | None:
    """The named tuple the kernel returns (the rule of ir.py's return types)."""
    returns = function.schema.returns
    if function.numpy is None or len(returns) < 2:
        return None
    if not all(r.name for r in returns):
        return None
    return StubNamedTuple(
        return_type_name(function),
        tuple(StubField(str(r.name), _return_annotation(r.type)) for r in returns),
    )


def _returns(function: NativeFunction) -> tuple[str, str | None]:
    returns = function.schema.returns
    named = _named_tuple(function)
    if named is not None:
        return "", named.name
    if not returns:
        return "None", None
    if len(returns) == 1:
        listed = returns[0].type.is_list_like()
        if listed is not None and returns[0].type.is_tensor_like():
            return (
                "_tuple[Tensor, ...]",
                None,
            )  # the bindings return Tensor[] as a tuple
        return _return_annotation(returns[0].type), None
    items = ", ".join(_return_annotation(r.type) for r in returns)
    return f"_tuple[{items}]", None


def _is_int_list(argument: Argument) -> bool:
    listed = argument.type.is_list_like()
    return listed is not None and (
        listed.elem.is_base_ty_like(BaseTy.int)
        or listed.elem.is_base_ty_like(BaseTy.SymInt)
    )


def _signature(function: NativeFunction, method: bool, exact: bool) -> StubSignature:
    """One schema as the binding takes it (see ir.py's `_binding`); `exact`: types of
    the first pass of an overloaded name (no number for a Tensor)."""
    arguments = function.schema.arguments
    positional = [a for a in arguments.positional if not (method and a.name == "self")]
    keyword_only = list(arguments.kwarg_only) + list(arguments.out)
    # A method whose only positional argument is an int[] takes it spread too (not
    # when the name is overloaded: `Overloads` binds each argument as it comes).
    varargs = (
        method and not exact and len(positional) == 1 and _is_int_list(positional[0])
    )
    parameters = []
    for argument in positional + keyword_only:
        is_self = argument.name == "self"
        if varargs and argument is positional[0]:
            parameter = StubParameter(
                python_identifier(argument.name),
                "_int | Sequence[_int]",
                False,
                False,
                varargs=True,
            )
        else:
            parameter = StubParameter(
                "input" if is_self else python_identifier(argument.name),
                annotation(argument.type, numbers=not (is_self or exact)),
                argument.default is not None,
                argument in keyword_only and not varargs,
            )
        parameters.append(parameter)
    if function.out_overload is not None and not method:
        several = len(function.schema.returns) > 1
        annotation_ = "Sequence[Tensor]" if several else "Tensor"
        parameters.append(StubParameter("out", f"{annotation_} | None", True, True))
    returns, named = _returns(function)
    return StubSignature(str(function.schema), tuple(parameters), returns, named)


def _int_lists(function: NativeFunction) -> int:
    arguments = function.schema.arguments
    return sum(map(_is_int_list, [*arguments.positional, *arguments.kwarg_only]))


def _group(functions: list[NativeFunction], method: bool) -> tuple[StubFunction, ...]:
    """Each name's signatures; the overloads with fewer int[] parameters first: an
    int[] also takes an int, so `movedim.intlist` after `movedim.int` (else mypy finds
    the int overload can never match)."""
    by_name: dict[str, list[NativeFunction]] = {}
    for function in functions:
        name = function.python_name if method else function.public_name
        by_name.setdefault(name, []).append(function)
    return tuple(
        StubFunction(
            name,
            tuple(
                _signature(f, method, exact=len(group) > 1)
                for f in sorted(group, key=_int_lists)
            ),
        )
        for name, group in by_name.items()
    )


def build(model: Model) -> StubIR:
    """The stubs' content: every public function and method, in the YAML's order."""
    functions = model.native_functions
    public = [f for f in functions if Variant.function in f.variants]
    named: dict[str, StubNamedTuple] = {}
    for function in functions:
        found = _named_tuple(function)
        if found is not None:
            named.setdefault(found.name, found)
    return StubIR(
        functions=_group([f for f in public if f.namespace is None], False),
        methods=_group([f for f in functions if Variant.method in f.variants], True),
        named_tuples=tuple(named.values()),
        namespaces=tuple(
            (module, _group([f for f in public if f.namespace == module], False))
            for module in NAMESPACES
        ),
    )


def stub_context(stubs: StubIR, file_name: str) -> dict[str, object]:
    """What a stub template is rendered with: a namespace's stub (linalg.pyi) gets
    that namespace's functions as `functions`."""
    context: dict[str, object] = dict(vars(stubs))
    for module, functions in stubs.namespaces:
        if file_name == f"{module}.pyi":
            context["functions"] = functions
    return context


# The stub files: (file name, template, purpose).
STUB_FILES = (
    (
        "__init__.pyi",
        "stub_package_init.pyi.j2",
        "Typing only: the package as type checkers see it (operators, not kernels).",
    ),
    (
        "ops.pyi",
        "stub_ops.pyi.j2",
        "Typing only: the signatures of the public functions, gradgen.NAME(...).",
    ),
    *(
        (
            f"{module}.pyi",
            "stub_ops.pyi.j2",
            f"Typing only: the signatures of gradgen.{module}.NAME(...).",
        )
        for module in NAMESPACES
    ),
    (
        "tensor_base.pyi",
        "stub_tensor_base.pyi.j2",
        "Typing only (no tensor_base.py): the generated Tensor methods, which "
        "gradgen.Tensor inherits under TYPE_CHECKING, and the named tuples returned.",
    ),
)
