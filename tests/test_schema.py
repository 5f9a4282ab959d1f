"""Tests of codegen/schema.py, the FunctionSchema model and parser.

What is checked: the round trip ``str(parse_schema(s)) == s`` on hand-written schemas
and on every ``func:`` of the native_functions.yaml shipped in the installed torch
wheel; the parsed structure (kinds, views, return names, argument groups, types); the
exact message of malformed schemas; and, with hypothesis, that mutated or random text
either round-trips or raises CodegenError, never anything else.
"""

from __future__ import annotations

import importlib.util
import keyword
import os
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gradgen.codegen.errors import CodegenError
from gradgen.codegen.schema import (
    Annotation,
    Argument,
    BaseOperatorName,
    BaseTy,
    BaseType,
    CustomClassType,
    FunctionSchema,
    ListType,
    OperatorName,
    OptionalType,
    Return,
    SchemaKind,
    Type,
    default_to_python,
    parse_schema,
)

SEEDS = [
    "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    "sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    "mul.Tensor(Tensor self, Tensor other) -> Tensor",
    "pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor",
    "permute(Tensor(a) self, int[] dims) -> Tensor(a)",
]

# Schemas of torch 2.13's native_functions.yaml unless marked "synthetic" (written to
# reach a type or form the file does not use).
ROUND_TRIP = SEEDS + [
    # out, in-place and dunder variants
    "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> "
    "Tensor(a!)",
    "add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
    "__and__.Scalar(Tensor self, Scalar other) -> Tensor",
    "__iand__.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
    "__ilshift__.Scalar(Tensor(a!) self, Scalar other) -> Tensor(a!)",
    "_foreach_add_.Scalar(Tensor(a!)[] self, Scalar scalar) -> ()",
    "_foreach_zero_(Tensor(a!)[] self) -> ()",
    "split_copy.Tensor_out(Tensor self, SymInt split_size, int dim=0, *, "
    "Tensor(a!)[] out) -> ()",
    "index_put_(Tensor(a!) self, Tensor?[] indices, Tensor values, "
    "bool accumulate=False) -> Tensor(a!)",
    # named and multiple returns
    "max.dim(Tensor self, int dim, bool keepdim=False) -> "
    "(Tensor values, Tensor indices)",
    "max.dim_max(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) max, "
    "Tensor(b!) max_values) -> (Tensor(a!) values, Tensor(b!) indices)",
    "_cummax_helper(Tensor self, Tensor(a!) values, Tensor(b!) indices, int dim) "
    "-> ()",
    "aminmax(Tensor self, *, int? dim=None, bool keepdim=False) -> "
    "(Tensor min, Tensor max)",
    # views and alias forms
    "view(Tensor(a) self, SymInt[] size) -> Tensor(a)",
    "split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]",
    "unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]",
    "contiguous(Tensor(a) self, *, MemoryFormat memory_format=contiguous_format) -> "
    "Tensor(a)",
    "foo(Tensor(a|b) self) -> Tensor(a|b)",  # synthetic
    "foo(Tensor self, Tensor(a!)? buffer) -> ()",  # synthetic
    # list, optional and sized types
    "index.Tensor(Tensor self, Tensor?[] indices) -> Tensor",
    "max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], "
    "int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> Tensor",
    "upsample_nearest2d.vec(Tensor input, SymInt[]? output_size, "
    "float[]? scale_factors) -> Tensor",
    "convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, "
    "SymInt[] padding, SymInt[] dilation, bool transposed, "
    "SymInt[] output_padding, SymInt groups) -> Tensor",
    "var.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, "
    "bool keepdim=False) -> Tensor",
    "foo(DimVector shape, DeviceIndex index, Device? device, Layout layout, "
    "GraphModule module, bool[3] mask, SymInt[6] pad, float?[] values) -> ()",
    # synthetic
    "set_.source_Storage(Tensor(a!) self, Storage source) -> Tensor(a!)",
    "record_stream(Tensor(a!) self, Stream s) -> ()",
    # tensor options and self not first
    "arange.start(Scalar start, Scalar end, *, ScalarType? dtype=None, "
    "Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
    "empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, "
    "Layout? layout=None, Device? device=None, bool? pin_memory=None, "
    "MemoryFormat? memory_format=None) -> Tensor",
    "where.self(Tensor condition, Tensor self, Tensor other) -> Tensor",
    # every default form
    "normal.Tensor_float(Tensor mean, float std=1, *, Generator? generator=None) -> "
    "Tensor",
    "layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, "
    "Tensor? bias=None, float eps=1e-05, bool cudnn_enable=True) -> Tensor",
    "mse_loss(Tensor self, Tensor target, int reduction=Mean) -> Tensor",
    "linalg_matrix_norm.str_ord(Tensor self, str ord='fro', int[] dim=[-2,-1], "
    "bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
    "conv1d.padding(Tensor input, Tensor weight, Tensor? bias=None, "
    'SymInt[1] stride=1, str padding="valid", SymInt[1] dilation=1, '
    "SymInt groups=1) -> Tensor",
    "_test_string_default(Tensor dummy, str a=\"\\\"'\\\\\", str b='\"\\'\\\\') -> "
    "Tensor",
    "randint(SymInt high, SymInt[] size, *, ScalarType? dtype=long, "
    "Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
    'foo(int[] dims=[0,1], str empty="", float tiny=1e-08, int low=-100, '
    "float half=0.5) -> Tensor",  # synthetic
    # non-Tensor returns
    "is_nonzero(Tensor self) -> bool",
    "sym_size.int(Tensor self, int dim) -> SymInt",
    "result_type.Tensor(Tensor tensor, Tensor other) -> ScalarType",
    "qscheme(Tensor self) -> QScheme",
    "_local_scalar_dense(Tensor self) -> Scalar",
    "foo(Tensor self) -> (SymBool a, float b, int c, Tensor[] d)",  # synthetic
    # custom classes, namespaces, functional overloads, scratch outs (synthetic)
    "foo(__torch__.torch.classes.quantized.Conv2dPackedParamsBase packed, "
    "Tensor x) -> Tensor",
    "bar(__torch__.torch.classes.my_ns.Thing? thing) -> "
    "__torch__.torch.classes.my_ns.Thing",
    "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    "native_batch_norm_functional(Tensor input, Tensor running_mean) -> "
    "(Tensor, Tensor)",
    "foo.out(Tensor self, *, Tensor(a!) out, Tensor(b!) _scratch_buffer) -> "
    "Tensor(a!)",
]


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
