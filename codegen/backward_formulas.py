"""Backward formulas (derivatives.yaml gradients): `analyse_backward` checks one
formula and rewrites it into the expression a Backward node evaluates, deciding what
the node saves (see formulas.py for the rules).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import ClassVar

from .errors import CodegenError
from .cpp_spelling import parse_formula
from .expressions import check_node_types, user_function
from .formulas import (
    AnalysedFormula,
    ArgumentInfo,
    FormulaNames,
    LIST_METADATA_SUGAR,
    LIVE_SUGAR,
    METADATA_SUGAR,
    SCALAR_METHODS,
    SavedAttribute,
    SavedKind,
    _check_method,
    _check_receiver,
    _formula_methods,
    _formula_unknowns,
    python_identifier,
)


class _BackwardRewriter(ast.NodeTransformer):
    """Checks names in a backward formula and rewrites the saved-metadata sugar."""

    def __init__(
        self,
        arguments: dict[str, ArgumentInfo],
        outputs: tuple[str, ...],
        names: FormulaNames,
        result: AnalysedFormula,
        output_differentiability: tuple[bool, ...] | None = None,
    ) -> None:
        self.arguments = arguments
        self.outputs = outputs
        self.names = names
        self.result = result
        self.saved: dict[str, SavedAttribute] = {}
        # Named returns give named cotangents: `grad_values` is grads[0] for `values`.
        # The node has one cotangent per differentiable output, in order.
        differentiable = [
            name
            for name, flag in zip(
                outputs, output_differentiability or (True,) * len(outputs)
            )
            if flag
        ]
        self.named_grads = {
            f"grad_{name}": index
            for index, name in enumerate(differentiable)
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

    def _live_sugar_call(
        self, node: ast.Call, function: ast.Attribute
    ) -> ast.AST | None:
        """`grad.sym_sizes()` and the like on a tensor that is not saved (a cotangent,
        a computed tensor): the value, computed where the formula runs."""
        receiver, method = function.value, function.attr
        if method not in LIVE_SUGAR or node.args or node.keywords:
            return None
        if isinstance(receiver, ast.Name) and receiver.id in self.arguments:
            return None  # a non-tensor argument: the Scalar and receiver checks say so
        _check_receiver(receiver, "a formula", self.non_tensors)
        live = LIVE_SUGAR[method](self.visit(receiver))
        return ast.copy_location(live, node)

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
    ] = (
        _metadata_sugar_call,
        _live_sugar_call,
        _scalar_method_call,
        _tensor_method_call,
    )
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
    output_differentiability: tuple[bool, ...] | None = None,
) -> AnalysedFormula:
    """Check a backward formula and find what it needs saved. With
    `output_differentiability`, `grad_NAME` counts the differentiable outputs only."""
    tree = parse_formula(text, "formula", names)
    check_node_types(tree, "a formula")
    result = AnalysedFormula(expression="")
    rewriter = _BackwardRewriter(
        arguments, outputs, names, result, output_differentiability
    )
    rewritten = rewriter.visit(tree)
    rewriter.unknowns.raise_if_any()
    ast.fix_missing_locations(rewritten)
    result.expression = ast.unparse(rewritten)
    result.saved = list(rewriter.saved.values())
    return result
