"""Argument type errors of the single-overload bindings (`gradgen.tril`, `t.renorm`,
...), compared with PyTorch's: an argument of the wrong type is PyTorch's TypeError
naming the function, the argument and (when given by position) its position, never a
traceback from inside the kernel; right calls are unaffected."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradgen
from torch_oracle import oracle, outcome


def _x(lib: Any) -> Any:
    return lib.tensor([[2.0, 0.5, 0.25], [0.5, 3.0, 0.5], [0.25, 0.5, 4.0]])


def _upper(lib: Any) -> Any:
    return lib.tensor([[2.0, 1.0, 0.5], [0.0, 3.0, 1.0], [0.0, 0.0, 4.0]])


F = Callable[[Any], Any]

# One call per (argument kind, way of passing it), each refused by PyTorch.
WRONG: dict[str, F] = {
    # Number (Scalar): positional in a method and in a function, by keyword
    "scalar-method": lambda lib: _x(lib).renorm("a", 0, 1.0),
    "scalar-function": lambda lib: lib.renorm(_x(lib), "a", 0, 1.0),
    "scalar-keyword": lambda lib: _x(lib).renorm(p="a", dim=0, maxnorm=1.0),
    "scalar-none": lambda lib: lib.renorm(_x(lib), 2, 0, None),
    "scalar-list": lambda lib: _x(lib).renorm([2], 0, 1.0),
    "scalar-none-elu": lambda lib: lib.nn.functional.elu(_x(lib), None),
    "scalar-none-threshold": lambda lib: lib.threshold(_x(lib), 0.5, None),
    "scalar-nn": lambda lib: lib.nn.functional.leaky_relu(_x(lib), "a"),
    "scalar-softplus": lambda lib: lib.nn.functional.softplus(_x(lib), "a"),
    # int: a string, a float (numpy would take it), a bool, None, a float tensor
    "int-str": lambda lib: lib.tril(_x(lib), "a"),
    "int-keyword": lambda lib: lib.tril(_x(lib), diagonal="a"),
    "int-float": lambda lib: lib.tril(_x(lib), 1.5),
    "int-bool": lambda lib: _x(lib).tril(True),
    "int-numpy-float": lambda lib: lib.triu(_x(lib), np.float64(1.0)),
    "int-none": lambda lib: _x(lib).renorm(2, None, 1.0),
    "int-float-tensor": lambda lib: _x(lib).renorm(2, lib.tensor(0.0), 1.0),
    "int-fourth": lambda lib: lib.diagonal(_x(lib), 0, 1, "a"),
    "int-power": lambda lib: lib.matrix_power(_x(lib), 2.0),
    "int-first": lambda lib: lib.polygamma(1.0, _x(lib)),
    "int-optional": lambda lib: lib.argmax(_x(lib), 0.5),
    "int-optional-keyword": lambda lib: _x(lib).argmax(dim="a"),
    "int-histc": lambda lib: lib.histc(_x(lib), "a"),
    # float (double)
    "float-str": lambda lib: lib.pdist(_x(lib), "a"),
    "float-none": lambda lib: lib.pdist(_x(lib), None),
    "float-none-silent": lambda lib: lib.pinverse(_x(lib), None),
    "float-optional-keyword": lambda lib: lib.nan_to_num(_x(lib), nan="a"),
    "float-optional-third": lambda lib: lib.nan_to_num(_x(lib), None, "a"),
    # bool: an int, a string, None, numpy's bool
    "bool-int": lambda lib: lib.cholesky_inverse(_upper(lib), 1),
    "bool-str-keyword": lambda lib: _upper(lib).cholesky_inverse(upper="a"),
    "bool-none": lambda lib: lib.cholesky_inverse(_upper(lib), None),
    "bool-numpy": lambda lib: _upper(lib).cholesky_inverse(np.bool_(True)),
    "bool-after-optional": lambda lib: lib.argmax(_x(lib), None, "a"),
    "bool-method-third": lambda lib: _x(lib).triangular_solve(_upper(lib), True, 1),
    # str
    "str-int": lambda lib: lib.nn.functional.gelu(_x(lib), approximate=1),
    # Tensor: a method counts its arguments after self
    "tensor-method": lambda lib: _x(lib).cholesky_solve("a"),
}


def _error(call: F, lib: Any) -> tuple[str, str]:
    result = outcome(lambda: call(lib))
    assert isinstance(result, Exception), f"no error: {result!r}"
    return type(result).__name__, str(result)


@pytest.mark.parametrize("case", list(WRONG))
def test_wrong_argument_type_is_pytorchs_error(case: str) -> None:
    call = WRONG[case]
    expected = oracle("error", lambda torch: outcome(lambda: call(torch)))
    assert isinstance(expected, Exception)
    assert _error(call, gradgen) == (type(expected).__name__, str(expected))


def test_the_kernels_error_is_kept_as_context() -> None:
    """An error found after the call hides the kernel's traceback (`from None`) but
    keeps it for a debugger."""
    with pytest.raises(TypeError) as caught:
        gradgen.nn.functional.leaky_relu(_x(gradgen), "a")
    assert caught.value.__suppress_context__
    assert caught.value.__context__ is not None


def test_an_error_not_about_types_is_the_operators() -> None:
    """Arguments of the right types: the operator's own error goes through unchanged."""
    expected = oracle(
        "error", lambda torch: outcome(lambda: torch.tril(torch.ones(3), 0))
    )
    result = outcome(lambda: gradgen.tril(gradgen.ones(3), 0))
    assert isinstance(expected, Exception) and isinstance(result, Exception)
    assert (type(result).__name__, str(result)) == (
        type(expected).__name__,
        str(expected),
    )


# Calls PyTorch takes: values of the accepted types other than the plain Python one.
RIGHT: dict[str, F] = {
    "int-numpy": lambda lib: lib.tril(_x(lib), np.int64(1)),
    "int-tensor": lambda lib: lib.tril(_x(lib), lib.tensor(1)),
    "int-one-element-tensor": lambda lib: lib.tril(_x(lib), lib.tensor([1])),
    "int-keyword": lambda lib: _x(lib).renorm(p=2, dim=1, maxnorm=1.0),
    "int-optional-none": lambda lib: lib.argmax(_x(lib), None, False),
    "scalar-numpy": lambda lib: lib.renorm(_x(lib), np.float32(2), 0, 1),
    "scalar-tensor": lambda lib: _x(lib).renorm(lib.tensor(2.0), 0, 1.0),
    "scalar-bool": lambda lib: lib.nn.functional.leaky_relu(_x(lib) - 1, True),
    "float-int": lambda lib: lib.pdist(_x(lib), 1),
    "float-numpy": lambda lib: lib.pdist(_x(lib), np.float32(3.0)),
    "bool-true": lambda lib: lib.cholesky_inverse(_upper(lib), True),
    "bool-keyword": lambda lib: _upper(lib).cholesky_inverse(upper=False),
}


@pytest.mark.parametrize("case", list(RIGHT))
def test_right_calls_are_unaffected(case: str) -> None:
    call = RIGHT[case]
    expected = oracle("value", lambda torch: call(torch))
    result = call(gradgen)
    np.testing.assert_allclose(result.numpy(), expected, rtol=1e-6, atol=1e-12)
