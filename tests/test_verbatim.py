"""PyTorch's C++ formula spelling, read into the same checked Python tree as a Python
formula (codegen/cpp_parser.py, codegen/cpp_spelling.py)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from gradgen.codegen.backward_formulas import analyse_backward
from gradgen.codegen.cpp_spelling import parse_formula
from gradgen.codegen.errors import CodegenError
from gradgen.codegen.formulas import ArgumentInfo, FormulaNames
from gradgen.codegen.load import load


def _read(text: str, names: FormulaNames | None = None) -> str:
    return ast.unparse(parse_formula(text, "formula", names))


@pytest.mark.parametrize(
    ("cpp", "python"),
    [
        # qualifiers, literals
        ("at::sum_to(grad, self.sym_sizes())", "sum_to(grad, self.sym_sizes())"),
        ("c10::zeros_like(self)", "zeros_like(self)"),
        ("at::Reduction::Mean", "1"),
        ("at::Reduction::None + at::Reduction::Sum", "0 + 2"),
        ("std::nullopt", "None"),
        ("::std::nullopt", "None"),
        ("c10::nullopt", "None"),
        ("f(true, false)", "f(True, False)"),
        ("f(0.5f, 1L, 2., 1e-3)", "f(0.5, 1, 2.0, 0.001)"),
        ('not_implemented("fft_r2c \\"x\\"")', "not_implemented('fft_r2c \"x\"')"),
        ("f(grad, /*keepdim=*/true)", "f(grad, True)"),
        ("2.0 / sqrt(M_PI)", "2.0 / 1.7724538509055159"),
        ("grad * std::sqrt(2 * M_PI)", "grad * 2.5066282746310002"),
        # operators
        ("a ? b : c", "b if a else c"),
        ("a ? b : c ? d : e", "b if a else d if c else e"),
        ("!a || b && c", "not a or (b and c)"),
        ("a - b - c", "a - b - c"),
        ("a - (b - c)", "a - (b - c)"),
        ("-a * b + c % d", "-a * b + c % d"),
        ("(a & b) == c", "a & b == c"),
        # C++ precedence where the text is C++ (with a mark of C++)
        ("a & b == c ? x : y", "x if a & (b == c) else y"),
        ("a <= b != c ? x : y", "x if (a <= b) != c else y"),
        ("a < b < c ? x : y", "x if (a < b) < c else y"),
        ("dtype.has_value() ? *dtype : x", "dtype if dtype is not None else x"),
        ("~mask", "~mask"),
        ("x == std::nullopt", "x is None"),
        ("x != c10::nullopt", "x is not None"),
        # lists
        ("f({a, b})", "f([a, b])"),
        ("f({{0, 0}})", "f([0, 0])"),
        ("f({})", "f([])"),
        ("f({a, b,})", "f([a, b])"),
        # optionals and sizes
        ("grad.defined() ? grad : Tensor()", "grad if grad is not None else None"),
        ("train.has_value() && train.value()", "train is not None and train"),
        ("dim.value_or(IntArrayRef({}))", "dim if dim is not None else []"),
        ("bias->sym_sizes()", "bias.sym_sizes()"),
        ("self.sym_size(-1)", "self.sym_sizes()[-1]"),
        ("self.size(0) * self.sizes()", "self.sym_sizes()[0] * self.sym_sizes()"),
        ("self.strides()", "self.sym_strides()"),
        ("padding.size()", "len(padding)"),
        ("self.sym_size(dim.back())", "self.sym_sizes()[dim[-1]]"),
        ("grad.new_zeros_symint(s, o)", "zeros(s, o)"),
        ("result.new_zeros(s)", "zeros(s, result.options())"),
        ("self.layout() == c10::kJagged ? a : b", "a if 'strided' == 'jagged' else b"),
        ("grad.toType(self.scalar_type())", "grad.to(self.scalar_type())"),
        ("alpha.toDouble() * grad", "alpha * grad"),
        # templates
        ("std::get<0>(f(x))", "f(x)[0]"),
        ("std::tuple<Tensor, Tensor, Tensor>()", "(None, None, None)"),
        ("std::make_tuple(a, b)", "(a, b)"),
        ("std::vector<c10::SymInt>(padding.size(), 0)", "[0] * len(padding)"),
        ("std::vector<Tensor>(list.size())", "[None] * len(list)"),
        ("std::optional<Tensor>(f(x))", "f(x)"),
        ("at::OptionalArrayRef<c10::SymInt>(x.sym_sizes())", "x.sym_sizes()"),
        # PyTorch's own functions
        (
            "GradMode::is_enabled() ? f(grad) : g(grad)",
            "f(grad) if is_grad_enabled() else g(grad)",
        ),
    ],
)
def test_cpp_reads_as_the_python_it_means(cpp: str, python: str) -> None:
    assert _read(cpp) == python


def test_python_formulas_read_as_before() -> None:
    for text in (
        "grad * other if self is not None else None",
        "sum_to(grad, self.sym_sizes())",
        "(grad, -grad)",
        "grads[0] + grads[1] // 2",
        "[a, b]",
    ):
        assert _read(text) == ast.unparse(ast.parse(text, mode="eval"))


def test_symint_variants_are_the_operators_gradgen_has() -> None:
    names = FormulaNames(
        helpers=frozenset({"to_args_sizes_symint", "trace_backward_symint"}),
        functions=frozenset({"zeros"}),
        methods=frozenset({"expand"}),
    )
    assert _read("grad.expand_symint(s)", names) == "grad.expand(s)"
    assert _read("at::zeros_symint(s)", names) == "zeros(s)"
    # a name gradgen has with the suffix stays; an unknown one stays unknown
    assert _read("trace_backward_symint(g)", names) == "trace_backward_symint(g)"
    assert _read("new_zeros_symint(s)", names) == "new_zeros_symint(s)"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "at::sum_to(grad,, self)",
            "formula is neither a Python nor a C++ expression PyTorch's derivatives.yaml "
            "uses (unexpected ',' at column 17): at::sum_to(grad,, self)",
        ),
        (
            "a ? b",
            "formula is neither a Python nor a C++ expression PyTorch's derivatives.yaml "
            "uses (unexpected end of formula at column 6): a ? b",
        ),
        (
            "grad.roll(fmap(s, [](c10::SymInt i){return -i;}))",
            "formula may not contain a lambda",
        ),
        (
            "std::array<int, 2>(a, b) && x",
            "formula calls the C++ template std::array<int, 2> in a way the generator "
            "does not read",
        ),
        (
            'f("\\q") && x',
            "formula has a string with the escape '\\q', which the "
            "generator does not read",
        ),
        (
            "grad @ x ? a : b",
            "formula is neither a Python nor a C++ expression "
            "PyTorch's derivatives.yaml uses (unexpected '@' at column 6): grad @ x ? a : b",
        ),
        (
            "true ? from : grad",
            "formula uses the name 'from', a Python keyword, which the generator "
            "cannot read (rename the argument in both files)",
        ),
        # no mark of C++: Python's own error, as before
        ("grad *", "formula is not a Python expression (invalid syntax): grad *"),
    ],
)
def test_what_cannot_be_read_is_an_error_naming_where(text: str, message: str) -> None:
    with pytest.raises(CodegenError) as raised:
        parse_formula(text, "formula")
    assert str(raised.value) == message


def test_cpp_nesting_is_bounded_like_python() -> None:
    deep = "(" * 150 + "a" + ")" * 150 + " ? b : c"
    with pytest.raises(CodegenError, match="nested more than 100 levels deep"):
        parse_formula(deep, "formula")
    unary = "!" * 150 + "a"
    with pytest.raises(CodegenError, match="nested more than 100 levels deep"):
        parse_formula(unary, "formula")
    chain = "a ? b" + ".c()" * 2400 + " : d"  # deep, built without recursion
    with pytest.raises(CodegenError, match="nested more than 100 levels deep"):
        parse_formula(chain, "formula")
    with pytest.raises(CodegenError, match="has a number of 5,000 digits"):
        parse_formula("a ? " + "1" * 5000 + " : b", "formula")
    with pytest.raises(CodegenError, match="is 10,001 characters long"):
        parse_formula("a ? b : " + "c" * 9993, "formula")


_ARGUMENTS = {
    "self": ArgumentInfo("self", True, False, False, "Tensor"),
    "bias": ArgumentInfo("bias", True, False, False, "Tensor | None"),
    "dim": ArgumentInfo("dim", False, False, False, "int"),
    "padding": ArgumentInfo("padding", False, False, False, "Sequence[int]"),
}
_NAMES = FormulaNames(
    helpers=frozenset({"sum_to", "is_grad_enabled"}),
    functions=frozenset({"sum", "where"}),
    methods=frozenset({"sum", "expand", "conj"}),
)


def test_the_checks_run_on_the_translated_tree() -> None:
    """C++ gets the same checks as Python: unknown names, dunders, forbidden methods,
    methods on non-tensors."""
    for text, message in (
        ("at::sum_too(grad, self.sym_sizes())", "did you mean 'sum_to'?"),
        (
            "grad.defined() ? grad.__class__ : grad",
            "may not use the attribute '__class__'",
        ),
        ("grad.defined() ? grad.numpy() : grad", "may not call the method 'numpy'"),
        ("c10::kMkldnn == dim ? grad : grad", "unknown name 'kMkldnn'"),
        (
            "true ? padding.sum() : grad",
            "'padding' is an argument of type Sequence[int]",
        ),
    ):
        with pytest.raises(CodegenError, match=re.escape(message)):
            analyse_backward(text, _ARGUMENTS, ("result",), _NAMES)


def test_cpp_saves_what_the_python_spelling_saves() -> None:
    cpp = analyse_backward(
        "grad.defined() ? at::sum_to(grad, self.sym_sizes()) : Tensor()",
        _ARGUMENTS,
        ("result",),
        _NAMES,
    )
    python = analyse_backward(
        "sum_to(grad, self.sym_sizes()) if grad is not None else None",
        _ARGUMENTS,
        ("result",),
        _NAMES,
    )
    assert cpp.expression == python.expression
    assert (
        cpp.expression == "sum_to(grad, self_sym_sizes) if grad is not None else None"
    )
    assert cpp.saved == python.saved
    assert [s.name for s in cpp.saved] == ["self_sym_sizes"]


def test_sizes_of_optional_and_of_unsaved_tensors() -> None:
    """`bias->sym_sizes()` saves the size (None without a bias); `grad.sym_size(0)`
    is computed where the formula runs; `self.sym_strides()` saves the strides."""
    analysed = analyse_backward(
        "grad.sum(0).expand({grad.sym_size(0)}) + bias->sym_sizes()[0] * self.sym_strides()[0]",
        _ARGUMENTS,
        ("result",),
        _NAMES,
    )
    assert analysed.expression == (
        "grad.sum(0).expand([tuple(grad.shape)[0]]) + bias_sym_sizes[0] * "
        "self_sym_strides[0]"
    )
    saved = {s.name: s.save_expression for s in analysed.saved}
    assert saved == {
        "bias_sym_sizes": "None if bias is None else bias._data.shape",
        "self_sym_strides": "self.stride()",
    }


NATIVE = """\
- func: mul.Tensor(Tensor self, Tensor other) -> Tensor
  variants: function, method
  numpy: self * other
  type_promotion: self, other

- func: addcmul(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor
  numpy: self + value * tensor1 * tensor2

- func: mul_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)
  variants: method
  numpy: into(self, self * other)
"""


def _load(tmp_path: Path, derivatives: str) -> object:
    (tmp_path / "native_functions.yaml").write_text(NATIVE)
    (tmp_path / "derivatives.yaml").write_text(derivatives)
    return load(tmp_path / "native_functions.yaml", tmp_path / "derivatives.yaml")


def test_bare_inputs_without_a_gradient_formula_are_primal_values(
    tmp_path: Path,
) -> None:
    """PyTorch's forward formulas read an input that has no gradient formula by its
    bare name (native_batch_norm's running_mean): it is the primal value."""
    model = _load(
        tmp_path,
        "- name: addcmul(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor\n"
        "  self: grad\n"
        "  result: self_t + value * tensor1 * tensor2\n",
    )
    (info,) = model.infos  # type: ignore[attr-defined]
    (forward,) = info.forward_derivatives
    assert ast.unparse(forward.formula.tree) == "self_t + value * tensor1_p * tensor2_p"
    # with a gradient formula of its own, the bare name stays ambiguous
    with pytest.raises(CodegenError, match="base name of the tensor1 argument"):
        _load(
            tmp_path,
            "- name: addcmul(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor\n"
            "  self: grad\n"
            "  tensor1: grad * tensor2\n"
            "  result: self_t + value * tensor1 * tensor2\n",
        )


def test_result_names_the_output_of_an_in_place_operator(tmp_path: Path) -> None:
    model = _load(
        tmp_path,
        "- name: mul_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)\n"
        "  self: grad * other\n"
        "  other: grad * self\n"
        "  result: self_t * other_p + other_t * self_p\n",
    )
    (info,) = [i for i in model.infos if i.function.name == "mul_.Tensor"]  # type: ignore[attr-defined]
    assert [f.var_names for f in info.forward_derivatives] == [("self",)]
