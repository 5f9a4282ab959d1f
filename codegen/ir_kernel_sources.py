"""The kernels as data for gradgen.compile (generated/kernel_sources.py).

gradgen.compile renders straight-line numpy from the same checked `numpy:` expressions
kernels.py runs, without jinja2 or the generator: this module lists, per operator, the
expression and what the compiler must know around it (argument names and which are
tensors, the type-promotion arguments, the return kinds). Every string reaches the
generated file as a repr() literal (the template's `py` filter).

Operators left out: those without a `numpy:` expression (composites; the compiler
records the operators they call instead) and those that write into an argument
(in-place and out= kernels; the compiler runs those eagerly, as a graph break).
"""

from __future__ import annotations

from dataclasses import dataclass

from .formulas import python_identifier
from .model import Model, NativeFunction
from .schema import SchemaKind, Type


@dataclass(frozen=True)
class KernelSourceIR:
    name: str  # "add.Tensor", the OperatorHandle's name
    expression: str  # the checked numpy expression
    arguments: tuple[str, ...]  # the kernel's parameters, in schema order
    kinds: tuple[str, ...]  # per argument: KIND_* below
    promoted: tuple[str, ...]  # the type-promotion arguments
    integer_to_float: bool
    returns: tuple[str, ...]  # per return: KIND_* below


# What an argument or a return is, for the compiler.
KIND_TENSOR = "Tensor"
KIND_OPTIONAL_TENSOR = "Tensor?"
KIND_TENSOR_LIST = "Tensor[]"
KIND_OPTIONAL_TENSOR_LIST = "Tensor?[]"
KIND_VALUE = "value"


def _kind(type_: Type) -> str:
    if not type_.is_tensor_like():
        return KIND_VALUE
    if type_.is_list_like() is not None:
        return KIND_OPTIONAL_TENSOR_LIST if type_.is_nullable() else KIND_TENSOR_LIST
    return KIND_OPTIONAL_TENSOR if type_.is_nullable() else KIND_TENSOR


def _kernel_source(function: NativeFunction) -> KernelSourceIR:
    assert function.numpy is not None
    return KernelSourceIR(
        name=function.name,
        expression=function.numpy,
        arguments=tuple(python_identifier(a.name) for a in function.arguments),
        kinds=tuple(_kind(a.type) for a in function.arguments),
        promoted=tuple(python_identifier(n) for n in function.type_promotion),
        integer_to_float=function.integer_to_float,
        returns=tuple(_kind(r.type) for r in function.schema.returns),
    )


def kernel_sources(model: Model) -> tuple[KernelSourceIR, ...]:
    """One entry per functional operator with a `numpy:` expression."""
    return tuple(
        _kernel_source(f)
        for f in model.native_functions
        if f.numpy is not None and f.schema.kind() is SchemaKind.functional
    )
