"""Batch B (binary, comparison and logical operators) beyond the operator table:
grad_fn names, result dtypes, special values, subgradients at ties and bounds, error
messages and the Python operators, each checked against PyTorch."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradgen

# -- helpers -------------------------------------------------------------------------

DTYPES = ("bool", "int32", "int64", "float32", "float64", "complex64", "complex128")
SAMPLES = {
    "bool": [[True, False, True], [False, True, True]],
    "int32": [[3, -4, 0], [7, 2, -5]],
    "int64": [[5, -7, 2], [0, 3, -1]],
    "float32": [[1.5, -2.25, 0.0], [3.0, -0.5, 2.5]],
    "float64": [[-1.25, 2.0, 0.5], [0.75, -3.0, 1.0]],
    "complex64": [[1 + 2j, -1j, 0.5], [2 - 1j, 1.5, -2 + 0.5j]],
    "complex128": [[-1 + 1j, 2j, 1.0], [0.5 - 0.5j, -2.0, 1 + 1j]],
}


def both(
    torch: Any, data: Any, dtype: str, requires_grad: bool = False
) -> tuple[Any, Any]:
    """The same tensor in gradgen and in torch."""
    array = np.array(data, dtype=np.dtype(dtype))
    ours = gradgen.tensor(array.copy(), requires_grad=requires_grad)
    theirs = torch.tensor(array.copy(), requires_grad=requires_grad)
    return ours, theirs


def outcome(function: Callable[[], Any]) -> tuple[str, Any]:
    """('ok', (dtype name, values)) or ('error', (type name, message))."""
    try:
        result = function()
    except Exception as error:  # noqa: BLE001 - compared with torch's outcome
        return "error", (type(error).__name__, str(error))
    values = result.detach().numpy() if hasattr(result, "detach") else result
    return "ok", (str(result.dtype).split(".")[-1], np.asarray(values))


def assert_same_outcome(
    ours: Callable[[], Any], theirs: Callable[[], Any], rtol: float = 0.0
) -> None:
    """Same error (type and message), or same dtype and values (exactly, unless rtol)."""
    kind, got = outcome(ours)
    expected_kind, expected = outcome(theirs)
    assert kind == expected_kind, (got, expected)
    if kind == "error":
        assert got == expected
        return
    assert got[0] == expected[0], (got, expected)
    if rtol:
        np.testing.assert_allclose(got[1], expected[1], rtol=rtol)
    else:
        np.testing.assert_array_equal(got[1], expected[1])


def name(tensor: Any) -> str | None:
    return None if tensor.grad_fn is None else tensor.grad_fn.name()


# -- grad_fn class names ---------------------------------------------------------------

EXPRESSIONS: dict[str, Callable[[Any, Any, Any], Any]] = {
    "2 - x": lambda lib, x, y: 2 - x,
    "x - 2": lambda lib, x, y: x - 2,
    "x / 2": lambda lib, x, y: x / 2,
    "x / y": lambda lib, x, y: x / y,
    "rsub(x, y)": lambda lib, x, y: lib.rsub(x, y),
    "div floor": lambda lib, x, y: lib.div(x, y, rounding_mode="floor"),
    "div trunc": lambda lib, x, y: x.div(2.0, rounding_mode="trunc"),
    "true_divide": lambda lib, x, y: lib.true_divide(x, y),
    "x % 2": lambda lib, x, y: x % 2,
    "x % y": lambda lib, x, y: x % y,
    "fmod scalar": lambda lib, x, y: lib.fmod(x, 2),
    "fmod tensor": lambda lib, x, y: x.fmod(y),
    "clamp": lambda lib, x, y: x.clamp(0, 1),
    "clamp tensors": lambda lib, x, y: lib.clamp(x, y, y + 1),
    "clamp_min": lambda lib, x, y: lib.clamp_min(x, 0),
    "clamp_max": lambda lib, x, y: x.clamp_max(0),
    "where": lambda lib, x, y: lib.where(x > y, x, y),
    "where scalar other": lambda lib, x, y: lib.where(x > 0, x, 2.0),
    "where scalar self": lambda lib, x, y: lib.where(x > 0, 2.0, x),
    "maximum": lambda lib, x, y: lib.maximum(x, y),
    "minimum": lambda lib, x, y: x.minimum(y),
    "fmax": lambda lib, x, y: lib.fmax(x, y),
    "fmin": lambda lib, x, y: lib.fmin(x, y),
    "atan2": lambda lib, x, y: lib.atan2(x, y),
    "hypot": lambda lib, x, y: lib.hypot(x, y),
    "x == y": lambda lib, x, y: x == y,
    "x < 1": lambda lib, x, y: x < 1,
    "logical_and": lambda lib, x, y: lib.logical_and(x, y),
    "logical_not": lambda lib, x, y: x.logical_not(),
    "isnan": lambda lib, x, y: x.isnan(),
    "isinf": lambda lib, x, y: lib.isinf(x),
    "isfinite": lambda lib, x, y: x.isfinite(),
}


@pytest.mark.parametrize("expression", sorted(EXPRESSIONS))
def test_grad_fn_names_and_requires_grad_match_torch(
    torch: Any, expression: str
) -> None:
    function = EXPRESSIONS[expression]
    x, tx = both(torch, [1.5, -2.0, 3.0], "float64", requires_grad=True)
    y, ty = both(torch, [0.5, 2.0, -1.0], "float64", requires_grad=True)
    ours, theirs = function(gradgen, x, y), function(torch, tx, ty)
    assert name(ours) == name(theirs)
    assert ours.requires_grad == theirs.requires_grad
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_allclose(
        ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-12
    )


@pytest.mark.parametrize(
    "overload", ["add.Scalar", "sub.Scalar", "mul.Scalar", "div.Scalar", "rsub.Scalar"]
)
def test_scalar_overloads_record_their_own_node(torch: Any, overload: str) -> None:
    """The hidden Scalar overloads are reachable through the dispatcher and record
    PyTorch's class (AddBackward1, ...); `x + 2` still records add.Tensor's."""
    x, tx = both(torch, [1.5, -2.0], "float64", requires_grad=True)
    ours = getattr(gradgen.generated.operators, overload.replace(".", "_"))
    base, overload_name = overload.split(".")
    theirs = getattr(getattr(torch.ops.aten, base), overload_name)
    arguments = (2.5,) if base in ("mul", "div") else (2.5, 1)
    assert name(ours.call(x, *arguments)) == name(theirs(tx, *arguments))
    assert name(x + 2) == name(tx + 2) == "AddBackward0"


def test_python_binding_false_hides_the_scalar_overloads() -> None:
    x = gradgen.tensor([1.0, 2.0], requires_grad=True)
    assert name(gradgen.mul(x, 2.5)) == "MulBackward0"
    assert name(x.div(2.5)) == "DivBackward0"
    assert "mul.Scalar" not in (gradgen.mul.__doc__ or "")


def test_inplace_variants_record_the_functional_node(torch: Any) -> None:
    for function in (
        lambda x: x.__itruediv__(2),
        lambda x: x.div_(x.detach() + 3, rounding_mode="floor"),
        lambda x: x.clamp_(0, 1),
    ):
        x, tx = both(torch, [1.5, -2.0, 3.0], "float64", requires_grad=True)
        ours, theirs = function(x * 1.0), function(tx * 1.0)
        assert name(ours) == name(theirs)
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy())


def test_floor_divide_is_not_differentiable_like_pytorch(torch: Any) -> None:
    x, tx = both(torch, [1.5, -2.0], "float64", requires_grad=True)
    ours, theirs = x // 2, tx // 2
    np.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy())
    with pytest.raises(RuntimeError) as expected:
        theirs.sum().backward()
    with pytest.raises(RuntimeError) as got:
        ours.sum().backward()
    assert str(got.value) == str(expected.value)


# -- comparisons ------------------------------------------------------------------------


@pytest.mark.parametrize("op", ["eq", "ne", "lt", "le", "gt", "ge"])
def test_comparisons_are_bool_and_never_require_grad(torch: Any, op: str) -> None:
    x, tx = both(torch, [1.5, -2.0, 3.0], "float64", requires_grad=True)
    y, ty = both(torch, [1.5, 2.0, -1.0], "float64", requires_grad=True)
    for ours, theirs in (
        (getattr(x, op)(y), getattr(tx, op)(ty)),
        (getattr(gradgen, op)(x, 1.5), getattr(torch, op)(tx, 1.5)),
    ):
        assert ours.dtype == gradgen.bool
        assert not ours.requires_grad and ours.grad_fn is None
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


COMPARISON_OPERATORS: dict[str, Callable[[Any, Any], Any]] = {
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}


@pytest.mark.parametrize("symbol", sorted(COMPARISON_OPERATORS))
@pytest.mark.parametrize("left", DTYPES)
@pytest.mark.parametrize(
    "right", ["int64", "float32", "complex64", "number", "0-d float64"]
)
def test_comparison_operators_match_torch_across_dtypes(
    torch: Any, symbol: str, left: str, right: str
) -> None:
    compare = COMPARISON_OPERATORS[symbol]
    a, ta = both(torch, SAMPLES[left][0], left)
    if right == "number":
        b = tb = 0.5 if left != "bool" else True
    elif right == "0-d float64":
        b, tb = both(torch, 1.0, "float64")
    else:
        b, tb = both(torch, SAMPLES[right][1], right)
    assert_same_outcome(lambda: compare(a, b), lambda: compare(ta, tb))
    assert_same_outcome(lambda: compare(b, a), lambda: compare(tb, ta))


def test_comparisons_use_the_common_dtype(torch: Any) -> None:
    """Computed in PyTorch's common dtype, not numpy's: a float32 tensor against a 0-d
    float64 tensor compares in float32, an int64 tensor against a float in float32."""
    cases = [
        (lambda lib: lib.tensor([0.1]) == lib.tensor(0.1, dtype=lib.float64)),
        (lambda lib: lib.tensor([16777217]) == 16777216.0),
        (lambda lib: lib.tensor([16777217]) > 16777216.0),
        (lambda lib: lib.tensor([0.1]) == 0.1),
    ]
    for case in cases:
        np.testing.assert_array_equal(case(gradgen).numpy(), case(torch).numpy())
    assert bool(gradgen.tensor([0.1]) == gradgen.tensor(0.1, dtype=gradgen.float64))


def test_comparing_with_none_or_a_string_follows_python(torch: Any) -> None:
    x, tx = both(torch, [1.0, 2.0], "float32")
    assert (x == None) is (tx == None) is False  # noqa: E711
    assert (x != None) is (tx != None) is True  # noqa: E711
    assert (x == "a") is False
    with pytest.raises(
        TypeError, match="'<' not supported between instances of 'Tensor'"
    ):
        x < None  # noqa: B015


def test_tensors_stay_hashable_by_identity() -> None:
    x, y = gradgen.tensor([1.0, 2.0]), gradgen.tensor([1.0, 2.0])
    table = {x: "x", y: "y"}
    assert table[x] == "x" and table[y] == "y"
    assert len({x, y, x}) == 2
    assert hash(x) == id(x)


# -- dtypes -----------------------------------------------------------------------------

BINARY: dict[str, Callable[[Any, Any, Any], Any]] = {
    "rsub": lambda lib, a, b: lib.rsub(a, b),
    "rsub alpha": lambda lib, a, b: lib.rsub(a, b, alpha=2),
    "2 - a": lambda lib, a, b: 2 - a,
    "2.5 - a": lambda lib, a, b: 2.5 - a,
    "maximum": lambda lib, a, b: lib.maximum(a, b),
    "minimum": lambda lib, a, b: lib.minimum(a, b),
    "fmax": lambda lib, a, b: lib.fmax(a, b),
    "fmin": lambda lib, a, b: lib.fmin(a, b),
    "hypot": lambda lib, a, b: lib.hypot(a, b),
    "where": lambda lib, a, b: lib.where(lib.tensor([True, False, True]), a, b),
    "where number": lambda lib, a, b: lib.where(
        lib.tensor([True, False, True]), a, 2.5
    ),
    "floor_divide": lambda lib, a, b: lib.floor_divide(a, b),
    "a // 2": lambda lib, a, b: a // 2,
    "a // 2.5": lambda lib, a, b: a // 2.5,
    "7 // a": lambda lib, a, b: 7 // a,
    "div floor": lambda lib, a, b: lib.div(a, b, rounding_mode="floor"),
    "div trunc": lambda lib, a, b: lib.div(a, b, rounding_mode="trunc"),
    "div trunc number": lambda lib, a, b: lib.div(a, -2, rounding_mode="trunc"),
    "fmod": lambda lib, a, b: lib.fmod(a, b),
    "fmod number": lambda lib, a, b: lib.fmod(a, -1.5),
    "remainder": lambda lib, a, b: lib.remainder(a, b),
    "a % 3": lambda lib, a, b: a % 3,
    "a % -1.5": lambda lib, a, b: a % -1.5,
    "clamp": lambda lib, a, b: lib.clamp(a, -1, 2),
    "clamp float": lambda lib, a, b: lib.clamp(a, min=0.5),
    "clamp tensors": lambda lib, a, b: lib.clamp(a, b, b + 2),
    "clamp_min": lambda lib, a, b: lib.clamp_min(a, 0.5),
    "clamp_max": lambda lib, a, b: lib.clamp_max(a, 1),
    "logical_and": lambda lib, a, b: lib.logical_and(a, b),
    "logical_or": lambda lib, a, b: lib.logical_or(a, b),
    "logical_xor": lambda lib, a, b: lib.logical_xor(a, b),
    "logical_not": lambda lib, a, b: lib.logical_not(a),
    "a & b": lambda lib, a, b: a & b,
    "a | b": lambda lib, a, b: a | b,
    "a ^ b": lambda lib, a, b: a ^ b,
    "a & True": lambda lib, a, b: a & True,
    "True | a": lambda lib, a, b: True | a,
    "~a": lambda lib, a, b: ~a,
    "isnan": lambda lib, a, b: lib.isnan(a),
    "isinf": lambda lib, a, b: lib.isinf(a),
    "isfinite": lambda lib, a, b: lib.isfinite(a),
    "x / y floats": lambda lib, a, b: (
        a / b if a.is_floating_point() or a.is_complex() else a
    ),
    # PyTorch computes `3 / a` as a.reciprocal() * 3: equal up to rounding (see RTOL)
    "3 / a": lambda lib, a, b: 3 / a if a.is_floating_point() or a.is_complex() else a,
}
RTOL = {"3 / a": 1e-6}


@pytest.mark.parametrize("expression", sorted(BINARY))
@pytest.mark.parametrize("left", DTYPES)
@pytest.mark.parametrize("right", ["bool", "int64", "float32", "float64", "complex128"])
def test_values_dtypes_and_errors_match_torch(
    torch: Any, expression: str, left: str, right: str
) -> None:
    """Every (dtype, dtype) pair gives torch's result dtype and values, or torch's error
    type and message (unsupported dtypes, integer division by zero, ...)."""
    function = BINARY[expression]
    a, ta = both(torch, SAMPLES[left][0], left)
    b, tb = both(torch, SAMPLES[right][1], right)
    with np.errstate(all="ignore"):
        assert_same_outcome(
            lambda: function(gradgen, a, b),
            lambda: function(torch, ta, tb),
            rtol=RTOL.get(expression, 0.0),
        )


def test_true_division_of_floats_keeps_their_dtype(torch: Any) -> None:
    for dtype in ("float32", "float64", "complex64"):
        a, ta = both(torch, SAMPLES[dtype][0], dtype)
        for other in (2, 2.5, 1j):
            assert_same_outcome(lambda: a / other, lambda: ta / other)
            # torch: a.reciprocal() * other, so equal up to rounding
            assert_same_outcome(lambda: other / a, lambda: other / ta, rtol=1e-6)
    a, ta = both(torch, 3.0, "float32")  # a 0-d tensor outranks a Python number
    assert_same_outcome(lambda: a / 2.5, lambda: ta / 2.5)
    i, ti = both(torch, [3, 4], "int64")
    assert_same_outcome(lambda: i / a, lambda: ti / ta)


def test_true_division_of_integers_gives_the_default_float_dtype(torch: Any) -> None:
    a, ta = both(torch, [3, 4], "int64")
    ours = a / 2
    assert ours.dtype == gradgen.float32
    np.testing.assert_array_equal(ours.numpy(), (ta / 2).numpy())


def test_atan2_of_integers_gives_the_default_float_dtype(torch: Any) -> None:
    a, ta = both(torch, [3, 4], "int64")
    ours = gradgen.atan2(a, a)
    assert ours.dtype == gradgen.float32
    np.testing.assert_allclose(ours.numpy(), torch.atan2(ta, ta).numpy(), rtol=1e-6)  # libm ulps


def test_where_with_numbers_promotes_as_wrapped_numbers(torch: Any) -> None:
    condition, tcondition = both(torch, [True, False, True], "bool")
    i, ti = both(torch, [1, 2, 3], "int64")
    f, tf = both(torch, [1.0, 2.0, 3.0], "float32")
    cases: list[Callable[[Any, Any, Any, Any], Any]] = [
        lambda lib, c, i, f: lib.where(c, i, 2.5),
        lambda lib, c, i, f: lib.where(c, 2.5, i),
        lambda lib, c, i, f: lib.where(c, 1, 0),
        lambda lib, c, i, f: lib.where(c, 1.5, 2),
        lambda lib, c, i, f: lib.where(c, f, 2),
        lambda lib, c, i, f: lib.where(c, 1j, f),
    ]
    for case in cases:
        assert_same_outcome(
            lambda: case(gradgen, condition, i, f),
            lambda: case(torch, tcondition, ti, tf),
        )


# -- special values -----------------------------------------------------------------------

SPECIAL_NUMERATORS = [1.0, -1.0, 0.0, 5.0, -5.0, 5.0, np.nan, np.inf, -7.5, 7.5]
SPECIAL_DENOMINATORS = [0.0, 0.0, 0.0, -0.0, np.inf, -np.inf, 2.0, 3.0, 2.0, -2.0]

SPECIAL: dict[str, Callable[[Any, Any, Any], Any]] = {
    "floor": lambda lib, a, b: lib.div(a, b, rounding_mode="floor"),
    "trunc": lambda lib, a, b: lib.div(a, b, rounding_mode="trunc"),
    "true": lambda lib, a, b: lib.div(a, b),
    "floor_divide": lambda lib, a, b: a // b,
    "fmod": lambda lib, a, b: lib.fmod(a, b),
    "remainder": lambda lib, a, b: lib.remainder(a, b),
    "maximum": lambda lib, a, b: lib.maximum(a, b),
    "minimum": lambda lib, a, b: lib.minimum(a, b),
    "fmax": lambda lib, a, b: lib.fmax(a, b),
    "fmin": lambda lib, a, b: lib.fmin(a, b),
    "atan2": lambda lib, a, b: lib.atan2(a, b),
    "hypot": lambda lib, a, b: lib.hypot(a, b),
    "clamp": lambda lib, a, b: lib.clamp(a, b, b + 4.0),
    "eq": lambda lib, a, b: a == b,
    "lt": lambda lib, a, b: a < b,
}


@pytest.mark.parametrize("op", sorted(SPECIAL))
def test_zeros_infinities_and_nans_match_torch(torch: Any, op: str) -> None:
    function = SPECIAL[op]
    a, ta = both(torch, SPECIAL_NUMERATORS, "float64")
    b, tb = both(torch, SPECIAL_DENOMINATORS, "float64")
    ours, theirs = function(gradgen, a, b).numpy(), function(torch, ta, tb).numpy()
    # atan2 and hypot are libm functions: numpy's and torch's may differ in the last bit
    np.testing.assert_allclose(
        ours, theirs, rtol=1e-15 if op in ("atan2", "hypot") else 0
    )
    numbers = ~np.isnan(theirs.astype(float))
    np.testing.assert_array_equal(
        np.signbit(ours[numbers]), np.signbit(theirs[numbers])
    )


def test_integer_division_by_zero_is_pytorchs_error(torch: Any) -> None:
    a, ta = both(torch, [3, -3], "int64")
    zero, tzero = both(torch, [1, 0], "int64")
    for function in (
        lambda lib, a, b: a // b,
        lambda lib, a, b: a // 0,
        lambda lib, a, b: lib.div(a, b, rounding_mode="trunc"),
        lambda lib, a, b: lib.fmod(a, b),
        lambda lib, a, b: a % 0,
    ):
        assert_same_outcome(
            lambda: function(gradgen, a, zero), lambda: function(torch, ta, tzero)
        )
        assert outcome(lambda: function(gradgen, a, zero)) == (
            "error",
            ("RuntimeError", "ZeroDivisionError"),
        )


def test_integer_rounded_division_is_exact_for_large_values(torch: Any) -> None:
    big = [2**62 + 1, -(2**62) - 3, 9, -9]
    a, ta = both(torch, big, "int64")
    d, td = both(torch, [7, 7, -2, -2], "int64")
    for mode in ("trunc", "floor"):
        assert_same_outcome(
            lambda: gradgen.div(a, d, rounding_mode=mode),
            lambda: torch.div(ta, td, rounding_mode=mode),
        )


# -- gradients at ties and bounds (subgradients) -------------------------------------------

TIES: dict[str, Callable[[Any, Any, Any], Any]] = {
    "maximum": lambda lib, a, b: lib.maximum(a, b),
    "minimum": lambda lib, a, b: lib.minimum(a, b),
    "fmax": lambda lib, a, b: lib.fmax(a, b),
    "fmin": lambda lib, a, b: lib.fmin(a, b),
    "clamp": lambda lib, a, b: lib.clamp(a, -1.0, 1.0),
    "clamp_min": lambda lib, a, b: lib.clamp_min(a, 1.0),
    "clamp_max": lambda lib, a, b: lib.clamp_max(a, 1.0),
    "clamp min only": lambda lib, a, b: lib.clamp(a, min=1.0),
    "clamp tensors": lambda lib, a, b: lib.clamp(a, b, b + 1.0),
    "clamp tensors crossed": lambda lib, a, b: lib.clamp(a, b, b - 1.0),
    "where": lambda lib, a, b: lib.where(a > b, a, b),
    "hypot": lambda lib, a, b: lib.hypot(a, b),
    "atan2": lambda lib, a, b: lib.atan2(a, b),
    "fmod": lambda lib, a, b: lib.fmod(a, b),
    "remainder": lambda lib, a, b: lib.remainder(a, b),
    "div floor": lambda lib, a, b: lib.div(a, b, rounding_mode="floor"),
}


@pytest.mark.parametrize("op", sorted(TIES))
def test_gradients_at_ties_bounds_and_nans_match_torch(torch: Any, op: str) -> None:
    """Values where the function is not differentiable (a == b, self at a bound, NaN
    operands) get PyTorch's subgradients: grad / 2 for maximum ties, 1 at clamp's
    bounds, the non-NaN operand for fmax."""
    function = TIES[op]
    left = [1.0, -1.0, 2.0, 0.5, np.nan, 3.0, -2.0]
    right = [1.0, -1.0, -2.0, 1.5, 1.0, np.nan, 2.0]
    a, ta = both(torch, left, "float64", requires_grad=True)
    b, tb = both(torch, right, "float64", requires_grad=True)
    ours, theirs = function(gradgen, a, b), function(torch, ta, tb)
    np.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy())
    cotangent = np.linspace(0.5, 2.0, len(left))
    got = gradgen.autograd.grad(
        ours, (a, b), gradgen.tensor(cotangent), allow_unused=True
    )
    want = torch.autograd.grad(
        theirs, (ta, tb), torch.tensor(cotangent), allow_unused=True
    )
    for g, w in zip(got, want):
        if w is None:
            assert g is None
        else:
            np.testing.assert_array_equal(g.numpy(), w.numpy())


def test_where_gradient_flows_to_the_chosen_operand_only(torch: Any) -> None:
    a, ta = both(torch, [1.0, 2.0, 3.0], "float64", requires_grad=True)
    b, tb = both(
        torch, [[3.0, 2.0, 1.0], [0.0, 5.0, 1.0]], "float64", requires_grad=True
    )
    ours = gradgen.where(a > b, a * a, b).sum()
    theirs = torch.where(ta > tb, ta * ta, tb).sum()
    ours.backward()
    theirs.backward()
    np.testing.assert_array_equal(a.grad.numpy(), ta.grad.numpy())
    np.testing.assert_array_equal(b.grad.numpy(), tb.grad.numpy())


def test_clamp_with_one_tensor_bound_is_differentiable(torch: Any) -> None:
    a, ta = both(torch, [1.0, -2.0], "float64", requires_grad=True)
    low, tlow = both(torch, [0.0, 0.0], "float64")
    ours, theirs = gradgen.clamp(a, low), torch.clamp(ta, tlow)
    np.testing.assert_array_equal(ours.detach().numpy(), theirs.detach().numpy())


def test_clamp_with_one_tensor_bound_works_without_grad(torch: Any) -> None:
    a, ta = both(torch, [1.0, -2.0, 0.5], "float64")
    low, tlow = both(torch, [0.0, 0.0, 1.0], "float64")
    assert_same_outcome(lambda: gradgen.clamp(a, low), lambda: torch.clamp(ta, tlow))
    assert_same_outcome(lambda: a.clamp(max=low), lambda: ta.clamp(max=tlow))


# -- errors -------------------------------------------------------------------------------

ERRORS: dict[str, Callable[[Any], Any]] = {
    "where condition": lambda lib: lib.where(
        lib.tensor([1.0]), lib.ones(1), lib.ones(1)
    ),
    "where broadcast": lambda lib: lib.where(
        lib.tensor([True, False, True]), lib.ones(4), lib.ones(4)
    ),
    "where broadcast other": lambda lib: lib.where(
        lib.tensor([True] * 4), lib.ones(3), lib.ones(4)
    ),
    "div mode": lambda lib: lib.div(lib.ones(2), lib.ones(2), rounding_mode="bad"),
    "clamp no bounds": lambda lib: lib.clamp(lib.ones(2)),
    "clamp no bounds keywords": lambda lib: lib.clamp(lib.ones(2), min=None, max=None),
    "clamp complex": lambda lib: lib.clamp(lib.tensor([1j]), 0, 1),
    "clamp_min complex": lambda lib: lib.clamp_min(lib.tensor([1j]), 0),
    "lt complex": lambda lib: lib.tensor([1j]) < lib.tensor([2j]),
    "ge complex number": lambda lib: lib.tensor([1j]) >= 1,
    "maximum complex": lambda lib: lib.maximum(lib.tensor([1j]), lib.tensor([1j])),
    "fmin complex": lambda lib: lib.fmin(lib.tensor([1j]), lib.tensor([1j])),
    "atan2 complex": lambda lib: lib.atan2(lib.tensor([1j]), lib.tensor([1j])),
    "hypot int": lambda lib: lib.hypot(lib.tensor([3]), lib.tensor([4])),
    "fmod bool": lambda lib: lib.fmod(lib.tensor([True]), lib.tensor([True])),
    "remainder complex": lambda lib: lib.remainder(lib.tensor([1j]), 2),
    "floor_divide complex": lambda lib: lib.floor_divide(lib.tensor([1j]), 2),
    "div trunc complex": lambda lib: lib.div(
        lib.tensor([1j]), 2, rounding_mode="trunc"
    ),
    "div trunc bool": lambda lib: lib.div(
        lib.tensor([True]), lib.tensor([True]), rounding_mode="trunc"
    ),
    "bitwise float": lambda lib: lib.bitwise_or(lib.ones(1), lib.ones(1)),
    "bitwise_not float": lambda lib: lib.bitwise_not(lib.ones(1)),
    "int & float": lambda lib: lib.tensor([5]) & 2.5,
    "invert float": lambda lib: ~lib.ones(1),
    "eq broadcast": lambda lib: lib.eq(lib.ones(3), lib.ones(4)),
    "logical broadcast": lambda lib: lib.logical_and(lib.ones(3), lib.ones(4)),
    "maximum broadcast": lambda lib: lib.maximum(lib.ones(3), lib.ones(4)),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_match_torch(torch: Any, case: str) -> None:
    function = ERRORS[case]
    kind, got = outcome(lambda: function(gradgen))
    expected_kind, expected = outcome(lambda: function(torch))
    assert kind == expected_kind == "error", (got, expected)
    assert got == expected


def test_results_of_non_differentiable_ops_never_require_grad() -> None:
    x = gradgen.tensor([1.0, np.inf, np.nan], requires_grad=True)
    for result in (
        x == x,
        x.isnan(),
        x.isinf(),
        x.isfinite(),
        gradgen.logical_and(x, x),
        gradgen.logical_or(x, x),
        gradgen.logical_xor(x, x),
        gradgen.logical_not(x),
    ):
        assert result.dtype == gradgen.bool
        assert not result.requires_grad and result.grad_fn is None
