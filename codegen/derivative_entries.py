"""One derivatives.yaml entry read into a `DifferentiabilityInfo`: its control keys
(`DERIVATIVE_CONTROL_KEYS`), each gradient formula and forward derivative analysed
against the operator's arguments, and the checks that join them (which outputs are
differentiable, how formulas use `grads`, element-wise forward derivatives).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .errors import CodegenError, ErrorCollector, Location, did_you_mean, excerpt
from .backward_formulas import analyse_backward
from .formulas import ArgumentInfo, FormulaNames
from .forward_formulas import analyse_forward, element_wise_forward
from .names import check_backward_names
from .model import (
    Derivative,
    DifferentiabilityInfo,
    ForwardDerivative,
    ForwardKind,
    NativeFunction,
)
from .schema import BaseTy, SchemaKind
from .types import python_type
from .yaml_loader import Entry
from .native_entries import _functional_of

DERIVATIVE_CONTROL_KEYS = ("name", "output_differentiability", "dispatch")


# -- derivatives.yaml -----------------------------------------------------------------


def _argument_infos(function: NativeFunction) -> dict[str, ArgumentInfo]:
    return {
        a.name: ArgumentInfo(
            name=a.name,
            is_tensor=a.type.is_tensor_like() and a.type.is_list_like() is None,
            is_scalar=a.type.is_base_ty_like(BaseTy.Scalar),
            is_tensor_list=a.type.is_tensor_like()
            and a.type.is_list_like() is not None,
            python_type=python_type(a),
        )
        for a in function.arguments
    }


def _op_prefix(function: NativeFunction) -> str:
    """PyTorch's class-name prefix: ``sum_to_size`` -> ``SumToSize``."""
    base = function.schema.name.name.base
    camel = "".join(part.title() for part in base.split("_"))
    return (camel + "Backward").replace("ForwardBackward", "Backward")


def _differentiability_info(
    entry: Entry,
    function: NativeFunction,
    names: FormulaNames,
    op_counters: dict[str, int],
    errors: ErrorCollector,
    check_names: bool = True,
) -> DifferentiabilityInfo | None:
    """The analysed entry, or None when a key had errors (each recorded in `errors`)."""
    entry = default_dispatch(entry)
    values = dict(entry.values)
    values.pop("name")
    output_differentiability = _output_differentiability(
        values.pop("output_differentiability", None), function
    )
    arguments = _formula_arguments(function)
    if check_names:
        check_backward_names(function, values.values())
    backward: list[Derivative] = []
    forward: list[ForwardDerivative] = []
    non_differentiable: list[str] = []
    claimed: dict[str, str] = {}
    context = _EntryContext(
        function,
        arguments,
        names,
        _declared_non_differentiable(values),
        _with_formula(values, arguments),
        output_differentiability,
    )
    failed = False
    for key in sorted(values):
        location = entry.location_of(key)
        before = len(errors.errors)
        with errors.context(location, function.name):
            found = _load_key(key, values[key], context, location, claimed)
            backward.extend(found.backward)
            forward.extend(found.forward)
            non_differentiable.extend(found.non_differentiable)
            claimed.update(found.claims)
        failed = failed or len(errors.errors) > before
    if failed:
        return None
    _check_grads_use(backward, function, output_differentiability)
    _check_forward_count(forward, function)
    forward = _derive_element_wise(forward, backward, function, arguments, names)
    return DifferentiabilityInfo(
        function=function,
        op=_next_op(function, op_counters) if backward else None,
        derivatives=tuple(backward),
        forward_derivatives=tuple(forward),
        non_differentiable=tuple(non_differentiable),
        output_differentiability=output_differentiability,
        location=entry.location,
    )


def _declared_non_differentiable(values: Mapping[str, Any]) -> frozenset[str]:
    """The inputs marked `non_differentiable`, declared up front: keys are read in
    sorted order, and forward formulas may come first."""
    return frozenset(
        name.strip()
        for key, value in values.items()
        if value == "non_differentiable"
        for name in key.split(",")
    )


def _with_formula(
    values: Mapping[str, Any], arguments: Mapping[str, ArgumentInfo]
) -> frozenset[str]:
    """The inputs with a gradient formula: a forward formula reads any other tensor
    input by its bare name (PyTorch's rule: `running_mean` in native_batch_norm's)."""
    return frozenset(
        name.strip()
        for key, value in values.items()
        if value != "non_differentiable"
        for name in key.split(",")
        if name.strip() in arguments
    )


def default_dispatch(entry: Entry) -> Entry:
    """An entry with per-dispatch-key formulas as its `Default:` ones (gradgen has one
    backend, the one PyTorch's Default formulas are for); the others are not read."""
    values = entry.values
    if "dispatch" not in values:
        return entry
    dispatch = values["dispatch"]
    default = dispatch.get("Default") if isinstance(dispatch, dict) else None
    if not isinstance(default, dict) or not all(isinstance(k, str) for k in default):
        raise CodegenError(
            "dispatch: must hold a Default: mapping of formulas (gradgen has one "
            f"backend, the one of PyTorch's Default formulas), got {excerpt(dispatch)}"
        )
    beside = sorted(set(values) - {"name", "dispatch", "output_differentiability"})
    if beside:
        raise CodegenError(
            f"formulas both under dispatch: and beside it ({', '.join(beside)}): "
            "write them under dispatch: Default: only"
        )
    merged = {k: v for k, v in values.items() if k != "dispatch"}
    merged.update(default)
    lines = {**entry.key_lines, **getattr(default, "key_lines", {})}
    return Entry(merged, entry.location, lines)


def _formula_arguments(function: NativeFunction) -> dict[str, ArgumentInfo]:
    """The operator's arguments as formulas see them; two names are refused, as
    PyTorch does: generated code uses them for its own values."""
    arguments = _argument_infos(function)
    if "grad_input_mask" in arguments:
        raise CodegenError(
            f"Schema for {function.name} has an argument named grad_input_mask, but that "
            "name would be shadowed by our codegen. Please use a different name in "
            "native_functions.yaml."
        )
    if "result" in arguments:
        raise CodegenError(
            f"Schema for {function.name} has an argument named result, but this is only "
            "allowed for outputs. Please use a different name in native_functions.yaml."
        )
    return arguments


def _next_op(function: NativeFunction, op_counters: dict[str, int]) -> str:
    """The Backward class name: the prefix and how many classes had it before
    (AddBackward0, AddBackward1, ...)."""
    prefix = _op_prefix(function)
    op = f"{prefix}{op_counters.get(prefix, 0)}"
    op_counters[prefix] = op_counters.get(prefix, 0) + 1
    return op


@dataclass(frozen=True)
class _EntryContext:
    """What every key of one derivatives.yaml entry is read against."""

    function: NativeFunction
    arguments: dict[str, ArgumentInfo]
    names: FormulaNames
    declared_non_differentiable: frozenset[str]  # names of `x: non_differentiable` keys
    with_formula: frozenset[str] = frozenset()  # inputs with a gradient formula
    output_differentiability: tuple[bool, ...] | None = None


@dataclass(frozen=True)
class _KeyResult:
    """What one formula key of an entry holds: a backward formula, a forward formula
    or a non_differentiable mark, and the inputs it claims (name -> key, or
    "non_differentiable")."""

    backward: tuple[Derivative, ...] = ()
    forward: tuple[ForwardDerivative, ...] = ()
    non_differentiable: tuple[str, ...] = ()
    claims: tuple[tuple[str, str], ...] = ()


def _load_key(
    key: str,
    formula: Any,
    context: _EntryContext,
    location: Location,
    claimed: Mapping[str, str],
) -> _KeyResult:
    """One formula key of a derivatives.yaml entry: backward, forward or control.
    `claimed` holds the inputs earlier keys gave a formula (or marked)."""
    function, arguments = context.function, context.arguments
    var_names = tuple(n.strip() for n in key.split(","))
    if var_names[0] not in arguments:
        forward = _forward_derivative(
            var_names,
            formula,
            function,
            arguments,
            context.names,
            location,
            context.declared_non_differentiable,
            context.with_formula,
        )
        return _KeyResult(forward=(forward,))
    claims = _claims(key, var_names, formula, function, arguments, claimed)
    if formula == "non_differentiable":
        return _KeyResult(non_differentiable=var_names, claims=claims)
    analysed = analyse_backward(
        formula,
        arguments,
        function.output_names,
        context.names,
        context.output_differentiability,
    )
    derivative = Derivative(var_names, str(formula).strip(), analysed, location)
    return _KeyResult(backward=(derivative,), claims=claims)


def _claims(
    key: str,
    var_names: tuple[str, ...],
    formula: Any,
    function: NativeFunction,
    arguments: dict[str, ArgumentInfo],
    claimed: Mapping[str, str],
) -> tuple[tuple[str, str], ...]:
    """The inputs a backward key claims; each must be a Tensor argument not claimed by
    an earlier key (or earlier in this key)."""
    mine: dict[str, str] = {}
    for name in var_names:
        if name not in arguments:
            raise CodegenError(
                f"'{name}' in key '{key}' is not an argument"
                + did_you_mean(name, arguments)
            )
        argument = function.argument(name)
        if argument is None or not argument.type.is_tensor_like():
            raise CodegenError(
                f"'{name}' is not a Tensor argument, so it has no gradient; remove it "
                "or mark it non_differentiable"
            )
        previous = mine.get(name, claimed.get(name))
        if previous is not None:
            if "non_differentiable" in (formula, previous):
                raise CodegenError(
                    f"Derivative definition of {function.name} in derivatives.yaml have "
                    f"overlapped non_differentiable and differentiable variables: {{'{name}'}}"
                )
            raise CodegenError(
                f"'{name}' has two formulas (keys '{previous}' and '{key}')"
            )
        mine[name] = "non_differentiable" if formula == "non_differentiable" else key
    return tuple(mine.items())


def _output_differentiability(
    value: Any, function: NativeFunction
) -> tuple[bool, ...] | None:
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, bool) for v in value):
        raise CodegenError(
            f"output_differentiability must be a list of booleans, got {excerpt(value)}"
        )
    if len(value) != len(function.schema.returns):
        count = len(function.schema.returns)
        raise CodegenError(
            f"output_differentiability has {len(value)} entries but the operator has "
            f"{count} output{'s' if count != 1 else ''}"
        )
    return tuple(value)


def _forward_derivative(
    var_names: tuple[str, ...],
    formula: Any,
    function: NativeFunction,
    arguments: dict[str, ArgumentInfo],
    names: FormulaNames,
    location: Location,
    declared_non_differentiable: frozenset[str],
    with_formula: frozenset[str] = frozenset(),
) -> ForwardDerivative:
    outputs = function.output_names
    if var_names == ("result",) and len(outputs) == 1:
        var_names = outputs  # PyTorch's name of a single output (an in-place one's too)
    for name in var_names:
        if name not in outputs:
            raise CodegenError(
                f"unknown key '{name}': not an argument or output of {function.name}"
                + did_you_mean(name, [*arguments, *outputs])
            ).located(location, function.name)
    if not isinstance(formula, str):
        raise CodegenError(f"formula must be a string, got {excerpt(formula)}").located(
            location, function.name
        )
    text = formula.strip()
    differentiable = [
        n
        for n, a in arguments.items()
        if (a.is_tensor or a.is_tensor_list) and n not in declared_non_differentiable
    ]
    if text in ("auto_element_wise", "auto_linear"):
        kind = ForwardKind(text)
        if len(outputs) != 1:
            raise CodegenError(
                f"{text} is only allowed for functions with a single output"
            ).located(location, function.name)
        if kind is ForwardKind.auto_element_wise and len(differentiable) != 1:
            raise CodegenError(
                "auto_element_wise only works for functions with a single differentiable "
                "input and a single differentiable output"
            ).located(location, function.name)
        return ForwardDerivative(var_names, text, kind, location)
    # With gradient formulas in the entry, the other tensor inputs read bare are x_p.
    primal = frozenset(
        n for n in differentiable if arguments[n].is_tensor and n not in with_formula
    )
    try:
        analysed = analyse_forward(
            text,
            arguments,
            differentiable,
            outputs,
            names,
            primal if with_formula else frozenset(),
        )
    except CodegenError as error:
        raise error.located(location, function.name) from None
    return ForwardDerivative(var_names, text, ForwardKind.formula, location, analysed)


def _check_grads_use(
    derivatives: list[Derivative],
    function: NativeFunction,
    output_differentiability: tuple[bool, ...] | None,
) -> None:
    uses_grad = any(d.formula.uses_grad for d in derivatives)
    uses_named_grads = any(d.formula.uses_named_grads for d in derivatives)
    # grads, or grads[i] as written (a grad_<name> is rewritten to grads[i], but does
    # not count: as torchgen, which looks for the word `grads` in the formula's text).
    uses_grads = any(
        d.formula.uses_grads or d.formula.uses_indexed_grads for d in derivatives
    )
    if uses_named_grads and (uses_grad or uses_grads):
        raise CodegenError(
            f"Derivative definition of {function.name} in derivatives.yaml illegally mixes "
            "use of 'grad_RETURN_NAME' and 'grad' or 'grads[x]'. Use only one method for "
            "identifying gradients."
        )
    if uses_grad and uses_grads:
        raise CodegenError(
            f"Derivative definition of {function.name} in derivatives.yaml illegally mixes "
            "use of 'grad' and 'grads'. Consider replacing occurrences of 'grad' with "
            "'grads[0]'"
        )
    indices = (
        set().union(*(d.formula.grads_indices for d in derivatives))
        if derivatives
        else set()
    )
    if (
        indices == {0}
        and not uses_named_grads
        and not any(d.formula.uses_grads for d in derivatives)
    ):
        raise CodegenError(
            f"Derivative definition of {function.name} in derivatives.yaml solely refers "
            "to 'grads[0]'.  If the first output is indeed the only differentiable "
            "output, replace 'grads[0]' with 'grad'; otherwise, there is a likely error "
            "in your derivatives declaration."
        )
    count = len(function.schema.returns)
    for index in indices:
        if index >= count:
            raise CodegenError(
                f"Out of bounds grads access: derivative formula for {function.name} used "
                f"grads[{index}], but the forward only returns {count} outputs."
            )


def _derive_element_wise(
    forward: list[ForwardDerivative],
    backward: list[Derivative],
    function: NativeFunction,
    arguments: dict[str, ArgumentInfo],
    names: FormulaNames,
) -> list[ForwardDerivative]:
    """`result: auto_element_wise` derives the JVP from the backward formula of the single
    differentiable input (PyTorch's rule): that formula must exist, and what it derives
    must be a valid forward formula (no grad_input_mask, grads, retain_variables).
    `forward` with each auto_element_wise formula derived and analysed."""
    return [
        (
            _element_wise(derived, backward, function, arguments, names)
            if derived.kind is ForwardKind.auto_element_wise
            else derived
        )
        for derived in forward
    ]


def _element_wise(
    derived: ForwardDerivative,
    backward: list[Derivative],
    function: NativeFunction,
    arguments: dict[str, ArgumentInfo],
    names: FormulaNames,
) -> ForwardDerivative:
    if len(backward) != 1:
        raise CodegenError(
            f"Derivative definition of {function.name} in derivatives.yaml defines the "
            "forward definition of gradient as element_wise but it does not defines the "
            "gradient formula for its argument which is required. (auto_element_wise "
            "derives the forward formula from that backward formula.)"
        ).located(derived.location, function.name)
    (derivative,) = backward
    name = derivative.var_names[0]
    text = element_wise_forward(derivative.original, name, names)
    try:
        analysed = analyse_forward(
            text, arguments, derivative.var_names, function.output_names, names
        )
    except CodegenError as error:
        raise CodegenError(
            f"auto_element_wise derives the forward formula from the backward formula "
            f"of {name} ({name} -> {name}_p, grad -> {name}_t.conj()), and "
            f"{error.message}"
        ).located(derived.location, function.name) from None
    return dataclasses.replace(derived, formula=analysed)


def _check_forward_count(
    forward: list[ForwardDerivative], function: NativeFunction
) -> None:
    covered = [n for f in forward for n in f.var_names]
    duplicates = {n for n in covered if covered.count(n) > 1}
    if duplicates:
        raise CodegenError(f"output '{sorted(duplicates)[0]}' has two forward formulas")


def _inplace_infos(
    functions: list[NativeFunction], infos: list[DifferentiabilityInfo]
) -> list[DifferentiabilityInfo]:
    """In-place operators without their own entry use their functional operator's
    formulas and Backward class (`x.add_(y)` records an AddBackward0), as PyTorch."""
    by_name = {info.function.name: info for info in infos}
    derived = []
    for function in functions:
        if function.schema.kind() is not SchemaKind.inplace or function.name in by_name:
            continue
        match = _functional_of(function, [i.function for i in infos])
        functional = by_name.get(match.name) if match is not None else None
        if functional is not None:
            derived.append(dataclasses.replace(functional, function=function))
    return derived
