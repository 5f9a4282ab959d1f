"""Python annotations for schema types, as generated code prints them."""

from __future__ import annotations

from .schema import Argument, BaseTy, Type

_PYTHON_TYPES = {
    BaseTy.Tensor: "Tensor",
    BaseTy.Scalar: "Number",
    BaseTy.int: "int",
    BaseTy.SymInt: "int",
    BaseTy.float: "float",
    BaseTy.bool: "bool",
    BaseTy.str: "str",
    BaseTy.ScalarType: "dtype",
}


def python_type(argument: Argument, accepts_numbers: bool = False) -> str:
    """A readable annotation for an argument of a generated function."""
    type_ = argument.type
    listed = type_.is_list_like()
    if listed is not None:
        element = _element_annotation(listed.elem)
        if listed.elem.is_nullable():  # Tensor?[]: a list that may hold None
            element += " | None"
        text = f"Sequence[{element}]"
        nullable = type_ is not listed  # T[]?: the list itself may be None
    else:
        text = _element_annotation(type_)
        if accepts_numbers and text == "Tensor":
            text = "Tensor | Number"
        nullable = type_.is_nullable()
    if nullable and not text.endswith("| None"):
        text += " | None"
    return text


def _element_annotation(type_: Type) -> str:
    for base, name in _PYTHON_TYPES.items():
        if type_.is_base_ty_like(base):
            return name
    return "Any"
