"""Formulas in either spelling: Python, or PyTorch's C++ (cpp_parser.py reads it).

`parse_formula` is how every derivative formula is parsed. A formula that is a Python
expression is read as Python; one that is not but has a mark of C++ (`at::sum_to(...)`,
`c ? a : b`, `!x`, `&&`, `/*keepdim=*/true`), or whose braces make a Python set or an
empty dict (`{a, b}`, `{}`), is read as C++; a formula that is neither gets Python's
syntax error, or the C++ reader's when it has a mark of C++. Either way the tree then goes through `CppSpelling`, which turns the
names and methods PyTorch's formulas use into the ones gradgen's formulas have:

| PyTorch writes | the formula reads |
|---|---|
| `at::NAME`, `c10::NAME`, `std::NAME`, `torch::NAME` | `NAME` |
| `true`, `false`, `std::nullopt`, `c10::nullopt`, `nullptr` | `True`, `False`, `None` |
| `at::Reduction::None` / `Mean` / `Sum` | `0` / `1` / `2` |
| `M_PI`, `M_LN2`, `M_SQRT2`, `M_SQRT1_2`, `M_2_SQRTPI`, `M_E`; `sqrt(c)` of a constant | the number |
| `GradMode::is_enabled()` | `is_grad_enabled()` |
| `Tensor()` (an undefined tensor) | `None` |
| `IntArrayRef(x)`, `SymIntArrayRef(x)`, ... (conversions) | `x` |
| `x.defined()`, `x.has_value()` | `x is not None` |
| `x.value()`; `x.value_or(d)` | `x`; `x if x is not None else d` |
| `alpha.toDouble()`, `toFloat()`, `toComplexDouble()`, `toLong()` | `alpha` |
| `xs.size()` (of a list) | `len(xs)` |
| `xs.back()` (of a list) | `xs[-1]` |
| `x.new_zeros(s)`, `x.new_zeros(s, options)` (`_symint` too) | `zeros(s, x.options())`, `zeros(s, options)` |
| `x.layout()`; `c10::kStrided`, `kSparse`, `kSparseCsr`, `kJagged` | `"strided"` (gradgen's only layout); `"strided"`, `"sparse"`, `"sparse_csr"`, `"jagged"` |
| `x.sizes()`; `x.sym_size(d)`, `x.size(d)` | `x.sym_sizes()`; `x.sym_sizes()[d]` |
| `x.strides()` | `x.sym_strides()` |
| `x.sym_size(d) / n` (and `size`, `sym_numel`, `numel`, `dim` on the left) | `x.sym_sizes()[d] // n` (C++ divides integers) |
| `x.toType(t)` | `x.to(t)` |
| `x == std::nullopt` | `x is None` |
| `NAME_symint(...)`, `x.NAME_symint(...)` | `NAME(...)` when only `NAME` exists |
| `f(a, b, c)` with `c` keyword-only in f's schema | `f(a, b, name=c)` (C++ passes all by position) |

What is left unknown (a C++ name such as `c10::kJagged`, a helper gradgen lacks) is
reported by the checks of formulas.py as any unknown name is.
"""

from __future__ import annotations

import ast
import copy
import keyword
import math
import re
import warnings
from typing import TYPE_CHECKING

from .cpp_parser import parse_cpp
from .errors import CodegenError
from .expressions import (
    MAX_EXPRESSION_DEPTH,
    MAX_EXPRESSION_LENGTH,
    expression_depth,
    parse_expression,
)

if TYPE_CHECKING:
    from .formulas import FormulaNames

_NAMESPACES = ("at::", "c10::", "std::", "torch::")

# Names that are values.
_CONSTANTS: dict[str, bool | int | float | str | None] = {
    "true": True,
    "false": False,
    "nullopt": None,
    "nullptr": None,
    "Reduction::None": 0,
    "Reduction::Mean": 1,
    "Reduction::Sum": 2,
    "M_PI": math.pi,
    "M_LN2": math.log(2.0),
    "M_SQRT2": math.sqrt(2.0),
    "M_SQRT1_2": math.sqrt(0.5),
    "M_2_SQRTPI": 2.0 / math.sqrt(math.pi),
    "M_E": math.e,
    # Layouts: gradgen's tensors are all strided (x.layout() reads "strided").
    "kStrided": "strided",
    "kSparse": "sparse",
    "kSparseCsr": "sparse_csr",
    "kJagged": "jagged",
}

# Qualified names of functions gradgen spells otherwise.
_FUNCTIONS = {"GradMode::is_enabled": "is_grad_enabled"}

# Conversions written as calls with one argument: the argument is the value.
_CONVERSIONS = frozenset(
    {
        "IntArrayRef",
        "SymIntArrayRef",
        "OptionalIntArrayRef",
        "OptionalSymIntArrayRef",
        "ArrayRef",
        "OptionalArrayRef",
        "SymInt",
        "Scalar",
    }
)

# Methods whose value is the receiver: an optional's value, a Scalar's conversions.
_IDENTITY_METHODS = frozenset(
    {"value", "toDouble", "toFloat", "toComplexDouble", "toLong", "toSymInt"}
)

# Names that stay as they are even with the `_symint` suffix (formulas.py's sugar).
_SYMINT_NAMES = frozenset({"to_args_sizes_symint"})


def unqualified(name: str) -> str:
    """`at::sum_to` -> `sum_to`; `at::Reduction::Mean` -> `Reduction::Mean`."""
    stripped = True
    while stripped:
        stripped = False
        for namespace in _NAMESPACES:
            if name.startswith(namespace):
                name = name[len(namespace) :]
                stripped = True
    return name


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _is_not_none(value: ast.expr) -> ast.expr:
    return ast.Compare(left=value, ops=[ast.IsNot()], comparators=[ast.Constant(None)])


def _sizes(value: ast.expr) -> ast.expr:
    method = ast.Attribute(value=value, attr="sym_sizes", ctx=ast.Load())
    return ast.Call(func=method, args=[], keywords=[])


def _matrix_transpose(value: ast.expr, conjugate: bool) -> ast.expr:
    """PyTorch's `x.mT()` / `x.mH()`: x.transpose(-2, -1), conjugated for mH."""
    minus: list[ast.expr] = [
        ast.UnaryOp(op=ast.USub(), operand=ast.Constant(value=k)) for k in (2, 1)
    ]
    node: ast.expr = ast.Call(
        func=ast.Attribute(value=value, attr="transpose", ctx=ast.Load()),
        args=minus,
        keywords=[],
    )
    if conjugate:
        node = ast.Call(
            func=ast.Attribute(value=node, attr="conj", ctx=ast.Load()),
            args=[],
            keywords=[],
        )
    return node


def _constant_number(node: ast.expr) -> float | None:
    """The value of a constant arithmetic expression (`2 * M_PI`), else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return None if isinstance(node.value, bool) else float(node.value)
    if isinstance(node, ast.BinOp) and isinstance(
        node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)
    ):
        left, right = _constant_number(node.left), _constant_number(node.right)
        if left is None or right is None:
            return None
        if isinstance(node.op, ast.Add):
            return left + right
        if isinstance(node.op, ast.Sub):
            return left - right
        if isinstance(node.op, ast.Mult):
            return left * right
        return left / right if right else None
    return None


_INTEGER_METHODS = frozenset({"sym_size", "size", "sym_numel", "numel", "dim"})


def _is_size(node: ast.expr) -> bool:
    """`x.sym_size(d)`, `x.numel()` and the like, as PyTorch spells them: integers."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in _INTEGER_METHODS
    )


class CppSpelling(ast.NodeTransformer):
    """PyTorch's names and methods as gradgen's (the table of the module's doc)."""

    def __init__(self, names: FormulaNames | None) -> None:
        self.callables = names.callables if names is not None else frozenset()
        self.methods = names.methods if names is not None else frozenset()
        # Also in a Python formula: passing a keyword-only parameter by position is a
        # TypeError there, so the rewrite only changes what could not run.
        self.keyword_only = names.keyword_only if names is not None else {}

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if keyword.iskeyword(node.id) and node.id not in ("True", "False", "None"):
            raise CodegenError(
                f"formula uses the name '{node.id}', a Python keyword, which the "
                "generator cannot read (rename the argument in both files)"
            )
        name = unqualified(node.id)
        if name in _CONSTANTS:
            return ast.copy_location(ast.Constant(value=_CONSTANTS[name]), node)
        if name != node.id:
            return ast.copy_location(ast.Name(id=name, ctx=ast.Load()), node)
        return node

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        """A size divided is C++'s integer division (`grad.sym_size(1) / groups`)."""
        if isinstance(node.op, ast.Div) and _is_size(node.left):
            node.op = ast.FloorDiv()
        self.generic_visit(node)
        return node

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        self.generic_visit(node)
        if len(node.ops) == 1 and _is_none(node.comparators[0]):
            if isinstance(node.ops[0], ast.Eq):
                node.ops = [ast.Is()]
            elif isinstance(node.ops[0], ast.NotEq):
                node.ops = [ast.IsNot()]
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.func, ast.Name):
            rewritten = self._function(node, node.func.id)
        elif isinstance(node.func, ast.Attribute):
            rewritten = self._method(node, node.func)
        else:
            rewritten = node
        if isinstance(rewritten, ast.Call) and self.keyword_only:
            self._keywords(rewritten)
        return ast.copy_location(rewritten, node)

    def _keywords(self, node: ast.Call) -> None:
        """C++ passes every argument by position: those beyond an operator's positional
        parameters are its keyword-only ones (`self.div(other, "trunc")` is
        `self.div(other, rounding_mode="trunc")`), when all its overloads that take
        that many arguments agree on their names and none takes them all by position."""
        if isinstance(node.func, ast.Name):
            key = ("function", node.func.id)
        elif isinstance(node.func, ast.Attribute):
            key = ("method", node.func.attr)
        else:
            return
        count = len(node.args)
        overloads = self.keyword_only.get(key, ())
        if any(count <= positional for positional, _ in overloads):
            return  # an overload takes them all by position (`x.sum(0)`: dim)
        names = {
            keywords[: count - positional]
            for positional, keywords in overloads
            if positional < count <= positional + len(keywords)
        }
        if len(names) != 1 or node.keywords:
            return
        (chosen,) = names
        split = count - len(chosen)
        node.keywords = [
            ast.keyword(arg=name, value=value)
            for name, value in zip(chosen, node.args[split:])
        ]
        node.args = node.args[:split]

    def _function(self, node: ast.Call, name: str) -> ast.expr:
        if name in _FUNCTIONS and not node.args:
            return ast.Call(
                func=ast.Name(id=_FUNCTIONS[name], ctx=ast.Load()), args=[], keywords=[]
            )
        if name == "make_tuple" and not node.keywords:
            return ast.Tuple(elts=node.args, ctx=ast.Load())
        if name == "Tensor" and not node.args and not node.keywords:
            return ast.Constant(value=None)
        if name in _CONVERSIONS and len(node.args) == 1 and not node.keywords:
            return node.args[0]
        if name == "sqrt" and len(node.args) == 1:
            value = _constant_number(node.args[0])
            if value is not None and value >= 0:
                return ast.Constant(value=math.sqrt(value))
        node.func = ast.Name(id=self._symint(name, self.callables), ctx=ast.Load())
        return node

    def _method(self, node: ast.Call, function: ast.Attribute) -> ast.expr:
        receiver, method, arguments = function.value, function.attr, node.args
        if node.keywords:
            return node
        if method in ("defined", "has_value") and not arguments:
            return _is_not_none(receiver)
        if method in _IDENTITY_METHODS and not arguments:
            return receiver
        if method == "layout" and not arguments:
            return ast.Constant(value="strided")
        if method in ("mT", "mH") and not arguments:  # properties in Python
            return _matrix_transpose(receiver, conjugate=method == "mH")
        if method in ("new_zeros", "new_zeros_symint") and len(arguments) in (1, 2):
            options = (
                arguments[1]
                if len(arguments) == 2
                else ast.Call(
                    func=ast.Attribute(value=receiver, attr="options", ctx=ast.Load()),
                    args=[],
                    keywords=[],
                )
            )
            return ast.Call(
                func=ast.Name(id="zeros", ctx=ast.Load()),
                args=[arguments[0], options],
                keywords=[],
            )
        if method == "size" and not arguments:  # of a list argument
            return ast.Call(
                func=ast.Name(id="len", ctx=ast.Load()), args=[receiver], keywords=[]
            )
        if method == "back" and not arguments:  # of a list argument
            return ast.Subscript(value=receiver, slice=ast.Constant(value=-1))
        if method == "value_or" and len(arguments) == 1:
            return ast.IfExp(
                test=_is_not_none(receiver),
                body=copy.deepcopy(receiver),
                orelse=arguments[0],
            )
        if method == "sizes" and not arguments:
            return _sizes(receiver)
        if method in ("sym_size", "size") and len(arguments) == 1:
            return ast.Subscript(value=_sizes(receiver), slice=arguments[0])
        if method == "strides" and not arguments:
            function.attr = "sym_strides"
        elif method == "toType" and len(arguments) == 1:
            function.attr = "to"
        else:
            function.attr = self._symint(method, self.methods)
        return node

    @staticmethod
    def _symint(name: str, known: frozenset[str]) -> str:
        """`expand_symint` -> `expand` where only `expand` is known (gradgen has one
        integer type, so PyTorch's SymInt variants are the operators themselves)."""
        base = name.removesuffix("_symint")
        if base != name and name not in known and name not in _SYMINT_NAMES:
            if base in known or not known:
                return base
        return name


# What only C++ writes: a formula that is no Python expression and has none of these
# is reported with Python's error (a Python formula with a typo).
_CPP_MARKS = re.compile(
    r"::|\?|&&|\|\||!(?!=)|/\*|->|[{}]|\b(?:true|false)\b|\d[fFL]\b"
)


def _looks_like_cpp(text: str) -> bool:
    """Whether `text` is no Python expression but has C++ marks, or is one whose
    braces make a set or an empty dict (`{a, b}`, `{}`: C++ lists)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            tree = ast.parse(text.strip(), mode="eval")
        except SyntaxError:
            return _CPP_MARKS.search(text) is not None
        except (RecursionError, MemoryError, ValueError):
            return False  # parse_expression reports it
    return any(
        isinstance(n, ast.Set) or (isinstance(n, ast.Dict) and not n.keys)
        for n in ast.walk(tree)
    )


def parse_formula(
    text: str, what: str, names: FormulaNames | None = None
) -> ast.Expression:
    """A formula in either spelling as a checked-size Python tree, with PyTorch's
    names and methods as gradgen's (`names`, when given, decides the `_symint`
    suffixes)."""
    if isinstance(text, str) and text.strip() and _looks_like_cpp(text):
        source = text.strip()
        if len(source) > MAX_EXPRESSION_LENGTH:
            parse_expression(source, what)  # the length error
        tree = parse_cpp(source, what, MAX_EXPRESSION_DEPTH)
        if expression_depth(tree) > MAX_EXPRESSION_DEPTH:
            raise CodegenError(
                f"{what} is nested more than {MAX_EXPRESSION_DEPTH} levels deep"
            )
    else:
        tree = parse_expression(text, what)
    spelled = CppSpelling(names).visit(tree)
    assert isinstance(spelled, ast.Expression)
    return ast.fix_missing_locations(spelled)
