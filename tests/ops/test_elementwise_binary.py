"""Binary, comparison and logical elementwise operators beyond the operator table:
grad_fn names, comparisons, dtype promotion, special values, subgradients at ties, errors.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradgen
from torch_oracle import oracle

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


def make(lib: Any, data: Any, dtype: str, requires_grad: bool = False) -> Any:
    """The tensor in gradgen or in torch (`lib`)."""
    array = np.array(data, dtype=np.dtype(dtype))
    return lib.tensor(array, requires_grad=requires_grad)


def outcome(function: Callable[[], Any]) -> tuple[str, Any]:
    """('ok', (dtype name, values)) or ('error', (type name, message))."""
    try:
        result = function()
    except Exception as error:  # noqa: BLE001 - compared with torch's outcome
        return "error", (type(error).__name__, str(error))
    values = result.detach().numpy() if hasattr(result, "detach") else result
    return "ok", (str(result.dtype).split(".")[-1], np.asarray(values))


def assert_same_outcome(
    key: str,
    ours: Callable[[], Any],
    theirs: Callable[[Any], Any],
    rtol: float = 0.0,
) -> None:
    """Same error (type and message), or same dtype and values (exactly, unless rtol)
    as `theirs(torch)` (recorded under `key`)."""
    kind, got = outcome(ours)
    expected_kind, expected = oracle(key, lambda torch: outcome(lambda: theirs(torch)))
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
def test_grad_fn_names_and_requires_grad_match_torch(expression: str) -> None:
    function = EXPRESSIONS[expression]

    def run(lib: Any) -> tuple[Any, ...]:
        x = make(lib, [1.5, -2.0, 3.0], "float64", requires_grad=True)
        y = make(lib, [0.5, 2.0, -1.0], "float64", requires_grad=True)
        out = function(lib, x, y)
        dtype = str(out.dtype).split(".")[-1]
        return name(out), out.requires_grad, dtype, out.detach().numpy()

    ours, theirs = run(gradgen), oracle("result", run)
    assert ours[:3] == theirs[:3]
    np.testing.assert_allclose(ours[3], theirs[3], rtol=1e-12)


@pytest.mark.parametrize(
    "overload", ["add.Scalar", "sub.Scalar", "mul.Scalar", "div.Scalar", "rsub.Scalar"]
)
def test_scalar_overloads_record_their_own_node(overload: str) -> None:
    """The hidden Scalar overloads are reachable through the dispatcher and record
    PyTorch's class (AddBackward1, ...); `x + 2` still records add.Tensor's."""
    x = make(gradgen, [1.5, -2.0], "float64", requires_grad=True)
    ours = getattr(gradgen.generated.operators, overload.replace(".", "_"))
    base, overload_name = overload.split(".")
    arguments = (2.5,) if base in ("mul", "div") else (2.5, 1)

    def theirs(torch: Any) -> list[Any]:
        tx = make(torch, [1.5, -2.0], "float64", requires_grad=True)
        function = getattr(getattr(torch.ops.aten, base), overload_name)
        return [name(function(tx, *arguments)), name(tx + 2)]

    assert [name(ours.call(x, *arguments)), name(x + 2)] == oracle("names", theirs)
    assert name(x + 2) == "AddBackward0"


def test_python_binding_false_hides_the_scalar_overloads() -> None:
    x = gradgen.tensor([1.0, 2.0], requires_grad=True)
    assert name(gradgen.mul(x, 2.5)) == "MulBackward0"
    assert name(x.div(2.5)) == "DivBackward0"
    assert "mul.Scalar" not in (gradgen.mul.__doc__ or "")


def test_inplace_variants_record_the_functional_node() -> None:
    functions: list[Callable[[Any], Any]] = [
        lambda x: x.__itruediv__(2),
        lambda x: x.div_(x.detach() + 3, rounding_mode="floor"),
        lambda x: x.clamp_(0, 1),
    ]

    def run(lib: Any) -> list[Any]:
        results = []
        for function in functions:
            x = make(lib, [1.5, -2.0, 3.0], "float64", requires_grad=True)
            out = function(x * 1.0)
            results.append((name(out), out.detach().numpy()))
        return results

    for ours, theirs in zip(run(gradgen), oracle("results", run)):
        assert ours[0] == theirs[0]
        np.testing.assert_allclose(ours[1], theirs[1])


def test_floor_divide_is_not_differentiable_like_pytorch() -> None:
    def run(lib: Any) -> tuple[Any, Any]:
        out = make(lib, [1.5, -2.0], "float64", requires_grad=True) // 2
        error = outcome(lambda: out.sum().backward())
        return out.detach().numpy(), error

    ours, theirs = run(gradgen), oracle("result", run)
    np.testing.assert_array_equal(ours[0], theirs[0])
    assert ours[1][0] == theirs[1][0] == "error"
    assert ours[1] == theirs[1]


# -- comparisons ------------------------------------------------------------------------


@pytest.mark.parametrize("op", ["eq", "ne", "lt", "le", "gt", "ge"])
def test_comparisons_are_bool_and_never_require_grad(op: str) -> None:
    def run(lib: Any) -> list[Any]:
        x = make(lib, [1.5, -2.0, 3.0], "float64", requires_grad=True)
        y = make(lib, [1.5, 2.0, -1.0], "float64", requires_grad=True)
        return [getattr(x, op)(y), getattr(lib, op)(x, 1.5)]

    theirs = oracle("results", lambda torch: [t.numpy() for t in run(torch)])
    for ours, expected in zip(run(gradgen), theirs):
        assert ours.dtype == gradgen.bool
        assert not ours.requires_grad and ours.grad_fn is None
        np.testing.assert_array_equal(ours.numpy(), expected)


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
    symbol: str, left: str, right: str
) -> None:
    compare = COMPARISON_OPERATORS[symbol]

    def operands(lib: Any) -> tuple[Any, Any]:
        a = make(lib, SAMPLES[left][0], left)
        if right == "number":
            return a, 0.5 if left != "bool" else True
        if right == "0-d float64":
            return a, make(lib, 1.0, "float64")
        return a, make(lib, SAMPLES[right][1], right)

    a, b = operands(gradgen)
    assert_same_outcome(
        "a op b", lambda: compare(a, b), lambda t: compare(*operands(t))
    )
    assert_same_outcome(
        "b op a", lambda: compare(b, a), lambda t: compare(*operands(t)[::-1])
    )


def test_comparisons_use_the_common_dtype() -> None:
    """Computed in PyTorch's common dtype, not numpy's: a float32 tensor against a 0-d
    float64 tensor compares in float32, an int64 tensor against a float in float32."""
    cases = [
        (lambda lib: lib.tensor([0.1]) == lib.tensor(0.1, dtype=lib.float64)),
        (lambda lib: lib.tensor([16777217]) == 16777216.0),
        (lambda lib: lib.tensor([16777217]) > 16777216.0),
        (lambda lib: lib.tensor([0.1]) == 0.1),
    ]
    theirs = oracle("results", lambda torch: [case(torch).numpy() for case in cases])
    for case, expected in zip(cases, theirs, strict=True):
        np.testing.assert_array_equal(case(gradgen).numpy(), expected)
    assert bool(gradgen.tensor([0.1]) == gradgen.tensor(0.1, dtype=gradgen.float64))


def test_comparing_with_none_or_a_string_follows_python() -> None:
    x = make(gradgen, [1.0, 2.0], "float32")
    tx = oracle(
        "== None, != None",
        lambda torch: [
            make(torch, [1.0, 2.0], "float32") == None,  # noqa: E711
            make(torch, [1.0, 2.0], "float32") != None,  # noqa: E711
        ],
    )
    assert [x == None, x != None] == tx == [False, True]  # noqa: E711
    assert (x == None) is False  # noqa: E711
    assert (x != None) is True  # noqa: E711
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
    expression: str, left: str, right: str
) -> None:
    """Every (dtype, dtype) pair gives torch's result dtype and values, or torch's error
    type and message (unsupported dtypes, integer division by zero, ...)."""
    function = BINARY[expression]

    def run(lib: Any) -> Any:
        a, b = make(lib, SAMPLES[left][0], left), make(lib, SAMPLES[right][1], right)
        return function(lib, a, b)

    with np.errstate(all="ignore"):
        assert_same_outcome(
            "outcome", lambda: run(gradgen), run, rtol=RTOL.get(expression, 0.0)
        )


def test_true_division_of_floats_keeps_their_dtype() -> None:
    for dtype in ("float32", "float64", "complex64"):
        a = make(gradgen, SAMPLES[dtype][0], dtype)
        for other in (2, 2.5, 1j):
            assert_same_outcome(
                f"{dtype} / {other}",
                lambda: a / other,
                lambda t: make(t, SAMPLES[dtype][0], dtype) / other,
            )
            # torch: a.reciprocal() * other, so equal up to rounding
            assert_same_outcome(
                f"{other} / {dtype}",
                lambda: other / a,
                lambda t: other / make(t, SAMPLES[dtype][0], dtype),
                rtol=1e-6,
            )
    a = make(gradgen, 3.0, "float32")  # a 0-d tensor outranks a Python number
    assert_same_outcome(
        "0-d / 2.5", lambda: a / 2.5, lambda t: make(t, 3.0, "float32") / 2.5
    )
    i = make(gradgen, [3, 4], "int64")
    assert_same_outcome(
        "int64 / 0-d",
        lambda: i / a,
        lambda t: make(t, [3, 4], "int64") / make(t, 3.0, "float32"),
    )


def test_true_division_of_integers_gives_the_default_float_dtype() -> None:
    ours = make(gradgen, [3, 4], "int64") / 2
    assert ours.dtype == gradgen.float32
    theirs = oracle("a / 2", lambda t: make(t, [3, 4], "int64") / 2)
    np.testing.assert_array_equal(ours.numpy(), theirs)


def test_atan2_of_integers_gives_the_default_float_dtype() -> None:
    a = make(gradgen, [3, 4], "int64")
    ours = gradgen.atan2(a, a)
    assert ours.dtype == gradgen.float32
    theirs = oracle("atan2", lambda t: t.atan2(*[make(t, [3, 4], "int64")] * 2))
    np.testing.assert_allclose(ours.numpy(), theirs, rtol=1e-6)  # libm ulps


def test_where_with_numbers_promotes_as_wrapped_numbers() -> None:
    def operands(lib: Any) -> tuple[Any, Any, Any]:
        condition = make(lib, [True, False, True], "bool")
        return (
            condition,
            make(lib, [1, 2, 3], "int64"),
            make(lib, [1.0, 2.0, 3.0], "float32"),
        )

    cases: list[Callable[[Any, Any, Any, Any], Any]] = [
        lambda lib, c, i, f: lib.where(c, i, 2.5),
        lambda lib, c, i, f: lib.where(c, 2.5, i),
        lambda lib, c, i, f: lib.where(c, 1, 0),
        lambda lib, c, i, f: lib.where(c, 1.5, 2),
        lambda lib, c, i, f: lib.where(c, f, 2),
        lambda lib, c, i, f: lib.where(c, 1j, f),
    ]
    for number, case in enumerate(cases):
        assert_same_outcome(
            str(number),
            lambda: case(gradgen, *operands(gradgen)),
            lambda t: case(t, *operands(t)),
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
def test_zeros_infinities_and_nans_match_torch(op: str) -> None:
    function = SPECIAL[op]

    def run(lib: Any) -> Any:
        a = make(lib, SPECIAL_NUMERATORS, "float64")
        return function(lib, a, make(lib, SPECIAL_DENOMINATORS, "float64")).numpy()

    ours, theirs = run(gradgen), oracle("values", run)
    # atan2 and hypot are libm functions: numpy's and torch's may differ in the last bit
    np.testing.assert_allclose(
        ours, theirs, rtol=1e-15 if op in ("atan2", "hypot") else 0
    )
    numbers = ~np.isnan(theirs.astype(float))
    np.testing.assert_array_equal(
        np.signbit(ours[numbers]), np.signbit(theirs[numbers])
    )


def test_integer_division_by_zero_is_pytorchs_error() -> None:
    def operands(lib: Any) -> tuple[Any, Any]:
        return make(lib, [3, -3], "int64"), make(lib, [1, 0], "int64")

    a, zero = operands(gradgen)
    functions: list[Callable[[Any, Any, Any], Any]] = [
        lambda lib, a, b: a // b,
        lambda lib, a, b: a // 0,
        lambda lib, a, b: lib.div(a, b, rounding_mode="trunc"),
        lambda lib, a, b: lib.fmod(a, b),
        lambda lib, a, b: a % 0,
    ]
    for number, function in enumerate(functions):
        assert_same_outcome(
            str(number),
            lambda: function(gradgen, a, zero),
            lambda t: function(t, *operands(t)),
        )
        assert outcome(lambda: function(gradgen, a, zero)) == (
            "error",
            ("RuntimeError", "ZeroDivisionError"),
        )


def test_integer_rounded_division_is_exact_for_large_values() -> None:
    big = [2**62 + 1, -(2**62) - 3, 9, -9]

    def run(lib: Any, mode: str) -> Any:
        a, d = make(lib, big, "int64"), make(lib, [7, 7, -2, -2], "int64")
        return lib.div(a, d, rounding_mode=mode)

    for mode in ("trunc", "floor"):
        assert_same_outcome(mode, lambda: run(gradgen, mode), lambda t: run(t, mode))


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
def test_gradients_at_ties_bounds_and_nans_match_torch(op: str) -> None:
    """Values where the function is not differentiable (a == b, self at a bound, NaN
    operands) get PyTorch's subgradients: grad / 2 for maximum ties, 1 at clamp's
    bounds, the non-NaN operand for fmax."""
    function = TIES[op]
    left = [1.0, -1.0, 2.0, 0.5, np.nan, 3.0, -2.0]
    right = [1.0, -1.0, -2.0, 1.5, 1.0, np.nan, 2.0]
    cotangent = np.linspace(0.5, 2.0, len(left))

    def run(lib: Any) -> tuple[Any, list[Any]]:
        a = make(lib, left, "float64", requires_grad=True)
        b = make(lib, right, "float64", requires_grad=True)
        out = function(lib, a, b)
        grads = lib.autograd.grad(out, (a, b), lib.tensor(cotangent), allow_unused=True)
        return out.detach().numpy(), [None if g is None else g.numpy() for g in grads]

    ours, theirs = run(gradgen), oracle("value and grads", run)
    np.testing.assert_array_equal(ours[0], theirs[0])
    for g, w in zip(ours[1], theirs[1], strict=True):
        if w is None:
            assert g is None
        else:
            np.testing.assert_array_equal(g, w)


def test_where_gradient_flows_to_the_chosen_operand_only() -> None:
    def run(lib: Any) -> list[Any]:
        a = make(lib, [1.0, 2.0, 3.0], "float64", requires_grad=True)
        b = make(lib, [[3.0, 2.0, 1.0], [0.0, 5.0, 1.0]], "float64", requires_grad=True)
        lib.where(a > b, a * a, b).sum().backward()
        return [a.grad.numpy(), b.grad.numpy()]

    for got, want in zip(run(gradgen), oracle("grads", run), strict=True):
        np.testing.assert_array_equal(got, want)


def test_clamp_with_one_tensor_bound_is_differentiable() -> None:
    def run(lib: Any) -> Any:
        a = make(lib, [1.0, -2.0], "float64", requires_grad=True)
        out = lib.clamp(a, make(lib, [0.0, 0.0], "float64"))
        return out.requires_grad, out.detach().numpy()

    ours, theirs = run(gradgen), oracle("result", run)
    assert ours[0] is theirs[0] is True
    np.testing.assert_array_equal(ours[1], theirs[1])


def test_clamp_with_one_tensor_bound_works_without_grad() -> None:
    def operands(lib: Any) -> tuple[Any, Any]:
        return make(lib, [1.0, -2.0, 0.5], "float64"), make(
            lib, [0.0, 0.0, 1.0], "float64"
        )

    a, low = operands(gradgen)
    assert_same_outcome(
        "clamp", lambda: gradgen.clamp(a, low), lambda t: t.clamp(*operands(t))
    )
    assert_same_outcome(
        "clamp max",
        lambda: a.clamp(max=low),
        lambda t: (lambda a, low: a.clamp(max=low))(*operands(t)),
    )


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
def test_errors_match_torch(case: str) -> None:
    function = ERRORS[case]
    kind, got = outcome(lambda: function(gradgen))
    expected_kind, expected = oracle("outcome", lambda t: outcome(lambda: function(t)))
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
