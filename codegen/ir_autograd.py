"""The autograd kernel of an operator as variable_type.py prints it: the guard, what
the Backward node saves, the outputs it records (`AutogradIR`), or the error of an
operator without a derivative.
"""

from __future__ import annotations

import ast

from .formulas import SavedAttribute, SavedKind, python_identifier
from .model import DifferentiabilityInfo, NativeFunction
from .ir_views import (
    AutogradIR,
    SaveStatement,
    _is_inplace,
    _is_optional,
    _is_tensor_list,
    _returns_list,
    edge_function,
)


def _guard_for(
    attribute: SavedAttribute, info: DifferentiabilityInfo, edge_index: dict[str, int]
) -> str | None:
    """Save a tensor only if the one formula that uses it will run (PyTorch's guard)."""
    if attribute.kind is not SavedKind.TENSOR or len(info.args_with_derivatives) < 2:
        return None
    users = [
        d
        for d in info.derivatives
        if any(s.name == attribute.name for s in d.formula.saved)
    ]
    if (
        len(users) != 1
        or len(users[0].var_names) != 1
        or "backward" in info.function.name
    ):
        return None
    # grad_fn.should_compute_output(i), read off the edges just stored in the node.
    return f"{edge_function(edge_index[users[0].var_names[0]], 'grad_fn')} is not None"


def _on_output(expression: str, name: str, output: str) -> str:
    """A saved value's expression (`tuple(result.shape)`) read from the wrapper's
    output (`result[1]`): computed after the kernel, as the output's SavedVariable."""
    replacement = ast.parse(output, mode="eval").body
    identifier = python_identifier(name)

    class _Output(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:
            return replacement if node.id == identifier else node

    tree = _Output().visit(ast.parse(expression, mode="eval"))
    return ast.unparse(ast.fix_missing_locations(tree))


def _output_expressions(
    function: NativeFunction, info_outputs: tuple[str, ...]
) -> dict[str, str]:
    """How the wrapper refers to each output: `result`, `result[i]`, or for an
    in-place operator `self` under the functional operator's output names."""
    if _is_inplace(function):
        return {name: "self" for name in info_outputs}
    names = function.output_names
    if len(names) == 1:
        return {names[0]: "result"}
    return {name: f"result[{i}]" for i, name in enumerate(names)}


def _saved_value(
    attribute: SavedAttribute,
    function: NativeFunction,
    outputs: dict[str, str],
    inplace: bool,
) -> tuple[str, bool]:
    """What the wrapper stores for one saved attribute, and whether it is stored after
    the kernel runs (an output, or a value computed from one)."""
    source = python_identifier(attribute.source)
    kind = attribute.kind
    if kind is SavedKind.TENSOR and inplace and attribute.source == "self":
        # The formula means self before the kernel overwrote it (original_self).
        return "SavedVariable.input(self.clone())", False
    if kind is SavedKind.TENSOR and _is_optional(function, attribute.source):
        return f"None if {source} is None else SavedVariable.input({source})", False
    if kind is SavedKind.TENSOR:
        # An input is kept plain (no SavedVariable object) unless hooks are open.
        return f"SavedVariable.input({source})", False
    if kind is SavedKind.TENSOR_LIST:
        return f"SavedVariableList({source})", False
    if kind is SavedKind.OUTPUT:
        return f"SavedVariable({outputs[attribute.source]}, True)", True
    if attribute.source in outputs and not inplace:
        # An output's sizes (`result.sym_sizes()`): known after the kernel runs.
        output = outputs[attribute.source]
        return _on_output(attribute.save_expression, attribute.source, output), True
    if attribute.save_expression == f"{source}.dtype" and _is_plain_tensor(
        function, attribute.source
    ):
        # `self.dtype` without the property's call: the dtype of the array's dtype.
        return f"SCALAR_TYPES[{source}._data.dtype]", False
    return attribute.save_expression, False


def _fast_value(value: str, attribute: SavedAttribute) -> str | None:
    """SavedVariable.input(x)'s common case inline, for the fast paths: x itself when
    it has no version counter (version 0) and no saved-tensor hooks are open."""
    source = python_identifier(attribute.source)
    if value != f"SavedVariable.input({source})":
        return None
    return (
        f"{source} if {source}._version_counter is None and not OPEN_HOOKS[0] "
        f"else {value}"
    )


def _is_plain_tensor(function: NativeFunction, name: str) -> bool:
    """Whether `name` is a (non-optional, non-list) Tensor argument of `function`."""
    for argument in function.arguments:
        if argument.name == name:
            type_ = argument.type
            return (
                type_.is_tensor_like()
                and type_.is_list_like() is None
                and not type_.is_nullable()
            )
    return False


def _autograd_ir(info: DifferentiabilityInfo) -> AutogradIR:
    function = info.function
    edge_index = {name: i for i, name in enumerate(info.args_with_derivatives)}
    outputs = _output_expressions(function, _formula_outputs(info))
    inplace = _is_inplace(function)
    input_saves: list[SaveStatement] = []
    output_saves: list[SaveStatement] = []
    for name in info.args_with_derivatives:
        if _is_tensor_list(function, name):
            # How many edges the list took: the node needs it to find each input's range.
            identifier = python_identifier(name)
            input_saves.append(
                SaveStatement(f"grad_fn.{name}_size_", f"len({identifier})", None)
            )
    for attribute in info.saved:
        value, after_kernel = _saved_value(attribute, function, outputs, inplace)
        guard = None if after_kernel else _guard_for(attribute, info, edge_index)
        statement = SaveStatement(
            f"grad_fn.{attribute.name}", value, guard, _fast_value(value, attribute)
        )
        (output_saves if after_kernel else input_saves).append(statement)
    return AutogradIR(
        node_class=f"functions.{info.op}",
        node_constructor=f"functions.{info.op}()",
        differentiable_inputs=", ".join(
            ("*" if _is_tensor_list(function, n) else "") + python_identifier(n)
            for n in info.args_with_derivatives
        ),
        input_saves=tuple(input_saves),
        output_histories=_histories(info, outputs),
        output_saves=tuple(output_saves),
        list_output=_returns_list(function),
        edges_function=_edges_function(
            [_is_tensor_list(function, n) for n in info.args_with_derivatives]
        ),
        plain_inputs=all(
            _is_plain_tensor(function, n) for n in info.args_with_derivatives
        ),
        node_fields=_node_fields(info),
    )


def _node_fields(info: DifferentiabilityInfo) -> tuple[tuple[str, bool | None], ...]:
    """What the Backward class's `__init__` sets (functions.py.j2): every saved
    variable None, and `retain_variables` True when a formula reads it."""
    fields: list[tuple[str, bool | None]] = [
        (a.name, None) for a in info.saved if a.kind is not SavedKind.VALUE
    ]
    if any(d.formula.uses_retain_variables for d in info.derivatives):
        fields.append(("retain_variables", True))
    return tuple(fields)


def _histories(info: DifferentiabilityInfo, outputs: dict[str, str]) -> tuple[str, ...]:
    """The expressions of the differentiable outputs, which get history."""
    return tuple(
        expression
        for (name, expression), differentiable in zip(
            outputs.items(), info.differentiable_outputs
        )
        if differentiable
    )


def _edges_function(is_list: list[bool]) -> str:
    """The variable_type_utils function that collects these inputs' edges."""
    if any(is_list) or len(is_list) not in (1, 2):
        return "next_edges"
    return f"next_edges_{len(is_list)}"


def _formula_outputs(info: DifferentiabilityInfo) -> tuple[str, ...]:
    """The output names the formulas use (the functional operator's, for in-place)."""
    names = {
        a.source
        for d in info.derivatives
        for a in d.formula.saved
        if a.kind is SavedKind.OUTPUT
    }
    return tuple(sorted(names)) or info.function.output_names


def _not_implemented_ir(function: NativeFunction) -> AutogradIR | None:
    """An operator with no derivatives.yaml entry records a node that refuses backward."""
    inputs = [
        python_identifier(a.name)
        for a in function.arguments
        if a.type.is_tensor_like() and a.type.is_list_like() is None
    ]
    outputs = _output_expressions(function, function.output_names)
    histories = tuple(
        outputs[n]
        for n, r in zip(function.output_names, function.schema.returns)
        if r.type.is_tensor_like() and r.type.is_list_like() is None
    )
    if not inputs or not histories:
        return None
    return AutogradIR(
        node_class="NotImplementedBackward",
        node_constructor=f"NotImplementedBackward({function.schema.name.name.base!r})",
        differentiable_inputs=", ".join(inputs),
        input_saves=(),
        output_histories=histories,
        output_saves=(),
        history_function="set_history_if_differentiable",
        edges_function=_edges_function([False] * len(inputs)),
        plain_inputs=all(
            not a.type.is_nullable()
            for a in function.arguments
            if a.type.is_tensor_like() and a.type.is_list_like() is None
        ),
    )
