"""Generated code is built from data, never from text (issue 11, items 1, 2 and 4).

Hostile text (quotes of every kind, triple quotes, backslashes, newlines, carriage
returns, jinja2 syntax, ``#``, U+2028, NUL, other control characters) is fed into every
place a template prints text: a string default (the schema literal in operators.py, the
docstrings of every module, the signatures, the overload tables and their comments), a
backward formula and a `result:` formula (the docstrings of the Backward classes and the
JVP functions), and the names of the three input files (every module's header). The
generated package is imported and run in a fresh interpreter: no payload runs (a canary
file never appears and no generated module's code names `__import__`), and every text
comes back exactly: the defaults the functions and the kernels receive, the schema the
dispatcher keeps, the docstrings.

PyTorch's own double-quoted defaults (`pad`, `linalg_eigh`, `pad_sequence`) generate and
give the right value at runtime.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from gradgen.codegen import CodegenError, generate
from gradgen.codegen.literals import comment, docstring, identifier, python_literal

ROOT = Path(__file__).resolve().parent.parent

# A payload that runs when printed raw into a literal of the matching quote.
RUN = '__import__("os").system("touch CANARY")'
PAYLOADS = [
    f'"+{RUN}*""+"',
    f"'+{RUN.replace(chr(34), chr(39))}*''+'",
    f'"""+{RUN}*"""',
    f"'''+{RUN.replace(chr(34), chr(39))}*'''",
    f'"""\n{RUN}\n"""',  # a line of its own after closing a docstring
    f"\n{RUN}  #",  # out of a comment
    f"\r{RUN}  #",  # a lone CR ends a line for Python's tokenizer
    f"\u2028{RUN}",
    "tail\\",  # a backslash before the closing quotes
    '\\"""',
    'end"',
    "end'",
    "{{ 7 * 7 }} {% raw %} {# c #}",
    "# not a comment",
    "nul\x00 tab\t ff\x0c nel\x85 nbsp\xa0 bell\x07 del\x7f",
    "unicode é ✓ \U0001f600",
]


def spell(text: str) -> str:
    """A Python literal for `text` holding its characters raw where Python allows it
    (so the raw text reaches the YAML), escaped where it does not."""
    for literal in (f"'{text}'", f'"{text}"', f"'''{text}'''", f'"""{text}"""'):
        try:
            if "\x00" not in literal and ast.literal_eval(literal) == text:
                return literal
        except (SyntaxError, ValueError):
            pass
    return repr(text)


def schema_default(text: str) -> str:
    """A schema string default for `text`: one line (the grammar's), raw where it can be."""
    single = spell(text)
    if single[:3] in ("'''", '"""') or "\n" in single or "\r" in single:
        return repr(text)
    return single


def yaml_string(text: str) -> str:
    """A YAML double-quoted scalar (JSON's escapes are YAML's; \\u2028 must be escaped)."""
    return json.dumps(text, ensure_ascii=True).replace("\\ud83d\\ude00", "\\U0001F600")


def write_pair(
    directory: Path, payloads: list[str]
) -> tuple[list[str], list[str], list[str]]:
    """Two operators per payload (`fooN` and the overloads `barN.one`/`barN.two`) with the
    payload as a string default, in a kernel, a backward formula and a `result:` formula.
    Returns the schemas, backward formulas and forward formulas, in payload order."""
    native, derivatives, schemas, backward, forward = [], [], [], [], []
    for index, payload in enumerate(payloads):
        default = schema_default(payload)
        literal = spell(payload)
        kernel = f"self + (1 if x == {literal} else 2)"
        grad = f"grad * (3 if x == {literal} else 4)"
        jvp = f"self_t * (5 if x == {literal} else 6)"
        for schema in (
            f"foo{index}(Tensor self, str x={default}) -> Tensor",
            f"bar{index}.one(Tensor self, str x={default}) -> Tensor",
            f"bar{index}.two(Tensor self, Tensor other, str x={default}) -> Tensor",
        ):
            native.append(
                f"- func: {yaml_string(schema)}\n  variants: function, method\n"
                f"  numpy: {yaml_string(kernel)}\n"
            )
            derivatives.append(
                f"- name: {yaml_string(schema)}\n  self: {yaml_string(grad)}\n"
                f"  result: {yaml_string(jvp)}\n"
                + ("  other: non_differentiable\n" if "other" in schema else "")
            )
        schemas.append(f"foo{index}(Tensor self, str x={default}) -> Tensor")
        backward.append(grad)
        forward.append(jvp)
    (directory / "nf.yaml").write_text("\n".join(native), encoding="utf-8")
    (directory / "d.yaml").write_text("\n".join(derivatives), encoding="utf-8")
    return schemas, backward, forward


def assert_no_code_from_text(package: Path) -> None:
    """Every generated module parses, and none of its code (outside string constants)
    names `__import__`, `system` or `CANARY`: the payloads stayed text."""
    for path in sorted(package.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            assert not (
                isinstance(node, ast.Name) and node.id in ("__import__", "CANARY")
            ), path
            assert not (isinstance(node, ast.Attribute) and node.attr == "system"), path


def run_python(directory: Path, script: str) -> object:
    """Run `script` in a fresh interpreter in `directory`; it prints one JSON value."""
    completed = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        cwd=directory,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stderr
    assert not (directory / "CANARY").exists(), "a payload ran"
    return json.loads(completed.stdout.strip().splitlines()[-1])


# -- the filters ------------------------------------------------------------------------


@pytest.mark.parametrize("text", PAYLOADS)
def test_the_filters_give_back_the_text(text: str) -> None:
    assert ast.literal_eval(python_literal(text)) == text
    one = docstring(text)
    assert ast.literal_eval(one) == text
    assert (
        "\n" not in one
        and "\r" not in one
        and "\u2028" not in one
        and "\x00" not in one
    )
    several = docstring(["first", text, "", text], indent=4)
    assert ast.literal_eval(several) == f"first\n    {text}\n\n    {text}\n    "
    assert several.count("\n") == 4  # one source line per line of text
    line = comment(text)
    statements = ast.parse(f"x = 1  # {line}\n").body
    assert len(statements) == 1  # the comment stayed a comment
    assert line.isprintable()


def test_readable_text_is_printed_unchanged() -> None:
    schema = 'pad(Tensor self, SymInt[] pad, str mode="constant", float? value=None) -> Tensor'
    assert docstring(schema) == f'"""{schema}"""'
    assert comment(schema) == schema
    assert docstring(["Backward of x.", "", "self: grad"], 4) == (
        '"""Backward of x.\n\n    self: grad\n    """'
    )


@pytest.mark.parametrize(
    "name", ["", "a b", "class", "None", 'x"', "a\nb", "a.b", "1x", "x\u2028"]
)
def test_identifier_refuses_what_is_not_a_name(name: str) -> None:
    with pytest.raises(CodegenError, match="as a Python name"):
        identifier(name)


def test_python_literal_refuses_what_is_not_text() -> None:
    with pytest.raises(CodegenError, match="generator bug"):
        python_literal(3)


# Everything a template prints without a filter: Python code that ir.py (or stubs.py)
# builds from checked names, `ast.unparse` of checked trees and repr() literals, an int,
# or a macro's output (_stub_def.j2, itself checked here).
CODE_FIELDS = {
    "binding.call",
    "binding.checked",  # argument names (schema identifiers) joined by commas
    "binding.checks",  # repr() of a tuple of (name, kind, position)
    "binding.target",
    "binding.arguments",
    "binding.signature",
    "expression",
    "field.annotation",
    "first",  # kernels.py.j2: set through the identifier filter
    "number",  # variable_type.py.j2's fused dunders: set through the identifier filter
    "formula.expression",
    "formula_blocks(node.array_form.formulas) | indent(4, first=True)",  # the macro, indented
    "formula_blocks(node.formulas)",
    "result_tensor(op)",  # a macro of filtered fields (variable_type.py.j2)
    "fast_body(op)",  # likewise
    "formula.indices[0]",
    "index",
    "jvp.call_arguments",
    "jvp.expression",
    "jvp.output",
    "jvp.parameters",
    "line",
    "loop.index0",
    "node.array_form.needs_input_grad",
    "node.array_form.unpacked_tuple",
    "node.array_form.saved_arguments",  # array_of(LOCAL) of the same identifiers
    '(["None"] * node.num_inputs) | join(", ")',  # a constant, an int of times
    "node.num_inputs",
    "node.parameters",
    "op.arguments",
    "op.autograd.differentiable_inputs",
    "op.autograd.history_function",
    "op.autograd.node_class",
    "op.autograd.node_constructor",
    "op.forward_ad.condition",
    "op.inline_kernel",  # ast.unparse of the checked numpy expression's tree
    "op.parameters",
    "op.promoted",
    "output",
    "overload.signature_target",
    "param",
    "param.annotation",
    "save.fast_value",
    "save.guard",
    "save.target",
    "save.value",
    "second",  # kernels.py.j2: set through the identifier filter
    "signature.returns",
    "size",
    "source.integer_to_float",
    "stub_def(function, False)",
    "stub_def(method, True)",
    "type",
    # variable_type.py.j2's macros (their output is checked here) and their indent
    "histories(op, '        ')",
    "histories(op, '    ')",
    "input_saves(op, '        ')",
    "input_saves(op, '    ', fast=True)",
    "output_saves(op, '        ')",
    "output_saves(op, '    ')",
    "pad",
    "tensor",  # variable_type.py.j2: set through the identifier filter
}
FILTERED = re.compile(r"\| (py|docstring|comment|identifier)(\(\d+\))?$")


def test_templates_print_text_only_through_the_filters() -> None:
    templates = sorted((ROOT / "templates").glob("*.j2"))
    assert len(templates) == 15  # + kernel_sources.py.j2 and batching.py.j2
    seen = set()
    for path in templates:
        for expression in re.findall(r"{{(.*?)}}", path.read_text(), flags=re.S):
            expression = expression.strip()
            if FILTERED.search(expression) or expression.endswith(
                'map("identifier") | join(", ")'
            ):
                continue
            assert (
                expression in CODE_FIELDS
            ), f"{path.name}: {{{{ {expression} }}}} is unfiltered"
            seen.add(expression)
    assert seen == CODE_FIELDS  # the list stays exact


# -- hostile text through every template --------------------------------------------------


def test_hostile_defaults_and_formulas_stay_text(tmp_path: Path) -> None:
    schemas, backward, forward = write_pair(tmp_path, PAYLOADS)
    generate(tmp_path / "nf.yaml", tmp_path / "d.yaml", tmp_path / "hostile")
    assert_no_code_from_text(tmp_path / "hostile")
    report = run_python(
        tmp_path,
        f"""
        import inspect, json
        import gradgen
        from gradgen.autograd import forward_ad
        import hostile
        out = []
        for i in range({len(PAYLOADS)}):
            foo, bar = getattr(hostile, f"foo{{i}}"), getattr(hostile, f"bar{{i}}")
            x = gradgen.tensor([1.0, 2.0], requires_grad=True)
            y = foo(x)
            y.sum().backward()
            with forward_ad.dual_level():
                dual = forward_ad.make_dual(gradgen.tensor([1.0]), gradgen.tensor([1.0]))
                tangent = forward_ad.unpack_dual(foo(dual)).tangent.tolist()
            node = type(y.grad_fn)
            out.append(dict(
                function=inspect.signature(foo).parameters["x"].default,
                method=inspect.signature(
                    getattr(hostile.tensor_methods, f"foo{{i}}")).parameters["x"].default,
                values=y.tolist(),
                grad=x.grad.tolist(),
                tangent=tangent,
                overload_one=bar(gradgen.tensor([1.0])).tolist(),
                overload_two=bar(gradgen.tensor([1.0]), gradgen.tensor([0.0])).tolist(),
                overload_method=hostile.tensor_methods.METHODS[f"bar{{i}}"](
                    gradgen.tensor([1.0])).tolist(),
                schema=getattr(hostile.operators, f"foo{{i}}").schema,
                node_doc=node.__doc__,
                jvp_doc=getattr(hostile.functions, f"foo{{i}}_jvp").__doc__,
                kernel_doc=getattr(hostile.kernels, f"numpy_foo{{i}}").__doc__,
                function_doc=foo.__doc__,
            ))
        print(json.dumps(out))
        """,
    )
    assert isinstance(report, list) and len(report) == len(PAYLOADS)
    for payload, schema, grad, jvp, got in zip(
        PAYLOADS, schemas, backward, forward, report
    ):
        # the defaults, as the bindings and the kernels see them (1 means x == payload)
        assert got["function"] == payload
        assert got["method"] == payload
        assert got["values"] == [2.0, 3.0]
        assert got["overload_one"] == [2.0] and got["overload_two"] == [2.0]
        assert got["overload_method"] == [2.0]
        assert got["grad"] == [3.0, 3.0]  # the backward formula saw the default too
        assert got["tangent"] == [5.0]
        # the texts, exactly
        assert got["schema"] == schema
        assert f"Backward of ``{schema}``." in got["node_doc"]
        assert f"self: {grad}" in got["node_doc"]
        assert f"``result: {jvp}``" in got["jvp_doc"]
        assert got["kernel_doc"].strip() == schema
        assert got["function_doc"].strip() == f"``{schema}``"


FILE_NAMES = [
    f'nf"""+{RUN}*""+""".yaml',
    f"d'''+{RUN}*''\n+'''\r\u2028\\.yaml",
    f"k{{{{x}}}}#\"'\\ {RUN}.py",
]

KERNELS = """\
import numpy as np

__all__ = ["double"]


def double(x: np.ndarray) -> np.ndarray:
    return x * 2
"""


def test_hostile_file_names_stay_text(tmp_path: Path) -> None:
    native, derivatives, kernels = (tmp_path / name for name in FILE_NAMES)
    native.write_text("- func: twice(Tensor self) -> Tensor\n  numpy: double(self)\n")
    derivatives.write_text("- name: twice(Tensor self) -> Tensor\n  self: grad * 2\n")
    kernels.write_text(KERNELS)
    generate(native, derivatives, tmp_path / "named", kernels=kernels)
    assert_no_code_from_text(tmp_path / "named")
    for path in (tmp_path / "named").glob("*.py"):
        if path.name != "user_kernels.py":
            assert path.read_text().startswith('"""@generated by gradgen.codegen from ')
    docs = run_python(
        tmp_path,
        """
        import json
        import gradgen
        import named
        x = gradgen.tensor([1.0, 2.0], requires_grad=True)
        y = named.twice(x)
        y.sum().backward()
        modules = [named, named.operators, named.kernels, named.functions, named.ops,
                   named.variable_type, named.tensor_methods, named.inplace_or_view]
        print(json.dumps([y.tolist(), x.grad.tolist(), [m.__doc__ for m in modules]]))
        """,
    )
    assert isinstance(docs, list)
    values, grad, headers = docs
    assert values == [2.0, 4.0] and grad == [2.0, 2.0]
    sources = f"{FILE_NAMES[0]}, {FILE_NAMES[1]} and {FILE_NAMES[2]}"
    for header in headers:
        assert header.startswith(
            f"@generated by gradgen.codegen from {sources} -- do not edit."
        )


@pytest.mark.parametrize(
    "schema",
    [
        'fo"o(Tensor self) -> Tensor',
        "foo(Tensor se'lf) -> Tensor",
        'foo.o"v(Tensor self) -> Tensor',
        "foo(Tensor self) -> Tensor re\nsult",
        "foo(Tensor self, str x='a'+__import__('os').system('touch CANARY')) -> Tensor",
        "foo(Tensor self, str x='a\x00') -> Tensor",
        "foo(Tensor self, str x='a\nb') -> Tensor",
    ],
)
def test_names_and_malformed_defaults_are_refused(tmp_path: Path, schema: str) -> None:
    (tmp_path / "nf.yaml").write_text(
        f"- func: {yaml_string(schema)}\n  numpy: self + 0\n", encoding="utf-8"
    )
    (tmp_path / "d.yaml").write_text("[]\n")
    with pytest.raises(CodegenError):
        generate(tmp_path / "nf.yaml", tmp_path / "d.yaml", tmp_path / "out")
    assert not (tmp_path / "out").exists()
    assert not (tmp_path / "CANARY").exists()


# -- PyTorch's double-quoted defaults ----------------------------------------------------

# The schemas as PyTorch's native_functions.yaml spells them (torch 2.x).
PYTORCH_NATIVE = """\
- func: pad(Tensor self, SymInt[] pad, str mode="constant", float? value=None) -> Tensor
  variants: function
  numpy: 'np.pad(self, [(pad[0], pad[1])], mode=mode, constant_values=0.0 if value is None else value)'

- func: linalg_eigh(Tensor self, str UPLO="L") -> (Tensor eigenvalues, Tensor eigenvectors)
  variants: function
  numpy: np.linalg.eigh(self, UPLO=UPLO)

- func: pad_sequence(Tensor[] sequences, bool batch_first=False, float padding_value=0.0, str padding_side="right") -> Tensor
  variants: function
  numpy: 'np.stack(sequences) if padding_side == "right" else -np.stack(sequences)'
"""


def test_pytorch_double_quoted_defaults_generate_and_work(tmp_path: Path) -> None:
    (tmp_path / "nf.yaml").write_text(PYTORCH_NATIVE)
    (tmp_path / "d.yaml").write_text("[]\n")
    generate(tmp_path / "nf.yaml", tmp_path / "d.yaml", tmp_path / "torchlike")
    text = (tmp_path / "torchlike" / "operators.py").read_text()
    assert 'str mode="constant"' in text and 'str UPLO="L"' in text
    got = run_python(
        tmp_path,
        """
        import inspect, json
        import gradgen
        import torchlike
        a = gradgen.tensor([[2.0, 1.0], [5.0, 3.0]])
        defaults = [
            inspect.signature(torchlike.pad).parameters["mode"].default,
            inspect.signature(torchlike.linalg_eigh).parameters["UPLO"].default,
            inspect.signature(torchlike.pad_sequence).parameters["padding_side"].default,
        ]
        padded = torchlike.pad(gradgen.tensor([1.0, 2.0]), [1, 2]).tolist()
        lower = torchlike.linalg_eigh(a).eigenvalues.tolist()
        upper = torchlike.linalg_eigh(a, "U").eigenvalues.tolist()
        sequences = [gradgen.tensor([1.0, 2.0]), gradgen.tensor([3.0, 4.0])]
        right = torchlike.pad_sequence(sequences).tolist()
        left = torchlike.pad_sequence(sequences, padding_side="left").tolist()
        print(json.dumps([defaults, padded, lower, upper, right, left]))
        """,
    )
    assert isinstance(got, list)
    defaults, padded, lower, upper, right, left = got
    assert defaults == ["constant", "L", "right"]
    assert padded == [0.0, 1.0, 2.0, 0.0, 0.0]
    # eigh reads one triangle: [[2, 5], [5, 3]] from "L", [[2, 1], [1, 3]] from "U"
    # eigenvalues (5 +- sqrt(1 + 4 * 25)) / 2 and (5 +- sqrt(1 + 4)) / 2
    np.testing.assert_allclose(
        lower, [(5 - 101**0.5) / 2, (5 + 101**0.5) / 2], rtol=1e-6
    )
    np.testing.assert_allclose(upper, [(5 - 5**0.5) / 2, (5 + 5**0.5) / 2], rtol=1e-6)
    # (the kernel tells the sides apart by the sign: equal lengths need no padding)
    assert right == [[1.0, 2.0], [3.0, 4.0]]
    assert left == [[-1.0, -2.0], [-3.0, -4.0]]
