"""Unary elementwise operators beyond the operator table: values, dtypes and errors
across dtypes, derivatives, in-place variants, imag and view_as_real/complex, shapes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradgen
from gradgen.autograd import gradcheck, gradgradcheck
from torch_oracle import oracle, outcome
from ops.unary_functions import _aten, _nn

INF, NAN = float("inf"), float("nan")
REAL_VALUES = [
    0.0,
    -0.0,
    0.5,
    -0.5,
    1.0,
    -1.0,
    2.5,
    -2.5,
    1.5,
    3.0,
    1e-3,
    INF,
    -INF,
    NAN,
]
INT_VALUES = [0, 1, -1, 2, -3, 7]
COMPLEX_VALUES = [0j, 1 + 1j, -2 + 0.5j, 0.5 - 3j, -1 - 1j, 3 + 0j, -0.25j]

# The unary operators as PyTorch's functions of `lib` (gradgen or torch).
UNARY = [
    "exp", "exp2", "log", "log2", "log10", "log1p", "expm1", "sqrt", "rsqrt",
    "reciprocal", "square", "abs", "sgn", "sign", "sin", "cos", "tan", "asin", "acos",
    "atan", "sinh", "cosh", "tanh", "sigmoid", "relu", "erf", "floor", "ceil",
    "round", "trunc", "angle", "imag",
]  # fmt: skip


FUNCTIONS: dict[str, Callable[[Any, Any], Any]] = {
    **{
        name: (lambda name: lambda lib, x: getattr(lib, name)(x))(name)
        for name in UNARY
    },
    "round.decimals": lambda lib, x: lib.round(x, decimals=1),
    "round.decimals-2": lambda lib, x: lib.round(x, decimals=-1),
    "gelu": lambda lib, x: _nn(lib, "gelu")(x),
    "gelu.tanh": lambda lib, x: _nn(lib, "gelu")(x, approximate="tanh"),
    "silu": lambda lib, x: _nn(lib, "silu")(x),
}

DTYPES = ["int64", "int32", "bool", "float32", "float64", "complex64", "complex128"]


def _values(dtype_name: str) -> Any:
    if dtype_name == "bool":
        return [True, False, True]
    if dtype_name.startswith("int"):
        return INT_VALUES
    if dtype_name.startswith("complex"):
        return COMPLEX_VALUES
    return REAL_VALUES


def _outcome(lib: Any, function: Callable[..., Any], data: np.ndarray) -> Any:
    try:
        return function(lib, lib.tensor(data))
    except Exception as error:  # compared with torch's exception below
        return error


def _assert_same_values(
    ours: np.ndarray, theirs: np.ndarray, rtol: float, atol: float
) -> None:
    assert ours.dtype == theirs.dtype
    if ours.dtype.kind in "fc":
        np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=atol, equal_nan=True)
        if ours.dtype.kind == "f":
            zeros = theirs == 0
            assert (
                np.signbit(ours[zeros]) == np.signbit(theirs[zeros])
            ).all(), "sign of zero"
    else:
        np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("dtype_name", DTYPES)
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_values_dtypes_and_errors_match_torch(name: str, dtype_name: str) -> None:
    data = np.array(_values(dtype_name), dtype=dtype_name)
    if name == "gelu" and dtype_name == "float32":
        # torch's vectorised float32 gelu gives NaN at +inf (its scalar path: inf).
        data = data[~np.isinf(data)]
    function = FUNCTIONS[name]
    ours = _outcome(gradgen, function, data)
    theirs = oracle("outcome", lambda torch: _outcome(torch, function, data))
    if isinstance(theirs, Exception):
        assert isinstance(
            ours, Exception
        ), f"torch raised {theirs!r}, gradgen returned {ours!r}"
        assert type(ours).__name__ == type(theirs).__name__
        assert str(ours) == str(theirs).splitlines()[0]
        return
    assert not isinstance(ours, Exception), f"gradgen raised {ours!r}"
    assert ours.dtype.name == str(theirs.dtype).removeprefix("torch.")
    # torch computes float32 with its own vectorised approximations: a few ulps apart.
    single = dtype_name in ("float32", "complex64") or dtype_name in (
        "int64",
        "int32",
        "bool",
    )
    _assert_same_values(
        ours.numpy(), theirs, rtol=3e-6 if single else 1e-13, atol=1e-6 if single else 0
    )


def test_int_inputs_follow_the_default_dtype() -> None:
    previous = gradgen.get_default_dtype()
    gradgen.set_default_dtype(gradgen.float64)
    try:
        for name in ("exp", "sqrt", "sigmoid", "angle", "erf"):
            assert (
                getattr(gradgen, name)(gradgen.tensor([1, 2])).dtype == gradgen.float64
            )
    finally:
        gradgen.set_default_dtype(previous)
    assert gradgen.exp(gradgen.tensor([1])).dtype == gradgen.float32


# -- derivatives ----------------------------------------------------------------------

# Real-input checks of the operators whose table line is complex, and more.
REAL_LINES: dict[str, tuple[Callable[..., Any], bool]] = {
    "exp": (lambda lib, a: lib.exp(a), False),
    "exp2": (lambda lib, a: lib.exp2(a), False),
    "log": (lambda lib, a: lib.log(a), True),
    "log2": (lambda lib, a: lib.log2(a), True),
    "log10": (lambda lib, a: lib.log10(a), True),
    "log1p": (lambda lib, a: lib.log1p(a), True),
    "expm1": (lambda lib, a: lib.expm1(a), False),
    "sqrt": (lambda lib, a: lib.sqrt(a), True),
    "rsqrt": (lambda lib, a: lib.rsqrt(a), True),
    "reciprocal": (lambda lib, a: lib.reciprocal(a), True),
    "square": (lambda lib, a: lib.square(a), False),
    "abs": (lambda lib, a: lib.abs(a) * a, False),
    "sgn": (lambda lib, a: lib.sgn(a) * a, False),
    "sin": (lambda lib, a: lib.sin(a), False),
    "cos": (lambda lib, a: lib.cos(a), False),
    "tan": (lambda lib, a: lib.tan(a * 0.5), False),
    "asin": (lambda lib, a: lib.asin(a * 0.4), False),
    "acos": (lambda lib, a: lib.acos(a * 0.4), False),
    "atan": (lambda lib, a: lib.atan(a), False),
    "sinh": (lambda lib, a: lib.sinh(a), False),
    "cosh": (lambda lib, a: lib.cosh(a), False),
    "tanh": (lambda lib, a: lib.tanh(a), False),
    "sigmoid": (lambda lib, a: lib.sigmoid(a), False),
    "angle": (lambda lib, a: lib.angle(a) * a, False),
    "gelu.tanh": (lambda lib, a: _nn(lib, "gelu")(a * a, approximate="tanh"), False),
    "gelu": (lambda lib, a: _nn(lib, "gelu")(a * a), False),
    "silu": (lambda lib, a: _nn(lib, "silu")(a * a), False),
    "erf": (lambda lib, a: lib.erf(a * a), False),
    "relu": (lambda lib, a: lib.relu(a * a * a), False),
    "sigmoid_backward": (
        lambda lib, a: _aten(lib, "sigmoid_backward")(a * a, a.sigmoid()),
        False,
    ),
    "tanh_backward": (
        lambda lib, a: _aten(lib, "tanh_backward")(a * a, a.tanh()),
        False,
    ),
    "threshold_backward": (
        lambda lib, a: _aten(lib, "threshold_backward")(a * a, a, 0.1),
        False,
    ),
    "gelu_backward.tanh": (
        lambda lib, a: _aten(lib, "gelu_backward")(a * a, a, approximate="tanh"),
        False,
    ),
    "gelu_backward": (lambda lib, a: _aten(lib, "gelu_backward")(a * a, a), False),
    "exp_": (lambda lib, a: (a * 1.0).exp_(), False),
    "log_": (lambda lib, a: lib.log_(a * 1.0), True),
    "sqrt_": (lambda lib, a: (a * 1.0).sqrt_(), True),
    "neg_": (lambda lib, a: (a * a).neg_(), False),
    "sigmoid_": (lambda lib, a: (a * 1.0).sigmoid_(), False),
    "tanh_": (lambda lib, a: lib.tanh_(a * 1.0), False),
}


def _input(lib: Any, positive: bool, seed: int, complex_: bool = False) -> Any:
    rng = np.random.default_rng(seed)
    data = rng.uniform(0.5, 2.0, (5,)) if positive else rng.uniform(-2.0, 2.0, (5,))
    if complex_:
        data = data + 1j * rng.uniform(-2.0, 2.0, (5,))
    return lib.tensor(data, requires_grad=True)


@pytest.mark.parametrize("name", sorted(REAL_LINES))
def test_real_gradcheck_and_gradgradcheck(name: str) -> None:
    function, positive = REAL_LINES[name]
    x = _input(gradgen, positive, 4)
    assert gradcheck(lambda a: function(gradgen, a), [x])
    assert gradgradcheck(lambda a: function(gradgen, a), [x])


def _numpy(tensor: Any) -> np.ndarray:
    """A result as an array (torch may give zero tensors and conjugate views)."""
    if hasattr(tensor, "resolve_conj"):
        tensor = tensor.detach().resolve_conj() + 0
    return tensor.numpy()


def _second_derivatives(
    lib: Any, function: Callable[..., Any], x: Any
) -> tuple[Any, Any]:
    """y and d/dx <dy/dx . v, w> for fixed v, w: a second derivative against torch."""
    y = function(lib, x)
    rng = np.random.default_rng(7)
    v = lib.tensor(
        rng.uniform(-1, 1, tuple(y.shape))
        + (1j * rng.uniform(-1, 1, tuple(y.shape)) if y.is_complex() else 0)
    )
    (g,) = lib.autograd.grad(y, x, v, create_graph=True)
    w = lib.tensor(
        rng.uniform(-1, 1, tuple(x.shape))
        + (1j * rng.uniform(-1, 1, tuple(x.shape)) if x.is_complex() else 0)
    )
    (gg,) = lib.autograd.grad(g, x, w)
    return g.detach(), gg


@pytest.mark.parametrize("name", sorted(REAL_LINES))
def test_second_derivatives_match_torch(name: str) -> None:
    function, positive = REAL_LINES[name]
    ours = _second_derivatives(gradgen, function, _input(gradgen, positive, 5))
    theirs = oracle(
        "g, gg",
        lambda torch: [
            _numpy(t)
            for t in _second_derivatives(torch, function, _input(torch, positive, 5))
        ],
    )
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(_numpy(a), b, rtol=1e-10, atol=1e-12)


COMPLEX_LINES = {
    name: REAL_LINES[name][0]
    for name in (
        "exp", "exp2", "log", "log2", "log10", "log1p", "expm1", "sqrt", "rsqrt",
        "reciprocal", "square", "abs", "sgn", "sin", "cos", "tan", "asin", "acos",
        "atan", "sinh", "cosh", "tanh", "sigmoid", "angle", "sigmoid_backward",
        "tanh_backward", "exp_", "log_", "sqrt_", "neg_", "sigmoid_", "tanh_",
    )
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(COMPLEX_LINES))
def test_complex_second_derivatives_match_torch(name: str) -> None:
    function = COMPLEX_LINES[name]
    ours = _second_derivatives(gradgen, function, _input(gradgen, False, 6, True))
    theirs = oracle(
        "g, gg",
        lambda torch: [
            _numpy(t)
            for t in _second_derivatives(torch, function, _input(torch, False, 6, True))
        ],
    )
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(_numpy(a), b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", ["sgn", "angle", "abs"])
def test_masked_points_at_zero_match_torch(name: str) -> None:
    """sgn_backward and angle_backward are 0 where z == 0 (PyTorch masks them there),
    to the second order, and with a NaN cotangent elsewhere unaffected."""
    data = np.array([0j, 1 + 2j, 0j, -3 + 0.5j])

    def run(lib: Any) -> list[np.ndarray]:
        x = lib.tensor(data, requires_grad=True)
        y = getattr(lib, name)(x)
        cotangent = np.array([NAN, 1.0, 0.5, 2.0]) * (1 + 0.5j if y.is_complex() else 1)
        (g,) = lib.autograd.grad(y, x, lib.tensor(cotangent), create_graph=True)
        (gg,) = lib.autograd.grad(g, x, lib.tensor(np.array([1.0, -1j, 2.0, 0.5 + 1j])))
        return [_numpy(g.detach()), _numpy(gg)]

    for ours, theirs in zip(run(gradgen), oracle("g, gg", run), strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-14, equal_nan=True)


def test_special_value_gradients_match_torch() -> None:
    """Gradients at 0, 1, -1 and inf (infinite and NaN gradients included)."""
    data = np.array([0.0, -0.0, 1.0, -1.0, INF, -INF, NAN])
    for name in (
        "log",
        "sqrt",
        "rsqrt",
        "reciprocal",
        "abs",
        "relu",
        "sign",
        "sigmoid",
        "tanh",
        "asin",
        "acos",
        "exp",
        "log1p",
        "angle",
        "sgn",
    ):

        def run(lib: Any) -> np.ndarray:
            x = lib.tensor(data, requires_grad=True)
            (g,) = lib.autograd.grad(getattr(lib, name)(x).sum(), x)
            return _numpy(g)

        np.testing.assert_allclose(
            run(gradgen), oracle(name, run), rtol=1e-12, equal_nan=True, err_msg=name
        )


# -- in-place variants -----------------------------------------------------------------

INPLACE = ["exp_", "log_", "sqrt_", "neg_", "abs_", "sigmoid_", "tanh_", "relu_"]


@pytest.mark.parametrize("name", INPLACE)
def test_inplace_matches_torch(name: str) -> None:
    data = np.array([0.5, 1.5, -0.25, 2.0])

    def run(lib: Any, as_function: bool) -> tuple[Any, ...]:
        x = lib.tensor(data, requires_grad=True)
        y = x * 2.0
        version = y._version
        out = getattr(lib, name)(y) if as_function else getattr(y, name)()
        assert out is y and y._version == version + 1
        (g,) = lib.autograd.grad(out.sum(), x)
        return type(y.grad_fn).__name__, y.detach().numpy(), g.numpy()

    for as_function in (False, True):
        ours = run(gradgen, as_function)
        theirs = oracle(
            f"as_function={as_function}", lambda torch: run(torch, as_function)
        )
        assert ours[0] == theirs[0]
        np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-13, equal_nan=True)
        np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-13, equal_nan=True)


@pytest.mark.parametrize(
    "name, data",
    [
        ("exp_", [1, 2]),
        ("sqrt_", [4]),
        ("sigmoid_", [True]),
        ("relu_", [True]),
        ("abs_", [1 + 1j]),
        ("abs_", [True]),
    ],
)
def test_inplace_errors_match_torch(name: str, data: list[Any]) -> None:
    expected = oracle(
        "error", lambda torch: outcome(lambda: getattr(torch.tensor(data), name)())
    )
    assert isinstance(expected, Exception)
    with pytest.raises(type(expected)) as got:
        getattr(gradgen.tensor(data), name)()
    assert str(got.value) == str(expected).splitlines()[0]


def test_inplace_on_a_leaf_that_requires_grad_is_refused() -> None:
    x = gradgen.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        x.exp_()


def test_abs_dunder_is_abs() -> None:
    x = gradgen.tensor([-1.5, 2.0, -0.0], requires_grad=True)
    y = abs(x)
    assert type(y.grad_fn).__name__ == "AbsBackward0"
    assert y.tolist() == oracle(
        "abs", lambda torch: abs(torch.tensor([-1.5, 2.0, -0.0])).tolist()
    )


# -- imag, view_as_real, view_as_complex ------------------------------------------------


def test_imag_is_a_view_as_in_torch() -> None:
    def run(lib: Any) -> tuple[Any, ...]:
        z = lib.tensor([1 + 2j, 3 - 4j])
        im = lib.imag(z)
        shares = im._base is z
        im.mul_(2.0)
        x = lib.tensor([1 + 2j, 3 - 4j], requires_grad=True)
        y = lib.imag(x)
        names = (
            type(y.grad_fn).__name__,
            type(y.grad_fn.next_functions[0][0]).__name__,
        )
        (g,) = lib.autograd.grad(y, x, lib.tensor([1.0, -2.0]))
        return shares, z.tolist(), names, g.tolist()

    assert run(gradgen) == oracle("result", run)


def test_imag_of_a_real_tensor_is_an_error() -> None:
    with pytest.raises(
        RuntimeError,
        match="^imag is not implemented for tensors with non-complex dtypes.$",
    ):
        gradgen.imag(gradgen.tensor([1.0]))


def test_view_as_real_and_complex_share_memory() -> None:
    z = gradgen.tensor(np.array([[1 + 2j, 3 - 4j], [5j, -1.0 + 0j]]))
    r = gradgen.view_as_real(z.t())
    assert r.shape == (2, 2, 2) and r._base is z
    c = gradgen.view_as_complex(r)
    assert c._base is z and c.tolist() == z.t().tolist()
    data = z.numpy()
    expected = oracle(
        "view_as_real",
        lambda torch: torch.view_as_real(torch.tensor(data).t()).tolist(),
    )
    assert r.tolist() == expected


@pytest.mark.parametrize(
    "make",
    [
        lambda lib: lib.ones(3, 3),
        lambda lib: lib.ones(3, 2).t(),
        lambda lib: lib.tensor([[1, 2]]),
        lambda lib: lib.ones(3, 3)[:, :2],
        lambda lib: lib.ones(5)[1:3],
        lambda lib: lib.ones(2, 4)[:, 1:3],
        lambda lib: lib.ones(4, 2)[::2],
        lambda lib: lib.tensor(1.0),
    ],
)
def test_view_as_complex_checks_match_torch(make: Callable[[Any], Any]) -> None:
    expected = oracle(
        "outcome",
        lambda torch: outcome(lambda: torch.view_as_complex(make(torch)).tolist()),
    )
    if isinstance(expected, Exception):
        error = expected
        assert isinstance(error, RuntimeError)
        with pytest.raises(RuntimeError) as got:
            gradgen.view_as_complex(make(gradgen))
        assert str(got.value) == str(error).splitlines()[0]
        return
    assert gradgen.view_as_complex(make(gradgen)).tolist() == expected


def test_view_as_real_of_a_real_tensor_is_an_error() -> None:
    with pytest.raises(
        RuntimeError, match="^view_as_real is only supported for complex tensors$"
    ):
        gradgen.view_as_real(gradgen.ones(2))


# -- shapes ----------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(), (0,), (2, 0, 3), (1, 3, 1)])
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_shapes_match_torch(name: str, shape: tuple[int, ...]) -> None:
    """0-d, empty and size-1 shapes, forward and backward."""
    rng = np.random.default_rng(8)
    data = rng.uniform(0.5, 2.0, shape)
    if name == "imag":
        data = data + 1j * rng.uniform(-1.0, 1.0, shape)
    function = FUNCTIONS[name]

    def run(lib: Any) -> tuple[Any, ...]:
        x = lib.tensor(data, requires_grad=True)
        y = function(lib, x)
        (g,) = lib.autograd.grad(y, x, lib.ones_like(y))
        return tuple(y.shape), _numpy(y.detach()), _numpy(g)

    ours, theirs = run(gradgen), oracle("result", run)
    assert ours[0] == theirs[0]
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-13)
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-13)
