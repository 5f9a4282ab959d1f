"""A Backward node as functions.py prints it: its saved variables and each gradient
formula rewritten into the code that computes it (`BackwardIR`).
"""

from __future__ import annotations

import ast

from .formulas import SavedAttribute, SavedKind, python_identifier
from .model import DifferentiabilityInfo
from .ir_views import BackwardIR, FormulaIR, _is_tensor_list


def _backward_ir(info: DifferentiabilityInfo) -> BackwardIR:
    assert info.op is not None
    saved = info.saved
    list_inputs = [
        n for n in info.args_with_derivatives if _is_tensor_list(info.function, n)
    ]
    slots = tuple(a.name for a in saved) + tuple(f"{n}_size_" for n in list_inputs)
    saved_variable_slots = tuple(a.name for a in saved if a.kind is not SavedKind.VALUE)
    apply_arguments = _apply_arguments(saved)
    parameters = [
        "grads: Sequence[Tensor | None]",
        "needs_input_grad: tuple[bool, ...]",
        *(f"{python_identifier(a.local)}: {a.python_type}" for a in saved),
    ]
    uses_retain_variables = any(
        d.formula.uses_retain_variables for d in info.derivatives
    )
    if uses_retain_variables:
        # False when the engine frees the graph after this node (retain_graph=False).
        slots += ("retain_variables",)
        apply_arguments.append(("retain_variables", "self.retain_variables"))
        parameters.append("retain_variables: bool")
    return BackwardIR(
        class_name=info.op,
        function_name=f"{info.op[0].lower()}{_snake(info.op[1:])}_apply",
        schema=str(info.function.schema),
        doc_lines=(
            f"Backward of ``{info.function.schema}``.",
            "",
            *(f"{', '.join(d.var_names)}: {d.original}" for d in info.derivatives),
        ),
        slots=slots,
        saved_variable_slots=saved_variable_slots,
        getters=_saved_getters(saved),
        num_inputs=len(info.args_with_derivatives),
        apply_arguments=tuple(apply_arguments),
        parameters=", ".join(parameters),
        uses_grad=any(d.formula.uses_grad for d in info.derivatives),
        uses_retain_variables=uses_retain_variables,
        input_sizes=tuple(
            f"self.{n}_size_" if n in list_inputs else "1"
            for n in info.args_with_derivatives
        ),
        formulas=_formula_irs(info),
    )


def _saved_getter_expression(attribute: SavedAttribute) -> str:
    """How the node reads a saved thing back: a plain value as is, a SavedVariable
    unpacked (checked against in-place changes)."""
    if attribute.kind is SavedKind.VALUE:
        return f"self.{attribute.name}"
    return f"unpack_saved(self.{attribute.name}, self)"


def _saved_getters(
    saved: tuple[SavedAttribute, ...],
) -> tuple[tuple[str, str, str], ...]:
    """The `_saved_<local>` properties: (property name, expression, type)."""
    return tuple(
        (f"_saved_{a.local}", _saved_getter_expression(a), a.python_type)
        for a in saved
        if a.has_getter
    )


def _apply_arguments(saved: tuple[SavedAttribute, ...]) -> list[tuple[str, str]]:
    """What the node passes its apply function: (parameter, expression) per saved thing."""
    return [(python_identifier(a.local), _saved_getter_expression(a)) for a in saved]


def _guardable(expression: str, guarded: bool) -> str:
    """The formula as the template's `EXPR if any_grad_defined else None` may hold it:
    a conditional formula (`a if c else b`, already unparsed from its checked AST, which
    drops parentheses) is parenthesized, or the guard would bind to its else branch."""
    top = ast.parse(expression, mode="eval").body
    if guarded and isinstance(top, (ast.IfExp, ast.Lambda, ast.NamedExpr)):
        return f"({expression})"
    return expression


def _formula_irs(info: DifferentiabilityInfo) -> tuple[FormulaIR, ...]:
    """Each gradient formula with the edges (input indices) it computes."""
    edge_index = {name: i for i, name in enumerate(info.args_with_derivatives)}
    formulas = []
    for derivative in info.derivatives:
        indices = tuple(edge_index[n] for n in derivative.var_names)
        single = len(indices) == 1
        formulas.append(
            FormulaIR(
                indices=indices,
                var_names=", ".join(derivative.var_names),
                expression=_guardable(derivative.formula.expression, single),
                wrap_any_grad_defined=single
                and not derivative.formula.is_not_implemented,
                uses_grad_input_mask=derivative.formula.uses_grad_input_mask,
            )
        )
    return tuple(formulas)


def _snake(camel: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in camel)
