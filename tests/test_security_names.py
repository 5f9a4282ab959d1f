"""Names from the YAML never meet the generated code's own names.

Every Python keyword, every builtin and every name the generator uses for itself (found
by gradgen.codegen.names from a probe package) is tried as an operator name, an argument
name and a return name. Each is either refused with a CodegenError that gives the
file:line of the entry and names the name, or generates a package that imports and
computes the right values, gradients and tangents (checked by hand-derived formulas),
while operators of every shape in the same package still work. Also: the schema rules
PyTorch's parser enforces (keywords, default ranges, default order), the bounds on types
and list sizes, and a check that the probe finds every name the committed package's
functions use.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import importlib.util
import keyword
import re
import sys
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import gradgen
from gradgen.autograd import forward_ad
from gradgen.codegen import CodegenError, CodegenErrors, generate, parse_schema
from gradgen.codegen.load import load
from gradgen.codegen.names import CONDITIONAL, generated_names, names_in_source
from gradgen.codegen.schema import MAX_LIST_SIZE, TORCH_KEYWORDS

ROOT = Path(__file__).resolve().parent.parent


def _candidates() -> list[str]:
    names = generated_names()
    found = set().union(
        *names.module_level.values(),
        *names.in_functions.values(),
        *names.free.values(),
    )
    public_builtins = {n for n in dir(builtins) if not n.startswith("__")}
    return sorted(
        set(keyword.kwlist)
        | set(keyword.softkwlist)
        | public_builtins
        | found
        | {"self", "self_p", "self_t", "result", "result0", "grads", "numpy_x"}
        # names PyTorch's own schemas use
        | {"values", "indices", "output", "value", "out", "dtype", "input", "other"}
    )


CANDIDATES = _candidates()


def _errors(native: str, derivatives: str, directory: Path) -> list[CodegenError]:
    (directory / "native_functions.yaml").write_text(native)
    (directory / "derivatives.yaml").write_text(derivatives)
    try:
        load(directory / "native_functions.yaml", directory / "derivatives.yaml")
    except CodegenErrors as many:
        return list(many.errors)
    except CodegenError as one:
        return [one]
    return []


def _split(
    entries: list[tuple[str, str, str]], directory: Path
) -> tuple[list[str], dict[str, CodegenError]]:
    """(accepted names, {refused name: its error}) for entries (name, native, derivative);
    each entry's error is found by the line it is reported at."""
    native_lines: dict[int, str] = {}
    derivative_lines: dict[int, str] = {}
    native, derivatives = [], []
    line_n = line_d = 1
    for name, native_entry, derivative_entry in entries:
        native_lines[line_n] = name
        native.append(native_entry)
        line_n += native_entry.count("\n") + 1
        if derivative_entry:
            derivative_lines[line_d] = name
            derivatives.append(derivative_entry)
            line_d += derivative_entry.count("\n") + 1
    errors = _errors("\n".join(native), "\n".join(derivatives), directory)
    refused: dict[str, CodegenError] = {}
    for error in errors:
        assert error.location is not None, str(error)
        lines = (
            native_lines
            if error.location.file == "native_functions.yaml"
            else derivative_lines
        )
        # the entry the line is in: the last one starting at or before it
        start = max(line for line in lines if line <= error.location.line)
        refused.setdefault(lines[start], error)
    accepted = [name for name, _, _ in entries if name not in refused]
    return accepted, refused


def _assert_refusals_name_the_name(refused: dict[str, CodegenError]) -> None:
    for name, error in refused.items():
        text = str(error)
        assert re.match(r"(native_functions|derivatives)\.yaml:\d+: ", text), text
        assert name in text, text
        assert "Traceback" not in text and "bug in the generator" not in text, text


@pytest.fixture()
def package_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Generates a package from (native, derivatives) text and imports it."""
    loaded: list[str] = []

    def make(native: str, derivatives: str, name: str) -> ModuleType:
        (tmp_path / "native_functions.yaml").write_text(native)
        (tmp_path / "derivatives.yaml").write_text(derivatives)
        generate(
            tmp_path / "native_functions.yaml",
            tmp_path / "derivatives.yaml",
            tmp_path / name,
        )
        monkeypatch.syspath_prepend(str(tmp_path))
        loaded.append(name)
        return importlib.import_module(name)

    yield make
    for package in loaded:
        for module in [
            m for m in sys.modules if m == package or m.startswith(package + ".")
        ]:
            del sys.modules[module]


# Every accepted name generates and runs in one package per position; CI's fast run
# takes every 8th, and the names the assertions below list.
SCOPES = [
    pytest.param("sample", id="sample"),
    pytest.param("all", id="all", marks=pytest.mark.slow),
]


def _run_set(accepted: list[str], scope: str, keep: list[str]) -> list[str]:
    if scope == "all":
        return accepted
    return [n for i, n in enumerate(accepted) if i % 8 == 0 or n in keep]


def leaf(values: list[float]) -> gradgen.Tensor:
    return gradgen.tensor(values, dtype=gradgen.float64, requires_grad=True)


# -- operator names ----------------------------------------------------------------------

# Operators of every shape, beside the candidates: a name that hid a builtin or a helper
# another operator's generated code uses would break one of these.
WITNESS_NATIVE = """\
- func: wit_cat(Tensor[] tensors, int dim=0) -> Tensor
  variants: function
  numpy: np.concatenate(tensors, axis=dim)
  type_promotion: tensors

- func: wit_mul(Tensor self, Tensor other) -> Tensor
  variants: function, method
  numpy: self * other
  type_promotion: self, other

- func: wit_mul_(Tensor(a!) self, Tensor other) -> Tensor(a!)
  variants: method

- func: wit_dim(Tensor self) -> int
  variants: function

- func: wit_pair(Tensor self) -> (Tensor first, Tensor second)
  variants: function
  numpy: self, self * 2

- func: wit_chunks(Tensor(a -> *) self, int sections) -> Tensor(a)[]
  variants: function
  numpy: np.split(self, sections)
""".replace(
    "- func: wit_dim(Tensor self) -> int\n  variants: function\n",
    "- func: wit_dim(Tensor self) -> int\n  variants: function\n  numpy: self.ndim\n",
)
WITNESS_DERIVATIVES = """\
- name: wit_cat(Tensor[] tensors, int dim=0) -> Tensor
  tensors: cat_tensors_backward(grad, to_args_sizes_symint(tensors), to_args_scalartypes(tensors), dim)
  result: auto_linear

- name: wit_mul(Tensor self, Tensor other) -> Tensor
  self: grad * other
  other: grad * self
  result: self_t * other_p + other_t * self_p

- name: wit_pair(Tensor self) -> (Tensor first, Tensor second)
  self: grads[0] + grads[1] * 2
"""


def _check_witnesses(package: ModuleType) -> None:
    x, y = leaf([1.0, 2.0]), leaf([3.0, -1.0])
    package.wit_cat([x, y]).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0] and y.grad.tolist() == [1.0, 1.0]
    x, y = leaf([1.0, 2.0]), leaf([3.0, -1.0])
    package.wit_mul(x, y).sum().backward()
    assert x.grad.tolist() == [3.0, -1.0] and y.grad.tolist() == [1.0, 2.0]
    z = gradgen.tensor([1.0, 2.0], dtype=gradgen.float64)
    package.tensor_methods.METHODS["wit_mul_"](z, gradgen.tensor([2.0, 2.0]))
    assert z.tolist() == [2.0, 4.0]
    assert package.wit_dim(z) == 1 and type(package.wit_dim(z)) is int
    x = leaf([1.0, 2.0])
    pair = package.wit_pair(x)
    assert pair.first.tolist() == [1.0, 2.0] and pair.second.tolist() == [2.0, 4.0]
    (pair.first.sum() + pair.second.sum()).backward()
    assert x.grad.tolist() == [3.0, 3.0]
    assert [c.tolist() for c in package.wit_chunks(z, 2)] == [[2.0], [4.0]]
    with forward_ad.dual_level():
        primal = gradgen.tensor([1.0, 2.0], dtype=gradgen.float64)
        dual = forward_ad.make_dual(
            primal, gradgen.tensor([1.0, 0.5], dtype=gradgen.float64)
        )
        tangent = forward_ad.unpack_dual(package.wit_cat([dual, dual])).tangent
        assert tangent.tolist() == [1.0, 0.5, 1.0, 0.5]
        other = gradgen.tensor([3.0, 4.0], dtype=gradgen.float64)
        tangent = forward_ad.unpack_dual(package.wit_mul(dual, other)).tangent
        assert tangent.tolist() == [3.0, 2.0]


def _operator_entries(names: list[str]) -> list[tuple[str, str, str]]:
    entries = []
    for name in names:
        schema = f"{name}(Tensor self) -> Tensor"
        entries.append(
            (
                name,
                f"- func: {schema}\n  variants: function, method\n  numpy: self * 2\n",
                f"- name: {schema}\n  self: grad * 2\n  result: auto_linear\n",
            )
        )
    return entries


@pytest.mark.parametrize("scope", SCOPES)
def test_every_candidate_operator_name_is_refused_or_works(
    tmp_path: Path, package_in: Any, scope: str
) -> None:
    accepted, refused = _split(_operator_entries(CANDIDATES), tmp_path)
    _assert_refusals_name_the_name(refused)
    # The examples, and every name another operator's code reads, are refused.
    for name in [
        "redispatch",
        "functions",
        "operators",
        "set_history",
        "Node",
        "None",
        "True",
        "len",
        "zip",
        "any",
        "tuple",
        "composites",
        "tensor_argument",
    ]:
        assert name in refused, name
    assert "keyword" in str(refused["None"]) and "PyTorch" in str(refused["None"])
    # ... while PyTorch's names that shadow unused builtins still generate.
    for name in ["abs", "max", "min", "sum", "pow", "round", "slice", "all", "input"]:
        assert name in accepted, name
    accepted = _run_set(accepted, scope, ["abs", "max", "sum", "all", "input"])
    native = "\n".join(n for _, n, _ in _operator_entries(accepted))
    derivatives = "\n".join(d for _, _, d in _operator_entries(accepted))
    package = package_in(
        WITNESS_NATIVE + "\n" + native,
        WITNESS_DERIVATIVES + "\n" + derivatives,
        "opnames",
    )
    _check_witnesses(package)
    for name in accepted:
        name = parse_schema(f"{name}(Tensor self) -> Tensor").name.name.base  # __x__: x
        x = leaf([1.0, -2.0])
        out = getattr(package.ops, name)(x)
        assert out.tolist() == [2.0, -4.0], name
        out.sum().backward()
        assert x.grad.tolist() == [2.0, 2.0], name
        method = package.tensor_methods.METHODS[name]
        assert method(gradgen.tensor([1.5])).tolist() == [3.0], name


# -- argument names ----------------------------------------------------------------------


def _argument_entries(names: list[str]) -> list[tuple[str, str, str]]:
    entries = []
    for index, name in enumerate(names):
        if name == "self":
            continue
        schema = f"arg{index}(Tensor self, Tensor {name}) -> Tensor"
        if keyword.iskeyword(name):
            # a keyword cannot be written in an expression; the argument is still saved
            # by nothing and gets a gradient of its own
            native = f"- func: {schema}\n  numpy: self * 2\n"
            derivative = f"- name: {schema}\n  self: grad * 2\n  {name}: grad * self\n"
            if name in ("True", "False", "None"):  # not a string as a YAML key
                derivative = f"- name: {schema}\n  self: grad * 2\n"
        else:
            native = f"- func: {schema}\n  numpy: self * {name}\n  type_promotion: self, {name}\n"
            derivative = (
                f"- name: {schema}\n  self: grad * {name}\n  {name}: grad * self\n"
            )
            if name != "result":  # (a second key 'result' would be a YAML error)
                derivative += f"  result: self_t * {name}_p + {name}_t * self_p\n"
        entries.append((name, native, derivative))
    return entries


@pytest.mark.parametrize("scope", SCOPES)
def test_every_candidate_argument_name_is_refused_or_works(
    tmp_path: Path, package_in: Any, scope: str
) -> None:
    entries = _argument_entries(CANDIDATES)
    accepted, refused = _split(entries, tmp_path)
    _assert_refusals_name_the_name(refused)
    for name in [
        "grad",
        "any_grad_defined",
        "ks",
        "needs_input_grad",
        "input",
        "grads",
        "grad_fn",
        "result",
        "operators",
        "np",
        "len",
        "def",
        "None",
        "common_dtype",
        "tangents",
        "original_self",
    ]:
        assert name in refused, name
    assert "reserved" in str(refused["grad"]) and "functions.py" in str(refused["grad"])
    # PyTorch's own argument names, and keywords PyTorch accepts (`Tensor from`)
    for name in ["from", "lambda", "max", "min", "output", "value", "out", "dtype"]:
        assert name in accepted, name
    index = {name: i for i, name in enumerate(CANDIDATES)}
    run = _run_set(accepted, scope, ["from", "lambda", "max", "output", "value", "out"])
    chosen = [(n, nat, der) for n, nat, der in entries if n in run]
    package = package_in(
        "\n".join(nat for _, nat, _ in chosen),
        "\n".join(der for _, _, der in chosen),
        "argnames",
    )
    for name, _, _ in chosen:
        function = getattr(package, f"arg{index[name]}")
        x, y = leaf([1.0, 2.0]), leaf([3.0, -1.0])
        out = function(x, y)
        written = not keyword.iskeyword(name)
        assert out.tolist() == ([3.0, -2.0] if written else [2.0, 4.0]), name
        out.backward(gradgen.tensor([1.0, 10.0], dtype=gradgen.float64))
        assert x.grad.tolist() == ([3.0, -10.0] if written else [2.0, 20.0]), name
        assert y.grad.tolist() == [1.0, 20.0], name
        if written:
            with forward_ad.dual_level():
                dual = forward_ad.make_dual(
                    gradgen.tensor([1.0, 2.0], dtype=gradgen.float64),
                    gradgen.tensor([1.0, 1.0], dtype=gradgen.float64),
                )
                other = gradgen.tensor([3.0, -1.0], dtype=gradgen.float64)
                tangent = forward_ad.unpack_dual(function(dual, other)).tangent
                assert tangent.tolist() == [3.0, -1.0], name


def test_conditional_names_are_generated_names() -> None:
    found = set().union(*generated_names().in_functions.values())
    assert set(CONDITIONAL) <= found


def test_conditional_names_are_refused_only_where_they_collide(tmp_path: Path) -> None:
    cases = [
        (
            "foo(Tensor self, Tensor input) -> Tensor",
            "self",
            "'input' is reserved next to 'self'",
        ),
        ("foo(Tensor input, Tensor other) -> Tensor", "input", None),
        (
            "foo(Tensor self, int output) -> Tensor[]",
            "np.split(self, output)",
            "returns a list",
        ),
        ("foo(Tensor self, int value) -> int", "value", "returns a non-Tensor"),
        ("foo(Tensor self, int value) -> Tensor", "self", None),
        ("foo_(Tensor(a!) self, Tensor out) -> Tensor(a!)", "self", "in-place"),
    ]
    for schema, numpy, message in cases:
        errors = _errors(f"- func: {schema}\n  numpy: {numpy}\n", "", tmp_path)
        if message is None:
            assert errors == [], schema
        else:
            assert len(errors) == 1 and message in str(errors[0]), (schema, errors)
            assert str(errors[0]).startswith("native_functions.yaml:1: foo"), errors


def test_arguments_that_meet_after_renaming_a_keyword_are_refused(
    tmp_path: Path,
) -> None:
    errors = _errors(
        "- func: foo(Tensor self, int from, int from_) -> Tensor\n  numpy: self\n",
        "",
        tmp_path,
    )
    assert len(errors) == 1
    assert "'from' and 'from_' are both 'from_'" in str(errors[0])


def test_two_operators_with_one_generated_name_are_refused(tmp_path: Path) -> None:
    native = (
        "- func: foo.bar(Tensor self) -> Tensor\n  numpy: self\n\n"
        "- func: foo_bar(Tensor self) -> Tensor\n  numpy: self\n"
    )
    errors = _errors(native, "", tmp_path)
    assert len(errors) == 1
    assert str(errors[0]).startswith("native_functions.yaml:4: foo_bar: ")
    assert "'foo.bar' and 'foo_bar' are both 'foo_bar'" in str(errors[0])
    assert "native_functions.yaml:1" in str(errors[0])


# -- return names ------------------------------------------------------------------------


def _return_entries(names: list[str]) -> list[tuple[str, str, str]]:
    return [
        (
            name,
            f"- func: ret{index}(Tensor self) -> (Tensor {name}, Tensor zz_other)\n"
            "  numpy: self, self * 2\n",
            "",
        )
        for index, name in enumerate(names)
        if name != "zz_other"
    ]


@pytest.mark.parametrize("scope", SCOPES)
def test_every_candidate_return_name_is_refused_or_works(
    tmp_path: Path, package_in: Any, scope: str
) -> None:
    entries = _return_entries(CANDIDATES)
    accepted, refused = _split(entries, tmp_path)
    _assert_refusals_name_the_name(refused)
    for name in [
        "def",
        "from",
        "None",
        "_a" if "_a" in refused else "def",
        "wrap_result",
        "np",
        "ks",
        "common_dtype",
    ]:
        assert name in refused, name
    assert "starts with '_'" in str(
        _errors(
            "- func: foo(Tensor self) -> (Tensor _a, Tensor b)\n  numpy: self, self\n",
            "",
            tmp_path,
        )[0]
    )
    for name in ["values", "indices", "output", "max", "min"]:
        assert name in accepted, name
    index = {name: i for i, name in enumerate(CANDIDATES)}
    run = _run_set(accepted, scope, ["values", "indices", "output"])
    chosen = [e for e in entries if e[0] in run]
    package = package_in("\n".join(n for _, n, _ in chosen), "", "retnames")
    for name, _, _ in chosen:
        result = getattr(package, f"ret{index[name]}")(gradgen.tensor([1.0, 2.0]))
        assert getattr(result, name).tolist() == [1.0, 2.0], name
        assert result.zz_other.tolist() == [2.0, 4.0], name


# -- schema rules PyTorch's parser enforces ---------------------------------------------

# What torch._C.parse_schema (torch 2.13) answers, recorded: a Python keyword it reads
# as a token, never a name (`Tensor from` is one of PyTorch's own arguments).
TORCH_REFUSED_KEYWORDS = [
    "False",
    "None",
    "True",
    "and",
    "as",
    "assert",
    "break",
    "class",
    "continue",
    "def",
    "del",
    "elif",
    "else",
    "for",
    "global",
    "if",
    "import",
    "in",
    "is",
    "not",
    "or",
    "pass",
    "raise",
    "return",
    "while",
    "with",
]
# schema -> the start of PyTorch's error, or None where PyTorch accepts it
TORCH_ANSWERS = {
    "foo(Tensor self, int x=1, int y) -> Tensor": "!seen_default_arg || arg.kwarg_only()",
    "foo(Tensor self, *, int x=1, int y) -> Tensor": None,
    "foo(Tensor self, int[2][] x) -> Tensor": "expected ident but found '['",
    "foo(Tensor self, int[][2] x) -> Tensor": None,
    "foo(Tensor self, int x=9223372036854775807) -> Tensor": None,
    "foo(Tensor self, int x=-9223372036854775808) -> Tensor": None,
    "foo(Tensor self, int x=9223372036854775808) -> Tensor": "stoll",
    "foo(Tensor self, int x=" + "9" * 4400 + ") -> Tensor": "stoll",
    "foo(Tensor self, float x=1e999) -> Tensor": "stod",
    "foo(Tensor self, float x=1e-400) -> Tensor": "stod",
    "foo(Tensor self, float x=1e-300) -> Tensor": None,
    "foo(Tensor self, int[2][3] x) -> Tensor": "expected ident but found '['",
}


def _torch_answer(schema: str) -> str | None:
    torch = pytest.importorskip("torch")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            torch._C.parse_schema(schema)
        except Exception as error:  # RuntimeError, IndexError (stoll)
            return str(error)
    return None


def test_recorded_pytorch_answers_match_live_pytorch() -> None:
    pytest.importorskip("torch")
    refused = [
        k
        for k in keyword.kwlist
        if _torch_answer(f"foo(Tensor self, int {k}) -> Tensor")
    ]
    assert refused == TORCH_REFUSED_KEYWORDS
    for schema, answer in TORCH_ANSWERS.items():
        live = _torch_answer(schema)
        if answer is None:
            assert live is None, schema
        else:
            assert live is not None and answer in live, (schema[:60], live)


def test_keywords_are_refused_as_pytorch_refuses_them() -> None:
    assert sorted(TORCH_KEYWORDS) == sorted(TORCH_REFUSED_KEYWORDS)
    for word in TORCH_REFUSED_KEYWORDS:
        for schema in (
            f"{word}(Tensor self) -> Tensor",
            f"foo.{word}(Tensor self) -> Tensor",
            f"foo(Tensor self, int {word}) -> Tensor",
            f"foo(Tensor self) -> (Tensor {word}, Tensor b)",
        ):
            with pytest.raises(
                CodegenError, match=f"expected ident but found '{word}'"
            ):
                parse_schema(schema)
    for word in sorted(set(keyword.kwlist) - set(TORCH_REFUSED_KEYWORDS)):
        assert str(
            parse_schema(f"foo(Tensor self, int {word}) -> Tensor")
        )  # as PyTorch
        # but generated code calls an operator's function by its name
        with pytest.raises(CodegenError, match="Python keyword"):
            parse_schema(f"{word}(Tensor self) -> Tensor")


def test_schemas_pytorch_refuses_are_refused() -> None:
    for schema, answer in TORCH_ANSWERS.items():
        if answer is None:
            assert str(parse_schema(schema)) == schema
        else:
            with pytest.raises(CodegenError) as raised:
                parse_schema(schema)
            assert len(str(raised.value)) < 400  # a long default is quoted in part


def test_bool_default_maybe_is_a_located_error(tmp_path: Path) -> None:
    answer = "invalid numeric default value"  # PyTorch's (torch 2.13)
    schema = "foo(Tensor self, bool x=maybe) -> Tensor"
    if importlib.util.find_spec("torch") is not None:
        assert answer in str(_torch_answer(schema))
    errors = _errors(
        "- func: foo(Tensor self, bool x=maybe) -> Tensor\n  numpy: self\n",
        "",
        tmp_path,
    )
    assert str(errors[0]).startswith(
        "native_functions.yaml:1: foo: unrecognized default 'maybe'"
    )


# -- bounds ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "schema, message",
    [
        ("foo(Tensor self, int" + "?" * 100_000 + " x) -> Tensor", "nests more than 4"),
        ("foo(Tensor self, int?? x) -> Tensor", "optional of an optional type 'int??'"),
        (
            "foo(Tensor self, Tensor" + "[]" * 100_000 + " x) -> Tensor",
            "nests more than 4",
        ),
        (
            "foo(Tensor self, int" + "[]?" * 50_000 + " x) -> Tensor",
            "nests more than 4",
        ),
        ("foo(Tensor self, int[999999999] x=0) -> Tensor", "larger than 64"),
        (f"foo(Tensor self, int[{MAX_LIST_SIZE + 1}] x=0) -> Tensor", "larger than 64"),
        (
            "foo(Tensor self, int[] x=[" + ",".join(["1"] * 100) + "]) -> Tensor",
            "more than 64",
        ),
    ],
)
def test_types_and_list_sizes_are_bounded(schema: str, message: str) -> None:
    started = time.perf_counter()
    with pytest.raises(CodegenError, match=re.escape(message)) as raised:
        parse_schema(schema)
    assert time.perf_counter() - started < 1.0
    assert len(str(raised.value)) < 400


def test_bounds_admit_what_pytorch_schemas_need() -> None:
    for schema in (
        "foo(Tensor self, SymInt[6] padding=0) -> Tensor",
        f"foo(Tensor self, int[{MAX_LIST_SIZE}] x=0) -> Tensor",
        "foo(Tensor self, Tensor?[]? x, int[1]? y) -> Tensor",
        "foo(Tensor self, int[][] x) -> Tensor",
    ):
        assert str(parse_schema(schema)) == schema


# -- the probe finds every name the committed package uses ------------------------------


def test_the_probe_finds_every_name_of_the_committed_package() -> None:
    """Every name in the committed package's functions either comes from a YAML name
    (contains an argument, return or operator name) or is one the probe found."""
    from gradgen.codegen.load import load as load_model

    model = load_model(ROOT / "native_functions.yaml", ROOT / "derivatives.yaml")
    yaml_names = set()
    for function in model.native_functions:
        yaml_names |= {a.name for a in function.arguments}
        yaml_names |= set(function.output_names)
        yaml_names |= {function.identifier, function.python_name}
    names = generated_names()
    missing = {}
    for path in sorted((ROOT / "generated").glob("*.py")):
        _, inside, free = names_in_source(path.read_text())
        inside |= free
        unknown = {
            n
            for n in inside
            if n not in names.in_file(path.name) | names.in_functions[path.name]
            and not any(
                n.startswith(f"{y}_") or n.endswith(f"_{y}") or n == y
                for y in yaml_names
            )
            # one per operator: Backward classes, their functions, overload tables
            and not re.fullmatch(
                r"\w+Backward\d+|\w+_apply|\w+_arrays|_\w+_overloads", n
            )
            and not hasattr(builtins, n)
        }
        if unknown:
            missing[path.name] = sorted(unknown)
    assert missing == {}
    # and the builtins the committed package calls are found too
    for path in sorted((ROOT / "generated").glob("*.py")):
        _, _, free = names_in_source(path.read_text())
        called = {n for n in free if hasattr(builtins, n) and n not in yaml_names}
        assert called <= names.in_file(path.name), (
            path.name,
            called - names.in_file(path.name),
        )


def test_the_probe_is_parsed_once_and_quickly() -> None:
    generated_names.cache_clear()
    started = time.perf_counter()
    first = generated_names()
    assert time.perf_counter() - started < 10
    assert generated_names() is first
    assert {"grad", "any_grad_defined", "needs_input_grad"} <= first.in_functions[
        "functions.py"
    ]
    assert {"ks", "grad_fn", "result"} <= first.in_functions["variable_type.py"]
    assert "redispatch" in first.module_level["inplace_or_view.py"]
    assert ast.parse("x")  # (ast is what reads them)


def test_backward_function_names_are_refused_only_with_formulas(tmp_path: Path) -> None:
    for schema, name in (
        ("foo(Tensor self) -> (Tensor grads, Tensor b)", "return name 'grads'"),
        ("foo(Tensor self, Tensor grad) -> Tensor", "argument name 'grad'"),
        (
            "foo(Tensor self, Tensor needs_input_grad) -> Tensor",
            "argument name 'needs_input_grad'",
        ),
    ):
        returns = schema.count("Tensor b") + 1
        native = f"- func: {schema}\n  numpy: {', '.join(['self'] * returns)}\n"
        assert _errors(native, "", tmp_path) == []  # no Backward function: no collision
        derivative = (
            f"- name: {schema}\n  self: grads[0] + grads[1]\n"
            if returns == 2
            else (f"- name: {schema}\n  self: grad\n")
        )
        errors = _errors(native, derivative, tmp_path)
        assert len(errors) == 1, errors
        assert str(errors[0]).startswith(
            f"derivatives.yaml:1: foo: {name} is reserved"
        ), errors
