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
`next_edges` (compute_requires_grad and collect_next_edges fused), `set_history`,
`needs_input_grad`,
`grad_inputs`, `any_grad_defined`, `grad_input_mask`; saved inputs `self_`, saved
outputs `result_`, metadata `self_scalar_type`.

One builder module per generated file: ir_kernels.py (kernels.py), ir_autograd.py and
ir_forward_ad.py (variable_type.py), ir_backward.py (functions.py), ir_bindings.py
(ops.py, tensor_methods.py); the views they fill are in ir_views.py. This module joins
them into the `PackageIR` that emit.py renders.
"""

from __future__ import annotations

import ast
from dataclasses import replace

from .formulas import python_identifier
from .kernels_module import MODULE_NAME
from .model import NAMESPACES, DifferentiabilityInfo, Model, NativeFunction, Variant
from .ir_autograd import _autograd_ir, _is_plain_tensor, _not_implemented_ir
from .array_formulas import read_twins
from .ir_backward import _backward_ir
from .ir_bindings import _binding, _group
from .ir_forward_ad import _forward_ad_ir
from .ir_kernel_sources import kernel_sources
from .ir_kernels import (
    _inline_kernel,
    _kernel_body,
    _kernel_parameters,
    _tensor_unwraps,
)
from .ir_views import (
    DUNDER_OPERATORS,
    AutogradIR,
    BackwardIR,
    BindingIR,
    FormulaIR,
    ForwardADIR,
    ForwardIR,
    OperatorIR,
    NamespaceIR,
    OverloadedIR,
    PackageIR,
    ReturnTypeIR,
    SaveStatement,
    _is_inplace,
    _is_tensor_list,
    _returns_list,
    return_type_name,
)

__all__ = [
    "AutogradIR",
    "BackwardIR",
    "BindingIR",
    "build",
    "FormulaIR",
    "ForwardADIR",
    "ForwardIR",
    "OperatorIR",
    "NamespaceIR",
    "OverloadedIR",
    "PackageIR",
    "ReturnTypeIR",
    "return_type_name",
    "SaveStatement",
]


def _operator_ir(
    function: NativeFunction,
    info: DifferentiabilityInfo | None,
    user: frozenset[str] = frozenset(),
) -> OperatorIR:
    parameters, arguments = _kernel_parameters(function)
    scalar = _promoted_scalar(function)
    inline = _inline_kernel(function, _promoted_pair(function) or scalar[:1])
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
        promoted_pair=_promoted_pair(function),
        promotion_check=function.promotion_check if _promoted_pair(function) else "",
        integer_to_float=function.integer_to_float,
        tensor_unwraps=_tensor_unwraps(function),
        kernel_body=_kernel_body(function),
        inline_kernel=inline[0],
        inline_kinds=inline[1],
        inline_scalar=scalar if inline[0] else (),
        autograd=(
            _pair_dtype_saves(autograd, _promoted_pair(function))
            if autograd is not None and inline[0] and not scalar
            else autograd
        ),
        forward_ad=_forward_ad_ir(function, info, user),
        no_requires_grad_checks=checks,
        batching=(
            None
            if function.batching is None
            else (function.batching.kind, function.batching.names)
        ),
    )


def _promoted_pair(function: NativeFunction) -> tuple[str, ...]:
    """The two promoted arguments of a binary operator over plain Tensors (`self`,
    `other`), or () for any other promotion."""
    names = function.type_promotion
    if len(names) == 2 and all(_is_plain_tensor(function, n) for n in names):
        return tuple(python_identifier(n) for n in names)
    return ()


def _pair_dtype_saves(autograd: AutogradIR, pair: tuple[str, ...]) -> AutogradIR:
    """The saves of an operator whose fast path evaluates its kernel inline over the
    pair's arrays: a save of `SCALAR_TYPES[x._data.dtype]` for either of the pair reads
    the fast path's `dtype_0` / `dtype_1` there (read once, before the saves)."""
    names = {name: f"dtype_{index}" for index, name in enumerate(pair)}

    def fast(save: SaveStatement) -> SaveStatement:
        tree = ast.parse(save.value, mode="eval").body
        if (
            isinstance(tree, ast.Subscript)
            and isinstance(tree.value, ast.Name)
            and tree.value.id == "SCALAR_TYPES"
            and isinstance(tree.slice, ast.Attribute)
            and tree.slice.attr == "dtype"
            and isinstance(tree.slice.value, ast.Attribute)
            and tree.slice.value.attr == "_data"
            and isinstance(tree.slice.value.value, ast.Name)
            and tree.slice.value.value.id in names
        ):
            tree.slice = ast.Name(id=names[tree.slice.value.value.id], ctx=ast.Load())
            return replace(save, fast_value=ast.unparse(tree))
        return save

    return replace(autograd, input_saves=tuple(fast(s) for s in autograd.input_saves))


def _promoted_scalar(function: NativeFunction) -> tuple[str, ...]:
    """(tensor, scalar): the promoted arguments of an operator over a plain Tensor and a
    Scalar (`self ** exponent`, `self * other`), or () for any other promotion."""
    names = function.type_promotion
    if len(names) != 2 or not _is_plain_tensor(function, names[0]):
        return ()
    scalar = [a for a in function.arguments if a.name == names[1]]
    if scalar and str(scalar[0].type) == "Scalar":
        return tuple(python_identifier(n) for n in names)
    return ()


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


def _with_tensor_overloads(
    operators: tuple[OperatorIR, ...],
) -> tuple[OperatorIR, ...]:
    """The operators, each one over a tensor and a Scalar with its `tensor_overload`:
    the overload of the same name over the same two arguments as plain Tensors, where
    that one has a fast path."""
    pairs = {
        (op.name.split(".")[0], op.promoted_pair): op.identifier
        for op in operators
        if op.promoted_pair and op.fast_path
    }
    return tuple(
        (
            replace(op, tensor_overload=overload)
            if op.inline_scalar
            and (overload := pairs.get((op.name.split(".")[0], op.inline_scalar), ""))
            else op
        )
        for op in operators
    )


def _namespaces(public: list[NativeFunction]) -> tuple[NamespaceIR, ...]:
    """The functions of each python_module: namespace (linalg.py, ...)."""
    return tuple(
        NamespaceIR(module, *_group([_binding(f, False) for f in members]))
        for module in NAMESPACES
        for members in ([f for f in public if f.namespace == module],)
    )


def _formula_imports(public: list[NativeFunction]) -> tuple[tuple[str, str, str], ...]:
    """(module, public name, operator name) of each namespace function, which
    formulas call by the operator's name."""
    return tuple(
        sorted(
            {
                (str(f.namespace), f.public_name, f.python_name)
                for f in public
                if f.namespace is not None
            }
        )
    )


def _backward_nodes(model: Model) -> tuple[BackwardIR, ...]:
    """One Backward node per operator: in-place variants share their functional
    operator's class."""
    unique = {i.op: i for i in reversed(model.infos) if i.op is not None}
    twins = read_twins()
    return tuple(
        _backward_ir(i, twins)
        for i in model.infos
        if i.op is not None and unique[i.op] is i
    )


def _operators(
    model: Model, formula_helpers: frozenset[str], dunder_operators: tuple[str, ...]
) -> tuple[OperatorIR, ...]:
    """The operators with a kernel, each marked when Python's operators call it."""
    infos = {id(i.function): i for i in model.infos}
    operators = tuple(
        replace(
            _away_from_helpers(
                _operator_ir(f, infos.get(id(f)), model.user_names), formula_helpers
            ),
            dunder=f.name in dunder_operators,
        )
        for f in model.native_functions
        if f.numpy is not None
    )
    return _with_tensor_overloads(operators)


def build(
    model: Model,
    kernel_helpers: frozenset[str],
    formula_helpers: frozenset[str],
    dunder_operators: tuple[str, ...] = DUNDER_OPERATORS,
) -> PackageIR:
    operators = _operators(model, formula_helpers, dunder_operators)
    nodes = _backward_nodes(model)
    public = [f for f in model.native_functions if Variant.function in f.variants]
    functions, overloaded_functions = _group(
        [_binding(f, method=False) for f in public if f.namespace is None]
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
        namespaces=_namespaces(public),
        formula_imports=_formula_imports(public),
        user_module=MODULE_NAME if model.kernels is not None else None,
        kernel_sources=kernel_sources(model),
        array_forms=any(n.array_form is not None for n in nodes),
    )
