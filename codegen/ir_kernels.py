"""The numpy kernel of an operator as kernels.py prints it: its parameters, the
unwrapping of tensor arguments and the body around the checked `numpy:` expression.
"""

from __future__ import annotations

import ast

from .formulas import names_used, python_identifier
from .model import INPLACE_OUT, NativeFunction
from .schema import BaseTy, BaseType, ListType, OptionalType, Type
from .types import python_type
from .ir_views import _is_inplace, _is_tensor_list, return_type_name


def _kernel_parameters(function: NativeFunction) -> tuple[str, str]:
    names = [python_identifier(a.name) for a in function.arguments]
    annotated = [
        f"{python_identifier(a.name)}: {python_type(a)}" for a in function.arguments
    ]
    return ", ".join(annotated), ", ".join(names)


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
            # promoted_array's common case (already in the common dtype) inline.
            lines.append(
                f"{name} = {name}._data if {name}._data.dtype is common_dtype.numpy "
                f"else promoted_array({name}, common_dtype)"
            )
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
            # Elementwise over several tensors: numpy's broadcasting error in PyTorch's
            # words; then wrap_result's common case (an array already in the common
            # dtype, or a 0-d result's numpy scalar of it) inline, as every binary
            # operator call takes it.
            return (
                "try:",
                f"    value = {function.numpy}",
                "except ValueError as error:",
                f"    raise broadcast_error(error, {', '.join(promoted)}) from None",
                "if type(value) is ndarray:",
                "    if value.dtype is common_dtype.numpy:",
                "        return array_tensor(value)",
                "elif type(value) is common_dtype.numpy.type:",
                "    return array_tensor(np.asarray(value))  # a 0-d result: numpy's scalar",
                f"return wrap_result(value{dtype})",
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


# The nodes an expression may consist of to be inlined into an operator's fast path:
# arithmetic and comparisons over the kernel's arguments and constants (no calls, no
# attributes, so nothing the fast path's module would have to import).
_INLINE_NODES = (
    ast.Expression,
    ast.Name,
    ast.Load,
    ast.Constant,
    ast.BinOp,
    ast.UnaryOp,
    ast.Compare,
    ast.BoolOp,
    ast.IfExp,
    ast.operator,
    ast.unaryop,
    ast.cmpop,
    ast.boolop,
)


# Kernel helpers that are numpy's arithmetic plus a check for some dtypes: for operands
# of one dtype of the kinds given, a call of the helper computes the expression given
# (over the helper's parameters), which a fast path may then inline, limited to those
# kinds (the kernel, with the helper's check, takes the others).
_ARITHMETIC_HELPERS: dict[str, tuple[tuple[str, ...], str, str]] = {
    # refuses two bool tensors, as PyTorch does (numpy_kernels/_checked.py); any alpha
    # but 1, and True, is the kernel's (alpha_check, and the range of self's dtype)
    "subtract": (
        ("self", "other", "alpha"),
        "self - other if alpha == 1 and alpha is not True else None",
        "iufc",
    ),
    # alpha_check for any alpha but 1 (the kernel's), and for True (`True == 1`)
    "add_scaled": (
        ("self", "other", "alpha"),
        "self + other if alpha == 1 and alpha is not True else None",
        "",
    ),
    # refuses integers to negative integer powers, as PyTorch does
    "power": (("self", "exponent"), "self ** exponent", "fc"),
}


def _arithmetic_of_helper(tree: ast.Expression) -> tuple[ast.Expression, str]:
    """A kernel expression that calls one of _ARITHMETIC_HELPERS with plain names as
    the helper's arithmetic over those names, and the kinds it is limited to; any other
    expression as it is ("": any kind)."""
    call = tree.body
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Name)
        and call.func.id in _ARITHMETIC_HELPERS
        and not call.keywords
        and all(isinstance(a, ast.Name) for a in call.args)
    ):
        return tree, ""
    parameters, expression, kinds = _ARITHMETIC_HELPERS[call.func.id]
    if len(call.args) != len(parameters):
        return tree, ""
    names = dict(zip(parameters, [a.id for a in call.args if isinstance(a, ast.Name)]))
    arithmetic = ast.parse(expression, mode="eval")
    for node in ast.walk(arithmetic):
        if isinstance(node, ast.Name):
            node.id = names[node.id]
    return arithmetic, kinds


def _inline_kernel(function: NativeFunction, pair: tuple[str, ...]) -> tuple[str, str]:
    """The `numpy:` expression of a binary elementwise kernel over two plain Tensors
    (`pair`; or over one and a Scalar: `pair` is then the tensor alone), with those
    tensors read as the fast path's `array_0` and `array_1`, for the
    fast path to evaluate inline in the common case (one dtype, numpy's result in it),
    and the dtype kinds it is limited to ("": any); ("", "") when the kernel is any
    other kind or its expression calls anything but an arithmetic helper (but in the
    `else` branch of a conditional expression, which becomes None: the kernel)."""
    if (
        not pair
        or function.numpy is None
        or function.integer_to_float
        or _is_inplace(function)
        or len(function.schema.returns) != 1
        or not function.schema.returns[0].type.is_tensor_like()
        or function.schema.returns[0].type.is_list_like() is not None
    ):
        return "", ""
    tree, kinds = _arithmetic_of_helper(ast.parse(function.numpy, mode="eval"))
    arguments = {python_identifier(a.name) for a in function.arguments}

    def inlinable(expression: ast.AST) -> bool:
        return all(
            isinstance(node, _INLINE_NODES)
            and (not isinstance(node, ast.Name) or node.id in arguments)
            for node in ast.walk(expression)
        )

    if not inlinable(tree):
        # `COMMON if TEST else OTHER` with only OTHER calling something: the common
        # case inline, None (the kernel runs) otherwise.
        body = tree.body
        if not (
            isinstance(body, ast.IfExp)
            and inlinable(body.test)
            and inlinable(body.body)
        ):
            return "", ""
        body.orelse = ast.Constant(None)
    arrays = {name: f"array_{index}" for index, name in enumerate(pair)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in arrays:
            node.id = arrays[node.id]
    return ast.unparse(_UfuncCalls(set(arrays.values())).visit(tree)), kinds


# numpy's ufunc behind each Python operator over arrays (`a * b` is np.multiply(a, b)).
# Not `**`: an array's `**` takes shortcuts of its own for some exponents (np.sqrt for
# 0.5, np.square for 2), whose results can differ from np.power's.
_UFUNCS: dict[type[ast.AST], str] = {
    ast.Add: "add",
    ast.Sub: "subtract",
    ast.Mult: "multiply",
    ast.Div: "true_divide",
    ast.FloorDiv: "floor_divide",
    ast.Mod: "remainder",
    ast.BitAnd: "bitwise_and",
    ast.BitOr: "bitwise_or",
    ast.BitXor: "bitwise_xor",
    ast.LShift: "left_shift",
    ast.RShift: "right_shift",
    ast.USub: "negative",
    ast.UAdd: "positive",
    ast.Invert: "invert",
    ast.Lt: "less",
    ast.LtE: "less_equal",
    ast.Gt: "greater",
    ast.GtE: "greater_equal",
    ast.Eq: "equal",
    ast.NotEq: "not_equal",
}


def _integer_power(node: ast.BinOp, arrays: set[str]) -> ast.expr:
    """`array ** exponent` with a Python int exponent that numpy's `**` takes no
    shortcut for (below -1, above 2) as np.power, and 2 as np.square (its shortcut),
    both asked for an array (ARRAY_OUT): the ufunc `**` calls, so the same bits, with
    a 0-d result an array already. Any other exponent stays `**` (-1: np.reciprocal,
    0.5: np.sqrt, in numpy 1.x also 0 and 1; a float: its shortcuts vary by version).
    np.power over one of the fast path's arrays (`arrays`, all of dtype `dtype_0`
    where the kernel is evaluated) takes the exponent as the 0-d array numpy would
    convert it to (variable_type_utils.INT_OPERANDS), made once rather than per call."""
    operand, exponent = node.left, node.right

    def name(identifier: str) -> ast.expr:
        return ast.Name(id=identifier, ctx=ast.Load())

    def ufunc(function: str, args: list[ast.expr]) -> ast.expr:
        return ast.Call(
            func=ast.Attribute(value=name("np"), attr=function, ctx=ast.Load()),
            args=args,
            keywords=[ast.keyword(arg="out", value=name("ARRAY_OUT"))],
        )

    is_int = ast.Compare(
        left=ast.Call(func=name("type"), args=[exponent], keywords=[]),
        ops=[ast.Is()],
        comparators=[name("int")],
    )
    no_shortcut = ast.UnaryOp(
        op=ast.Not(),
        operand=ast.Compare(
            left=ast.UnaryOp(op=ast.USub(), operand=ast.Constant(1)),
            ops=[ast.LtE(), ast.LtE()],
            comparators=[exponent, ast.Constant(2)],
        ),
    )
    power_exponent = exponent
    if isinstance(operand, ast.Name) and operand.id in arrays:
        power_exponent = ast.Subscript(
            value=name("INT_OPERANDS"),
            slice=ast.Tuple(elts=[exponent, name("dtype_0")], ctx=ast.Load()),
            ctx=ast.Load(),
        )
    integer = ast.IfExp(
        test=ast.Compare(left=exponent, ops=[ast.Eq()], comparators=[ast.Constant(2)]),
        body=ufunc("square", [operand]),
        orelse=ast.IfExp(
            test=no_shortcut,
            body=ufunc("power", [operand, power_exponent]),
            orelse=node,
        ),
    )
    return ast.IfExp(test=is_int, body=integer, orelse=node)


class _UfuncCalls(ast.NodeTransformer):
    """Rewrite each operator with an array operand as its numpy ufunc called with
    `out=ARRAY_OUT`: on numpy >= 2.3 that is `out=...`, which returns a 0-d array where
    the operator returns a numpy scalar, so a 0-d result needs no `np.asarray` (the same
    ufunc, so the same bits). Operators over the other arguments alone (`alpha == 1`)
    stay as they are."""

    def __init__(self, arrays: set[str]) -> None:
        self.arrays = arrays

    def _is_array(self, node: ast.expr) -> bool:
        return (isinstance(node, ast.Name) and node.id in self.arrays) or (
            isinstance(node, ast.Call)
        )

    def _call(self, op: ast.AST, operands: list[ast.expr]) -> ast.expr:
        return ast.Call(
            func=ast.Attribute(
                value=ast.Name(id="np", ctx=ast.Load()),
                attr=_UFUNCS[type(op)],
                ctx=ast.Load(),
            ),
            args=operands,
            keywords=[
                ast.keyword(arg="out", value=ast.Name(id="ARRAY_OUT", ctx=ast.Load()))
            ],
        )

    def visit_BinOp(self, node: ast.BinOp) -> ast.expr:
        self.generic_visit(node)
        if (
            isinstance(node.op, ast.Pow)
            and self._is_array(node.left)
            and isinstance(node.right, ast.Name)
            and node.right.id not in self.arrays
        ):
            return _integer_power(node, self.arrays)
        if type(node.op) in _UFUNCS and (
            self._is_array(node.left) or self._is_array(node.right)
        ):
            return self._call(node.op, [node.left, node.right])
        return node

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.expr:
        self.generic_visit(node)
        if type(node.op) in _UFUNCS and self._is_array(node.operand):
            return self._call(node.op, [node.operand])
        return node

    def visit_Compare(self, node: ast.Compare) -> ast.expr:
        self.generic_visit(node)
        operands = [node.left, *node.comparators]
        if (
            len(node.ops) == 1
            and type(node.ops[0]) in _UFUNCS
            and any(self._is_array(o) for o in operands)
        ):
            return self._call(node.ops[0], operands)
        return node
