"""Parse and check derivative formulas and kernel expressions with `ast`.

A formula is one Python expression. Before anything is generated, it is parsed and
walked node by node against a whitelist: only the node types in `_ALLOWED_NODES`,
only the names the formula's context allows (arguments, cotangents, outputs, helpers,
operators), only calls of helpers, operators and tensor methods, and never a dunder
attribute. Whatever is not allowed is a CodegenError naming what and, where there is
one, the close candidate. So `grad.__class__` or `__import__('os')` never reach the
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
import enum
import keyword
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from .errors import CodegenError, did_you_mean, excerpt, shorten


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
    "to_args_sizes": ("args_sizes", "[tuple(t.shape) for t in {x}]", "list[tuple[int, ...]]"),
    "to_args_sizes_symint": ("args_sizes", "[tuple(t.shape) for t in {x}]", "list[tuple[int, ...]]"),
    "to_args_scalartypes": ("args_scalartypes", "[t.dtype for t in {x}]", "list[dtype]"),
}

# Methods of any tensor that answer a question and create no graph.
TENSOR_QUERY_METHODS = frozenset({"is_complex", "is_floating_point", "dim", "numel"})
# Differentiable Tensor methods written by hand in the runtime, as PyTorch writes them
# in its Python bindings (Tensor.to takes a dtype, a device or a tensor).
HAND_WRITTEN_METHODS = frozenset({"to"})
# What a formula may call on a tensor besides the YAML's method variants.
_RUNTIME_METHODS = TENSOR_QUERY_METHODS | HAND_WRITTEN_METHODS
# Methods of PyTorch's at::Scalar allowed on Scalar arguments. Python numbers lack
# them, so `alpha.conj()` becomes a call of the runtime helper named here.
SCALAR_METHODS = {"conj": "scalar_conj"}

_ALLOWED_NODES: tuple[type[ast.AST], ...] = (
    ast.Expression,
    ast.Call,
    ast.keyword,
    ast.Name,
    ast.Load,
    ast.Constant,
    ast.Attribute,
    ast.Subscript,
    ast.BinOp,
    ast.UnaryOp,
    ast.BoolOp,
    ast.Compare,
    ast.IfExp,
    ast.Tuple,
    ast.List,
    ast.Slice,
    ast.operator,
    ast.unaryop,
    ast.boolop,
    ast.cmpop,
)

_NODE_DESCRIPTIONS = {
    ast.Lambda: "a lambda",
    ast.ListComp: "a comprehension",
    ast.SetComp: "a comprehension",
    ast.DictComp: "a comprehension",
    ast.GeneratorExp: "a generator expression",
    ast.NamedExpr: "an assignment (:=)",
    ast.Starred: "*-unpacking",
    ast.JoinedStr: "an f-string",
    ast.Dict: "a dict",
    ast.Set: "a set",
    ast.Await: "await",
    ast.Yield: "yield",
    ast.YieldFrom: "yield",
}


def parse_expression(text: str, what: str) -> ast.Expression:
    """Parse one Python expression; a statement or bad syntax is a CodegenError."""
    if not isinstance(text, str):
        raise CodegenError(f"{what} must be a string, got {type(text).__name__}: {excerpt(text)}")
    source = text.strip()
    if not source:
        raise CodegenError(f"{what} is empty")
    try:
        return ast.parse(source, mode="eval")
    except SyntaxError as error:
        detail = error.msg
        if error.offset:
            detail += f" at column {error.offset}"
        raise CodegenError(
            f"{what} is not a Python expression ({detail}): {shorten(source, 200)}"
        ) from None


def check_node_types(tree: ast.AST, what: str) -> None:
    """Reject any syntax outside the whitelist, and every dunder attribute."""
    for node in ast.walk(tree):
        if not isinstance(node, _ALLOWED_NODES):
            description = _NODE_DESCRIPTIONS.get(type(node), type(node).__name__)
            raise CodegenError(f"{what} may not contain {description}")
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and node.attr.endswith("__"):
            raise CodegenError(f"{what} may not use the attribute '{node.attr}'")
        if isinstance(node, ast.Name) and node.id.startswith("__"):
            raise CodegenError(f"{what} may not use the name '{node.id}'")
        if isinstance(node, ast.keyword) and node.arg is None:
            raise CodegenError(f"{what} may not contain **-unpacking")
        if isinstance(node, ast.Constant) and isinstance(node.value, bytes):
            raise CodegenError(f"{what} may not contain bytes literals")


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
        function = node.func
        if isinstance(function, ast.Attribute):
            receiver = function.value
            method = function.attr
            if (
                isinstance(receiver, ast.Name)
                and method in METADATA_SUGAR
                and not node.args
                and not node.keywords
                and self._is_tensor_name(receiver.id)
            ):
                suffix, expression, has_getter, python_type = METADATA_SUGAR[method]
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
            if (
                isinstance(receiver, ast.Name)
                and receiver.id in self.arguments
                and self.arguments[receiver.id].is_scalar
            ):
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
            if method not in self.names.methods and method not in _RUNTIME_METHODS:
                raise CodegenError(
                    f"no tensor method named '{method}'"
                    + did_you_mean(method, self.names.methods | _RUNTIME_METHODS)
                )
            function.value = self.visit(receiver)
            self._visit_arguments(node)
            return node
        if isinstance(function, ast.Name):
            if function.id not in self.names.callables:
                known = self.arguments.get(function.id)
                if known is not None or function.id in ("grad", "grads", *self.outputs):
                    raise CodegenError(f"'{function.id}' is not callable")
                raise CodegenError(
                    f"no helper or operator named '{function.id}'"
                    + did_you_mean(function.id, self.names.callables)
                )
            if function.id in self.names.user:
                if function.id in self.names.functions:
                    raise CodegenError(
                        f"'{function.id}' is both an operator of this package and a "
                        f"function in {self.names.user_file}'s __all__, so the call is "
                        "ambiguous; rename the function"
                    )
                self._visit_arguments(node)
                node.func = _user_function(function)
                return node
            if function.id == "not_implemented":
                self._check_not_implemented(node)
                return node
            if (
                function.id in LIST_METADATA_SUGAR
                and len(node.args) == 1
                and not node.keywords
                and isinstance(node.args[0], ast.Name)
                and node.args[0].id in self.arguments
                and self.arguments[node.args[0].id].is_tensor_list
            ):
                return self._list_metadata(node, function.id, node.args[0].id)
            if function.id in LIST_METADATA_SUGAR:
                raise CodegenError(
                    f"{function.id}() takes one Tensor[] argument of the operator, e.g. "
                    f"{function.id}(tensors)"
                )
            if (
                function.id == "zeros_like"
                and len(node.args) == 1
                and not node.keywords
                and isinstance(node.args[0], ast.Name)
                and self._is_tensor_name(node.args[0].id)
            ):
                return self._zeros_like(node, node.args[0].id)
            self._visit_arguments(node)
            return node
        raise CodegenError(
            "only helpers, operators and tensor methods may be called, not "
            f"'{ast.unparse(function)}'"
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
            func=ast.Attribute(value=ast.Name(id=local, ctx=ast.Load()), attr="zeros", ctx=ast.Load()),
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
            or not all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in node.args)
        ):
            raise CodegenError('not_implemented takes a string: not_implemented("name")')
        self.result.is_not_implemented = True

    def _is_tensor_name(self, name: str) -> bool:
        argument = self.arguments.get(name)
        return (argument is not None and argument.is_tensor) or name in self.outputs

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        if isinstance(node.value, ast.Name) and node.value.id == "grads":
            index = node.slice
            if not (isinstance(index, ast.Constant) and type(index.value) is int):
                raise CodegenError("grads may only be indexed with a constant: grads[0]")
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
            raise CodegenError(
                f"unknown name '{name}'" + did_you_mean(name, self._allowed_names())
            )
        return node


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
    ast.fix_missing_locations(rewritten)
    result.expression = ast.unparse(rewritten)
    result.saved = list(rewriter.saved.values())
    return result


def check_forward_formula(
    text: str,
    arguments: dict[str, ArgumentInfo],
    differentiable: Iterable[str],
    outputs: tuple[str, ...],
    names: FormulaNames,
) -> None:
    """Check a forward (JVP) formula: differentiable inputs as x_p / x_t, never the bare
    name; a non-differentiable tensor (an index, a mask) as x or x_p."""
    tree = parse_expression(text, "forward formula")
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
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            function = node.func
            if isinstance(function, ast.Name) and function.id not in names.callables:
                raise CodegenError(
                    f"no helper or operator named '{function.id}'"
                    + did_you_mean(function.id, names.callables)
                )
            if (
                isinstance(function, ast.Name)
                and function.id in names.user
                and function.id in names.functions
            ):
                raise CodegenError(
                    f"'{function.id}' is both an operator of this package and a "
                    f"function in {names.user_file}'s __all__, so the call is "
                    "ambiguous; rename the function"
                )
            if isinstance(function, ast.Attribute):
                method = function.attr
                if (
                    method not in names.methods
                    and method not in _RUNTIME_METHODS
                    and method not in SCALAR_METHODS
                    and method not in METADATA_SUGAR
                ):
                    raise CodegenError(
                        f"no tensor method named '{method}'"
                        + did_you_mean(method, names.methods)
                    )
        elif isinstance(node, ast.Name):
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
                if not _is_called(tree, node):
                    raise CodegenError(f"'{name}' must be called, not used as a value")
                continue
            raise CodegenError(
                f"unknown name '{name}' in a forward formula"
                + did_you_mean(name, allowed_values | names.callables)
            )


def _is_called(tree: ast.AST, name_node: ast.Name) -> bool:
    return any(isinstance(n, ast.Call) and n.func is name_node for n in ast.walk(tree))


def check_kernel_expression(
    text: str,
    arguments: Iterable[str],
    kernel_helpers: frozenset[str],
    user: frozenset[str] = frozenset(),
    user_file: str = "",
) -> str:
    """Check a native_functions.yaml `numpy:` expression; return it normalised, with
    the functions of the user's kernels module (`user`, the `__all__` of `user_file`)
    called through it."""
    tree = parse_expression(text, "numpy expression")
    check_node_types(tree, "a numpy expression")
    allowed = set(arguments)
    # An argument of the operator hides a helper of the same name, as in Python.
    user = frozenset(user - allowed)
    kernel_helpers = kernel_helpers | user
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            function = node.func
            if isinstance(function, ast.Name):
                if function.id not in kernel_helpers:
                    where = "gradgen.numpy_kernels.__all__"
                    if user_file:
                        where += f" and {user_file}'s __all__"
                    raise CodegenError(
                        f"no kernel helper named '{function.id}'; a numpy expression may "
                        f"call np.NAME(...) and the functions in {where}"
                        + did_you_mean(function.id, kernel_helpers)
                    )
            elif isinstance(function, ast.Attribute):
                if not _rooted_at_numpy(function):
                    if not isinstance(function.value, ast.Name) or function.value.id not in allowed:
                        raise CodegenError(
                            f"a numpy expression may call np.NAME(...), kernel helpers and "
                            f"methods of its arguments, not '{ast.unparse(function)}'"
                        )
            else:
                raise CodegenError(
                    f"a numpy expression may not call '{ast.unparse(function)}'"
                )
        elif isinstance(node, ast.Name):
            if node.id in allowed or node.id == "np" or node.id in kernel_helpers:
                continue
            raise CodegenError(
                f"unknown name '{node.id}' in a numpy expression"
                + did_you_mean(node.id, allowed | {"np"} | kernel_helpers)
            )
    if user:
        tree = _QualifyUserNames(user, calls_only=False).visit(tree)
        ast.fix_missing_locations(tree)
    return ast.unparse(tree)


def _user_function(name: ast.Name) -> ast.Attribute:
    """`f` as `user_kernels.f`: the user's function, reached through its module."""
    from .kernels_module import MODULE_NAME

    module = ast.copy_location(ast.Name(id=MODULE_NAME, ctx=ast.Load()), name)
    return ast.copy_location(ast.Attribute(value=module, attr=name.id, ctx=ast.Load()), name)


class _QualifyUserNames(ast.NodeTransformer):
    """Names of the user's kernels module -> `user_kernels.NAME` (in call position only,
    for formulas, where a bare helper name is an error and a bare name is a value)."""

    def __init__(self, names: frozenset[str], calls_only: bool) -> None:
        self.names = names
        self.calls_only = calls_only

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id in self.names:
            node.func = _user_function(node.func)
        return node

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if not self.calls_only and node.id in self.names:
            return _user_function(node)
        return node


def _rooted_at_numpy(node: ast.Attribute) -> bool:
    """`np.sum`, `np.linalg.norm`: an attribute chain that starts at the name `np`."""
    value: ast.expr = node.value
    while isinstance(value, ast.Attribute):
        value = value.value
    return isinstance(value, ast.Name) and value.id == "np"


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
            return ast.copy_location(ast.Name(id=self.renames[node.id], ctx=ast.Load()), node)
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
    text: str,
    scalars: set[str],
    renames: dict[str, str] | None = None,
    user: frozenset[str] = frozenset(),
) -> str:
    """A checked forward formula as Python over the JVP function's parameters; calls of
    the user's kernels module's functions (`user`) go through the module."""
    tree = parse_expression(text, "forward formula")
    rewritten = _LiveRewriter(scalars, renames or {}).visit(tree)
    if user:
        rewritten = _QualifyUserNames(user, calls_only=True).visit(rewritten)
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
                    value=ast.Name(id=f"{input_name}_t", ctx=ast.Load()), attr="conj", ctx=ast.Load()
                )
                return ast.copy_location(ast.Call(func=conj, args=[], keywords=[]), node)
            if node.id == input_name:
                return ast.copy_location(ast.Name(id=f"{input_name}_p", ctx=ast.Load()), node)
            return node

    body = Substitute().visit(tree).body
    wrapped = ast.Call(
        func=ast.Attribute(value=body, attr="conj", ctx=ast.Load()), args=[], keywords=[]
    )
    return ast.unparse(ast.fix_missing_locations(ast.Expression(body=wrapped)))


def names_used(text: str) -> set[str]:
    return {n.id for n in ast.walk(parse_expression(text, "formula")) if isinstance(n, ast.Name)}
