"""Tests of codegen/schema.py, the FunctionSchema model and parser.

What is checked: the round trip ``str(parse_schema(s)) == s`` on hand-written schemas
and on every ``func:`` of the native_functions.yaml shipped in the installed torch
wheel; the parsed structure (kinds, views, return names, argument groups, types); the
exact message of malformed schemas; and, with hypothesis, that mutated or random text
either round-trips or raises CodegenError, never anything else.
"""

from __future__ import annotations

import importlib.util
import os
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from gradgen.codegen.errors import CodegenError
from gradgen.codegen.schema import (
    Annotation,
    Argument,
    BaseOperatorName,
    BaseTy,
    BaseType,
    CustomClassType,
    ListType,
    OperatorName,
    OptionalType,
    Return,
    SchemaKind,
    Type,
    default_to_python,
    parse_schema,
)

from schema_examples import ROUND_TRIP, SEEDS


def _listed(name: str) -> str:
    """The schema of ROUND_TRIP whose operator is `name`."""
    (text,) = [text for text in ROUND_TRIP if text.startswith(f"{name}(")]
    return text


@pytest.mark.parametrize("text", ROUND_TRIP)
def test_round_trip(text: str) -> None:
    assert str(parse_schema(text)) == text


def test_round_trip_covers_every_base_type() -> None:
    used: set[BaseTy] = set()
    for text in ROUND_TRIP:
        schema = parse_schema(text)
        types = [a.type for a in schema.arguments.flat_all]
        types += [r.type for r in schema.returns]
        for type_ in types:
            used.update(ty for ty in BaseTy if type_.is_base_ty_like(ty))
    assert used == set(BaseTy)


# ------------------------------------------------------------------ parsed structure


def test_add_tensor_structure() -> None:
    schema = parse_schema(SEEDS[0])
    assert str(schema.name) == "add.Tensor"
    assert schema.name.name == BaseOperatorName("add", False, False)
    assert schema.name.overload_name == "Tensor"
    assert schema.name.unambiguous_name == "add_Tensor"
    assert schema.kind() is SchemaKind.functional
    assert not schema.is_view_op
    assert schema.return_names() == ["result"]
    arguments = schema.arguments
    assert [a.name for a in arguments.positional] == ["self", "other"]
    assert [a.name for a in arguments.kwarg_only] == ["alpha"]
    assert arguments.out == ()
    assert arguments.self_arg is arguments.positional[0]
    assert [a.name for a in arguments.tensor_args] == ["self", "other"]
    alpha = arguments.kwarg_only[0]
    assert alpha == Argument("alpha", BaseType(BaseTy.Scalar), "1", None)
    assert not alpha.is_write
    assert schema.returns == (Return(None, BaseType(BaseTy.Tensor), None),)


def test_inplace_and_out_structure() -> None:
    inplace = parse_schema(
        "add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)"
    )
    assert inplace.kind() is SchemaKind.inplace
    assert inplace.name.name.inplace and inplace.name.name.base == "add"
    assert str(inplace.name) == "add_.Tensor"
    assert inplace.name.unambiguous_name == "add__Tensor"
    assert inplace.return_names() == ["self"]
    assert inplace.arguments.self_arg is not None
    assert inplace.arguments.self_arg.is_write
    assert inplace.returns[0].is_write

    out = parse_schema(_listed("max.dim_max"))
    assert out.kind() is SchemaKind.out
    assert [a.name for a in out.arguments.out] == ["max", "max_values"]
    assert out.return_names() == ["max", "max_values"]
    assert [r.name for r in out.returns] == ["values", "indices"]
    assert out.arguments.out[1].annotation == Annotation(("b",), True, ())
    assert [a.name for a in out.arguments.tensor_args] == ["self", "max", "max_values"]


def test_dunder_names() -> None:
    name = OperatorName.parse("__iand__.Tensor")
    assert name.name == BaseOperatorName("and", True, True)
    assert name.unambiguous_name == "__iand___Tensor"
    assert OperatorName.parse("__and__").name == BaseOperatorName("and", False, True)
    assert str(OperatorName.parse("permute")) == "permute"
    assert OperatorName.parse("permute").unambiguous_name == "permute"


def test_views() -> None:
    permute = parse_schema(SEEDS[4])
    assert permute.is_view_op
    assert permute.kind() is SchemaKind.functional
    self_arg = permute.arguments.self_arg
    assert self_arg is not None
    assert self_arg.annotation == Annotation(("a",), False, ())
    assert permute.arguments.positional[1].type == ListType(BaseType(BaseTy.int), None)

    split = parse_schema(
        "split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> "
        "Tensor(a)[]"
    )
    assert split.is_view_op
    assert split.arguments.positional[0].annotation == Annotation(("a",), False, ("*",))
    assert split.returns[0].type == ListType(BaseType(BaseTy.Tensor), None)
    assert split.returns[0].annotation == Annotation(("a",), False, ())

    assert not parse_schema(_listed("add_.Tensor")).is_view_op


def test_return_names() -> None:
    def names(text: str) -> list[str]:
        return parse_schema(text).return_names()

    assert names("foo(Tensor self) -> (Tensor, Tensor)") == ["result0", "result1"]
    assert names(_listed("max.dim")) == ["values", "indices"]
    assert names("foo(Tensor self, Tensor values) -> (Tensor values, Tensor b)") == [
        "values_return",
        "b",
    ]
    assert names("foo(Tensor self) -> ()") == []


def test_argument_groups() -> None:
    where = parse_schema(
        "where.self(Tensor condition, Tensor self, Tensor other) -> Tensor"
    )
    arguments = where.arguments
    assert [a.name for a in arguments.pre_self_positional] == ["condition"]
    assert arguments.self_arg is not None and arguments.self_arg.name == "self"
    assert [a.name for a in arguments.post_self_positional] == ["other"]
    assert arguments.tensor_options is None

    empty = parse_schema(_listed("empty.memory_format"))
    options = empty.arguments.tensor_options
    assert options is not None
    assert [a.name for a in options.all()] == [
        "dtype",
        "layout",
        "device",
        "pin_memory",
    ]
    assert [a.name for a in empty.arguments.kwarg_only][-1] == "memory_format"
    assert empty.arguments.self_arg is None
    assert empty.arguments.tensor_args == ()
    assert [a.name for a in empty.arguments.flat_all] == [
        "size",
        "dtype",
        "layout",
        "device",
        "pin_memory",
        "memory_format",
    ]


def test_other_kinds() -> None:
    assert parse_schema(_listed("_cummax_helper")).kind() is SchemaKind.mutable
    scratch = parse_schema(_listed("foo.out"))
    assert scratch.kind() is SchemaKind.scratch
    assert scratch.return_names() == ["out"]
    functional = parse_schema(_listed("native_batch_norm_functional"))
    assert functional.name.name == BaseOperatorName(
        "native_batch_norm", False, False, True
    )
    assert functional.kind() is SchemaKind.functional
    namespaced = parse_schema(_listed("aten::add.Tensor")).name
    assert namespaced.name.namespace == "aten" and namespaced.name.base == "add"
    assert namespaced.unambiguous_name == "aten_add_Tensor"


def test_types() -> None:
    tensor = BaseType(BaseTy.Tensor)
    optional_tensor_list = Type.parse("Tensor?[]")
    assert optional_tensor_list == ListType(OptionalType(tensor), None)
    assert optional_tensor_list.is_tensor_like()
    assert optional_tensor_list.is_nullable()
    assert optional_tensor_list.is_list_like() == optional_tensor_list

    symint_list = Type.parse("SymInt[]?")
    assert symint_list == OptionalType(ListType(BaseType(BaseTy.SymInt), None))
    assert symint_list.is_nullable()
    assert symint_list.is_list_like() == ListType(BaseType(BaseTy.SymInt), None)
    assert symint_list.is_base_ty_like(BaseTy.SymInt)
    assert not symint_list.is_tensor_like()

    sized = Type.parse("int[2]")
    assert sized == ListType(BaseType(BaseTy.int), 2)
    assert not sized.is_nullable()
    assert str(Type.parse("bool[3]")) == "bool[3]"

    assert tensor.is_tensor_like() and not tensor.is_nullable()
    assert tensor.is_list_like() is None
    assert Type.parse("Tensor?").is_tensor_like()
    assert Type.parse("Tensor[]").is_tensor_like()

    custom = Type.parse("__torch__.torch.classes.quantized.LinearPackedParamsBase")
    assert custom == CustomClassType("quantized.LinearPackedParamsBase")
    assert not custom.is_tensor_like() and custom.is_list_like() is None


@pytest.mark.parametrize(
    "text, expected",
    [
        ("a", Annotation(("a",), False, ())),
        ("a!", Annotation(("a",), True, ())),
        ("a -> *", Annotation(("a",), False, ("*",))),
        ("a|b", Annotation(("a", "b"), False, ())),
        ("a -> b|c", Annotation(("a",), False, ("b", "c"))),
    ],
)
def test_annotation_forms(text: str, expected: Annotation) -> None:
    assert Annotation.parse(text) == expected
    assert str(expected) == text


def test_list_annotations() -> None:
    argument = Argument.parse("Tensor(a!)[] self")
    assert argument.type == ListType(BaseType(BaseTy.Tensor), None)
    assert argument.is_write
    optional = Argument.parse("Tensor(b!)? grad_input")
    assert optional.type == OptionalType(BaseType(BaseTy.Tensor))
    assert str(optional) == "Tensor(b!)? grad_input"
    unnamed = Return.parse("Tensor(a)[]")
    assert unnamed.name is None and not unnamed.is_write


def test_strings_with_separators_round_trip() -> None:
    # torchgen's plain ", " split refuses these; the text is still unambiguous.
    text = "foo(Tensor self, str sep=\", \", str eq='a=b') -> Tensor"
    schema = parse_schema(text)
    assert str(schema) == text
    assert [a.default for a in schema.arguments.flat_all] == [None, '", "', "'a=b'"]


def test_constructors_check_their_rules() -> None:
    tensor = BaseType(BaseTy.Tensor)
    with pytest.raises(CodegenError, match="argument name 'x-y' is not an identifier"):
        Argument("x-y", tensor, None, None)
    with pytest.raises(CodegenError, match=re.escape("not on 'int'")):
        Argument("x", BaseType(BaseTy.int), None, Annotation(("a",), False, ()))
    with pytest.raises(CodegenError, match="list size 0 is not a positive integer"):
        ListType(tensor, 0)
    with pytest.raises(CodegenError, match="ends with '_out'"):
        BaseOperatorName("foo_out", False, False)


# ------------------------------------------------------ PyTorch's native_functions.yaml


def _native_functions_path() -> Path | None:
    spec = importlib.util.find_spec("torchgen")
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).parent / "packaged/ATen/native/native_functions.yaml"
    return path if path.is_file() else None


@pytest.fixture(scope="module")
def native_functions() -> list[str]:
    """Every ``func:`` of the installed torch's native_functions.yaml."""
    path = _native_functions_path()
    if path is None:
        reason = "torch is not installed: no native_functions.yaml to check against"
        if os.environ.get("GRADGEN_REQUIRE_TORCH") == "1":
            pytest.fail(f"{reason} (GRADGEN_REQUIRE_TORCH=1)")
        pytest.skip(reason)
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    with path.open(encoding="utf-8") as file:
        entries = yaml.load(file, Loader=loader)
    return [entry["func"] for entry in entries]


def test_every_pytorch_schema_round_trips(native_functions: list[str]) -> None:
    failures: list[str] = []
    for func in native_functions:
        try:
            if str(parse_schema(func)) != func:
                failures.append(f"{func}: round trip")
        except CodegenError as error:
            failures.append(f"{func}: {error}")
    parsed = len(native_functions) - len(failures)
    assert len(native_functions) > 2000
    assert failures == [], f"{parsed}/{len(native_functions)} round-trip"


def test_pytorch_schemas_agree_with_torchgen(native_functions: list[str]) -> None:
    """Kind, groups, views and return names as torchgen's own model says."""
    torchgen_model = pytest.importorskip("torchgen.model")
    torchgen_cpp = pytest.importorskip("torchgen.api.cpp")
    for func in native_functions:
        ours = parse_schema(func)
        theirs: Any = torchgen_model.FunctionSchema.parse(func)
        assert ours.kind().name == theirs.kind().name, func
        ours_args, their_args = ours.arguments, theirs.arguments
        assert [a.name for a in ours_args.flat_all] == [
            a.name for a in their_args.flat_all
        ]
        assert [a.name for a in ours_args.out] == [a.name for a in their_args.out]
        assert [a.name for a in ours_args.pre_self_positional] == [
            a.name for a in their_args.pre_self_positional
        ]
        assert (ours_args.self_arg is None) == (their_args.self_arg is None)
        assert (ours_args.tensor_options is None) == (their_args.tensor_options is None)
        assert ours.name.unambiguous_name == theirs.name.unambiguous_name()
        their_names = torchgen_cpp.return_names(SimpleNamespace(func=theirs))
        assert ours.return_names() == list(their_names), func
        non_mutating_view = any(
            r.annotation is not None and not r.annotation.is_write
            for r in theirs.returns
        )
        wildcard_view = any(
            a.annotation is not None and "*" in a.annotation.alias_set_after
            for a in their_args.flat_all
        )
        assert ours.is_view_op == (non_mutating_view or wildcard_view), func


def test_every_pytorch_default_converts(native_functions: list[str]) -> None:
    for func in native_functions:
        for argument in parse_schema(func).arguments.flat_all:
            if argument.default is None:
                continue
            expression = default_to_python(argument.default, argument.type)
            value = eval(expression, {"__builtins__": {"float": float}})
            if argument.type.is_list_like() and value is not None:
                assert isinstance(value, tuple), (func, argument.name)
