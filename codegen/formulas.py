"""Parse and check derivative formulas with `ast` (kernel expressions: expressions.py).

A formula is one Python expression. Before anything is generated, it is parsed and
walked node by node against a whitelist: only the node types in `_ALLOWED_NODES`
(expressions.py), only the names the formula's context allows (arguments, cotangents,
outputs, helpers, operators), only calls of helpers, operators and tensor methods, the
methods only on tensors and from the lists of allowed.py, no attribute reads, and never
a dunder. Whatever is not allowed is a CodegenError naming what and, where there is
one, the close candidate; all unknown names of a formula are named in one error. So
`grad.__class__`, `__import__('os')` or `"{0.__class__}".format(grad)` never reach the
generated code.

Analysis also decides what a Backward node saves, as PyTorch's load_derivatives does:
- `x.scalar_type()`, `x.sym_sizes()`, `x.options()`, `x.dim()`, `x.sym_numel()` on a
  tensor argument save that value (``x_scalar_type``, ...), not the tensor;
- a tensor argument used bare is saved as a SavedVariable, an output (`result`...) as a
  SavedVariable of an output;
- any other argument used (Scalar, int, int[], bool, ...) is saved as a plain value.
The rewritten expression refers to each saved thing by its local name.

A package generated with its own kernels module (`--kernels`, see kernels_module.py)
may also call the functions in that module's `__all__`, in kernel expressions and in
formulas; the rewritten expressions call them as `user_kernels.NAME(...)`.
"""

from __future__ import annotations

import ast
import copy
import enum
import keyword
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import ClassVar

from .allowed import FORMULA_FORBIDDEN_METHODS, FORMULA_HAND_METHODS
from .allowed import HAND_WRITTEN_METHODS as HAND_WRITTEN_METHODS
from .allowed import TENSOR_QUERY_METHODS as TENSOR_QUERY_METHODS
from .errors import CodegenError
from .expressions import QualifyUserNames, Unknowns, user_function
from .expressions import check_kernel_expression as check_kernel_expression
from .expressions import check_node_types as check_node_types
from .expressions import parse_expression as parse_expression


class SavedKind(enum.Enum):
    TENSOR = "tensor"  # SavedVariable of an input
    TENSOR_LIST = "tensor_list"  # SavedVariableList of a Tensor[] input
    OUTPUT = "output"  # SavedVariable of an output (no reference cycle)
    VALUE = "value"  # a plain Python value: scalar, dtype, shape, int list


@dataclass(frozen=True)
class SavedAttribute:
    """Something a Backward node keeps from the forward call."""

    name: str  # the Node's slot, e.g. "self_", "self_scalar_type", "alpha", "result_"
    local: str  # its name inside the formulas, e.g. "self", "self_scalar_type"
    kind: SavedKind
    source: str  # the argument or output it comes from
    save_expression: str  # how the wrapper computes it from `source`, e.g. "self.dtype"
    has_getter: bool  # exposed as `_saved_<local>` (PyTorch has none for dtypes)
    python_type: str  # its annotation in generated code, e.g. "dtype", "Tensor | None"


# x.<method>() sugar that saves metadata instead of the tensor: method -> (suffix of
# the saved name, expression at save time, has a _saved_ getter, Python type)
METADATA_SUGAR: dict[str, tuple[str, str, bool, str]] = {
    "scalar_type": ("scalar_type", "{x}.dtype", False, "dtype"),
    "sym_sizes": ("sym_sizes", "tuple({x}.shape)", True, "tuple[int, ...]"),
    "options": ("options", "{x}.dtype", False, "dtype"),
    "dim": ("dim", "{x}.dim()", True, "int"),
    "sym_numel": ("sym_numel", "{x}.numel()", True, "int"),
}

# f(xs) sugar on a Tensor[] argument that saves metadata of each tensor instead of the
# tensors: function -> (suffix of the saved name, expression at save time, Python type)
LIST_METADATA_SUGAR: dict[str, tuple[str, str, str]] = {
    "to_args_sizes": (
        "args_sizes",
        "[tuple(t.shape) for t in {x}]",
        "list[tuple[int, ...]]",
    ),
    "to_args_sizes_symint": (
        "args_sizes",
        "[tuple(t.shape) for t in {x}]",
        "list[tuple[int, ...]]",
    ),
    "to_args_scalartypes": (
        "args_scalartypes",
        "[t.dtype for t in {x}]",
        "list[dtype]",
    ),
}

# The methods a formula may call on a tensor besides the YAML's method variants, and the
# method names it may never call: explicit lists in allowed.py.
_RUNTIME_METHODS = FORMULA_HAND_METHODS
# Methods of PyTorch's at::Scalar allowed on Scalar arguments. Python numbers lack
# them, so `alpha.conj()` becomes a call of the runtime helper named here.
SCALAR_METHODS = {"conj": "scalar_conj"}


@dataclass(frozen=True)
class FormulaNames:
    """The callables a formula may use, besides its own arguments and outputs."""

    helpers: frozenset[str]
    functions: frozenset[str]
    methods: frozenset[str]
    # The `__all__` of the package's own kernels module (--kernels): called through the
    # module (`user_kernels.NAME(...)` in generated code); they win over `helpers`.
    user: frozenset[str] = frozenset()
    user_file: str = ""  # the kernels module's file name, for messages

    @property
    def callables(self) -> frozenset[str]:
        return (
            self.helpers
            | self.functions
            | self.user
            | {"not_implemented"}
            | set(LIST_METADATA_SUGAR)
        )


@dataclass(frozen=True)
class ArgumentInfo:
    """What a formula needs to know of one operator argument."""

    name: str
    is_tensor: bool  # Tensor or Tensor?
    is_scalar: bool  # Scalar / Scalar?
    is_tensor_list: bool  # Tensor[]
    python_type: str  # its annotation in generated code


@dataclass
class AnalysedFormula:
    """A checked formula, rewritten to use the names of what the node saves."""

    expression: str
    saved: list[SavedAttribute] = field(default_factory=list)
    uses_grad: bool = False
    uses_grads: bool = False  # the whole `grads` list
    uses_indexed_grads: bool = False  # grads[i] written as such (not from grad_<name>)
    grads_indices: set[int] = field(default_factory=set)
    uses_grad_input_mask: bool = False
    uses_retain_variables: bool = False
    uses_named_grads: bool = False  # grad_<return name>
    is_not_implemented: bool = False


class _BackwardRewriter(ast.NodeTransformer):
    """Checks names in a backward formula and rewrites the saved-metadata sugar."""

    def __init__(
        self,
        arguments: dict[str, ArgumentInfo],
        outputs: tuple[str, ...],
        names: FormulaNames,
        result: AnalysedFormula,
    ) -> None:
        self.arguments = arguments
        self.outputs = outputs
        self.names = names
        self.result = result
        self.saved: dict[str, SavedAttribute] = {}
        # Named returns give named cotangents: `grad_values` is grads[0] for `values`.
        self.named_grads = {
            f"grad_{name}": index
            for index, name in enumerate(outputs)
            if not name.startswith("result") and len(outputs) > 1
        }
        self.unknowns = _formula_unknowns()
        self.methods = _formula_methods(names)
        self.non_tensors = {
            **{
                n: f"an argument of type {a.python_type}"
                for n, a in arguments.items()
                if not a.is_tensor
            },
            **_NON_TENSOR_NAMES,
        }

    def _save(self, attribute: SavedAttribute) -> None:
        self.saved.setdefault(attribute.name, attribute)

    def _allowed_names(self) -> list[str]:
        return [
            *self.arguments,
            *self.outputs,
            "grad",
            "grads",
            "grad_input_mask",
            "retain_variables",
            *self.named_grads,
            *self.names.callables,
        ]

    def visit_Call(self, node: ast.Call) -> ast.AST:
        """The first handler of the call's kind that takes the call rewrites it; the
        last of each kind takes every call."""
        function = node.func
        if isinstance(function, ast.Attribute):
            for method_handler in self._METHOD_CALLS:
                rewritten = method_handler(self, node, function)
                if rewritten is not None:
                    return rewritten
        elif isinstance(function, ast.Name):
            for name_handler in self._NAME_CALLS:
                rewritten = name_handler(self, node, function)
                if rewritten is not None:
                    return rewritten
        raise CodegenError(
            "only helpers, operators and tensor methods may be called, not "
            f"'{ast.unparse(function)}'"
        )

    # -- x.method(...) ----------------------------------------------------------------

    def _metadata_sugar_call(
        self, node: ast.Call, function: ast.Attribute
    ) -> ast.AST | None:
        """`x.sym_sizes()` and the like on a Tensor argument save the value, not x."""
        receiver, method = function.value, function.attr
        if not (
            isinstance(receiver, ast.Name)
            and method in METADATA_SUGAR
            and not node.args
            and not node.keywords
            and self._is_tensor_name(receiver.id)
        ):
            return None
        suffix, expression, has_getter, python_type = METADATA_SUGAR[method]
        argument = self.arguments.get(receiver.id)
        if argument is not None and argument.python_type.endswith("| None"):
            # A Tensor? argument: PyTorch's bias->sym_sizes() is nullopt when undefined.
            expression = f"None if {{x}} is None else {expression}"
            python_type = f"{python_type} | None"
        local = f"{receiver.id}_{suffix}"
        self._save(
            SavedAttribute(
                name=local,
                local=local,
                kind=SavedKind.VALUE,
                source=receiver.id,
                save_expression=expression.format(x=python_identifier(receiver.id)),
                has_getter=has_getter,
                python_type=python_type,
            )
        )
        return ast.copy_location(ast.Name(id=local, ctx=ast.Load()), node)

    def _scalar_method_call(
        self, node: ast.Call, function: ast.Attribute
    ) -> ast.AST | None:
        """A method of a Scalar argument becomes the helper that computes it."""
        receiver, method = function.value, function.attr
        if not (
            isinstance(receiver, ast.Name)
            and receiver.id in self.arguments
            and self.arguments[receiver.id].is_scalar
        ):
            return None
        if method not in SCALAR_METHODS or node.args or node.keywords:
            raise CodegenError(
                f"'{receiver.id}' is a Scalar; the only method allowed on it is "
                + ", ".join(f"{m}()" for m in sorted(SCALAR_METHODS))
            )
        call = ast.Call(
            func=ast.Name(id=SCALAR_METHODS[method], ctx=ast.Load()),
            args=[self.visit(receiver)],
            keywords=[],
        )
        return ast.copy_location(call, node)

    def _tensor_method_call(self, node: ast.Call, function: ast.Attribute) -> ast.AST:
        """Any other method: a checked receiver and an allowed Tensor method."""
        _check_receiver(function.value, "a formula", self.non_tensors)
        function.value = self.visit(function.value)
        _check_method(function, "a formula", self.unknowns, self.methods)
        self._visit_arguments(node)
        return node

    # -- name(...) --------------------------------------------------------------------

    def _unknown_call(self, node: ast.Call, function: ast.Name) -> ast.AST | None:
        """A name that is no helper, operator or user function: an error, recorded."""
        if function.id in self.names.callables:
            return None
        if function.id in self.arguments or function.id in (
            "grad",
            "grads",
            *self.outputs,
        ):
            raise CodegenError(f"'{function.id}' is not callable")
        self.unknowns.add("helper", function.id, self.names.callables, function)
        self._visit_arguments(node)
        return node

    def _user_call(self, node: ast.Call, function: ast.Name) -> ast.AST | None:
        """A function of the user's kernels module, reached through the module."""
        if function.id not in self.names.user:
            return None
        if function.id in self.names.functions:
            raise CodegenError(
                f"'{function.id}' is both an operator of this package and a "
                f"function in {self.names.user_file}'s __all__, so the call is "
                "ambiguous; rename the function"
            )
        self._visit_arguments(node)
        node.func = user_function(function)
        return node

    def _not_implemented_call(
        self, node: ast.Call, function: ast.Name
    ) -> ast.AST | None:
        if function.id != "not_implemented":
            return None
        self._check_not_implemented(node)
        return node

    def _list_metadata_call(self, node: ast.Call, function: ast.Name) -> ast.AST | None:
        """`sizes(tensors)` and the like on a Tensor[] argument save the values."""
        if function.id not in LIST_METADATA_SUGAR:
            return None
        (argument,) = node.args if len(node.args) == 1 else (None,)
        if (
            node.keywords
            or not isinstance(argument, ast.Name)
            or argument.id not in self.arguments
            or not self.arguments[argument.id].is_tensor_list
        ):
            raise CodegenError(
                f"{function.id}() takes one Tensor[] argument of the operator, e.g. "
                f"{function.id}(tensors)"
            )
        return self._list_metadata(node, function.id, argument.id)

    def _zeros_like_call(self, node: ast.Call, function: ast.Name) -> ast.AST | None:
        if (
            function.id == "zeros_like"
            and len(node.args) == 1
            and not node.keywords
            and isinstance(node.args[0], ast.Name)
            and self._is_tensor_name(node.args[0].id)
        ):
            return self._zeros_like(node, node.args[0].id)
        return None

    def _helper_call(self, node: ast.Call, function: ast.Name) -> ast.AST:
        """A helper or an operator of the package: only its arguments are rewritten."""
        self._visit_arguments(node)
        return node

    _METHOD_CALLS: ClassVar[
        tuple[
            Callable[[_BackwardRewriter, ast.Call, ast.Attribute], ast.AST | None], ...
        ]
    ] = (_metadata_sugar_call, _scalar_method_call, _tensor_method_call)
    _NAME_CALLS: ClassVar[
        tuple[Callable[[_BackwardRewriter, ast.Call, ast.Name], ast.AST | None], ...]
    ] = (
        _unknown_call,
        _user_call,
        _not_implemented_call,
        _list_metadata_call,
        _zeros_like_call,
        _helper_call,
    )

    def _list_metadata(self, node: ast.Call, function: str, name: str) -> ast.AST:
        suffix, expression, python_type = LIST_METADATA_SUGAR[function]
        local = f"{name}_{suffix}"
        self._save(
            SavedAttribute(
                name=local,
                local=local,
                kind=SavedKind.VALUE,
                source=name,
                save_expression=expression.format(x=python_identifier(name)),
                has_getter=True,
                python_type=python_type,
            )
        )
        return ast.copy_location(ast.Name(id=local, ctx=ast.Load()), node)

    def _zeros_like(self, node: ast.Call, name: str) -> ast.AST:
        """`zeros_like(x)` saves x's shape and dtype (a TypeAndSize), not x."""
        local = f"{name}_info"
        self._save(
            SavedAttribute(
                name=local,
                local=local,
                kind=SavedKind.VALUE,
                source=name,
                save_expression=f"TypeAndSize({python_identifier(name)})",
                has_getter=False,
                python_type="TypeAndSize",
            )
        )
        call = ast.Call(
            func=ast.Attribute(
                value=ast.Name(id=local, ctx=ast.Load()), attr="zeros", ctx=ast.Load()
            ),
            args=[],
            keywords=[],
        )
        return ast.copy_location(call, node)

    def _visit_arguments(self, node: ast.Call) -> None:
        node.args = [self.visit(argument) for argument in node.args]
        for keyword_node in node.keywords:
            keyword_node.value = self.visit(keyword_node.value)

    def _check_not_implemented(self, node: ast.Call) -> None:
        if (
            len(node.args) not in (1, 2)
            or node.keywords
            or not all(
                isinstance(a, ast.Constant) and isinstance(a.value, str)
                for a in node.args
            )
        ):
            raise CodegenError(
                'not_implemented takes a string: not_implemented("name")'
            )
        self.result.is_not_implemented = True

    def _is_tensor_name(self, name: str) -> bool:
        argument = self.arguments.get(name)
        return (argument is not None and argument.is_tensor) or name in self.outputs

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        if isinstance(node.value, ast.Name) and node.value.id == "grads":
            index = node.slice
            if not (isinstance(index, ast.Constant) and type(index.value) is int):
                raise CodegenError(
                    "grads may only be indexed with a constant: grads[0]"
                )
            self.result.grads_indices.add(index.value)
            self.result.uses_indexed_grads = True
            return node
        self.generic_visit(node)
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        # Reached only for attributes that are not called (calls are handled above).
        raise CodegenError(
            f"attribute access '{ast.unparse(node)}' is not allowed; call a method "
            "(e.g. x.dim()) or a helper"
        )

    def visit_Name(self, node: ast.Name) -> ast.AST:
        name = node.id
        if name == "grad":
            self.result.uses_grad = True
        elif name == "grads":
            self.result.uses_grads = True
        elif name == "grad_input_mask":
            self.result.uses_grad_input_mask = True
        elif name == "retain_variables":
            self.result.uses_retain_variables = True
        elif name in self.named_grads:
            self.result.grads_indices.add(self.named_grads[name])
            self.result.uses_named_grads = True
            index = ast.Constant(value=self.named_grads[name])
            subscript = ast.Subscript(
                value=ast.Name(id="grads", ctx=ast.Load()), slice=index, ctx=ast.Load()
            )
            return ast.copy_location(subscript, node)
        elif name in self.arguments:
            info = self.arguments[name]
            if info.is_tensor:
                self._save(_saved_whole(name, SavedKind.TENSOR, "Tensor | None"))
            elif info.is_tensor_list:
                self._save(_saved_whole(name, SavedKind.TENSOR_LIST, "list[Tensor]"))
            else:
                self._save(_saved_whole(name, SavedKind.VALUE, info.python_type))
        elif name in self.outputs:
            self._save(_saved_whole(name, SavedKind.OUTPUT, "Tensor | None"))
        elif name in self.names.callables:
            raise CodegenError(f"'{name}' must be called, not used as a value")
        else:
            self.unknowns.add("name", name, self._allowed_names(), node)
        return node


# Names of a backward formula that are not tensors, so have no methods.
_NON_TENSOR_NAMES = {
    "grads": "the list of gradients",
    "grad_input_mask": "a tuple of booleans",
    "retain_variables": "a bool",
}


def _formula_unknowns(where: str = "") -> Unknowns:
    """The collector of a formula's unknown names, helpers and methods (one error)."""
    return Unknowns(
        {
            "name": (f"unknown name {{word}}{where}", f"unknown names {{word}}{where}"),
            "helper": (
                "no helper or operator named {word}",
                "no helpers or operators named {word}",
            ),
            "method": (
                "no tensor method named {word}",
                "no tensor methods named {word}",
            ),
        }
    )


def _formula_methods(names: FormulaNames) -> frozenset[str]:
    """What a formula may call on a tensor: the YAML's method variants and the hand-written
    methods of allowed.py, never one of its FORMULA_FORBIDDEN_METHODS."""
    return (names.methods - FORMULA_FORBIDDEN_METHODS) | FORMULA_HAND_METHODS


def _check_method(
    function: ast.Attribute, what: str, unknowns: Unknowns, allowed: frozenset[str]
) -> None:
    method = function.attr
    if method in FORMULA_FORBIDDEN_METHODS:
        raise CodegenError(
            f"{what} may not call the method '{method}' (see 'What an expression may "
            "call' in docs/yaml-reference.md)"
        )
    if method not in allowed:
        unknowns.add("method", method, allowed, function)


def _check_receiver(receiver: ast.expr, what: str, non_tensors: dict[str, str]) -> None:
    """A method is called on a tensor, or on an expression that computes one: never on a
    constant, a list or tuple display, or a name that is not a tensor (an int, a str, a
    Tensor[] list), whose Python methods (str.format, list.pop) are no tensor's."""
    if isinstance(receiver, ast.Constant):
        kind = type(receiver.value).__name__
        raise CodegenError(
            f"{what} may call methods of tensors only, not of a {kind} constant"
        )
    if isinstance(receiver, (ast.List, ast.Tuple)):
        kind = "list" if isinstance(receiver, ast.List) else "tuple"
        raise CodegenError(f"{what} may call methods of tensors only, not of a {kind}")
    if isinstance(receiver, ast.Name) and receiver.id in non_tensors:
        raise CodegenError(
            f"'{receiver.id}' is {non_tensors[receiver.id]}, not a tensor: {what} "
            "may call methods of tensors only"
        )


def _saved_whole(name: str, kind: SavedKind, python_type: str) -> SavedAttribute:
    """An argument or output saved as it is (tensors in a SavedVariable `name_`)."""
    return SavedAttribute(
        name=name if kind is SavedKind.VALUE else f"{name}_",
        local=name,
        kind=kind,
        source=name,
        save_expression=python_identifier(name),
        has_getter=True,
        python_type=python_type,
    )


def analyse_backward(
    text: str,
    arguments: dict[str, ArgumentInfo],
    outputs: tuple[str, ...],
    names: FormulaNames,
) -> AnalysedFormula:
    """Check a backward formula and find what it needs saved."""
    tree = parse_expression(text, "formula")
    check_node_types(tree, "a formula")
    result = AnalysedFormula(expression="")
    rewriter = _BackwardRewriter(arguments, outputs, names, result)
    rewritten = rewriter.visit(tree)
    rewriter.unknowns.raise_if_any()
    ast.fix_missing_locations(rewritten)
    result.expression = ast.unparse(rewritten)
    result.saved = list(rewriter.saved.values())
    return result


@dataclass(frozen=True)
class AnalysedForward:
    """A checked forward (JVP) formula, parsed once at load: its text, its tree (never
    changed: rendering rewrites a copy) and the names it uses."""

    text: str
    tree: ast.Expression = field(compare=False, repr=False)
    names: frozenset[str] = frozenset()


def analyse_forward(
    text: str,
    arguments: dict[str, ArgumentInfo],
    differentiable: Iterable[str],
    outputs: tuple[str, ...],
    names: FormulaNames,
) -> AnalysedForward:
    """Check a forward (JVP) formula: differentiable inputs as x_p / x_t, never the bare
    name; a non-differentiable tensor (an index, a mask) as x or x_p."""
    tree = parse_expression(text, "forward formula")
    _check_forward_tree(tree, arguments, differentiable, outputs, names)
    used = frozenset(n.id for n in ast.walk(tree) if isinstance(n, ast.Name))
    return AnalysedForward(text, tree, used)


def _check_forward_tree(
    tree: ast.Expression,
    arguments: dict[str, ArgumentInfo],
    differentiable: Iterable[str],
    outputs: tuple[str, ...],
    names: FormulaNames,
) -> None:
    check_node_types(tree, "a forward formula")
    differentiable = set(differentiable)
    allowed_values = set(outputs)
    for name in differentiable:
        allowed_values |= {f"{name}_p", f"{name}_t"}
    for name, info in arguments.items():
        if name not in differentiable:
            allowed_values.add(name)
            if info.is_tensor or info.is_tensor_list:
                allowed_values.add(f"{name}_p")
    # Names that are not tensors, so have no methods (Scalars have conj() only).
    non_tensors = {}
    scalars = set()
    for name, info in arguments.items():
        if info.is_scalar:
            scalars.add(name)
        elif info.is_tensor_list:
            kind = f"an argument of type {info.python_type}"
            non_tensors.update({name: kind, f"{name}_p": kind, f"{name}_t": kind})
        elif not info.is_tensor:
            non_tensors[name] = f"an argument of type {info.python_type}"
    methods = _formula_methods(names) | set(SCALAR_METHODS) | set(METADATA_SUGAR)
    unknowns = _formula_unknowns(" in a forward formula")
    called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            function = node.func
            if isinstance(function, ast.Name) and function.id not in names.callables:
                unknowns.add("helper", function.id, names.callables, function)
            elif (
                isinstance(function, ast.Name)
                and function.id in names.user
                and function.id in names.functions
            ):
                raise CodegenError(
                    f"'{function.id}' is both an operator of this package and a "
                    f"function in {names.user_file}'s __all__, so the call is "
                    "ambiguous; rename the function"
                )
            elif isinstance(function, ast.Attribute):
                receiver, method = function.value, function.attr
                if isinstance(receiver, ast.Name) and receiver.id in scalars:
                    if method not in SCALAR_METHODS or node.args or node.keywords:
                        raise CodegenError(
                            f"'{receiver.id}' is a Scalar; the only method allowed on it is "
                            + ", ".join(f"{m}()" for m in sorted(SCALAR_METHODS))
                        )
                    continue
                _check_receiver(receiver, "a forward formula", non_tensors)
                _check_method(
                    function, "a forward formula", unknowns, frozenset(methods)
                )
            elif not isinstance(function, ast.Name):
                raise CodegenError(
                    "only helpers, operators and tensor methods may be called, not "
                    f"'{ast.unparse(function)}'"
                )
        elif isinstance(node, ast.Attribute) and id(node) not in called:
            raise CodegenError(
                f"attribute access '{ast.unparse(node)}' is not allowed; call a method "
                "(e.g. x.dim()) or a helper"
            )
        elif isinstance(node, ast.Name) and id(node) not in called:
            name = node.id
            if name in allowed_values:
                continue
            if name in arguments and arguments[name].is_tensor:
                raise CodegenError(
                    f"using the base name of the {name} argument which is ambiguous. You "
                    f"should use {name}_p to access the primal value and {name}_t to "
                    "access the tangent."
                )
            if name in names.callables:
                raise CodegenError(f"'{name}' must be called, not used as a value")
            unknowns.add("name", name, allowed_values | names.callables, node)
    unknowns.raise_if_any()


def python_identifier(name: str) -> str:
    """A schema name as a Python identifier (keywords get a trailing underscore)."""
    return f"{name}_" if keyword.iskeyword(name) else name


# -- forward (JVP) formulas ---------------------------------------------------------------

# In a JVP the tensors themselves are at hand, so the metadata sugar becomes plain code.
_LIVE_SUGAR: dict[str, Callable[[ast.expr], ast.expr]] = {
    "scalar_type": lambda x: ast.Attribute(value=x, attr="dtype", ctx=ast.Load()),
    "options": lambda x: ast.Attribute(value=x, attr="dtype", ctx=ast.Load()),
    "sym_sizes": lambda x: ast.Call(
        func=ast.Name(id="tuple", ctx=ast.Load()),
        args=[ast.Attribute(value=x, attr="shape", ctx=ast.Load())],
        keywords=[],
    ),
    "sym_numel": lambda x: ast.Call(
        func=ast.Attribute(value=x, attr="numel", ctx=ast.Load()), args=[], keywords=[]
    ),
}


class _LiveRewriter(ast.NodeTransformer):
    """Sugar and Scalar methods as code over live values (for generated JVPs)."""

    def __init__(self, scalars: set[str], renames: dict[str, str]) -> None:
        self.scalars = scalars
        self.renames = renames

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in self.renames:
            return ast.copy_location(
                ast.Name(id=self.renames[node.id], ctx=ast.Load()), node
            )
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        function = node.func
        if isinstance(function, ast.Attribute) and not node.args and not node.keywords:
            receiver = self.visit(function.value)
            if function.attr in _LIVE_SUGAR:
                return ast.copy_location(_LIVE_SUGAR[function.attr](receiver), node)
            if (
                isinstance(function.value, ast.Name)
                and function.value.id in self.scalars
                and function.attr in SCALAR_METHODS
            ):
                call = ast.Call(
                    func=ast.Name(id=SCALAR_METHODS[function.attr], ctx=ast.Load()),
                    args=[receiver],
                    keywords=[],
                )
                return ast.copy_location(call, node)
            function.value = receiver
            return node
        self.generic_visit(node)
        return node


def forward_expression(
    formula: AnalysedForward,
    scalars: set[str],
    renames: dict[str, str] | None = None,
    user: frozenset[str] = frozenset(),
) -> str:
    """A checked forward formula as Python over the JVP function's parameters; calls of
    the user's kernels module's functions (`user`) go through the module."""
    tree = copy.deepcopy(formula.tree)
    rewritten = _LiveRewriter(scalars, renames or {}).visit(tree)
    if user:
        rewritten = QualifyUserNames(user, calls_only=True).visit(rewritten)
    ast.fix_missing_locations(rewritten)
    return ast.unparse(rewritten)


def element_wise_forward(backward: str, input_name: str) -> str:
    """PyTorch's auto_element_wise: the JVP from the backward formula of a function with
    a diagonal Jacobian, `(backward with grad -> x_t.conj() and x -> x_p).conj()`."""
    tree = parse_expression(backward, "formula")

    class Substitute(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:
            if node.id == "grad":
                conj = ast.Attribute(
                    value=ast.Name(id=f"{input_name}_t", ctx=ast.Load()),
                    attr="conj",
                    ctx=ast.Load(),
                )
                return ast.copy_location(
                    ast.Call(func=conj, args=[], keywords=[]), node
                )
            if node.id == input_name:
                return ast.copy_location(
                    ast.Name(id=f"{input_name}_p", ctx=ast.Load()), node
                )
            return node

    body = Substitute().visit(tree).body
    wrapped = ast.Call(
        func=ast.Attribute(value=body, attr="conj", ctx=ast.Load()),
        args=[],
        keywords=[],
    )
    return ast.unparse(ast.fix_missing_locations(ast.Expression(body=wrapped)))


def names_used(text: str) -> set[str]:
    return {
        n.id
        for n in ast.walk(parse_expression(text, "formula"))
        if isinstance(n, ast.Name)
    }
