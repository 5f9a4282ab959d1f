"""Forward-mode AD of an operator as variable_type.py prints it: which inputs carry
tangents and the JVP expression of each output (`ForwardADIR`).
"""

from __future__ import annotations

from .formulas import python_identifier
from .forward_formulas import forward_expression
from .model import DifferentiabilityInfo, ForwardDerivative, ForwardKind, NativeFunction
from .schema import Argument
from .types import python_type
from .ir_autograd import _output_expressions
from .ir_views import ForwardADIR, ForwardIR, _is_inplace, _returns_list


def _forward_inputs(
    function: NativeFunction, info: DifferentiabilityInfo | None
) -> list[Argument]:
    """The tensor inputs that can carry a tangent."""
    skipped = set(info.non_differentiable) if info else set()
    return [
        a
        for a in function.arguments
        if a.type.is_tensor_like() and a.name not in skipped
    ]


def _has_tangent(argument: Argument) -> str:
    name = python_identifier(argument.name)
    if argument.type.is_list_like() is not None:
        return f"any(t._fw_grad is not None for t in {name})"
    if argument.type.is_nullable():
        return f"({name} is not None and {name}._fw_grad is not None)"
    return f"{name}._fw_grad is not None"


def _forward_ad_ir(
    function: NativeFunction,
    info: DifferentiabilityInfo | None,
    user: frozenset[str] = frozenset(),
) -> ForwardADIR | None:
    """The JVPs of an operator, or a refusal when it has a backward but no forward.
    `user`: the names of the package's kernels module, called through it."""
    if info is not None and info.op is None and not info.forward_derivatives:
        return None  # no differentiable output
    inputs = _forward_inputs(function, info)
    if not inputs or function.numpy is None:
        return None
    if info is None or not info.forward_derivatives:
        return ForwardADIR(" or ".join(_has_tangent(a) for a in inputs), (), False)
    inplace = _is_inplace(function)
    # An in-place operator's formulas are its functional operator's: `result` is self.
    outputs = (
        {"result": "self"}
        if inplace
        else _output_expressions(function, function.output_names)
    )
    jvps = []
    required: dict[str, Argument] = {}
    keeps_original_self = False
    for forward in info.forward_derivatives:
        # A key naming several outputs (`sign, logabsdet: slogdet_jvp(...)`) gives a
        # tuple: one JVP per output, each taking its element.
        for index, target in enumerate(forward.var_names):
            element = index if len(forward.var_names) > 1 else None
            jvp, used = _jvp_ir(
                function, info, forward, inputs, outputs, user, target, element
            )
            jvps.append(jvp)
            required.update(used)
            keeps_original_self |= (
                inplace and "self" in used and "self_p" in jvp.expression
            )
    if not jvps:
        return ForwardADIR(" or ".join(_has_tangent(a) for a in inputs), (), False)
    condition = " or ".join(_has_tangent(a) for a in required.values()) or "False"
    return ForwardADIR(condition, tuple(jvps), keeps_original_self)


def _jvp_ir(
    function: NativeFunction,
    info: DifferentiabilityInfo,
    forward: ForwardDerivative,
    inputs: list[Argument],
    outputs: dict[str, str],
    user: frozenset[str] = frozenset(),
    target: str = "result",
    element: int | None = None,
) -> tuple[ForwardIR, dict[str, Argument]]:
    differentiable = {a.name: a for a in inputs}
    expression, used = _jvp_expression(function, forward, differentiable, user)
    if element is not None:
        expression = f"({expression})[{element}]"
    parameters, call = _jvp_signature(function, differentiable, outputs)
    ir = ForwardIR(
        function_name=f"{function.identifier}_jvp"
        + ("" if target in ("result", "self") else f"_{target}"),
        formula=f"{', '.join(forward.var_names)}: {forward.original}",
        parameters=", ".join(parameters),
        expression=expression,
        call_arguments=", ".join(call),
        output=outputs.get(target, "result"),
        list_output=_returns_list(function),
    )
    return ir, used


def _jvp_expression(
    function: NativeFunction,
    forward: ForwardDerivative,
    differentiable: dict[str, Argument],
    user: frozenset[str],
) -> tuple[str, dict[str, Argument]]:
    """The JVP's expression, and the differentiable inputs whose tangents it uses: the
    operator itself on the tangents (auto_linear), or the rewritten formula."""
    if forward.kind is ForwardKind.auto_linear:
        arguments = ", ".join(
            (
                f"{python_identifier(a.name)}_t"
                if a.name in differentiable
                else python_identifier(a.name)
            )
            for a in function.arguments
        )
        expression = f"operators.{_functional_identifier(function)}.call({arguments})"
        return expression, dict(differentiable)
    formula = forward.formula  # auto_element_wise's is derived at load
    assert formula is not None, "forward formulas are analysed at load"
    scalars = {a.name for a in function.arguments if not a.type.is_tensor_like()}
    # A non-differentiable tensor argument (an index, a mask) is passed as itself;
    # formulas may call it `x` or, as PyTorch's do, `x_p`.
    plain_tensors = {
        f"{a.name}_p": python_identifier(a.name)
        for a in function.arguments
        if a.type.is_tensor_like() and a.name not in differentiable
    }
    expression = forward_expression(formula, scalars, plain_tensors, user)
    used = {n: a for n, a in differentiable.items() if f"{n}_t" in formula.names}
    return expression, used


def _jvp_signature(
    function: NativeFunction,
    differentiable: dict[str, Argument],
    outputs: dict[str, str],
) -> tuple[list[str], list[str]]:
    """The JVP function's parameters (x_p and x_t per differentiable input, the other
    arguments, the outputs) and the arguments the autograd kernel calls it with."""
    parameters, call = [], []
    for argument in function.arguments:
        name = python_identifier(argument.name)
        if argument.name in differentiable:
            annotation = (
                "list[Tensor]" if argument.type.is_list_like() is not None else "Tensor"
            )
            parameters += [f"{name}_p: {annotation}", f"{name}_t: {annotation}"]
            primal = (
                "original_self"
                if _is_inplace(function) and argument.name == "self"
                else name
            )
            if argument.type.is_list_like() is not None:
                tangent = f"[tangent_or_zeros(t) for t in {name}]"
            else:
                tangent = f"tangent_or_zeros({name})"
            call += [primal, tangent]
        else:
            parameters.append(f"{name}: {python_type(argument)}")
            call.append(name)
    for output_name, expression_in_wrapper in outputs.items():
        parameters.append(f"{python_identifier(output_name)}: Any")
        call.append(expression_in_wrapper)
    return parameters, call


def _functional_identifier(function: NativeFunction) -> str:
    """auto_linear re-runs the functional operator on the tangents (`add` for `add_`)."""
    if not _is_inplace(function):
        return function.identifier
    name = function.schema.name
    return (
        f"{name.name.base}_{name.overload_name}"
        if name.overload_name
        else name.name.base
    )
