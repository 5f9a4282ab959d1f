"""Tests of codegen/schema.py: defaults converted to Python, the exact messages of
malformed schemas, and property-based tests that mutated or random text round-trips or
raises CodegenError (see tests/test_schema_parse.py)."""

from __future__ import annotations

import keyword
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gradgen.codegen.errors import CodegenError
from gradgen.codegen.schema import (
    Annotation,
    FunctionSchema,
    OperatorName,
    Return,
    SchemaKind,
    Type,
    default_to_python,
    parse_schema,
)

from schema_examples import ROUND_TRIP

# ---------------------------------------------------------------------------- defaults


@pytest.mark.parametrize(
    "default, type_text, expected",
    [
        ("None", "Tensor?", "None"),
        ("None", "int[1]?", "None"),
        ("True", "bool", "True"),
        ("False", "bool?", "False"),
        ("1", "Scalar", "1"),
        ("-1", "int", "-1"),
        ("1e-05", "float", "1e-05"),
        ("0.3333333333333333", "Scalar", "0.3333333333333333"),
        ("inf", "float", "float('inf')"),
        ("[]", "int[2]", "()"),
        ("[0,1]", "int[]", "(0, 1)"),
        ("[-2,-1]", "int[1]", "(-2, -1)"),
        ("0", "int[2]", "(0, 0)"),
        ("1", "SymInt[1]", "(1,)"),
        ("True", "bool[3]", "(True, True, True)"),
        ('"mean"', "str", "'mean'"),
        ("'linear'", "str", "'linear'"),
        ('""', "str", "''"),
        ('"\\"\'\\\\"', "str", repr("\"'\\")),
        ("Mean", "int", "1"),
        ("Sum", "int", "2"),
        ("long", "ScalarType?", "'int64'"),
        ("float", "ScalarType", "'float32'"),
        ("contiguous_format", "MemoryFormat?", "'contiguous_format'"),
        ("strided", "Layout", "'strided'"),
    ],
)
def test_default_to_python(default: str, type_text: str, expected: str) -> None:
    assert default_to_python(default, Type.parse(type_text)) == expected


@pytest.mark.parametrize(
    "default, type_text, message",
    [
        ("None", "int", "default None needs an optional type (add '?') for type 'int'"),
        ("Mean", "float", "unrecognized default 'Mean' for type 'float'"),
        ("0", "int[]", "default '0' is not a list for type 'int[]'"),
        ("0.5", "int", "unrecognized default '0.5' for type 'int'"),
        ('"x"', "int", "unrecognized default '\"x\"' for type 'int'"),
        ("long", "int", "unrecognized default 'long' for type 'int'"),
        ("1", "Tensor", "unrecognized default '1' for type 'Tensor'"),
        (
            "[0, 1]",
            "int[]",
            "list default '[0, 1]' must be written without spaces: '[0,1]' "
            "for type 'int[]'",
        ),
    ],
)
def test_default_to_python_errors(default: str, type_text: str, message: str) -> None:
    with pytest.raises(CodegenError) as caught:
        default_to_python(default, Type.parse(type_text))
    assert str(caught.value) == message


# --------------------------------------------------------------------------- malformed

MALFORMED = [
    (
        "foo(Dimname dim) -> Tensor",
        "unrecognized type 'Dimname' in argument 'Dimname dim'",
    ),
    ("foo(x) -> Tensor", "argument 'x' has no name"),
    ("foo(Tensor x)", "expected ' -> ' between arguments and returns"),
    ("foo(Tensor x)->Tensor", "expected ' -> ' between arguments and returns"),
    ("foo Tensor x -> Tensor", "expected '(' after the operator name"),
    (
        "foo(Tensor self) -> (Tensor)",
        "a single return is written without parentheses: 'Tensor', not '(Tensor)'",
    ),
    (
        "foo(Tensor self) -> Tensor, Tensor",
        "several returns must be parenthesized: '(Tensor, Tensor)'",
    ),
    (
        "foo(Tensor self,int x) -> Tensor",
        "arguments must be separated by ', ': 'Tensor self,int x'",
    ),
    (
        "foo(int[2] x=[0, 1]) -> Tensor",
        "list default '[0, 1]' must be written without spaces: '[0,1]' "
        "in argument 'int[2] x=[0, 1]'",
    ),
    (
        "foo(int[02] x) -> Tensor",
        "list size '02' of type 'int[02]' is not a positive integer "
        "in argument 'int[02] x'",
    ),
    ("foo(int x=1=2) -> Tensor", "argument 'int x=1=2' has more than one '='"),
    ("foo(int x=) -> Tensor", "argument 'int x=' has an empty default"),
    (
        "foo(Tensor a, *, int b, *, int c) -> Tensor",
        "keyword-only marker '*' appears more than once in "
        "'Tensor a, *, int b, *, int c'",
    ),
    (
        "foo(Tensor a, *) -> Tensor",
        "keyword-only marker '*' is not followed by any argument in 'Tensor a, *'",
    ),
    ("foo(Tensor a, , Tensor b) -> Tensor", "empty argument in 'Tensor a, , Tensor b'"),
    (
        "foo(Tensor self, *, Tensor(a!) out, int b) -> Tensor(a!)",
        "non-mutable argument 'b' cannot follow mutable out arguments",
    ),
    (
        "foo(int(a) x) -> Tensor",
        "alias annotations are only allowed on Tensor, Tensor? and Tensor[], "
        "not on 'int' in argument 'int(a) x'",
    ),
    (
        "foo(Tensor(a)[2] x) -> Tensor",
        "alias annotations are only allowed on Tensor, Tensor? and Tensor[], "
        "not on 'Tensor[2]' in argument 'Tensor(a)[2] x'",
    ),
    (
        "foo(Tensor(A) x) -> Tensor",
        "alias set 'A' of annotation 'A' is not a lowercase letter "
        "in argument 'Tensor(A) x'",
    ),
    (
        "foo(Tensor(a|b!) x) -> Tensor",
        "mutable alias annotation 'a|b!' must name a single alias set "
        "in argument 'Tensor(a|b!) x'",
    ),
    (
        "foo(Tensor(a x) -> Tensor",
        "unclosed alias annotation 'Tensor(a' in argument 'Tensor(a x'",
    ),
    ("foo(Tensor x, int x) -> Tensor", "duplicate argument name 'x'"),
    (
        "foo_(Tensor self) -> Tensor",
        "Inplace op foo_ must have a self argument with a mutable annotation",
    ),
    (
        "foo_(Tensor(a!) self) -> Tensor",
        "Inplace op foo_ with Tensor self must return self",
    ),
    (
        "foo_(Tensor(a!)[] self) -> Tensor(a!)[]",
        "Inplace op foo_ with non-Tensor self must have no returns",
    ),
    (
        "foo_out(Tensor self) -> Tensor",
        "operator name 'foo_out' ends with '_out', which is reserved; "
        "use an out overload name instead (e.g. 'foo.out')",
    ),
    (
        "foo.out(Tensor self, *, Tensor(a!) out) -> Tensor(b!)",
        "out argument 'out' must match return 0: annotation 'a!' != 'b!'; "
        "the i-th out argument is the i-th return",
    ),
    (
        "foo.out(Tensor self, *, Tensor(a!) out, Tensor(b!) out2) -> Tensor(a!)",
        "out operator must return its 2 out argument(s) (scratch ones excepted), "
        "not 1 value(s)",
    ),
    (
        "foo.out(Tensor self, *, Tensor(a!)[] out) -> Tensor(a!)[]",
        "out operators with non-Tensor out arguments must return nothing ('-> ()')",
    ),
    (
        "foo(Tensor(a!) self) -> (Tensor(a!), Tensor)",
        "returns must be all mutable or all immutable, got '(Tensor(a!), Tensor)'",
    ),
    (
        "foo(Tensor self) -> Tensor(a!)",
        "mutable return 'Tensor(a!)' must alias self or an out argument "
        "(out arguments are keyword-only: put them after '*')",
    ),
    (
        "foo(Tensor self, Tensor(a!) x) -> Tensor(a!)",
        "mutable positional argument 'x' must not be returned",
    ),
    (
        "foo(Tensor(a!) x, Tensor self) -> ()",
        "mutable argument 'x' cannot come before self",
    ),
    (
        "foo.functional_out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
        "overload name 'functional_out' contains 'functional', which is reserved "
        "for functional variants; foo.functional_out is out",
    ),
    (
        "foo.out(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, "
        "Device? device=None, bool? pin_memory=None, Tensor(a!) out) -> Tensor(a!)",
        "tensor options arguments (dtype, layout, device, pin_memory) are only "
        "allowed on functional operators; foo.out is out",
    ),
    ("foo.(Tensor self) -> Tensor", "empty overload name in 'foo.'"),
    (
        "foo.a.b(Tensor self) -> Tensor",
        "overload name 'a.b' is not made of letters, digits and '_'",
    ),
    ("(Tensor self) -> Tensor", "operator name is empty"),
    ("fo-o(Tensor self) -> Tensor", "operator name 'fo-o' is not an identifier"),
    (
        "__ifoo__(Tensor self) -> Tensor",
        "unexpected dunder method starting with 'i': __ifoo__",
    ),
    (
        "foo_functional_(Tensor(a!) self) -> Tensor(a!)",
        "functional overload 'foo_functional' cannot be a dunder method or in-place",
    ),
    ("foo(Tensor self) -> ", "missing returns after ' -> '; write '()' for none"),
    ("foo(Tensor self) -> (Tensor a, Tensor a)", "duplicate return name 'a'"),
    (
        "foo(Tensor self) -> (Tensor a, Tensor b",
        "unbalanced parentheses in returns '(Tensor a, Tensor b'",
    ),
    ("foo(Tensor  self) -> Tensor", "unexpected spaces in argument 'Tensor  self'"),
    ('foo(str x="abc) -> Tensor', "unterminated string in arguments 'str x=\"abc'"),
    ("foo(int x=a b) -> Tensor", "malformed default 'a b' in argument 'int x=a b'"),
    (
        "foo(Tensor self) -> Tensor x=1",
        "return name 'x=1' is not an identifier in return 'Tensor x=1'",
    ),
    ("foo(? x) -> Tensor", "type '?' has no base type in argument '? x'"),
    ("foo(int] x) -> Tensor", "unbalanced ']' in arguments 'int] x'"),
    ("foo(int[2 x) -> Tensor", "unbalanced '[' in arguments 'int[2 x'"),
    (
        "foo(__torch__.torch.classes.a-b x) -> Tensor",
        "invalid custom class name 'a-b' in argument '__torch__.torch.classes.a-b x'",
    ),
]


@pytest.mark.parametrize("text, message", MALFORMED)
def test_malformed(text: str, message: str) -> None:
    with pytest.raises(CodegenError) as caught:
        parse_schema(text)
    assert str(caught.value) == message


def test_not_a_string() -> None:
    with pytest.raises(CodegenError, match="a schema is a string, not NoneType"):
        parse_schema(None)


@pytest.mark.parametrize(
    "parse, text, message",
    [
        (
            Type.parse,
            "int[0]",
            "list size '0' of type 'int[0]' is not a positive integer",
        ),
        (Type.parse, "Tensor]", "unbalanced ']' in type 'Tensor]'"),
        (
            Annotation.parse,
            "a|B",
            "alias set 'B' of annotation 'a|B' is not a lowercase letter",
        ),
        (Return.parse, "Tensor ", "unexpected spaces in return 'Tensor '"),
        (OperatorName.parse, "::add", "empty namespace in operator name '::add'"),
    ],
)
def test_sub_parsers_reject(parse: Any, text: str, message: str) -> None:
    with pytest.raises(CodegenError) as caught:
        parse(text)
    assert str(caught.value) == message


# ----------------------------------------------------------------- property-based tests


def _parses_or_rejects(text: str) -> None:
    """The closed-world property: a round trip or a CodegenError, nothing else."""
    try:
        schema = parse_schema(text)
    except CodegenError as error:
        assert str(error)
        return
    assert isinstance(schema, FunctionSchema)
    assert str(schema) == text


_PIECES = list("()[]?!*|,=.-_ '\"aTx019") + [
    ", ",
    " -> ",
    "*, ",
    "Tensor",
    "int",
    "(a!)",
    "(a -> *)",
    "[]",
    "[2]",
    "?",
    "self",
    "=None",
    "_",
    ".out",
]


@st.composite
def _mutated_schemas(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(ROUND_TRIP))
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        operation = draw(st.sampled_from(["delete", "insert", "swap", "drop_token"]))
        index = draw(st.integers(min_value=0, max_value=max(len(text) - 1, 0)))
        if operation == "delete":
            text = text[:index] + text[index + 1 :]
        elif operation == "insert":
            text = text[:index] + draw(st.sampled_from(_PIECES)) + text[index:]
        elif operation == "swap" and len(text) > 1:
            other = draw(st.integers(min_value=0, max_value=len(text) - 1))
            characters = list(text)
            characters[index], characters[other] = characters[other], characters[index]
            text = "".join(characters)
        else:
            tokens = text.split(" ")
            del tokens[draw(st.integers(min_value=0, max_value=len(tokens) - 1))]
            text = " ".join(tokens)
    return text


_SCHEMA_TEXT = st.lists(st.sampled_from(_PIECES), max_size=16).map("".join)


@settings(max_examples=200, deadline=None)
@given(_mutated_schemas())
def test_mutated_schemas_round_trip_or_raise(text: str) -> None:
    _parses_or_rejects(text)


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.text(max_size=60), _SCHEMA_TEXT))
def test_random_text_round_trips_or_raises(text: str) -> None:
    _parses_or_rejects(text)


@settings(max_examples=200, deadline=None)
@given(_SCHEMA_TEXT, _SCHEMA_TEXT)
def test_random_arguments_and_returns_round_trip_or_raise(
    arguments: str, returns: str
) -> None:
    _parses_or_rejects(f"foo({arguments}) -> Tensor")
    _parses_or_rejects(f"foo(Tensor self) -> {returns}")
    _parses_or_rejects(f"foo(Tensor self, {arguments}) -> ({returns}, Tensor b)")


@settings(max_examples=200, deadline=None)
@given(
    st.one_of(
        _SCHEMA_TEXT,
        st.sampled_from(["None", "True", "[0,1]", "'a'", '"\\N"', "00", "Mean"]),
    ),
    st.sampled_from(["int", "int?", "int[2]", "int[]?", "float", "Scalar", "str"]),
)
def test_default_to_python_gives_python_or_raises(default: str, type_text: str) -> None:
    try:
        expression = default_to_python(default, Type.parse(type_text))
    except CodegenError:
        return
    eval(expression, {"__builtins__": {"float": float}})


_TYPES = st.sampled_from(
    [
        "Tensor",
        "Tensor?",
        "Tensor[]",
        "Tensor?[]",
        "int",
        "int[2]",
        "int[]?",
        "SymInt[3]",
        "float",
        "bool[4]",
        "Scalar?",
        "ScalarType",
        "str",
        "__torch__.torch.classes.ns.Obj",
    ]
)


@settings(max_examples=200, deadline=None)
@given(
    st.from_regex(r"[a-z][a-z0-9_]{0,8}[a-z0-9]", fullmatch=True),
    st.sampled_from(["", ".Tensor", ".out2", ".int_Scalar"]),
    st.lists(st.tuples(_TYPES, st.booleans()), max_size=6),
    st.integers(min_value=-1, max_value=6),
    st.lists(_TYPES, max_size=4),
)
def test_generated_functional_schemas_round_trip(
    base: str,
    overload: str,
    arguments: list[tuple[str, bool]],
    star: int,
    returns: list[str],
) -> None:
    pieces = [
        f"{type_text} arg{index}" + ("=None" if optional else "")
        for index, (type_text, optional) in enumerate(arguments)
        for type_text in [
            f"{type_text}?" if optional and not type_text.endswith("?") else type_text
        ]
    ]
    if 0 <= star < len(pieces):
        # before '*', arguments without a default come first
        pieces[:star] = sorted(pieces[:star], key=lambda piece: "=" in piece)
        pieces.insert(star, "*")
    else:
        pieces.sort(key=lambda piece: "=" in piece)
    if len(returns) == 1:
        returns_text = returns[0]
    else:
        returns_text = "(" + ", ".join(returns) + ")"
    text = f"{base}{overload}({', '.join(pieces)}) -> {returns_text}"
    try:
        schema = parse_schema(text)
    except CodegenError as error:
        # the rules a random name can break
        assert base.endswith("_out") or keyword.iskeyword(base), str(error)
        return
    assert str(schema) == text
    assert schema.kind() is SchemaKind.functional
