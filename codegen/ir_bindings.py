"""The public functions and Tensor methods as ops.py and tensor_methods.py print them:
each operator's Python signature, and the overloads of one name grouped into one
binding that picks its schema from the arguments (`BindingIR`, `OverloadedIR`).
"""

from __future__ import annotations

from .formulas import python_identifier
from .model import NativeFunction
from .schema import Argument, BaseTy, default_to_python
from .types import python_type
from .ir_views import BindingIR, OverloadedIR, _is_int_list


def _binding(function: NativeFunction, method: bool) -> BindingIR:
    """The public function (`gradgen.NAME`) or method (`tensor.NAME`) of an operator."""
    positional = list(function.schema.arguments.positional)
    kwarg_only = list(function.schema.arguments.kwarg_only) + list(
        function.schema.arguments.out
    )
    if method:
        positional = [a for a in positional if a.name != "self"]
    # `t.permute(2, 0, 1)` and `t.permute((2, 0, 1))`: a method whose only positional
    # argument is an int list takes it as varargs too, as PyTorch's methods do.
    varargs = method and len(positional) == 1 and _is_int_list(positional[0])
    conversions, call_names = _conversions(function, method, positional, varargs)
    checks, checked, precheck = _argument_checks(function, method)
    conversions += precheck
    params = _binding_params(positional, kwarg_only, method, varargs)
    out_overload = None if method else function.out_overload
    if out_overload is not None:
        # out= is keyword-only and last, as PyTorch's `Tensor(a!) out`
        params += [] if kwarg_only else ["*"]
        params.append(f"out: {out_annotation(function)} | None = None")
    if function.composite is not None:
        target = call_target = f"composites.{function.composite}"
    else:
        target = f"operators.{function.identifier}.call"
        # The operator's fast path when it has one (`call` itself otherwise).
        call_target = f"operators.{function.identifier}.fast"
    call = f"{call_target}({', '.join(call_names)})"
    # An overload's Signature calls the fast path too (`x.sum()`, `x.mean()`): the
    # bindings are made after variable_type.py set `.fast` (generated/__init__.py), and
    # before it `.fast` is `call` itself.
    signature_target = call_target
    if returns_tensor_list(function):
        call, signature_target = f"tuple({call})", f"tuple_result({target})"
    return BindingIR(
        function.python_name if method else function.public_name,
        ", ".join(params),
        tuple(conversions),
        call,
        str(function.schema),
        target,
        _overload_text(function, method),
        _overload_params(function, method),
        ", ".join(call_names),
        out_overload,
        signature_target,
        checks,
        checked,
    )


def returns_tensor_list(function: NativeFunction) -> bool:
    """Whether the operator returns one `Tensor[]` (its binding returns a tuple)."""
    returns = function.schema.returns
    return (
        len(returns) == 1
        and returns[0].type.is_tensor_like()
        and returns[0].type.is_list_like() is not None
    )


def out_annotation(function: NativeFunction) -> str:
    """The type of out=: a Tensor, or a sequence of them for several results."""
    return "Tensor" if len(function.schema.returns) == 1 else "Sequence[Tensor]"


def _conversions(
    function: NativeFunction, method: bool, positional: list[Argument], varargs: bool
) -> tuple[list[str], list[str]]:
    """The statements that convert the binding's arguments (a number or list to a
    tensor, an int list, a dtype), and the names the binding calls the operator with."""
    op = function.python_name
    conversions: list[str] = []
    call_names: list[str] = []
    position = 0  # PyTorch counts a method's arguments after self
    for argument in function.arguments:
        name = python_identifier(argument.name)
        public = "input" if (argument.name == "self" and not method) else name
        if argument.name == "self" and method:
            call_names.append("self")
            continue
        position += 1
        if argument.type.is_tensor_like() and argument.type.is_list_like() is None:
            allow = "False" if public == "input" else "True"
            conversion = (
                f"tensor_argument({public}, {op!r}, {public!r}, {position}, {allow})"
            )
            if argument.type.is_nullable():
                conversion = f"None if {public} is None else {conversion}"
                conversions.append(f"{public} = {conversion}")
            elif allow == "True":
                # A Tensor passes without a call (a subclass takes the call), and so
                # does a float wrapped before (`x * 2.0`: wrap_number's cache inline).
                conversions += [
                    f"if type({public}) is not Tensor:",
                    f"    if type({public}) is float:",
                    f"        {public} = WRAPPED_FLOATS.get({public}, {public})",
                    f"    if type({public}) is not Tensor:",
                    f"        {public} = {conversion}",
                ]
            else:
                conversions.append(
                    f"if type({public}) is not Tensor: {public} = {conversion}"
                )
        elif argument.type.is_tensor_like():  # Tensor[] or Tensor?[]
            allow_none = ", True" if argument.type.is_nullable() else ""
            conversions.append(
                f"{public} = tensor_list_argument({public}, {op!r}, {public!r}, {position}{allow_none})"
            )
        elif _is_int_list(argument):
            if varargs and argument in positional:
                conversions.append(
                    f"{public} = int_list_varargs({public}, {op!r}, {public!r})"
                )
            else:
                conversion = f"int_list_argument({public}, {op!r}, {public!r})"
                if argument.type.is_nullable():  # SymInt[]? bias_sizes
                    conversion = f"None if {public} is None else {conversion}"
                conversions.append(f"{public} = {conversion}")
        elif argument.type.is_base_ty_like(BaseTy.ScalarType):
            conversions.append(f"{public} = dtype_argument({public})")
        call_names.append(public)
    return conversions, call_names


# The kinds whose values go to the operator unconverted: checked after a failed call.
_CHECKED_KINDS = frozenset(
    kind + optional
    for kind in ("Scalar", "int", "float", "bool", "str")
    for optional in ("", "?")
)


def _argument_checks(
    function: NativeFunction, method: bool
) -> tuple[str, str, list[str]]:
    """`check_arguments`' parameters (name, kind, position: 0 for a keyword-only one) as
    a tuple literal, and the names of their values (empty when nothing is checked); and
    the checks made before the call: an int or a bool argument of another type (that
    numpy would take silently: a float dim, a string for a flag) goes through
    `int_argument` / `bool_argument`, a Number or float one given None is refused."""
    op = function.python_name
    checks: list[tuple[str, str, int]] = []
    names: list[str] = []
    precheck: list[str] = []
    position = 0
    for name, argument, keyword_only in _public_arguments(function, method):
        if method and argument.name == "self":
            continue
        position += not keyword_only
        kind = _param_kind(argument)
        if kind not in _CHECKED_KINDS:
            continue
        where = 0 if keyword_only else position
        checks.append((name, kind, where))
        names.append(name)
        base = kind.rstrip("?")
        if kind in ("Scalar", "float"):  # None would be taken: elu's alpha=None is nan
            entry = ((name, kind, where),)
            precheck.append(
                f"if {name} is None: check_arguments({op!r}, {entry!r}, (None,))"
            )
        elif base in ("int", "bool"):
            test = f"type({name}) is not {base}"
            if kind.endswith("?"):
                test += f" and {name} is not None"
            call = f"{base}_argument({name}, {op!r}, {name!r}, {where})"
            precheck.append(
                f"if {test}: {name} = {call}" if base == "int" else f"if {test}: {call}"
            )
    if not checks:
        return "", "", precheck
    # no trailing comma past one name: black would put each on its own line
    checked = ", ".join(names) + ("," if len(names) == 1 else "")
    return repr(tuple(checks)), checked, precheck


def _binding_params(
    positional: list[Argument],
    kwarg_only: list[Argument],
    method: bool,
    varargs: bool,
) -> list[str]:
    """The binding's parameters, annotated: `self: Tensor` for a method, the
    positional ones (`*size` for varargs), then `*` and the keyword-only ones."""
    params: list[str] = []
    for argument in positional:
        name = "input" if argument.name == "self" else python_identifier(argument.name)
        accepts = argument.name != "self"
        if varargs and argument is positional[0]:
            params.append(f"*{name}: int | Sequence[int]")
            continue
        params.append(_parameter(name, argument, accepts))
    if method:
        params.insert(0, "self: Tensor")
    if kwarg_only:
        if not (varargs and positional):
            params.append("*")
        params.extend(
            _parameter(python_identifier(a.name), a, True) for a in kwarg_only
        )
    return params


def _param_kind(argument: Argument) -> str:
    """The family of an argument's type, as `gradgen.overloads.Param` checks it."""
    type_ = argument.type
    optional = "?" if type_.is_nullable() else ""
    listed = type_.is_list_like()
    if listed is not None:
        if listed.elem.is_base_ty_like(BaseTy.Tensor):
            return "Tensor[]"
        if _is_int_list(argument):
            return "int[]" + optional
        return "any"
    for base, kind in (
        (BaseTy.Tensor, "Tensor"),
        (BaseTy.Scalar, "Scalar"),
        (BaseTy.int, "int"),
        (BaseTy.SymInt, "int"),
        (BaseTy.float, "float"),
        (BaseTy.bool, "bool"),
        (BaseTy.str, "str"),
        (BaseTy.ScalarType, "ScalarType"),
    ):
        if type_.is_base_ty_like(base):
            return kind + optional
    return "any"


def _public_arguments(
    function: NativeFunction, method: bool
) -> list[tuple[str, Argument, bool]]:
    """(public name, argument, keyword-only) in schema order; `self` is `input` in
    functions."""
    kwarg_only = {a.name for a in function.schema.arguments.kwarg_only} | {
        a.name for a in function.schema.arguments.out
    }
    result = []
    for argument in function.arguments:
        name = python_identifier(argument.name)
        if argument.name == "self" and not method:
            name = "input"
        result.append((name, argument, argument.name in kwarg_only))
    return result


def _overload_params(function: NativeFunction, method: bool) -> tuple[str, ...]:
    params = []
    for name, argument, keyword_only in _public_arguments(function, method):
        fields = [repr(name), repr(_param_kind(argument))]
        if keyword_only:
            fields.append("keyword_only=True")
        if argument.default is not None:
            fields.append("has_default=True")
            fields.append(f"default={_converted_default(argument)}")
        params.append(f"Param({', '.join(fields)})")
    return tuple(params)


def _converted_default(argument: Argument) -> str:
    """A default as the operator receives it (dtype names become gradgen dtypes)."""
    assert argument.default is not None  # called only for arguments with a default
    text = default_to_python(argument.default, argument.type)
    if argument.type.is_base_ty_like(BaseTy.ScalarType) and text != "None":
        return f"as_dtype({text})"
    return text


def _overload_text(function: NativeFunction, method: bool) -> str:
    parts = []
    star = False
    for name, argument, keyword_only in _public_arguments(function, method):
        if method and argument.name == "self":
            continue
        if keyword_only and not star:
            parts.append("*")
            star = True
        kind = _param_kind(argument)
        if kind in ("Scalar", "Scalar?"):
            kind = kind.replace("Scalar", "Number")
        text = f"{kind} {name}"
        if argument.default is not None:
            text += f"={argument.default}"
        parts.append(text)
    return ", ".join(parts)


def _parameter(name: str, argument: Argument, accepts_numbers: bool) -> str:
    text = f"{name}: {python_type(argument, accepts_numbers)}"
    if argument.default is not None:
        text += f" = {default_to_python(argument.default, argument.type)}"
    return text


def _group(
    bindings: list[BindingIR],
) -> tuple[tuple[BindingIR, ...], tuple[OverloadedIR, ...]]:
    """Split bindings into single-overload names and names with several overloads."""
    by_name: dict[str, list[BindingIR]] = {}
    for binding in bindings:
        by_name.setdefault(binding.python_name, []).append(binding)
    single = tuple(group[0] for group in by_name.values() if len(group) == 1)
    several = tuple(
        OverloadedIR(name, tuple(group))
        for name, group in by_name.items()
        if len(group) > 1
    )
    return single, several
