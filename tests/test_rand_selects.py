"""leaky_relu, elu, prelu and their backwards select branchlessly on large float
arrays (numpy_kernels/activation.py `_selected`; softplus keeps np.where): bit for bit
np.where over the same two sides (-0.0, NaN payloads, infinities, subnormals;
float16/32/64; every layout), and PyTorch's answers: bit for bit where the arithmetic
is exact (leaky_relu, prelu: also PyTorch's x > 0 for prelu and its float32 opmath for
float16), to rounding where PyTorch's exp/expm1/log1p differ from numpy's (elu,
softplus; float16 computed in float32 as PyTorch's)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradgen
from gradgen.numpy_kernels import activation as kernels
from test_select_kernels import (
    LAYOUTS,
    _arguments,
    _assert_identical,
    _bits,
    _data,
    in_layout,
)
from torch_oracle import oracle

FLOATS = [np.float16, np.float32, np.float64]
LARGE = 4 * kernels._SELECT_BOTH_MIN_SIZE  # the branchless path
SMALL = kernels._SELECT_BOTH_MIN_SIZE // 4  # np.where
EDGE = kernels._SELECT_BOTH_MIN_SIZE  # the smallest branchless size (recorded answers)
ROUNDED_SIZE = 256  # the answers recorded whole (elu, softplus)
SLOPE = 0.01
ALPHA, SCALE, INPUT_SCALE = 1.5, 1.0507, 0.8
BETA, THRESHOLD = 2.0, 3.0


def _opmath(scalar: float, dtype: Any) -> Any:
    """PyTorch computes float16 in float32, the scalar as a float32."""
    return np.float32(scalar) if np.dtype(dtype) == np.float16 else scalar


def _cast(result: Any, like: np.ndarray) -> np.ndarray:
    return np.asarray(result).astype(like.dtype)


def _wide(x: np.ndarray) -> tuple[int, ...]:
    """x's shape broadcast with the one-element weight (a 0-d x gives (1,))."""
    return np.broadcast_shapes(x.shape, (1,))


def _c(like: np.ndarray, *factors: float) -> Any:
    """The product of elu's coefficients as PyTorch's kernels take them: each a
    float32 for a float32 array, multiplied there."""
    if like.dtype != np.float32:
        return float(np.prod(factors))
    product = np.float32(1.0)
    for factor in factors:
        product = product * np.float32(factor)
    return product


def _single(reference: Callable[..., Any]) -> Callable[..., Any]:
    """float16 computed in float32 and rounded once (PyTorch's opmath, the kernels')."""

    def computed(*args: np.ndarray) -> np.ndarray:
        if args[0].dtype != np.float16:
            return reference(*args)
        return reference(*(a.astype(np.float32) for a in args)).astype(np.float16)

    return computed


def _weight(dtype: Any, n: int = 1) -> np.ndarray:
    return (
        np.linspace(-0.5, 0.75, n).astype(dtype) if n > 1 else np.array([0.25], dtype)
    )


# Each reference is np.where over the two sides computed from x itself (no
# minimum(x, 0) guard: the overflow is not selected), written for this test.
REFERENCES: dict[str, tuple[Callable[..., Any], Callable[..., Any], int]] = {
    "leaky_relu": (
        lambda x: kernels.leaky_relu(x, SLOPE),
        lambda x: _cast(np.where(x > 0, x, x * _opmath(SLOPE, x.dtype)), x),
        1,
    ),
    "leaky_relu negative slope": (
        lambda x: kernels.leaky_relu(x, -0.3),
        lambda x: _cast(np.where(x > 0, x, x * _opmath(-0.3, x.dtype)), x),
        1,
    ),
    "leaky_relu_backward": (
        lambda g, x: kernels.leaky_relu_backward(g, x, SLOPE, False),
        lambda g, x: _cast(np.where(x > 0, g, g * _opmath(SLOPE, g.dtype)), g),
        2,
    ),
    "elu": (
        lambda x: kernels.elu(x, ALPHA, SCALE, INPUT_SCALE),
        _single(
            lambda x: _cast(
                np.where(
                    x <= 0,
                    np.expm1(x * _c(x, INPUT_SCALE)) * _c(x, ALPHA, SCALE),
                    x * _c(x, SCALE),
                ),
                x,
            ),
        ),
        1,
    ),
    "elu_backward": (
        lambda g, x: kernels.elu_backward(g, ALPHA, SCALE, INPUT_SCALE, False, x),
        _single(
            lambda g, x: _cast(
                np.where(
                    x <= 0,
                    g
                    * _c(x, INPUT_SCALE)
                    * _c(x, ALPHA, SCALE)
                    * np.exp(x * _c(x, INPUT_SCALE)),
                    g * _c(x, SCALE),
                ),
                g,
            ),
        ),
        2,
    ),
    "elu_backward of the result": (
        lambda g, y: kernels.elu_backward(g, ALPHA, SCALE, INPUT_SCALE, True, y),
        _single(
            lambda g, y: _cast(
                np.where(
                    y <= 0,
                    g * _c(y, INPUT_SCALE) * (y + _c(y, ALPHA, SCALE)),
                    g * _c(y, SCALE),
                ),
                g,
            ),
        ),
        2,
    ),
    "softplus": (
        lambda x: kernels.softplus(x, BETA, THRESHOLD),
        _single(
            lambda x: _cast(
                np.where(x * BETA > THRESHOLD, x, np.log1p(np.exp(x * BETA)) / BETA), x
            ),
        ),
        1,
    ),
    "softplus_backward": (
        lambda g, x: kernels.softplus_backward(g, x, BETA, THRESHOLD),
        _single(
            lambda g, x: _cast(
                np.where(
                    x * BETA > THRESHOLD,
                    g,
                    g * np.exp(x * BETA) / (np.exp(x * BETA) + 1),
                ),
                g,
            ),
        ),
        2,
    ),
    "prelu": (
        lambda x: kernels.prelu_kernel(x, _weight(x.dtype)),
        lambda x: _cast(np.where(x > 0, x, _weight(x.dtype) * x), x),
        1,
    ),
    "prelu_backward grad_input": (
        lambda g, x: kernels.prelu_kernel_backward(g, x, _weight(x.dtype))[0],
        lambda g, x: _cast(np.where(x > 0, g, g * _weight(x.dtype)), g),
        2,
    ),
    "prelu_backward grad_weight": (
        lambda g, x: kernels.prelu_kernel_backward(g, x, _weight(x.dtype))[1],
        lambda g, x: _cast(np.broadcast_to(np.where(x > 0, 0, g * x), _wide(x)), g),
        2,
    ),
}


@pytest.mark.parametrize("name", sorted(REFERENCES))
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("size", [SMALL, LARGE])
def test_same_bits_as_np_where(name: str, dtype: Any, size: int) -> None:
    kernel, reference, arity = REFERENCES[name]
    args = _arguments(arity, dtype, size)
    with np.errstate(all="ignore"):
        _assert_identical(kernel(*args), reference(*args))


@pytest.mark.parametrize("name", sorted(REFERENCES))
@pytest.mark.parametrize("layout", LAYOUTS)
def test_same_bits_in_every_layout(name: str, layout: str) -> None:
    kernel, reference, arity = REFERENCES[name]
    args = in_layout(_arguments(arity, np.float32, 128 * 128), layout, 128, LARGE)
    with np.errstate(all="ignore"):
        _assert_identical(kernel(*args), reference(*args))


# elu and softplus compute float16 in float32 (their select too), then round.
IN_FLOAT32 = ("elu", "softplus")
# softplus keeps np.where (beta * x > threshold is rare: a well-predicted branch).
BRANCHLESS = [name for name in sorted(REFERENCES) if not name.startswith("softplus")]


@pytest.mark.parametrize("name", BRANCHLESS)
@pytest.mark.parametrize("dtype", FLOATS)
def test_large_arrays_take_the_branchless_path(name: str, dtype: Any) -> None:
    """Above the size threshold the result is an integer buffer seen as floats (the
    path these tests must cover), below it not."""
    if dtype == np.float16 and name.startswith(IN_FLOAT32):
        dtype = np.float32  # the arrays their float16 case selects in
    kernel, _, arity = REFERENCES[name]
    with np.errstate(all="ignore"):
        large = kernel(*_arguments(arity, dtype, LARGE))
        small = kernel(*_arguments(arity, dtype, SMALL))
    assert large.base is not None and large.base.dtype.kind == "i"
    assert small.base is None or small.base.dtype.kind != "i"


@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_result_is_a_new_array(name: str) -> None:
    kernel, _, arity = REFERENCES[name]
    args = _arguments(arity, np.float64, LARGE)
    before = [a.copy() for a in args]
    with np.errstate(all="ignore"):
        result = kernel(*args)
    assert not any(np.shares_memory(result, a) for a in args)
    result[...] = 7.0
    for a, b in zip(args, before):
        np.testing.assert_array_equal(_bits(a), _bits(b))


@pytest.mark.parametrize("dtype", FLOATS)
def test_prelu_with_a_weight_per_channel(dtype: Any) -> None:
    """Weight (C, 1, 1) against x (N, C, H, W): the selects see the broadcast shape."""
    x = _data(dtype, 2 * 8 * 8 * 8).reshape(2, 8, 8, 8)
    g = _data(dtype, x.size, seed=1).reshape(x.shape)
    w = _weight(dtype, 8).reshape(8, 1, 1)
    _assert_identical(kernels.prelu_kernel(x, w), _cast(np.where(x > 0, x, w * x), x))
    grad_input, grad_weight = kernels.prelu_kernel_backward(g, x, w)
    _assert_identical(grad_input, _cast(np.where(x > 0, g, g * w), g))
    _assert_identical(grad_weight, _cast(np.where(x > 0, 0, g * x), g))
    # A weight broadcasting past x's shape: the broadcast shape, as before.
    wide = _weight(dtype, 4).reshape(4, 1, 1, 1, 1)
    grad_input, _ = kernels.prelu_kernel_backward(g, x, wide)
    assert grad_input.shape == (4, 2, 8, 8, 8)
    _assert_identical(grad_input, _cast(np.where(x > 0, g, g * wide), g))


def test_a_float_dtype_without_a_same_size_integer_keeps_np_where() -> None:
    x = _data(np.float64, LARGE).astype(np.longdouble)
    result = kernels.leaky_relu(x, SLOPE)
    expected = np.where(x > 0, x, x * SLOPE)
    assert result.dtype == np.longdouble
    np.testing.assert_array_equal(np.signbit(result), np.signbit(expected))
    np.testing.assert_array_equal(result, expected)


# -- against PyTorch -------------------------------------------------------------------


def _operators(lib: Any) -> dict[str, Callable[..., Any]]:
    """name -> f(g, x, w) on lib's tensors (torch.ops.aten for the backwards)."""
    aten = lib.ops.aten if lib.__name__ == "torch" else lib
    functional = lib.nn.functional
    return {
        "leaky_relu": lambda g, x, w: functional.leaky_relu(x, SLOPE),
        "leaky_relu negative slope": lambda g, x, w: functional.leaky_relu(x, -0.3),
        "leaky_relu_backward": lambda g, x, w: aten.leaky_relu_backward(
            g, x, SLOPE, False
        ),
        "prelu": lambda g, x, w: functional.prelu(x, w),
        "prelu negative weight": lambda g, x, w: functional.prelu(x, -w),
        "prelu_backward grad_input": lambda g, x, w: aten._prelu_kernel_backward(
            g, x, w
        )[0],
        "prelu_backward grad_weight": lambda g, x, w: aten._prelu_kernel_backward(
            g, x, w
        )[1],
        "elu": lambda g, x, w: aten.elu(x, ALPHA, SCALE, INPUT_SCALE),
        "elu_backward": lambda g, x, w: aten.elu_backward(
            g, ALPHA, SCALE, INPUT_SCALE, False, x
        ),
        "elu_backward of the result": lambda g, x, w: aten.elu_backward(
            g, ALPHA, SCALE, INPUT_SCALE, True, x
        ),
        "softplus": lambda g, x, w: functional.softplus(x, BETA, THRESHOLD),
        "softplus_backward": lambda g, x, w: aten.softplus_backward(
            g, x, BETA, THRESHOLD
        ),
    }


EXACT = [
    "leaky_relu",
    "leaky_relu negative slope",
    "leaky_relu_backward",
    "prelu",
    "prelu negative weight",
    "prelu_backward grad_input",
    "prelu_backward grad_weight",
]
ROUNDED = [
    "elu",
    "elu_backward",
    "elu_backward of the result",
    "softplus",
    "softplus_backward",
]


def _answer(lib: Any, name: str, dtype: Any, size: int) -> np.ndarray:
    x, g = _data(dtype, size), _data(dtype, size, seed=1)
    convert = lib.from_numpy
    result = _operators(lib)[name](convert(g), convert(x), convert(_weight(dtype)))
    return np.asarray(result.detach().numpy())


def _fingerprint(values: np.ndarray) -> str:
    """The values' bits with every NaN made one NaN (PyTorch's vectorised loops give
    some NaNs their default payload), hashed: the recorded answer stays small."""
    canonical = np.where(np.isnan(values), np.array(np.nan, values.dtype), values)
    return (
        f"{values.dtype.name}{values.shape}"
        + hashlib.sha256(_bits(canonical).tobytes()).hexdigest()
    )


@pytest.mark.parametrize("name", EXACT)
@pytest.mark.parametrize("dtype", FLOATS)
def test_exact_operators_match_torch_bit_for_bit(name: str, dtype: Any) -> None:
    """On the branchless path (EDGE elements, every special value among them)."""
    key = f"{name}-{np.dtype(dtype).name}"
    theirs = oracle(key, lambda torch: _fingerprint(_answer(torch, name, dtype, EDGE)))
    assert _fingerprint(_answer(gradgen, name, dtype, EDGE)) == theirs


@pytest.mark.parametrize("name", ROUNDED)
@pytest.mark.parametrize("dtype", FLOATS)
def test_transcendental_operators_match_torch_to_rounding(
    name: str, dtype: Any
) -> None:
    """Same NaNs, same signs, values to a few units in the last place (PyTorch's
    vectorised exp/expm1/log1p are not numpy's; float16 computes in float32 there).
    ROUNDED_SIZE elements: the select is proven against np.where above."""
    key = f"{name}-{np.dtype(dtype).name}"
    theirs = oracle(key, lambda torch: _answer(torch, name, dtype, ROUNDED_SIZE))
    ours = _answer(gradgen, name, dtype, ROUNDED_SIZE)
    if name.startswith("elu_backward"):
        # PyTorch's gradient at a NaN x depends on the element's position (NaN from its
        # vectorised loop, grad * scale from its scalar tail, which gradgen's is).
        compared = ~np.isnan(_data(dtype, ROUNDED_SIZE))
        ours, theirs = ours[compared], theirs[compared]
    nan = np.isnan(ours)
    np.testing.assert_array_equal(nan, np.isnan(theirs))
    np.testing.assert_array_equal(np.signbit(ours)[~nan], np.signbit(theirs)[~nan])
    # A few units in the last place; below the smallest normal number, its size.
    tolerance = {np.float16: 2e-3, np.float32: 1e-6, np.float64: 1e-14}[dtype]
    tiny = float(np.finfo(dtype).tiny)
    np.testing.assert_allclose(ours, theirs, rtol=tolerance, atol=tiny)


def test_prelu_at_signed_zeros_and_nan_as_torch() -> None:
    """PyTorch's prelu takes weight * x where x is not > 0: prelu(0.0) with a negative
    weight is -0.0, its gradient the weight's; gradgen used x >= 0 before."""
    x = np.array([-0.0, 0.0, np.nan, -1.0, 2.0])

    def run(lib: Any) -> Any:
        inputs = lib.tensor(x, requires_grad=True)
        weight = lib.tensor([-0.5], dtype=lib.float64, requires_grad=True)
        out = lib.nn.functional.prelu(inputs, weight)
        out.backward(lib.ones(5, dtype=lib.float64))
        return {
            "out": out.detach().numpy(),
            "signbit": np.signbit(out.detach().numpy()),
            "grad": inputs.grad.numpy(),
            "weight grad": weight.grad.numpy(),
        }

    ours, theirs = run(gradgen), oracle("prelu-zeros", run)
    for key in ("out", "grad", "weight grad"):
        np.testing.assert_array_equal(ours[key], theirs[key])
    np.testing.assert_array_equal(ours["signbit"], theirs["signbit"])
    np.testing.assert_array_equal(ours["out"], [0.0, -0.0, np.nan, 0.5, 2.0])
    np.testing.assert_array_equal(ours["grad"], [-0.5, -0.5, -0.5, -0.5, 1.0])
