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

This module holds what both kinds of formula share (what a Backward node saves, the
metadata sugar, the checks of names and methods); backward_formulas.py analyses
gradient formulas, forward_formulas.py forward derivatives.
"""

from __future__ import annotations

import ast
import enum
import keyword
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from .allowed import FORMULA_FORBIDDEN_METHODS, FORMULA_HAND_METHODS
from .cpp_spelling import parse_formula
from .errors import CodegenError
from .expressions import Unknowns


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
# (sizes and numel read the array's own tuple and int: what `tuple(x.shape)` and
# `x.numel()` give, without their calls, on every recorded call that saves them)
METADATA_SUGAR: dict[str, tuple[str, str, bool, str]] = {
    "scalar_type": ("scalar_type", "{x}.dtype", False, "dtype"),
    "sym_sizes": ("sym_sizes", "{x}._data.shape", True, "tuple[int, ...]"),
    "options": ("options", "{x}.dtype", False, "dtype"),
    "dim": ("dim", "{x}.dim()", True, "int"),
    "sym_numel": ("sym_numel", "{x}._data.size", True, "int"),
    "sym_strides": ("sym_strides", "{x}.stride()", True, "tuple[int, ...]"),
}

# Where the tensor itself is at hand (in a JVP; in a backward formula, on a tensor that
# is not saved, such as grad), the metadata sugar becomes plain code.
LIVE_SUGAR: dict[str, Callable[[ast.expr], ast.expr]] = {
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
    "sym_strides": lambda x: ast.Call(
        func=ast.Attribute(value=x, attr="stride", ctx=ast.Load()), args=[], keywords=[]
    ),
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
    # The keyword-only parameters of each operator's overloads, for C++ calls that pass
    # them by position: ("function" | "method", name) -> ((positional count, keyword-only
    # names), ...), a method's positional count without self.
    keyword_only: Mapping[tuple[str, str], tuple[tuple[int, tuple[str, ...]], ...]] = (
        field(default_factory=dict, compare=False, hash=False)
    )

    @property
    def callables(self) -> frozenset[str]:
        return (
            self.helpers
            | self.functions
            | self.user
            | {"not_implemented", "len"}
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


def python_identifier(name: str) -> str:
    """A schema name as a Python identifier (keywords get a trailing underscore)."""
    return f"{name}_" if keyword.iskeyword(name) else name


def names_used(text: str) -> set[str]:
    return {
        n.id
        for n in ast.walk(parse_formula(text, "formula"))
        if isinstance(n, ast.Name)
    }
