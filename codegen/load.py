"""Load native_functions.yaml and derivatives.yaml into the model, validating both.

Each entry is checked inside `ErrorCollector.context`, so every error carries
``file:line: operator:`` and one run reports all of them. Known keys are popped from
each entry; what is left is an unknown key and an error (it catches typos). A
derivatives.yaml `name:` must repeat a native_functions.yaml schema byte for byte.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import (
    CodegenError,
    ErrorCollector,
    Location,
    did_you_mean,
    excerpt,
    shorten,
)
from .formulas import (
    ArgumentInfo,
    FormulaNames,
    analyse_backward,
    analyse_forward,
    check_kernel_expression,
    element_wise_forward,
)
from .kernels_module import MODULE_NAME, KernelsModule, read_all
from .names import check_backward_names, check_operator_names
from .model import (
    INPLACE_OUT,
    Derivative,
    DifferentiabilityInfo,
    ForwardDerivative,
    ForwardKind,
    Model,
    NativeFunction,
    Variant,
)
from .schema import BaseTy, FunctionSchema, SchemaKind, default_to_python, parse_schema
from .types import python_type
from .yaml_loader import Entry, load_entries

NATIVE_KEYS = (
    "func",
    "variants",
    "numpy",
    "composite",
    "type_promotion",
    "promote_integer_inputs_to_float",
    "python_binding",
)
DERIVATIVE_CONTROL_KEYS = ("name", "output_differentiability", "dispatch")


# -- names the runtime exports, read from its source without importing it ------------


def _runtime_source(module: str) -> Path:
    """The source of a gradgen runtime module, in a checkout or an installed package:
    its file, or a package's `__init__.py` (which lists its family modules' names)."""
    here = Path(__file__).resolve().parent
    for root in (here.parent / "src" / "gradgen", here.parent):
        for candidate in (root / f"{module}.py", root / module / "__init__.py"):
            if candidate.is_file():
                return candidate
    raise CodegenError(f"cannot find the gradgen runtime module '{module}.py'")


def exported_names(module: str) -> frozenset[str]:
    """The `__all__` of a runtime module, read with ast (the module is not run).

    `__all__ = [...]` and later `__all__ += [...]` (one per section of the file) count;
    a package's are its `__init__.py`'s plus those of the modules it star-imports.
    """
    path = _runtime_source(module)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    exports = read_all(tree, path.name)
    if exports is None:
        raise CodegenError(f"{path} has no __all__")
    if path.name != "__init__.py":
        return exports[0]
    # A package: its own names and the `__all__` of every family module it
    # star-imports (the runtime adds the same lists when it is imported).
    names = set(exports[0])
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
            if [alias.name for alias in node.names] == ["*"]:
                family = path.parent / f"{node.module}.py"
                listed = read_all(
                    ast.parse(family.read_text(encoding="utf-8")), family.name
                )
                if listed is None:
                    raise CodegenError(f"{family} has no __all__")
                names |= listed[0]
    return frozenset(names)


def defined_functions(module: str) -> frozenset[str]:
    """The public top-level functions of a runtime module, read with ast; for a
    package, the `__all__` of its `__init__.py` (the functions are in its families)."""
    path = _runtime_source(module)
    if path.name == "__init__.py":
        return exported_names(module)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return frozenset(
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_")
    )


# -- native_functions.yaml ------------------------------------------------------------


def _operator_label(text: object) -> str | None:
    """``mul.Tensor`` from a schema string, for error messages."""
    return (
        shorten(text.split("(", 1)[0].strip(), 120) if isinstance(text, str) else None
    )


def _pop_unknown(values: dict[str, Any], known: Iterable[str]) -> None:
    unknown = [k for k in values if k not in known]
    if unknown:
        key = unknown[0]
        raise CodegenError(f"unknown key '{key}'" + did_you_mean(key, known))


def _parse_variants(text: Any) -> frozenset[Variant]:
    if not isinstance(text, str):
        raise CodegenError(
            f"variants must be a string like 'function, method', got {excerpt(text)}"
        )
    variants = set()
    for word in (w.strip() for w in text.split(",")):
        try:
            variants.add(Variant(word))
        except ValueError:
            raise CodegenError(
                f"unknown variant '{word}'; expected 'function' and/or 'method'"
                + did_you_mean(word, [v.value for v in Variant])
            ) from None
    return frozenset(variants)


def _parse_name_list(text: Any, what: str) -> tuple[str, ...]:
    if not isinstance(text, str):
        raise CodegenError(
            f"{what} must be a comma-separated string of names, got {excerpt(text)}"
        )
    return tuple(w.strip() for w in text.split(",") if w.strip())


def _check_defaults(schema: FunctionSchema) -> None:
    """Every default must fit its argument's type (`int x=None` does not). The Python
    signatures turn defaults into Python values only when the code is generated;
    checking here reports a misfit with the entry's file and line."""
    for argument in schema.arguments.flat_all:
        if argument.default is None:
            continue
        try:
            default_to_python(argument.default, argument.type)
        except CodegenError as error:
            raise CodegenError(f"{error.message} in argument '{argument}'") from None


def _native_function(
    entry: Entry,
    kernel_helpers: frozenset[str],
    composites: frozenset[str],
    kernels: KernelsModule | None = None,
) -> NativeFunction:
    values = dict(entry.values)
    _pop_unknown(values, NATIVE_KEYS)
    if "func" not in values:
        raise CodegenError("missing key 'func'")
    schema = parse_schema(values["func"]) if isinstance(values["func"], str) else None
    if schema is None:
        raise CodegenError(
            f"func must be a schema string, got {excerpt(values['func'])}"
        )
    _check_defaults(schema)
    variants = _parse_variants(values.get("variants", "function"))
    binding = values.get("python_binding", True)
    if not isinstance(binding, bool):
        raise CodegenError(
            f"python_binding must be true or false, got {excerpt(binding)}"
        )
    if not binding:
        variants = frozenset()  # dispatcher only: neither gradgen.NAME nor tensor.NAME
    argument_names = [a.name for a in schema.arguments.flat_all]
    if kernels is not None:
        _check_module_name_is_free(schema.name.name.base, argument_names, kernels)
    if Variant.method in variants:
        self_arg = schema.arguments.self_arg
        if self_arg is None or not self_arg.type.is_tensor_like():
            raise CodegenError("a method variant needs a Tensor argument named 'self'")
    numpy, composite = values.get("numpy"), values.get("composite")
    inplace = schema.kind() is SchemaKind.inplace
    if numpy is None and composite is None and inplace:
        # Derived later from the functional operator's kernel (see _derive_inplace).
        return NativeFunction(schema, variants, None, None, (), entry.location)
    if (numpy is None) == (composite is None):
        raise CodegenError(
            "needs exactly one of 'numpy' (a kernel expression) or 'composite'"
            + (
                ""
                if not inplace
                else "; an in-place operator may omit both to reuse its functional operator's kernel"
            )
        )
    if numpy is not None:
        # An in-place kernel may compute straight into `out`, the memory of `self`.
        names = [*argument_names, INPLACE_OUT] if inplace else argument_names
        numpy = check_kernel_expression(
            numpy,
            names,
            kernel_helpers,
            kernels.names if kernels is not None else frozenset(),
            kernels.file_name if kernels is not None else "",
        )
    if composite is not None and not isinstance(composite, str):
        raise CodegenError(
            f"composite must be the name of a function in gradgen.composites, got "
            f"{type(composite).__name__}: {excerpt(composite)}"
        )
    if composite is not None and composite not in composites:
        raise CodegenError(
            f"no composite named '{composite}' in gradgen.composites"
            + did_you_mean(str(composite), composites)
        )
    promotion = _parse_name_list(values.get("type_promotion", ""), "type_promotion")
    integer_to_float = values.get("promote_integer_inputs_to_float", False)
    if not isinstance(integer_to_float, bool):
        raise CodegenError(
            f"promote_integer_inputs_to_float must be true or false, got {excerpt(integer_to_float)}"
        )
    if integer_to_float and not promotion:
        raise CodegenError("promote_integer_inputs_to_float needs type_promotion")
    for name in promotion:
        if name not in argument_names:
            raise CodegenError(
                f"type_promotion names '{name}', which is not an argument"
                + did_you_mean(name, argument_names)
            )
    return NativeFunction(
        schema, variants, numpy, composite, promotion, entry.location, integer_to_float
    )


def _check_module_name_is_free(
    operator: str, argument_names: list[str], kernels: KernelsModule
) -> None:
    """Generated code reaches the user's functions as `user_kernels.NAME`: an operator or
    argument of that name would hide the module."""
    if operator == MODULE_NAME or MODULE_NAME in argument_names:
        what = "an operator" if operator == MODULE_NAME else "an argument"
        raise CodegenError(
            f"{what} may not be named '{MODULE_NAME}' in a package generated with a "
            f"kernels module ({kernels.file_name}): generated code reaches the module's "
            "functions by that name"
        )


def load_native_functions(
    path: Path,
    errors: ErrorCollector,
    attempted: set[str],
    kernels: KernelsModule | None = None,
    check_names: bool = True,
) -> list[NativeFunction]:
    """The valid entries; every `func:` text seen is added to `attempted`.

    `check_names` refuses names that meet the generator's own (names.py); only the
    probe package that finds those names is loaded without."""
    kernel_helpers = exported_names("numpy_kernels")
    composites = defined_functions("composites")
    functions: list[NativeFunction] = []
    seen: dict[str, NativeFunction] = {}
    identifiers: dict[str, NativeFunction] = {}
    for entry in load_entries(path):
        func = entry.values.get("func")
        if isinstance(func, str):
            attempted.add(func)
        with errors.context(entry.location, _operator_label(func)):
            function = _native_function(entry, kernel_helpers, composites, kernels)
            if function.name in seen:
                raise CodegenError(
                    f"operator '{function.name}' is declared twice (first at "
                    f"{seen[function.name].location})"
                )
            seen[function.name] = function
            if check_names:
                check_operator_names(
                    function,
                    has_method=Variant.method in function.variants,
                    has_function=Variant.function in function.variants,
                )
            other = identifiers.get(function.identifier)
            if other is not None:
                raise CodegenError(
                    f"operators '{other.name}' and '{function.name}' are both "
                    f"'{function.identifier}' in generated code (first at "
                    f"{other.location}); rename one"
                )
            identifiers[function.identifier] = function
            functions.append(function)
    functions = [_derive_inplace(f, functions, errors) for f in functions]
    return functions


def _functional_name(function: NativeFunction) -> str:
    """``add.Tensor`` for ``add_.Tensor``."""
    name = function.schema.name
    overload = f".{name.overload_name}" if name.overload_name else ""
    return f"{name.name.base}{overload}"


def _derive_inplace(
    function: NativeFunction, functions: list[NativeFunction], errors: ErrorCollector
) -> NativeFunction:
    """An in-place operator without a kernel computes its functional operator's
    expression and writes the result into `self`, as PyTorch derives `add_` from `add`.
    The functional operator is the one of the same base name whose arguments have the
    same names and types (`pow_.Scalar` is `pow.Tensor_Scalar` in place)."""
    if function.numpy is not None or function.composite is not None:
        return function
    functional = _functional_of(function, functions)
    with errors.context(function.location, function.name):
        if functional is None or functional.numpy is None:
            raise CodegenError(
                "has no kernel and no functional operator with the same arguments and a "
                f"numpy expression to derive one from (looked for '{_functional_name(function)}')"
            )
        return dataclasses.replace(
            function,
            numpy=functional.numpy,
            type_promotion=functional.type_promotion,
            integer_to_float=functional.integer_to_float,
        )
    return function


def _argument_signature(function: NativeFunction) -> list[tuple[str, str]]:
    """Names and types of the arguments, without alias annotations."""
    return [(a.name, str(a.type)) for a in function.arguments]


def _functional_of(
    function: NativeFunction, functions: Iterable[NativeFunction]
) -> NativeFunction | None:
    """The functional operator an in-place one writes into `self` (PyTorch matches them
    by signature, not by overload name)."""
    base = function.schema.name.name.base
    wanted = _argument_signature(function)
    candidates = [
        f
        for f in functions
        if f.schema.kind() is not SchemaKind.inplace
        and f.schema.name.name.base == base
        and _argument_signature(f) == wanted
    ]
    by_name = [f for f in candidates if f.name == _functional_name(function)]
    matches = by_name or candidates
    return matches[0] if matches else None


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


def _formula_names(
    functions: list[NativeFunction], kernels: KernelsModule | None = None
) -> FormulaNames:
    return FormulaNames(
        helpers=exported_names("helpers"),
        functions=frozenset(
            f.python_name for f in functions if Variant.function in f.variants
        ),
        methods=frozenset(
            f.python_name for f in functions if Variant.method in f.variants
        ),
        user=kernels.names if kernels is not None else frozenset(),
        user_file=kernels.file_name if kernels is not None else "",
    )


def _differentiability_info(
    entry: Entry,
    function: NativeFunction,
    names: FormulaNames,
    op_counters: dict[str, int],
    errors: ErrorCollector,
    check_names: bool = True,
) -> DifferentiabilityInfo | None:
    """The analysed entry, or None when a key had errors (each recorded in `errors`)."""
    values = dict(entry.values)
    values.pop("name")
    if "dispatch" in values:
        raise CodegenError("per-dispatch-key formulas ('dispatch:') are not supported")
    output_differentiability = _output_differentiability(
        values.pop("output_differentiability", None), function
    )
    arguments = _formula_arguments(function)
    if check_names:
        check_backward_names(function)
    backward: list[Derivative] = []
    forward: list[ForwardDerivative] = []
    non_differentiable: list[str] = []
    claimed: dict[str, str] = {}
    # Declared up front: keys are read in sorted order, forward formulas may come first.
    declared = frozenset(
        name.strip()
        for key, value in values.items()
        if value == "non_differentiable"
        for name in key.split(",")
    )
    context = _EntryContext(function, arguments, names, declared)
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
        )
        return _KeyResult(forward=(forward,))
    claims = _claims(key, var_names, formula, function, arguments, claimed)
    if formula == "non_differentiable":
        return _KeyResult(non_differentiable=var_names, claims=claims)
    analysed = analyse_backward(
        formula, arguments, function.output_names, context.names
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
) -> ForwardDerivative:
    outputs = function.output_names
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
    try:
        analysed = analyse_forward(text, arguments, differentiable, outputs, names)
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
    text = element_wise_forward(derivative.original, name)
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


def load_derivatives(
    path: Path,
    functions: list[NativeFunction],
    errors: ErrorCollector,
    broken_operators: frozenset[str] = frozenset(),
    kernels: KernelsModule | None = None,
    check_names: bool = True,
) -> list[DifferentiabilityInfo]:
    """The entries joined to `functions`; entries for `broken_operators` (whose native
    entries already failed and were reported) are skipped, not reported again."""
    by_schema = {str(f.schema): f for f in functions}
    names = _formula_names(functions, kernels)
    infos: list[DifferentiabilityInfo] = []
    claimed: dict[str, Location] = {}
    op_counters: dict[str, int] = {}
    for entry in load_entries(path):
        name = entry.values.get("name")
        with errors.context(entry.location, _operator_label(name)):
            if not isinstance(name, str):
                raise CodegenError("missing key 'name' (the operator's schema)")
            function = by_schema.get(name)
            if function is None and _operator_label(name) in broken_operators:
                continue
            if function is None:
                raise CodegenError(
                    f"could not find ATen function for schema: {shorten(name, 300)}"
                    + did_you_mean(name, by_schema)
                    + " (the name must repeat a native_functions.yaml func: exactly)"
                )
            if function.composite is not None:
                # PyTorch's rule for CompositeImplicitAutograd operators (torchgen asserts
                # that an operator with formulas has a dispatch section).
                raise CodegenError(
                    f"a composite operator (composite: {function.composite}) must not have "
                    "a derivatives.yaml entry: autograd records the operators the composite "
                    "calls, so these formulas would never run; remove the entry, or give the "
                    "operator a numpy: kernel instead of composite: to use them"
                )
            if name in claimed:
                raise CodegenError(
                    f"a second entry for this operator (first at {claimed[name]})"
                )
            claimed[name] = entry.location
            info = _differentiability_info(
                entry, function, names, op_counters, errors, check_names
            )
            if info is not None:
                infos.append(info)
    return infos + _inplace_infos(functions, infos)


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


def load(
    native_functions: Path,
    derivatives: Path,
    kernels: KernelsModule | None = None,
    check_names: bool = True,
) -> Model:
    """Both files as a Model; all errors of both files at once as CodegenError(s).

    With `kernels`, kernel expressions and formulas may also call the functions in the
    user's kernels module's `__all__`."""
    errors = ErrorCollector()
    functions: list[NativeFunction] = []
    infos: list[DifferentiabilityInfo] = []
    attempted: set[str] = set()
    try:
        functions = load_native_functions(
            native_functions, errors, attempted, kernels, check_names
        )
    except CodegenError as error:
        # The file itself is unreadable: joining derivatives to it would only report
        # every entry as missing, so check derivatives.yaml's syntax alone.
        errors.add(error)
        try:
            load_entries(derivatives)
        except CodegenError as derivatives_error:
            errors.add(derivatives_error)
        errors.raise_if_any()
    broken = frozenset(_operator_label(text) or "" for text in attempted) - {
        f.name for f in functions
    }
    try:
        infos = load_derivatives(
            derivatives, functions, errors, broken, kernels, check_names
        )
    except CodegenError as error:
        errors.add(error)
    errors.raise_if_any()
    return Model(tuple(functions), tuple(infos), kernels)
