"""Python expressions from the YAML: parsing, the syntax whitelist, and kernel expressions.

Every expression of native_functions.yaml (`numpy:`) and derivatives.yaml (formulas) is
one Python expression, parsed with `ast` and walked before anything is generated:

- `check_node_types` allows only the node types of `_ALLOWED_NODES` and never a dunder
  name or attribute, `**`-unpacking or bytes;
- `check_kernel_expression` checks a `numpy:` expression against the explicit lists of
  allowed.py: which `np.NAME`, `np.linalg.NAME` and `np.fft.NAME` it may use, and which
  methods and attributes of the values it computes; never "np with any attribute chain",
  which leads to os, subprocess and pickle through numpy's own modules.

Names a check does not know are collected by `Unknowns` and reported together in one
error, each with its closest candidate, so a formula with two misspelt names needs one
run to fix, not two. formulas.py checks derivative formulas with the same pieces.
"""

from __future__ import annotations

import ast
import warnings
from collections.abc import Iterable

from .allowed import NUMPY_NAMES, NUMPY_SUBMODULES, VALUE_ATTRIBUTES, VALUE_METHODS
from .errors import CodegenError, did_you_mean, excerpt, shorten

_ALLOWED_NODES: tuple[type[ast.AST], ...] = (
    ast.Expression,
    ast.Call,
    ast.keyword,
    ast.Name,
    ast.Load,
    ast.Constant,
    ast.Attribute,
    ast.Subscript,
    ast.BinOp,
    ast.UnaryOp,
    ast.BoolOp,
    ast.Compare,
    ast.IfExp,
    ast.Tuple,
    ast.List,
    ast.Slice,
    ast.operator,
    ast.unaryop,
    ast.boolop,
    ast.cmpop,
)

_NODE_DESCRIPTIONS = {
    ast.Lambda: "a lambda",
    ast.ListComp: "a comprehension",
    ast.SetComp: "a comprehension",
    ast.DictComp: "a comprehension",
    ast.GeneratorExp: "a generator expression",
    ast.NamedExpr: "an assignment (:=)",
    ast.Starred: "*-unpacking",
    ast.JoinedStr: "an f-string",
    ast.Dict: "a dict",
    ast.Set: "a set",
    ast.Await: "await",
    ast.Yield: "yield",
    ast.YieldFrom: "yield",
}


# Every expression of the YAML is bounded here, where it is parsed, so that nothing that
# walks it afterwards (the checks, the rewriters, ast.unparse, black) recurses deeper than
# Python allows. Real formulas are short and shallow: PyTorch's longest are a few hundred
# characters, nested some 15 levels deep.
MAX_EXPRESSION_LENGTH = 10_000  # characters
MAX_EXPRESSION_DEPTH = 100  # levels of the syntax tree


def parse_expression(text: str, what: str) -> ast.Expression:
    """Parse one Python expression; a statement, bad syntax, or an expression longer or
    deeper than the bounds above is a CodegenError."""
    if not isinstance(text, str):
        raise CodegenError(
            f"{what} must be a string, got {type(text).__name__}: {excerpt(text)}"
        )
    source = text.strip()
    if not source:
        raise CodegenError(f"{what} is empty")
    if len(source) > MAX_EXPRESSION_LENGTH:
        raise CodegenError(
            f"{what} is {len(source):,} characters long; at most "
            f"{MAX_EXPRESSION_LENGTH:,} are allowed: {_SPLIT_IT_UP}"
        )
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        tree = _parse(source, what)
        depth = expression_depth(tree)
        if depth > MAX_EXPRESSION_DEPTH:
            raise CodegenError(_too_deep(what, depth))
        try:  # for the compiler's warnings (`x is 1`)
            compile(tree, "<expression>", "eval", dont_inherit=True)
        except SyntaxError:  # `await`, `yield`: refused by name in check_node_types
            pass
    if warned:  # `1if x`, `"\\d"`, `x is 1`: Python would warn on every import
        raise CodegenError(
            f"{what} makes Python warn ({warned[0].message}): {shorten(source, 200)}"
        )
    return tree


def _parse(source: str, what: str) -> ast.Expression:
    try:
        return ast.parse(source, mode="eval")
    except SyntaxError as error:
        if error.msg.startswith("too many nested"):  # parentheses, brackets
            raise CodegenError(_too_deep(what, None)) from None
        detail = error.msg
        if error.offset:
            detail += f" at column {error.offset}"
        raise CodegenError(
            f"{what} is not a Python expression ({detail}): {shorten(source, 200)}"
        ) from None
    except (RecursionError, MemoryError):  # how Python's parser gives up on depth
        raise CodegenError(_too_deep(what, None)) from None


_SPLIT_IT_UP = "split it up, e.g. into a function of your kernels module"


def _too_deep(what: str, depth: int | None) -> str:
    found = (
        "too deeply for Python's parser" if depth is None else f"{depth:,} levels deep"
    )
    return (
        f"{what} is nested {found}; at most {MAX_EXPRESSION_DEPTH} levels are allowed: "
        f"{_SPLIT_IT_UP}"
    )


def expression_depth(tree: ast.AST) -> int:
    """The depth of a syntax tree, found without recursion: `a + b` is 4 levels (the
    Expression, the BinOp, the names, their Load contexts)."""
    deepest = 0
    stack = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return deepest


def check_node_types(tree: ast.AST, what: str) -> None:
    """Reject any syntax outside the whitelist, and every dunder attribute."""
    for node in ast.walk(tree):
        if not isinstance(node, _ALLOWED_NODES):
            description = _NODE_DESCRIPTIONS.get(type(node), type(node).__name__)
            raise CodegenError(f"{what} may not contain {description}")
        if (
            isinstance(node, ast.Attribute)
            and node.attr.startswith("_")
            and node.attr.endswith("__")
        ):
            raise CodegenError(f"{what} may not use the attribute '{node.attr}'")
        if isinstance(node, ast.Name) and node.id.startswith("__"):
            raise CodegenError(f"{what} may not use the name '{node.id}'")
        if isinstance(node, ast.keyword) and node.arg is None:
            raise CodegenError(f"{what} may not contain **-unpacking")
        if isinstance(node, ast.Constant) and isinstance(node.value, bytes):
            raise CodegenError(f"{what} may not contain bytes literals")


# -- unknown names, reported together ----------------------------------------------------


class Unknowns:
    """The unknown names of one expression, raised as one CodegenError.

    `templates` maps a kind of name to its message for one name and for several, with
    `{word}` where the names go: one name reads as ever (``unknown name 'slf' in a numpy
    expression; did you mean 'self'?``); several read ``unknown names 'slf' (did you mean
    'self'?) and 'othr' (did you mean 'other'?) in a numpy expression``, and kinds are
    joined with ``; ``, all in the order of the expression's text.
    """

    def __init__(self, templates: dict[str, tuple[str, str]]) -> None:
        self.templates = templates
        # (line, column, count) -> (kind, word, candidates); each word is named once
        self.found: dict[tuple[int, int, int], tuple[str, str, list[str]]] = {}

    def add(
        self, kind: str, word: str, candidates: Iterable[str], node: ast.AST
    ) -> None:
        if all((k, w) != (kind, word) for k, w, _ in self.found.values()):
            line, column = getattr(node, "lineno", 0), getattr(node, "col_offset", 0)
            if isinstance(node, ast.Attribute):  # where the attribute's name stands
                line = node.end_lineno or line
                column = (node.end_col_offset or column) - len(node.attr)
            position = (line, column, len(self.found))
            self.found[position] = (kind, word, sorted(set(candidates)))

    def raise_if_any(self) -> None:
        entries = [self.found[position] for position in sorted(self.found)]
        if not entries:
            return
        words = tuple(word for _, word, _ in entries)
        if len(entries) == 1:
            kind, word, candidates = entries[0]
            message = self.templates[kind][0].replace("{word}", f"'{word}'")
            raise CodegenError(message + did_you_mean(word, candidates), unknown=words)
        kinds: dict[str, list[str]] = {}
        for kind, word, candidates in entries:
            kinds.setdefault(kind, []).append(f"'{word}'{_hint(word, candidates)}")
        parts = []
        for kind, listed in kinds.items():
            text = listed[0]
            if len(listed) > 1:
                text = ", ".join(listed[:-1]) + " and " + listed[-1]
            parts.append(self.templates[kind][len(listed) > 1].replace("{word}", text))
        raise CodegenError("; ".join(parts), unknown=words)


def _hint(word: str, candidates: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest candidate, or ``""``."""
    hint = did_you_mean(word, candidates)
    return f" ({hint.removeprefix('; ')})" if hint else ""


# -- calls of the user's kernels module ---------------------------------------------------


def user_function(name: ast.Name) -> ast.Attribute:
    """`f` as `user_kernels.f`: the user's function, reached through its module."""
    from .kernels_module import MODULE_NAME

    module = ast.copy_location(ast.Name(id=MODULE_NAME, ctx=ast.Load()), name)
    return ast.copy_location(
        ast.Attribute(value=module, attr=name.id, ctx=ast.Load()), name
    )


class QualifyUserNames(ast.NodeTransformer):
    """Names of the user's kernels module -> `user_kernels.NAME` (in call position only,
    for formulas, where a bare helper name is an error and a bare name is a value)."""

    def __init__(self, names: frozenset[str], calls_only: bool) -> None:
        self.names = names
        self.calls_only = calls_only

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id in self.names:
            node.func = user_function(node.func)
        return node

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if not self.calls_only and node.id in self.names:
            return user_function(node)
        return node


# -- kernel expressions -------------------------------------------------------------------

_SEE_LIST = "see 'What an expression may call' in docs/yaml-reference.md"


def check_kernel_expression(
    text: str,
    arguments: Iterable[str],
    kernel_helpers: frozenset[str],
    user: frozenset[str] = frozenset(),
    user_file: str = "",
) -> str:
    """Check a native_functions.yaml `numpy:` expression; return it normalised, with
    the functions of the user's kernels module (`user`, the `__all__` of `user_file`)
    called through it."""
    tree = parse_expression(text, "numpy expression")
    check_node_types(tree, "a numpy expression")
    allowed = frozenset(arguments)
    # An argument of the operator hides a helper of the same name, as in Python: the
    # generated kernel would call the argument's value, so such a call is refused.
    hidden = (kernel_helpers | user) & allowed
    user = frozenset(user - allowed)
    checker = _KernelChecker(allowed, kernel_helpers | user, user_file, hidden)
    checker.visit(tree)
    checker.unknowns.raise_if_any()
    if user:
        tree = QualifyUserNames(user, calls_only=False).visit(tree)
        ast.fix_missing_locations(tree)
    return ast.unparse(tree)


class _KernelChecker(ast.NodeVisitor):
    """Walks a kernel expression: names, np.NAME chains, methods and attributes."""

    def __init__(
        self,
        arguments: frozenset[str],
        helpers: frozenset[str],
        user_file: str,
        hidden: frozenset[str] = frozenset(),
    ) -> None:
        self.arguments = arguments
        self.helpers = helpers
        self.hidden = hidden
        where = "gradgen.numpy_kernels.__all__"
        if user_file:
            where += f" and {user_file}'s __all__"
        self.unknowns = Unknowns(
            {
                "name": (
                    "unknown name {word} in a numpy expression",
                    "unknown names {word} in a numpy expression",
                ),
                "helper": (
                    "no kernel helper named {word}; a numpy expression may call "
                    f"np.NAME(...) and the functions in {where}",
                    "no kernel helpers named {word}; a numpy expression may call "
                    f"np.NAME(...) and the functions in {where}",
                ),
                "numpy": (
                    "a numpy expression may not use {word} (not in its list of numpy "
                    f"names; {_SEE_LIST})",
                    "a numpy expression may not use {word} (not in its list of numpy "
                    f"names; {_SEE_LIST})",
                ),
                "method": (
                    f"a numpy expression may not call the method {{word}} ({_SEE_LIST})",
                    f"a numpy expression may not call the methods {{word}} ({_SEE_LIST})",
                ),
                "attribute": (
                    f"a numpy expression may not use the attribute {{word}} ({_SEE_LIST})",
                    f"a numpy expression may not use the attributes {{word}} ({_SEE_LIST})",
                ),
            }
        )
        self.called: set[int] = set()

    def visit_Call(self, node: ast.Call) -> None:
        function = node.func
        if isinstance(function, ast.Name):
            if function.id in self.hidden:
                raise CodegenError(
                    f"the argument {function.id!r} hides the kernel helper of the same "
                    "name that the numpy expression calls; rename the helper"
                )
            if function.id not in self.helpers:
                self.unknowns.add("helper", function.id, self.helpers, function)
        elif isinstance(function, ast.Attribute):
            if any(k.arg == "out" for k in node.keywords):
                raise CodegenError(
                    "a numpy expression may not pass out= to numpy: it would write into "
                    "an argument (an in-place kernel writes through into(out, ...))"
                )
            self.called.add(id(function))
            self.visit(function)
        else:
            raise CodegenError(
                f"a numpy expression may not call '{ast.unparse(function)}'"
            )
        for argument in node.args:
            self.visit(argument)
        for keyword_node in node.keywords:
            self.visit(keyword_node.value)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        chain = [node]  # outermost first: np.linalg.norm, np.linalg
        while isinstance(chain[-1].value, ast.Attribute):
            chain.append(chain[-1].value)
        root = chain[-1].value
        if isinstance(root, ast.Name) and root.id == "np":
            self._numpy_chain(chain[::-1])
            return
        if (
            isinstance(root, ast.Name)
            and len(chain) == 1
            and id(node) in self.called
            and root.id not in self.arguments
            and root.id not in self.helpers
        ):
            raise CodegenError(
                f"a numpy expression may call np.NAME(...), kernel helpers and "
                f"methods of its arguments, not '{ast.unparse(node)}'"
            )
        self._member(node)
        self.visit(node.value)

    def _numpy_chain(self, chain: list[ast.Attribute]) -> None:
        """`np.NAME...` or `np.SUBMODULE.NAME...`: the first one or two names from the
        lists of allowed.py, anything after them a method or attribute of that value."""
        first = chain[0].attr
        if first in NUMPY_SUBMODULES:
            if len(chain) == 1:
                raise CodegenError(
                    f"np.{first} is a module: a numpy expression may use its functions "
                    f"(np.{first}.NAME), not the module itself ({_SEE_LIST})"
                )
            second = chain[1].attr
            if second not in NUMPY_SUBMODULES[first]:
                inside = {f"np.{first}.{n}" for n in NUMPY_SUBMODULES[first]}
                self.unknowns.add("numpy", f"np.{first}.{second}", inside, chain[1])
                return
            rest = chain[2:]
        elif first in NUMPY_NAMES:
            rest = chain[1:]
        else:
            candidates = {f"np.{n}" for n in NUMPY_NAMES} | {
                f"np.{m}.{n}" for m, names in NUMPY_SUBMODULES.items() for n in names
            }
            self.unknowns.add("numpy", f"np.{first}", candidates, chain[0])
            return
        for attribute in rest:
            self._member(attribute)

    def _member(self, node: ast.Attribute) -> None:
        """`value.NAME(...)` or `value.NAME` on whatever value: from the lists only."""
        if id(node) in self.called:
            if node.attr not in VALUE_METHODS:
                self.unknowns.add("method", node.attr, VALUE_METHODS, node)
        elif node.attr not in VALUE_METHODS and node.attr not in VALUE_ATTRIBUTES:
            self.unknowns.add(
                "attribute", node.attr, VALUE_METHODS | VALUE_ATTRIBUTES, node
            )

    def visit_Name(self, node: ast.Name) -> None:
        # Reached for names that are not the root of an np.NAME chain.
        if node.id == "np":
            raise CodegenError(
                f"a numpy expression may use np only as np.NAME ({_SEE_LIST}), not alone"
            )
        if node.id not in self.arguments and node.id not in self.helpers:
            self.unknowns.add(
                "name", node.id, self.arguments | {"np"} | self.helpers, node
            )
