"""From the model to what the templates print: every string prepared here.

Templates only loop and branch; each piece of Python they emit (a signature, a call,
a formula, a save statement) is built by this module, so the rules that decide the
generated code are Python you can test and step through.

Code is built from data, never from text: expressions are `ast.unparse` of checked
trees, names are checked identifiers, and every other string (a schema, a default, an
operator name in an error message) enters code as a literal made by repr(). Text that
the templates print into docstrings and comments (schemas, formulas as written) stays
text here: the templates print it only through the `docstring` and `comment` filters
of literals.py, and string literals through `py`.

The names in generated code follow PyTorch's: `grad_fn`, `_any_requires_grad`,
`compute_requires_grad`, `collect_next_edges`, `set_history`, `needs_input_grad`,
`grad_inputs`, `any_grad_defined`, `grad_input_mask`; saved inputs `self_`, saved
outputs `result_`, metadata `self_scalar_type`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from .formulas import (
    SavedAttribute,
    SavedKind,
    forward_expression,
    names_used,
    python_identifier,
)
from .kernels_module import MODULE_NAME
from .model import (
    INPLACE_OUT,
    DifferentiabilityInfo,
    ForwardDerivative,
    ForwardKind,
    Model,
    NativeFunction,
    Variant,
)
from .schema import (
    Argument,
    BaseTy,
    BaseType,
    ListType,
    OptionalType,
    SchemaKind,
    Type,
    default_to_python,
)
from .types import python_type

# -- the operator's kernels ------------------------------------------------------------


@dataclass(frozen=True)
class SaveStatement:
    """One line of the wrapper's save block, optionally guarded."""

    target: str  # e.g. "grad_fn.self_"
    value: str  # e.g. "SavedVariable(self, False)"
    guard: str | None  # e.g. "grad_fn.should_compute_output(1)"


@dataclass(frozen=True)
class AutogradIR:
    """What the VariableType wrapper of a differentiable operator does."""

    node_class: str  # the annotation of grad_fn
    node_constructor: str  # e.g. "functions.AddBackward0()"
    differentiable_inputs: str  # "self, other" ("*tensors" for a Tensor[] input)
    input_saves: tuple[SaveStatement, ...]
    output_histories: tuple[str, ...]  # expressions of the outputs that get history
    output_saves: tuple[SaveStatement, ...]
    list_output: bool = False  # one Tensor[] output: every element gets history
    # set_history, or for a NotImplemented node the variant that leaves integral and
    # bool outputs alone (they never require grad).
    history_function: str = "set_history"


@dataclass(frozen=True)
class ForwardIR:
    """One generated JVP function (from a `result:` formula) and how the wrapper calls it."""

    function_name: str  # e.g. "add_Tensor_jvp", in functions.py
    formula: str  # as written in derivatives.yaml (text for the docstring filter)
    parameters: str  # "self_p: Tensor, self_t: Tensor, ..., result: Tensor"
    expression: str
    call_arguments: str  # in the wrapper: "self, tangent_or_zeros(self), ..., result"
    output: str  # the output it sets the tangent of: "result", "result[1]", "self"
    list_output: bool  # the output is a Tensor[]: one tangent per element


@dataclass(frozen=True)
class ForwardADIR:
    """What an operator's wrapper does when an input has a tangent."""

    condition: str  # "self._fw_grad is not None or other._fw_grad is not None"
    jvps: tuple[ForwardIR, ...]  # empty: forward AD is not implemented for it
    keeps_original_self: bool  # in-place and a formula reads self_p


@dataclass(frozen=True)
class OperatorIR:
    name: str  # "add.Tensor"
    identifier: str  # "add_Tensor"
    schema: str
    parameters: str  # "self: Tensor, other: Tensor, alpha: Number"
    arguments: str  # "self, other, alpha"
    is_view: bool
    is_inplace: bool  # writes into `self` and returns it (`add_`)
    returns_list: bool  # one Tensor[] output (split, unbind, ...)
    # backend kernel
    promoted: str  # "self, other" ("" when the expression decides the dtype)
    integer_to_float: bool  # an integral common dtype becomes the default float dtype
    tensor_unwraps: tuple[str, ...]  # lines turning Tensor arguments into arrays
    kernel_body: tuple[str, ...]  # lines computing and returning the result
    # autograd
    autograd: AutogradIR | None
    forward_ad: ForwardADIR | None
    no_requires_grad_checks: tuple[str, ...]  # argument names


# -- the public bindings ----------------------------------------------------------------


@dataclass(frozen=True)
class BindingIR:
    """A public function or Tensor method."""

    python_name: str
    signature: str  # "input: Tensor, other: Tensor | Number, *, alpha: Number = 1"
    conversions: tuple[str, ...]  # lines run before the call
    call: str  # "operators.add_Tensor.call(input, other, alpha)"
    schema: str
    target: str  # what the call calls: "operators.add_Tensor.call"
    overload_text: str  # the signature as errors show it: "Tensor input, Scalar other"
    overload_params: tuple[str, ...]  # Param(...) constructors, in schema order


@dataclass(frozen=True)
class OverloadedIR:
    """A public name with several overloads, resolved at call time by argument types."""

    python_name: str
    overloads: tuple[BindingIR, ...]

    @property
    def doc(self) -> str:
        """The method's docstring text: its schemas."""
        return " or ".join(f"``{overload.schema}``" for overload in self.overloads)


# -- Backward nodes ---------------------------------------------------------------------


@dataclass(frozen=True)
class FormulaIR:
    """One formula block of a node's functional apply."""

    indices: tuple[int, ...]  # edge indices of the formula's inputs
    var_names: str  # "self" or "self, other", text for the comment filter
    expression: str
    wrap_any_grad_defined: bool
    # A one-input formula that reads grad_input_mask gets it defined, (needs_input_grad[i],)
    # (a formula of several inputs always has it).
    uses_grad_input_mask: bool = False


@dataclass(frozen=True)
class BackwardIR:
    class_name: str
    function_name: str  # the functional apply, e.g. "sub_backward0_apply"
    schema: str
    # The docstring's lines (text for the docstring filter): the schema, then each
    # formula as written in the YAML, "self: handle_r_to_c(...)".
    doc_lines: tuple[str, ...]
    slots: tuple[str, ...]
    saved_variable_slots: tuple[str, ...]
    getters: tuple[tuple[str, str, str], ...]  # (property name, expression, type)
    num_inputs: int
    apply_arguments: tuple[tuple[str, str], ...]  # (parameter, expression in apply)
    parameters: str  # of the functional apply
    uses_grad: bool
    uses_retain_variables: bool  # a formula reads `retain_variables`
    input_sizes: tuple[str, ...]  # edges per input: "1", or "self.tensors_size_"
    formulas: tuple[FormulaIR, ...] = field(default_factory=tuple)

    @property
    def has_list_inputs(self) -> bool:
        return any(size != "1" for size in self.input_sizes)


@dataclass(frozen=True)
class ReturnTypeIR:
    """A named tuple for an operator whose returns are named."""

    name: str  # the Python class, e.g. "max_dim_return"
    display: str  # its __name__ as PyTorch prints it, e.g. "max"
    fields: tuple[str, ...]


@dataclass(frozen=True)
class PackageIR:
    operators: tuple[OperatorIR, ...]
    backward_nodes: tuple[BackwardIR, ...]
    functions: tuple[BindingIR, ...]
    methods: tuple[BindingIR, ...]
    overloaded_functions: tuple[OverloadedIR, ...]
    overloaded_methods: tuple[OverloadedIR, ...]
    return_types: tuple[ReturnTypeIR, ...]
    kernel_helpers: tuple[str, ...]
    formula_helpers: tuple[str, ...]
    formula_functions: tuple[str, ...]
    # The user's kernels module, imported by name in kernels.py and functions.py.
    user_module: str | None = None

    @property
    def jvps(self) -> tuple[ForwardIR, ...]:
        seen: dict[str, ForwardIR] = {}
        for operator in self.operators:
            if operator.forward_ad is not None:
                for jvp in operator.forward_ad.jvps:
                    seen.setdefault(jvp.function_name, jvp)
        return tuple(seen.values())


def _is_tensor(argument: Argument) -> bool:
    return argument.type.is_tensor_like() and argument.type.is_list_like() is None


def _is_int_list(argument: Argument) -> bool:
    listed = argument.type.is_list_like()
    return listed is not None and (
        listed.elem.is_base_ty_like(BaseTy.int)
        or listed.elem.is_base_ty_like(BaseTy.SymInt)
    )


# -- building ---------------------------------------------------------------------------


def _kernel_parameters(function: NativeFunction) -> tuple[str, str]:
    names = [python_identifier(a.name) for a in function.arguments]
    annotated = [
        f"{python_identifier(a.name)}: {python_type(a)}" for a in function.arguments
    ]
    return ", ".join(annotated), ", ".join(names)


def _is_inplace(function: NativeFunction) -> bool:
    return function.schema.kind() is SchemaKind.inplace


def _tensor_unwraps(function: NativeFunction) -> tuple[str, ...]:
    # An in-place kernel keeps the Tensor it writes into before `self` becomes an array
    # (and names that tensor's memory `out` when its expression computes into it).
    lines = ["self_tensor = self"] if _is_inplace(function) else []
    if (
        lines
        and function.numpy is not None
        and INPLACE_OUT in names_used(function.numpy)
    ):
        lines.append(f"{INPLACE_OUT} = self._data")
    promoted = set(function.type_promotion)
    for argument in function.arguments:
        name = python_identifier(argument.name)
        if not argument.type.is_tensor_like():
            continue
        if argument.type.is_list_like() is not None and argument.name in promoted:
            lines.append(f"{name} = [promoted_array(t, common_dtype) for t in {name}]")
        elif argument.type.is_list_like() is not None and argument.type.is_nullable():
            lines.append(f"{name} = [None if t is None else t._data for t in {name}]")
        elif argument.type.is_list_like() is not None:
            lines.append(f"{name} = [t._data for t in {name}]")
        elif argument.name in promoted:
            lines.append(f"{name} = promoted_array({name}, common_dtype)")
        elif argument.type.is_nullable():
            lines.append(f"{name} = None if {name} is None else {name}._data")
        else:
            lines.append(f"{name} = {name}._data")
    return tuple(lines)


def _kernel_body(function: NativeFunction) -> tuple[str, ...]:
    """Evaluate the numpy expression and wrap what it returns as the schema says."""
    assert function.numpy is not None
    returns = function.schema.returns
    dtype = ", common_dtype" if function.type_promotion else ""
    if _is_inplace(function):
        return (f"return copy_into(self_tensor, {function.numpy})",)
    if not returns:
        return (function.numpy, "return None")
    if len(returns) == 1:
        type_ = returns[0].type
        if type_.is_tensor_like() and type_.is_list_like() is not None:
            return (f"return [wrap_result(r{dtype}) for r in {function.numpy}]",)
        promoted = [
            python_identifier(n)
            for n in function.type_promotion
            if not _is_tensor_list(function, n)
        ]
        if type_.is_tensor_like() and len(promoted) > 1:
            # Elementwise over several tensors: numpy's broadcasting error in PyTorch's words.
            return (
                "try:",
                f"    return wrap_result({function.numpy}{dtype})",
                "except ValueError as error:",
                f"    raise broadcast_error(error, {', '.join(promoted)}) from None",
            )
        if type_.is_tensor_like():
            return (f"return wrap_result({function.numpy}{dtype})",)
        if _python_value("value", type_) != "value":
            return (
                f"value = {function.numpy}",
                f"return {_python_value('value', type_)}",
            )
        return (f"return {function.numpy}",)
    names = [python_identifier(n) for n in function.output_names]
    wrapped = [
        (
            f"wrap_result({name})"
            if r.type.is_tensor_like()
            else _python_value(name, r.type)
        )
        for name, r in zip(names, returns)
    ]
    if all(r.name for r in returns):
        # Named returns come back as a named tuple, as torch.return_types do.
        return (
            f"{', '.join(names)} = {function.numpy}",
            f"return {return_type_name(function)}({', '.join(wrapped)})",
        )
    return (f"{', '.join(names)} = {function.numpy}", f"return {', '.join(wrapped)}")


# The Python type PyTorch returns for a scalar return type (numpy's int64 is an int).
_PYTHON_SCALARS = {
    BaseTy.int: "int",
    BaseTy.SymInt: "int",
    BaseTy.float: "float",
    BaseTy.bool: "bool",
}


def _python_value(name: str, type_: Type) -> str:
    """The value of the variable `name`, a kernel's result for a non-Tensor return of
    type `type_`, as PyTorch returns it: `-> int` gives a Python int, not numpy.int64
    (`-> Scalar` a Python number, `-> int[]` a list of ints, `-> int?` an int or None).
    """
    if isinstance(type_, BaseType):
        if type_.name in _PYTHON_SCALARS:
            return f"{_PYTHON_SCALARS[type_.name]}({name})"
        if type_.name is BaseTy.Scalar:
            return f"np.asarray({name}).item()"
        return name
    if isinstance(type_, OptionalType):
        inner = _python_value(name, type_.elem)
        return name if inner == name else f"None if {name} is None else {inner}"
    if isinstance(type_, ListType):
        inner = _python_value("element", type_.elem)
        return name if inner == "element" else f"[{inner} for element in {name}]"
    return name


def return_type_name(function: NativeFunction) -> str:
    """The named tuple of an operator with named returns, e.g. `max_dim_return`."""
    return f"{function.identifier}_return"


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
    return f"grad_fn.should_compute_output({edge_index[users[0].var_names[0]]})"


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
        source = python_identifier(attribute.source)
        if (
            attribute.kind is SavedKind.TENSOR
            and inplace
            and attribute.source == "self"
        ):
            # The formula means self before the kernel overwrote it (original_self).
            value = "SavedVariable(self.clone(), False)"
        elif attribute.kind is SavedKind.TENSOR and _is_optional(
            function, attribute.source
        ):
            value = f"None if {source} is None else SavedVariable({source}, False)"
        elif attribute.kind is SavedKind.TENSOR:
            value = f"SavedVariable({source}, False)"
        elif attribute.kind is SavedKind.TENSOR_LIST:
            value = f"SavedVariableList({source})"
        elif attribute.kind is SavedKind.OUTPUT:
            value = f"SavedVariable({outputs[attribute.source]}, True)"
        else:
            value = attribute.save_expression
        statement = SaveStatement(
            f"grad_fn.{attribute.name}", value, _guard_for(attribute, info, edge_index)
        )
        (output_saves if attribute.kind is SavedKind.OUTPUT else input_saves).append(
            statement
        )
    histories = tuple(
        expression
        for (name, expression), differentiable in zip(
            outputs.items(), info.differentiable_outputs
        )
        if differentiable
    )
    return AutogradIR(
        node_class=f"functions.{info.op}",
        node_constructor=f"functions.{info.op}()",
        differentiable_inputs=", ".join(
            ("*" if _is_tensor_list(function, n) else "") + python_identifier(n)
            for n in info.args_with_derivatives
        ),
        input_saves=tuple(input_saves),
        output_histories=histories,
        output_saves=tuple(output_saves),
        list_output=_returns_list(function),
    )


def _is_optional(function: NativeFunction, name: str) -> bool:
    argument = function.argument(name)
    return argument is not None and argument.type.is_nullable()


def _is_tensor_list(function: NativeFunction, name: str) -> bool:
    argument = function.argument(name)
    return argument is not None and argument.type.is_list_like() is not None


def _returns_list(function: NativeFunction) -> bool:
    returns = function.schema.returns
    return len(returns) == 1 and returns[0].type.is_list_like() is not None


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
    )


def _operator_ir(
    function: NativeFunction,
    info: DifferentiabilityInfo | None,
    user: frozenset[str] = frozenset(),
) -> OperatorIR:
    parameters, arguments = _kernel_parameters(function)
    checks: tuple[str, ...] = ()
    if info is not None and info.op is not None:
        # Inputs with neither a formula nor `non_differentiable` must not require grad.
        covered = set(info.args_with_derivatives) | set(info.non_differentiable)
        checks = tuple(
            python_identifier(a.name)
            for a in function.arguments
            if a.type.is_tensor_like() and a.name not in covered
        )
    if info is None:
        autograd = _not_implemented_ir(function)
    elif info.op is not None:
        autograd = _autograd_ir(info)
    else:
        autograd = None  # every output is declared non-differentiable
    return OperatorIR(
        name=function.name,
        identifier=function.identifier,
        schema=str(function.schema),
        parameters=parameters,
        arguments=arguments,
        is_view=function.schema.is_view_op and not _is_inplace(function),
        is_inplace=_is_inplace(function),
        returns_list=_returns_list(function),
        promoted=", ".join(
            ("*" if _is_tensor_list(function, n) else "") + python_identifier(n)
            for n in function.type_promotion
        ),
        integer_to_float=function.integer_to_float,
        tensor_unwraps=_tensor_unwraps(function),
        kernel_body=_kernel_body(function),
        autograd=autograd,
        forward_ad=_forward_ad_ir(function, info, user),
        no_requires_grad_checks=checks,
    )


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
        if len(forward.var_names) != 1:
            continue  # a tuple of outputs at once: not generated; the wrapper refuses
        jvp, used = _jvp_ir(function, info, forward, inputs, outputs, user)
        jvps.append(jvp)
        required.update(used)
        keeps_original_self |= inplace and "self" in used and "self_p" in jvp.expression
    if not jvps or len(jvps) != len(info.forward_derivatives):
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
) -> tuple[ForwardIR, dict[str, Argument]]:
    scalars = {a.name for a in function.arguments if not a.type.is_tensor_like()}
    differentiable = {a.name: a for a in inputs}
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
        used = dict(differentiable)
    else:
        formula = forward.formula  # auto_element_wise's is derived at load
        assert formula is not None, "forward formulas are analysed at load"
        # A non-differentiable tensor argument (an index, a mask) is passed as itself;
        # formulas may call it `x` or, as PyTorch's do, `x_p`.
        plain_tensors = {
            f"{a.name}_p": python_identifier(a.name)
            for a in function.arguments
            if a.type.is_tensor_like() and a.name not in differentiable
        }
        expression = forward_expression(formula, scalars, plain_tensors, user)
        used = {n: a for n, a in differentiable.items() if f"{n}_t" in formula.names}
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
    target = forward.var_names[0]
    ir = ForwardIR(
        function_name=f"{function.identifier}_jvp"
        + ("" if target in ("result", "self") else f"_{target}"),
        formula=f"{target}: {forward.original}",
        parameters=", ".join(parameters),
        expression=expression,
        call_arguments=", ".join(call),
        output=outputs.get(target, "result"),
        list_output=_returns_list(function),
    )
    return ir, used


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


def _binding(function: NativeFunction, method: bool) -> BindingIR:
    """The public function (`gradgen.NAME`) or method (`tensor.NAME`) of an operator."""
    op = function.python_name
    positional = list(function.schema.arguments.positional)
    kwarg_only = list(function.schema.arguments.kwarg_only) + list(
        function.schema.arguments.out
    )
    if method:
        positional = [a for a in positional if a.name != "self"]
    conversions: list[str] = []
    call_names: list[str] = []
    params: list[str] = []
    # `t.permute(2, 0, 1)` and `t.permute((2, 0, 1))`: a method whose only positional
    # argument is an int list takes it as varargs too, as PyTorch's methods do.
    varargs = method and len(positional) == 1 and _is_int_list(positional[0])
    position = 1 if method else 0
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
    if function.composite is not None:
        target = f"composites.{function.composite}"
    else:
        target = f"operators.{function.identifier}.call"
    call = f"{target}({', '.join(call_names)})"
    return BindingIR(
        op,
        ", ".join(params),
        tuple(conversions),
        call,
        str(function.schema),
        target,
        _overload_text(function, method),
        _overload_params(function, method),
    )


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


def _away_from_helpers(op: OperatorIR, helpers: frozenset[str]) -> OperatorIR:
    """The operator with its JVP functions renamed where a name would shadow a formula
    helper in functions.py (PyTorch's convolution_jvp helper and the JVP generated for
    `convolution`)."""
    if op.forward_ad is None or not any(
        j.function_name in helpers for j in op.forward_ad.jvps
    ):
        return op
    jvps = tuple(
        (
            replace(j, function_name=j.function_name + "_formula")
            if j.function_name in helpers
            else j
        )
        for j in op.forward_ad.jvps
    )
    return replace(op, forward_ad=replace(op.forward_ad, jvps=jvps))


def build(
    model: Model, kernel_helpers: frozenset[str], formula_helpers: frozenset[str]
) -> PackageIR:
    infos = {id(i.function): i for i in model.infos}
    operators = tuple(
        _away_from_helpers(
            _operator_ir(f, infos.get(id(f)), model.user_names), formula_helpers
        )
        for f in model.native_functions
        if f.numpy is not None
    )
    # In-place variants share their functional operator's class: one class per op.
    unique = {i.op: i for i in reversed(model.infos) if i.op is not None}
    nodes = tuple(
        _backward_ir(i) for i in model.infos if i.op is not None and unique[i.op] is i
    )
    functions, overloaded_functions = _group(
        [
            _binding(f, method=False)
            for f in model.native_functions
            if Variant.function in f.variants
        ]
    )
    methods, overloaded_methods = _group(
        [
            _binding(f, method=True)
            for f in model.native_functions
            if Variant.method in f.variants
        ]
    )
    return PackageIR(
        operators=operators,
        backward_nodes=nodes,
        functions=functions,
        methods=methods,
        overloaded_functions=overloaded_functions,
        overloaded_methods=overloaded_methods,
        return_types=tuple(
            ReturnTypeIR(
                return_type_name(f),
                f.schema.name.name.base,
                tuple(str(r.name) for r in f.schema.returns),
            )
            for f in model.native_functions
            if f.numpy is not None
            and len(f.schema.returns) > 1
            and all(r.name for r in f.schema.returns)
        ),
        kernel_helpers=tuple(sorted(kernel_helpers)),
        formula_helpers=tuple(sorted(formula_helpers)),
        formula_functions=tuple(
            sorted(
                {f.python_name for f in functions}
                | {o.python_name for o in overloaded_functions}
            )
        ),
        user_module=MODULE_NAME if model.kernels is not None else None,
    )
