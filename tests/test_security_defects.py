"""Three generator defects the fuzzer found (tests/fuzz/test_codegen_fuzz.py), fixed.

1. `result: auto_element_wise` in an entry without a backward formula raised ValueError
   deep in ir.py. PyTorch derives such a JVP from the backward formula of the single
   differentiable input, so without one it is PyTorch's error at load, located at the
   `result:` line; a backward formula whose derived JVP would not be valid (it reads
   grad_input_mask, retain_variables) is refused there too.
2. `grad_input_mask` in a one-input formula generated a node raising NameError in
   backward. It is now defined for every formula that reads it, `(needs_input_grad[i],)`;
   every other name the formula grammar admits is defined in the generated function
   (checked below, name by name, by computing gradients).
3. A formula of ~2,500 terms raised RecursionError in ir.py. Every expression of the
   YAML (backward and forward formulas, `numpy:` kernels) is bounded where it is parsed,
   in expressions.parse_expression: at most 10,000 characters and 100 levels of syntax
   tree, so nothing downstream (checks, rewriters, ast.unparse, black) recurses too deep.
   An expression at the bound generates, is formatted and computes.
"""

from __future__ import annotations

import ast
import importlib
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

import gradgen
from gradgen.autograd import forward_ad as fwAD
from gradgen.codegen import CodegenError, generate
from gradgen.codegen.expressions import (
    MAX_EXPRESSION_DEPTH,
    MAX_EXPRESSION_LENGTH,
    expression_depth,
    parse_expression,
)
from gradgen.codegen.backward_formulas import _BackwardRewriter
from gradgen.codegen.formulas import FormulaNames, AnalysedFormula

# PyTorch's text (tools/autograd/load_derivatives.py, postprocess_forward_derivatives;
# torchgen's wheel does not ship tools/autograd, so it cannot be checked live).
PYTORCH_ELEMENT_WISE_WITHOUT_BACKWARD = (
    "Derivative definition of {name} in derivatives.yaml defines the forward definition "
    "of gradient as element_wise but it does not defines the gradient formula for its "
    "argument which is required."
)


def _write(directory: Path, native: str, derivatives: str) -> tuple[Path, Path]:
    directory.mkdir(parents=True, exist_ok=True)
    paths = (directory / "native_functions.yaml", directory / "derivatives.yaml")
    paths[0].write_text(native)
    paths[1].write_text(derivatives)
    return paths


def _refused(tmp_path: Path, native: str, derivatives: str) -> list[CodegenError]:
    """The errors of a run that must fail, each a CodegenError with a file:line."""
    native_path, derivatives_path = _write(tmp_path, native, derivatives)
    with pytest.raises(CodegenError) as raised:
        generate(native_path, derivatives_path, tmp_path / "refused", cache=False)
    errors: list[CodegenError] = getattr(raised.value, "errors", None) or [raised.value]
    for error in errors:
        assert error.location is not None and error.location.line > 0, str(error)
        assert len(str(error)) < 1000, str(error)[:300]
    assert not (tmp_path / "refused").exists()
    return errors


def _one_error_at(errors: list[CodegenError], file: str, line: int) -> CodegenError:
    assert len(errors) == 1, [str(e) for e in errors]
    (error,) = errors
    assert error.location is not None
    assert Path(error.location.file).name == file and error.location.line == line, str(
        error
    )
    return error


# -- 1. auto_element_wise needs the backward formula it is derived from ----------------


@pytest.mark.parametrize(
    "native, derivatives, line",
    [
        (  # the fuzzer's reproducer
            "- func: fz(Tensor self) -> Tensor\n  numpy: self * 2\n",
            "- name: fz(Tensor self) -> Tensor\n  result: auto_element_wise\n",
            2,
        ),
        (  # one differentiable input of two; the entry after another one
            "- func: other_op(Tensor self) -> Tensor\n  numpy: self * 2\n"
            "- func: fz(Tensor self, Tensor mask) -> Tensor\n  numpy: self * mask\n",
            "- name: other_op(Tensor self) -> Tensor\n  self: grad * 2\n\n"
            "- name: fz(Tensor self, Tensor mask) -> Tensor\n"
            "  mask: non_differentiable\n"
            "  result: auto_element_wise\n",
            6,
        ),
    ],
)
def test_auto_element_wise_without_a_backward_formula_is_pytorchs_error_at_its_line(
    tmp_path: Path, native: str, derivatives: str, line: int
) -> None:
    error = _one_error_at(
        _refused(tmp_path, native, derivatives), "derivatives.yaml", line
    )
    assert error.operator == "fz"
    assert error.message.startswith(
        PYTORCH_ELEMENT_WISE_WITHOUT_BACKWARD.format(name="fz")
    )
    assert "derives the forward formula from that backward formula" in error.message


@pytest.mark.parametrize(
    "formula, name",
    [
        ("grad * 2 if grad_input_mask[0] else None", "grad_input_mask"),
        ("grad * 2 if retain_variables else grad", "retain_variables"),
    ],
)
def test_auto_element_wise_from_a_backward_formula_it_cannot_use_is_refused_at_its_line(
    tmp_path: Path, formula: str, name: str
) -> None:
    # The backward formula itself is valid; the JVP derived from it would read a name
    # that only a backward node has (PyTorch's generated C++ would not compile).
    errors = _refused(
        tmp_path,
        "- func: fz(Tensor self) -> Tensor\n  numpy: self * 2\n",
        f"- name: fz(Tensor self) -> Tensor\n  self: {formula}\n  result: auto_element_wise\n",
    )
    error = _one_error_at(errors, "derivatives.yaml", 3)
    assert error.message.startswith(
        "auto_element_wise derives the forward formula from the backward formula of self "
        "(self -> self_p, grad -> self_t.conj()), and unknown name "
        f"'{name}' in a forward formula"
    ), error.message


# -- 2. every name the backward grammar admits is defined where the formula runs -------

DEEP_SHAPES: dict[
    str, tuple[Callable[[int], str], Callable[[int], str], Callable[[int], str]]
] = {
    # shape: (numpy kernel, backward formula, forward formula) of depth k; each computes
    # 2 * x, its gradient 2, its tangent 2 * t, whatever the depth
    "sum": (
        lambda k: "self * 2 + 0 * (" + " + ".join(["1"] * k) + ")",
        lambda k: "grad * 2 + 0 * (" + " + ".join(["1"] * k) + ")",
        lambda k: "(self_t * 2) + 0 * (" + " + ".join(["1"] * k) + ")",
    ),
    "unary": (
        lambda k: "self * 2 + 0 * " + "-" * k + "self",
        lambda k: "grad * 2 + 0 * " + "-" * k + "grad",
        lambda k: "self_t * 2 + 0 * " + "-" * k + "self_t",
    ),
    "call": (
        lambda k: "self * 2 + 0 * " + "np.negative(" * k + "self" + ")" * k,
        lambda k: "grad * 2 + 0 * " + "neg(" * k + "grad" + ")" * k,
        lambda k: "self_t * 2 + 0 * " + "neg(" * k + "self_t" + ")" * k,
    ),
    "conditional": (
        lambda k: "self * 2 if True else " * k + "self",
        lambda k: "grad * 2 if True else " * k + "grad",
        lambda k: "self_t * 2 if True else " * k + "self_t",
    ),
    "method": (
        lambda k: "self * 2 + 0 * self" + ".copy()" * k,
        lambda k: "grad * 2 + 0 * grad" + ".neg()" * k,
        lambda k: "self_t * 2 + 0 * self_t" + ".neg()" * k,
    ),
}


def _at_the_bound(make: Callable[[int], str]) -> str:
    """`make(k)` for the largest k whose expression is MAX_EXPRESSION_DEPTH deep or less."""
    k = 1
    while expression_depth(ast.parse(make(k + 1), mode="eval")) <= MAX_EXPRESSION_DEPTH:
        k += 1
    assert expression_depth(ast.parse(make(k), mode="eval")) > MAX_EXPRESSION_DEPTH - 3
    return make(k)


NATIVE = """\
- func: mask_one(Tensor self) -> Tensor
  numpy: self * 3.0
- func: mask_two(Tensor self, Tensor other) -> Tensor
  numpy: self * 3.0 + other * 5.0
- func: mask_pair(Tensor self, Tensor other) -> Tensor
  numpy: self * 3.0 + other * 5.0
- func: grads_two(Tensor self) -> (Tensor, Tensor)
  numpy: (self * 2.0, self * 3.0)
- func: named_two(Tensor self) -> (Tensor a, Tensor b)
  numpy: (self * 2.0, self * 3.0)
- func: with_result(Tensor self) -> Tensor
  numpy: np.exp(self)
- func: retains(Tensor self) -> Tensor
  numpy: self * 1.0
- func: square(Tensor self) -> Tensor
  numpy: self * self
- func: neg(Tensor self) -> Tensor
  variants: function, method
  numpy: -self
"""

DERIVATIVES = """\
- name: mask_one(Tensor self) -> Tensor
  self: grad * 3.0 if grad_input_mask[0] else None
- name: mask_two(Tensor self, Tensor other) -> Tensor
  self: grad * (3.0 if grad_input_mask[0] else 0.0)
  other: grad * 5.0 if grad_input_mask == (True,) else None
- name: mask_pair(Tensor self, Tensor other) -> Tensor
  self, other: "(grad * 3.0 if grad_input_mask[0] else None, grad * 5.0 if grad_input_mask[1] else None)"
- name: grads_two(Tensor self) -> (Tensor, Tensor)
  self: grads[0] * 2.0 + grads[1] * 3.0
- name: named_two(Tensor self) -> (Tensor a, Tensor b)
  self: grad_a * 2.0 + grad_b * 3.0
- name: with_result(Tensor self) -> Tensor
  self: grad * result
  result: auto_element_wise
- name: retains(Tensor self) -> Tensor
  self: grad if retain_variables else grad * 2.0
- name: square(Tensor self) -> Tensor
  self: 2 * grad * self
  result: auto_element_wise
- name: neg(Tensor self) -> Tensor
  self: -grad
  result: auto_linear
"""


def _deep_entries() -> tuple[str, str]:
    native, derivatives = [], []
    for shape, (kernel, backward, forward) in DEEP_SHAPES.items():
        schema = f"deep_{shape}(Tensor self) -> Tensor"
        native.append(f"- func: {schema}\n  numpy: {_at_the_bound(kernel)}\n")
        derivatives.append(
            f"- name: {schema}\n  self: {_at_the_bound(backward)}\n"
            f"  result: {_at_the_bound(forward)}\n"
        )
    return "".join(native), "".join(derivatives)


@pytest.fixture(scope="module")
def ops(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    root = tmp_path_factory.mktemp("defects")
    deep_native, deep_derivatives = _deep_entries()
    native_path, derivatives_path = _write(
        root, NATIVE + deep_native, DERIVATIVES + deep_derivatives
    )
    generate(native_path, derivatives_path, root / "defectops", cache=False)
    sys.path.insert(0, str(root))
    try:
        yield importlib.import_module("defectops")
    finally:
        sys.path.remove(str(root))
        for name in [n for n in sys.modules if n.split(".")[0] == "defectops"]:
            del sys.modules[name]


def leaf(values: list[float], requires_grad: bool = True) -> gradgen.Tensor:
    return gradgen.tensor(values, dtype=gradgen.float64, requires_grad=requires_grad)


def test_grad_input_mask_in_a_one_input_formula_is_defined(ops: ModuleType) -> None:
    x = leaf([1.0, 2.0])
    ops.mask_one(x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 3.0])  # d(3x)/dx
    source = Path(ops.__file__).with_name("functions.py").read_text()
    assert "grad_input_mask = (needs_input_grad[0],)" in source


def test_grad_input_mask_of_one_input_formulas_is_that_inputs_need(
    ops: ModuleType,
) -> None:
    # Two one-input formulas: each mask holds its own input's need, (True,).
    x, y = leaf([1.0, 2.0]), leaf([4.0, 8.0])
    ops.mask_two(x, y).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 3.0])
    np.testing.assert_array_equal(y.grad.numpy(), [5.0, 5.0])
    # Only `other` needs a gradient: self's formula does not run, other's mask is (True,).
    x, y = leaf([1.0, 2.0], requires_grad=False), leaf([4.0, 8.0])
    (grad_y,) = gradgen.autograd.grad(ops.mask_two(x, y).sum(), (y,))
    np.testing.assert_array_equal(grad_y.numpy(), [5.0, 5.0])


@pytest.mark.parametrize("needs", [(True, True), (True, False), (False, True)])
def test_grad_input_mask_of_a_two_input_formula(
    ops: ModuleType, needs: tuple[bool, bool]
) -> None:
    x, y = leaf([1.0, 2.0], needs[0]), leaf([4.0, 8.0], needs[1])
    inputs = tuple(t for t, need in zip((x, y), needs) if need)
    grads = gradgen.autograd.grad(ops.mask_pair(x, y).sum(), inputs)
    expected = [v for v, need in zip(([3.0, 3.0], [5.0, 5.0]), needs) if need]
    assert [g.tolist() for g in grads] == expected


def test_grads_result_named_grads_and_retain_variables_are_defined(
    ops: ModuleType,
) -> None:
    x = leaf([1.0, 2.0])
    first, second = ops.grads_two(x)
    (first + second).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [5.0, 5.0])  # 2 + 3
    x = leaf([1.0, 2.0])
    a, b = ops.named_two(x)
    (a * 10.0 + b).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [23.0, 23.0])  # 10 * 2 + 3
    x = leaf([0.0, 1.0])
    ops.with_result(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp([0.0, 1.0]))
    x = leaf([1.0])
    out = ops.retains(x)
    out.backward(retain_graph=True)
    out.backward()
    assert x.grad.tolist() == [3.0]  # 1 (graph kept) + 2 (graph released)


def test_every_name_the_backward_grammar_admits_is_covered_here() -> None:
    # The names a backward formula may use besides the operator's arguments, outputs and
    # callables; each is exercised by the two tests above. A name added to the grammar
    # must be defined in the generated function and added to those tests.
    names = FormulaNames(
        helpers=frozenset(),
        functions=frozenset(),
        methods=frozenset(),
        user=frozenset(),
        user_file="",
    )
    rewriter = _BackwardRewriter({}, ("a", "b"), names, AnalysedFormula(expression=""))
    special = set(rewriter._allowed_names()) - names.callables - {"a", "b"}
    assert special == {
        "grad",
        "grads",
        "grad_input_mask",
        "retain_variables",
        "grad_a",
        "grad_b",
    }


def test_auto_element_wise_with_its_backward_formula_computes(ops: ModuleType) -> None:
    with fwAD.dual_level():
        dual = fwAD.make_dual(leaf([1.0, 3.0], False), leaf([1.0, 2.0], False))
        tangent = fwAD.unpack_dual(ops.square(dual)).tangent
        np.testing.assert_array_equal(tangent.numpy(), [2.0, 12.0])  # 2 * x * t
        dual = fwAD.make_dual(leaf([0.0, 1.0], False), leaf([1.0, 2.0], False))
        tangent = fwAD.unpack_dual(ops.with_result(dual)).tangent
        np.testing.assert_allclose(tangent.numpy(), [1.0, 2.0 * np.e])  # t * exp(x)


# -- 3. expressions are bounded where they are parsed ------------------------------------


@pytest.mark.parametrize("shape", sorted(DEEP_SHAPES))
def test_expressions_at_the_bound_generate_format_and_compute(
    ops: ModuleType, shape: str
) -> None:
    function = getattr(ops, f"deep_{shape}")
    x = leaf([1.0, 2.0])
    y = function(x)
    np.testing.assert_array_equal(y.detach().numpy(), [2.0, 4.0])
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0])
    with fwAD.dual_level():
        dual = fwAD.make_dual(leaf([1.0, 2.0], False), leaf([1.0, 3.0], False))
        tangent = fwAD.unpack_dual(function(dual)).tangent
        np.testing.assert_array_equal(tangent.numpy(), [2.0, 6.0])


TOO_DEEP = re.compile(
    r"(formula|forward formula|numpy expression) is nested ([\d,]+ levels deep|too deeply "
    rf"for Python's parser); at most {MAX_EXPRESSION_DEPTH} levels are allowed: split it up"
)
TOO_LONG = re.compile(
    rf"(formula|forward formula|numpy expression) is [\d,]+ characters long; at most "
    rf"{MAX_EXPRESSION_LENGTH:,} are allowed: split it up"
)

# (name, text of self/result/numpy: over `self`/`grad`/`self_t`, the message it gets)
HUGE: list[tuple[str, Callable[[str], str], re.Pattern[str]]] = [
    (
        "1,000 terms",
        lambda x: f"({x} * 2) + 0 * (" + " + ".join(["1"] * 1000) + ")",
        TOO_DEEP,
    ),
    (
        "2,500 terms",
        lambda x: f"({x} * 2) + 0 * (" + "+".join(["1"] * 2500) + ")",
        TOO_DEEP,
    ),
    ("unary minus 9,000 deep", lambda x: "-" * 9000 + x, TOO_DEEP),
    ("'not' 2,000 deep", lambda x: "not " * 2000 + x, TOO_DEEP),
    ("300 parentheses", lambda x: "(" * 300 + x + ")" * 300, TOO_DEEP),
    ("calls 3,000 deep", lambda x: "f(" * 3000 + x + ")" * 3000, TOO_DEEP),
    ("subscripts 3,000 deep", lambda x: x + "[0]" * 3000, TOO_DEEP),
    ("powers 900 deep", lambda x: f"{x} ** " * 900 + x, TOO_DEEP),
    ("conditionals 400 deep", lambda x: f"{x} if True else " * 400 + x, TOO_DEEP),
    ("a comparison of 3,000", lambda x: f"{x} < " * 3000 + x, TOO_LONG),
    ("12,000 characters", lambda x: f"{x} * 2 + 0 * (" + "1+" * 6000 + "1)", TOO_LONG),
]


@pytest.mark.parametrize("kind", ["numpy", "backward", "forward"])
@pytest.mark.parametrize("name, make, message", HUGE, ids=[h[0] for h in HUGE])
def test_a_huge_expression_of_any_kind_is_a_located_error(
    tmp_path: Path,
    kind: str,
    name: str,
    make: Callable[[str], str],
    message: re.Pattern[str],
) -> None:
    kernel = make("self") if kind == "numpy" else "self * 2"
    backward = make("grad") if kind == "backward" else "grad * 2"
    forward = make("self_t") if kind == "forward" else "self_t * 2"
    errors = _refused(
        tmp_path,
        f"- func: fz(Tensor self) -> Tensor\n  numpy: '{kernel}'\n",
        f"- name: fz(Tensor self) -> Tensor\n  self: '{backward}'\n  result: '{forward}'\n",
    )
    # a native_functions.yaml error stands at its entry (or its numpy: key)
    file, lines = {
        "numpy": ("native_functions.yaml", (1, 2)),
        "backward": ("derivatives.yaml", (2,)),
        "forward": ("derivatives.yaml", (3,)),
    }[kind]
    assert len(errors) == 1, [str(e) for e in errors]
    location = errors[0].location
    assert location is not None and Path(location.file).name == file
    assert location.line in lines, str(errors[0])
    assert message.match(errors[0].message), errors[0].message


def test_an_auto_element_wise_derived_past_the_bound_is_a_located_error(
    tmp_path: Path,
) -> None:
    # The backward formula is within the bound; the JVP derived from it is two levels
    # deeper (grad -> self_t.conj(), then .conj() of the whole).
    backward = _at_the_bound(DEEP_SHAPES["sum"][1])
    errors = _refused(
        tmp_path,
        "- func: fz(Tensor self) -> Tensor\n  numpy: self * 2\n",
        f"- name: fz(Tensor self) -> Tensor\n  self: {backward}\n  result: auto_element_wise\n",
    )
    error = _one_error_at(errors, "derivatives.yaml", 3)
    assert "auto_element_wise derives the forward formula" in error.message
    assert TOO_DEEP.search(error.message), error.message


def test_parse_expression_bounds_depth_and_length() -> None:
    assert (
        expression_depth(ast.parse("a + b", mode="eval")) == 4
    )  # Expression/BinOp/Name/Load
    at_bound = (
        "-" * (MAX_EXPRESSION_DEPTH - 3) + "x"
    )  # Expression, the minuses, Name, Load
    assert (
        expression_depth(parse_expression(at_bound, "formula")) == MAX_EXPRESSION_DEPTH
    )
    with pytest.raises(
        CodegenError, match=f"formula is nested {MAX_EXPRESSION_DEPTH + 1} "
    ):
        parse_expression("-" + at_bound, "formula")
    longest = "x" + " " * (MAX_EXPRESSION_LENGTH - 2) + "y"
    with pytest.raises(
        CodegenError, match="invalid syntax"
    ):  # long enough to be parsed
        parse_expression(longest, "formula")
    with pytest.raises(
        CodegenError, match=f"is {MAX_EXPRESSION_LENGTH + 1:,} characters"
    ):
        parse_expression(longest + "z", "formula")


def test_parse_expression_is_a_codegen_error_on_a_deep_python_stack() -> None:
    # The parser's own limits (RecursionError, MemoryError) are the caller's stack and
    # C stack; however deep the caller, the answer is a CodegenError.
    def nested(levels: int, text: str) -> ast.Expression:
        return nested(levels - 1, text) if levels else parse_expression(text, "formula")

    frame, depth = sys._getframe(), 0
    while frame is not None:
        frame, depth = frame.f_back, depth + 1
    room = sys.getrecursionlimit() - depth
    for text in ["-" * 9000 + "x", "f(" * 3000 + "x" + ")" * 3000, "1 + " * 2400 + "1"]:
        for levels in (0, room // 2, room - 30):
            with pytest.raises(CodegenError, match="formula is nested"):
                nested(levels, text)
