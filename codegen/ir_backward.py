"""A Backward node as functions.py prints it: its saved variables and each gradient
formula rewritten into the code that computes it (`BackwardIR`).
"""

from __future__ import annotations

import ast

from .array_formulas import (
    Twins,
    Untranslatable,
    bind_names,
    inline_no_ops,
    translate,
)
from .formulas import SavedAttribute, SavedKind, python_identifier
from .model import DifferentiabilityInfo
from .ir_views import (
    ArrayFormIR,
    BackwardIR,
    FormulaIR,
    _is_tensor_list,
    edge_function,
)


def _backward_ir(info: DifferentiabilityInfo, twins: Twins) -> BackwardIR:
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
        array_form=None if list_inputs else _array_form_ir(info, twins),
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


def _array_form_ir(info: DifferentiabilityInfo, twins: Twins) -> ArrayFormIR | None:
    """The node's array form, or None when a formula of it has none (or the node
    saves a Tensor[]): then apply always runs the tensor form."""
    assert info.op is not None
    saved = info.saved
    if any(a.kind is SavedKind.TENSOR_LIST for a in saved) or any(
        d.formula.is_not_implemented for d in info.derivatives
    ):
        return None
    tensors = [a for a in saved if a.kind is not SavedKind.VALUE]
    # In apply_arrays a saved tensor's array is the local `saved_<name>`, a saved
    # value is read from the node.
    names = {
        python_identifier(a.local): (
            f"self.{a.name}"
            if a.kind is SavedKind.VALUE
            else f"saved_{python_identifier(a.local)}"
        )
        for a in saved
    }
    names["retain_variables"] = "self.retain_variables"
    formulas = _array_formulas(info, twins, names)
    if formulas is None:
        return None
    unpacked = tuple(
        (f"saved_{python_identifier(a.local)}", _saved_getter_expression(a))
        for a in tensors
    )
    # apply_arrays reads each saved tensor's array in one step (saved_array).
    saved_arrays = tuple(
        (f"saved_{python_identifier(a.local)}", f"self.{a.name}") for a in tensors
    )
    locals_ = [local for local, _ in unpacked]
    tensor_arguments = [
        (
            python_identifier(a.local),
            (
                f"self.{a.name}"
                if a.kind is SavedKind.VALUE
                else f"saved_{python_identifier(a.local)}"
            ),
        )
        for a in saved
    ]
    if any(d.formula.uses_retain_variables for d in info.derivatives):
        tensor_arguments.append(("retain_variables", "self.retain_variables"))
    return ArrayFormIR(
        unpacked=unpacked,
        tensor_arguments=tuple(tensor_arguments),
        unpacked_tuple=_tuple_display(locals_) if locals_ else "()",
        saved_arguments=(
            _tuple_display([f"array_of({local})" for local in locals_])
            if locals_
            else ""
        ),
        saved_arrays=saved_arrays,
        needs_input_grad=_needs_input_grad(len(info.args_with_derivatives)),
        formulas=formulas,
    )


def _needs_input_grad(inputs: int) -> str:
    """apply_arrays' `task_needs_input_grad()`: for up to three inputs, and no exec
    info (the common case), read off the node's flat edges without the call."""
    if inputs > 3:
        return "self.task_needs_input_grad()"
    edges = ", ".join(f"{edge_function(i, 'self')} is not None" for i in range(inputs))
    comma = "," if inputs == 1 else ""
    return (
        f"({edges}{comma}) if task_state.exec_info is None "
        "else self.task_needs_input_grad()"
    )


def _array_formulas(
    info: DifferentiabilityInfo, twins: Twins, names: dict[str, str]
) -> tuple[FormulaIR, ...] | None:
    """Each formula translated to array twins, its names bound as apply_arrays has
    them (its results stay arrays: the engine hands them on, apply wraps them); None
    when a formula has no array form."""
    formulas = []
    for formula in _formula_irs(info):
        try:
            expression = inline_no_ops(translate(formula.expression, info.saved, twins))
        except Untranslatable:
            return None
        single = len(formula.indices) == 1
        formulas.append(
            FormulaIR(
                indices=formula.indices,
                var_names=formula.var_names,
                expression=_guardable(bind_names(expression, names), single),
                wrap_any_grad_defined=formula.wrap_any_grad_defined,
                uses_grad_input_mask=formula.uses_grad_input_mask,
                wrap_results=not single,
            )
        )
    return tuple(formulas)


def _tuple_display(names: list[str]) -> str:
    if len(names) == 1:
        return f"({names[0]},)"
    return f"({', '.join(names)})"


def _snake(camel: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in camel)
