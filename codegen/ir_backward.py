"""A Backward node as functions.py prints it: its saved variables and each gradient
formula rewritten into the code that computes it (`BackwardIR`).
"""

from __future__ import annotations

from .formulas import SavedKind, python_identifier
from .model import DifferentiabilityInfo
from .ir_views import BackwardIR, FormulaIR, _is_tensor_list


def _backward_ir(info: DifferentiabilityInfo) -> BackwardIR:
    assert info.op is not None
    edge_index = {name: i for i, name in enumerate(info.args_with_derivatives)}
    saved = info.saved
    list_inputs = [
        n for n in info.args_with_derivatives if _is_tensor_list(info.function, n)
    ]
    slots = tuple(a.name for a in saved) + tuple(f"{n}_size_" for n in list_inputs)
    saved_variable_slots = tuple(a.name for a in saved if a.kind is not SavedKind.VALUE)
    getters = []
    for attribute in saved:
        if not attribute.has_getter:
            continue
        if attribute.kind is SavedKind.VALUE:
            expression = f"self.{attribute.name}"
        else:
            expression = f"unpack_saved(self.{attribute.name}, self)"
        getters.append((f"_saved_{attribute.local}", expression, attribute.python_type))
    apply_arguments = []
    for attribute in saved:
        local = python_identifier(attribute.local)
        if attribute.kind is SavedKind.VALUE:
            apply_arguments.append((local, f"self.{attribute.name}"))
        else:
            apply_arguments.append(
                (local, f"unpack_saved(self.{attribute.name}, self)")
            )
    formulas = []
    for derivative in info.derivatives:
        indices = tuple(edge_index[n] for n in derivative.var_names)
        single = len(indices) == 1
        formulas.append(
            FormulaIR(
                indices=indices,
                var_names=", ".join(derivative.var_names),
                expression=derivative.formula.expression,
                wrap_any_grad_defined=single
                and not derivative.formula.is_not_implemented,
                uses_grad_input_mask=derivative.formula.uses_grad_input_mask,
            )
        )
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
        getters=tuple(getters),
        num_inputs=len(info.args_with_derivatives),
        apply_arguments=tuple(apply_arguments),
        parameters=", ".join(parameters),
        uses_grad=any(d.formula.uses_grad for d in info.derivatives),
        uses_retain_variables=uses_retain_variables,
        input_sizes=tuple(
            f"self.{n}_size_" if n in list_inputs else "1"
            for n in info.args_with_derivatives
        ),
        formulas=tuple(formulas),
    )


def _snake(camel: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in camel)
