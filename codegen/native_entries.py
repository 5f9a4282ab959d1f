"""One native_functions.yaml entry read into a `NativeFunction`: its keys checked
(`NATIVE_KEYS`), its schema parsed, its kernel expression analysed, and the in-place
variant an entry declares derived from its functional operator.
"""

from __future__ import annotations

import dataclasses
import keyword
from collections.abc import Iterable
from typing import Any

from .batching import parse_batching
from .errors import CodegenError, ErrorCollector, did_you_mean, excerpt
from .expressions import check_kernel_expression
from .kernels_module import MODULE_NAME, KernelsModule
from .model import INPLACE_OUT, NAMESPACES, PYTHON_MODULES, NativeFunction, Variant
from .schema import FunctionSchema, SchemaKind, default_to_python, parse_schema
from .yaml_loader import Entry

NATIVE_KEYS = (
    "func",
    "variants",
    "numpy",
    "composite",
    "type_promotion",
    "promote_integer_inputs_to_float",
    "python_binding",
    "python_module",
    "out_overload",
    "batching",
    "promotion_check",
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
    schema = _entry_schema(values)
    variants = _entry_variants(values)
    argument_names = [a.name for a in schema.arguments.flat_all]
    if kernels is not None:
        _check_module_name_is_free(schema.name.name.base, argument_names, kernels)
    if keyword.iskeyword(schema.name.name.base):  # a dunder: __and__, __class__
        raise CodegenError(
            f"operator '{schema.name}' would be the Python function "
            f"'{schema.name.name.base}', a keyword; gradgen cannot declare it"
        )
    if Variant.method in variants:
        self_arg = schema.arguments.self_arg
        if self_arg is None or not self_arg.type.is_tensor_like():
            raise CodegenError("a method variant needs a Tensor argument named 'self'")
    python_module = _entry_python_module(values, schema, variants)
    batching = parse_batching(values.get("batching"), schema)
    numpy, composite = values.get("numpy"), values.get("composite")
    inplace = schema.kind() is SchemaKind.inplace
    if numpy is None and composite is None and inplace:
        # Derived later from the functional operator's kernel (see _derive_inplace).
        return NativeFunction(
            schema,
            variants,
            None,
            None,
            (),
            entry.location,
            False,
            python_module,
            batching=batching,
        )
    numpy, composite = _entry_kernel(
        numpy, composite, inplace, argument_names, kernel_helpers, composites, kernels
    )
    promotion, integer_to_float = _entry_promotion(values, argument_names)
    out_overload = _entry_out_overload(values, schema, variants)
    return NativeFunction(
        schema,
        variants,
        numpy,
        composite,
        promotion,
        entry.location,
        integer_to_float,
        python_module,
        out_overload,
        batching,
        _entry_promotion_check(values, promotion, kernel_helpers),
    )


def _entry_promotion_check(
    values: dict[str, Any], promotion: tuple[str, ...], kernel_helpers: frozenset[str]
) -> str:
    """`promotion_check:` a kernel helper of the promoted pair's two arrays."""
    check = values.get("promotion_check", "")
    if check == "":
        return ""
    if not isinstance(check, str) or check not in kernel_helpers:
        raise CodegenError(
            f"promotion_check must name a kernel helper, got {excerpt(check)}"
            + (did_you_mean(check, kernel_helpers) if isinstance(check, str) else "")
        )
    if len(promotion) != 2:
        raise CodegenError("promotion_check needs a type_promotion of two arguments")
    return check


def _entry_out_overload(
    values: dict[str, Any], schema: FunctionSchema, variants: frozenset[Variant]
) -> str | None:
    """`out_overload:` the name of PyTorch's out= overload of this function (`add.out`
    for `add.Tensor`): the public function then takes `out=`. Only a functional
    operator with a public function and Tensor results can have one."""
    name = values.get("out_overload")
    if name is None:
        return None
    base = schema.name.name.base
    if not isinstance(name, str) or name.partition(".")[0] != base or "." not in name:
        raise CodegenError(
            f"out_overload must name PyTorch's out= overload of '{base}' as "
            f"'{base}.OVERLOAD', got {excerpt(name)}"
        )
    if schema.kind() is not SchemaKind.functional or Variant.function not in variants:
        raise CodegenError(
            "out_overload is for a functional operator with a function variant "
            "(gradgen.NAME takes out=)"
        )
    returns = schema.returns
    if not returns or any(str(r.type) != "Tensor" for r in returns):
        raise CodegenError(
            "out_overload is for an operator returning Tensors (one, or several: out= "
            f"is then a tuple); this one returns ({', '.join(str(r.type) for r in returns)})"
        )
    return name


def _entry_schema(values: dict[str, Any]) -> FunctionSchema:
    """The entry's `func:`, parsed, with its defaults checked against their types."""
    if "func" not in values:
        raise CodegenError("missing key 'func'")
    schema = parse_schema(values["func"]) if isinstance(values["func"], str) else None
    if schema is None:
        raise CodegenError(
            f"func must be a schema string, got {excerpt(values['func'])}"
        )
    _check_defaults(schema)
    return schema


def _entry_variants(values: dict[str, Any]) -> frozenset[Variant]:
    """`variants:`, or none with `python_binding: false` (dispatcher only: neither
    gradgen.NAME nor tensor.NAME)."""
    variants = _parse_variants(values.get("variants", "function"))
    binding = values.get("python_binding", True)
    if not isinstance(binding, bool):
        raise CodegenError(
            f"python_binding must be true or false, got {excerpt(binding)}"
        )
    return variants if binding else frozenset()


def _entry_python_module(
    values: dict[str, Any], schema: FunctionSchema, variants: frozenset[Variant]
) -> str | None:
    """`python_module:` as PyTorch's: `linalg`, `special` and `fft` bind the function
    as gradgen.<module>.<name without the prefix>, so the name must have the prefix."""
    module = values.get("python_module")
    if module is None:
        return None
    if module not in PYTHON_MODULES:
        raise CodegenError(
            f"python_module must be one of {', '.join(PYTHON_MODULES)}, got "
            f"{excerpt(module)}" + did_you_mean(str(module), PYTHON_MODULES)
        )
    if module not in NAMESPACES:
        return str(module)
    if Variant.method in variants:
        raise CodegenError(
            f"an operator of python_module: {module} is a function of "
            f"gradgen.{module} only; it cannot have a method variant"
        )
    base = schema.name.name.base
    if not base.startswith(f"{module}_") or base == f"{module}_":
        raise CodegenError(
            f"an operator of python_module: {module} must be named '{module}_NAME' "
            f"(bound as gradgen.{module}.NAME), got '{base}'"
        )
    return str(module)


def _entry_kernel(
    numpy: Any,
    composite: Any,
    inplace: bool,
    argument_names: list[str],
    kernel_helpers: frozenset[str],
    composites: frozenset[str],
    kernels: KernelsModule | None,
) -> tuple[str | None, str | None]:
    """Exactly one of `numpy:` (checked kernel expression) and `composite:` (the name
    of a function in gradgen.composites)."""
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
    return numpy, composite


def _entry_promotion(
    values: dict[str, Any], argument_names: list[str]
) -> tuple[tuple[str, ...], bool]:
    """`type_promotion:` (argument names) and `promote_integer_inputs_to_float:`."""
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
    return promotion, integer_to_float


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
            promotion_check=functional.promotion_check,
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
        if f.schema.name.name.base == base  # the cheap test first
        and f.schema.kind() is not SchemaKind.inplace
        and _argument_signature(f) == wanted
    ]
    by_name = [f for f in candidates if f.name == _functional_name(function)]
    matches = by_name or candidates
    return matches[0] if matches else None
