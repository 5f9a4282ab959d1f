"""Forward derivatives (derivatives.yaml `result:` formulas): `analyse_forward` checks
one at load into an `AnalysedForward`; `forward_expression` rewrites it for the
forward-AD code of the autograd kernel; `element_wise_forward` derives one from the
backward formula of an element-wise operator.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Iterable
from dataclasses import dataclass, field

from .errors import CodegenError
from .cpp_spelling import parse_formula
from .expressions import QualifyUserNames, Unknowns, check_node_types
from .formulas import (
    ArgumentInfo,
    FormulaNames,
    LIVE_SUGAR,
    METADATA_SUGAR,
    SCALAR_METHODS,
    _check_method,
    _check_receiver,
    _formula_methods,
    _formula_unknowns,
)


@dataclass(frozen=True)
class AnalysedForward:
    """A checked forward (JVP) formula, parsed once at load: its text, its tree (never
    changed: rendering rewrites a copy) and the names it uses."""

    text: str
    tree: ast.Expression = field(compare=False, repr=False)
    names: frozenset[str] = frozenset()


def analyse_forward(
    text: str,
    arguments: dict[str, ArgumentInfo],
    differentiable: Iterable[str],
    outputs: tuple[str, ...],
    names: FormulaNames,
    primal: frozenset[str] = frozenset(),
) -> AnalysedForward:
    """Check a forward (JVP) formula: differentiable inputs as x_p / x_t, never the bare
    name; a non-differentiable tensor (an index, a mask) as x or x_p. The inputs of
    `primal` (tensors without a gradient formula in the entry) may be read bare, as
    PyTorch's formulas do: `x` is x_p."""
    tree = parse_formula(text, "forward formula", names)
    if primal:
        tree = _PrimalNames(primal).visit(tree)
    _check_forward_tree(tree, arguments, differentiable, outputs, names)
    used = frozenset(n.id for n in ast.walk(tree) if isinstance(n, ast.Name))
    return AnalysedForward(text, tree, used)


class _PrimalNames(ast.NodeTransformer):
    """The bare names of `primal` inputs as their primal values: `x` -> `x_p`."""

    def __init__(self, primal: frozenset[str]) -> None:
        self.primal = primal

    def visit_Call(self, node: ast.Call) -> ast.AST:
        node.args = [self.visit(a) for a in node.args]  # not the called name
        for keyword_node in node.keywords:
            keyword_node.value = self.visit(keyword_node.value)
        if isinstance(node.func, ast.Attribute):
            node.func.value = self.visit(node.func.value)
        return node

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in self.primal:
            return ast.copy_location(ast.Name(id=f"{node.id}_p", ctx=ast.Load()), node)
        return node


def _check_forward_tree(
    tree: ast.Expression,
    arguments: dict[str, ArgumentInfo],
    differentiable: Iterable[str],
    outputs: tuple[str, ...],
    names: FormulaNames,
) -> None:
    check_node_types(tree, "a forward formula")
    allowed_values = _forward_values(arguments, set(differentiable), outputs)
    scalars, non_tensors = _forward_non_tensors(arguments)
    methods = frozenset(
        _formula_methods(names) | set(SCALAR_METHODS) | set(METADATA_SUGAR)
    )
    unknowns = _formula_unknowns(" in a forward formula")
    called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            _check_forward_call(node, names, scalars, non_tensors, methods, unknowns)
        elif isinstance(node, ast.Attribute) and id(node) not in called:
            raise CodegenError(
                f"attribute access '{ast.unparse(node)}' is not allowed; call a method "
                "(e.g. x.dim()) or a helper"
            )
        elif isinstance(node, ast.Name) and id(node) not in called:
            _check_forward_value(node, arguments, allowed_values, names, unknowns)
    unknowns.raise_if_any()


def _forward_values(
    arguments: dict[str, ArgumentInfo],
    differentiable: set[str],
    outputs: tuple[str, ...],
) -> set[str]:
    """The names a forward formula may read: the outputs, x_p / x_t of a differentiable
    input, and a non-differentiable argument (and x_p of a tensor one)."""
    allowed_values = set(outputs)
    for name in differentiable:
        allowed_values |= {f"{name}_p", f"{name}_t"}
    for name, info in arguments.items():
        if name not in differentiable:
            allowed_values.add(name)
            if info.is_tensor or info.is_tensor_list:
                allowed_values.add(f"{name}_p")
    return allowed_values


def _forward_non_tensors(
    arguments: dict[str, ArgumentInfo],
) -> tuple[set[str], dict[str, str]]:
    """Names that are not tensors, so have no methods (Scalars have conj() only): the
    Scalar arguments, and every other non-tensor name with what it is."""
    non_tensors = {}
    scalars = set()
    for name, info in arguments.items():
        if info.is_scalar:
            scalars.add(name)
        elif info.is_tensor_list:
            kind = f"an argument of type {info.python_type}"
            non_tensors.update({name: kind, f"{name}_p": kind, f"{name}_t": kind})
        elif not info.is_tensor:
            non_tensors[name] = f"an argument of type {info.python_type}"
    return scalars, non_tensors


def _check_forward_call(
    node: ast.Call,
    names: FormulaNames,
    scalars: set[str],
    non_tensors: dict[str, str],
    methods: frozenset[str],
    unknowns: Unknowns,
) -> None:
    """A call in a forward formula: of a helper or operator by name, of a method on a
    tensor, or of a Scalar's own method."""
    function = node.func
    if isinstance(function, ast.Name) and function.id not in names.callables:
        unknowns.add("helper", function.id, names.callables, function)
    elif (
        isinstance(function, ast.Name)
        and function.id in names.user
        and function.id in names.functions
    ):
        raise CodegenError(
            f"'{function.id}' is both an operator of this package and a "
            f"function in {names.user_file}'s __all__, so the call is "
            "ambiguous; rename the function"
        )
    elif isinstance(function, ast.Attribute):
        receiver, method = function.value, function.attr
        if isinstance(receiver, ast.Name) and receiver.id in scalars:
            if method not in SCALAR_METHODS or node.args or node.keywords:
                raise CodegenError(
                    f"'{receiver.id}' is a Scalar; the only method allowed on it is "
                    + ", ".join(f"{m}()" for m in sorted(SCALAR_METHODS))
                )
            return
        _check_receiver(receiver, "a forward formula", non_tensors)
        _check_method(function, "a forward formula", unknowns, methods)
    elif not isinstance(function, ast.Name):
        raise CodegenError(
            "only helpers, operators and tensor methods may be called, not "
            f"'{ast.unparse(function)}'"
        )


def _check_forward_value(
    node: ast.Name,
    arguments: dict[str, ArgumentInfo],
    allowed_values: set[str],
    names: FormulaNames,
    unknowns: Unknowns,
) -> None:
    """A name a forward formula reads (not calls)."""
    name = node.id
    if name in allowed_values:
        return
    if name in arguments and arguments[name].is_tensor:
        raise CodegenError(
            f"using the base name of the {name} argument which is ambiguous. You "
            f"should use {name}_p to access the primal value and {name}_t to "
            "access the tangent."
        )
    if name in names.callables:
        raise CodegenError(f"'{name}' must be called, not used as a value")
    unknowns.add("name", name, allowed_values | names.callables, node)


# -- forward (JVP) formulas ---------------------------------------------------------------


class _LiveRewriter(ast.NodeTransformer):
    """Sugar and Scalar methods as code over live values (for generated JVPs)."""

    def __init__(self, scalars: set[str], renames: dict[str, str]) -> None:
        self.scalars = scalars
        self.renames = renames

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in self.renames:
            return ast.copy_location(
                ast.Name(id=self.renames[node.id], ctx=ast.Load()), node
            )
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        function = node.func
        if isinstance(function, ast.Attribute) and not node.args and not node.keywords:
            receiver = self.visit(function.value)
            if function.attr in LIVE_SUGAR:
                return ast.copy_location(LIVE_SUGAR[function.attr](receiver), node)
            if (
                isinstance(function.value, ast.Name)
                and function.value.id in self.scalars
                and function.attr in SCALAR_METHODS
            ):
                call = ast.Call(
                    func=ast.Name(id=SCALAR_METHODS[function.attr], ctx=ast.Load()),
                    args=[receiver],
                    keywords=[],
                )
                return ast.copy_location(call, node)
            function.value = receiver
            return node
        self.generic_visit(node)
        return node


def forward_expression(
    formula: AnalysedForward,
    scalars: set[str],
    renames: dict[str, str] | None = None,
    user: frozenset[str] = frozenset(),
) -> str:
    """A checked forward formula as Python over the JVP function's parameters; calls of
    the user's kernels module's functions (`user`) go through the module."""
    tree = copy.deepcopy(formula.tree)
    rewritten = _LiveRewriter(scalars, renames or {}).visit(tree)
    if user:
        rewritten = QualifyUserNames(user, calls_only=True).visit(rewritten)
    ast.fix_missing_locations(rewritten)
    return ast.unparse(rewritten)


def element_wise_forward(
    backward: str, input_name: str, names: FormulaNames | None = None
) -> str:
    """PyTorch's auto_element_wise: the JVP from the backward formula of a function with
    a diagonal Jacobian, `(backward with grad -> x_t.conj() and x -> x_p).conj()`."""
    tree = parse_formula(backward, "formula", names)

    class Substitute(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:
            if node.id == "grad":
                conj = ast.Attribute(
                    value=ast.Name(id=f"{input_name}_t", ctx=ast.Load()),
                    attr="conj",
                    ctx=ast.Load(),
                )
                return ast.copy_location(
                    ast.Call(func=conj, args=[], keywords=[]), node
                )
            if node.id == input_name:
                return ast.copy_location(
                    ast.Name(id=f"{input_name}_p", ctx=ast.Load()), node
                )
            return node

    body = Substitute().visit(tree).body
    wrapped = ast.Call(
        func=ast.Attribute(value=body, attr="conj", ctx=ast.Load()),
        args=[],
        keywords=[],
    )
    return ast.unparse(ast.fix_missing_locations(ast.Expression(body=wrapped)))
