"""PyTorch's C++ formula spelling read into a Python syntax tree.

PyTorch's derivatives.yaml writes its formulas in a small subset of C++:
`at::sum_to(grad, self.sym_sizes())`, `grad.defined() ? f(grad) : Tensor()`,
`{a, b}`, `!train.has_value() || train.value()`, `std::get<0>(f(x))`,
`/*keepdim=*/true`. This module reads that subset with a small tokenizer and a
recursive-descent parser and builds the same `ast` tree a Python formula parses into,
so every check of formulas.py (the node whitelist, the names, the methods) runs on it
unchanged. Nothing here is text replacement: each construct becomes a node.

What it reads (cpp_spelling.py then maps names and methods):
- literals: numbers with C++ suffixes (`0.5f`, `1L`, `2.`), strings, `true`/`false`;
- names with `::` qualifiers (`at::where`, `at::Reduction::Mean`, `::std::nullopt`);
- `a ? b : c`, `||`, `&&`, `!`, the arithmetic, bitwise and comparison operators,
  unary `-`/`+`/`~`, `*x` (an optional's value);
- calls, `x.method(...)`, `x->method(...)` (on an optional), `x[i]`, `(...)`;
- `{a, b}` braced lists (`{{a, b}}` is `{a, b}`);
- templates of a known few: `std::get<i>(t)`, `std::tuple<...>(...)`,
  `std::vector<T>(n, v)`, `std::optional<T>(x)`, `at::OptionalArrayRef<T>(x)`;
- `/* ... */` comments (PyTorch's argument names: `/*keepdim=*/true`).

Anything else (lambdas, assignments, `<<`) is a CodegenError naming the column.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from .errors import CodegenError, shorten

# Names followed by `<...>` template arguments (the last part of a qualified name).
TEMPLATES = frozenset(
    {
        "get",
        "tuple",
        "make_tuple",
        "vector",
        "array",
        "optional",
        "OptionalArrayRef",
        "ArrayRef",
    }
)

_TOKEN = re.compile(
    r"""
    (?P<space>\s+|/\*.*?\*/|//[^\n]*)
  | (?P<number>(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?[fFlLuU]*)
  | (?P<name>(?:::)?[A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)*)
  | (?P<string>"(?:[^"\\\n]|\\.)*")
  | (?P<op>->|&&|\|\||==|!=|<=|>=|[-+*/%<>!~&|^?:(){}\[\],.])
  | (?P<other>.)
    """,
    re.VERBOSE | re.DOTALL,
)

_ESCAPES = {"n": "\n", "t": "\t", "\\": "\\", '"': '"', "'": "'", "0": "\0"}


@dataclass(frozen=True)
class Token:
    kind: str  # "number", "name", "string", "op", "other" (never read), "end"
    text: str
    column: int  # 1-based, for messages


def tokenize(text: str, what: str) -> list[Token]:
    """The tokens of a C++ formula (comments and spaces dropped)."""
    tokens = []
    position = 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        assert match is not None  # `other` takes any character
        kind = match.lastgroup or ""
        if kind != "space":
            tokens.append(Token(kind, match.group(), position + 1))
        position = match.end()
    tokens.append(Token("end", "", len(text) + 1))
    return tokens


def _syntax_error(what: str, text: str, column: int, found: str) -> CodegenError:
    return CodegenError(
        f"{what} is neither a Python nor a C++ expression PyTorch's derivatives.yaml "
        f"uses (unexpected {found} at column {column}): {shorten(text, 200)}"
    )


# Binary operators: C++ precedence (higher binds tighter) and the Python node.
_BINARY: dict[str, tuple[int, ast.AST]] = {
    "||": (1, ast.Or()),
    "&&": (2, ast.And()),
    "|": (3, ast.BitOr()),
    "^": (4, ast.BitXor()),
    "&": (5, ast.BitAnd()),
    "==": (6, ast.Eq()),
    "!=": (6, ast.NotEq()),
    "<": (7, ast.Lt()),
    "<=": (7, ast.LtE()),
    ">": (7, ast.Gt()),
    ">=": (7, ast.GtE()),
    "+": (9, ast.Add()),
    "-": (9, ast.Sub()),
    "*": (10, ast.Mult()),
    "/": (10, ast.Div()),
    "%": (10, ast.Mod()),
}

_UNARY: dict[str, ast.unaryop] = {"!": ast.Not(), "-": ast.USub(), "+": ast.UAdd()}


@dataclass
class TemplateName:
    """A name with template arguments, as written: `std::get<0>` -> ("std::get", ["0"])."""

    name: str
    arguments: list[str]


class CppParser:
    """A recursive-descent parser of the formula subset; `parse()` gives the tree."""

    def __init__(self, text: str, what: str, max_depth: int) -> None:
        self.text = text
        self.what = what
        self.tokens = tokenize(text, what)
        self.index = 0
        self.depth = 0
        self.max_depth = max_depth

    # -- tokens -----------------------------------------------------------------------

    def peek(self, ahead: int = 0) -> Token:
        return self.tokens[min(self.index + ahead, len(self.tokens) - 1)]

    def take(self) -> Token:
        token = self.peek()
        self.index += 1
        return token

    def at(self, text: str) -> bool:
        token = self.peek()
        return token.kind in ("op", "name") and token.text == text

    def expect(self, text: str) -> Token:
        if not self.at(text):
            raise self.error(self.peek())
        return self.take()

    def error(self, token: Token) -> CodegenError:
        found = f"'{token.text}'" if token.kind != "end" else "end of formula"
        return _syntax_error(self.what, self.text, token.column, found)

    # -- grammar ----------------------------------------------------------------------

    def parse(self) -> ast.Expression:
        body = self.expression()
        if self.peek().kind != "end":
            raise self.error(self.peek())
        return ast.Expression(body=body)  # its depth is checked before it is walked

    def expression(self) -> ast.expr:
        """`c ? a : b` (right-associative) or a binary expression."""
        self.depth += 1
        if self.depth > self.max_depth:
            raise CodegenError(
                f"{self.what} is nested more than {self.max_depth} levels deep"
            )
        test = self.binary(1)
        if self.at("?"):
            self.take()
            body = self.expression()
            self.expect(":")
            orelse = self.expression()
            test = ast.IfExp(test=test, body=body, orelse=orelse)
        self.depth -= 1
        return test

    def binary(self, lowest: int) -> ast.expr:
        """Precedence climbing over `_BINARY`, all left-associative."""
        left = self.unary()
        while True:
            token = self.peek()
            entry = _BINARY.get(token.text) if token.kind == "op" else None
            if entry is None or entry[0] < lowest:
                return left
            self.take()
            level, operator = entry
            right = self.binary(level + 1)
            left = _binary_node(left, operator, right)

    def unary(self) -> ast.expr:
        token = self.peek()
        if token.kind == "op" and token.text in ("!", "-", "+", "~", "*"):
            self.take()
            self.depth += 1
            if self.depth > self.max_depth:
                raise CodegenError(
                    f"{self.what} is nested more than {self.max_depth} levels deep"
                )
            operand = self.unary()
            self.depth -= 1
            if token.text == "*":  # an optional's value: `*dtype` is dtype
                return operand
            if token.text == "~":
                return ast.UnaryOp(op=ast.Invert(), operand=operand)
            return ast.UnaryOp(op=_UNARY[token.text], operand=operand)
        return self.postfix(self.primary())

    def postfix(self, node: ast.expr | TemplateName) -> ast.expr:
        while True:
            if self.at("("):
                node = self.call(node)
            elif isinstance(node, TemplateName):
                raise self.error(self.peek())
            elif self.at(".") or self.at("->"):
                self.take()
                name = self.take()
                if name.kind != "name" or "::" in name.text:
                    raise self.error(name)
                node = ast.Attribute(value=node, attr=name.text, ctx=ast.Load())
            elif self.at("["):
                self.take()
                index = self.expression()
                self.expect("]")
                node = ast.Subscript(value=node, slice=index, ctx=ast.Load())
            else:
                return node

    def call(self, function: ast.expr | TemplateName) -> ast.expr:
        self.expect("(")
        arguments = self.sequence(")")
        if isinstance(function, TemplateName):
            return template_call(function, arguments, self.what)
        return ast.Call(func=function, args=arguments, keywords=[])

    def sequence(self, closing: str) -> list[ast.expr]:
        """Comma-separated expressions up to `closing` (a trailing comma is allowed in
        a braced list only, as C++)."""
        items: list[ast.expr] = []
        while not self.at(closing):
            items.append(self.expression())
            if not self.at(","):
                break
            self.take()
            if self.at(closing) and closing != "}":
                raise self.error(self.peek())
        self.expect(closing)
        return items

    def primary(self) -> ast.expr | TemplateName:
        token = self.take()
        if token.kind == "number":
            try:
                return ast.Constant(value=number_value(token.text))
            except ValueError:  # more digits than Python converts
                raise CodegenError(
                    f"{self.what} has a number of {len(token.text):,} digits"
                ) from None
        if token.kind == "string":
            return ast.Constant(value=string_value(token.text, self.what))
        if token.kind == "name":
            name = token.text.removeprefix("::")
            if name.rsplit("::", 1)[-1] in TEMPLATES and self.at("<"):
                return TemplateName(name, self.template_arguments())
            return ast.Name(id=name, ctx=ast.Load())
        if token.text == "(":
            inner = self.expression()
            self.expect(")")
            return inner
        if token.text == "{":
            items = self.sequence("}")
            if len(items) == 1 and isinstance(items[0], ast.List):
                return items[0]  # {{a, b}}: the braces of an initializer
            return ast.List(elts=items, ctx=ast.Load())
        if token.text == "[":
            raise CodegenError(f"{self.what} may not contain a lambda")
        raise self.error(token)

    def template_arguments(self) -> list[str]:
        """`<T, U<V>, 0>` as the texts of its top-level arguments."""
        self.expect("<")
        arguments: list[str] = []
        current: list[str] = []
        nesting = 0
        while True:
            token = self.take()
            if token.kind == "end":
                raise self.error(token)
            if token.text == "<":
                nesting += 1
            elif token.text == ">" and nesting == 0:
                arguments.append("".join(current))
                return arguments
            elif token.text == ">":
                nesting -= 1
            elif token.text == "," and nesting == 0:
                arguments.append("".join(current))
                current = []
                continue
            current.append(token.text)


def _binary_node(left: ast.expr, operator: ast.AST, right: ast.expr) -> ast.expr:
    if isinstance(operator, ast.boolop):
        return ast.BoolOp(op=operator, values=[left, right])
    if isinstance(operator, ast.cmpop):
        return ast.Compare(left=left, ops=[operator], comparators=[right])
    assert isinstance(operator, ast.operator)
    return ast.BinOp(left=left, op=operator, right=right)


def number_value(text: str) -> int | float:
    """A C++ number literal's value: `2.` and `1e-3` are floats, `0.5f` is 0.5, `1L` 1."""
    digits = text.rstrip("fFlLuU")
    if any(c in digits for c in ".eE"):
        return float(digits)
    return int(digits)


def string_value(text: str, what: str) -> str:
    """A C++ string literal's value (the simple escapes only)."""
    body = text[1:-1]
    out = []
    index = 0
    while index < len(body):
        char = body[index]
        if char == "\\":
            escaped = body[index + 1]
            if escaped not in _ESCAPES:
                raise CodegenError(
                    f"{what} has a string with the escape '\\{escaped}', which the "
                    "generator does not read"
                )
            out.append(_ESCAPES[escaped])
            index += 2
            continue
        out.append(char)
        index += 1
    return "".join(out)


def _none() -> ast.expr:
    return ast.Constant(value=None)


def template_call(
    function: TemplateName, arguments: list[ast.expr], what: str
) -> ast.expr:
    """A call of a template: each known one as the Python value it makes."""
    base = function.name.rsplit("::", 1)[-1]
    types = function.arguments
    if base == "get" and len(types) == 1 and types[0].isdigit() and len(arguments) == 1:
        index = ast.Constant(value=int(types[0]))
        return ast.Subscript(value=arguments[0], slice=index, ctx=ast.Load())
    if base in ("tuple", "make_tuple"):
        if not arguments:  # std::tuple<Tensor, Tensor>(): undefined gradients
            return ast.Tuple(elts=[_none() for _ in types], ctx=ast.Load())
        return ast.Tuple(elts=arguments, ctx=ast.Load())
    if base == "vector" and len(arguments) in (1, 2):
        # std::vector<T>(n, v): n copies of v (undefined tensors without v)
        value = arguments[1] if len(arguments) == 2 else _none()
        return ast.BinOp(
            left=ast.List(elts=[value], ctx=ast.Load()),
            op=ast.Mult(),
            right=arguments[0],
        )
    if base in ("optional", "OptionalArrayRef", "ArrayRef") and len(arguments) == 1:
        return arguments[0]  # a conversion: the value itself
    raise CodegenError(
        f"{what} calls the C++ template {function.name}<{', '.join(types)}> in a way "
        "the generator does not read"
    )


def parse_cpp(text: str, what: str, max_depth: int) -> ast.Expression:
    """A C++ formula as a Python expression tree (names still as C++ spells them)."""
    return CppParser(text, what, max_depth).parse()
